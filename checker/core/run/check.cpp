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

#include "builder.h"
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
#include "runner_process.h"
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

namespace {

BuildOptions build_options(const CheckOptions& o) {
    BuildOptions b;
    b.nvcc = o.nvcc;
    b.compile_seconds = o.compile_seconds;
    b.use_cache = o.use_cache;
    b.sandbox = o.sandbox;
    b.forbidden_dirs = o.forbidden_dirs;
    b.coverage = !o.coverage_dir.empty();
    return b;
}

}  // namespace

Checker::Checker(CoursePaths paths, Manifest manifest, CheckOptions options)
    : paths_(std::move(paths)),
      manifest_(std::move(manifest)),
      options_(std::move(options)),
      builder_(
          paths_, build_options(options_), [this]() -> const GpuInfo& { return gpu(); },
          [this](const std::string& what) { say(what); }) {}

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
            if (is(e.value("event", ""), Message::InternalError))
                out.error = e.get<MessageEvent>().message;
        }
        if (out.error.empty())
            out.error = "cannot list the lesson's checks: " + describe_end(child, 0);
        return std::nullopt;
    };
    std::string error;
    const std::string emulated = builder_.lesson_checks(lesson, true, false, &error);
    const std::string gpu =
        emulated.empty() ? "" : builder_.lesson_checks(lesson, false, false, &error);
    const bool has_baselines =
        ::access((paths_.checks_dir(lesson) + "/baselines.cu").c_str(), R_OK) == 0;
    const std::string baselines =
        gpu.empty() || !has_baselines ? "" : builder_.lesson_checks(lesson, false, true, &error);
    if (gpu.empty() || (has_baselines && baselines.empty())) {
        out.error = error;
        return out;
    }
    const auto on_emulator = list(builder_.emulated_runner(), emulated, "");
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

std::vector<std::string> Checker::runner_argv(const RunPlan& plan, int first_case,
                                              bool first_child) const {
    const StepInfo& step = *plan.step;
    std::vector<std::string> argv{paths_.runner(), "check",
                                  "--checks",      plan.checks,
                                  "--problem",     step.problem,
                                  "--step",        plan.object,
                                  "--seed",        format_seed(plan.seed),
                                  "--first-case",  std::to_string(first_case)};
    bool has_reference = !plan.reference.empty() && ::access(plan.reference.c_str(), R_OK) == 0;
    bool want_timing = options_.timing && step.timed;
    if (plan.emulated) {  // cudalings emulator: its runner, small cases, no timing
        argv[0] = builder_.emulated_runner();
        argv.insert(argv.end(), {"--max-n", std::to_string(kEmulatedMaxN), "--large-n",
                                 std::to_string(emulated_large_n(step.emulated_values_up_to))});
        want_timing = has_reference = false;
    }
    if (has_reference) argv.insert(argv.end(), {"--reference", plan.reference});
    if (!plan.shims.empty())
        argv.insert(argv.end(), {"--learner",
                                 paths_.tool_dir + (plan.emulated ? "/cudalings-learner-emu"
                                                                  : "/cudalings-learner"),
                                 "--shims", plan.shims});
    if (want_timing && first_child) argv.push_back("--time");
    if (step.timed_size) argv.insert(argv.end(), {"--timed-size", std::to_string(step.timed_size)});
    return argv;
}

ChildOptions Checker::runner_options(const RunPlan& plan) const {
    ChildOptions o;
    o.wall_seconds = options_.runner_seconds;
    o.channel_idle_seconds = options_.case_idle_seconds;
    o.output_cap = 8 * 1024;
    o.memory_limit = options_.host_memory_limit;
    // The emulator's own limit is CPU time: so is this one (a busy machine must not turn a
    // correct kernel into a TIMEOUT before the emulator can call it slow).
    o.idle_in_cpu_time = plan.emulated;
    if (plan.emulated)
        o.env =
            emulated_environment(options_.seed, plan.emulator_mode, options_.case_idle_seconds / 2);
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

void Checker::run(const RunPlan& plan, StepReport& report, std::future<RunnerRun>* first) {
    int total = -1;
    int next_case = 0;
    int forged_lines = 0;
    std::map<int, CaseResult> cases;
    bool reran_early_end = false;  // the runner ended before anything of the learner's loaded
    const int max_children = 4;
    // CheckOptions::first_failure: an emulated check ends with its first failing case.
    const bool stop_at_failure = plan.emulated && options_.first_failure;
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
    const bool larger_apart = plan.emulated && !options_.sandbox;
    auto stop_larger = std::make_shared<std::atomic<bool>>(false);
    std::future<RunnerRun> larger;
    if (larger_apart) {
        auto argv = runner_argv(plan, 0, true);
        argv.insert(argv.end(), {"--larger", "only"});
        ChildOptions o = runner_options(plan);
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
        auto argv = runner_argv(plan, next_case, child_index == 0);
        if (larger_apart) argv.insert(argv.end(), {"--larger", "defer"});
        if (child_index == 0 && first && first->valid())
            r = first->get();  // started during the build, with these same arguments
        else
            r.child =
                run_runner(argv, runner_options(plan), r.events, &r.forged, options_.sandbox.get(),
                           runner_view(argv, !plan.emulated), true, failing_case);
        const ChildResult& child = r.child;
        forged_lines += r.forged;
        if (!child.started) {
            set_setup_error(report, cannot_run("the runner", argv[0], child.start_error));
            return;
        }
        report.runner_ms += 1000 * child.wall_seconds;
        std::string phase;  // "call" while the learner's host function runs, "sync" after
        bool done = false;
        const int in_progress = read_runner_events(r.events, child_index == 0, report, cases, total,
                                                   next_case, phase, done);
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
                read_runner_events(r.events, false, report, more, total, after, phase, done);
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
    const std::string checks = builder_.lesson_checks(lesson, false, false, &error);
    const std::string baselines =
        checks.empty() ? "" : builder_.lesson_checks(lesson, false, true, &error);
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
    std::string sanitizer = find_sanitizer(which(builder_.nvcc()));
    if (sanitizer.empty()) {
        report.sanitizer_note = "compute-sanitizer not found (set CUDALINGS_SANITIZER): not run";
        return;
    }
    std::string error;
    const std::string checks = builder_.lesson_checks(lesson, false, false, &error);
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
    out.built = builder_.compile(lesson, step, out.build.file, solution_file, out.build, object);
    if (!out.built) {
        if (out.build.verdict == Verdict::SetupError)
            out.setup = SetupProblem{out.build.reason, "", ""};
        return out;
    }
    std::string error;
    const std::string checks = builder_.lesson_checks(lesson, false, false, &error);
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

// The pipeline: the file's build (nvcc, and beside it the emulator's build or the hazard pass's),
// then the cases and the timing on the GPU or on the emulator, then the verdict (conclude()).
// What the runners run is decided here once (RunPlan) and passed to each of them.
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
        const CompileRequest r = builder_.compile_request(lesson, report.file);
        return compile_cache_key(r, file_identity(which(r.nvcc)), headers_in(r.include_dirs));
    };
    const std::string source_at_start = emulating && !solution_file ? source_key() : "";
    // What the GPU's runners run. The reference it is timed against: built when first needed,
    // for this GPU, against the course's own headers (cached like any build). The lesson's
    // checks are built first (once, then cached): the early runner needs them.
    RunPlan plan;
    plan.lesson = &lesson;
    plan.step = &step;
    plan.seed = report.seed;
    if (options_.timing && step.timed && runs_on_gpu())
        plan.reference = builder_.reference(lesson, step);
    std::string checks_error;
    if (runs_on_gpu()) plan.checks = builder_.lesson_checks(lesson, false, false, &checks_error);
    if (options_.judge_split && !plan.checks.empty()) {
        plan.shims = builder_.lesson_shims(lesson, plan.checks, false, &checks_error);
        if (plan.shims.empty()) {
            report.internal_error = checks_error;
            return finish();
        }
    }
    // While nvcc builds the step, the first runner is already starting CUDA; it waits for its
    // key before it loads anything (ChildOptions::hold). The build's end releases it, a failed
    // build kills it. On a cache hit there is no build to overlap.
    auto hold = std::make_shared<std::atomic<int>>(0);
    std::future<RunnerRun> first;
    auto start_first_runner = [&](const std::string& built_object) {
        if (!runs_on_gpu() || plan.checks.empty()) return;
        RunPlan early = plan;
        early.object = built_object;
        auto argv = runner_argv(early, 0, true);
        ChildOptions o = runner_options(early);
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
                                  return builder_.emulated_object(lesson, file, stop.get());
                              });
    const bool built = builder_.compile(lesson, step, report.file, solution_file, report,
                                        plan.object, start_first_runner);
    hold->store(built ? 1 : -1);
    // A file nvcc did not accept gets its verdict now: the emulator's builds stop.
    if (!built) {
        stop_hazards->store(true);
        stop_emulated->store(true);
    }
    nvcc_done.set_value(built);
    // (a held runner is killed; `first` and `emulated` wait for their threads)
    if (!built) return finish();
    if (emulating) {
        if (emulated.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
            say("building for the CPU emulator");
        const EmulatedObject built_for_cpu = emulated.get();
        if (!builder_.screen_emulated_imports(built_for_cpu, report)) return finish();
        check_emulated(lesson, step, built_for_cpu, report);
        if (report.verdict != Verdict::InternalError && report.verdict != Verdict::SetupError &&
            !solution_file && source_key() == source_at_start) {
            report.fingerprint = emulated_fingerprint(lesson, step, report.file);
            report.checked_at = checked_now();
        }
        return finish();
    }
    if (!runs_on_gpu()) {
        const GpuInfo& g = gpu();
        report.verdict = Verdict::Skipped;
        report.reason = "it compiles; correctness and timing need an NVIDIA GPU (" +
                        (g.error.empty() ? std::string("none found") : g.error) + ")";
        return finish();
    }
    if (plan.checks.empty())
        report.internal_error = checks_error;
    else
        check_on_gpu(plan, report, &first);
    // After the sanitizer's: a tool the learner asked for speaks first.
    if (hazards.valid()) fold_hazards(report, hazards.get());
    conclude(report);
    return finish();
}

// The cases (and the timing) on the GPU, then compute-sanitizer when it was asked for.
void Checker::check_on_gpu(const RunPlan& plan, StepReport& report, std::future<RunnerRun>* first) {
    report.gpu = gpu().name;
    run(plan, report, first);
    if (options_.sanitize && report.internal_error.empty() && report.load_error.empty() &&
        report.verdict != Verdict::SetupError)
        sanitize(*plan.lesson, *plan.step, plan.object, report);
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
    const EmulatedObject emulated = builder_.emulated_object(lesson, file, cancel);
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
    const std::string checks = builder_.lesson_checks(lesson, true, false, &error);
    if (checks.empty()) {
        out.note = "hazard pass not run: " + error;
        return out;
    }
    Hasher h;
    h.add("hazards-v1").add(emulated.key).add(file_identity(checks));
    h.add(file_identity(builder_.emulated_runner()))
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
    std::vector<std::string> argv{builder_.emulated_runner(),
                                  "check",
                                  "--checks",
                                  checks,
                                  "--problem",
                                  step.problem,
                                  "--step",
                                  emulated.path,
                                  "--seed",
                                  format_seed(seed),
                                  "--first-case",
                                  "0",
                                  "--max-n",
                                  std::to_string(coverage ? kEmulatedMaxN : kHazardMaxN)};
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
    const std::string checks = builder_.lesson_checks(lesson, true, false, &error);
    quiet_ = was_quiet;
    if (checks.empty()) return {};
    const CompileRequest request = builder_.compile_request(lesson, file);
    const EmulatedBuild build =
        builder_.emulated_build(request.include_dirs, fs::absolute(file).string());
    std::error_code ec;
    const std::string self = fs::read_symlink("/proc/self/exe", ec).string();
    Hasher h;
    h.add("emulated-check-v1");
    h.add(compile_cache_key(request, file_identity(which(request.nvcc)),
                            headers_in(request.include_dirs)));
    h.add(emulated_cache_key(build, headers_in(build.include_dirs)));
    // the runner, the emulator it loads, and the split's learner program
    h.add(checks).add(file_identity(builder_.emulated_runner()));
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
void Checker::check_emulated(const LessonInfo& lesson, const StepInfo& step,
                             const EmulatedObject& b, StepReport& report) {
    report.gpu = kEmulatedLabel;
    // Say what could not be checked here rather than skip it silently.
    if (options_.sanitize)
        report.sanitizer_note =
            "compute-sanitizer needs a GPU: not run (the emulator's own "
            "race and bounds checks ran instead)";
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
    RunPlan plan;
    plan.lesson = &lesson;
    plan.step = &step;
    plan.seed = report.seed;
    plan.object = b.path;
    plan.emulated = true;
    plan.emulator_mode = options_.explain ? "explain" : !step.goals.empty() ? "pictures" : "check";
    std::string error;
    plan.checks = builder_.lesson_checks(lesson, true, false, &error);
    // The judge split: the learner's process runs the step on the emulator, with the lesson's
    // call shims built for it.
    if (options_.judge_split) {
        if (!plan.checks.empty())
            plan.shims = builder_.lesson_shims(lesson, plan.checks, true, &error);
        if (plan.shims.empty()) {
            report.verdict = Verdict::InternalError;
            report.reason = error;
            return;
        }
    }
    if (plan.checks.empty())
        report.internal_error = error;
    else
        run(plan, report);
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