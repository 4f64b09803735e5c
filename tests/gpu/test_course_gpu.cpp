// GPU tests (label `gpu`): the maintainer's proof that the course is sound on real hardware.
// Every solution step passes, every skeleton step fails, every bad-submission fixture gets
// its verdict. Each test skips itself, with the reason, where there is no GPU.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>

#include "cli_support.h"

using namespace test_support;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {
void require_gpu() {
    if (!gpu_present()) SKIP(gpu_absent_reason());
}

json check_json(const std::vector<std::string>& args, const std::string& state = fresh_state_dir()) {
    auto r = cudalings(args, state);
    INFO("exit " << r.code << "\nstdout:\n" << r.out.substr(0, 4000) << "\nstderr:\n" << r.err.substr(0, 2000));
    REQUIRE(r.code != -2);
    return json::parse(r.out);
}
}  // namespace

TEST_CASE("every solution step passes on the GPU, with timing", "[gpu]") {
    require_gpu();
    auto j = check_json({"check", "--all", "--solutions", "--json"});
    REQUIRE(j["results"].size() > 0);
    for (const auto& r : j["results"]) {
        INFO(r["step"].get<std::string>() << ": " << r["verdict"].get<std::string>() << " — "
                                          << r["reason"].get<std::string>());
        CHECK(r["verdict"] == "PASS");
        if (r["timing"].is_object()) {
            CHECK(r["timing"]["learner"]["median_us"].get<double>() > 0);
            CHECK(r["timing"]["learner"]["samples"].get<int>() >= 15);
        }
    }
    CHECK(j["failed"] == 0);
}

TEST_CASE("every skeleton step compiles, runs and fails on the GPU", "[gpu]") {
    require_gpu();
    auto j = check_json({"check", "--all", "--json", "--no-time"});
    REQUIRE(j["results"].size() > 0);
    for (const auto& r : j["results"]) {
        std::string verdict = r["verdict"];
        INFO(r["step"].get<std::string>() << ": " << verdict << " — " << r["reason"].get<std::string>());
        CHECK(verdict != "PASS");
        CHECK(verdict != "SKIPPED");
        CHECK(verdict != "COMPILE_ERROR");
        CHECK(verdict != "INTERNAL_ERROR");
    }
    CHECK(j["passed"] == 0);
}

TEST_CASE("every bad submission fixture gets its expected verdict", "[gpu]") {
    require_gpu();
    fs::path fixtures = fs::path(CUDALINGS_SOURCE_DIR) / "tests" / "fixtures";
    int checked = 0;
    for (const auto& lesson : fs::directory_iterator(fixtures)) {
        for (const auto& file : fs::directory_iterator(lesson.path())) {
            if (file.path().extension() != ".cu") continue;
            auto spec = read_fixture(file.path().string());
            REQUIRE_FALSE(spec.expect.empty());
            auto root = course_with(file.path().string(), spec.step);
            std::string step = spec.step.substr(0, spec.step.size() - 3);  // drop .cu
            auto j = check_json({"--root", root, "check", step, "--json", "--no-time"});
            const auto& r = j["results"][0];
            INFO(file.path().filename().string() << ": got " << r["verdict"].get<std::string>()
                                                 << " (" << r["reason"].get<std::string>() << ")");
            CHECK(r["verdict"] == spec.expect);
            remove_course(root);
            ++checked;
        }
    }
    CHECK(checked >= 5);
}
