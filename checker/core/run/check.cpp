#include "check.h"

#include <sys/stat.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <random>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include "cases.h"
#include "checks_build.h"
#include "compile.h"
#include "conclude.h"
#include "emulate.h"
#include "goals.h"
#include "hash.h"
#include "history.h"
#include "policy.h"
#include "protocol.h"
#include "sandbox.h"
#include "sanitize.h"
#include "setup.h"
#include "stats.h"
#include "supervise.h"

#ifndef CUDALINGS_SOURCE_DIR
#define CUDALINGS_SOURCE_DIR "/nonexistent"
#endif
#ifndef CUDALINGS_DEFAULT_NVCC
#define CUDALINGS_DEFAULT_NVCC "nvcc"
#endif

namespace fs = std::filesystem;
using nlohmann::json;

namespace cudalings {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

// Every authenticated JSON line the runner sent on its result channel. Each line carries a
// tag (SipHash of its sequence number and text under a key only the runner holds); a line
// without a valid tag in sequence was not written by the runner and is ignored, so nothing
// the learner's code prints can change a verdict.
std::vector<json> parse_events(const std::string& channel, const unsigned char key[16],
                               int* forged = nullptr) {
    std::vector<json> events;
    std::istringstream lines(channel);
    std::string line;
    std::uint64_t sequence = 0;
    while (std::getline(lines, line)) {
        if (line.empty()) continue;
        auto tab = line.rfind('\t');
        if (tab == std::string::npos ||
            line.substr(tab + 1) != line_tag(key, sequence, line.substr(0, tab))) {
            if (forged) ++*forged;
            continue;
        }
        ++sequence;
        try {
            auto j = json::parse(line.substr(0, tab));
            if (j.is_object() && j.contains("event")) events.push_back(std::move(j));
        } catch (const std::exception&) {
        }
    }
    return events;
}

// Whether the runner's last authenticated event so far is "done" (cheap until a line that
// could be it has arrived).
bool said_done(const std::string& channel, const unsigned char key[16]) {
    if (channel.empty() || channel.back() != '\n') return false;
    const auto start = channel.rfind('\n', channel.size() - 2);
    if (channel.find("\"done\"", start == std::string::npos ? 0 : start) == std::string::npos)
        return false;
    const auto events = parse_events(channel, key);
    return !events.empty() && is(events.back().value("event", ""), Marker::Done);
}

// Starts the runner with a fresh key and returns its authenticated events. With a sandbox
// (sandbox.h), the runner runs inside it and sees what `view` names. With `until_done` and no
// sandbox, the call returns once the runner has said "done": a check's result is complete then,
// and the runner's exit (CUDA's teardown, ~0.1 s on the H200) goes on while the checker
// reports. A sandboxed run (grading) waits for the exit, as every run did before.
//
// With `stop_after`, the runner is stopped (its group killed; the result says cancelled) as soon
// as an authenticated event satisfies it: a check that ends at its first failing case.
ChildResult run_runner(const std::vector<std::string>& argv, ChildOptions options,
                       std::vector<json>& events, int* forged = nullptr,
                       const Sandbox* sandbox = nullptr, const SandboxView& view = {},
                       bool until_done = false,
                       const std::function<bool(const json&)>& stop_after = {}) {
    std::array<unsigned char, 16> key;
    random_key(key.data());
    options.result_channel = true;
    options.secret = key_to_hex(key.data());
    if (until_done && !sandbox)
        options.finished = [key](const std::string& channel) {
            return said_done(channel, key.data());
        };
    std::atomic<bool> stop{false};
    if (stop_after) {
        options.cancel = &stop;
        options.on_channel = [key, &stop, &stop_after](const std::string& channel) {
            for (const auto& e : parse_events(channel, key.data()))
                if (stop_after(e)) stop.store(true);
        };
    }
    auto child = run_contained(sandbox, argv, options, view);
    events = parse_events(child.channel.head, key.data(), forged);
    return child;
}

// nvcc's identity in the cache key: where it lives on PATH.
std::string which(const std::string& program) {
    std::string found = find_program(program);
    return found.empty() ? program : found;
}

// What identifies the machine's GPU set without starting CUDA: the driver and the devices.
std::string gpu_signature() {
    Hasher h;
    h.add_file("/proc/driver/nvidia/version");
    std::error_code ec;
    std::vector<std::string> devices;
    for (const auto& e : fs::directory_iterator("/dev", ec)) {
        auto name = e.path().filename().string();
        if (name.rfind("nvidia", 0) == 0) devices.push_back(name);
    }
    std::sort(devices.begin(), devices.end());
    for (auto& d : devices) h.add(d);
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    h.add(visible ? visible : "<all>");
    return h.hex();
}

// A sentence about what ended a runner child early.
std::string describe_end(const ChildResult& child, double idle_seconds) {
    if (child.timed_out)
        return child.idle_timeout ? "no progress for " + std::to_string(int(idle_seconds)) +
                                        " s: the call never returned or a kernel never ended"
                                  : "the run exceeded its wall-clock limit";
    if (child.signal) return "the process died: " + describe_signal(child.signal);
    return "the process exited (code " + std::to_string(child.exit_code) +
           ") in the middle of the case";
}

// A build's children (nvcc and everything it starts, the screen's two preprocessor passes
// beside it, nm after it; the emulator's compiler) hold this much host memory together (one
// MemoryGroup per build): enough for any real step, and an endless #include stops here, not in
// the machine's swap.
constexpr std::size_t kBuildMemoryLimit = std::size_t{4} << 30;

// A build's time limits. `--compile-timeout` is CPU time, for each compiler process (nvcc's
// cicc, ptxas, the host compiler; the screen's passes): a machine busy with other work slows a
// build down but cannot make it fail. Its wall-clock backstop, for a build that waits on
// something instead of compiling, is three times as long and 30 s more.
// A build's memory: one cgroup for nvcc, everything it starts and the screen after it (`group`),
// or, where this machine lets the checker create none, each of its processes' address space.
void limit_build_memory(ChildOptions& o, const MemoryGroup& group) {
    o.memory_limit = kBuildMemoryLimit;
    o.memory_group = &group;
    o.address_space_limit = kBuildMemoryLimit;
}

// What a build's process says when an allocation failed (cc1plus, the C++ library, the C library).
bool said_out_of_memory(const std::string& text) {
    for (const char* words : {"out of memory", "bad_alloc", "Cannot allocate memory",
                              "memory exhausted", "virtual memory exhausted"})
        if (text.find(words) != std::string::npos) return true;
    return false;
}

ChildOptions build_limits(double compile_seconds) {
    ChildOptions o;
    o.cpu_seconds = compile_seconds;
    o.wall_seconds = 3 * compile_seconds + 30;
    return o;
}

// Whether a build's process was stopped at the CPU limit (the compiler driver says which).
bool cpu_limit_hit(const ChildResult& child) {
    const std::string text = child.err.head + child.out.head;
    return child.signal == SIGXCPU || text.find("CPU time limit exceeded") != std::string::npos ||
           text.find("Cpu time limit exceeded") != std::string::npos;
}

// sandbox: what a build of `source` sees: its include directories, the file itself, the tools'
// installations, and `work`, the only place it writes.
SandboxView build_view(const std::vector<std::string>& include_dirs, const std::string& source,
                       const std::string& work, const std::vector<std::string>& tools) {
    SandboxView view;
    view.read_only = include_dirs;
    view.read_only.push_back(source);
    for (const auto& tool : tools) view.read_only.push_back(install_root(tool));
    view.writable = {work};
    return view;
}

// The time `seconds` from now, and the seconds left until such a time (at least one).
Clock::time_point after_seconds(double seconds) {
    return Clock::now() +
           std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}
double seconds_until(Clock::time_point deadline) {
    return std::max(1.0, std::chrono::duration<double>(deadline - Clock::now()).count());
}

// The policy screen of a build: the preprocessed files nvcc kept (`-keep` into `keep_dir`):
// its host pass (.cpp4.ii) and its device pass (.cpp1.ii; code can hide behind __CUDA_ARCH__),
// exactly what it compiled. A pass the build did not get to is left unscreened (the file gets
// no verdict from running); a build that failed is also screened on nvcc's message, where an
// include that is not there may still have aimed at the solutions (in a sandbox they are not
// there to be found). Where a build that succeeded kept no such file (an nvcc that names them
// otherwise), `preprocess` makes that view itself (true: the host's).
std::optional<PolicyViolation> screen_build(
    const std::string& keep_dir, const std::vector<std::string>& include_dirs,
    const PolicyRules& rules, const ChildResult& build,
    const std::function<std::optional<std::string>(bool host)>& preprocess) {
    for (const bool host : {true, false}) {
        const std::string pass = host ? ".cpp4.ii" : ".cpp1.ii";
        std::string kept;
        std::error_code ec;
        for (const auto& e : fs::directory_iterator(keep_dir, ec)) {
            const std::string name = e.path().filename().string();
            if (name.size() > pass.size() &&
                name.compare(name.size() - pass.size(), std::string::npos, pass) == 0)
                kept = e.path().string();
        }
        bool ok = false;
        std::optional<std::string> text;
        if (!kept.empty()) text = read_file(kept, &ok);
        if (!ok) text = build.exited_ok() ? preprocess(host) : std::nullopt;
        if (text)
            if (auto violation = screen_preprocessed(*text, rules)) return violation;
    }
    if (build.started && !build.timed_out && !build.exited_ok())
        return screen_missing_includes(build.err.head, include_dirs, rules);
    return std::nullopt;
}

// The symbols a built file imports: loading libraries itself is not allowed.
std::optional<PolicyViolation> screen_imports(const std::string& object, double seconds,
                                              const Sandbox* sandbox, const MemoryGroup& memory) {
    ChildOptions o;
    o.wall_seconds = seconds;
    limit_build_memory(o, memory);
    o.output_cap = 1 << 20;
    SandboxView view;
    view.read_only = {object};
    // a shared object's dynamic imports, or an object file's undefined symbols
    std::vector<std::string> command{"nm", "--undefined-only", object};
    if (object.size() > 3 && object.compare(object.size() - 3, 3, ".so") == 0)
        command.insert(command.begin() + 1, "-D");
    auto nm = run_contained(sandbox, command, o, view);
    if (!nm.exited_ok()) return std::nullopt;  // no nm here: the source screen still ran
    std::istringstream lines(nm.out.head);
    std::string line;
    while (std::getline(lines, line)) {
        std::istringstream words(line);
        std::string word, name;
        while (words >> word) name = word;
        name = name.substr(0, name.find('@'));
        if (name == "dlopen" || name == "dlsym" || name == "dlmopen" || name == "dlvsym")
            return PolicyViolation{"no-dlopen", "the built file imports " + name +
                                                    ": a step may not load libraries itself"};
    }
    return std::nullopt;
}

}  // namespace

// A probe result cached in the state directory: the JSON object in `path` when it parses and
// `valid` accepts it.
std::optional<json> read_cached(const std::string& path,
                                const std::function<bool(const json&)>& valid) {
    bool ok = false;
    const std::string text = read_file(path, &ok);
    if (!ok) return std::nullopt;
    try {
        json j = json::parse(text);
        if (valid(j)) return j;
    } catch (const std::exception&) {
    }
    return std::nullopt;
}

std::uint64_t fresh_seed() {
    std::random_device rd;
    std::uint64_t seed = (std::uint64_t{rd()} << 32) ^ rd();
    seed ^= static_cast<std::uint64_t>(Clock::now().time_since_epoch().count());
    return seed;
}

Checker::Checker(CoursePaths paths, Manifest manifest, CheckOptions options)
    : paths_(std::move(paths)), manifest_(std::move(manifest)), options_(std::move(options)) {}

std::string Checker::nvcc() const {
    if (!options_.nvcc.empty()) return options_.nvcc;
    return configured_nvcc();  // setup.h: CUDALINGS_NVCC, the build's nvcc, or PATH
}

bool Checker::runs_on_gpu() { return !options_.emulate && gpu().present; }

const GpuInfo& Checker::gpu() {
    if (gpu_) return *gpu_;
    std::string cache = paths_.state_dir + "/gpu-probe.json";
    std::string signature = gpu_signature();
    GpuInfo info;
    json j;
    std::optional<json> cached;
    if (options_.use_cache)
        cached = read_cached(cache, [&](const json& c) {
            return c.value("signature", "") == signature && c.value("gpus", 0) > 0;
        });
    if (cached) {
        j = std::move(*cached);
    } else {
        ChildOptions o;
        o.wall_seconds = 60;
        std::vector<json> events;
        auto child = run_runner({paths_.runner(), "probe"}, o, events);
        if (!child.started) {
            info.error = "cannot start the runner (" + child.start_error + "): build it first";
            gpu_ = info;
            return *gpu_;
        }
        if (events.empty()) {
            info.error = "the GPU probe failed: " + describe_end(child, 0);
            gpu_ = info;
            return *gpu_;
        }
        j = events.front();
        j["signature"] = signature;
        if (j.value("gpus", 0) > 0 && make_dirs(paths_.state_dir))
            write_file_atomic(cache, j.dump() + "\n");
    }
    const ProbeEvent probe = j.get<ProbeEvent>();
    info.present = probe.gpus > 0;
    info.name = probe.name;
    info.arch = probe.arch;
    info.uuid = probe.uuid;
    info.sms = probe.sms;
    info.error = probe.message;
    gpu_ = info;
    return *gpu_;
}

double Checker::gpu_rate(const std::string& command, const std::string& event,
                         const std::string& field, const std::string& name,
                         const std::string& what) {
    const GpuInfo& g = gpu();
    if (!g.present) return 0;
    std::string cache =
        paths_.state_dir + "/" + name + "-" + (g.uuid.empty() ? "gpu" : g.uuid) + ".json";
    if (options_.use_cache) {
        auto cached = read_cached(cache, [&](const json& c) { return c.value(field, 0.0) > 0; });
        if (cached) return cached->value(field, 0.0);
    }
    say("measuring this GPU's " + what + " (once per GPU)");
    ChildOptions o;
    o.wall_seconds = 60;
    std::vector<json> events;
    run_runner({paths_.runner(), command}, o, events);
    double rate = 0;
    for (const auto& e : events) {
        if (e.value("event", "") != event) continue;
        rate = e.value(field, 0.0);
        if (rate > 0 && make_dirs(paths_.state_dir)) write_file_atomic(cache, e.dump() + "\n");
    }
    return rate;
}

double Checker::copy_bandwidth_gbps() {
    if (!copy_gbps_)
        copy_gbps_ = gpu_rate("copy-bandwidth", CopyBandwidthEvent::kEvent, "gbps",
                              "copy-bandwidth", "copy bandwidth");
    return *copy_gbps_;
}

double Checker::fp32_gflops() {
    if (!fp32_gflops_)
        fp32_gflops_ =
            gpu_rate("fp32-rate", Fp32RateEvent::kEvent, "gflops", "fp32-rate", "FP32 rate");
    return *fp32_gflops_;
}

void Checker::add_yardsticks(std::vector<TimingResult>& timings) {
    if (timings.empty()) return;
    const double copy = copy_bandwidth_gbps();
    for (auto& t : timings) {
        t.copy_gbps = copy;
        if (t.fp32_ops > 0) t.fp32_gflops = fp32_gflops();
    }
}

bool Checker::compile(const LessonInfo& lesson, const StepInfo& step, const std::string& source,
                      bool solution_file, StepReport& report, std::string& object,
                      const std::function<void(const std::string&)>& while_building) {
    CompileRequest request = compile_request(lesson, source);
    std::string key = compile_cache_key(request, file_identity(which(request.nvcc)),
                                        headers_in(request.include_dirs));
    std::string dir = paths_.state_dir + "/build";
    const std::string suffix(output_suffix(request.made));
    object = dir + "/" + key + suffix;
    std::string log = dir + "/" + key + ".log";
    if (options_.use_cache && ::access(object.c_str(), R_OK) == 0) {
        report.compile_cached = true;
        bool ok = false;
        std::string output = read_file(log, &ok);
        report.diagnostics = parse_compiler_output(output);
        return true;
    }
    // The machine's problems are SETUP_ERROR, never the learner's (checker/core/course/setup.h).
    if (auto problem = unsupported_architecture(request.nvcc, request.arch)) {
        set_setup_error(report, *problem);
        return false;
    }
    if (!make_dirs(dir)) {
        set_setup_error(report, cannot_create_directory(dir, errno));
        return false;
    }
    // sandbox: the build writes into a directory of its own (removed with it), the only place
    // its sandbox may write; the object moves into the cache once it is accepted.
    PrivateDir work(dir);
    if (!work.ok()) {
        report.verdict = Verdict::InternalError;
        report.reason = "cannot create a build directory in " + dir;
        return false;
    }
    std::string temporary = work.path() + "/" + key + suffix;
    request.output = temporary;
    const SandboxView view = build_view(request.include_dirs, source, work.path(), {request.nvcc});
    const Sandbox* sandbox = options_.sandbox.get();
    ChildOptions o = build_limits(options_.compile_seconds);
    o.output_cap = 64 * 1024;
    const MemoryGroup build_memory(kBuildMemoryLimit);  // nvcc's, the screen's and nm's
    limit_build_memory(o, build_memory);
    say("compiling " + source);
    if (while_building) while_building(object);
    auto start = Clock::now();
    const auto build_deadline = after_seconds(o.wall_seconds);
    // The policy screen reads the preprocessed file (device and host views) nvcc built.
    PolicyRules rules;
    rules.forbidden_libraries = step.forbid;
    rules.screened_dirs = {paths_.root};
    if (!solution_file) rules.forbidden_dirs.push_back(paths_.root + "/solutions");
    for (const std::string& top : {std::string(CUDALINGS_SOURCE_DIR), paths_.root})
        for (const char* part : {"/checker", "/checks"}) rules.forbidden_dirs.push_back(top + part);
    rules.forbidden_dirs.push_back(paths_.tool_dir);
    // What a graded copy's steps may not include (the instructor's course): not the reference,
    // which is the instructor's solution.
    if (!solution_file)
        rules.forbidden_dirs.insert(rules.forbidden_dirs.end(), options_.forbidden_dirs.begin(),
                                    options_.forbidden_dirs.end());
    if (!paths_.include_root.empty()) rules.allowed_dirs.push_back(paths_.lessons_root());
    // nvcc keeps its preprocessed files for the screen (screen_build) in the build's folder:
    // not in the command of the cache key, whose flags name no folder.
    std::vector<std::string> command = nvcc_command(request);
    command.insert(command.begin() + 1, {"-keep", "-keep-dir", work.path()});
    auto child = run_contained(sandbox, command, o, view);
    // A view nvcc did not keep, preprocessed on its own: nvcc -E with the build's limits.
    const auto preprocess = [&](bool host) -> std::optional<std::string> {
        const std::string out = temporary + (host ? ".host.ii" : ".device.ii");
        auto cmd = preprocess_command(request.nvcc, request.source, request.include_dirs, out);
        cmd.insert(cmd.begin() + 1, std::string("-arch=") + (request.arch.empty()
                                                                  ? std::string(kCompileOnlyArch)
                                                                  : request.arch));
        if (host) cmd.insert(cmd.begin() + 1, "-Xcompiler=-U__CUDA_ARCH__");
        ChildOptions p = build_limits(options_.compile_seconds);
        p.wall_seconds = seconds_until(build_deadline);
        limit_build_memory(p, build_memory);
        auto pass = run_contained(sandbox, cmd, p, view);
        bool ok = false;
        std::string text = read_file(out, &ok);
        if (!pass.exited_ok() || !ok) return std::nullopt;
        return text;
    };
    std::optional<PolicyViolation> violation =
        screen_build(work.path(), request.include_dirs, rules, child, preprocess);
    // A library loaded behind the checker's back shows in the built file's imports, however
    // the source spelled it (asm labels, strings). It counts against the build's time limit.
    // (nvcc's front ends alone make no object: the emulator's build is screened instead,
    // Checker::screen_emulated_imports.)
    if (!violation && child.exited_ok() && request.made != CompileRequest::Makes::FrontEnds)
        violation = screen_imports(temporary, seconds_until(build_deadline), sandbox, build_memory);
    report.compile_seconds = seconds_since(start);
    // A build that does not become the cached object leaves no file behind.
    const auto discard = [&temporary] {
        std::error_code ec;
        fs::remove(temporary, ec);
    };
    if (violation) {
        discard();
        report.verdict = Verdict::Rejected;
        report.reason = violation->rule + ": " + violation->detail;
        report.compiler_output.clear();
        return false;
    }
    std::string output = child.err.head + child.out.head;
    report.compiler_output = output;
    report.diagnostics = parse_compiler_output(output);
    if (!child.started) {
        set_setup_error(report, cannot_run("nvcc", request.nvcc, child.start_error));
        return false;
    }
    if (child.timed_out) {
        discard();
        report.verdict = Verdict::CompileError;
        report.reason = "nvcc did not finish within " + std::to_string(int(o.wall_seconds)) +
                        " s (it was waiting, not compiling)";
        return false;
    }
    if (!child.exited_ok() && cpu_limit_hit(child)) {
        discard();
        report.verdict = Verdict::CompileError;
        report.reason = "nvcc did not finish: one of its compiler processes used more than " +
                        std::to_string(int(options_.compile_seconds)) +
                        " s of CPU time (the compile time limit)";
        return false;
    }
    bool have_object = child.exited_ok() && ::access(temporary.c_str(), R_OK) == 0;
    if (!have_object) {
        discard();
        // The build's own memory limit stopped it: the file's doing, not the machine's (whose
        // lack of memory kills a compiler the same way).
        const bool own_limit =
            child.memory_limit_hit || (child.address_space_limited && said_out_of_memory(output));
        if (auto problem = setup_problem_in_build_output(output); problem && !own_limit) {
            set_setup_error(report, *problem);
            return false;
        }
        report.verdict = Verdict::CompileError;
        Diagnostic first = first_error(report.diagnostics);
        const std::string gib = std::to_string(kBuildMemoryLimit >> 30);
        report.reason =
            child.memory_limit_hit
                ? "the build exceeded its memory limit (" + gib +
                      " GiB for nvcc, everything it starts and the screen together)"
            : own_limit
                ? "the build ran out of memory (" + gib +
                      " GiB for each process of nvcc's: this machine has no memory cgroup for it)"
            : first.message.empty() ? "nvcc failed"
                                    : first.message;
        return false;
    }
    std::error_code ec;
    // The front ends' output is the host code, preprocessed (megabytes): nothing reads it, and
    // the cache keeps only the fact that nvcc accepted the file (and its log).
    if (request.made == CompileRequest::Makes::FrontEnds) fs::resize_file(temporary, 0, ec);
    fs::rename(temporary, object, ec);
    write_file_atomic(log, output);
    // Only warnings stay in the report of a successful build.
    report.compiler_output.clear();
    return true;
}

CompileRequest Checker::compile_request(const LessonInfo& lesson, const std::string& source) {
    CompileRequest request;
    request.nvcc = nvcc();
    request.source = source;
    request.include_dirs = {paths_.lesson_dir(lesson), paths_.common_dir()};
    const GpuInfo& g = gpu();
    request.arch = g.present ? g.arch : "";
    // Without a GPU nothing loads it: the emulator builds its own (CompileRequest::made).
    if (!g.present) {
        bool ok = false;
        request.made = emulation_blocker(read_file(source, &ok)).empty()
                           ? CompileRequest::Makes::FrontEnds
                           : CompileRequest::Makes::ObjectFile;
    }
    return request;
}

EmulatedBuild Checker::emulated_build(std::vector<std::string> include_dirs,
                                      const std::string& source) const {
    EmulatedBuild b;
    b.rewriter = paths_.tool_dir + "/cudalings-emu-rewrite";
    b.cxx = host_compiler();
    b.emulator_include = emulator_include_dir(paths_.tool_dir);
    b.cuda_include = cuda_include_dir();
    b.include_dirs = std::move(include_dirs);
    b.source = source;
    return b;
}

ChecksToolchain Checker::toolchain(bool emulated) {
    ChecksToolchain t;
    t.nvcc = nvcc();
    if (!emulated && gpu().present) t.arch = gpu().arch;
    t.emulator = emulated_build({}, "");
    t.kit_dir = paths_.kit_dir();
    t.runner_identity = file_identity(emulated ? emulated_runner() : paths_.runner());
    t.cache_dirs = {paths_.tool_dir + "/checks-cache", paths_.state_dir + "/checks"};
    if (const char* dir = std::getenv("CUDALINGS_CHECKS_CACHE"))
        t.cache_dirs.insert(t.cache_dirs.begin(), dir);
    t.seconds = std::max(300.0, options_.compile_seconds);
    return t;
}

std::string Checker::lesson_checks(const LessonInfo& lesson, bool emulated, bool baselines,
                                   std::string* error) {
    const std::string source =
        paths_.checks_dir(lesson) + (baselines ? "/baselines.cu" : "/checks.cu");
    if (::access(source.c_str(), R_OK) != 0) {
        *error = "the lesson has no " + source;
        return {};
    }
    const ChecksToolchain t = toolchain(emulated);
    say(std::string("building the checks of ") + lesson.id + (emulated ? " for the emulator" : "") +
        (baselines ? " (library baselines)" : "") + " — once, then cached");
    ChecksBuild b = build_checks(t, source, {paths_.lesson_dir(lesson), paths_.common_dir()},
                                 emulated, baselines);
    if (!b.error.empty()) *error = b.error;
    return b.object;
}

std::string Checker::lesson_shims(const LessonInfo& lesson, const std::string& checks,
                                  bool emulated, std::string* error) {
    // The checks' own cache key names the shims: the same checks, the same headers.
    const std::string object = checks + ".shims.so";
    if (::access(object.c_str(), R_OK) == 0) return object;
    // The entry points: what the checks themselves say (`runner list`).
    std::vector<json> events;
    ChildOptions o;
    o.wall_seconds = 60;
    const auto child = run_runner(
        {emulated ? emulated_runner() : paths_.runner(), "list", "--checks", checks}, o, events);
    std::vector<std::string> symbols;
    for (const auto& e : events)
        if (e.value("event", "") == ChecksListing::kEvent)
            for (const auto& p : e.get<ChecksListing>().problems)
                if (std::find(symbols.begin(), symbols.end(), p.symbol) == symbols.end())
                    symbols.push_back(p.symbol);
    if (symbols.empty()) {
        *error = "cannot list the entry points of the lesson's checks: " + describe_end(child, 0);
        return {};
    }
    // Every header of the lesson declares its entry points; the shims take their types only.
    std::string source = "// Generated by cudalings: the call shims of " + lesson.id +
                         " (checker/kit/shim.h), for the learner's process.\n#include \"shim.h\"\n";
    for (const auto& header : headers_in({paths_.lesson_dir(lesson)}))
        source += "#include \"" + fs::path(header).filename().string() + "\"\n";
    for (const auto& symbol : symbols) source += "CUDALINGS_SHIM(" + symbol + ");\n";
    const std::string temporary = object + ".tmp." + std::to_string(::getpid());
    write_file_atomic(temporary + ".cu", source);
    const std::vector<std::string> include_dirs{paths_.kit_dir(), paths_.lesson_dir(lesson),
                                                paths_.common_dir()};
    // For a GPU with nvcc; for the emulator as a learner's file is built for it (no kernels, so
    // no instrumentation).
    std::vector<std::vector<std::string>> commands;
    if (emulated) {
        EmulatedBuild b = emulated_build(include_dirs, temporary + ".cu");
        b.rewritten = temporary + ".cpp";
        b.object = temporary + ".o";
        b.output = temporary;
        b.instrument = false;
        b.optimize = false;
        commands = emulated_build_commands(b);
    } else {
        CompileRequest r;
        r.nvcc = nvcc();
        r.source = temporary + ".cu";
        r.include_dirs = include_dirs;
        r.arch = gpu().arch;
        r.output = temporary;
        commands = {nvcc_command(r)};
    }
    ChildOptions build;
    build.wall_seconds = std::max(300.0, options_.compile_seconds);
    build.output_cap = 64 * 1024;
    say("building the call shims of " + lesson.id + " — once, then cached");
    ChildResult built;
    for (const auto& command : commands)
        if (!(built = run_supervised(command, build)).exited_ok()) break;
    std::error_code ec;
    if (built.exited_ok()) fs::rename(temporary, object, ec);
    for (const char* suffix : {".cu", ".cpp", ".o"}) fs::remove(temporary + suffix, ec);
    if (!built.exited_ok() || ::access(object.c_str(), R_OK) != 0) {
        fs::remove(temporary, ec);
        *error = "the call shims of " + lesson.id +
                 " do not build: " + (built.err.head + built.out.head).substr(0, 600);
        return {};
    }
    return object;
}

ChecksContents Checker::inspect_checks(const LessonInfo& lesson) {
    ChecksContents out;
    auto list = [&](const std::string& runner, const std::string& checks,
                    const std::string& baselines) -> std::optional<ChecksListing> {
        std::vector<std::string> argv{runner, "list", "--checks", checks};
        if (!baselines.empty()) argv.insert(argv.end(), {"--baselines", baselines});
        ChildOptions o;
        o.wall_seconds = 60;
        std::vector<json> events;
        const auto child = run_runner(argv, o, events);
        for (const auto& e : events) {
            if (e.value("event", "") == ChecksListing::kEvent) return e.get<ChecksListing>();
            if (is(e.value("event", ""), Message::InternalError)) out.error = e.get<MessageEvent>().message;
        }
        if (out.error.empty())
            out.error = "cannot list the lesson's checks: " + describe_end(child, 0);
        return std::nullopt;
    };
    std::string error;
    const std::string emulated = lesson_checks(lesson, true, false, &error);
    const std::string gpu = emulated.empty() ? "" : lesson_checks(lesson, false, false, &error);
    const bool has_baselines =
        ::access((paths_.checks_dir(lesson) + "/baselines.cu").c_str(), R_OK) == 0;
    const std::string baselines =
        gpu.empty() || !has_baselines ? "" : lesson_checks(lesson, false, true, &error);
    if (gpu.empty() || (has_baselines && baselines.empty())) {
        out.error = error;
        return out;
    }
    const auto on_emulator = list(emulated_runner(), emulated, "");
    const auto on_gpu = on_emulator ? list(paths_.runner(), gpu, baselines) : std::nullopt;
    if (!on_emulator || !on_gpu) return out;
    for (const auto& p : on_emulator->problems) out.problems.push_back(p.name);
    std::vector<std::string> gpu_problems;
    for (const auto& p : on_gpu->problems) gpu_problems.push_back(p.name);
    if (gpu_problems != out.problems)
        out.error =
            "the lesson's checks define other problems for the GPU than for the emulator "
            "(#ifdef in checks.cu? library code belongs in baselines.cu)";
    out.baselines = on_gpu->baselines;
    return out;
}

std::string Checker::emulated_runner() const { return paths_.tool_dir + "/cudalings-runner-emu"; }

std::string Checker::reference(const LessonInfo& lesson, const StepInfo& step) {
    StepReport scratch;
    std::string object;
    say("building the reference solution (once per step and GPU)");
    if (!compile(lesson, step, paths_.step_file(lesson, step, true), true, scratch, object))
        return {};
    return object;
}

std::vector<std::string> Checker::runner_argv([[maybe_unused]] const LessonInfo& lesson,
                                              const StepInfo& step, const std::string& checks,
                                              const std::string& object, const StepReport& report,
                                              int first_case, bool first_child) const {
    std::vector<std::string> argv{paths_.runner(), "check",
                                  "--checks",      checks,
                                  "--problem",     step.problem,
                                  "--step",        object,
                                  "--seed",        format_seed(report.seed),
                                  "--first-case",  std::to_string(first_case)};
    const std::string& reference = reference_;
    bool has_reference = !reference.empty() && ::access(reference.c_str(), R_OK) == 0;
    bool want_timing = options_.timing && step.timed;
    if (emulating_) {  // cudalings emulator: its runner, small cases, no timing
        argv[0] = emulated_runner();
        argv.insert(argv.end(),
                    {"--max-n", std::to_string(kEmulatedMaxN), "--large-n",
                     std::to_string(emulated_large_n(step.emulated_values_up_to))});
        want_timing = has_reference = false;
    }
    if (has_reference) argv.insert(argv.end(), {"--reference", reference});
    if (!shims_.empty())
        argv.insert(argv.end(), {"--learner",
                                 paths_.tool_dir +
                                     (emulating_ ? "/cudalings-learner-emu" : "/cudalings-learner"),
                                 "--shims", shims_});
    if (want_timing && first_child) argv.push_back("--time");
    if (step.timed_size) argv.insert(argv.end(), {"--timed-size", std::to_string(step.timed_size)});
    return argv;
}

ChildOptions Checker::runner_options() const {
    ChildOptions o;
    o.wall_seconds = options_.runner_seconds;
    o.channel_idle_seconds = options_.case_idle_seconds;
    o.output_cap = 8 * 1024;
    o.memory_limit = options_.host_memory_limit;
    // The emulator's own limit is CPU time: so is this one (a busy machine must not turn a
    // correct kernel into a TIMEOUT before the emulator can call it slow).
    o.idle_in_cpu_time = emulating_;
    if (emulating_)
        o.env = emulated_environment(options_.seed,
                                     options_.explain ? "explain"
                                     : goal_pictures_ ? "pictures"
                                                      : "check",
                                     options_.case_idle_seconds / 2);
    return o;
}

std::map<std::string, std::string> Checker::emulated_environment(std::uint64_t seed,
                                                                 const std::string& mode,
                                                                 double time_limit) const {
    // Blocks in a shuffled order, several resident at a time: a step that relies on the order
    // blocks happen to start in, or on blocks running one at a time, shows it. A case still
    // running after the time limit is reported by the emulator (too slow to emulate, or a
    // thread that never ends, with its line) before the checker's no-progress limit. The first
    // block of each launch is held back after its first global atomic (its ticket) until the
    // others wait or end: a tile that takes an empty status word for 0 shows.
    return {{"CUDALINGS_EMU_MODE", mode},
            {"CUDALINGS_EMU_BLOCK_ORDER", "shuffle"},
            {"CUDALINGS_EMU_RESIDENT", "4"},
            {"CUDALINGS_EMU_HOLD_BACK", "1"},
            {"CUDALINGS_EMU_SEED", format_seed(seed)},
            {"CUDALINGS_EMU_TIME_LIMIT", format_number(time_limit, 6)}};
}

// What one runner process said, folded into the report; returns the case in progress when the
// process ended inside one (-1 otherwise), and whether it said "done".
int Checker::read_events(const std::vector<json>& events, bool first_child, StepReport& report,
                         std::map<int, CaseResult>& cases, int& total, int& next_case,
                         std::string& phase, bool& done) {
    int in_progress = -1;
    double t_cases = -1, t_timing = -1;
    for (const auto& e : events) {
        const std::string kind = e.value("event", "");
        const double t = e.value("t_ms", 0.0);
        if (kind == CasesEvent::kEvent) {
            t_cases = t;
            if (first_child) report.runner_startup_ms = t;
            const auto c = e.get<CasesEvent>();
            total = c.total;
            report.problem = c.problem;
            report.advice_by_verdict = c.advice;
            report.sampled_values = c.sampled_values;
        } else if (kind == CaseStartEvent::kEvent) {
            const auto c = e.get<CaseStartEvent>();
            in_progress = c.index;
            phase = "setup";
            CaseResult r;
            r.index = c.index;
            r.name = c.name;
            r.n = c.n;
            r.size = c.size;
            cases[c.index] = r;
        } else if (is(kind, Marker::StepLoading)) {
            phase = "loading";
        } else if (is(kind, Marker::StepLoaded)) {
            phase = "loaded";
        } else if (is(kind, Marker::CallStart)) {
            phase = "call";
        } else if (is(kind, Marker::CallEnd)) {
            phase = "sync";
        } else if (kind == CaseResult::kEvent) {
            CaseResult r = e.get<CaseResult>();
            if (r.verdict == Verdict::Wrong && r.detail.empty())
                r.detail = describe_mismatches({r.checked ? r.checked : r.n, r.wrong, r.unwritten,
                                                r.first_wrong, r.last_wrong});
            next_case = r.index + 1;
            cases[r.index] = std::move(r);
            in_progress = -1;
        } else if (kind == AbortEvent::kEvent) {
            in_progress = -1;  // a sticky CUDA error: the next process starts fresh
        } else if (is(kind, Marker::TimingStart)) {
            t_timing = t;
            phase = "timing";
        } else if (is(kind, Marker::Tick)) {
            phase = "timing";
        } else if (kind == TimingResult::kEvent) {
            TimingResult r = e.get<TimingResult>();
            report.timing_ms = t - t_timing;
            report.timings.push_back(std::move(r));
        } else if (kind == TimingErrorEvent::kEvent) {
            const auto te = e.get<TimingErrorEvent>();
            report.timing_verdict = Verdict::Crash;
            report.timing_error = te.reason + " — " + te.detail;
            done = true;
        } else if (is(kind, Message::Warning)) {
            // What the runner could not do and went on without (the reference's process did not
            // start: the step is timed alone), said with the report rather than dropped.
            report.notes.push_back(e.get<MessageEvent>().message);
        } else if (is(kind, Message::LoadError)) {
            report.load_error = e.get<MessageEvent>().message;
        } else if (is(kind, Message::InternalError)) {
            report.internal_error = e.get<MessageEvent>().message;
        } else if (is(kind, Marker::Done)) {
            done = true;
            report.runner_done_ms = t;
        }
        if ((is(kind, Marker::TimingStart) || is(kind, Marker::Done)) && t_cases >= 0 && report.cases_ms == 0)
            report.cases_ms = t - t_cases;
    }
    return in_progress;
}

void Checker::run(const LessonInfo& lesson, const StepInfo& step, const std::string& object,
                  StepReport& report, std::future<RunnerRun>* first) {
    std::string error;
    const std::string checks = lesson_checks(lesson, emulating_, false, &error);
    if (checks.empty()) {
        report.internal_error = error;
        return;
    }
    int total = -1;
    int next_case = 0;
    int forged_lines = 0;
    std::map<int, CaseResult> cases;
    bool reran_early_end = false;  // the runner ended before anything of the learner's loaded
    const int max_children = 4;
    // CheckOptions::first_failure: an emulated check ends with its first failing case.
    const bool stop_at_failure = emulating_ && options_.first_failure;
    std::function<bool(const json&)> failing_case;
    if (stop_at_failure)
        failing_case = [](const json& e) {
            if (e.value("event", "") != CaseResult::kEvent) return false;
            const std::string verdict = e.value("verdict", "PASS");
            return verdict != "PASS" && verdict != "SKIPPED";
        };
    std::string not_run = "not run: an earlier case crashed or hung";
    const auto a_case_failed = [&] {
        return std::any_of(cases.begin(), cases.end(), [](const auto& c) {
            return c.second.verdict != Verdict::Pass && c.second.verdict != Verdict::Skipped;
        });
    };
    // A case inside which its runner process ended: a crash, a hang, or the memory limit.
    const auto blame_case = [&](CaseResult& c, const ChildResult& child, const std::string& phase) {
        c.verdict = child.timed_out ? Verdict::Timeout : Verdict::Crash;
        if (child.memory_limit_hit) {
            c.verdict = Verdict::MemoryError;
            c.reason = "host memory limit (" + std::to_string(options_.host_memory_limit >> 30) +
                       " GiB) exceeded";
        } else if (child.timed_out)
            c.reason = phase == "call" ? "host code did not return" : "kernel did not finish";
        else
            c.reason = describe_exit(child.signal, child.exit_code);
        c.detail = child.memory_limit_hit
                       ? "the process used more host memory than a step may: it was killed"
                       : describe_end(child, options_.case_idle_seconds);
    };
    const auto stop_here = [&] {
        report.stopped_early = true;
        not_run = "not run: the check stopped at the first failing case";
        report.notes.push_back(
            "the check stopped at the first failing case (as watch does); --all-cases runs "
            "every case");
    };
    // Under emulation the larger sizes (the values-only case, then the launches-only sizes)
    // run in a second runner process beside the small cases: the CPU's second core, and a
    // check that ends sooner. Their results count only when every smaller case passed, as when
    // one process ran them last. Not in a sandbox (`grade` runs several checks at once
    // already). With the judge split each of the two judges has a learner's process of its own.
    const bool larger_apart = emulating_ && !options_.sandbox;
    auto stop_larger = std::make_shared<std::atomic<bool>>(false);
    std::future<RunnerRun> larger;
    if (larger_apart) {
        auto argv = runner_argv(lesson, step, checks, object, report, 0, true);
        argv.insert(argv.end(), {"--larger", "only"});
        ChildOptions o = runner_options();
        o.cancel = stop_larger.get();
        const SandboxView view = runner_view(argv, false);
        larger = std::async(std::launch::async, [argv, o, view] {
            RunnerRun r;
            r.child = run_runner(argv, o, r.events, &r.forged, nullptr, view, true);
            return r;
        });
    }
    // Whatever way this ends, the larger sizes' process is not waited for longer than it takes
    // to stop it (a future of std::async waits for its task when it goes).
    struct StopOnExit {
        std::atomic<bool>* flag;
        ~StopOnExit() { flag->store(true); }
    } stop_larger_on_exit{stop_larger.get()};
    for (int child_index = 0; child_index < max_children; ++child_index) {
        say(child_index == 0 ? "running the cases"
                             : "running the remaining cases in a fresh process");
        RunnerRun r;
        auto argv = runner_argv(lesson, step, checks, object, report, next_case, child_index == 0);
        if (larger_apart) argv.insert(argv.end(), {"--larger", "defer"});
        if (child_index == 0 && first && first->valid())
            r = first->get();  // started during the build, with these same arguments
        else
            r.child =
                run_runner(argv, runner_options(), r.events, &r.forged, options_.sandbox.get(),
                           runner_view(argv, !emulating_), true, failing_case);
        const ChildResult& child = r.child;
        forged_lines += r.forged;
        if (!child.started) {
            set_setup_error(report, cannot_run("the runner", argv[0], child.start_error));
            return;
        }
        report.runner_ms += 1000 * child.wall_seconds;
        std::string phase;  // "call" while the learner's host function runs, "sync" after
        bool done = false;
        const int in_progress =
            read_events(r.events, child_index == 0, report, cases, total, next_case, phase, done);
        if (done) report.runner_exit_ms += 1000 * child.wall_seconds - report.runner_done_ms;
        if (!report.load_error.empty()) return;
        if (!report.internal_error.empty() && in_progress < 0 && total < 0) return;
        if (child.cancelled && stop_at_failure && a_case_failed()) {
            // Stopped at its first failing case: the case it had begun is not run, not blamed.
            if (in_progress >= 0) cases.erase(in_progress);
            stop_here();
            break;
        }
        if (in_progress >= 0) {
            // The process ended inside a case: that case gets the blame.
            blame_case(cases[in_progress], child, phase);
            next_case = in_progress + 1;
        } else if (phase == "timing" && !done) {
            report.timings.clear();
            report.timing_verdict = child.timed_out ? Verdict::Timeout : Verdict::Crash;
            report.timing_error = describe_end(child, options_.case_idle_seconds);
        } else if (!done && total < 0 && (phase == "loading" || phase == "loaded") &&
                   !child.timed_out && !child.memory_limit_hit) {
            // The learner's own code ended the process while it was being loaded, or right
            // after (nothing of the checker's runs between loading and the cases' list).
            CaseResult c = ended_around_loading(phase == "loaded",
                                                describe_exit(child.signal, child.exit_code));
            if (phase == "loading" && !child.err.head.empty())
                c.detail += "\nyour program's output (stderr):\n" + child.err.head.substr(0, 400);
            cases[0] = c;
            total = 1;
            break;
        } else if (!done && total < 0) {
            // Before anything of the learner's was loaded: the checker's own trouble, or the
            // machine's. Once more before it is called that (a GPU that was busy starting
            // another context, say); the grader's paths and the runner's output stay out of
            // the text a learner reads.
            if (!reran_early_end) {
                reran_early_end = true;
                report.notes.push_back("the checker's runner ended before its first case (" +
                                       describe_end(child, options_.case_idle_seconds) +
                                       "): run once more");
                continue;
            }
            report.internal_error = "the checker's runner ended twice before its first case: " +
                                    describe_end(child, options_.case_idle_seconds);
            return;
        }
        // A hang is almost always in every case: one timeout is enough, do not wait for more.
        if (done || total < 0 || next_case >= total || child.timed_out) break;
        // A case that crashed its process is a failing case too: no fresh process for the rest.
        if (stop_at_failure && a_case_failed()) {
            stop_here();
            break;
        }
    }
    if (larger.valid()) {
        // The larger sizes count only after every smaller case passed; else they are stopped.
        const bool wanted = !a_case_failed() && !report.stopped_early &&
                            report.load_error.empty() && report.internal_error.empty();
        if (!wanted) stop_larger->store(true);
        RunnerRun r = larger.get();
        if (wanted && r.child.started) {
            std::string phase;
            bool done = false;
            int after = 0;
            const double done_ms = report.runner_done_ms;
            std::map<int, CaseResult> more;
            const int in_progress =
                read_events(r.events, false, report, more, total, after, phase, done);
            report.runner_done_ms = done_ms;
            forged_lines += r.forged;
            // It ended inside a case: that case gets the blame, as in one process.
            if (in_progress >= 0) blame_case(more[in_progress], r.child, phase);
            for (auto& [index, c] : more)
                if (!cases.count(index)) cases[index] = std::move(c);
        } else {
            // Named as far as the process got before it was stopped.
            const std::string reason =
                report.stopped_early ? not_run : "not run: a smaller case already failed";
            for (const auto& e : r.events) {
                if (e.value("event", "") != CaseStartEvent::kEvent) continue;
                const auto start = e.get<CaseStartEvent>();
                if (cases.count(start.index)) continue;
                CaseResult c;
                c.index = start.index;
                c.name = start.name;
                c.n = start.n;
                c.size = start.size;
                c.verdict = Verdict::Skipped;
                c.reason = reason;
                cases[start.index] = c;
            }
            if (!report.stopped_early && a_case_failed()) not_run = reason;
        }
    }
    // Cases never reached (too many crashes) are listed as not run.
    for (int i = 0; i < total; ++i) {
        if (cases.count(i)) continue;
        CaseResult c;
        c.index = i;
        c.name = "case " + std::to_string(i);
        c.verdict = Verdict::Skipped;
        c.reason = not_run;
        cases[i] = c;
    }
    for (auto& [index, c] : cases) report.cases.push_back(c);
    add_yardsticks(report.timings);
    if (forged_lines > 0)
        report.notes.push_back(std::to_string(forged_lines) +
                               " unauthenticated line(s) on the result channel were ignored");
}

Checker::BaselineTiming Checker::time_baseline(const LessonInfo& lesson,
                                               const BaselineInfo& baseline) {
    BaselineTiming result;
    if (!gpu().present) {
        result.error = "no GPU";
        return result;
    }
    std::string error;
    const std::string checks = lesson_checks(lesson, false, false, &error);
    const std::string baselines = checks.empty() ? "" : lesson_checks(lesson, false, true, &error);
    if (baselines.empty()) {
        result.error = error;
        return result;
    }
    say("timing " + baseline.title);
    ChildOptions o;
    o.wall_seconds = options_.runner_seconds;
    o.channel_idle_seconds = options_.case_idle_seconds;
    std::vector<json> events;
    auto child = run_runner(
        {paths_.runner(), "baseline", "--checks", checks, "--baselines", baselines, "--problem",
         baseline.problem, "--name", baseline.name, "--seed", format_seed(options_.seed)},
        o, events);
    for (const auto& e : events) {
        const std::string kind = e.value("event", "");
        if (kind == TimingResult::kEvent) {
            TimingResult t = e.get<TimingResult>();
            if (!t.verified) result.error = "its output did not verify";
            result.timings.push_back(std::move(t));
        } else if (is(kind, Message::InternalError)) {
            result.error = e.get<MessageEvent>().message;
        }
    }
    result.ok = !result.timings.empty() && result.error.empty();
    if (result.timings.empty() && result.error.empty())
        result.error = describe_end(child, options_.case_idle_seconds);
    add_yardsticks(result.timings);
    return result;
}

void Checker::sanitize(const LessonInfo& lesson, const StepInfo& step, const std::string& object,
                       StepReport& report) {
    std::string sanitizer = find_sanitizer(which(nvcc()));
    if (sanitizer.empty()) {
        report.sanitizer_note = "compute-sanitizer not found (set CUDALINGS_SANITIZER): not run";
        return;
    }
    std::string error;
    const std::string checks = lesson_checks(lesson, false, false, &error);
    if (checks.empty()) {
        report.sanitizer_note = "not run: " + error;
        return;
    }
    for (const char* tool : kSanitizerTools) {
        say(std::string("compute-sanitizer --tool ") + tool);
        // Small cases, inputs sized exactly (no guard zones), so that a read one element past
        // an input lands in the sanitizer's padding.
        std::vector<std::string> program{paths_.runner(), "check",
                                         "--checks",      checks,
                                         "--problem",     step.problem,
                                         "--step",        object,
                                         "--seed",        format_seed(report.seed),
                                         "--max-n",       std::to_string(options_.sanitize_max_n),
                                         "--exact-inputs"};
        ChildOptions o;
        o.wall_seconds = options_.runner_seconds;
        o.channel_idle_seconds = 4 * options_.case_idle_seconds;  // the tools are slow
        o.output_cap = 256 * 1024;
        std::vector<json> events;
        auto command = sanitizer_command(sanitizer, tool, program);
        auto child = run_runner(command, o, events, nullptr, options_.sandbox.get(),
                                runner_view(command, true));
        if (!child.started) {
            report.sanitizer_note = "cannot run compute-sanitizer: " + child.start_error;
            return;
        }
        auto found = parse_sanitizer_output(child.out.head + child.err.head, tool, report.file);
        report.findings.insert(report.findings.end(), found.begin(), found.end());
        if (child.timed_out && report.sanitizer_note.empty())
            report.sanitizer_note = std::string(tool) + " did not finish in time";
    }
    if (report.findings.empty() && report.sanitizer_note.empty())
        report.sanitizer_note = "memcheck, racecheck, initcheck and synccheck found nothing";
}

Checker::Profiled Checker::profile(const StepRef& ref, bool solution_file, const std::string& ncu,
                                   const std::vector<std::string>& metrics,
                                   const std::string& column) {
    const LessonInfo& lesson = manifest_.lessons.at(ref.lesson);
    const StepInfo& step = lesson.steps.at(ref.step);
    Profiled out;
    out.build.step = step_name(manifest_, ref);
    out.build.file = paths_.step_file(lesson, step, solution_file);
    out.build.seed = options_.seed;
    if (::access(out.build.file.c_str(), R_OK) != 0) {
        out.build.verdict = Verdict::CompileError;
        out.build.reason = "the file " + out.build.file + " is missing or unreadable";
        return out;
    }
    std::string object;
    out.built = compile(lesson, step, out.build.file, solution_file, out.build, object);
    if (!out.built) {
        if (out.build.verdict == Verdict::SetupError)
            out.setup = SetupProblem{out.build.reason, "", ""};
        return out;
    }
    std::string error;
    const std::string checks = lesson_checks(lesson, false, false, &error);
    if (checks.empty()) {
        out.internal_error = error;
        return out;
    }
    const std::string dir = paths_.state_dir + "/profile";
    if (!make_dirs(dir)) {
        out.setup = cannot_create_directory(dir, errno);
        return out;
    }
    PrivateDir work(dir);
    if (!work.ok()) {
        out.setup = cannot_create_directory(dir, errno);
        return out;
    }
    const std::string log = work.path() + "/ncu.log";
    std::vector<std::string> program{
        paths_.runner(), "profile", "--checks", checks,   "--problem",
        step.problem,    "--step",  object,     "--seed", format_seed(options_.seed)};
    if (step.timed_size)
        program.insert(program.end(), {"--timed-size", std::to_string(step.timed_size)});
    if (!column.empty()) program.insert(program.end(), {"--column", column});
    say("ncu on one timed call of " + out.build.step);
    ChildOptions o;
    o.wall_seconds = std::max(600.0, options_.runner_seconds);  // ncu replays every kernel
    o.channel_idle_seconds = 0;
    o.output_cap = 256 * 1024;
    o.memory_limit = options_.host_memory_limit;
    std::vector<json> events;
    const auto command = ncu_command(ncu, metrics, log, program);
    const ChildResult child = run_runner(command, o, events);
    NcuRun ran = read_ncu_run(child, ncu, log);
    out.report = std::move(ran.report);
    if (ran.setup) {
        out.setup = ran.setup;
        return out;
    }
    bool calling = false;  // the runner got as far as the step's calls
    for (const auto& e : events) {
        const std::string kind = e.value("event", "");
        if (is(kind, Marker::TimingStart)) {
            calling = true;
        } else if (kind == ProfileCallEvent::kEvent) {
            out.call = e.get<ProfileCallEvent>();
        } else if (kind == TimingErrorEvent::kEvent) {
            const auto t = e.get<TimingErrorEvent>();
            out.learner_error = t.reason + ": " + t.detail;
        } else if (is(kind, Message::LoadError)) {
            out.learner_error = "cannot load the built step: " + e.get<MessageEvent>().message;
        } else if (is(kind, Message::UsageError)) {
            out.usage_error = e.get<MessageEvent>().message;
        } else if (is(kind, Message::InternalError)) {
            out.internal_error = e.get<MessageEvent>().message;
        }
    }
    const bool silent = !out.call && out.learner_error.empty() && out.usage_error.empty() &&
                        out.internal_error.empty();
    if (silent && calling && !child.timed_out) {
        // it died inside the step's own calls (a crash in its host code, an exit())
        out.learner_error = describe_end(child, 0);
    } else if (silent) {
        std::string said;
        for (const auto& line : out.report.errors) said += (said.empty() ? "" : "; ") + line;
        if (child.timed_out)
            said = "ncu did not finish within " + std::to_string(int(o.wall_seconds)) + " s";
        else if (said.empty())
            said = describe_end(child, 0) + (child.err.head.empty() ? "" : ": " + child.err.head);
        // ncu ran and the runner said nothing: the profiler's trouble, not the step's
        out.setup = SetupProblem{"ncu could not profile the step (" + said + ")",
                                 "`cudalings doctor` checks the tools; run the same step with "
                                 "`cudalings check` to see that it runs",
                                 "profile-ncu-failed"};
    }
    return out;
}

StepReport Checker::check(const StepRef& ref, bool solution_file) {
    auto start = Clock::now();
    const LessonInfo& lesson = manifest_.lessons.at(ref.lesson);
    const StepInfo& step = lesson.steps.at(ref.step);
    StepReport report;
    report.step = step_name(manifest_, ref);
    report.title = step.title;
    report.hint = step.hint;
    report.seed = options_.seed;
    report.problem = step.problem;
    report.file = paths_.step_file(lesson, step, solution_file);
    auto finish = [&]() -> StepReport {
        report.seconds = seconds_since(start);
        return report;
    };
    if (::access(report.file.c_str(), R_OK) != 0) {
        report.verdict = Verdict::CompileError;
        report.reason = "the file " + report.file + " is missing or unreadable";
        return finish();
    }
    // cudalings emulator: forced, or automatic without a GPU (correctness only, no timing).
    const bool emulating = !runs_on_gpu() && (options_.emulate || options_.emulate_without_gpu);
    // Nothing changed since the step's last emulated check: its report stands.
    if (emulating && options_.reuse_unchanged && !solution_file)
        if (auto stored = unchanged_report(lesson, step, report)) {
            stored->seconds = seconds_since(start);
            return *stored;
        }
    // The file as this check found it: a report is kept for reuse only if it did not change
    // while the check ran (a save in the middle of a `watch` check).
    const auto source_key = [&] {
        const CompileRequest r = compile_request(lesson, report.file);
        return compile_cache_key(r, file_identity(which(r.nvcc)), headers_in(r.include_dirs));
    };
    const std::string source_at_start = emulating && !solution_file ? source_key() : "";
    // The reference it is timed against: built when first needed, for this GPU, against the
    // course's own headers (cached like any build).
    reference_.clear();
    if (options_.timing && step.timed && runs_on_gpu()) reference_ = reference(lesson, step);
    std::string object;
    // While nvcc builds the step, the first runner is already starting CUDA; it waits for its
    // key before it loads anything (ChildOptions::hold). The build's end releases it, a failed
    // build kills it. On a cache hit there is no build to overlap. The lesson's checks are built
    // first (once, then cached): the early runner needs them.
    auto hold = std::make_shared<std::atomic<int>>(0);
    std::future<RunnerRun> first;
    std::string checks_error;
    const std::string checks =
        runs_on_gpu() ? lesson_checks(lesson, false, false, &checks_error) : std::string();
    shims_.clear();
    if (options_.judge_split && !checks.empty()) {
        shims_ = lesson_shims(lesson, checks, false, &checks_error);
        if (shims_.empty()) {
            report.internal_error = checks_error;
            return finish();
        }
    }
    auto start_first_runner = [&](const std::string& built_object) {
        if (!runs_on_gpu() || checks.empty()) return;
        auto argv = runner_argv(lesson, step, checks, built_object, report, 0, true);
        ChildOptions o = runner_options();
        o.hold = hold.get();
        // sandbox: the object does not exist yet when the runner starts, so its directory (the
        // build cache) is what the sandbox binds; the runner reads the object once released.
        const Sandbox* sandbox = options_.sandbox.get();
        SandboxView view = runner_view(argv, true);
        view.read_only.push_back(fs::path(built_object).parent_path().string());
        first = std::async(std::launch::async, [argv, o, hold, sandbox, view] {
            RunnerRun r;
            r.child = run_runner(argv, o, r.events, &r.forged, sandbox, view, true);
            return r;
        });
    };
    // The hazard pass builds the file for the emulator while nvcc builds it for the GPU, and
    // runs the small cases on the emulator while the GPU runs them all.
    std::promise<bool> nvcc_done;
    auto stop_hazards = std::make_shared<std::atomic<bool>>(false);
    std::future<HazardPass> hazards;
    if (options_.hazards && runs_on_gpu())
        hazards = std::async(std::launch::async, &Checker::hazard_pass, this, std::cref(lesson),
                             std::cref(step), report.file, nvcc_done.get_future().share(),
                             stop_hazards.get());
    // The emulator's build runs beside nvcc's, which decides whether the file compiles.
    auto stop_emulated = std::make_shared<std::atomic<bool>>(false);
    std::future<EmulatedObject> emulated;
    if (emulating)
        emulated = std::async(std::launch::async,
                              [this, &lesson, file = report.file, stop = stop_emulated] {
                                  quiet_ = true;  // the learner's progress line is nvcc's
                                  return emulated_object(lesson, file, stop.get());
                              });
    const bool built =
        compile(lesson, step, report.file, solution_file, report, object, start_first_runner);
    hold->store(built ? 1 : -1);
    // A file nvcc did not accept gets its verdict now: the emulator's builds stop.
    if (!built) {
        stop_hazards->store(true);
        stop_emulated->store(true);
    }
    nvcc_done.set_value(built);
    // (a held runner is killed; `first` and `emulated` wait for their threads)
    if (!built) return finish();
    const GpuInfo& g = gpu();
    if (emulating) {
        if (emulated.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
            say("building for the CPU emulator");
        const EmulatedObject built_for_cpu = emulated.get();
        if (!screen_emulated_imports(built_for_cpu, report)) return finish();
        run_emulated(lesson, step, built_for_cpu, report);
        if (report.verdict != Verdict::InternalError && report.verdict != Verdict::SetupError &&
            !solution_file && source_key() == source_at_start) {
            report.fingerprint = emulated_fingerprint(lesson, step, report.file);
            report.checked_at = checked_now();
        }
        // Say what could not be checked here rather than skip it silently.
        if (options_.sanitize)
            report.sanitizer_note =
                "compute-sanitizer needs a GPU: not run (the emulator's own "
                "race and bounds checks ran instead)";
        return finish();
    }
    if (!runs_on_gpu()) {
        report.verdict = Verdict::Skipped;
        report.reason = "it compiles; correctness and timing need an NVIDIA GPU (" +
                        (g.error.empty() ? std::string("none found") : g.error) + ")";
        return finish();
    }
    report.gpu = g.name;
    run(lesson, step, object, report, &first);
    if (options_.sanitize && report.internal_error.empty() && report.load_error.empty() &&
        report.verdict != Verdict::SetupError)
        sanitize(lesson, step, object, report);
    // After the sanitizer's: a tool the learner asked for speaks first.
    if (hazards.valid()) fold_hazards(report, hazards.get());
    conclude(report);
    return finish();
}

// ------------------------------------------------------------------ the hazard pass
// A GPU gives the right numbers for many racy kernels (a missing barrier, the volatile warp
// trick, lanes missing from a mask, a read one past the end that lands in padding): the GPU's
// verdict alone would call them correct. So a GPU check also runs the small cases on the CPU
// emulator, whose analysis sees the hazard itself, and a hazard is MEMORY_ERROR with its lines
// (conclude() folds the findings into the verdict). Its result is cached per built file: the
// emulator runs with a seed derived from the file, so the same file gets the same findings.

Checker::HazardPass Checker::hazard_pass(const LessonInfo& lesson, const StepInfo& step,
                                         const std::string& file, std::shared_future<bool> built,
                                         const std::atomic<bool>* cancel) {
    quiet_ = true;  // this thread's progress is not the learner's progress line
    HazardPass out;
    const std::string checked =
        "the CPU emulator's hazard pass (races, barriers, warp masks, "
        "bounds, uninitialised reads) ran the cases up to " +
        format_size(kHazardMaxN);
    const EmulatedObject emulated = emulated_object(lesson, file, cancel);
    if (emulated.path.empty()) {
        built.wait();
        if (built.get())
            out.note = "hazard pass not run (the GPU's verdict stands): " +
                       (!emulated.skipped.empty() ? emulated.skipped
                        : emulated.setup          ? emulated.setup->line()
                                                  : emulated.internal);
        return out;
    }
    std::string error;
    const std::string checks = lesson_checks(lesson, true, false, &error);
    if (checks.empty()) {
        out.note = "hazard pass not run: " + error;
        return out;
    }
    Hasher h;
    h.add("hazards-v1").add(emulated.key).add(file_identity(checks));
    h.add(file_identity(emulated_runner()))
        .add(file_identity(paths_.tool_dir + "/libcudalings_emu.so"));
    h.add(std::to_string(kHazardMaxN)).add(step.problem);
    const std::string key = h.hex();
    const std::string cache = paths_.state_dir + "/hazards/" + key + ".json";
    auto from_json = [&](const json& j) {
        for (const auto& f : j.at("findings"))
            out.findings.push_back({f.value("tool", ""), f.value("message", ""),
                                    f.value("file", ""), f.value("line", 0),
                                    f.value("detail", "")});
        out.note = j.value("note", "");
    };
    built.wait();
    if (!built.get()) return out;
    const bool coverage = !options_.coverage_dir.empty();  // counted afresh, never cached
    if (options_.use_cache && !coverage)
        if (auto cached =
                read_cached(cache, [](const json& j) { return j.contains("findings"); })) {
            from_json(*cached);
            return out;
        }
    const std::uint64_t seed = std::stoull(key.substr(0, 16), nullptr, 16);
    std::vector<std::string> argv{
        emulated_runner(), "check",
        "--checks",        checks,
        "--problem",       step.problem,
        "--step",          emulated.path,
        "--seed",          format_seed(seed),
        "--first-case",    "0",
        "--max-n",         std::to_string(coverage ? kEmulatedMaxN : kHazardMaxN)};
    ChildOptions o;
    o.wall_seconds = options_.runner_seconds;
    o.channel_idle_seconds = options_.case_idle_seconds;
    o.idle_in_cpu_time = true;  // as the emulator's own limit (runner_options)
    o.output_cap = 8 * 1024;
    o.memory_limit = options_.host_memory_limit;
    // Small cases: a kernel still running after a few seconds is reported as too slow to
    // emulate, and the GPU's own verdict decides.
    // Counting coverage (the learner's race-checked sizes, unoptimised): time for all of them.
    o.env = emulated_environment(
        seed, "check",
        coverage ? options_.case_idle_seconds : std::min(5.0, options_.case_idle_seconds / 2));
    if (coverage) o.env["CUDALINGS_EMU_COVERAGE"] = options_.coverage_dir;
    std::vector<json> events;
    const ChildResult child =
        run_runner(argv, o, events, nullptr, options_.sandbox.get(), runner_view(argv, false));
    std::set<std::tuple<std::string, std::string, int>> seen;
    std::vector<EmulatorFinding> found;
    bool unsupported = false, slow = false;
    int cases = 0;
    for (const auto& e : events) {
        if (e.value("event", "") != CaseResult::kEvent) continue;
        const CaseResult c = e.get<CaseResult>();
        ++cases;
        for (const auto& f : c.emulator) {
            if (f.kind == "unsupported") unsupported = true;
            if (f.kind == "slow" || f.kind == "stuck") slow = true;
            // Hazards only: what the GPU's own run decides (a trap, a refused launch, a
            // kernel too slow to emulate) is not the hazard pass's to judge.
            if (f.severity != "error" || f.kind == "unsupported" || f.kind == "slow" ||
                f.kind == "stuck" || f.kind == "trap" || f.kind == "launch")
                continue;
            if (seen.insert({f.kind, f.file, f.line}).second) found.push_back(f);
        }
    }
    // The finding that names the bug first (conclude() quotes the first).
    std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
        return emulator_finding_rank(a.kind) < emulator_finding_rank(b.kind);
    });
    for (const auto& f : found)
        out.findings.push_back({"emulator", f.message, f.file, f.line, f.detail});
    if (unsupported) {
        out.note =
            "hazard pass stopped: the emulator cannot run part of this file (the GPU's "
            "verdict stands for it)";
    } else if (child.timed_out || slow) {
        out.note = checked + " but stopped after " + std::to_string(cases) +
                   " of them (too slow under emulation): later cases were not checked for hazards";
    } else {
        out.note = checked + (out.findings.empty() ? ": nothing found" : "");
    }
    if (!child.timed_out && child.started) {
        json j{{"note", out.note}, {"findings", json::array()}};
        for (const auto& f : out.findings)
            j["findings"].push_back({{"tool", f.tool},
                                     {"message", f.message},
                                     {"file", f.file},
                                     {"line", f.line},
                                     {"detail", f.detail}});
        if (make_dirs(paths_.state_dir + "/hazards")) write_file_atomic(cache, j.dump() + "\n");
    }
    return out;
}

void fold_hazards(StepReport& report, const Checker::HazardPass& hazards) {
    report.findings.insert(report.findings.end(), hazards.findings.begin(), hazards.findings.end());
    if (!hazards.note.empty() && hazards.findings.empty()) report.notes.push_back(hazards.note);
}

// The learner's file (already accepted by nvcc) built for the emulator, or cached. Says why not:
// the emulator's limit (`skipped`: a blocker, or g++ could not build it), a setup problem, or
// the checker's own failure (`internal`).
Checker::EmulatedObject Checker::emulated_object(const LessonInfo& lesson, const std::string& file,
                                                 const std::atomic<bool>* cancel) {
    EmulatedObject out;
    bool ok = false;
    std::string blocker = emulation_blocker(read_file(file, &ok));
    if (!blocker.empty()) {
        out.skipped = "it cannot be emulated: " + blocker;
        return out;
    }
    EmulatedBuild b = emulated_build({paths_.lesson_dir(lesson), paths_.common_dir()},
                                     fs::absolute(file).string());
    b.coverage = !options_.coverage_dir.empty();
    out.key = emulated_cache_key(b, headers_in(b.include_dirs));
    std::string dir = paths_.state_dir + "/build-emu";
    b.output = dir + "/" + out.key + ".so";
    if (options_.use_cache && ::access(b.output.c_str(), R_OK) == 0) {
        out.path = b.output;
        return out;
    }
    if (!make_dirs(dir)) {
        out.setup = cannot_create_directory(dir, errno);
        return out;
    }
    // sandbox: outputs in a directory of their own; the three commands share one limit.
    PrivateDir work(dir);
    if (!work.ok()) {
        out.internal = "cannot create a build directory in " + dir;
        return out;
    }
    std::string tmp = work.path() + "/" + out.key;
    b.rewritten = tmp + ".cpp";
    b.object = tmp + ".o";
    std::string final_output = b.output;
    b.output = tmp + ".so";
    SandboxView view = build_view(b.include_dirs, b.source, work.path(), {b.cxx});
    view.read_only.insert(view.read_only.end(), {b.rewriter, b.emulator_include, b.cuda_include});
    const ChildOptions limits = build_limits(options_.compile_seconds);
    const auto deadline = after_seconds(limits.wall_seconds);
    say("building for the CPU emulator");
    const MemoryGroup build_memory(kBuildMemoryLimit);
    for (const auto& cmd : emulated_build_commands(b)) {
        ChildOptions o = limits;
        o.wall_seconds = seconds_until(deadline);
        o.output_cap = 16 * 1024;
        limit_build_memory(o, build_memory);
        o.cancel = cancel;
        auto child = run_contained(options_.sandbox.get(), cmd, o, view);
        if (child.exited_ok()) continue;
        if (child.cancelled) {
            std::error_code ec;
            for (const auto& f : {b.rewritten, b.object, b.output}) fs::remove(f, ec);
            out.internal = "cancelled";
            return out;
        }
        std::error_code ec;
        for (const auto& f : {b.rewritten, b.object, b.output}) fs::remove(f, ec);
        out.setup = !child.started ? std::optional<SetupProblem>(cannot_run(
                                         "the emulator's build", cmd[0], child.start_error))
                                   : setup_problem_in_build_output(child.err.head + child.out.head);
        if (out.setup) return out;
        // nvcc accepted the file: what g++ cannot build is the emulator's limit (a library it
        // does not provide, a construct it does not rewrite), never the learner's error.
        Diagnostic first = first_error(parse_compiler_output(child.err.head + child.out.head));
        out.skipped = "the emulator cannot build it: " +
                      (first.message.empty() ? child.err.head.substr(0, 300) : first.message) +
                      (first.line > 0 ? " (line " + std::to_string(first.line) + ")" : "") +
                      (child.started ? "" : " (" + child.start_error + ")");
        return out;
    }
    std::error_code ec;
    fs::rename(b.output, final_output, ec);
    fs::remove(b.rewritten, ec);
    fs::remove(b.object, ec);
    out.path = final_output;
    return out;
}

// The imports of the emulator's build of the file: what runs is screened, also where nvcc made
// no object to screen (CompileRequest::Makes::FrontEnds). A step that loads libraries itself is
// REJECTED before it runs. Screened at every use (nm on one shared object: milliseconds), cached
// or not. False when the verdict is decided.
bool Checker::screen_emulated_imports(const EmulatedObject& built, StepReport& report) {
    if (built.path.empty()) return true;
    const MemoryGroup memory(kBuildMemoryLimit);
    auto violation =
        screen_imports(built.path, options_.compile_seconds, options_.sandbox.get(), memory);
    if (!violation) return true;
    report.verdict = Verdict::Rejected;
    report.reason = violation->rule + ": " + violation->detail;
    return false;
}

// What an emulated verdict depends on: nvcc's build of the file (its diagnostics) and the
// emulator's (both keyed by the file, every header it can see and the tools), the lesson's checks
// (their build is keyed by their sources, the kit and the runner), the lesson's manifest, this
// checker, and the options that change what runs. Not the seed: a re-check without --seed draws
// fresh inputs, which an unchanged file is not re-run for.
std::string Checker::emulated_fingerprint(const LessonInfo& lesson, const StepInfo& step,
                                          const std::string& file) {
    std::string error;
    const bool was_quiet = quiet_;
    quiet_ = true;  // cached by now; no "building the checks" line for a look-up
    const std::string checks = lesson_checks(lesson, true, false, &error);
    quiet_ = was_quiet;
    if (checks.empty()) return {};
    const CompileRequest request = compile_request(lesson, file);
    const EmulatedBuild build = emulated_build(request.include_dirs, fs::absolute(file).string());
    std::error_code ec;
    const std::string self = fs::read_symlink("/proc/self/exe", ec).string();
    Hasher h;
    h.add("emulated-check-v1");
    h.add(compile_cache_key(request, file_identity(which(request.nvcc)),
                            headers_in(request.include_dirs)));
    h.add(emulated_cache_key(build, headers_in(build.include_dirs)));
    // the runner, the emulator it loads, and the split's learner program
    h.add(checks).add(file_identity(emulated_runner()));
    h.add(file_identity(paths_.tool_dir + "/libcudalings_emu.so"));
    if (options_.judge_split) h.add(file_identity(paths_.tool_dir + "/cudalings-learner-emu"));
    h.add(self.empty() ? paths_.tool_dir : file_identity(self));
    h.add_file(paths_.checks_dir(lesson) + "/lesson.json").add(step.problem);
    h.add(options_.explain ? "explain" : "").add(options_.judge_split ? "split" : "");
    h.add(std::to_string(options_.case_idle_seconds)).add(std::to_string(options_.compile_seconds));
    return h.hex();
}

std::optional<StepReport> Checker::unchanged_report(const LessonInfo& lesson, const StepInfo& step,
                                                    const StepReport& now) {
    const auto stored = load_result(paths_.state_dir, now.step);
    if (!stored || stored->value("fingerprint", "").empty() ||
        stored->value("file", "") != now.file)
        return std::nullopt;
    // One that ended at its first failing case does not stand for a check of every case.
    if (stored->value("stopped_early", false) && !options_.first_failure) return std::nullopt;
    if (stored->value("fingerprint", "") != emulated_fingerprint(lesson, step, now.file))
        return std::nullopt;
    StepReport r = step_report_from_json(*stored);
    r.unchanged = true;
    return r;
}

// cudalings emulator: the learner's file (already accepted by nvcc) rewritten and built with
// g++ for the CPU emulator, then run by cudalings-runner-emu. See checker/core/build/emulate.h.
void Checker::run_emulated(const LessonInfo& lesson, const StepInfo& step, const EmulatedObject& b,
                           StepReport& report) {
    report.gpu = kEmulatedLabel;
    if (b.setup) {
        set_setup_error(report, *b.setup);
        return;
    }
    if (!b.internal.empty()) {
        report.verdict = Verdict::InternalError;
        report.reason = b.internal;
        return;
    }
    if (!b.skipped.empty()) {
        report.verdict = Verdict::Skipped;
        report.reason = "it compiles; " + b.skipped + " (run it on a GPU)";
        return;
    }
    // The judge split: the learner's process runs the step on the emulator, with the lesson's
    // call shims built for it.
    shims_.clear();
    if (options_.judge_split) {
        std::string error;
        const std::string checks = lesson_checks(lesson, true, false, &error);
        if (!checks.empty()) shims_ = lesson_shims(lesson, checks, true, &error);
        if (shims_.empty()) {
            report.verdict = Verdict::InternalError;
            report.reason = error;
            return;
        }
    }
    emulating_ = true;
    goal_pictures_ = !step.goals.empty();
    run(lesson, step, b.path, report);
    emulating_ = goal_pictures_ = false;
    report.notes.push_back(
        "emulated on the CPU: sizes up to " + format_size(kEmulatedMaxN) +
        " with every check, then one case of up to " +
        format_size(emulated_large_n(step.emulated_values_up_to)) + " for its values only" +
        (step.emulated_values_up_to
             ? " (not " + format_size(kEmulatedLargeN) + ": " + step.emulated_values_why + ")"
             : std::string()) +
        ", blocks in a shuffled order, 4 at a time (the first of each launch "
        "held back after its first global atomic until the others wait), and the larger sizes for "
        "their launches (grid and block limits) and a few blocks of each with bounds checks" +
        std::string(report.sampled_values
                        ? ", the values those blocks write judged (their inputs made where read). "
                          "Not checked here: the values the other blocks of the larger sizes "
                          "write, "
                        : ". Not checked here: the values at larger sizes (this problem's outputs "
                          "depend on more than a few blocks see: an index that overflows 32 bits "
                          "is seen only when it leaves its array in a sampled block), ") +
        "timing, and weak memory (the emulator is sequentially consistent: a missing "
        "__threadfence shows only as a race); a GPU checks those");
    conclude(report);
    // The step's performance goals, from the access pictures of the cases that passed. Without
    // --explain the pictures were recorded for this alone: they leave the report.
    if (!step.goals.empty()) {
        report.goals = evaluate_goals(step.goals, step_access_pictures(report.cases));
        if (!options_.explain)
            for (auto& c : report.cases)
                c.emulator.erase(std::remove_if(c.emulator.begin(), c.emulator.end(),
                                                [](const auto& f) { return f.kind == "access"; }),
                                 c.emulator.end());
    }
    // Something the emulator cannot run: no verdict from it.
    for (const auto& c : report.cases)
        for (const auto& f : c.emulator)
            if (f.kind == "unsupported") {
                report.verdict = Verdict::Skipped;
                report.reason = "it compiles; it cannot be emulated: " + f.message +
                                (f.line > 0 ? " (line " + std::to_string(f.line) + ")" : "") +
                                " (run it on a GPU)";
                return;
            }
}

}  // namespace cudalings
