// GPU tests (label `gpu`): the maintainer's proof that the course is sound on real hardware.
// Every solution step passes, every skeleton step fails, every bad-submission fixture gets
// its verdict. Each test skips itself, with the reason, where there is no GPU.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "cli_support.h"

using namespace test_support;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {
void require_gpu() {
    if (!gpu_present()) SKIP(gpu_absent_reason());
}

json check_json(const std::vector<std::string>& args,
                const std::string& state = fresh_state_dir()) {
    auto r = cudalings(args, state);
    INFO("exit " << r.code << "\nstdout:\n"
                 << r.out.substr(0, 4000) << "\nstderr:\n"
                 << r.err.substr(0, 2000));
    REQUIRE(r.code != -2);
    return json::parse(r.out);
}

// Whether ncu is here, as `cudalings doctor` (the same lookup as profile's) sees it.
void require_ncu() {
    const json doctor = check_json({"doctor", "--json"});
    bool have_ncu = false;
    for (const auto& c : doctor.at("checks"))
        if (c.at("topic") == "ncu") have_ncu = c.at("status") == "ok";
    if (!have_ncu) SKIP("no Nsight Compute (ncu) on this machine (CUDALINGS_NCU names one)");
}
}  // namespace

TEST_CASE("every solution step passes on the GPU, with timing", "[gpu]") {
    require_gpu();
    auto j = check_json({"check", "--all", "--solutions", "--json"});
    REQUIRE(j["results"].size() > 0);
    for (const auto& r : j["results"]) {
        INFO(r["step"].get<std::string>()
             << ": " << r["verdict"].get<std::string>() << " — " << r["reason"].get<std::string>());
        CHECK(r["verdict"] == "PASS");
        if (r["timing"].is_object()) {
            CHECK(r["timing"]["learner"]["median_us"].get<double>() > 0);
            CHECK(r["timing"]["learner"]["samples"].get<int>() >= 10);
        }
    }
    CHECK(j["failed"] == 0);
}

// The lesson kit's promise on a GPU: a lesson that plugs in through its own folders
// (tests/throwaway; the CPU side is tests/unit/test_lesson_kit.cpp) is checked and timed like any.
TEST_CASE("a throwaway lesson is checked and timed on the GPU like any lesson", "[gpu]") {
    require_gpu();
    const fs::path root = fs::path(temp_path("throwaway_course_gpu"));
    fs::copy(fs::path(CUDALINGS_SOURCE_DIR) / "tests" / "throwaway", root,
             fs::copy_options::recursive);
    auto timed = check_json({"--root", root.string(), "check", "90/1", "--solutions", "--json"});
    CHECK(timed["results"][0]["verdict"] == "PASS");
    CHECK(timed["results"][0]["timings"].size() == 1);
    auto skeleton = check_json({"--root", root.string(), "check", "90/1", "--no-time", "--json"});
    CHECK(skeleton["results"][0]["verdict"] == "WRONG");
    fs::remove_all(root);
}

// Untimed, so the lessons are checked side by side (4 at a time, each in its own state folder):
// their builds and hazard passes overlap, and kernels that only need to be right may share the
// GPU. One lesson after another took 211 s on the H100; most of it was nvcc and the CPU's hazard
// pass, one step at a time.
TEST_CASE("every skeleton step compiles, runs and fails on the GPU", "[gpu]") {
    require_gpu();
    std::ifstream manifest(fs::path(CUDALINGS_SOURCE_DIR) / "course.json");
    const std::vector<std::string> lessons = json::parse(manifest).at("lessons");
    REQUIRE(!lessons.empty());
    std::vector<Run> runs(lessons.size());
    std::atomic<size_t> next{0};
    auto worker = [&] {
        for (size_t i; (i = next++) < lessons.size();)
            runs[i] = cudalings({"check", lessons[i], "--json", "--no-time"});
    };
    std::vector<std::thread> workers;
    for (unsigned w = 0; w < 4; ++w) workers.emplace_back(worker);
    for (auto& t : workers) t.join();
    size_t steps = 0;
    for (size_t i = 0; i < lessons.size(); ++i) {
        INFO(lessons[i] << ": exit " << runs[i].code << "\nstderr:\n" << runs[i].err.substr(0, 2000));
        REQUIRE(runs[i].code != -2);
        const json j = json::parse(runs[i].out);
        REQUIRE(j["results"].size() > 0);
        steps += j["results"].size();
        for (const auto& r : j["results"]) {
            std::string verdict = r["verdict"];
            INFO(r["step"].get<std::string>()
                 << ": " << verdict << " — " << r["reason"].get<std::string>());
            CHECK(verdict != "PASS");
            CHECK(verdict != "SKIPPED");
            CHECK(verdict != "COMPILE_ERROR");
            CHECK(verdict != "INTERNAL_ERROR");
        }
        CHECK(j["passed"] == 0);
    }
    INFO(steps << " skeleton steps");
    CHECK(steps >= 50);
}

// Fixtures are graded in batches (one per step, flags and timing), each batch twice in a row:
// the same verdict both times, and no checker crash or hang. Untimed batches run a few at a time
// (the GPU is shared the way a class's grading shares it, and the hang fixtures wait out their
// timeouts side by side); timed batches run alone afterwards, so nothing else is on the GPU while
// they are measured.
TEST_CASE("every bad submission fixture gets its expected verdict, twice in one batch", "[gpu]") {
    require_gpu();
    std::map<std::string, std::vector<FixtureSpec>> groups;
    // CUDALINGS_FIXTURE_STEPS="08_transpose/03,09_stencil": only the batches of the steps whose
    // path starts with one of these (for a maintainer re-running a few on a GPU, or the suite in
    // two calls: bench/gpu_session.sh's FIXTURE_PART; the full suite runs them all).
    std::vector<std::string> only;
    if (const char* steps = std::getenv("CUDALINGS_FIXTURE_STEPS")) {
        std::stringstream list(steps);
        for (std::string s; std::getline(list, s, ',');)
            if (!s.empty()) only.push_back(s);
    }
    for (const auto& f : all_fixtures()) {
        if (!f.needs_gpu) continue;
        if (!only.empty() && std::none_of(only.begin(), only.end(), [&](const std::string& s) {
                return f.step.rfind(s, 0) == 0;
            }))
            continue;
        std::string key = std::string(f.timing ? "2" : "1") + "|" + f.step + "|";
        for (const auto& flag : f.flags) key += flag + " ";
        groups[key].push_back(f);
    }
    // Untimed groups are cut into batches of at most 12, so that the biggest group (lesson 01's
    // first step: 41 fixtures, 205-225 s in one batch on the H200) does not outlast the rest.
    std::vector<std::vector<FixtureSpec>> chunks;
    std::vector<const std::vector<FixtureSpec>*> untimed, timed;
    for (const auto& [key, fixtures] : groups) {
        if (fixtures.front().timing) {
            timed.push_back(&fixtures);
            continue;
        }
        const size_t parts = (fixtures.size() + 11) / 12;
        for (size_t p = 0; p < parts; ++p)
            chunks.emplace_back(fixtures.begin() + p * fixtures.size() / parts,
                                fixtures.begin() + (p + 1) * fixtures.size() / parts);
    }
    for (const auto& chunk : chunks) untimed.push_back(&chunk);
    // The longest batches first, each with a few workers on the GPU (the hangs wait out their
    // timeouts side by side): those under compute-sanitizer (08/03's two fixtures took 295 s on
    // the H200, and started last when batches went by size alone), then the biggest.
    auto sanitized = [](const std::vector<FixtureSpec>* batch) {
        const auto& flags = batch->front().flags;
        return std::find(flags.begin(), flags.end(), "--sanitize") != flags.end();
    };
    std::stable_sort(untimed.begin(), untimed.end(), [&](auto* a, auto* b) {
        if (sanitized(a) != sanitized(b)) return sanitized(a);
        return a->size() > b->size();
    });

    std::mutex progress;
    auto grade = [&](const std::vector<FixtureSpec>& fixtures, std::vector<std::string> extra) {
        FixtureBatch batch = grade_fixture_batch(fixtures, extra);
        std::lock_guard<std::mutex> lock(progress);
        std::cerr << "fixture batch " << fixtures.front().step << " (" << fixtures.size()
                  << " fixtures" << (fixtures.front().timing ? ", timed" : "")
                  << "): " << batch.seconds << " s, " << batch.problems.size() << " problems"
                  << std::endl;
        for (const auto& p : batch.problems) std::cerr << "  " << p.substr(0, 400) << std::endl;
        return batch;
    };
    std::vector<FixtureBatch> results(untimed.size());
    std::atomic<size_t> next{0};
    auto worker = [&] {
        for (size_t i; (i = next++) < untimed.size();)
            results[i] = grade(*untimed[i], untimed[i]->size() >= 3
                                                ? std::vector<std::string>{"--gpus", "0,0,0"}
                                                : std::vector<std::string>{});
    };
    const unsigned side_by_side = std::clamp(std::thread::hardware_concurrency() / 4, 1u, 4u);
    std::vector<std::thread> workers;
    for (unsigned w = 0; w < side_by_side; ++w) workers.emplace_back(worker);
    for (auto& t : workers) t.join();
    for (const auto* fixtures : timed) results.push_back(grade(*fixtures, {}));

    for (const auto& batch : results)
        if (!batch.no_sandbox.empty()) SKIP(batch.no_sandbox);
    for (const auto& batch : results)
        for (const auto& p : batch.problems) FAIL_CHECK(p);
    size_t checked = 0;
    for (const auto& [key, fixtures] : groups) checked += fixtures.size();
    INFO(groups.size() << " batches, " << side_by_side << " untimed ones side by side");
    CHECK(checked >= (only.empty() ? 40u : 1u));
}

// `cudalings profile` for real: ncu (--clock-control none) on one timed call of lesson 01's
// float4 solution, a kernel that streams memory, so DRAM is busy for most of it.
TEST_CASE("profile: ncu on one timed call of 01_vector_add/03_float4 sees a memory-bound kernel",
          "[gpu][profile]") {
    require_gpu();
    require_ncu();
    auto r = cudalings({"profile", "01_vector_add/03_float4", "--solutions", "--json"});
    INFO("exit " << r.code << "\nstdout:\n"
                 << r.out.substr(0, 6000) << "\nstderr:\n"
                 << r.err.substr(0, 3000));
    if (r.code == 78 && r.out.find("profile-permission") != std::string::npos)
        SKIP("ncu may not read this GPU's counters here (ERR_NVGPUCTRPERM)");
    REQUIRE(r.code == 0);
    const json j = json::parse(r.out);
    CHECK(j.at("status") == "ok");
    CHECK(j.at("verified") == true);
    REQUIRE(j.at("kernels").size() >= 1);
    for (const auto& k : j["kernels"]) {
        INFO(k.dump(2));
        REQUIRE(k.at("duration_ns").is_number());
        CHECK(k["duration_ns"].get<double>() > 0);
        REQUIRE(k.at("dram_throughput_pct").is_number());
        CHECK(k["dram_throughput_pct"].get<double>() > 50);
        REQUIRE(k.at("dram_bytes_per_second").is_number());
        CHECK(k["dram_bytes_per_second"].get<double>() > 0);
        REQUIRE(k.at("achieved_occupancy_pct").is_number());
        // the lesson's chosen metrics came back as numbers
        for (const auto& m : k.at("metrics")) {
            INFO(m.at("name"));
            CHECK(m.at("value").is_number());
        }
    }
}

// Every lesson's chosen metrics (lesson.json "profile") are ones this ncu knows: the last step of
// each lesson, profiled with its reference solution, gives a number for each of them.
TEST_CASE("profile: every lesson's chosen metrics come back from ncu", "[gpu][profile]") {
    require_gpu();
    require_ncu();
    std::map<std::string, std::string> last_step;  // lesson -> its last step
    const json list =
        check_json({"list", "--json"});  // kept: a range over a temporary's member dangles
    for (const auto& s : list.at("steps")) {
        const std::string step = s.at("step");
        last_step[step.substr(0, step.find('/'))] = step;
    }
    REQUIRE(last_step.size() >= 9);
    for (const auto& [lesson, step] : last_step) {
        auto r = cudalings({"profile", step, "--solutions", "--json"});
        INFO(step << ": exit " << r.code << "\nstdout:\n"
                  << r.out.substr(0, 6000) << "\nstderr:\n"
                  << r.err.substr(0, 3000));
        if (r.code == 78 && r.out.find("profile-permission") != std::string::npos)
            SKIP("ncu may not read this GPU's counters here (ERR_NVGPUCTRPERM)");
        REQUIRE(r.code == 0);
        const json j = json::parse(r.out);
        CHECK(j.at("verified") == true);
        CHECK(j.at("kernels").size() >= 1);
        for (const auto& k : j.at("kernels")) {
            CHECK(k.at("duration_ns").is_number());
            for (const auto& m : k.at("metrics")) {
                INFO(k.at("name") << ": " << m.at("name") << " = " << m.at("text"));
                CHECK(m.at("value").is_number());
            }
        }
    }
}
