// Grading on a GPU (label gpu): samples get their verdicts on the GPU, not emulated; two workers
// on one GPU (--gpus 0,0) grade as one does; the Gradescope file carries the leaderboard of the
// timed steps. Each test skips itself, with the reason, where there is no GPU.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <filesystem>

#include "grading_support.h"

using Catch::Matchers::ContainsSubstring;
using namespace grading_test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

void require_gpu() {
    if (!test_support::gpu_present()) SKIP(test_support::gpu_absent_reason());
}

std::vector<std::string> grade_args(std::vector<std::string> args) {
    args.insert(args.begin(), "grade");
    for (const auto& a : sandbox_or_not()) args.push_back(a);
    return args;
}

}  // namespace

TEST_CASE("on the GPU: solved PASS with times, untouched WRONG, and a leaderboard", "[gpu]") {
    require_gpu();
    TempDir dir("grade_gpu");
    sample_submission(dir / "subs", "solved", "solved");
    sample_submission(dir / "subs", "untouched", "untouched");
    auto r = run_cudalings(grade_args({dir / "subs/solved", dir / "subs/untouched", "--step", "1",
                                       "--out", dir / "out", "--format", "gradescope"}));
    INFO(r.err);
    REQUIRE(r.code == 0);
    auto solved = read_json(dir / "out/solved.json");
    auto untouched = read_json(dir / "out/untouched.json");
    CHECK(solved["emulated"] == false);
    CHECK(solved["score"] == solved["max_score"]);
    CHECK(untouched["score"] == 0.0);
    for (const auto& step : solved["results"]) {
        INFO(step["step"]);
        CHECK(step["verdict"] == "PASS");
        CHECK_THAT(step["gpu"].get<std::string>(), !ContainsSubstring("emulated"));
        REQUIRE(step["timing"].is_object());
        CHECK(step["timing"]["learner"]["median_us"].get<double>() > 0);
        // Timed against the instructor's reference (the graded copy holds no solutions/).
        REQUIRE(step["timing"]["reference"].is_object());
        CHECK(step["timing"]["reference"]["median_us"].get<double>() > 0);
    }
    for (const auto& step : untouched["results"]) CHECK(step["verdict"] != "PASS");
    auto g = read_json(dir / "out/solved.gradescope.json");
    CHECK(g["leaderboard"].size() == solved["results"].size());
    std::string message;
    int valid =
        validate_json(CUDALINGS_GRADESCOPE_SCHEMA, dir / "out/solved.gradescope.json", &message);
    if (valid != 77) {
        INFO(message);
        CHECK(valid == 0);
    }
}

TEST_CASE("two workers on one GPU (--gpus 0,0) grade as one worker does", "[gpu]") {
    require_gpu();
    TempDir dir("grade_gpu_workers");
    std::vector<std::string> subs;
    for (const char* kind : {"solved", "untouched"})
        for (int i = 0; i < 2; ++i)
            subs.push_back(sample_submission(dir / "subs", kind + std::to_string(i), kind));
    std::map<std::string, std::string> env{{"CUDALINGS_SEED", "00112233445566778899aabbccddeeff"}};
    auto run = [&](const std::string& out, const std::string& gpus) {
        std::vector<std::string> args = subs;
        args.insert(args.end(), {"--step", "1/1", "--no-time", "--out", dir / out, "--gpus", gpus});
        return run_cudalings(grade_args(args), env);
    };
    auto one = run("one", "0");
    auto two = run("two", "0,0");
    INFO(one.err << "\n" << two.err);
    REQUIRE(one.code == 0);
    REQUIRE(two.code == 0);
    for (const auto& e : fs::directory_iterator(dir / "subs")) {
        const std::string name = e.path().filename().string();
        auto a = read_json(dir / ("one/" + name + ".json"));
        auto b = read_json(dir / ("two/" + name + ".json"));
        INFO(name);
        CHECK(verdicts(a) == verdicts(b));
        CHECK(a["results"][0]["seed"] == b["results"][0]["seed"]);
        CHECK(b["emulated"] == false);
        CHECK(verdicts(b)["01_vector_add/01_one_thread_per_element"] ==
              (name.rfind("solved", 0) == 0 ? "PASS" : "WRONG"));
    }
}

TEST_CASE(
    "on the GPU, every child under the sandbox's seccomp filter: nvcc and the screen, nm, "
    "the runner timed, compute-sanitizer",
    "[gpu][sandbox]") {
    require_gpu();
    std::string why;
    if (!sandbox_works(&why)) SKIP("no sandbox here: " + why);
    TempDir dir("grade_gpu_filter");
    sample_submission(dir / "subs", "solved", "solved");
    sample_submission(dir / "subs", "untouched", "untouched");
    // Timed (the GPU runner with the reference), then again with compute-sanitizer.
    for (const char* extra : {"", "--sanitize"}) {
        INFO((*extra ? extra : "timed"));
        std::vector<std::string> args{"grade",
                                      dir / "subs/solved",
                                      dir / "subs/untouched",
                                      "--step",
                                      "1/1",
                                      "--out",
                                      dir / (std::string("out") + extra)};
        if (*extra) args.push_back(extra);
        auto r = run_cudalings(args);
        INFO(r.err);
        REQUIRE(r.code == 0);
        auto solved = read_json(dir / (std::string("out") + extra + "/solved.json"));
        auto untouched = read_json(dir / (std::string("out") + extra + "/untouched.json"));
        CHECK_THAT(solved["sandbox"].get<std::string>(), ContainsSubstring("seccomp filter"));
        CHECK(solved["emulated"] == false);
        CHECK(verdicts(solved)["01_vector_add/01_one_thread_per_element"] == "PASS");
        CHECK(verdicts(untouched)["01_vector_add/01_one_thread_per_element"] != "PASS");
        if (!*extra) {
            REQUIRE(solved["results"][0]["timing"].is_object());
            CHECK(solved["results"][0]["timing"]["learner"]["median_us"].get<double>() > 0);
        }
    }
}
