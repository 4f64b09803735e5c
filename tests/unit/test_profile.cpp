// `cudalings profile`: ncu's command line, the parser of its raw CSV page, the machine's problems
// (no GPU, no ncu, no permission to the counters) and the command's arguments, on any machine.
// The real thing (ncu on an H200) is the `gpu` test in tests/gpu/test_course_gpu.cpp.
#include <sys/stat.h>

#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "cli_support.h"
#include "devcheck.h"
#include "manifest.h"
#include "profile.h"
#include "supervise.h"

using namespace cudalings;
using Catch::Matchers::ContainsSubstring;
namespace fs = std::filesystem;

namespace {

// ncu's output with `--csv --page raw --print-units base`, shaped as the Nsight Compute CLI
// documentation describes the raw page: a header row (ID, process, host, "Kernel Name", context,
// stream, "Block Size", "Grid Size", device, CC, then one column per metric), a row of units,
// then one row per profiled kernel; ncu's own lines start with "==PROF==" and the like, and
// the application's output (here a printf of the step) lands in between. The `gpu` test runs
// the real ncu and is the proof that the shape holds.
const char* const kTwoKernels =
    R"csv(==PROF== Connected to process 4242 (/course/build/cudalings-runner)
==PROF== Profiling "partial_sums" - 0: 0%....50%....100% - 9 passes
hello from the step, "quoted", 1,2
==PROF== Profiling "finish" - 1: 0%....50%....100% - 9 passes
==PROF== Disconnected from process 4242
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","dram__bytes.sum.per_second","dram__throughput.avg.pct_of_peak_sustained_elapsed","gpu__time_duration.sum","launch__block_size","launch__grid_size","lts__t_sector_hit_rate.pct","sm__warps_active.avg.pct_of_peak_sustained_active"
"","","","","","","","","","","","byte/second","%","nsecond","","","%","%"
"0","4242","cudalings-runner","127.0.0.1","partial_sums(const float *, float *, unsigned long)","1","13","(256, 1, 1)","(2112, 1, 1)","0","9.0","4,412,345,678,901","91.23","265,408","256","2112","12.5","87.1"
"1","4242","cudalings-runner","127.0.0.1","void finish<256>(const float *, float *)","1","13","(256, 1, 1)","(1, 1, 1)","0","9.0","1234","0.01","3.5","256","1","n/a","12"
)csv";

const std::vector<std::string> kMetrics{"lts__t_sector_hit_rate.pct"};

struct EnvVar {
    std::string name;
    std::optional<std::string> old;
    EnvVar(std::string n, const std::optional<std::string>& value) : name(std::move(n)) {
        if (const char* v = std::getenv(name.c_str())) old = v;
        if (value)
            ::setenv(name.c_str(), value->c_str(), 1);
        else
            ::unsetenv(name.c_str());
    }
    ~EnvVar() {
        if (old)
            ::setenv(name.c_str(), old->c_str(), 1);
        else
            ::unsetenv(name.c_str());
    }
};

// A stand-in for ncu: a shell script that writes `log_text` to the file after --log-file (as
// ncu does) and exits with `code`.
std::string fake_ncu(const std::string& log_text, int code) {
    const std::string dir = test_support::temp_path("fake_ncu");
    fs::create_directories(dir);
    const std::string path = dir + "/ncu";
    std::ofstream(path) << "#!/bin/sh\n"
                        << "log=\nwhile [ $# -gt 0 ]; do\n"
                        << "  if [ \"$1\" = --log-file ]; then log=$2; fi\n  shift\ndone\n"
                        << "cat > \"$log\" <<'EOF'\n"
                        << log_text << "\nEOF\nexit " << code << "\n";
    ::chmod(path.c_str(), 0755);
    return path;
}

}  // namespace

TEST_CASE("profile: ncu's raw CSV page becomes one profile per kernel", "[profile]") {
    const NcuReport r = parse_ncu_output(kTwoKernels);
    CHECK(r.errors.empty());
    CHECK_FALSE(r.no_kernels);
    REQUIRE(r.kernels.size() == 2);
    const KernelProfile& k = r.kernels[0];
    CHECK(k.name == "partial_sums");  // the argument list cut off
    CHECK(k.full_name == "partial_sums(const float *, float *, unsigned long)");
    CHECK(k.grid == "(2112, 1, 1)");
    CHECK(k.block == "(256, 1, 1)");
    CHECK(k.number(metric::kDuration) == Catch::Approx(265408));  // group separators read
    CHECK(k.number(metric::kDramRate) == Catch::Approx(4412345678901.0));
    CHECK(k.number(metric::kDramPercent) == Catch::Approx(91.23));
    CHECK(k.number(metric::kOccupancy) == Catch::Approx(87.1));
    CHECK(k.find("lts__t_sector_hit_rate.pct")->unit == "%");
    CHECK(r.kernels[1].name == "finish<256>");
    // "n/a" is no number: shown as ncu wrote it, never as 0
    const KernelProfile::Value* hit = r.kernels[1].find("lts__t_sector_hit_rate.pct");
    REQUIRE(hit);
    CHECK_FALSE(hit->numeric);
    CHECK(r.kernels[1].number("lts__t_sector_hit_rate.pct", -7) == -7);
    CHECK(r.kernels[1].number("not__collected.sum", -1) == -1);
}

TEST_CASE("profile: units other than the base ones are scaled to it", "[profile]") {
    const std::string csv =
        "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\",\"dram__bytes.sum.per_second\"\n"
        "\"\",\"\",\"usecond\",\"Gbyte/second\"\n"
        "\"0\",\"k\",\"265.41\",\"4.41\"\n";
    const NcuReport r = parse_ncu_output(csv);
    REQUIRE(r.kernels.size() == 1);
    CHECK(r.kernels[0].number(metric::kDuration) == Catch::Approx(265410));
    CHECK(r.kernels[0].number(metric::kDramRate) == Catch::Approx(4.41e9));
}

TEST_CASE("profile: ncu's errors and 'no kernels' are kept apart from the table", "[profile]") {
    const NcuReport r = parse_ncu_output(
        "==PROF== Connected to process 1\n==WARNING== No kernels were profiled.\n"
        "==ERROR== something ncu could not do\n");
    CHECK(r.kernels.empty());
    CHECK(r.no_kernels);
    REQUIRE(r.errors.size() == 1);
    CHECK_THAT(r.errors[0], ContainsSubstring("something ncu could not do"));
}

TEST_CASE("profile: ncu's command never touches the clocks and profiles the marked call only",
          "[profile]") {
    const auto cmd = ncu_command("/opt/ncu", {"a__b.sum", "c__d.pct"}, "/tmp/log",
                                 {"/build/cudalings-runner", "profile", "--checks", "x.so"});
    auto after = [&](const std::string& flag) {
        auto it = std::find(cmd.begin(), cmd.end(), flag);
        return it == cmd.end() || it + 1 == cmd.end() ? std::string() : *(it + 1);
    };
    CHECK(cmd.front() == "/opt/ncu");
    CHECK(after("--clock-control") == "none");
    CHECK(after("--profile-from-start") == "off");
    CHECK(after("--page") == "raw");
    CHECK(after("--print-units") == "base");
    CHECK(after("--metrics") == "a__b.sum,c__d.pct");
    CHECK(after("--log-file") == "/tmp/log");
    CHECK(std::find(cmd.begin(), cmd.end(), "--csv") != cmd.end());
    // the program last, whole
    REQUIRE(cmd.size() > 4);
    CHECK(std::vector<std::string>(cmd.end() - 4, cmd.end()) ==
          std::vector<std::string>{"/build/cudalings-runner", "profile", "--checks", "x.so"});
}

TEST_CASE("profile: metric names and the catalogue", "[profile]") {
    CHECK(looks_like_metric("lts__t_sector_hit_rate.pct"));
    CHECK(looks_like_metric("launch__grid_size"));
    CHECK_FALSE(looks_like_metric("hit rate"));
    CHECK_FALSE(looks_like_metric("lts_t_sector_hit_rate"));
    CHECK_FALSE(looks_like_metric("a__b,c__d"));
    const auto summary = summary_metrics();
    for (const auto& m : summary) CHECK(find_metric(m));
    for (const auto& m : default_lesson_metrics()) {
        CHECK(find_metric(m));
        CHECK(std::find(summary.begin(), summary.end(), m) == summary.end());
    }
    for (const auto& m : metric_catalogue()) {
        CHECK(looks_like_metric(m.name));
        CHECK_FALSE(m.meaning.empty());
    }
}

TEST_CASE("profile: ERR_NVGPUCTRPERM from ncu is the machine's problem, with the fix",
          "[profile]") {
    const std::string ncu = fake_ncu(
        "==PROF== Connected to process 77\n"
        "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU "
        "Performance Counters on the target device 0.",
        1);
    const std::string log = fs::path(ncu).parent_path().string() + "/ncu.log";
    const auto cmd = ncu_command(ncu, summary_metrics(), log, {"/bin/true"});
    const ChildResult child = run_supervised(cmd, {});
    REQUIRE(child.started);
    CHECK(child.exit_code == 1);
    const NcuRun run = read_ncu_run(child, ncu, log);
    REQUIRE(run.setup);
    CHECK(run.setup->anchor == "profile-permission");
    CHECK_THAT(run.setup->line(), ContainsSubstring("NVreg_RestrictProfilingToAdminUsers=0"));
    CHECK(run.report.kernels.empty());
    fs::remove_all(fs::path(ncu).parent_path());
}

TEST_CASE("profile: a fake ncu's report is read from its log file", "[profile]") {
    const std::string ncu = fake_ncu(kTwoKernels, 0);
    const std::string log = fs::path(ncu).parent_path().string() + "/ncu.log";
    const ChildResult child =
        run_supervised(ncu_command(ncu, summary_metrics(), log, {"/bin/true"}), {});
    const NcuRun run = read_ncu_run(child, ncu, log);
    CHECK_FALSE(run.setup);
    CHECK(run.report.kernels.size() == 2);
    fs::remove_all(fs::path(ncu).parent_path());
}

TEST_CASE("profile: an ncu that cannot start is the machine's problem", "[profile]") {
    const std::string missing = test_support::temp_path("no_ncu") + "/ncu";
    const ChildResult child = run_supervised({missing, "--version"}, {});
    const NcuRun run = read_ncu_run(child, missing, "/nonexistent/log");
    REQUIRE(run.setup);
    CHECK_THAT(run.setup->line(), ContainsSubstring(missing));
}

TEST_CASE("profile: CUDALINGS_NCU names the ncu, and a wrong one is said so", "[profile]") {
    const std::string ncu = fake_ncu("", 0);
    {
        EnvVar env("CUDALINGS_NCU", ncu);
        CHECK(find_ncu("nvcc") == ncu);
    }
    {
        EnvVar env("CUDALINGS_NCU", std::string("/nonexistent/ncu"));
        CHECK(find_ncu("nvcc").empty());
        CHECK_THAT(no_ncu_problem().line(), ContainsSubstring("CUDALINGS_NCU"));
        CHECK_THAT(no_ncu_problem().line(), ContainsSubstring("/nonexistent/ncu"));
    }
    fs::remove_all(fs::path(ncu).parent_path());
}

TEST_CASE("profile: a lesson's chosen metrics in lesson.json", "[profile][manifest]") {
    const auto read = [](const std::string& profile) {
        const std::string lesson = R"({"id": "01_demo", "problem": "demo",
            "steps": [{"id": "01_a", "hint": "h"}])" +
                                   profile + "}";
        return parse_manifest(R"({"lessons": ["01_demo"]})",
                              [&](const std::string&) { return lesson; });
    };
    CHECK(read("").lessons[0].profile_metrics.empty());
    CHECK(read(R"(, "profile": {"metrics": ["lts__t_sector_hit_rate.pct"]})")
              .lessons[0]
              .profile_metrics == std::vector<std::string>{"lts__t_sector_hit_rate.pct"});
    CHECK_THROWS_WITH(read(R"(, "profile": ["lts__t_sector_hit_rate.pct"])"),
                      ContainsSubstring("\"profile\" must read"));
    CHECK_THROWS_WITH(read(R"(, "profile": {"metrics": [3]})"),
                      ContainsSubstring("checks/01_demo/lesson.json"));
}

TEST_CASE("profile: the course's lessons choose metrics the course explains", "[profile]") {
    // The same rule `dev check` applies (devcheck.h, "profile"), on the shipped lesson.json files.
    const Manifest m = load_manifest(CUDALINGS_SOURCE_DIR);
    for (const auto& lesson : m.lessons) {
        INFO(lesson.id);
        for (const auto& metric : lesson.profile_metrics) {
            INFO(metric);
            CHECK(find_metric(metric));
        }
    }
}

TEST_CASE("profile CLI: without a GPU it says so, with the emulator's way, and exits 77",
          "[profile][cli]") {
    if (test_support::gpu_present()) SKIP("a GPU is present: the no-GPU path cannot be shown");
    const std::string ncu = fake_ncu("", 0);
    {
        EnvVar env("CUDALINGS_NCU", ncu);
        auto r = test_support::cudalings({"profile", "01_vector_add/03_float4", "--solutions"});
        CHECK(r.code == 77);
        CHECK_THAT(r.err, ContainsSubstring("profile needs a GPU"));
        CHECK_THAT(r.err, ContainsSubstring("check --explain"));
        CHECK_THAT(r.err, ContainsSubstring("troubleshooting.md#profile-no-gpu"));
        CHECK_THAT(r.err, !ContainsSubstring("Nsight Compute"));  // this ncu is there: no problem
        CHECK(r.out.empty());
    }
    {  // no ncu either: both problems at once, in JSON too
        EnvVar env("CUDALINGS_NCU", std::string("/nonexistent/ncu"));
        auto r = test_support::cudalings(
            {"profile", "01_vector_add/03_float4", "--solutions", "--json"});
        CHECK(r.code == 77);
        const auto j = nlohmann::json::parse(r.out);
        CHECK(j.at("format_version") == 1);
        CHECK(j.at("status") == "setup_error");
        REQUIRE(j.at("problems").size() == 2);
        CHECK(j["problems"][0]["anchor"] == "profile-no-gpu");
        CHECK(j["problems"][1]["anchor"] == "profile-no-ncu");
        CHECK_THAT(j["problems"][1]["what"].get<std::string>(),
                   ContainsSubstring("/nonexistent/ncu"));
    }
    fs::remove_all(fs::path(ncu).parent_path());
}

TEST_CASE("profile CLI: arguments are checked before anything runs", "[profile][cli]") {
    auto bad_metric = test_support::cudalings(
        {"profile", "01_vector_add/03_float4", "--metrics", "dram throughput"});
    CHECK(bad_metric.code == 2);
    CHECK_THAT(bad_metric.err, ContainsSubstring("is not an ncu metric name"));
    auto empty_metrics =
        test_support::cudalings({"profile", "01_vector_add/03_float4", "--metrics", ","});
    CHECK(empty_metrics.code == 2);
    auto lesson = test_support::cudalings({"profile", "01_vector_add"});
    CHECK(lesson.code == 2);
    CHECK_THAT(lesson.err, ContainsSubstring("profile takes one step"));
    auto unknown = test_support::cudalings({"profile", "99_nothing/01_step"});
    CHECK(unknown.code == 2);
    auto extra = test_support::cudalings({"profile", "01/03", "--colum", "x"});
    CHECK(extra.code == 2);
    CHECK_THAT(extra.err, ContainsSubstring("--column"));  // did you mean
}

TEST_CASE("profile: the text and the JSON show each kernel's summary and the chosen metrics",
          "[profile]") {
    ProfileOutcome p;
    p.step = "01_vector_add/03_float4";
    p.file = "solutions/01_vector_add/03_float4.cu";
    p.gpu = "NVIDIA H200";
    p.call.name = "n=2^28, uniform in [-1, 1)";
    p.metrics = kMetrics;
    p.report = parse_ncu_output(kTwoKernels);
    const std::string text = render_profile(p, false);
    INFO(text);
    CHECK_THAT(text, ContainsSubstring("kernel 1 of 2: partial_sums"));
    CHECK_THAT(text, ContainsSubstring("kernel 2 of 2: finish<256>  grid"));
    CHECK_THAT(text, ContainsSubstring("grid (2112, 1, 1), block (256, 1, 1)"));
    CHECK_THAT(text, ContainsSubstring("265.4 us"));
    CHECK_THAT(text, ContainsSubstring("91.2% of peak, 4412 GB/s"));
    CHECK_THAT(text, ContainsSubstring("87.1%"));
    CHECK_THAT(text, ContainsSubstring("L2 hit rate"));
    CHECK_THAT(text, ContainsSubstring(std::string(find_metric(kMetrics[0])->meaning)));
    CHECK_THAT(text, ContainsSubstring("n/a"));  // kernel 2's hit rate, as ncu wrote it
    CHECK_THAT(text, !ContainsSubstring("output was wrong"));
    p.call.verified = false;
    p.call.failure.reason = "values";
    CHECK_THAT(render_profile(p, false), ContainsSubstring("output was wrong (values)"));

    const nlohmann::json j = profile_json(p);
    REQUIRE(j.at("kernels").size() == 2);
    const auto& k = j["kernels"][0];
    CHECK(k.at("name") == "partial_sums");
    CHECK(k.at("duration_ns").get<double>() == Catch::Approx(265408));
    CHECK(k.at("dram_throughput_pct").get<double>() == Catch::Approx(91.23));
    CHECK(k.at("achieved_occupancy_pct").get<double>() == Catch::Approx(87.1));
    REQUIRE(k.at("metrics").size() == 1);
    CHECK(k["metrics"][0].at("value").get<double>() == Catch::Approx(12.5));
    CHECK(j["kernels"][1]["metrics"][0].at("value").is_null());
    CHECK(j.at("verified") == false);
}
