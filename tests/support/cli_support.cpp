#include "cli_support.h"

#include <unistd.h>

#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "fixtures.h"
#include "supervise.h"

namespace fs = std::filesystem;
using cudalings::ChildOptions;
using cudalings::run_supervised;

namespace test_support {

std::string temp_path(const std::string& what) {
    static std::atomic<int> counter{0};
    const fs::path path =
        fs::temp_directory_path() /
        ("cudalings_" + what + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path);
    return path.string();
}

std::string fresh_state_dir() { return temp_path("test_state"); }

Run cudalings(std::vector<std::string> args, const std::string& state, const std::string& cwd) {
    args.insert(args.begin(), CUDALINGS_BINARY);
    ChildOptions o;
    o.wall_seconds = 600;
    o.output_cap = 4 << 20;
    o.working_dir = cwd;
    o.env["CUDALINGS_STATE_DIR"] = state;
    o.env["NO_COLOR"] = "1";
    auto r = run_supervised(args, o);
    if (!r.started) throw std::runtime_error("cannot run cudalings: " + r.start_error);
    return {r.timed_out ? -2 : r.exit_code, r.out.head, r.err.head};
}

std::string course_with(const std::string& fixture, const std::string& step_file) {
    const fs::path root = temp_path("test_course");
    fs::path src = CUDALINGS_SOURCE_DIR;
    fs::create_directories(root);
    fs::copy(src / "course.json", root / "course.json");
    fs::copy(src / "lessons", root / "lessons", fs::copy_options::recursive);
    fs::create_directory_symlink(src / "checks", root / "checks");
    write_fixture(fixture, (root / "lessons" / step_file).string());
    return root.string();
}

std::string fixture_text(const std::string& path) {
    const auto fixture = cudalings::read_fixture(path);
    std::string text, why;
    if (!cudalings::materialise(fixture, "", &text, &why))
        throw std::runtime_error(path + ": " + why);
    return text;
}

void write_fixture(const std::string& fixture, const std::string& dest) {
    const std::string text = fixture_text(fixture);
    std::error_code ec;
    fs::remove(dest, ec);  // a copy's file may be a link into the course: never write through it
    std::ofstream out(dest, std::ios::binary);
    out << text;
    if (!out.flush()) throw std::runtime_error("cannot write " + dest);
}

void remove_course(const std::string& root) {
    std::error_code ec;
    fs::remove_all(root, ec);
}

namespace {
std::string& probe_output() {
    static std::string output;
    static bool probed = false;
    if (!probed) {
        ChildOptions o;
        o.result_channel = true;
        o.wall_seconds = 60;
        auto r = run_supervised({CUDALINGS_RUNNER, "probe"}, o);
        output = r.channel.head;
        probed = true;
    }
    return output;
}
}  // namespace

bool gpu_present() {
    const std::string& p = probe_output();
    return p.find("\"gpus\":") != std::string::npos && p.find("\"gpus\":0") == std::string::npos;
}

std::string gpu_absent_reason() {
    const std::string& p = probe_output();
    auto at = p.find("\"message\":\"");
    if (at == std::string::npos) return "no GPU found";
    auto end = p.find('"', at + 11);
    return "no GPU: " + p.substr(at + 11, end - at - 11);
}

FixtureSpec read_fixture(const std::string& path) {
    // The one reader (checker/core/tools/fixtures.h); the default step from the course the file
    // lies in.
    std::string root = cudalings::fixture_course_root(path);
    if (root.empty()) root = CUDALINGS_SOURCE_DIR;
    const auto f = cudalings::read_fixture(path, root);
    FixtureSpec spec;
    spec.path = path;
    spec.name = f.name;
    spec.expect = f.keys.expect;
    spec.emulated = f.keys.emulated;
    spec.reason = f.keys.reason;
    spec.emulated_detail = f.keys.emulated_detail;
    spec.emulated_advice = f.keys.emulated_advice;
    spec.step = f.keys.step;
    spec.flags = f.keys.flags;
    spec.needs_gpu = f.keys.needs != "cpu";
    spec.timing = f.keys.timing == "yes";
    return spec;
}

std::vector<FixtureSpec> all_fixtures() {
    std::vector<FixtureSpec> out;
    for (const auto& file :
         cudalings::fixture_files(CUDALINGS_SOURCE_DIR, cudalings::FixtureKind::fixture))
        out.push_back(read_fixture(file));
    std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.path < b.path; });
    return out;
}

std::string make_submission(const FixtureSpec& fixture, const std::string& parent) {
    fs::path src = CUDALINGS_SOURCE_DIR;
    fs::path root = fs::path(parent) / fixture.name;
    fs::remove_all(root);
    fs::create_directories(root);
    fs::copy(src / "course.json", root / "course.json");
    fs::copy(src / "lessons", root / "lessons", fs::copy_options::recursive);
    fs::create_directory_symlink(src / "solutions", root / "solutions");
    fs::create_directory_symlink(src / "checker", root / "checker");
    fs::create_directory_symlink(src / "checks", root / "checks");
    write_fixture(fixture.path, (root / "lessons" / fixture.step).string());
    return root.string();
}

FixtureBatch grade_fixture_batch(const std::vector<FixtureSpec>& fixtures,
                                 const std::vector<std::string>& extra_args) {
    FixtureBatch batch;
    std::vector<std::string>& problems = batch.problems;
    if (fixtures.empty()) return batch;
    const fs::path parent = temp_path("fixtures");
    fs::path out = parent / "results";
    std::vector<std::string> args{"grade"};
    for (const auto& f : fixtures)
        args.push_back(make_submission(f, (parent / "submissions").string()));
    std::string step = fixtures.front().step.substr(0, fixtures.front().step.size() - 3);
    // A hang is told apart after 8 s without progress: enough for any fixture's real work, unless
    // the fixture's own flags give it longer (grade refuses a second --case-timeout).
    args.insert(args.end(), {"--step", step, "--repeat", "2", "--out", out.string()});
    const auto& flags = fixtures.front().flags;
    if (std::find(flags.begin(), flags.end(), "--case-timeout") == flags.end())
        args.insert(args.end(), {"--case-timeout", "8"});
    if (!fixtures.front().timing) args.push_back("--no-time");
    for (const auto& flag : fixtures.front().flags) args.push_back(flag);
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    const auto start = std::chrono::steady_clock::now();
    Run r = cudalings(args);
    batch.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (r.code == -2) problems.push_back("the batch did not finish (the checker hung)");
    // grade's exit code 4: no sandbox works here (no bwrap, or no user namespaces), nothing graded.
    if (r.code == 4) {
        batch.no_sandbox = "grade needs its sandbox and none works here: " + r.err.substr(0, 300);
        std::error_code ec;
        fs::remove_all(parent, ec);
        return batch;
    }
    for (const auto& f : fixtures) {
        for (int round = 1; round <= 2; ++round) {
            fs::path file = out / (f.name + ".round" + std::to_string(round) + ".json");
            std::ifstream in(file);
            if (!in) {
                problems.push_back(f.name + ": no result file for round " + std::to_string(round));
                continue;
            }
            std::string verdict = "(none)", report;
            try {
                auto j = nlohmann::json::parse(in);
                if (j.contains("results") && !j["results"].empty()) {
                    verdict = j["results"][0].value("verdict", "(none)");
                    report = j["results"][0].dump();
                } else {
                    report = j.dump();
                }
            } catch (const std::exception& e) {
                verdict = std::string("(unreadable: ") + e.what() + ")";
            }
            if (verdict != f.expect)
                problems.push_back(f.name + " round " + std::to_string(round) + ": expected " +
                                   f.expect + ", got " + verdict + " — " + report.substr(0, 600));
            else if (!f.reason.empty() &&
                     report.find(nlohmann::json(f.reason).dump().substr(
                         1, nlohmann::json(f.reason).dump().size() - 2)) == std::string::npos)
                problems.push_back(f.name + " round " + std::to_string(round) + ": " + f.expect +
                                   " but the report does not mention \"" + f.reason +
                                   "\": " + report.substr(0, 800));
        }
    }
    std::error_code ec;
    fs::remove_all(parent, ec);
    return batch;
}

std::vector<std::string> grade_fixtures(const std::vector<FixtureSpec>& fixtures) {
    FixtureBatch batch = grade_fixture_batch(fixtures);
    if (!batch.no_sandbox.empty()) SKIP(batch.no_sandbox);
    return batch.problems;
}

}  // namespace test_support
