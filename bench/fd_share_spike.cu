// The judge split's first step, measured on a GPU: can a trusted judge process own every device
// buffer and lend it to an untrusted learner process that runs inside the grading sandbox
// (bubblewrap: its own user and PID namespaces) under the seccomp filter?
//
//   fd_share_spike [--bwrap PATH] [--n N] [--reps R]
//
// For each way of starting the learner (directly, with the filter and no capabilities, as
// `check` would; inside bwrap with the sandbox's filter too, as `grade` would; directly without
// any filter, as today's runner) the judge:
//   1. allocates an input and an output with the virtual memory API (cuMemCreate, handle type
//      CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), fills them, exports each as a descriptor and
//      sends the descriptors with SCM_RIGHTS over a socketpair made before the learner started;
//   2. has the learner import, map and set access, run out = 2·in + 1 on them and say
//      "returned"; then checks every element itself;
//   3. measures: each process's context start, the import and map, the round trip of an empty
//      call, the learner's kernel on lent buffers against the same kernel on its own
//      allocations (events), and the judge's host clock around R calls against the learner's
//      event times;
//   4. has the learner try what a hostile submission would (ptrace, process_vm_readv, signals,
//      /proc/<judge>/mem and environ, pidfd_open, namespaces, clone3, perf, io_uring) and the
//      legacy CUDA IPC handle, and prints what each got.
// Prints one table per mode and a verdict line; exit status 0 when every mode's values were
// right and every forbidden call was refused where the filter was on.
#include <cuda_runtime.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "judge_link.h"
#include "lend.h"
#include "sandbox.h"
#include "seccomp_filter.h"
#include "wire.h"

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

#define CUDART(call)                                                                   \
    do {                                                                               \
        cudaError_t e_ = (call);                                                       \
        if (e_ != cudaSuccess) {                                                       \
            std::fprintf(stderr, "[%d] %s:%d %s: %s\n", getpid(), __FILE__, __LINE__, #call, \
                         cudaGetErrorName(e_));                                        \
            std::exit(3);                                                              \
        }                                                                              \
    } while (0)

// ---- messages over the socketpair (SOCK_SEQPACKET: one message per send) ----

struct Message {
    char kind[16] = {};
    std::uint64_t a = 0, b = 0, c = 0;
    double x = 0, y = 0, z = 0, w = 0;
    char text[2048] = {};
};

void send_msg(int sock, const Message& m, const int* fds = nullptr, int nfds = 0) {
    if (!cudalings::wire::send_bytes(sock, &m, sizeof m, fds, nfds)) {
        std::perror("sendmsg");
        std::exit(3);
    }
}

bool recv_msg(int sock, Message& m, std::vector<int>* fds = nullptr) {
    return cudalings::wire::receive_bytes(sock, &m, sizeof m, fds);
}

Message make(const char* kind) {
    Message m;
    std::snprintf(m.kind, sizeof m.kind, "%s", kind);
    return m;
}

__global__ void axpb(const float* in, float* out, std::uint64_t n) {
    for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < n;
         i += std::uint64_t(gridDim.x) * blockDim.x)
        out[i] = 2.0f * in[i] + 1.0f;
}

void launch(const float* in, float* out, std::uint64_t n, cudaStream_t s) {
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    axpb<<<sms * 8, 256, 0, s>>>(in, out, n);
}


// ---------------------------------------------------------------- the learner (untrusted) ----

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

std::string attempt(const char* what, long rc, int err) {
    char line[200];
    std::snprintf(line, sizeof line, "%-36s %s\n", what,
                  rc >= 0 ? "ALLOWED" : (std::string("refused: ") + strerrorname_np(err)).c_str());
    return line;
}

// What a hostile submission would try against the judge (pid `judge`, as the judge sees
// itself: inside a PID namespace that number names nothing or someone else).
std::string hostile_probes(pid_t judge) {
    std::string out;
    long rc;
    errno = 0;
    // SEIZE, not ATTACH: where it is allowed (no filter) it must not stop the judge. (The first
    // run of this spike used ATTACH: without the filter, the learner stopped its judge.)
    rc = ::ptrace(PTRACE_SEIZE, judge, nullptr, nullptr);
    out += attempt("ptrace(SEIZE, judge)", rc, errno);
    if (rc == 0) ::ptrace(PTRACE_DETACH, judge, nullptr, nullptr);
    rc = ::ptrace(PTRACE_SEIZE, getppid(), nullptr, nullptr);
    out += attempt("ptrace(SEIZE, parent)", rc, errno);
    if (rc == 0) ::ptrace(PTRACE_DETACH, getppid(), nullptr, nullptr);
    char buf[16];
    iovec local{buf, sizeof buf}, remote{reinterpret_cast<void*>(0x400000), sizeof buf};
    rc = ::process_vm_readv(judge, &local, 1, &remote, 1, 0);
    out += attempt("process_vm_readv(judge)", rc, errno);
    rc = ::kill(judge, 0);
    out += attempt("kill(judge, 0)", rc, errno);
    rc = ::kill(getppid(), 0);
    out += attempt("kill(parent, 0)", rc, errno);
    rc = ::kill(1, 0);
    out += attempt("kill(1, 0)", rc, errno);
    rc = ::kill(getpid(), 0);
    out += attempt("kill(self, 0) [must be allowed]", rc, errno);
    for (const char* file : {"mem", "environ", "fd/0", "cmdline"}) {
        std::string path = "/proc/" + std::to_string(judge) + "/" + file;
        int fd = ::open(path.c_str(), O_RDONLY);
        out += attempt(("open " + path).c_str(), fd, errno);
        if (fd >= 0) ::close(fd);
    }
    for (const char* path : {"/proc/1/mem", "/proc/1/environ"}) {
        int fd = ::open(path, O_RDONLY);
        out += attempt((std::string("open ") + path).c_str(), fd, errno);
        if (fd >= 0) ::close(fd);
    }
    rc = ::syscall(SYS_pidfd_open, judge, 0);
    out += attempt("pidfd_open(judge)", rc, errno);
    if (rc >= 0) ::close(static_cast<int>(rc));
    rc = ::unshare(CLONE_NEWUSER);
    out += attempt("unshare(CLONE_NEWUSER)", rc, errno);
    rc = ::syscall(SYS_clone3, nullptr, 0);
    out += attempt("clone3 [ENOSYS wanted]", rc, errno);
    perf_event_attr pa{};
    pa.size = sizeof pa;
    pa.type = PERF_TYPE_SOFTWARE;
    pa.config = PERF_COUNT_SW_CPU_CLOCK;
    rc = ::syscall(SYS_perf_event_open, &pa, 0, -1, -1, 0);
    out += attempt("perf_event_open", rc, errno);
    if (rc >= 0) ::close(static_cast<int>(rc));
    rc = ::syscall(SYS_io_uring_setup, 4, buf);
    out += attempt("io_uring_setup", rc, errno);
    rc = ::syscall(SYS_bpf, 0, nullptr, 0);
    out += attempt("bpf", rc, errno);
    pid_t child = ::fork();  // an ordinary child (the driver's threads, a submission's fork)
    if (child == 0) ::_exit(0);
    int status = 0;
    if (child > 0) ::waitpid(child, &status, 0);
    out += attempt("fork [must be allowed]", child, errno);
    return out;
}

int learner(int sock, pid_t judge, bool filter) {
    const auto t0 = Clock::now();
    Message ready = make("ready");
    if (filter) {
        const cudalings::seccomp::Confinement c = cudalings::seccomp::confine_self();
        if (!c.filtered) {
            std::fprintf(stderr, "learner: filter not installed: %s\n", c.why.c_str());
            return 4;
        }
        ready.c = c.no_capabilities;
    }
    ready.w = ms_since(t0);
    const auto t1 = Clock::now();
    CUDART(cudaFree(nullptr));  // the context
    ready.x = ms_since(t1);
    send_msg(sock, ready);

    std::vector<float*> mapped;
    std::vector<std::size_t> sizes;
    cudaStream_t s;
    CUDART(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (;;) {
        Message m;
        std::vector<int> fds;
        if (!recv_msg(sock, m, &fds)) return 0;  // the judge went away
        std::string kind = m.kind;
        if (kind == "buffers") {
            const auto t = Clock::now();
            for (std::size_t i = 0; i < fds.size(); ++i) {
                std::size_t size = i == 0 ? m.a : m.b;
                std::string why;
                std::uintptr_t p = cudalings::lend::import(fds[i], size, 0, &why);
                if (!p) {
                    std::fprintf(stderr, "learner: %s\n", why.c_str());
                    return 3;
                }
                mapped.push_back(reinterpret_cast<float*>(p));
                sizes.push_back(size);
            }
            Message r = make("mapped");
            r.x = ms_since(t);
            send_msg(sock, r);
        } else if (kind == "call") {
            // a = n elements, b = 1: run the kernel on the lent buffers; 0: an empty call
            if (m.b) {
                launch(mapped[0], mapped[1], m.a, s);
                CUDART(cudaStreamSynchronize(s));
            }
            send_msg(sock, make("returned"));
        } else if (kind == "time") {
            // the kernel R times on the lent buffers and on its own, events around each
            const std::uint64_t n = m.a;
            float *own_in, *own_out;
            CUDART(cudaMalloc(&own_in, n * 4));
            CUDART(cudaMalloc(&own_out, n * 4));
            CUDART(cudaMemsetAsync(own_in, 0, n * 4, s));
            cudaEvent_t e0, e1;
            CUDART(cudaEventCreate(&e0));
            CUDART(cudaEventCreate(&e1));
            std::vector<double> lent, own;
            for (std::uint64_t r = 0; r < m.b + 3; ++r) {
                for (int which = 0; which < 2; ++which) {
                    const float* in = which ? own_in : mapped[0];
                    float* out = which ? own_out : mapped[1];
                    CUDART(cudaEventRecord(e0, s));
                    launch(in, out, n, s);
                    CUDART(cudaEventRecord(e1, s));
                    CUDART(cudaEventSynchronize(e1));
                    float ms = 0;
                    CUDART(cudaEventElapsedTime(&ms, e0, e1));
                    if (r >= 3) (which ? own : lent).push_back(ms * 1000.0);
                }
            }
            CUDART(cudaFree(own_in));
            CUDART(cudaFree(own_out));
            Message r = make("timed");
            r.x = median(lent);
            r.y = median(own);
            send_msg(sock, r);
        } else if (kind == "burst") {
            // R back-to-back calls the judge times with its host clock; the events' claim
            cudaEvent_t e0, e1;
            CUDART(cudaEventCreate(&e0));
            CUDART(cudaEventCreate(&e1));
            std::vector<double> each;
            for (std::uint64_t r = 0; r < m.b; ++r) {
                CUDART(cudaEventRecord(e0, s));
                launch(mapped[0], mapped[1], m.a, s);
                CUDART(cudaEventRecord(e1, s));
                CUDART(cudaEventSynchronize(e1));
                float ms = 0;
                CUDART(cudaEventElapsedTime(&ms, e0, e1));
                each.push_back(ms * 1000.0);
            }
            Message r = make("burst_done");
            r.x = median(each);
            send_msg(sock, r);
        } else if (kind == "probe") {
            Message r = make("probed");
            std::snprintf(r.text, sizeof r.text, "%s", hostile_probes(judge).c_str());
            send_msg(sock, r);
        } else if (kind == "legacy_ipc") {
            cudaIpcMemHandle_t h;
            std::memcpy(&h, m.text, sizeof h);
            void* p = nullptr;
            cudaError_t e = cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess);
            Message r = make("legacy_ipc");
            std::snprintf(r.text, sizeof r.text, "%s", cudaGetErrorName(e));
            if (e == cudaSuccess) cudaIpcCloseMemHandle(p);
            (void)cudaGetLastError();
            send_msg(sock, r);
        } else {
            return 0;
        }
    }
}

// ------------------------------------------------------------------ the judge (trusted) ------

cudalings::lend::Loan lend(std::size_t bytes) {
    cudalings::lend::Loan l;
    std::string why;
    if (!cudalings::lend::make(bytes, l, &why)) {
        std::fprintf(stderr, "judge: %s\n", why.c_str());
        std::exit(3);
    }
    return l;
}

__global__ void fill_input(float* in, std::uint64_t n) {
    for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < n;
         i += std::uint64_t(gridDim.x) * blockDim.x)
        in[i] = static_cast<float>(i % 1000003) * 0.5f - 7.0f;
}
__global__ void count_wrong(const float* in, const float* out, std::uint64_t n,
                            unsigned long long* wrong) {
    unsigned long long mine = 0;
    for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < n;
         i += std::uint64_t(gridDim.x) * blockDim.x)
        mine += out[i] != 2.0f * in[i] + 1.0f;
    if (mine) atomicAdd(wrong, mine);
}

struct Mode {
    const char* name;
    bool bwrap;
    bool filter;
};

bool run_mode(const Mode& mode, const std::string& self, const std::string& bwrap, std::uint64_t n,
              int reps) {
    std::printf("\n== mode: %s\n", mode.name);
    std::fflush(stdout);
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
        std::perror("socketpair");
        return false;
    }
    std::vector<std::string> argv{self, "--learner", std::to_string(getpid()),
                                  mode.filter ? "1" : "0"};
    int bpf = -1;
    if (mode.bwrap) {
        cudalings::SandboxSettings settings;
        settings.bwrap = bwrap;
        cudalings::Sandbox box(settings);
        argv = box.command(argv, cudalings::runner_view(argv, true), {});
        std::string why;
        bpf = cudalings::seccomp::export_bpf({}, &why);
        if (bpf < 0) {
            std::printf("sandbox filter: %s\n", why.c_str());
            return false;
        }
    }
    const auto t_fork = Clock::now();
    cudalings::DescriptorMove moves[2] = {{sv[1], 3},
                                           {bpf, cudalings::Sandbox::kFilterDescriptor}};
    const pid_t pid = cudalings::spawn(argv, moves, bpf >= 0 ? 2 : 1);
    ::close(sv[1]);
    if (bpf >= 0) ::close(bpf);
    const int sock = sv[0];
    bool ok = true;

    // The judge's buffers: made while the learner starts its context.
    const auto t_alloc = Clock::now();
    const std::size_t granularity = cudalings::lend::granularity();
    cudalings::lend::Loan in = lend(n * 4), out = lend(n * 4);
    fill_input<<<1024, 256>>>(reinterpret_cast<float*>(in.address), n);
    CUDART(cudaMemset(reinterpret_cast<void*>(out.address), 0xff, n * 4));  // NaN poison
    CUDART(cudaDeviceSynchronize());
    const double alloc_ms = ms_since(t_alloc);

    Message m;
    if (!recv_msg(sock, m) || std::string(m.kind) != "ready") {
        int status = 0;
        ::waitpid(pid, &status, 0);
        std::printf("learner did not start (status %d)\n", status);
        ::close(sock);
        return false;
    }
    const double ready_ms = ms_since(t_fork);
    std::printf("learner ready %.1f ms after fork (its context %.1f ms; filter %.2f ms, "
                "capabilities dropped: %s); judge's buffers made in %.1f ms meanwhile "
                "(granularity %zu KiB)\n",
                ready_ms, m.x, m.w, m.c ? "yes" : "no/none", alloc_ms, granularity >> 10);
    int fds[2] = {in.fd, out.fd};
    Message b = make("buffers");
    b.a = in.bytes;
    b.b = out.bytes;
    const auto t_map = Clock::now();
    send_msg(sock, b, fds, 2);
    ::close(in.fd);
    ::close(out.fd);
    in.fd = out.fd = -1;
    recv_msg(sock, m);
    std::printf("import + map of 2 x %.0f MiB: %.2f ms in the learner, %.2f ms round trip\n",
                in.bytes / 1048576.0, m.x, ms_since(t_map));

    // One call on the lent buffers; the judge checks every element itself.
    Message c = make("call");
    c.a = n;
    c.b = 1;
    send_msg(sock, c);
    recv_msg(sock, m);
    unsigned long long* wrong;
    CUDART(cudaMalloc(&wrong, sizeof *wrong));
    CUDART(cudaMemset(wrong, 0, sizeof *wrong));
    count_wrong<<<1024, 256>>>(reinterpret_cast<float*>(in.address),
                               reinterpret_cast<float*>(out.address), n, wrong);
    unsigned long long host_wrong = 1;
    CUDART(cudaMemcpy(&host_wrong, wrong, sizeof host_wrong, cudaMemcpyDeviceToHost));
    std::printf("values written by the learner, read by the judge: %llu wrong of %llu\n",
                host_wrong, static_cast<unsigned long long>(n));
    ok = ok && host_wrong == 0;

    // The round trip of an empty call.
    std::vector<double> trips;
    for (int i = 0; i < 2000; ++i) {
        Message e = make("call");
        const auto t = Clock::now();
        send_msg(sock, e);
        recv_msg(sock, m);
        if (i >= 100) trips.push_back(ms_since(t) * 1000.0);
    }
    std::printf("empty call round trip: median %.1f us\n", median(trips));

    // The kernel's speed on lent buffers against the learner's own allocations.
    Message t = make("time");
    t.a = n;
    t.b = reps;
    send_msg(sock, t);
    recv_msg(sock, m);
    std::printf("kernel (events, median of %d): lent buffers %.1f us, own cudaMalloc %.1f us "
                "(ratio %.4f); %.0f GB/s\n",
                reps, m.x, m.y, m.x / m.y, 8.0 * n / (m.x * 1e3));

    // The judge's host clock around R back-to-back calls against the learner's events.
    for (int r : {1, 10}) {
        std::vector<double> host;
        double claim = 0;
        for (int k = 0; k < 5; ++k) {
            Message bu = make("burst");
            bu.a = n;
            bu.b = r;
            const auto tb = Clock::now();
            send_msg(sock, bu);
            recv_msg(sock, m);
            host.push_back(ms_since(tb) * 1000.0 / r);
            claim = m.x;
        }
        std::printf("R = %2d: judge's host clock %.1f us per call, learner's events %.1f us "
                    "(host/events %.4f)\n",
                    r, median(host), claim, median(host) / claim);
    }

    // What a hostile learner can reach.
    send_msg(sock, make("probe"));
    recv_msg(sock, m);
    std::printf("hostile probes from the learner (judge pid %d):\n%s", getpid(), m.text);
    if (mode.filter) {
        // Everything but the three marked "must be allowed" must be refused.
        std::string text = m.text;
        std::size_t pos = 0;
        while ((pos = text.find("ALLOWED", pos)) != std::string::npos) {
            std::size_t line = text.rfind('\n', pos);
            std::string l = text.substr(line == std::string::npos ? 0 : line + 1,
                                        pos - (line == std::string::npos ? 0 : line + 1));
            // /proc/<pid>/cmdline is readable by every process by design: not a hole.
            if (l.find("must be allowed") == std::string::npos &&
                l.find("/cmdline") == std::string::npos) {
                std::printf("  NOT REFUSED: %s\n", l.c_str());
                ok = false;
            }
            ++pos;
        }
    }

    // The legacy IPC API across the sandbox's namespaces.
    void* legacy = nullptr;
    CUDART(cudaMalloc(&legacy, 1 << 20));
    cudaIpcMemHandle_t lh;
    CUDART(cudaIpcGetMemHandle(&lh, legacy));
    Message li = make("legacy_ipc");
    std::memcpy(li.text, &lh, sizeof lh);
    send_msg(sock, li);
    recv_msg(sock, m);
    std::printf("legacy cudaIpcOpenMemHandle in the learner: %s\n", m.text);
    CUDART(cudaFree(legacy));

    send_msg(sock, make("quit"));
    ::close(sock);
    int status = 0;
    ::waitpid(pid, &status, 0);
    std::printf("learner exit status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    cudalings::lend::release(in);
    cudalings::lend::release(out);
    CUDART(cudaFree(wrong));
    std::printf("mode %s: %s\n", mode.name, ok ? "OK" : "FAILED");
    return ok;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc >= 4 && std::string(argv[1]) == "--learner")
        return learner(3, static_cast<pid_t>(std::atoi(argv[2])), std::string(argv[3]) == "1");
    std::string bwrap = cudalings::find_bwrap("");
    std::uint64_t n = std::uint64_t{1} << 28;
    int reps = 15;
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string a = argv[i];
        if (a == "--bwrap") bwrap = cudalings::find_bwrap(argv[i + 1]);
        if (a == "--n") n = std::strtoull(argv[i + 1], nullptr, 0);
        if (a == "--reps") reps = std::atoi(argv[i + 1]);
    }
    std::setvbuf(stdout, nullptr, _IOLBF, 0);  // a log that survives a timeout
    // The judge is not dumpable before it holds anything: its /proc files are root's.
    ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    const auto t0 = Clock::now();
    CUDART(cudaFree(nullptr));
    std::printf("judge context %.1f ms; n = %llu floats; bwrap: %s\n", ms_since(t0),
                static_cast<unsigned long long>(n), bwrap.empty() ? "none" : bwrap.c_str());
    std::string self = "/proc/self/exe";
    {
        char path[4096];
        ssize_t len = ::readlink("/proc/self/exe", path, sizeof path - 1);
        if (len > 0) self.assign(path, static_cast<std::size_t>(len));
    }
    const Mode modes[] = {{"direct, no filter (today's runner)", false, false},
                          {"direct, filter + no capabilities (check)", false, true},
                          {"bwrap + sandbox filter + learner filter (grade)", true, true}};
    bool all = true;
    for (const Mode& mode : modes) {
        if (mode.bwrap && bwrap.empty()) {
            std::printf("\n== mode: %s: SKIPPED (no bwrap)\n", mode.name);
            all = false;
            continue;
        }
        all = run_mode(mode, self, bwrap, n, reps) && all;
    }
    std::printf("\nspike: %s\n", all ? "every mode OK" : "FAILED");
    return all ? 0 : 1;
}
