// `cudalings dev update` and the generated regions (checker/core/report/generated.h): the marker
// syntax, a small course updated from a results file (stored, refused, replaced), and the real
// course: its regions are what the update makes of its stored results file, and a hand edit of one
// is a `dev check` finding.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "cli_support.h"
#include "devcheck.h"
#include "generated.h"
#include "hash.h"
#include "manifest.h"
#include "supervise.h"

using namespace cudalings;
using Catch::Matchers::ContainsSubstring;
namespace fs = std::filesystem;

namespace {

void write(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
}

std::string read(const fs::path& path) { return read_file(path.string()); }

// The findings of one rule, with the other rules' stubbed (no lesson's checks are built here).
std::vector<DevFinding> findings(const fs::path& root, const std::string& rule) {
    const Manifest m = load_manifest(root.string());
    std::vector<DevFinding> out;
    for (const auto& f : dev_check(root.string(), m, [](const LessonInfo&) {
             return ChecksContents{{}, {}, "not built in this test"};
         }))
        if (f.rule == rule) out.push_back(f);
    return out;
}

// `check --json` output of a GPU run of the reference solutions (what matters of it): one
// lesson, two steps and a baseline, two columns, no run record (as before it existed).
nlohmann::json check_output(const std::string& gpu, double step2_us) {
    auto cell = [](const char* column, double us) {
        return nlohmann::json{{"column", column}, {"median_us", us},  {"bytes", 4e9},
                              {"n", 1u << 28},    {"size", "n=2^28"}, {"gbps", 1.0}};
    };
    nlohmann::json rows = nlohmann::json::array();
    rows.push_back({{"label", "01_a"},
                    {"title", "A"},
                    {"problem", "demo"},
                    {"baseline", false},
                    {"cells", {cell("x", 2000.0), cell("y", 4000.0)}}});
    rows.push_back({{"label", "02_b"},
                    {"title", "B"},
                    {"problem", "demo"},
                    {"baseline", false},
                    {"cells", {cell("x", step2_us), cell("y", 2000.0)}}});
    rows.push_back({{"label", "lib::Demo"},
                    {"title", "lib::Demo"},
                    {"problem", "demo"},
                    {"baseline", true},
                    {"cells", {cell("x", 800.0), cell("y", 1600.0)}}});
    nlohmann::json results = nlohmann::json::array();
    for (const char* step : {"01_a", "02_b"})
        results.push_back({{"step", std::string("01_demo/") + step},
                           {"file", std::string("/x/solutions/01_demo/") + step + ".cu"},
                           {"gpu", gpu},
                           {"verdict", "PASS"}});
    return {{"format_version", 1},
            {"results", results},
            {"staircases", {{{"lesson", "01_demo"}, {"copy_gbps", 4000.0}, {"rows", rows}}}},
            {"passed", 2}};
}

struct DemoCourse {
    fs::path root = fs::path(test_support::temp_path("devupdate_course"));
    DemoCourse() {
        write(root / "course.json", R"({"lessons": ["01_demo"]})");
        write(root / "checks/01_demo/lesson.json",
              R"({"id": "01_demo", "title": "Demo", "problem": "demo",
                  "summary": {"write": "a | b", "teaches": "c"},
                  "steps": [{"id": "01_a", "hint": "h"}, {"id": "02_b", "hint": "h"}]})");
        write(root / "README.md",
              "# Demo\n\n<!-- cudalings:course-table -->\n<!-- /cudalings:course-table "
              "-->\n\nEnd.\n");
        write(root / "lessons/01_demo/README.md",
              "# Lesson\n\nBefore.\n\n"
              "<!-- cudalings:staircase figures=\"time,copy,previous,against\" "
              "against=\"lib::Demo\" -->\n<!-- /cudalings:staircase -->\n\nAfter.\n");
    }
    ~DemoCourse() { fs::remove_all(root); }
    fs::path results(const std::string& gpu, double step2_us, const std::string& name) const {
        const fs::path p = root / "incoming" / (name + ".json");
        write(p, check_output(gpu, step2_us).dump());
        return p;
    }
    UpdateOutcome update(const fs::path& results, const std::string& date = "2026-12-05",
                         bool other_gpu = false) const {
        UpdateOptions o;
        o.results = results.string();
        o.date = date;
        o.other_gpu = other_gpu;
        return dev_update(root.string(), load_manifest(root.string()), o);
    }
};

}  // namespace

TEST_CASE("dev update: regions are read from their markers, and bad markers are refused",
          "[devupdate]") {
    std::vector<Region> regions;
    std::string error;
    const std::string text =
        "a\n<!-- cudalings:staircase gpu=\"G 1\" results=\"r.json\" -->\nold\n"
        "<!-- /cudalings:staircase -->\nb\n";
    REQUIRE(find_regions(text, regions, error));
    REQUIRE(regions.size() == 1);
    CHECK(regions[0].kind == "staircase");
    CHECK(regions[0].line == 2);
    CHECK(regions[0].attribute("gpu") == "G 1");
    CHECK(regions[0].attribute("results") == "r.json");
    CHECK(text.substr(regions[0].body_begin, regions[0].body_end - regions[0].body_begin) ==
          "old\n");
    CHECK(opening_marker(regions[0]) ==
          "<!-- cudalings:staircase gpu=\"G 1\" results=\"r.json\" -->");

    CHECK_FALSE(find_regions("<!-- cudalings:staircase -->\nx\n", regions, error));
    CHECK_THAT(error, ContainsSubstring("line 1") && ContainsSubstring("no end"));
    CHECK_FALSE(find_regions("<!-- cudalings:staircase gpu=G -->\n", regions, error));
    CHECK_THAT(error, ContainsSubstring("malformed"));
    CHECK_FALSE(find_regions("<!-- cudalings:a -->\n<!-- cudalings:b -->\n", regions, error));
    CHECK_THAT(error, ContainsSubstring("line 2") && ContainsSubstring("inside"));
    CHECK_FALSE(find_regions("<!-- cudalings:a -->\n<!-- /cudalings:b -->\n", regions, error));
    CHECK_THAT(error, ContainsSubstring("not open"));
}

TEST_CASE("dev update: a check's results are stored trimmed, and the regions come from them",
          "[devupdate]") {
    DemoCourse course;
    const auto file = course.results("NVIDIA Demo 40GB", 1000.0, "a");

    // No run record in the file: the day must be given.
    auto out = course.update(file, "");
    CHECK_THAT(out.error, ContainsSubstring("--date"));
    CHECK_FALSE(fs::exists(course.root / "docs/results"));

    out = course.update(file);
    INFO(out.error);
    REQUIRE(out.error.empty());
    const fs::path stored = course.root / "docs/results/demo-40gb-2026-12-05.json";
    REQUIRE(fs::exists(stored));
    const auto j = nlohmann::json::parse(read(stored));
    CHECK(j["run"]["gpu"] == "NVIDIA Demo 40GB");
    CHECK(j["run"]["date"] == "2026-12-05");
    CHECK(j["staircases"][0]["rows"][1]["cells"][0]["median_us"] == 1000.0);
    CHECK_FALSE(j["staircases"][0]["rows"][1]["cells"][0].contains("gbps"));  // derived: dropped

    const std::string lesson = read(course.root / "lessons/01_demo/README.md");
    CHECK_THAT(lesson, ContainsSubstring("gpu=\"NVIDIA Demo 40GB\" "
                                         "results=\"docs/results/demo-40gb-2026-12-05.json\" -->"));
    CHECK_THAT(lesson, ContainsSubstring("Checker run on an NVIDIA Demo 40GB, 2026-12-05"));
    CHECK_THAT(lesson, ContainsSubstring("(../../docs/results/demo-40gb-2026-12-05.json)"));
    // step 2 at x: 4 GB in 1000 µs = 4000 GB/s, 100% of copy, twice step 1's rate; lib::Demo's
    // 800 µs is 80% of its time.
    CHECK_THAT(lesson, ContainsSubstring("| `02_b` | 1000.0 µs, 100.0%, 2.00×, 80.0% |"));
    CHECK_THAT(lesson, ContainsSubstring("| `01_a` | 2000.0 µs, 50.0%, –, 40.0% |"));
    CHECK_THAT(lesson, ContainsSubstring("| lib::Demo | 800.0 µs, 125.0%, 1.25×, 100.0% |"));
    CHECK_THAT(lesson, ContainsSubstring("Before.\n\n<!-- cudalings:staircase"));
    CHECK_THAT(lesson, ContainsSubstring("<!-- /cudalings:staircase -->\n\nAfter.\n"));
    const std::string readme = read(course.root / "README.md");
    CHECK_THAT(readme, ContainsSubstring("| [01_demo](lessons/01_demo/README.md) | a \\| b | c |"));
    CHECK_THAT(readme, ContainsSubstring("1 lessons, 2 steps."));
    CHECK(findings(course.root, "generated").empty());

    // Again from the stored file: nothing changes.
    out = course.update(stored, "");
    REQUIRE(out.error.empty());
    CHECK(out.written.empty());
    CHECK(read(course.root / "lessons/01_demo/README.md") == lesson);

    // A hand edit is a dev check finding naming the command, and the update undoes it.
    std::string edited = lesson;
    edited.replace(edited.find("1000.0 µs"), 9, "900.0 µs");
    write(course.root / "lessons/01_demo/README.md", edited);
    const auto found = findings(course.root, "generated");
    REQUIRE(found.size() == 1);
    CHECK(found[0].file == "lessons/01_demo/README.md");
    CHECK_THAT(found[0].message, ContainsSubstring("docs/results/demo-40gb-2026-12-05.json") &&
                                     ContainsSubstring("cudalings dev update"));
    out = dev_update(course.root.string(), load_manifest(course.root.string()), {});
    REQUIRE(out.error.empty());
    CHECK(read(course.root / "lessons/01_demo/README.md") == lesson);

    // So is an edit to the course table, or a summary changed without the update.
    write(course.root / "checks/01_demo/lesson.json",
          R"({"id": "01_demo", "title": "Demo", "problem": "demo",
              "summary": {"write": "new", "teaches": "c"},
              "steps": [{"id": "01_a", "hint": "h"}, {"id": "02_b", "hint": "h"}]})");
    const auto table = findings(course.root, "generated");
    REQUIRE(table.size() == 1);
    CHECK(table[0].file == "README.md");
}

TEST_CASE("dev update: results from another GPU model replace a region only when asked",
          "[devupdate]") {
    DemoCourse course;
    REQUIRE(course.update(course.results("NVIDIA Demo 40GB", 1000.0, "a")).error.empty());
    const std::string before = read(course.root / "lessons/01_demo/README.md");

    const auto other = course.results("NVIDIA Other", 500.0, "b");
    auto out = course.update(other, "2026-12-06");
    CHECK_THAT(out.error, ContainsSubstring("names the GPU \"NVIDIA Demo 40GB\"") &&
                              ContainsSubstring("--other-gpu"));
    CHECK(read(course.root / "lessons/01_demo/README.md") == before);  // nothing written
    CHECK_FALSE(fs::exists(course.root / "docs/results/other-2026-12-06.json"));

    out = course.update(other, "2026-12-06", true);
    REQUIRE(out.error.empty());
    const std::string after = read(course.root / "lessons/01_demo/README.md");
    CHECK_THAT(after, ContainsSubstring("gpu=\"NVIDIA Other\""));
    CHECK_THAT(after, ContainsSubstring("| `02_b` | 500.0 µs, 200.0%, 4.00×, 160.0% |"));
    CHECK(findings(course.root, "generated").empty());

    // The same model on another day needs no permission.
    REQUIRE(course.update(course.results("NVIDIA Other", 400.0, "c"), "2026-12-07").error.empty());
    CHECK_THAT(read(course.root / "lessons/01_demo/README.md"),
               ContainsSubstring("other-2026-12-07.json"));
}

TEST_CASE("dev update: a lesson may show two GPU models side by side", "[devupdate]") {
    DemoCourse course;
    write(course.root / "lessons/01_demo/README.md",
          "<!-- cudalings:staircase gpu=\"NVIDIA A\" -->\n<!-- /cudalings:staircase -->\n\n"
          "<!-- cudalings:staircase gpu=\"NVIDIA B\" -->\n<!-- /cudalings:staircase -->\n");
    auto out = course.update(course.results("NVIDIA A", 1000.0, "a"), "2026-12-05");
    REQUIRE(out.error.empty());
    CHECK_THAT(out.notes[0], ContainsSubstring("waits for results"));  // B's: left empty
    const std::string a_only = read(course.root / "lessons/01_demo/README.md");
    CHECK_THAT(a_only, ContainsSubstring("a-2026-12-05.json"));
    CHECK_THAT(a_only, ContainsSubstring("<!-- cudalings:staircase gpu=\"NVIDIA B\" -->\n<!--"));
    CHECK(findings(course.root, "generated").size() == 1);  // B's region has no results yet

    REQUIRE(course.update(course.results("NVIDIA B", 500.0, "b"), "2026-12-06").error.empty());
    const std::string both = read(course.root / "lessons/01_demo/README.md");
    CHECK(both.substr(0, both.find("NVIDIA B")) == a_only.substr(0, a_only.find("NVIDIA B")));
    CHECK_THAT(both, ContainsSubstring("b-2026-12-06.json"));
    CHECK_THAT(both, ContainsSubstring("| `02_b` | 500.0 µs"));
    CHECK(findings(course.root, "generated").empty());
}

TEST_CASE("dev update: results that cannot make a table are refused", "[devupdate]") {
    DemoCourse course;
    auto j = check_output("NVIDIA Demo 40GB", 1000.0);
    j["results"][0]["file"] = "/x/lessons/01_demo/01_a.cu";  // a learner's file, not a solution
    const fs::path file = course.root / "learner.json";
    write(file, j.dump());
    CHECK_THAT(course.update(file).error, ContainsSubstring("reference solutions"));
    write(file, check_output("none (emulated on the CPU)", 1000.0).dump());
    CHECK_THAT(course.update(file).error, ContainsSubstring("GPU"));
    CHECK_THAT(course.update(course.results("G", 1.0, "d"), "5 Dec").error,
               ContainsSubstring("YYYY-MM-DD"));

    // A region reads its results from inside the course only.
    write(course.root / "lessons/01_demo/README.md",
          "<!-- cudalings:staircase gpu=\"G\" results=\"../elsewhere.json\" -->\n"
          "<!-- /cudalings:staircase -->\n");
    std::vector<DevFinding> found;
    for (const auto& f : findings(course.root, "generated"))  // (the course table is unfilled)
        if (f.file == "lessons/01_demo/README.md") found.push_back(f);
    REQUIRE(found.size() == 1);
    CHECK_THAT(found[0].message, ContainsSubstring("outside the course"));
}

TEST_CASE("dev update: the pristine record is written by the course's own script", "[devupdate]") {
    const std::string cmake = find_program("cmake");
    if (cmake.empty()) SKIP("no cmake on PATH");
    DemoCourse course;
    fs::create_directories(course.root / "cmake");
    fs::copy_file(fs::path(CUDALINGS_SOURCE_DIR) / "cmake/CudalingsPristineRecord.cmake",
                  course.root / "cmake/CudalingsPristineRecord.cmake");
    write(course.root / "lessons/01_demo/01_a.cu", "// step a\n");
    write(course.root / "lessons/01_demo/demo.cuh", "// header\n");
    UpdateOptions o;
    o.cmake = cmake;
    auto out = dev_update(course.root.string(), load_manifest(course.root.string()), o);
    INFO(out.error);
    REQUIRE(out.error.empty());
    const std::string record = read(course.root / "cmake/pristine-lessons.sha256");
    // SHA-256 of "// step a\n", then the header's line: every lesson source, sorted.
    CHECK(std::regex_match(record, std::regex("[0-9a-f]{64}  01_demo/01_a\\.cu\n"
                                              "[0-9a-f]{64}  01_demo/demo\\.cuh\n")));
    CHECK(std::find(out.written.begin(), out.written.end(), "cmake/pristine-lessons.sha256") !=
          out.written.end());
    out = dev_update(course.root.string(), load_manifest(course.root.string()), o);
    CHECK(out.written.empty());  // unchanged lessons: nothing to write
}

// The course itself: a copy of what the generated parts come from and of the READMEs.
TEST_CASE(
    "dev update: the course's regions are what its stored results make, and a hand edit "
    "fails dev check",
    "[devupdate]") {
    const fs::path source = CUDALINGS_SOURCE_DIR;
    const fs::path root = test_support::temp_path("devupdate_real");
    const Manifest m = load_manifest(source.string());
    auto copy = [&](const fs::path& rel) {
        fs::create_directories((root / rel).parent_path());
        fs::copy(source / rel, root / rel, fs::copy_options::recursive);
    };
    for (const char* rel : {"course.json", "README.md", "docs/results"}) copy(rel);
    for (const auto& l : m.lessons) {
        copy(fs::path("checks") / l.id / "lesson.json");
        copy(fs::path("lessons") / l.id / "README.md");
    }
    auto snapshot = [&] {
        std::map<std::string, std::string> files;
        for (const auto& e : fs::recursive_directory_iterator(root))
            if (e.is_regular_file()) files[e.path().string()] = read(e.path());
        return files;
    };
    const auto before = snapshot();
    // The stored files the regions name, by GPU model. An update from a file rewrites every
    // region of its GPU model in its lessons, so it changes nothing only where every region of
    // that model names that file (one GPU's regions may name several runs: an update then
    // moves them all to one).
    std::map<std::string, std::set<std::string>> named;  // gpu -> results files
    const std::regex marker(R"re(cudalings:staircase [^>]*gpu="([^"]+)" results="([^"]+)")re");
    for (const auto& l : m.lessons) {
        const std::string text = read(root / "lessons" / l.id / "README.md");
        for (std::sregex_iterator it(text.begin(), text.end(), marker), end; it != end; ++it)
            named[(*it)[1]].insert((*it)[2]);
    }
    std::vector<std::string> stored;
    for (const auto& [gpu, files] : named)
        if (files.size() == 1) stored.push_back((root / *files.begin()).string());
    REQUIRE_FALSE(stored.empty());

    // The update, through the command, from such a stored file and from none: nothing changes.
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"--root", root.string(), "dev", "update"},
             {"--root", root.string(), "dev", "update", "--results", stored.front()}}) {
        const auto r = test_support::cudalings(args);
        INFO(r.out << r.err);
        CHECK(r.code == 0);
        CHECK(snapshot() == before);
    }
    CHECK(findings(root, "generated").empty());

    // A figure edited by hand in lesson 10's table.
    const fs::path gemm = root / "lessons/10_gemm/README.md";
    std::string text = read(gemm);
    const std::regex figure(R"(\| `07_register_prefetch` \| (\d+)\.\d µs)");
    std::smatch match;
    REQUIRE(std::regex_search(text, match, figure));
    text.replace(static_cast<std::size_t>(match.position(1)), match.length(1), "1");
    write(gemm, text);
    const auto found = findings(root, "generated");
    REQUIRE(found.size() == 1);
    CHECK(found[0].file == "lessons/10_gemm/README.md");
    CHECK_THAT(found[0].message, ContainsSubstring("dev update"));
    const auto r = test_support::cudalings({"--root", root.string(), "dev", "update"});
    CHECK(r.code == 0);
    CHECK(snapshot() == before);
    fs::remove_all(root);
}

// A compute-bound lesson's table (figures="time,fp32"): the share of the FP32 rate measured in
// the run, which the stored file keeps with each cell's operations.
TEST_CASE("dev update: a compute-bound staircase shows its share of the FP32 rate", "[devupdate]") {
    DemoCourse course;
    write(course.root / "lessons/01_demo/README.md",
          "# Lesson\n\n<!-- cudalings:staircase figures=\"time,fp32\" -->\n"
          "<!-- /cudalings:staircase -->\n");
    auto j = check_output("NVIDIA Demo 40GB", 1000.0);
    auto& stair = j["staircases"][0];
    stair["fp32_gflops"] = 50000.0;
    for (auto& row : stair["rows"])
        for (auto& cell : row["cells"]) cell["fp32_ops"] = 20e9;  // 20 GFLOP a call
    stair["rows"][0]["cells"][1].erase("fp32_ops");               // a memory-bound column: no share
    const fs::path file = course.root / "incoming/fp32.json";
    write(file, j.dump());
    const auto out = course.update(file);
    INFO(out.error);
    REQUIRE(out.error.empty());
    const std::string lesson = read(course.root / "lessons/01_demo/README.md");
    CHECK_THAT(lesson, ContainsSubstring("the FP32 rate 50.0 TFLOP/s."));
    // 20 GFLOP in 1000 µs: 20 TFLOP/s, 40% of 50.
    CHECK_THAT(lesson, ContainsSubstring("| `02_b` | 1000.0 µs, 40.0% | 2000.0 µs, 20.0% |"));
    CHECK_THAT(lesson, ContainsSubstring("| `01_a` | 2000.0 µs, 20.0% | 4000.0 µs, – |"));
    const auto stored =
        nlohmann::json::parse(read(course.root / "docs/results/demo-40gb-2026-12-05.json"));
    CHECK(stored["staircases"][0]["fp32_gflops"] == 50000.0);
    CHECK(stored["staircases"][0]["rows"][0]["cells"][0]["fp32_ops"] == 20e9);
    CHECK_FALSE(stored["staircases"][0]["rows"][0]["cells"][1].contains("fp32_ops"));
    CHECK(findings(course.root, "generated").empty());
}

// "against" compares rows of the same problem only: a row of another problem (a tile sort beside
// full sorts, pairs beside keys) gets "–", never a ratio of unlike work.
TEST_CASE("dev update: against compares only rows of the same problem", "[devupdate]") {
    DemoCourse course;
    auto j = check_output("NVIDIA Demo 40GB", 1000.0);
    j["staircases"][0]["rows"][0]["problem"] = "other";
    const fs::path file = course.root / "incoming/problems.json";
    write(file, j.dump());
    const auto out = course.update(file);
    INFO(out.error);
    REQUIRE(out.error.empty());
    const std::string lesson = read(course.root / "lessons/01_demo/README.md");
    CHECK_THAT(lesson, ContainsSubstring("| `01_a` | 2000.0 µs, 50.0%, –, – |"));
    CHECK_THAT(lesson, ContainsSubstring("| `02_b` | 1000.0 µs, 100.0%, 2.00×, 80.0% |"));
    CHECK_THAT(lesson, ContainsSubstring("another problem)"));
}
