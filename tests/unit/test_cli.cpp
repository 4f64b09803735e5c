// The CLI as a learner uses it, on any machine (no GPU needed): exit codes, list, hint, and
// check's screen + compile stages.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <nlohmann/json.hpp>

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
    auto all = cudalings({"check", "--all", "--solutions", "--no-emulate", "--no-time"}, state);
    CHECK(all.code == 77);
    CHECK_THAT(all.out, ContainsSubstring("0 passed, 0 failed,"));
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
// one batch on every machine, CI included.
TEST_CASE("bad submissions that never reach a GPU get their verdicts, twice in one batch",
          "[cli]") {
    std::map<std::string, std::vector<FixtureSpec>> groups;
    for (const auto& f : all_fixtures()) {
        if (f.needs_gpu) continue;
        std::string key = f.step + "|";
        for (const auto& flag : f.flags) key += flag + " ";
        groups[key].push_back(f);
    }
    int checked = 0;
    for (const auto& [key, fixtures] : groups) {
        for (const auto& p : grade_fixtures(fixtures)) FAIL_CHECK(p);
        checked += static_cast<int>(fixtures.size());
    }
    CHECK(checked >= 15);
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
// are on a GPU.
TEST_CASE("fixtures with an emulated verdict get it under emulation", "[cli]") {
    int checked = 0;
    for (const auto& f : all_fixtures()) {
        if (f.emulated.empty()) continue;
        auto root = course_with(f.path, f.step);
        std::vector<std::string> args{
            "--root", root, "check", f.step.substr(0, f.step.size() - 3), "--emulate", "--json"};
        for (const auto& flag : f.flags)
            if (flag != "--sanitize") args.push_back(flag);
        auto r = cudalings(args);
        INFO(f.name << ": exit " << r.code << "\n"
                    << r.out.substr(0, 3000) << r.err.substr(0, 1000));
        REQUIRE(r.code != -2);
        const auto j = nlohmann::json::parse(r.out);
        CHECK(j["results"][0]["verdict"] == f.emulated);
        const bool sanitizer_reason = f.reason.find("sanitizer") != std::string::npos;
        if (!f.reason.empty() && f.emulated == f.expect && !sanitizer_reason)
            CHECK_THAT(j["results"][0]["reason"].get<std::string>(), ContainsSubstring(f.reason));
        remove_course(root);
        ++checked;
    }
    CHECK(checked >= 1);
}
