// `cudalings watch`: a save is noticed and checked again within a second of the check's own
// time, whether the editor writes the file in place or writes a new file and renames it over
// the old one; a pass names the reference to compare with and moves on to the next step of the
// same lesson. Driven through --json events on a pipe.
#include <catch2/catch_test_macros.hpp>

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "flow_support.h"
#include "watch.h"

extern char** environ;

namespace {

double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

class Watch {
  public:
    Watch(const std::string& root, const std::string& state, const std::string& step = "1/1") {
        int out[2], in[2];
        REQUIRE(::pipe(out) == 0);
        REQUIRE(::pipe(in) == 0);
        std::vector<std::string> args{CUDALINGS_BINARY, "--root", root,       "--json",
                                      "watch",          step,     "--emulate"};
        std::vector<char*> argv;
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        std::vector<std::string> env{"CUDALINGS_STATE_DIR=" + state, "NO_COLOR=1"};
        for (char** e = environ; *e; ++e) env.emplace_back(*e);
        std::vector<char*> envp;
        for (auto& e : env) envp.push_back(e.data());
        envp.push_back(nullptr);
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_adddup2(&actions, in[0], 0);
        posix_spawn_file_actions_adddup2(&actions, out[1], 1);
        posix_spawn_file_actions_addclose(&actions, in[1]);
        posix_spawn_file_actions_addclose(&actions, out[0]);
        REQUIRE(posix_spawn(&pid_, CUDALINGS_BINARY, &actions, nullptr, argv.data(), envp.data()) ==
                0);
        posix_spawn_file_actions_destroy(&actions);
        ::close(in[0]);
        ::close(out[1]);
        input_ = in[1];
        output_ = out[0];
    }
    ~Watch() {
        ::kill(pid_, SIGTERM);
        int status = 0;
        ::waitpid(pid_, &status, 0);
        ::close(input_);
        ::close(output_);
    }
    // The next event of `kind` (others are skipped), or null after `seconds`.
    nlohmann::json next(const std::string& kind, double seconds = 120) {
        const double end = now() + seconds;
        while (now() < end) {
            auto newline = buffer_.find('\n');
            if (newline != std::string::npos) {
                const std::string line = buffer_.substr(0, newline);
                buffer_.erase(0, newline + 1);
                auto j = nlohmann::json::parse(line, nullptr, false);
                if (!j.is_discarded() && j.value("event", "") == kind) {
                    j["received"] = now();
                    return j;
                }
                continue;
            }
            pollfd p{output_, POLLIN, 0};
            if (::poll(&p, 1, 200) > 0) {
                char chunk[65536];
                const ssize_t got = ::read(output_, chunk, sizeof chunk);
                if (got <= 0) return nullptr;
                buffer_.append(chunk, static_cast<std::size_t>(got));
            }
        }
        return nullptr;
    }

  private:
    pid_t pid_ = 0;
    int input_ = -1, output_ = -1;
    std::string buffer_;
};

}  // namespace

TEST_CASE("watch checks again on every save, within a second of the check's own time",
          "[watch][cli]") {
    const std::string root = flow::course_copy();
    const std::string step = root + "/lessons/01_vector_add/01_one_thread_per_element.cu";
    const std::string solution =
        flow::read(std::string(CUDALINGS_SOURCE_DIR) +
                   "/solutions/01_vector_add/01_one_thread_per_element.cu");
    Watch watch(root, flow::temp_dir("state"));
    auto first = watch.next("result");
    REQUIRE(first != nullptr);
    CHECK(first["report"]["verdict"] == "WRONG");  // the skeleton
    REQUIRE(watch.next("watching") != nullptr);

    // A save in place (a small edit that is still wrong).
    const double t1 = now();
    flow::write(step, flow::read(step) + "\n// still thinking\n");
    auto change = watch.next("change", 30);
    REQUIRE(change != nullptr);
    CHECK(change["t"].get<double>() - t1 < 1.0);
    auto second = watch.next("result");
    REQUIRE(second != nullptr);
    CHECK(second["report"]["verdict"] == "WRONG");
    const double late1 =
        second["received"].get<double>() - t1 - second["report"]["seconds"].get<double>();
    INFO("in-place save: " << late1 << " s beyond the check's own time");
    CHECK(late1 < 1.0);
    REQUIRE(watch.next("watching") != nullptr);

    // An editor's save: a new file renamed over the old one. The solution passes and watch
    // moves on to step 2.
    const double t2 = now();
    flow::write(step + ".swp", solution);
    REQUIRE(std::rename((step + ".swp").c_str(), step.c_str()) == 0);
    auto passed = watch.next("result");
    REQUIRE(passed != nullptr);
    CHECK(passed["report"]["verdict"] == "PASS");
    const double late2 =
        passed["received"].get<double>() - t2 - passed["report"]["seconds"].get<double>();
    INFO("rename save: " << late2 << " s beyond the check's own time");
    CHECK(late2 < 1.0);
    auto next = watch.next("result");
    REQUIRE(next != nullptr);
    CHECK(next["report"]["step"] == "01_vector_add/02_grid_stride_loop");
}

// Passing 01/2 with 01/1 unfinished: watch goes on with 01/3 (the same lesson), not back to 01/1,
// and `hint` then gives 01/3's hint.
TEST_CASE("after a pass, watch goes on with the same lesson's next step", "[watch][cli]") {
    const std::string root = flow::course_copy();
    const std::string src = CUDALINGS_SOURCE_DIR;
    flow::write(root + "/lessons/01_vector_add/02_grid_stride_loop.cu",
                flow::read(src + "/solutions/01_vector_add/02_grid_stride_loop.cu"));
    const std::string state = flow::temp_dir("state");
    {
        Watch watch(root, state, "1/2");
        auto passed = watch.next("result");
        REQUIRE(passed != nullptr);
        CHECK(passed["report"]["verdict"] == "PASS");
        CHECK(passed["solution"] == "solutions/01_vector_add/02_grid_stride_loop.cu");
        CHECK(passed["next"] == "01_vector_add/03_float4");
        auto next = watch.next("result");
        REQUIRE(next != nullptr);
        CHECK(next["report"]["step"] == "01_vector_add/03_float4");
        auto watching = watch.next("watching");
        REQUIRE(watching != nullptr);
        CHECK(watching["step"] == "01_vector_add/03_float4");
    }
    auto hint = flow::cudalings({"--root", root, "hint"}, {{"CUDALINGS_STATE_DIR", state}});
    CHECK(hint.out.rfind("01_vector_add/03_float4 —", 0) == 0);
}

TEST_CASE("a save is noticed with inotify at once, and without it within a second", "[watch]") {
    const std::string file = flow::temp_dir("watched") + "/step.cu";
    flow::write(file, "// one\n");
    for (bool inotify : {true, false}) {
        cudalings::FileWatcher watcher(inotify);
        REQUIRE(watcher.using_inotify() == inotify);
        watcher.watch(file);
        // Nothing changed: the wait runs out.
        CHECK(watcher.wait(-1, 0.3) == cudalings::FileWatcher::Event::Timeout);
        std::thread writer([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
            flow::write(file, inotify ? "// two\n" : "// three\n");
        });
        const double start = now();
        const auto event = watcher.wait(-1, 5);
        const double waited = now() - start;
        writer.join();
        CHECK(event == cudalings::FileWatcher::Event::Changed);
        INFO("inotify " << inotify << ": " << waited << " s");
        CHECK(waited < (inotify ? 0.6 : 1.5));
        // The same contents again (a save without an edit) is not a change.
        flow::write(file, inotify ? "// two\n" : "// three\n");
        CHECK(watcher.wait(-1, 0.3) == cudalings::FileWatcher::Event::Timeout);
    }
}
