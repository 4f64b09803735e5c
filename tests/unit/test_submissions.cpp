// The emulator's corpus of submissions (emulator/tests/submissions/NN_topic/*.cu): realistic
// solutions of lessons 02-09 written outside the course's own files, correct ones in unusual
// forms and buggy ones, each with the verdict the emulator must give (`// emulated:`). The same
// files are checked on a GPU by emulator/tests/differential.py (the pass/fail must agree).
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>

#include "cli_support.h"

namespace fs = std::filesystem;
using Catch::Matchers::ContainsSubstring;
using namespace test_support;

TEST_CASE("the emulator's corpus of submissions gets its verdicts", "[cli][corpus]") {
    std::vector<FixtureSpec> corpus;
    for (const auto& lesson :
         fs::directory_iterator(fs::path(CUDALINGS_SOURCE_DIR) / "emulator/tests/submissions"))
        if (lesson.is_directory())
            for (const auto& file : fs::directory_iterator(lesson.path()))
                if (file.path().extension() == ".cu") corpus.push_back(read_fixture(file.path()));
    std::sort(corpus.begin(), corpus.end(), [](auto& a, auto& b) { return a.path < b.path; });
    const auto correct = std::count_if(corpus.begin(), corpus.end(),
                                       [](const FixtureSpec& f) { return f.emulated == "PASS"; });
    CHECK(corpus.size() >= 40);
    CHECK(correct >= 15);
    // One state directory: the lessons' checks are built for the emulator once.
    const std::string state = fresh_state_dir();
    for (const auto& f : corpus) {
        REQUIRE_FALSE(f.step.empty());
        REQUIRE_FALSE(f.emulated.empty());
        auto root = course_with(f.path, f.step);
        auto r = cudalings(
            {"--root", root, "check", f.step.substr(0, f.step.size() - 3), "--emulate", "--json"},
            state);
        INFO(f.name << ": exit " << r.code << "\n"
                    << r.out.substr(0, 3000) << r.err.substr(0, 1000));
        REQUIRE(r.code != -2);
        const auto j = nlohmann::json::parse(r.out);
        CHECK(j["results"][0]["verdict"] == f.emulated);
        if (!f.reason.empty())
            CHECK_THAT(j["results"][0]["reason"].get<std::string>(), ContainsSubstring(f.reason));
        remove_course(root);
    }
}

// A larger case the emulator cannot finish in its time is "too slow to emulate", not a verdict on
// the code, once a smaller case has already failed: that failure names the bug. A slow or busy
// machine (here: a case time limit of 0.2 s, which the 2^16+3 case of a chained scan passes)
// must not turn a race found at n = 1025 into a TIMEOUT.
TEST_CASE("a case too slow to emulate does not hide a smaller case's failure", "[cli][corpus]") {
    const std::string file =
        std::string(CUDALINGS_SOURCE_DIR) +
        "/emulator/tests/submissions/05_scan/fail_chained_two_words_no_fence.cu";
    const FixtureSpec f = read_fixture(file);
    REQUIRE(f.emulated == "MEMORY_ERROR");
    auto root = course_with(f.path, f.step);
    auto r = cudalings({"--root", root, "check", f.step.substr(0, f.step.size() - 3), "--emulate",
                        "--json", "--case-timeout", "0.4"});
    INFO(r.out.substr(0, 3000) << r.err.substr(0, 1000));
    const auto j = nlohmann::json::parse(r.out);
    const auto& step = j["results"][0];
    CHECK(step["verdict"] == "MEMORY_ERROR");
    CHECK_THAT(step["reason"].get<std::string>(), ContainsSubstring("race"));
    // The path under test was taken: some larger case was too slow and is reported unchecked.
    bool too_slow = false;
    for (const auto& c : step["cases"])
        too_slow = too_slow || (c["verdict"] == "SKIPPED" &&
                                c["reason"].get<std::string>().find("too slow to emulate") !=
                                    std::string::npos);
    CHECK(too_slow);
    remove_course(root);
}
