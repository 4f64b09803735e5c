// The judge split's learner process (checker/learner/): device memory the judge lends (by
// descriptor on a GPU; under the emulator, CUDALINGS_TEST_EMULATED, through the emulator's shared
// memory), a call packed from the entry point's signature, the learner's filter, and who is to
// blame when the learner's process ends. Uses lesson 01's solution as the learner's object.
#include <catch2/catch_test_macros.hpp>

#include <cuda_runtime.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli_support.h"
#include "judge_link.h"
#include "sandbox.h"
#include "vector_add.cuh"

using namespace cudalings;

namespace {

struct Buffers {
    static constexpr std::size_t n = (std::size_t{1} << 20) + 3;
    lend::Loan a, b, c;
    Buffers() {
        std::string why;
        INFO(why);
        REQUIRE(lend::make(n * 4, a, &why));
        REQUIRE(lend::make(n * 4, b, &why));
        REQUIRE(lend::make(n * 4, c, &why));
        std::vector<float> x(n), y(n);
        for (std::size_t i = 0; i < n; ++i) {
            x[i] = static_cast<float>(i % 1013) * 0.25f;
            y[i] = 3.0f - static_cast<float>(i % 7);
        }
        REQUIRE(cudaMemcpy(reinterpret_cast<void*>(a.address), x.data(), n * 4,
                           cudaMemcpyHostToDevice) == cudaSuccess);
        REQUIRE(cudaMemcpy(reinterpret_cast<void*>(b.address), y.data(), n * 4,
                           cudaMemcpyHostToDevice) == cudaSuccess);
        REQUIRE(cudaMemset(reinterpret_cast<void*>(c.address), 0xff, n * 4) == cudaSuccess);
    }
    ~Buffers() {
        lend::release(a);
        lend::release(b);
        lend::release(c);
    }
    // Elements of c that are not a + b, read by the judge from its own mapping.
    std::size_t wrong() const {
        std::vector<float> x(n), y(n), z(n);
        cudaMemcpy(x.data(), reinterpret_cast<void*>(a.address), n * 4, cudaMemcpyDeviceToHost);
        cudaMemcpy(y.data(), reinterpret_cast<void*>(b.address), n * 4, cudaMemcpyDeviceToHost);
        cudaMemcpy(z.data(), reinterpret_cast<void*>(c.address), n * 4, cudaMemcpyDeviceToHost);
        std::size_t bad = 0;
        for (std::size_t i = 0; i < n; ++i) bad += !(z[i] == x[i] + y[i]);
        return bad;
    }
};

#ifdef CUDALINGS_TEST_EMULATED
bool machine_ready() { return true; }
std::string not_ready() { return {}; }
#else
bool machine_ready() { return test_support::gpu_present(); }
std::string not_ready() { return test_support::gpu_absent_reason(); }
#endif

LearnerStart how(const std::string& step, const Sandbox* sandbox = nullptr) {
    LearnerStart s;
    std::string why;
    s.shared_memory = lend::shared_memory(&why);
    s.learner = CUDALINGS_LEARNER;
    s.shims = CUDALINGS_TEST_SHIM;
    s.step = step;
    s.sandbox = sandbox;
    return s;
}

kit::remote::CallMessage vector_add_call(const JudgeLink& link, const Buffers& buf) {
    return kit::remote::Signature<decltype(&vector_add)>::pack(
        "vector_add", link, reinterpret_cast<const float*>(buf.a.address),
        reinterpret_cast<const float*>(buf.b.address), reinterpret_cast<float*>(buf.c.address),
        Buffers::n, cudaStream_t{});
}

// The files the learner's process has mapped (its /proc/<pid>/maps, read by the judge).
std::vector<std::string> mapped_files(pid_t pid) {
    std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
    std::vector<std::string> files;
    std::string line;
    while (std::getline(maps, line)) {
        auto slash = line.find('/');
        if (slash != std::string::npos) files.push_back(line.substr(slash));
    }
    return files;
}

// The project's namespaces a program defines symbols in ("cudalings::lend", "kit::remote",
// "runner::…" counts as "runner"), from `nm -C --defined-only`. `why` says when nm could not
// read the file.
std::set<std::string> project_namespaces(const std::string& file, std::string* why) {
    std::set<std::string> found;
    const std::string command = "nm -C --defined-only '" + file + "' 2>/dev/null";
    FILE* pipe = ::popen(command.c_str(), "r");
    if (!pipe) {
        *why = "cannot run nm";
        return found;
    }
    static const std::regex name(R"(\b(cudalings|kit|runner|grading)((::[A-Za-z_]\w*)+))");
    char line[4096];
    std::size_t symbols = 0;
    while (std::fgets(line, sizeof line, pipe)) {
        ++symbols;
        const std::string text(line);
        for (std::sregex_iterator m(text.begin(), text.end(), name), end; m != end; ++m) {
            // The namespace and the first name inside it ("cudalings::lend", "kit::remote"; a
            // function right in a project namespace counts as its own part: not allowed).
            const std::string rest = (*m)[2];
            const std::size_t next = rest.find("::", 2);
            const std::string path = std::string((*m)[1]) + rest.substr(0, next);
            found.insert(path);
        }
    }
    const int status = ::pclose(pipe);
    if (status != 0 || symbols == 0) *why = "nm found no symbols in " + file;
    return found;
}

void lend_all(JudgeLink& link, Buffers& buf) {
    std::string why;
    REQUIRE(link.lend(buf.a, &why));
    REQUIRE(link.lend(buf.b, &why));
    REQUIRE(link.lend(buf.c, &why));
}

}  // namespace

TEST_CASE("a learner's process computes on memory the judge lent it, under its filter",
          "[learner]") {
    if (!machine_ready()) SKIP(not_ready());
    REQUIRE(cudaFree(nullptr) == cudaSuccess);
    std::string shared_error;
    const bool shares = lend::shared_memory(&shared_error) >= 0 || shared_error.empty();
    INFO(shared_error);
    REQUIRE(shares);
    std::vector<std::pair<std::string, std::shared_ptr<const Sandbox>>> ways{{"direct", nullptr}};
    std::string why;
    if (auto box = open_sandbox({}, why))
        ways.emplace_back("bubblewrap", box);
    else
        WARN("no sandbox here, only the direct start is tested: " << why);
    for (auto& [name, box] : ways) {
        INFO(name);
        Buffers buf;
        JudgeLink link;
        // The judge's probes of its clock come before the learner's object is loaded: each a
        // memset of the process's own, timed as a call, after the judge's own work (here a
        // count of the calls, standing for its L2 flush).
        LearnerStart start = how(CUDALINGS_SOLUTION_01, box.get());
        int before = 0;
        start.probes = 5;
        start.before_probe = [&] { return double(++before); };
        REQUIRE(link.start(start, &why));
        CHECK(link.state().filtered);
        CHECK(link.state().capabilities_dropped);
        CHECK(before == 5);
        CHECK(link.state().probe_canary_us == std::vector<double>{1, 2, 3, 4, 5});
        REQUIRE(link.state().probe_overheads_us.size() == 5);
        for (double o : link.state().probe_overheads_us) CHECK(o > 0);
        lend_all(link, buf);
        JudgeLink::Returned r;
        REQUIRE(link.call(vector_add_call(link, buf), r));
        CHECK(r.status == cudaSuccess);
        CHECK(r.sync_status == cudaSuccess);
        CHECK(buf.wrong() == 0);

        // Nothing of the checker but the learner program, the shims (and the emulator) is in
        // that process: no runner, no checks, no core.
        auto files = mapped_files(link.pid());
        std::ostringstream all;
        for (auto& f : files) all << f << "\n";
        INFO(all.str());
        if (!box) {  // inside bwrap the judge sees the same files at the same paths
            bool step = false, shim = false;
            for (auto& f : files) {
                CHECK(f.find("cudalings-runner") == std::string::npos);
                CHECK(f.find("checks") == std::string::npos);
                // The emulator's runtime is the one library of the project allowed there.
                if (f.find("libcudalings_emu.so") == std::string::npos)
                    CHECK(f.find("libcudalings") == std::string::npos);
                step = step || f == CUDALINGS_SOLUTION_01;
                shim = shim || f == CUDALINGS_TEST_SHIM;
            }
            CHECK(step);
            CHECK(shim);
        }
        link.finish();
        CHECK(link.state().exit_code == 0);
    }
}

TEST_CASE("a learner that exits while loading ends its own run, and cannot reach its judge",
          "[learner]") {
    if (!machine_ready()) SKIP(not_ready());
    REQUIRE(cudaFree(nullptr) == cudaSuccess);
    std::string why;
    {
        JudgeLink link;
        CHECK_FALSE(link.start(how(CUDALINGS_HOSTILE_CONSTRUCTOR_EXIT), &why));
        // Ready was said, Loaded never: the learner's code ended its process.
        CHECK(link.state().ready);
        CHECK_FALSE(link.state().loaded);
        CHECK(link.state().ended);
        CHECK(link.state().exit_code == 0);
    }
    {
        Buffers buf;
        JudgeLink link;
        REQUIRE(link.start(how(CUDALINGS_HOSTILE_REACH_JUDGE), &why));
        lend_all(link, buf);
        JudgeLink::Returned r;
        REQUIRE(link.call(vector_add_call(link, buf), r));  // this process is still here
        CHECK(r.status == cudaSuccess);                     // its claim...
        CHECK(buf.wrong() == Buffers::n);                   // ...and what the judge reads
        link.finish();
    }
}

TEST_CASE("the learner's program and a lesson's call shim hold no checker code", "[learner]") {
    // Only the loader's own parts (the lending of device memory, the wire to the judge and,
    // under the emulator, what travels on it, the filter) and the call shims' (kit::shim,
    // kit::remote): no checks, no judge, no runner, no
    // report, no key. (The learner's step and the reference are objects of their own; the test
    // above reads the learner's maps for them.)
    const std::set<std::string> allowed{"cudalings::lend",    "cudalings::wire",
                                        "cudalings::seccomp", "cudalings::emu_codec",
                                        "kit::remote",        "kit::shim"};
    for (const std::string& file :
         {std::string(CUDALINGS_LEARNER), std::string(CUDALINGS_TEST_SHIM)}) {
        INFO(file);
        std::string why;
        const std::set<std::string> spaces = project_namespaces(file, &why);
        if (!why.empty()) SKIP(why);
        std::string all;
        for (const auto& s : spaces) all += s + " ";
        INFO("namespaces: " << all);
        for (const auto& s : spaces) CHECK(allowed.count(s) == 1);
    }
}

// The learner's process gets its socket and nothing else of the judge's: the runner starts it
// before it has read its key (so its context is made beside the judge's), and a descriptor the
// judge holds then without close-on-exec (the key's pipe, its result channel) must not reach it.
TEST_CASE("a learner's process inherits no descriptor of its judge's but its socket", "[learner]") {
    int pipe_fds[2];
    REQUIRE(::pipe(pipe_fds) == 0);  // not close-on-exec, as the key's pipe is
    constexpr int kHeld = 47;
    REQUIRE(::dup2(pipe_fds[0], kHeld) == kHeld);
    int sv[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    const DescriptorMove moves[] = {{sv[1], 3}};
    // Exit 0: only 0-3 (and the descriptor the listing itself reads through); 9: 47 reached it.
    const pid_t pid = spawn({"/bin/sh", "-c",
                             "test -e /proc/$$/fd/47 && exit 9; test -e /proc/$$/fd/3 || exit 8; "
                             "exit 0"},
                            moves, 1);
    REQUIRE(pid > 0);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    ::close(kHeld);
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    ::close(sv[0]);
    ::close(sv[1]);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
}

namespace {
// The CPU time a process has used so far (its /proc/<pid>/stat: user and system), in seconds.
double cpu_seconds(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto close = text.rfind(')');  // the command's name may hold spaces
    if (close == std::string::npos) return -1;
    std::istringstream fields(text.substr(close + 2));
    std::string field;
    unsigned long long user = 0, system = 0;
    for (int i = 3; i <= 15 && fields >> field; ++i) {  // fields 14 and 15: utime, stime
        if (i == 14) user = std::stoull(field);
        if (i == 15) system = std::stoull(field);
    }
    return double(user + system) / double(::sysconf(_SC_CLK_TCK));
}
}  // namespace

// The processes a timed check starts for its phases (the reference's, each learner phase's) get
// no probes, so their Load says to wait for the judge's next message without sleeping, as a
// probed process does: one that sleeps in recv through a call wakes later, and the judge's clock
// counts that against the claim (on the H100 a 0.76 ms call showed 0.19 ms more than the probes'
// round trip when its process slept).
TEST_CASE("a timed phase's learner process waits for its judge without sleeping", "[learner]") {
    if (!machine_ready()) SKIP(not_ready());
    REQUIRE(cudaFree(nullptr) == cudaSuccess);
    for (const bool timed : {false, true}) {
        INFO((timed ? "a timed phase's process" : "an untimed process"));
        JudgeLink link;
        LearnerStart start = how(CUDALINGS_SOLUTION_01);
        start.spin = timed;
        std::string why;
        INFO(why);
        REQUIRE(link.start(start, &why));
        const double before = cpu_seconds(link.pid());
        // Within the half second it waits so (wire::kSpinSeconds). A process that sleeps uses no
        // CPU time at all; one that polls uses what it gets of a core (all of it on an idle
        // machine, a tenth under CI's load): at least 3 of the clock's ticks.
        std::this_thread::sleep_for(std::chrono::milliseconds(450));
        const double used = cpu_seconds(link.pid()) - before;
        INFO("CPU time in 0.45 s of waiting: " << used << " s");
        REQUIRE(before >= 0);
        const double tick = 1.0 / double(::sysconf(_SC_CLK_TCK));
        if (timed)
            CHECK(used >= 3 * tick - 1e-9);
        else
            CHECK(used <= tick + 1e-9);
        link.finish();
    }
}
