// The emulator's corpus of submissions (checks/NN_topic/corpus/*.cu): realistic
// solutions of lessons 02-09 written outside the course's own files, correct ones in unusual
// forms and buggy ones, each with the verdict the emulator must give (`// emulated:`). The same
// files are checked on a GPU by emulator/tests/differential.py (the pass/fail must agree).
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>

#include "cli_support.h"
#include "fixtures.h"

namespace fs = std::filesystem;
using Catch::Matchers::ContainsSubstring;
using namespace test_support;

// The corpus is dealt round-robin into three test cases, each its own CTest entry, so that each
// stays well inside CTest's time limit on a 2-core machine (in one piece it took 1,388 s of
// 1,800 there, beside the fixture tests).
namespace {
void check_corpus(std::size_t shard, std::size_t shards) {
    std::vector<FixtureSpec> corpus;
    for (const auto& file :
         ::cudalings::fixture_files(CUDALINGS_SOURCE_DIR, ::cudalings::FixtureKind::corpus))
        corpus.push_back(read_fixture(file));
    std::sort(corpus.begin(), corpus.end(), [](auto& a, auto& b) { return a.path < b.path; });
    if (shard == 0) {  // the corpus as a whole, once
        const auto correct = std::count_if(corpus.begin(), corpus.end(), [](const FixtureSpec& f) {
            return f.emulated == "PASS";
        });
        CHECK(corpus.size() >= 40);
        CHECK(correct >= 15);
    }
    // One state directory: the lessons' checks are built for the emulator once.
    const std::string state = fresh_state_dir();
    for (std::size_t i = shard; i < corpus.size(); i += shards) {
        const auto& f = corpus[i];
        REQUIRE_FALSE(f.step.empty());
        REQUIRE_FALSE(f.emulated.empty());
        auto root = course_with(f.path, f.step);
        auto r = test_support::cudalings(
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
}  // namespace

TEST_CASE("the emulator's corpus of submissions gets its verdicts, 1 of 3", "[cli][corpus]") {
    check_corpus(0, 3);
}
TEST_CASE("the emulator's corpus of submissions gets its verdicts, 2 of 3", "[cli][corpus]") {
    check_corpus(1, 3);
}
TEST_CASE("the emulator's corpus of submissions gets its verdicts, 3 of 3", "[cli][corpus]") {
    check_corpus(2, 3);
}
