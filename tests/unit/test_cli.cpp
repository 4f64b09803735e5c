// The CLI as a learner uses it, on any machine (no GPU needed): exit codes, list, hint, and
// check's screen + compile stages.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

#include <unistd.h>

#include "cli_support.h"

using Catch::Matchers::ContainsSubstring;
namespace fs = std::filesystem;

using namespace test_support;

TEST_CASE("usage errors exit 2", "[cli]") {
    CHECK(cudalings({}).code == 2);
    CHECK(cudalings({"frobnicate"}).code == 2);
    CHECK(cudalings({"check", "--seed", "not-hex"}).code == 2);
    CHECK(cudalings({"check", "99/1"}).code == 2);
    CHECK(cudalings({"check", "1/1", "--all"}).code == 2);
    auto outside = cudalings({"list"}, fresh_state_dir(), "/");
    CHECK(outside.code == 2);
    CHECK_THAT(outside.err, ContainsSubstring("not inside a course"));
    CHECK(cudalings({"--help"}).code == 0);
}

TEST_CASE("list shows every lesson and step, and the next one", "[cli]") {
    auto r = cudalings({"list"});
    CHECK(r.code == 0);
    CHECK_THAT(r.out, ContainsSubstring("01_vector_add"));
    CHECK_THAT(r.out, ContainsSubstring("[next] 01_one_thread_per_element"));
    CHECK_THAT(r.out, ContainsSubstring("0 of"));
    auto j = nlohmann::json::parse(cudalings({"list", "--json"}).out);
    CHECK(j["done"] == 0);
    CHECK(j["steps"][0]["status"] == "next");
}

TEST_CASE("list works from any directory inside the course", "[cli]") {
    auto r = cudalings({"list"}, fresh_state_dir(),
                       std::string(CUDALINGS_SOURCE_DIR) + "/lessons/01_vector_add");
    CHECK(r.code == 0);
    CHECK_THAT(r.out, ContainsSubstring("01_vector_add"));
}

TEST_CASE("hint prints the step's hint from the manifest", "[cli]") {
    auto r = cudalings({"hint", "1/1"});
    CHECK(r.code == 0);
    CHECK_THAT(r.out, ContainsSubstring("if (i < n)"));
}

TEST_CASE("a compile error is reported with the learner's file and line", "[cli]") {
    auto root = course_with(
        std::string(CUDALINGS_SOURCE_DIR) + "/checks/01_vector_add/fixtures/compile_error.cu",
        "01_vector_add/01_one_thread_per_element.cu");
    auto r = cudalings({"--root", root, "check", "1/1"});
    CHECK(r.code == 1);
    CHECK_THAT(r.out, ContainsSubstring("01_one_thread_per_element.cu:11: error:"));
    CHECK_THAT(r.out, ContainsSubstring("\"blocks\""));
    CHECK_THAT(r.out, ContainsSubstring("COMPILE_ERROR"));
    auto j = nlohmann::json::parse(cudalings({"--root", root, "check", "1/1", "--json"}).out);
    CHECK(j["results"][0]["verdict"] == "COMPILE_ERROR");
    CHECK(j["results"][0]["compile"]["diagnostics"][0]["line"] == 11);
    CHECK(j["failed"] == 1);
    // The run's record (what `dev update` names a stored table by): the day, the toolkit.
    CHECK(std::regex_match(j["run"]["date"].get<std::string>(), std::regex(R"(\d{4}-\d\d-\d\d)")));
    CHECK(j["run"]["solutions"] == false);
    CHECK(j["run"].contains("gpu"));
    CHECK_FALSE(j["run"]["cuda"].get<std::string>().empty());
    remove_course(root);
}

TEST_CASE("a build that computes past its CPU limit is a COMPILE_ERROR that says so", "[cli]") {
    // 2^30 expansions of a macro that expands to nothing: minutes of the preprocessor's CPU
    // time, and almost no memory.
    const fs::path file =
        fs::temp_directory_path() / ("cudalings-cpu-" + std::to_string(getpid()) + ".cu");
    {
        std::ofstream out(file);
        out << "#define E0(x)\n";
        for (int i = 1; i <= 30; ++i)
            out << "#define E" << i << "(x) E" << i - 1 << "(x) E" << i - 1 << "(x)\n";
        out << "E30(1)\n#include \"vector_add.cuh\"\n";
    }
    auto root = course_with(file.string(), "01_vector_add/01_one_thread_per_element.cu");
    fs::remove(file);
    const auto start = std::chrono::steady_clock::now();
    auto j = nlohmann::json::parse(
        cudalings({"--root", root, "check", "1/1", "--json", "--compile-timeout", "2"}).out);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(j["results"][0]["verdict"] == "COMPILE_ERROR");
    CHECK_THAT(j["results"][0]["reason"].get<std::string>(), ContainsSubstring("s of CPU time"));
    CHECK(seconds < 3 * 2 + 30);  // well before the wall-clock backstop
    remove_course(root);
}

TEST_CASE("dev check --coverage: a device line the hazard cases never run, a loop never run twice",
          "[cli][devcheck]") {
    auto root = course_with(
        std::string(CUDALINGS_SOURCE_DIR) + "/lessons/01_vector_add/01_one_thread_per_element.cu",
        "01_vector_add/01_one_thread_per_element.cu");
    const fs::path solution =
        fs::path(root) / "solutions/01_vector_add/01_one_thread_per_element.cu";
    fs::create_directories(solution.parent_path());
    // A correct solution with a branch no hazard case takes (line 5), and a grid-stride loop
    // launched with a thread per element, so that no thread goes round twice (line 7).
    auto write =
        [&](const std::string& line5, const std::string& line7) {
            std::ofstream(solution)
                << "#include \"vector_add.cuh\"\n"
                   "__global__ void kernel(const float* a, const float* b, float* c, size_t n) {\n"
                   "    size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;\n"
                   "    if (n == 3000000001u) {\n"
                   "        c[0] = a[0] + b[0];"
                << line5
                << "\n"
                   "    }\n"
                   "    for (size_t j = i; j < n; j += size_t(gridDim.x) * blockDim.x) {"
                << line7
                << "\n"
                   "        c[j] = a[j] + b[j];\n"
                   "    }\n"
                   "}\n"
                   "extern \"C\" cudaError_t vector_add(const float* a, const float* b, float* c,\n"
                   "                                  size_t n, cudaStream_t stream) {\n"
                   "    kernel<<<unsigned((n + 255) / 256), 256, 0, stream>>>(a, b, c, n);\n"
                   "    return cudaGetLastError();\n"
                   "}\n";
        };
    auto coverage = [&] {
        auto r = cudalings({"--root", root, "--json", "dev", "check", "--coverage", "1/1"});
        INFO(r.out << r.err);
        return nlohmann::json::parse(r.out);
    };
    write("", "");
    auto j = coverage();
    std::vector<std::string> found;
    for (const auto& f : j["findings"]) {
        CHECK(f["rule"] == "coverage");
        CHECK(f["file"] == "solutions/01_vector_add/01_one_thread_per_element.cu");
        found.push_back(f["message"]);
    }
    REQUIRE(found.size() == 2);
    CHECK_THAT(found[0], ContainsSubstring("line 5 of device code never ran in the hazard cases"));
    CHECK_THAT(found[1], ContainsSubstring("the loop at line 7 never ran its body twice"));
    // Marked as not covered by design: no finding, and the reasons are listed.
    write(" // dev: not covered (only past 2^31)", " // dev: not covered (one round per thread)");
    j = coverage();
    CHECK(j["findings"].empty());
    CHECK_THAT(j["coverage"][0].get<std::string>(),
               ContainsSubstring("line 5: only past 2^31") &&
                   ContainsSubstring("line 7: one round per thread"));
    remove_course(root);
}

TEST_CASE("a missing step file is a failure, not a crash", "[cli]") {
    auto root = course_with(
        std::string(CUDALINGS_SOURCE_DIR) + "/checks/01_vector_add/fixtures/compile_error.cu",
        "01_vector_add/01_one_thread_per_element.cu");
    fs::remove(fs::path(root) / "lessons/01_vector_add/01_one_thread_per_element.cu");
    auto r = cudalings({"--root", root, "check", "1/1"});
    CHECK(r.code == 1);
    CHECK_THAT(r.out, ContainsSubstring("missing"));
    remove_course(root);
}

TEST_CASE("without a GPU and --no-emulate, check compiles and then skips with exit code 77",
          "[cli]") {
    if (gpu_present()) SKIP("a GPU is present: the no-GPU path is covered by CI");
    auto state = fresh_state_dir();
    auto r = cudalings({"check", "1/1", "--no-emulate"}, state);
    CHECK(r.code == 77);
    CHECK_THAT(r.out, ContainsSubstring("compile  ok"));
    CHECK_THAT(r.out, ContainsSubstring("SKIPPED"));
    CHECK_THAT(r.out, ContainsSubstring("need an NVIDIA GPU"));
    // The second check of the same file is served from the compile cache.
    auto again = cudalings({"check", "1/1", "--no-emulate"}, state);
    CHECK_THAT(again.out, ContainsSubstring("(cached)"));
    // Several steps (a lesson: the course's 63 compiles took over 600 s among CI's parallel
    // tests on two cores): each compiles and skips, and the summary says so.
    auto all = cudalings({"check", "01", "--solutions", "--no-emulate", "--no-time"}, state);
    CHECK(all.code == 77);
    CHECK_THAT(all.out, ContainsSubstring("0 passed, 0 failed, 3 skipped"));
}

TEST_CASE("without a GPU, check emulates the step on the CPU: correctness only", "[cli]") {
    if (gpu_present()) SKIP("a GPU is present: the no-GPU path is covered by CI");
    auto state = fresh_state_dir();
    auto skeleton = cudalings({"check", "1/1"}, state);
    CHECK(skeleton.code == 1);
    CHECK_THAT(skeleton.out, ContainsSubstring("emulated"));
    CHECK_THAT(skeleton.out, ContainsSubstring("WRONG"));
    auto solution = cudalings({"check", "1/3", "--solutions"}, state);
    CHECK(solution.code == 0);
    CHECK_THAT(solution.out, ContainsSubstring("emulated"));
    CHECK_THAT(solution.out, ContainsSubstring("PASS"));
}

// The fixtures whose verdict needs no GPU (build errors and the policy screen), graded twice in
// one batch per step (or piece of one) on every machine, CI included. The steps' batches are dealt
// round-robin into three test cases, each its own CTest entry: in one piece it was the suite's
// longest entry on a GPU machine (296 s of a 559 s ctest phase on an H100, 2026-12-06), where
// device time is short.
namespace {
void check_fixtures_without_gpu(std::size_t shard, std::size_t shards) {
    std::map<std::string, std::vector<FixtureSpec>> groups;
    for (const auto& f : all_fixtures()) {
        if (f.needs_gpu) continue;
        std::string key = f.step + "|";
        for (const auto& flag : f.flags) key += flag + " ";
        groups[key].push_back(f);
    }
    // A step's batch is cut into pieces of at most six (lesson 01's first step has 17 such
    // fixtures), and the pieces are dealt round-robin.
    std::vector<std::vector<FixtureSpec>> pieces;
    for (const auto& [key, fixtures] : groups) {
        const std::size_t parts = (fixtures.size() + 5) / 6;
        for (std::size_t p = 0; p < parts; ++p)
            pieces.emplace_back(fixtures.begin() + p * fixtures.size() / parts,
                                fixtures.begin() + (p + 1) * fixtures.size() / parts);
    }
    REQUIRE(pieces.size() >= shards);
    int checked = 0;
    for (std::size_t i = shard; i < pieces.size(); i += shards) {
        for (const auto& p : grade_fixtures(pieces[i])) FAIL_CHECK(p);
        checked += static_cast<int>(pieces[i].size());
    }
    CHECK(checked >= 3);
}
}  // namespace

TEST_CASE("bad submissions that never reach a GPU get their verdicts, twice in one batch, 1 of 3",
          "[cli]") {
    check_fixtures_without_gpu(0, 3);
}
TEST_CASE("bad submissions that never reach a GPU get their verdicts, twice in one batch, 2 of 3",
          "[cli]") {
    check_fixtures_without_gpu(1, 3);
}
TEST_CASE("bad submissions that never reach a GPU get their verdicts, twice in one batch, 3 of 3",
          "[cli]") {
    check_fixtures_without_gpu(2, 3);
}

TEST_CASE("under emulation, a write past the end is MEMORY_ERROR at the learner's line", "[cli]") {
    auto root = course_with(
        std::string(CUDALINGS_SOURCE_DIR) + "/checks/01_vector_add/fixtures/one_past_end.cu",
        "01_vector_add/01_one_thread_per_element.cu");
    auto r = cudalings({"--root", root, "check", "1/1", "--emulate", "--json"});
    auto j = nlohmann::json::parse(r.out);
    const auto& step = j["results"][0];
    CHECK(step["verdict"] == "MEMORY_ERROR");  // the same verdict as on a GPU (the guard zone)
    CHECK_THAT(step["cases"][0]["detail"].get<std::string>(),
               ContainsSubstring("01_one_thread_per_element.cu:8: error: write to output[1]: "
                                 "out of bounds"));
    remove_course(root);
}

// Above 2^20+1025 the emulator runs a sample of each launch's blocks: an int product that
// overflows only at 2^28 sends the last block's index below the array, found with its line, its
// element and the size, and said to be a 32-bit overflow.
TEST_CASE("under emulation, an index that overflows only at 2^28 is MEMORY_ERROR naming the size",
          "[cli]") {
    auto root = course_with(std::string(CUDALINGS_SOURCE_DIR) +
                                "/checks/01_vector_add/fixtures/"
                                "memory_error_int32_product_overflow.cu",
                            "01_vector_add/01_one_thread_per_element.cu");
    auto r = cudalings({"--root", root, "check", "1/1", "--emulate", "--json"});
    INFO(r.out.substr(0, 4000) << r.err.substr(0, 1000));
    auto j = nlohmann::json::parse(r.out);
    const auto& step = j["results"][0];
    CHECK(step["verdict"] == "MEMORY_ERROR");
    const auto& last = step["cases"].back();
    CHECK_THAT(last["name"].get<std::string>(), ContainsSubstring("launches only"));
    for (std::size_t i = 0; i + 1 < step["cases"].size(); ++i)
        CHECK(step["cases"][i]["verdict"] == "PASS");  // every smaller size is right
    const std::string detail = last["detail"].get<std::string>();
    CHECK_THAT(detail, ContainsSubstring("at n=2^28 only"));
    CHECK_THAT(detail, ContainsSubstring("computed in 32 bits"));
    CHECK_THAT(detail, ContainsSubstring("01_one_thread_per_element.cu:26: error: read of "
                                         "a[-4194304]: out of bounds"));
    remove_course(root);
}

// Every fixture that says what the CPU emulator must conclude (`// emulated: VERDICT`) gets it,
// with the same reason where it names one: the emulator's verdicts are tested in CI as the GPU's
// are on a GPU. The fixtures are dealt round-robin into four test cases, so that each is its own
// CTest entry, well inside CTest's time limit on a 2-core machine however many lessons add
// fixtures (in one piece it took 1,718 s of 1,800 there).
namespace {
void check_emulated_fixtures(std::size_t shard, std::size_t shards) {
    std::vector<FixtureSpec> mine;
    std::size_t index = 0;
    for (const auto& f : all_fixtures())
        if (!f.emulated.empty() && index++ % shards == shard) mine.push_back(f);
    REQUIRE_FALSE(mine.empty());
    // One state directory: the lesson's checks are built for the emulator once per shard.
    const std::string state = fresh_state_dir();
    for (const auto& f : mine) {
        auto root = course_with(f.path, f.step);
        std::vector<std::string> args{
            "--root", root, "check", f.step.substr(0, f.step.size() - 3), "--emulate", "--json"};
        // The learner's defaults: the emulator's limits are CPU time, so CI's parallel tests on
        // two cores slow a case down without making it "too slow" (docs/emulator.md).
        for (const auto& flag : f.flags)
            if (flag != "--sanitize") args.push_back(flag);
        auto r = cudalings(args, state);
        INFO(f.name << ": exit " << r.code << "\n"
                    << r.out.substr(0, 3000) << r.err.substr(0, 1000));
        REQUIRE(r.code != -2);
        const auto j = nlohmann::json::parse(r.out);
        CHECK(j["results"][0]["verdict"] == f.emulated);
        const bool sanitizer_reason = f.reason.find("sanitizer") != std::string::npos;
        if (!f.reason.empty() && f.emulated == f.expect && !sanitizer_reason)
            CHECK_THAT(j["results"][0]["reason"].get<std::string>(), ContainsSubstring(f.reason));
        if (!f.emulated_detail.empty()) {
            // The emulator's finding and its advice, in the first failing case (what a student
            // reads first).
            std::string detail;
            for (const auto& c : j["results"][0]["cases"])
                if (c["verdict"] != "PASS" && c["verdict"] != "SKIPPED") {
                    detail = c.value("detail", "");
                    break;
                }
            CHECK_THAT(detail, ContainsSubstring(f.emulated_detail));
        }
        // The advice the step's checks chose for what the emulator saw (a TIMEOUT's cause).
        if (!f.emulated_advice.empty())
            CHECK_THAT(j["results"][0].value("advice", ""), ContainsSubstring(f.emulated_advice));
        remove_course(root);
    }
}
}  // namespace

TEST_CASE("fixtures with an emulated verdict get it under emulation, 1 of 4", "[cli]") {
    check_emulated_fixtures(0, 4);
}
TEST_CASE("fixtures with an emulated verdict get it under emulation, 2 of 4", "[cli]") {
    check_emulated_fixtures(1, 4);
}
TEST_CASE("fixtures with an emulated verdict get it under emulation, 3 of 4", "[cli]") {
    check_emulated_fixtures(2, 4);
}
TEST_CASE("fixtures with an emulated verdict get it under emulation, 4 of 4", "[cli]") {
    check_emulated_fixtures(3, 4);
}

// The no-GPU loop (docs/emulator.md): `--first-failure` (what `watch` does) ends an emulated
// check at its first failing case; a re-check of an unchanged file shows the stored report,
// said to be unchanged, unless --rerun, --seed or an edit asks for a run. A report that stopped
// early does not stand for a check of every case.
TEST_CASE("an emulated check can stop at its first failure, and an unchanged one is not re-run",
          "[cli]") {
    const std::string fixture =
        std::string(CUDALINGS_SOURCE_DIR) + "/checks/05_scan/fixtures/wrong_status_not_cleared.cu";
    auto root = course_with(fixture, "05_scan/06_chained_scan.cu");
    const auto state = fresh_state_dir();
    auto check = [&](std::vector<std::string> extra) {
        std::vector<std::string> args{"--root", root, "check", "5/6", "--emulate", "--json"};
        args.insert(args.end(), extra.begin(), extra.end());
        auto r = cudalings(args, state);
        INFO(r.out.substr(0, 3000) << r.err.substr(0, 1000));
        REQUIRE(r.code == 1);
        return nlohmann::json::parse(r.out)["results"][0];
    };
    const std::string stopped = "not run: the check stopped at the first failing case";
    auto stopped_cases = [&](const nlohmann::json& step) {
        int n = 0;
        for (const auto& c : step["cases"]) n += c["reason"] == stopped;
        return n;
    };

    auto first = check({"--first-failure"});
    CHECK(first["verdict"] == "WRONG");
    CHECK(first.value("stopped_early", false));
    CHECK(first.value("unchanged", false) == false);
    CHECK(stopped_cases(first) >= 1);
    // Nothing after the first failing case passed: it was not run.
    bool failed = false;
    for (const auto& c : first["cases"]) {
        if (failed) CHECK(c["verdict"] != "PASS");
        failed = failed || (c["verdict"] != "PASS" && c["verdict"] != "SKIPPED");
    }

    auto again = check({"--first-failure"});
    CHECK(again.value("unchanged", false));
    CHECK(again["seed"] == first["seed"]);  // the stored report, not a new run
    CHECK(again["verdict"] == "WRONG");

    auto all = check({});  // every case: the stopped report does not stand for it
    CHECK(all.value("unchanged", false) == false);
    CHECK(all.value("stopped_early", false) == false);
    CHECK(stopped_cases(all) == 0);
    CHECK(check({}).value("unchanged", false));
    CHECK(check({"--rerun"}).value("unchanged", false) == false);
    CHECK(check({"--seed", "1234"}).value("unchanged", false) == false);
    { std::ofstream(root + "/lessons/05_scan/06_chained_scan.cu", std::ios::app) << "// edited\n"; }
    CHECK(check({}).value("unchanged", false) == false);
    // The text says so, and how to run it again.
    auto text = cudalings({"--root", root, "check", "5/6", "--emulate"}, state);
    CHECK_THAT(text.out, ContainsSubstring("unchanged since "));
    CHECK_THAT(text.out, ContainsSubstring("--rerun"));
    remove_course(root);

    // A case that ends its process is a failing case too: no fresh process for the rest.
    auto crash = course_with(std::string(CUDALINGS_SOURCE_DIR) +
                                 "/checks/01_vector_add/fixtures/crash_exit_before_writing.cu",
                             "01_vector_add/01_one_thread_per_element.cu");
    auto r = cudalings({"--root", crash, "check", "1/1", "--emulate", "--json", "--first-failure"},
                       fresh_state_dir());
    INFO(r.out.substr(0, 3000));
    const auto j = nlohmann::json::parse(r.out)["results"][0];
    CHECK(j["verdict"] == "CRASH");
    CHECK(j.value("stopped_early", false));
    int run = 0;
    for (const auto& c : j["cases"]) run += c["verdict"] != "SKIPPED";
    CHECK(run == 1);
    remove_course(crash);
}

// Under emulation the larger sizes (the values-only case, the launches-only sizes) run in a
// second process beside the small cases. A step wrong only at the larger case is still WRONG at
// it, with its name; a step whose small cases fail has the larger ones named as not run.
TEST_CASE("the larger emulated sizes run beside the small cases and count as they did in order",
          "[cli]") {
    const std::string src = CUDALINGS_SOURCE_DIR;
    auto check = [&](const std::string& file, const std::string& step) {
        auto root = course_with(file, step);
        auto r = cudalings({"--root", root, "check", "1/1", "--emulate", "--json", "--all-cases"},
                           fresh_state_dir());
        INFO(r.out.substr(0, 3000) << r.err.substr(0, 1000));
        remove_course(root);
        return nlohmann::json::parse(r.out)["results"][0];
    };
    // Only the first 1024 blocks of 256 written: every case up to 2^16 + 3 passes.
    auto capped = check(src + "/checks/01_vector_add/fixtures/wrong_grid_capped_without_loop.cu",
                        "01_vector_add/01_one_thread_per_element.cu");
    CHECK(capped["verdict"] == "WRONG");
    int small_passed = 0;
    bool large_wrong = false, launches_named = false;
    for (const auto& c : capped["cases"]) {
        const std::string name = c["name"];
        if (c["n"].get<std::uint64_t>() <= 65539) small_passed += c["verdict"] == "PASS";
        if (name.rfind("n=2^20", 0) == 0) large_wrong = c["verdict"] == "WRONG";
        if (name.rfind("launches only", 0) == 0) launches_named = true;
    }
    CHECK(small_passed >= 8);
    CHECK(large_wrong);
    CHECK(launches_named);
    // Out of bounds from the first case: the larger case is named, not run.
    auto skeleton = check(src + "/checks/01_vector_add/fixtures/wrong_index_shift.cu",
                          "01_vector_add/01_one_thread_per_element.cu");
    CHECK(skeleton["verdict"] == "MEMORY_ERROR");
    bool large_not_run = false;
    for (const auto& c : skeleton["cases"])
        if (c["name"].get<std::string>().rfind("n=2^20", 0) == 0)
            large_not_run = c["verdict"] == "SKIPPED" &&
                            c["reason"] == "not run: a smaller case already failed";
    CHECK(large_not_run);
}

// After a PASS, `check` names the reference to compare with and the next step of the SAME
// lesson (not the course's first unfinished one), and `hint` without a step follows the learner
// there; without a check to go by, `hint` gives the first unfinished step's.
TEST_CASE("after a pass, check points to the reference and the lesson's next step; hint follows",
          "[cli]") {
    const std::string src = CUDALINGS_SOURCE_DIR;
    auto root = course_with(src + "/solutions/01_vector_add/02_grid_stride_loop.cu",
                            "01_vector_add/02_grid_stride_loop.cu");
    fs::create_directory_symlink(src + "/solutions", fs::path(root) / "solutions");
    const auto state = fresh_state_dir();
    CHECK_THAT(cudalings({"--root", root, "hint"}, state).out,
               ContainsSubstring("01_vector_add/01_one_thread_per_element —"));
    auto r = cudalings({"--root", root, "check", "1/2", "--no-time"}, state);
    INFO(r.out.substr(0, 3000) << r.err.substr(0, 1000));
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, ContainsSubstring("Compare yours with the reference: "
                                        "solutions/01_vector_add/02_grid_stride_loop.cu"));
    CHECK_THAT(r.out, ContainsSubstring("Next: 01_vector_add/03_float4 — "));
    CHECK_THAT(r.out, ContainsSubstring("./cudalings check 01_vector_add/03_float4"));
    auto hint = cudalings({"--root", root, "hint"}, state);
    CHECK_THAT(hint.out, ContainsSubstring("01_vector_add/03_float4 —"));
    CHECK_THAT(cudalings({"--root", root, "list"}, state).out,
               ContainsSubstring("[next] 03_float4"));
    // The same for machines: "solution" and "next" beside the results.
    auto j = nlohmann::json::parse(
        cudalings({"--root", root, "check", "1/2", "--no-time", "--json"}, state).out);
    CHECK(j["solution"] == "solutions/01_vector_add/02_grid_stride_loop.cu");
    CHECK(j["next"] == "01_vector_add/03_float4");
    remove_course(root);
}

// `check 01` prints one line per step (the README's promise), a failure's full report only for
// the step alone (or with -v), and says how to get it.
TEST_CASE("a lesson check prints one line per step, and how to see a step's full report", "[cli]") {
    const std::string src = CUDALINGS_SOURCE_DIR;
    auto root = course_with(src + "/checks/01_vector_add/fixtures/compile_error.cu",
                            "01_vector_add/01_one_thread_per_element.cu");
    const auto state = fresh_state_dir();
    auto r = cudalings({"--root", root, "check", "01", "--no-time", "--no-emulate"}, state);
    INFO(r.out);
    CHECK(r.code == 1);
    CHECK_THAT(r.out, ContainsSubstring("[1/3] 01_vector_add/01_one_thread_per_element"));
    CHECK_THAT(r.out, ContainsSubstring("COMPILE_ERROR"));
    CHECK_THAT(r.out, ContainsSubstring("[3/3] 01_vector_add/03_float4"));
    CHECK_THAT(r.out, !ContainsSubstring("compile  failed"));  // no full report
    CHECK_THAT(r.out, !ContainsSubstring("    | "));           // nor nvcc's output
    CHECK_THAT(r.out, ContainsSubstring("A step's full report: ./cudalings check "
                                        "01_vector_add/01_one_thread_per_element"));
    auto one = cudalings({"--root", root, "check", "1/1", "--no-time", "--no-emulate"}, state);
    CHECK_THAT(one.out, ContainsSubstring("compile  failed"));
    remove_course(root);
}

// 07/1 calls CUB, which the emulator cannot build: it is marked in `list` and, without a GPU,
// passed over by list, hint and check rather than waited on. Its build has no warning (the
// checker and the file both turn CUB's NVTX ranges off: one definition).
TEST_CASE("a step that needs a GPU is marked, and without one it holds nothing up", "[cli]") {
    const bool gpu = gpu_present();
    const auto state = fresh_state_dir();
    // Every step before 07/1 passed.
    nlohmann::json passed = nlohmann::json::object();
    const auto fresh = nlohmann::json::parse(cudalings({"list", "--json"}, state).out);
    for (const auto& step : fresh["steps"]) {
        const std::string name = step["step"];
        if (name.rfind("07_compact/", 0) == 0) break;
        passed[name] = "0";
    }
    nlohmann::json progress;
    progress["passed"] = passed;
    fs::create_directories(state);
    {
        std::ofstream file(fs::path(state) / "progress.json");
        file << progress.dump();
    }
    auto list = cudalings({"list"}, state);
    CHECK_THAT(list.out, ContainsSubstring("01_flags_scan_scatter  Flags, cub::DeviceScan::"
                                           "ExclusiveSum, scatter: the library first  (needs an "
                                           "NVIDIA GPU"));
    const std::string expected_next =
        gpu ? "07_compact/01_flags_scan_scatter" : "07_compact/02_two_pass";
    CHECK_THAT(list.out, ContainsSubstring("Next: ./cudalings check " + expected_next));
    CHECK_THAT(cudalings({"hint"}, state).out, ContainsSubstring(expected_next + " —"));
    auto j = nlohmann::json::parse(cudalings({"list", "--json"}, state).out);
    for (const auto& step : j["steps"])
        if (step["step"] == "07_compact/01_flags_scan_scatter") {
            CHECK(step["needs_gpu"] == true);
            CHECK(step["status"] == (gpu ? "next" : "needs_gpu"));
        }
    if (!gpu) CHECK_THAT(list.out, ContainsSubstring("[gpu ] 01_flags_scan_scatter"));
    auto check = cudalings({"check", "7/1", "--no-time", "--no-emulate"}, state);
    INFO(check.out);
    CHECK_THAT(check.out, ContainsSubstring("compile  ok"));
    CHECK_THAT(check.out, !ContainsSubstring("warning"));
    CHECK_THAT(check.out, !ContainsSubstring("redefined"));
    if (!gpu) {
        CHECK(check.code == 77);
        CHECK_THAT(check.out, ContainsSubstring("it does not hold up the course"));
        CHECK_THAT(check.out, ContainsSubstring("Next: 07_compact/02_two_pass"));
    }
}
