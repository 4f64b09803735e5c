// Hostile submissions (tests/grading/hostile/), graded as one batch in the sandbox: each gets its
// verdict, the batch completes with a result for every one, and nothing they tried is left
// behind (no process, no file in the instructor's course or the submissions, the network
// untouched, the secret unseen). On a GPU machine the batch runs on the GPU; elsewhere it is
// emulated.
//
// These submissions signal other processes, fork, fill disks: they run only inside the grading
// sandbox. Without one this test skips, with the reason.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "cli_support.h"
#include "fixtures.h"
#include "grading_support.h"
#include "hash.h"

using Catch::Matchers::ContainsSubstring;
using namespace grading_test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

struct Hostile {
    std::string name;
    std::string expect;
    std::string reason;
    std::string setup;
    std::string in_process;  // the verdict in the runner's own process, where it differs
    // "yes": also graded with timing, on a GPU only (the reference is loaded then); "only":
    // graded with timing alone (its forgery is of the time), on a GPU only.
    std::string timed;
    // Text the reason holds under emulation only (a GPU build's host code has no line table).
    std::string reason_emulated;
    // The runner's own process under the emulator, and graded timed, where not `in_process`.
    std::string in_process_emulated, in_process_timed;
    const std::string& expected_in_process(bool graded_timed, bool gpu) const {
        if (graded_timed && !in_process_timed.empty()) return in_process_timed;
        if (!gpu && !in_process_emulated.empty()) return in_process_emulated;
        return in_process;
    }
};

// Its header, as every fixture's is read (checker/core/tools/fixtures.h).
Hostile read_hostile(const fs::path& path) {
    const auto f = cudalings::read_fixture(path.string(), CUDALINGS_SOURCE_DIR);
    Hostile h;
    h.name = f.name;
    h.expect = f.keys.expect;
    h.reason = f.keys.reason;
    h.setup = f.keys.setup;
    h.in_process = f.keys.in_process.empty() ? f.keys.expect : f.keys.in_process;
    h.timed = f.keys.timed;
    h.reason_emulated = f.keys.reason_emulated;
    h.in_process_emulated = f.keys.in_process_emulated;
    h.in_process_timed = f.keys.in_process_timed;
    return h;
}

// A listening socket, closed at the end of the scope.
struct Listener {
    int fd = -1;
    ~Listener() {
        if (fd >= 0) ::close(fd);
    }
};

// The submission folder for one hostile file, made as its `setup:` line says; the folder to
// grade (`root`, unless the setup grades another).
fs::path make_submission(const Hostile& h, const fs::path& file, const fs::path& root,
                         const fs::path& instructor) {
    if (h.setup == "link-to-solutions") {  // the folder itself is a link to the solutions
        fs::create_directories(root.parent_path());
        fs::create_directory_symlink(instructor / "solutions", root);
        return root;
    }
    if (h.setup == "inside-course") return instructor / "solutions";
    const fs::path lesson = root / "lessons/01_vector_add";
    const fs::path step = lesson / "01_one_thread_per_element.cu";
    fs::create_directories(lesson);
    fs::copy_file(instructor / "lessons/01_vector_add/vector_add.cuh", lesson / "vector_add.cuh");
    if (h.setup == "symlink-solution") {
        fs::create_symlink(instructor / "solutions/01_vector_add/01_one_thread_per_element.cu",
                           step);
        return root;
    }
    test_support::write_fixture(file.string(), step.string());
    if (h.setup == "huge") {
        std::ofstream out(step, std::ios::app);
        for (int i = 0; i < 40000; ++i) out << "// padding line of a step file far too large\n";
    } else if (h.setup == "manifest-allow-cub") {
        const fs::path part = "checks/01_vector_add/lesson.json";
        json manifest = read_json((instructor / part).string());
        manifest["steps"][0]["allow"] = json::array({"cub"});
        fs::create_directories((root / part).parent_path());
        std::ofstream(root / part) << manifest.dump(2);
    } else if (h.setup == "header-cub") {
        std::ofstream(lesson / "vector_add.cuh", std::ios::app) << "#include <cub/cub.cuh>\n";
    }
    return root;
}

// The instructor's course: a copy, so that nothing can touch the real one.
fs::path copy_course(const fs::path& dir) {
    const fs::path instructor = dir / "course";
    const fs::path source = CUDALINGS_SOURCE_DIR;
    fs::create_directories(instructor);
    fs::copy_file(source / "course.json", instructor / "course.json");
    for (const char* part : {"lessons", "solutions", "checks"})
        fs::copy(source / part, instructor / part, fs::copy_options::recursive);
    return instructor;
}

std::string tree_hash(const fs::path& root) {
    cudalings::Hasher h;
    std::vector<fs::path> files;
    for (const auto& e : fs::recursive_directory_iterator(root))
        if (e.is_regular_file() && !e.is_symlink()) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) h.add(f.string()).add_file(f.string());
    return h.hex();
}

}  // namespace

TEST_CASE("a batch of hostile submissions: each gets its verdict, the batch completes",
          "[grade][hostile]") {
    std::string why;
    if (!sandbox_works(&why)) SKIP("hostile submissions run only inside the sandbox: " + why);
    TempDir temp("hostile");
    const fs::path dir = temp.path();
    const fs::path instructor = copy_course(dir);
    const fs::path source = CUDALINGS_SOURCE_DIR;

    std::vector<Hostile> hostile;
    std::map<std::string, std::string> graded;  // the folder graded -> the hostile file's name
    std::vector<std::string> args{"--root", instructor.string(), "grade"};
    for (const auto& e : fs::directory_iterator(CUDALINGS_HOSTILE_DIR)) {
        if (e.path().extension() != ".cu") continue;
        hostile.push_back(read_hostile(e.path()));
        const fs::path root = dir / "subs" / hostile.back().name;
        const fs::path folder = make_submission(hostile.back(), e.path(), root, instructor);
        graded[folder.string()] = hostile.back().name;
        args.push_back(folder.string());
    }
    REQUIRE(hostile.size() >= 30);
    const std::string course_before = tree_hash(instructor);
    const std::string subs_before = tree_hash(dir / "subs");

    // What network_socket tries to reach: a TCP port and an abstract Unix socket, here.
    Listener tcp, local;
    tcp.fd = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(tcp.fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in at{};
    at.sin_family = AF_INET;
    at.sin_port = htons(47613);
    at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(tcp.fd, reinterpret_cast<sockaddr*>(&at), sizeof at) == 0);
    REQUIRE(::listen(tcp.fd, 16) == 0);
    local.fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un name{};
    name.sun_family = AF_UNIX;
    const char abstract[] = "cudalings-hostile-47613";
    std::memcpy(name.sun_path + 1, abstract, sizeof abstract - 1);
    REQUIRE(::bind(local.fd, reinterpret_cast<sockaddr*>(&name),
                   static_cast<socklen_t>(sizeof(sa_family_t) + 1 + sizeof abstract - 1)) == 0);
    REQUIRE(::listen(local.fd, 16) == 0);

    const double compile_timeout = 20;
    args.insert(args.end(), {"--step", "1/1", "--no-time", "--out", (dir / "out").string(),
                             "--compile-timeout", "20", "--case-timeout", "10", "--scratch-mb",
                             "64", "--jobs", "2", "--format", "gradescope"});
    // The secret is in the grader's environment, where peek_secret looks for it, and so is a
    // token proc1_environ looks for through the sandbox's PID 1.
    const std::string token = "tok-91d2c6e4b7a3-not-for-students";
    // The grader's own temporary folder and home, empty: a batch may use the first for its work
    // folder, and must leave both as it found them.
    const fs::path grader_tmp = dir / "grader-tmp", grader_home = dir / "grader-home";
    fs::create_directories(grader_tmp);
    fs::create_directories(grader_home);
    auto r = run_cudalings(args,
                           {{"CUDALINGS_SEED", "00112233445566778899aabbccddeeff"},
                            {"CUDALINGS_HOSTILE_GRADER_TOKEN", token},
                            {"TMPDIR", grader_tmp.string()},
                            {"HOME", grader_home.string()}},
                           instructor.string());
    {
        INFO("exit " << r.code << "\n" << r.err.substr(0, 6000));
        CHECK(r.code == 0);  // grading completed, whatever the students did
    }

    // Each result file, by the folder it graded (the summary names them).
    std::map<std::string, std::string> files;
    json summary;
    REQUIRE_NOTHROW(summary = read_json((dir / "out/summary.json").string()));
    for (const auto& line : summary["results"])
        if (graded.count(line["submission"].get<std::string>()))
            files[graded[line["submission"].get<std::string>()]] = line["file"];
    for (const auto& h : hostile) {
        INFO(h.name);
        REQUIRE(files.count(h.name) == 1);
        json result;
        REQUIRE_NOTHROW(result = read_json((dir / "out" / files[h.name]).string()));
        CHECK_FALSE(result.contains("error"));
        CHECK(result["sandbox"].is_string());
        REQUIRE(result["results"].size() == 1);
        const auto& step = result["results"][0];
        // One short line first: where CI shows only the head of a failure, this is it.
        INFO(h.name << ": " << step.value("verdict", "?") << ": "
                    << step.value("reason", "").substr(0, 300));
        INFO(step.dump().substr(0, 1500));
        CHECK(step["verdict"] == h.expect);
        if (!h.reason.empty())
            CHECK_THAT(step["reason"].get<std::string>(), ContainsSubstring(h.reason));
        // Bytes that are not UTF-8 reach the result as U+FFFD, and the result is written.
        if (h.name == "latin1_compile_error")
            CHECK(step.dump().find("caf\xEF\xBF\xBD") != std::string::npos);
        if (h.name == "latin1_runtime_output" && step.dump().find("le caf") != std::string::npos)
            CHECK(step.dump().find("le caf\xEF\xBF\xBD") != std::string::npos);
        if (h.name == "include_devzero")
            CHECK(result["seconds"].get<double>() < compile_timeout + 10);
    }
    // No byte of the grader's environment in any output: the token, and the variable's name.
    for (const auto& e : fs::recursive_directory_iterator(dir / "out")) {
        if (!e.is_regular_file()) continue;
        const std::string text = read_text(e.path().string());
        INFO(e.path());
        CHECK(text.find(token) == std::string::npos);
        CHECK(text.find("CUDALINGS_HOSTILE_GRADER_TOKEN") == std::string::npos);
    }
    CHECK(r.out.find(token) == std::string::npos);
    CHECK(r.err.find(token) == std::string::npos);
    // Nothing outlived its step.
    for (const char* process : {"cudalings-dmn", "cudalings-frk", "cudalings-olv"}) {
        auto left = processes_named(process);
        for (pid_t pid : left) ::kill(pid, SIGKILL);
        CHECK(left.empty());
    }
    // Nothing was written into the instructor's course, the submissions, or the checker's tree,
    // and nothing was left in the grader's temporary folder or home.
    CHECK(tree_hash(instructor) == course_before);
    CHECK(tree_hash(dir / "subs") == subs_before);
    for (const fs::path& folder : {grader_tmp, grader_home}) {
        std::vector<std::string> left;
        for (const auto& e : fs::recursive_directory_iterator(folder))
            left.push_back(e.path().string());
        INFO(folder << " holds " << left.size()
                    << " entries, the first: " << (left.empty() ? "" : left.front()));
        CHECK(left.empty());
    }
    const fs::path stray = source / ".cudalings-hostile-was-here";
    CHECK_FALSE(fs::exists(stray));
    fs::remove(stray);
}

// Submissions that go for the judge (tests/grading/hostile_split/): one searches the process it
// runs in for what would let it speak for the judge; others end their process while it loads or
// at its exit, go for the judge's /proc files and signal it, or compute on the CPU through the
// device pointers, or look for the reference solution in their process to call it (`timed:
// yes`: on a GPU also graded with timing, when the reference is loaded). In the runner's own
// process (`grade --in-process`) the forger finds what it looks for and forges its PASS
// (`in-process:`), which shows the forgery works. Graded as `grade` does by default, through the
// judge split, every one gets its own verdict (and `reason:`), never PASS, never INTERNAL_ERROR.
// One forges only its time (`timed: only`): graded timed alone, on a GPU.
namespace {
// Grades the forgers of tests/grading/hostile_split/ in one batch per mode, untimed (every file
// but the `timed: only` ones) or timed (the `timed: yes` and `timed: only` ones), each in the
// runner's own process and through the judge split.
void grade_forgers(bool timed) {
    std::string why;
    if (!sandbox_works(&why)) SKIP("hostile submissions run only inside the sandbox: " + why);
    TempDir temp("forgers");
    const fs::path dir = temp.path();
    const fs::path instructor = copy_course(dir);
    std::vector<Hostile> forgers;
    std::vector<std::string> folders;
    for (const auto& e : fs::directory_iterator(CUDALINGS_HOSTILE_SPLIT_DIR)) {
        if (e.path().extension() != ".cu") continue;
        forgers.push_back(read_hostile(e.path()));
        folders.push_back(make_submission(forgers.back(), e.path(),
                                          dir / "subs" / forgers.back().name, instructor)
                              .string());
    }
    REQUIRE_FALSE(forgers.empty());
    const bool gpu = test_support::gpu_present();
    std::vector<std::string> batch;
    for (std::size_t i = 0; i < forgers.size(); ++i)
        if (timed ? forgers[i].timed == "yes" || forgers[i].timed == "only"
                  : forgers[i].timed != "only")
            batch.push_back(folders[i]);
    REQUIRE_FALSE(batch.empty());
    // Timed, the batch holds an honest submission too (the step's solution): the judge's clock
    // must tell the forgers from it, not suspect every step (on the H100, 2026-12-07, a canary
    // that counted the judge's own input refresh made every honest step SUSPECT).
    const fs::path honest = dir / "subs" / "honest";
    if (timed) {
        const fs::path lesson = honest / "lessons/01_vector_add";
        fs::create_directories(lesson);
        fs::copy_file(instructor / "lessons/01_vector_add/vector_add.cuh",
                      lesson / "vector_add.cuh");
        fs::copy_file(instructor / "solutions/01_vector_add/01_one_thread_per_element.cu",
                      lesson / "01_one_thread_per_element.cu");
        batch.push_back(honest.string());
    }
    {
        for (const bool split : {false, true}) {
            INFO((split ? "through the judge split" : "in the runner's process")
                 << (timed ? ", timed" : ""));
            const fs::path out =
                dir / ((split ? "out-split" : "out-runner") + std::string(timed ? "-timed" : ""));
            std::vector<std::string> args{"--root", instructor.string(), "grade"};
            args.insert(args.end(), batch.begin(), batch.end());
            args.insert(args.end(), {"--step", "1/1", "--out", out.string(), "--compile-timeout",
                                     "60", "--case-timeout", "10", "--format", "gradescope"});
            // Timed, one at a time: two workers timing on one GPU make each other SUSPECT (on
            // the H100, 2026-12-07, an honest sum beside the spinner below was).
            args.insert(args.end(), {"--jobs", timed ? "1" : "2"});
            if (!timed) args.push_back("--no-time");
            if (!split) args.push_back("--in-process");
            auto r = run_cudalings(args, {}, instructor.string());
            INFO("exit " << r.code << "\n" << r.err.substr(0, 4000));
            CHECK(r.code == 0);
            json summary;
            REQUIRE_NOTHROW(summary = read_json((out / "summary.json").string()));
            REQUIRE(summary["results"].size() == batch.size());
            for (const auto& line : summary["results"]) {
                const std::string folder = line["submission"].get<std::string>();
                if (folder == honest.string()) {
                    json result;
                    REQUIRE_NOTHROW(
                        result = read_json((out / line["file"].get<std::string>()).string()));
                    REQUIRE(result["results"].size() == 1);
                    const auto& step = result["results"][0];
                    INFO("the honest solution: " << step.dump().substr(0, 3000));
                    CHECK(step["verdict"] == "PASS");
                    continue;
                }
                const auto at = std::find(folders.begin(), folders.end(), folder);
                REQUIRE(at != folders.end());
                const Hostile& h = forgers[static_cast<std::size_t>(at - folders.begin())];
                INFO(h.name);
                json result;
                REQUIRE_NOTHROW(result =
                                    read_json((out / line["file"].get<std::string>()).string()));
                REQUIRE(result["results"].size() == 1);
                const auto& step = result["results"][0];
                INFO(step.dump().substr(0, 1500));
                // A timed failure is about its figures (the clocks, the canary), which come
                // after the cases in the step's record.
                const std::string timings =
                    step.contains("timings") ? step["timings"].dump().substr(0, 3000) : "";
                INFO("timings: " << timings);
                if (split) {
                    CHECK(step["verdict"] == h.expect);
                    CHECK(step["verdict"] != "PASS");
                    CHECK(step["verdict"] != "INTERNAL_ERROR");
                    if (!h.reason.empty())
                        CHECK_THAT(step["reason"].get<std::string>(), ContainsSubstring(h.reason));
                    if (!gpu && !h.reason_emulated.empty())
                        CHECK_THAT(step["reason"].get<std::string>(),
                                   ContainsSubstring(h.reason_emulated));
                } else {
                    CHECK(step["verdict"] == h.expected_in_process(timed, gpu));
                }
            }
        }
    }
}
}  // namespace

TEST_CASE(
    "submissions that go for the judge: a forger believed in the runner's process, none "
    "passes through the judge split",
    "[grade][hostile]") {
    grade_forgers(false);
}

// The same, graded with timing, one at a time (a GPU to itself: ctest runs this test under the
// GPU's lock, tests/grading/CMakeLists.txt).
TEST_CASE("submissions that go for the judge, timed: none passes through the judge split",
          "[grade][hostile][timed]") {
    if (!test_support::gpu_present()) SKIP("timing needs a GPU");
    grade_forgers(true);
}
