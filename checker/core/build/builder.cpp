#include "builder.h"

#include <sys/stat.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <sstream>

#include "hash.h"
#include "policy.h"
#include "protocol.h"
#include "runner_process.h"
#include "sandbox.h"
#include "supervise.h"

#ifndef CUDALINGS_SOURCE_DIR
#define CUDALINGS_SOURCE_DIR "/nonexistent"
#endif

namespace fs = std::filesystem;
using nlohmann::json;

namespace cudalings {

std::string which(const std::string& program) {
    std::string found = find_program(program);
    return found.empty() ? program : found;
}

namespace {

using Clock = std::chrono::steady_clock;

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

Builder::Builder(CoursePaths paths, BuildOptions options, std::function<const GpuInfo&()> gpu,
                 std::function<void(const std::string&)> progress)
    : paths_(std::move(paths)),
      options_(std::move(options)),
      gpu_(std::move(gpu)),
      progress_(std::move(progress)) {}

std::string Builder::nvcc() const {
    if (!options_.nvcc.empty()) return options_.nvcc;
    return configured_nvcc();  // setup.h: CUDALINGS_NVCC, the build's nvcc, or PATH
}

bool Builder::compile(const LessonInfo& lesson, const StepInfo& step, const std::string& source,
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
        cmd.insert(cmd.begin() + 1,
                   std::string("-arch=") +
                       (request.arch.empty() ? std::string(kCompileOnlyArch) : request.arch));
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
    // Builder::screen_emulated_imports.)
    if (!violation && child.exited_ok() && request.made != CompileRequest::Makes::FrontEnds)
        violation = screen_imports(temporary, seconds_until(build_deadline), sandbox, build_memory);
    report.compile_seconds = std::chrono::duration<double>(Clock::now() - start).count();
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

CompileRequest Builder::compile_request(const LessonInfo& lesson, const std::string& source) {
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

EmulatedBuild Builder::emulated_build(std::vector<std::string> include_dirs,
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

ChecksToolchain Builder::toolchain(bool emulated) {
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

std::string Builder::lesson_checks(const LessonInfo& lesson, bool emulated, bool baselines,
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

std::string Builder::lesson_shims(const LessonInfo& lesson, const std::string& checks,
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

std::string Builder::emulated_runner() const { return paths_.tool_dir + "/cudalings-runner-emu"; }

std::string Builder::reference(const LessonInfo& lesson, const StepInfo& step) {
    StepReport scratch;
    std::string object;
    say("building the reference solution (once per step and GPU)");
    if (!compile(lesson, step, paths_.step_file(lesson, step, true), true, scratch, object))
        return {};
    return object;
}

// The learner's file (already accepted by nvcc) built for the emulator, or cached. Says why not:
// the emulator's limit (`skipped`: a blocker, or g++ could not build it), a setup problem, or
// the checker's own failure (`internal`).
EmulatedObject Builder::emulated_object(const LessonInfo& lesson, const std::string& file,
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
    b.coverage = options_.coverage;
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
bool Builder::screen_emulated_imports(const EmulatedObject& built, StepReport& report) {
    if (built.path.empty()) return true;
    const MemoryGroup memory(kBuildMemoryLimit);
    auto violation =
        screen_imports(built.path, options_.compile_seconds, options_.sandbox.get(), memory);
    if (!violation) return true;
    report.verdict = Verdict::Rejected;
    report.reason = violation->rule + ": " + violation->detail;
    return false;
}

}  // namespace cudalings
