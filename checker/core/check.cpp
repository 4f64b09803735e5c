#include "check.h"

#include <sys/stat.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <random>
#include <sstream>
#include <thread>

#include "cases.h"
#include "compile.h"
#include "emulate.h"
#include "hash.h"
#include "policy.h"
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

// Starts the runner with a fresh key and returns its authenticated events.
ChildResult run_runner(const std::vector<std::string>& argv, ChildOptions options,
                       std::vector<json>& events, int* forged = nullptr) {
    unsigned char key[16];
    random_key(key);
    options.result_channel = true;
    options.secret = key_to_hex(key);
    auto child = run_supervised(argv, options);
    events = parse_events(child.channel.head, key, forged);
    return child;
}

std::vector<std::string> headers_in(const std::vector<std::string>& dirs) {
    std::vector<std::string> headers;
    std::error_code ec;
    for (const auto& dir : dirs) {
        for (const auto& entry : fs::directory_iterator(dir, ec)) {
            auto ext = entry.path().extension().string();
            if (ext == ".cuh" || ext == ".h" || ext == ".hpp")
                headers.push_back(entry.path().string());
        }
    }
    std::sort(headers.begin(), headers.end());
    return headers;
}

// nvcc's identity in the cache key: where it lives on PATH.
std::string which(const std::string& program) {
    std::string found = find_program(program);
    return found.empty() ? program : found;
}

std::string file_identity(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return path + ":missing";
    return path + ":" + std::to_string(st.st_size) + ":" + std::to_string(st.st_mtime);
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

Verdict case_verdict(const std::string& status) {
    if (status == "pass") return Verdict::Pass;
    if (status == "wrong") return Verdict::Wrong;
    if (status == "memory") return Verdict::MemoryError;
    if (status == "cuda_error") return Verdict::Crash;
    if (status == "timeout") return Verdict::Timeout;
    return Verdict::InternalError;
}

CaseReport case_from_event(const json& e) {
    CaseReport c;
    c.index = e.value("index", 0);
    c.n = e.value("n", std::uint64_t{0});
    c.name = e.value("name", "");
    c.verdict = case_verdict(e.value("status", ""));
    c.reason = e.value("reason", "");
    c.detail = e.value("detail", "");
    c.wrong = e.value("wrong", std::uint64_t{0});
    c.unwritten = e.value("unwritten", std::uint64_t{0});
    c.checked = e.value("checked", std::uint64_t{0});
    c.tolerance = e.value("tolerance", "");
    for (const auto& m : e.value("first", json::array()))
        c.first.push_back(
            {m.value("index", std::uint64_t{0}), m.value("got", ""), m.value("expected", "")});
    if (c.verdict == Verdict::Wrong && c.detail.empty()) {
        MismatchShape shape{c.n, c.wrong, c.unwritten, e.value("first_wrong", std::uint64_t{0}),
                            e.value("last_wrong", std::uint64_t{0})};
        c.detail = describe_mismatches(shape);
    }
    return c;
}

TimingSide side_from_json(const json& j) {
    TimingSide s;
    if (!j.is_object()) return s;
    s.present = true;
    s.median_us = j.value("median_us", 0.0);
    s.p25_us = j.value("p25_us", 0.0);
    s.p75_us = j.value("p75_us", 0.0);
    s.min_us = j.value("min_us", 0.0);
    s.samples = j.value("samples", 0);
    s.stop = j.value("stop", "");
    return s;
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

// Preprocess the file twice (the device pass and the host pass: code can hide behind
// __CUDA_ARCH__), both at once, and screen both. A file that does not preprocess is left to
// the build.
std::optional<PolicyViolation> screen_file(const CompileRequest& request, const PolicyRules& rules,
                                           const std::string& scratch) {
    auto pass = [&](bool host) -> std::optional<PolicyViolation> {
        std::string out = scratch + (host ? ".host.ii" : ".device.ii");
        auto cmd = preprocess_command(request.nvcc, request.source, request.include_dirs, out);
        cmd.insert(cmd.begin() + 1,
                   std::string("-arch=") +
                       (request.arch.empty() ? std::string(kCompileOnlyArch) : request.arch));
        if (host) cmd.insert(cmd.begin() + 1, "-Xcompiler=-U__CUDA_ARCH__");
        ChildOptions o;
        o.wall_seconds = 60;
        auto child = run_supervised(cmd, o);
        bool ok = false;
        std::string text = read_file(out, &ok);
        std::error_code ec;
        fs::remove(out, ec);
        if (!child.exited_ok() || !ok) return std::nullopt;
        return screen_preprocessed(text, rules);
    };
    auto host = std::async(std::launch::async, pass, true);
    auto device = pass(false);
    auto host_result = host.get();
    return device ? device : host_result;
}

// The dynamic symbols a built file imports: loading libraries itself is not allowed.
std::optional<PolicyViolation> screen_imports(const std::string& object) {
    ChildOptions o;
    o.wall_seconds = 30;
    o.output_cap = 1 << 20;
    auto nm = run_supervised({"nm", "-D", "--undefined-only", object}, o);
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
    info.present = j.value("gpus", 0) > 0;
    info.name = j.value("name", "");
    info.arch = j.value("arch", "");
    info.uuid = j.value("uuid", "");
    info.sms = j.value("sms", 0);
    info.error = j.value("message", "");
    gpu_ = info;
    return *gpu_;
}

double Checker::copy_bandwidth_gbps() {
    if (copy_gbps_) return *copy_gbps_;
    copy_gbps_ = 0.0;
    const GpuInfo& g = gpu();
    if (!g.present) return 0;
    std::string cache =
        paths_.state_dir + "/copy-bandwidth-" + (g.uuid.empty() ? "gpu" : g.uuid) + ".json";
    if (options_.use_cache) {
        auto cached = read_cached(cache, [](const json& c) { return c.value("gbps", 0.0) > 0; });
        if (cached) return *(copy_gbps_ = cached->value("gbps", 0.0));
    }
    say("measuring this GPU's copy bandwidth (once per GPU)");
    ChildOptions o;
    o.wall_seconds = 60;
    std::vector<json> events;
    run_runner({paths_.runner(), "copy-bandwidth"}, o, events);
    for (const auto& e : events) {
        if (e.value("event", "") == "copy_bandwidth") {
            copy_gbps_ = e.value("gbps", 0.0);
            if (*copy_gbps_ > 0 && make_dirs(paths_.state_dir))
                write_file_atomic(cache, e.dump() + "\n");
        }
    }
    return *copy_gbps_;
}

bool Checker::compile(const LessonInfo& lesson, const StepInfo& step, const std::string& source,
                      bool solution_file, StepReport& report, std::string& object,
                      const std::function<void(const std::string&)>& while_building) {
    CompileRequest request;
    request.nvcc = nvcc();
    request.source = source;
    request.include_dirs = {paths_.lesson_dir(lesson), paths_.common_dir()};
    const GpuInfo& g = gpu();
    request.arch = g.present ? g.arch : "";
    std::string key = compile_cache_key(request, file_identity(which(request.nvcc)),
                                        headers_in(request.include_dirs));
    std::string dir = paths_.state_dir + "/build";
    object = dir + "/" + key + ".so";
    std::string log = dir + "/" + key + ".log";
    if (options_.use_cache && ::access(object.c_str(), R_OK) == 0) {
        report.compile_cached = true;
        bool ok = false;
        std::string output = read_file(log, &ok);
        report.diagnostics = parse_compiler_output(output);
        return true;
    }
    // The machine's problems are SETUP_ERROR, never the learner's (checker/core/setup.h).
    if (auto problem = unsupported_architecture(request.nvcc, request.arch)) {
        set_setup_error(report, *problem);
        return false;
    }
    if (!make_dirs(dir)) {
        set_setup_error(report, cannot_create_directory(dir, errno));
        return false;
    }
    std::string temporary = object + ".tmp." + std::to_string(::getpid());
    request.output = temporary;
    ChildOptions o;
    o.wall_seconds = options_.compile_seconds;
    o.output_cap = 64 * 1024;
    say("compiling " + source);
    if (while_building) while_building(object);
    auto start = Clock::now();
    // The policy screen reads the preprocessed file (device and host views) while nvcc builds.
    PolicyRules rules;
    rules.forbidden_libraries = step.forbid;
    rules.screened_dirs = {paths_.root};
    if (!solution_file) rules.forbidden_dirs.push_back(paths_.root + "/solutions");
    rules.forbidden_dirs.push_back(std::string(CUDALINGS_SOURCE_DIR) + "/checker");
    rules.forbidden_dirs.push_back(paths_.root + "/checker");
    rules.forbidden_dirs.push_back(paths_.tool_dir);
    if (!paths_.include_root.empty()) rules.allowed_dirs.push_back(paths_.lessons_root());
    std::optional<PolicyViolation> violation;
    std::atomic<bool> stop_build{false};
    o.cancel = &stop_build;
    std::thread screen([&] {
        violation = screen_file(request, rules, temporary);
        if (violation) stop_build = true;  // no need to finish building a rejected file
    });
    auto child = run_supervised(nvcc_command(request), o);
    screen.join();
    // A library loaded behind the checker's back shows in the built file's imports, however
    // the source spelled it (asm labels, strings).
    if (!violation && child.exited_ok()) violation = screen_imports(temporary);
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
        report.reason =
            "nvcc did not finish within " + std::to_string(int(options_.compile_seconds)) + " s";
        return false;
    }
    bool have_object = child.exited_ok() && ::access(temporary.c_str(), R_OK) == 0;
    if (!have_object) {
        discard();
        if (auto problem = setup_problem_in_build_output(output)) {
            set_setup_error(report, *problem);
            return false;
        }
        report.verdict = Verdict::CompileError;
        Diagnostic first = first_error(report.diagnostics);
        report.reason = first.message.empty() ? "nvcc failed" : first.message;
        return false;
    }
    std::error_code ec;
    fs::rename(temporary, object, ec);
    write_file_atomic(log, output);
    // Only warnings stay in the report of a successful build.
    report.compiler_output.clear();
    return true;
}

std::string Checker::reference(const LessonInfo& lesson, const StepInfo& step) {
    StepReport scratch;
    std::string object;
    say("building the reference solution (once per step and GPU)");
    if (!compile(lesson, step, paths_.step_file(lesson, step, true), true, scratch, object))
        return {};
    return object;
}

std::vector<std::string> Checker::runner_argv([[maybe_unused]] const LessonInfo& lesson,
                                              const StepInfo& step, const std::string& object,
                                              const StepReport& report, int first_case,
                                              bool first_child) const {
    std::vector<std::string> argv{paths_.runner(), "check",
                                  "--spec",        step.spec,
                                  "--step",        object,
                                  "--seed",        format_seed(report.seed),
                                  "--first-case",  std::to_string(first_case)};
    const std::string& reference = reference_;
    bool has_reference = !reference.empty() && ::access(reference.c_str(), R_OK) == 0;
    bool want_timing = options_.timing && step.timed;
    if (emulating_) {  // cudalings emulator: its runner, small cases, no timing
        argv[0] = paths_.tool_dir + "/cudalings-runner-emu";
        argv.insert(argv.end(), {"--max-n", std::to_string(kEmulatedMaxN)});
        want_timing = has_reference = false;
    }
    if (has_reference) {
        argv.push_back("--reference");
        argv.push_back(reference);
    }
    if (want_timing && first_child) argv.push_back("--time");
    return argv;
}

ChildOptions Checker::runner_options() const {
    ChildOptions o;
    o.wall_seconds = options_.runner_seconds;
    o.channel_idle_seconds = options_.case_idle_seconds;
    o.output_cap = 8 * 1024;
    o.memory_limit = options_.host_memory_limit;
    if (emulating_) o.env["CUDALINGS_EMU_MODE"] = options_.explain ? "explain" : "check";
    return o;
}

void Checker::run(const LessonInfo& lesson, const StepInfo& step, const std::string& object,
                  StepReport& report, std::future<RunnerRun>* first) {
    int total = -1;
    int next_case = 0;
    Verdict timing_failure = Verdict::Pass;
    std::string timing_reason;
    int forged_lines = 0;
    std::map<int, CaseReport> cases;
    const int max_children = 4;
    for (int child_index = 0; child_index < max_children; ++child_index) {
        say(child_index == 0 ? "running the cases"
                             : "running the remaining cases in a fresh process");
        RunnerRun r;
        if (child_index == 0 && first && first->valid()) {
            r = first->get();  // started during the build, with these same arguments
        } else {
            r.child =
                run_runner(runner_argv(lesson, step, object, report, next_case, child_index == 0),
                           runner_options(), r.events, &r.forged);
        }
        const ChildResult& child = r.child;
        const std::vector<json>& events = r.events;
        forged_lines += r.forged;
        if (!child.started) {
            const std::string runner =
                emulating_ ? paths_.tool_dir + "/cudalings-runner-emu" : paths_.runner();
            set_setup_error(report, cannot_run("the runner", runner, child.start_error));
            return;
        }
        report.runner_ms += 1000 * child.wall_seconds;
        int in_progress = -1;
        std::string phase;  // "call" while the learner's host function runs, "sync" after
        bool done = false;
        std::string internal;
        std::string load_error;
        double t_cases = -1, t_timing = -1;
        for (const auto& e : events) {
            std::string kind = e.value("event", "");
            double t = e.value("t_ms", 0.0);
            if (kind == "cases") t_cases = t;
            if (kind == "timing_start") t_timing = t;
            if (kind == "timing" && t_timing >= 0) report.timing_ms += t - t_timing;
            if ((kind == "timing_start" || kind == "done") && t_cases >= 0 && report.cases_ms == 0)
                report.cases_ms = t - t_cases;
            if (kind == "cases") {
                if (child_index == 0) report.runner_startup_ms = t;
                total = e.value("total", 0);
            } else if (kind == "case_start") {
                in_progress = e.value("index", -1);
                phase = "setup";
                CaseReport c;
                c.index = in_progress;
                c.n = e.value("n", std::uint64_t{0});
                c.name = e.value("name", "");
                cases[in_progress] = c;
            } else if (kind == "call_start") {
                phase = "call";
            } else if (kind == "call_end") {
                phase = "sync";
            } else if (kind == "case") {
                CaseReport c = case_from_event(e);
                cases[c.index] = c;
                in_progress = -1;
                next_case = c.index + 1;
            } else if (kind == "abort") {
                // A sticky CUDA error: the process cannot go on; the next one starts fresh.
                in_progress = -1;
            } else if (kind == "timing") {
                report.timing.present = true;
                report.timing.n = e.value("n", std::uint64_t{0});
                report.timing.bytes = e.value("bytes", 0.0);
                report.timing.learner = side_from_json(e.value("learner", json()));
                report.timing.reference = side_from_json(e.value("reference", json()));
                report.timing.note = e.value("note", "");
                report.timing.host_median_us = e.value("host_median_us", 0.0);
                report.timing.warmup_ms = e.value("warmup_ms", 0.0);
                report.timing.warmup_rounds = e.value("warmup_rounds", 0);
                report.timing.sampling_ms = e.value("sampling_ms", 0.0);
                report.timing.untimed_ms = e.value("untimed_ms", 0.0);
                ClockCheck clocks = cross_check_clocks(report.timing.learner.median_us,
                                                       report.timing.host_median_us);
                if (!e.value("verified", false)) {
                    const json& v = e["verify"];
                    timing_failure =
                        v.value("status", "") == "memory" ? Verdict::MemoryError : Verdict::Wrong;
                    timing_reason = "timed call " +
                                    std::to_string(e.value("failed_sample", 0) + 1) +
                                    " (fresh inputs, n = " + format_size(report.timing.n) +
                                    ") was wrong: " + v.value("reason", std::string("values")) +
                                    " — every timed call must compute the result";
                } else if (clocks != ClockCheck::Agree) {
                    timing_failure = Verdict::Suspect;
                    timing_reason =
                        "the host clock and the GPU's events disagree: " +
                        format_time_us(report.timing.learner.median_us) + " on the events, " +
                        format_time_us(report.timing.host_median_us) + " on the host clock (" +
                        (clocks == ClockCheck::HostLonger
                             ? "the call spends time the GPU's clock does not see"
                             : "the events report more time than passed") +
                        "): the time cannot be trusted";
                } else if (e.value("outside_stream", false)) {
                    timing_failure = Verdict::Suspect;
                    timing_reason =
                        "work went on after the step's stream was done (another "
                        "stream?): all GPU work must go on the stream the step is "
                        "given; the time counts until the whole device was idle";
                }
            } else if (kind == "timing_start" || kind == "tick") {
                phase = "timing";
            } else if (kind == "timing_error") {
                timing_failure = Verdict::Crash;
                timing_reason =
                    "during timing: " + e.value("reason", "") + " — " + e.value("detail", "");
                done = true;
            } else if (kind == "unsupported") {  // cudalings emulator: a gpu-only spec
                report.verdict = Verdict::Skipped;
                report.reason = e.value("message", "this step needs a GPU");
                return;
            } else if (kind == "load_error") {
                load_error = e.value("message", "");
            } else if (kind == "internal_error") {
                internal = e.value("message", "the runner failed");
            } else if (kind == "done") {
                done = true;
            }
        }
        if (!load_error.empty()) {
            report.verdict = Verdict::CompileError;
            report.reason = "the built file cannot be used: " + load_error;
            return;
        }
        if (!internal.empty() && in_progress < 0) {
            report.verdict = Verdict::InternalError;
            report.reason = internal;
            return;
        }
        if (in_progress >= 0) {
            // The process ended inside a case: that case gets the blame.
            CaseReport& c = cases[in_progress];
            c.verdict = child.timed_out ? Verdict::Timeout : Verdict::Crash;
            if (child.memory_limit_hit) {
                c.verdict = Verdict::MemoryError;
                c.reason = "host memory limit (" +
                           std::to_string(options_.host_memory_limit >> 30) + " GiB) exceeded";
            } else if (child.timed_out)
                c.reason = phase == "call" ? "host code did not return" : "kernel did not finish";
            else if (child.signal)
                c.reason = describe_signal(child.signal);
            else
                c.reason = "exit code " + std::to_string(child.exit_code);
            c.detail = child.memory_limit_hit
                           ? "the process used more host memory than a step may: it was killed"
                           : describe_end(child, options_.case_idle_seconds);
            next_case = in_progress + 1;
        } else if (phase == "timing" && !done) {
            report.timing.present = false;
            report.verdict = child.timed_out ? Verdict::Timeout : Verdict::Crash;
            report.reason = "during timing: " + describe_end(child, options_.case_idle_seconds);
        } else if (!done && total < 0) {
            report.verdict = Verdict::InternalError;
            report.reason = "the runner ended before its first case: " +
                            describe_end(child, options_.case_idle_seconds) +
                            (child.err.head.empty() ? "" : " — " + child.err.head.substr(0, 400));
            return;
        }
        // A hang is almost always in every case: one timeout is enough, do not wait for more.
        if (done || total < 0 || next_case >= total || child.timed_out) break;
    }
    // Cases never reached (too many crashes) are listed as not run.
    for (int i = 0; i < total; ++i) {
        if (!cases.count(i)) {
            CaseReport c;
            c.index = i;
            c.name = "case " + std::to_string(i);
            c.verdict = Verdict::Skipped;
            c.reason = "not run: an earlier case crashed or hung";
            cases[i] = c;
        }
    }
    Verdict verdict = report.verdict == Verdict::InternalError ? Verdict::Pass : report.verdict;
    std::vector<SizeOutcome> sizes;
    bool only_wrong = true;
    for (auto& [index, c] : cases) {
        report.cases.push_back(c);
        if (c.verdict != Verdict::Skipped) verdict = worst(verdict, c.verdict);
        if (c.verdict != Verdict::Pass && c.verdict != Verdict::Wrong) only_wrong = false;
        sizes.push_back({c.n, c.verdict == Verdict::Pass});
    }
    if (only_wrong) report.pattern = size_pattern_hint(sizes);
    if (timing_failure != Verdict::Pass && verdict == Verdict::Pass) {
        report.verdict = timing_failure;
        report.reason = timing_reason;
        report.timing.present = false;
        return;
    }
    if (verdict != Verdict::Pass) {
        report.timing.present = false;
        for (const auto& c : report.cases) {
            if (c.verdict == verdict) {
                report.reason =
                    c.name + ": " + (c.reason.empty() ? std::string(name(c.verdict)) : c.reason);
                break;
            }
        }
    }
    if (verdict == Verdict::Pass && report.timing.present) {
        report.timing.copy_gbps = copy_bandwidth_gbps();
        double floor = report.timing.floor_us();
        // Allow for run-to-run variation of the copy rate (reads alone can beat a copy by a few
        // percent): only a time well below the floor is impossible.
        if (floor > 0 && report.timing.learner.median_us < 0.85 * floor) {
            verdict = Verdict::Suspect;
            report.reason = "faster than this GPU's memory system allows (" +
                            format_time_us(report.timing.learner.median_us) + " < floor " +
                            format_time_us(floor) + "): not a record";
        }
    }
    report.verdict = verdict;
    if (forged_lines > 0)
        report.timing.note += std::string(report.timing.note.empty() ? "" : "; ") +
                              std::to_string(forged_lines) +
                              " unauthenticated line(s) on the result channel were ignored";
}

Checker::BaselineTiming Checker::time_baseline(const BaselineInfo& baseline) {
    BaselineTiming result;
    if (!gpu().present) {
        result.error = "no GPU";
        return result;
    }
    say("timing " + baseline.title);
    ChildOptions o;
    o.wall_seconds = options_.runner_seconds;
    o.channel_idle_seconds = options_.case_idle_seconds;
    std::vector<json> events;
    auto child = run_runner({paths_.runner(), "baseline", "--spec", baseline.spec, "--name",
                             baseline.name, "--seed", format_seed(options_.seed)},
                            o, events);
    for (const auto& e : events) {
        std::string kind = e.value("event", "");
        if (kind == "timing") {
            result.side = side_from_json(e.value("learner", json()));
            result.bytes = e.value("bytes", 0.0);
            result.n = e.value("n", std::uint64_t{0});
            result.ok = e.value("verified", false);
            if (!result.ok) result.error = "its output did not verify";
        } else if (kind == "internal_error") {
            result.error = e.value("message", "");
        }
    }
    if (!result.ok && result.error.empty())
        result.error = describe_end(child, options_.case_idle_seconds);
    return result;
}

void Checker::sanitize(const StepInfo& step, const std::string& object, StepReport& report) {
    std::string sanitizer = find_sanitizer(which(nvcc()));
    if (sanitizer.empty()) {
        report.sanitizer_note = "compute-sanitizer not found (set CUDALINGS_SANITIZER): not run";
        return;
    }
    for (const char* tool : kSanitizerTools) {
        say(std::string("compute-sanitizer --tool ") + tool);
        std::vector<std::string> program{paths_.runner(), "check",
                                         "--spec",        step.spec,
                                         "--step",        object,
                                         "--seed",        format_seed(report.seed),
                                         "--max-n",       std::to_string(options_.sanitize_max_n)};
        ChildOptions o;
        o.wall_seconds = options_.runner_seconds;
        o.channel_idle_seconds = 4 * options_.case_idle_seconds;  // the tools are slow
        o.output_cap = 256 * 1024;
        std::vector<json> events;
        auto child = run_runner(sanitizer_command(sanitizer, tool, program), o, events);
        if (!child.started) {
            report.sanitizer_note = "cannot run compute-sanitizer: " + child.start_error;
            return;
        }
        auto found = parse_sanitizer_output(child.out.head + child.err.head, tool, report.file);
        report.findings.insert(report.findings.end(), found.begin(), found.end());
        if (child.timed_out && report.sanitizer_note.empty())
            report.sanitizer_note = std::string(tool) + " did not finish in time";
    }
    if (!report.findings.empty()) {
        const auto& f = report.findings.front();
        Verdict before = report.verdict;
        report.verdict = worst(report.verdict == Verdict::Pass || report.verdict == Verdict::Suspect
                                   ? Verdict::Pass
                                   : report.verdict,
                               Verdict::MemoryError);
        if (report.verdict != before || report.reason.empty())
            report.reason =
                "sanitizer (" + f.tool + "): " + f.message + " at line " + std::to_string(f.line);
    } else if (report.sanitizer_note.empty()) {
        report.sanitizer_note = "memcheck, racecheck, initcheck and synccheck found nothing";
    }
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
    // The reference it is timed against: built when first needed, for this GPU, against the
    // course's own headers (cached like any build).
    reference_.clear();
    if (options_.timing && step.timed && runs_on_gpu()) reference_ = reference(lesson, step);
    std::string object;
    // While nvcc builds the step, the first runner is already starting CUDA; it waits for its
    // key before it loads anything (ChildOptions::hold). The build's end releases it, a failed
    // build kills it. On a cache hit there is no build to overlap.
    auto hold = std::make_shared<std::atomic<int>>(0);
    std::future<RunnerRun> first;
    auto start_first_runner = [&](const std::string& built_object) {
        if (!runs_on_gpu()) return;
        auto argv = runner_argv(lesson, step, built_object, report, 0, true);
        ChildOptions o = runner_options();
        o.hold = hold.get();
        first = std::async(std::launch::async, [argv, o, hold] {
            RunnerRun r;
            r.child = run_runner(argv, o, r.events, &r.forged);
            return r;
        });
    };
    const bool built =
        compile(lesson, step, report.file, solution_file, report, object, start_first_runner);
    hold->store(built ? 1 : -1);
    if (!built) return finish();  // (a held runner is killed; `first` waits for it)
    const GpuInfo& g = gpu();
    // cudalings emulator: forced, or automatic without a GPU (correctness only, no timing)
    if (!runs_on_gpu() && (options_.emulate || options_.emulate_without_gpu)) {
        run_emulated(lesson, step, report);
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
    report.verdict = Verdict::InternalError;
    run(lesson, step, object, report, &first);
    if (options_.sanitize && report.verdict != Verdict::InternalError)
        sanitize(step, object, report);
    return finish();
}

// cudalings emulator: the learner's file (already accepted by nvcc) rewritten and built with
// g++ for the CPU emulator, then run by cudalings-runner-emu. See checker/core/emulate.h.
void Checker::run_emulated(const LessonInfo& lesson, const StepInfo& step, StepReport& report) {
    report.gpu = kEmulatedLabel;
    report.timing.present = false;
    bool ok = false;
    std::string blocker = emulation_blocker(read_file(report.file, &ok));
    if (!blocker.empty()) {
        report.verdict = Verdict::Skipped;
        report.reason = "it compiles; it cannot be emulated: " + blocker + " (run it on a GPU)";
        return;
    }
    EmulatedBuild b;
    b.rewriter = paths_.tool_dir + "/cudalings-emu-rewrite";
    b.cxx = host_compiler();
    b.emulator_include = emulator_include_dir(paths_.tool_dir);
    b.cuda_include = cuda_include_dir();
    b.include_dirs = {paths_.lesson_dir(lesson), paths_.common_dir()};
    b.source = fs::absolute(report.file).string();
    std::string key = emulated_cache_key(b, headers_in(b.include_dirs));
    std::string dir = paths_.state_dir + "/build-emu";
    b.output = dir + "/" + key + ".so";
    if (!(options_.use_cache && ::access(b.output.c_str(), R_OK) == 0)) {
        if (!make_dirs(dir)) {
            set_setup_error(report, cannot_create_directory(dir, errno));
            return;
        }
        std::string tmp = dir + "/" + key + "." + std::to_string(::getpid());
        b.rewritten = tmp + ".cpp";
        b.object = tmp + ".o";
        std::string final_output = b.output;
        b.output = tmp + ".so";
        say("building for the CPU emulator");
        for (const auto& cmd : emulated_build_commands(b)) {
            ChildOptions o;
            o.wall_seconds = options_.compile_seconds;
            o.output_cap = 16 * 1024;
            auto child = run_supervised(cmd, o);
            if (!child.exited_ok()) {
                auto problem = !child.started
                                   ? std::optional<SetupProblem>(cannot_run(
                                         "the emulator's build", cmd[0], child.start_error))
                                   : setup_problem_in_build_output(child.err.head + child.out.head);
                if (problem) {
                    set_setup_error(report, *problem);
                    std::error_code ec;
                    for (const auto& f : {b.rewritten, b.object, b.output}) fs::remove(f, ec);
                    return;
                }
                Diagnostic first =
                    first_error(parse_compiler_output(child.err.head + child.out.head));
                report.verdict = Verdict::InternalError;
                report.reason =
                    "nvcc accepted the file but the emulator cannot build it: " +
                    (first.message.empty() ? child.err.head.substr(0, 300) : first.message) +
                    (child.started ? "" : " (" + child.start_error + ")");
                std::error_code ec;
                for (const auto& f : {b.rewritten, b.object, b.output}) fs::remove(f, ec);
                return;
            }
        }
        std::error_code ec;
        fs::rename(b.output, final_output, ec);
        fs::remove(b.rewritten, ec);
        fs::remove(b.object, ec);
        b.output = final_output;
    }
    report.verdict = Verdict::InternalError;
    emulating_ = true;
    run(lesson, step, b.output, report);
    emulating_ = false;
}

}  // namespace cudalings
