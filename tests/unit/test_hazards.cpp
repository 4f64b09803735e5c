// The hazard pass of a GPU check (checker/core/run/check.cpp): the CPU emulator's analysis of the
// small cases, folded into the GPU's verdict. It runs here on the CPU as check() runs it beside
// the GPU's cases; the GPU side (fixtures with `expect: MEMORY_ERROR`) is the GPU suite's.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <filesystem>
#include <future>

#include "check.h"
#include "cli_support.h"
#include "conclude.h"
#include "manifest.h"

using Catch::Matchers::ContainsSubstring;
using test_support::course_with;
using test_support::fresh_state_dir;
using test_support::remove_course;
using namespace cudalings;

namespace {

// The lesson and step of the course's manifest with these ids.
std::pair<const LessonInfo*, const StepInfo*> find_step(const Manifest& m,
                                                        const std::string& lesson,
                                                        const std::string& step) {
    for (const auto& l : m.lessons)
        if (l.id == lesson)
            for (const auto& s : l.steps)
                if (s.id == step) return {&l, &s};
    return {nullptr, nullptr};
}

}  // namespace

// A GPU gives the right numbers for this racy reduction, so its verdict alone is PASS; a GPU
// check also runs the emulator's hazard pass (check.cpp), which this test runs on the CPU the
// way check() does beside the GPU's cases.
TEST_CASE("the hazard pass finds the race a GPU's numbers hide, and caches it", "[cli]") {
    auto root = course_with(std::string(CUDALINGS_SOURCE_DIR) +
                                "/checks/02_reduce/fixtures/race_missing_barrier_after_load.cu",
                            "02_reduce/03_sequential_addressing.cu");
    CoursePaths paths;
    paths.root = root;
    paths.tool_dir = std::filesystem::path(CUDALINGS_BINARY).parent_path().string();
    paths.state_dir = fresh_state_dir();
    const Manifest m = load_manifest(root);
    Checker checker(paths, m, CheckOptions{});
    auto [lesson, step] = find_step(m, "02_reduce", "03_sequential_addressing");
    REQUIRE(lesson);
    std::promise<bool> nvcc_accepted;
    nvcc_accepted.set_value(true);
    const auto built = nvcc_accepted.get_future().share();
    const std::string file = paths.step_file(*lesson, *step, false);
    const auto first = checker.hazard_pass(*lesson, *step, file, built);
    INFO(first.note);
    REQUIRE_FALSE(first.findings.empty());
    CHECK(first.findings.front().tool == "emulator");
    // Warp 0 reads sdata[128] (line 26, in tree_sum) before thread 128 stores it (line 41): both
    // are named (the lines of the fixture as materialised: its header, then the solution's body
    // with the bug).
    CHECK(first.findings.front().line == 41);
    CHECK_THAT(first.findings.front().message, ContainsSubstring("03_sequential_addressing.cu:26"));
    CHECK_THAT(first.findings.front().message,
               ContainsSubstring("data race on shared memory sdata["));
    // The same file again: the cached findings, the same ones.
    const auto again = checker.hazard_pass(*lesson, *step, file, built);
    REQUIRE(again.findings.size() == first.findings.size());
    CHECK(again.findings.front().message == first.findings.front().message);
    // Folded into a GPU report whose cases passed: MEMORY_ERROR, naming the race and its line.
    StepReport report;
    CaseResult passed;
    passed.verdict = Verdict::Pass;
    report.cases.push_back(passed);
    fold_hazards(report, first);
    conclude(report);
    CHECK(report.verdict == Verdict::MemoryError);
    CHECK_THAT(report.reason, ContainsSubstring("hazard (CPU emulator), line 41: data race"));
    remove_course(root);
}

TEST_CASE("the hazard pass finds nothing in a correct step and says what it ran", "[cli]") {
    CoursePaths paths;
    paths.root = CUDALINGS_SOURCE_DIR;
    paths.tool_dir = std::filesystem::path(CUDALINGS_BINARY).parent_path().string();
    paths.state_dir = fresh_state_dir();
    const Manifest m = load_manifest(paths.root);
    Checker checker(paths, m, CheckOptions{});
    auto [lesson, step] = find_step(m, "04_block_reduce", "05_fast_device_sum");
    REQUIRE(lesson);
    std::promise<bool> nvcc_accepted;
    nvcc_accepted.set_value(true);
    const auto h = checker.hazard_pass(*lesson, *step, paths.step_file(*lesson, *step, true),
                                       nvcc_accepted.get_future().share());
    for (const auto& f : h.findings) INFO(f.message);
    CHECK(h.findings.empty());
    CHECK_THAT(h.note, ContainsSubstring("hazard pass"));
    CHECK_THAT(h.note, ContainsSubstring("nothing found"));
}
