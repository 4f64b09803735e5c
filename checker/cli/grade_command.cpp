// `cudalings grade`: a class's submissions in one batch, sealed, fair, in the instructor's
// formats; `grade merge` joins the shards of a class; `grade new-secret` makes a secret seed.
//
// The batch (this process) never runs a submission's code itself. Each submission of each round
// is graded by a worker, a child `cudalings grade` for that one submission (grading/task.h),
// one at a time per slot: a GPU of --gpus, or one of --jobs. A worker writes the submission's
// result file atomically; a worker that fails still leaves a result (written here) that says so.
// Student failures are data: the exit code is 0 when every submission was graded, 3 when the
// grader itself failed on one (its result has an "error" or an INTERNAL_ERROR step), 2 for a
// usage error and 4 when there is no sandbox here (nothing graded in either case).
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>

#include "../core/course/hash.h"
#include "../core/grading/batch.h"
#include "../core/grading/formats.h"
#include "../core/grading/result.h"
#include "../core/grading/seeds.h"
#include "../core/grading/submission.h"
#include "../core/grading/task.h"
#include "../core/report/report.h"
#include "../core/run/sandbox.h"
#include "../core/run/verdict.h"
#include "cli.h"
#include "tools.h"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace cudalings::grading;

namespace cudalings::cli {
namespace {

constexpr int kGraderFailed = 3;  // exit code: the grader failed on some submission
constexpr int kNoSandbox = 4;     // exit code: no sandbox here, nothing graded (see --no-sandbox)

struct GradeArgs {
    std::vector<std::string> submissions;
    std::string out = "grading-results";
    int repeat = 1;
    std::vector<std::string> formats;
    std::string seed_file;
    std::string gpus;
    int jobs = 0;
    std::string shard;
    bool no_sandbox = false;
    std::string bwrap;
    double scratch_mb = 512;
    std::string work_dir;
    bool keep_work = false;
    bool emulate = false;
    bool no_emulate = false;
    // A worker (started by the batch): one submission, one round, its result file's name.
    std::string result_name;
    std::string result_file;
    int round = 1;
    bool secret_on_fd = false;
    // grade merge
    std::vector<std::string> shards;
    // grade new-secret
    std::string secret_file;
};

std::vector<std::string> split(const std::string& text, char separator) {
    std::vector<std::string> parts;
    std::string part;
    for (char c : text + separator) {
        if (c != separator) {
            part += c;
        } else if (!part.empty()) {
            parts.push_back(part);
            part.clear();
        }
    }
    return parts;
}

// "I/N" with 1 <= I <= N.
bool parse_shard(const std::string& text, int& index, int& count) {
    auto slash = text.find('/');
    if (slash == std::string::npos) return false;
    try {
        std::size_t used = 0;
        index = std::stoi(text.substr(0, slash), &used);
        if (used != slash) return false;
        count = std::stoi(text.substr(slash + 1), &used);
        if (used != text.size() - slash - 1) return false;
    } catch (const std::exception&) {
        return false;
    }
    return count >= 1 && index >= 1 && index <= count;
}

// The GPUs of --gpus: "all" (those CUDA_VISIBLE_DEVICES names, else every GPU the driver
// lists) or a list ("0,1", "0,0" for two workers on one GPU).
bool parse_gpus(const std::string& text, std::vector<std::string>& gpus) {
    if (text != "all") {
        gpus = split(text, ',');
        return !gpus.empty();
    }
    if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) {
        gpus = split(visible, ',');
        return !gpus.empty();
    }
    std::error_code ec;
    int count = 0;
    for (const auto& e : fs::directory_iterator("/proc/driver/nvidia/gpus", ec)) {
        (void)e;
        ++count;
    }
    for (int i = 0; i < count; ++i) gpus.push_back(std::to_string(i));
    return !gpus.empty();
}

// The seeds of the batch: --seed (given), a secret (--seed-file, $CUDALINGS_SEED_FILE,
// $CUDALINGS_SEED), or fresh ones. The secret's variables are removed from this process's
// environment once read, so no child inherits them.
bool seed_source(const Options& o, const GradeArgs& a, SeedSource& seeds) {
    std::string secret, from;
    std::string file = a.seed_file;
    if (file.empty() && std::getenv("CUDALINGS_SEED_FILE"))
        file = std::getenv("CUDALINGS_SEED_FILE");
    if (!file.empty()) {
        bool ok = false;
        secret = read_file(file, &ok);
        if (!ok) {
            std::cerr << "cudalings: cannot read the secret seed file " << file << "\n";
            return false;
        }
        from = file;
    } else if (const char* env = std::getenv("CUDALINGS_SEED")) {
        secret = env;
        from = "CUDALINGS_SEED";
    }
    // No child inherits the secret, nor where it is kept.
    ::unsetenv("CUDALINGS_SEED");
    ::unsetenv("CUDALINGS_SEED_FILE");
    if (!from.empty()) {
        if (!o.seed.empty()) {
            std::cerr << "cudalings: give a secret seed or --seed, not both\n";
            return false;
        }
        unsigned char key[16];
        if (!parse_secret(secret, key)) {
            std::cerr << "cudalings: the secret seed in " << from
                      << " must be 32 hexadecimal digits (`cudalings grade new-secret FILE` "
                         "makes one)\n";
            return false;
        }
        seeds = secret_source(key);
        return true;
    }
    if (!o.seed.empty()) {
        CheckOptions parsed;
        if (!check_options(o, parsed)) return false;
        seeds.mode = SeedSource::Mode::Given;
        seeds.given = parsed.seed;
    }
    return true;
}

// The sandbox every submission runs in, or why there is none (then grading stops unless
// --no-sandbox).
std::shared_ptr<const Sandbox> grading_sandbox(const GradeArgs& a, bool quiet) {
    if (a.no_sandbox) {
        if (!quiet)
            std::cerr << "cudalings: WARNING: grading without a sandbox (--no-sandbox): each "
                         "submission's code runs as you, can read and write your files, signal "
                         "your processes and use the network. Grade only code you trust this "
                         "way, or install bubblewrap (see docs/instructor-guide.md).\n";
        return nullptr;
    }
    SandboxSettings settings;
    settings.bwrap = a.bwrap;
    settings.scratch_bytes = static_cast<std::size_t>(a.scratch_mb * (1 << 20));
    std::string why;
    auto sandbox = open_sandbox(settings, why);
    if (!sandbox)
        std::cerr << "cudalings: grade runs every submission in a sandbox, and there is none "
                     "here: "
                  << why
                  << ".\n  Install bubblewrap (Debian/Ubuntu: apt install bubblewrap), or point "
                     "--bwrap or CUDALINGS_BWRAP at a bwrap binary, and build cudalings with "
                     "libseccomp (libseccomp-dev) for the sandbox's filter; --no-sandbox grades "
                     "without one (not safe for untrusted code).\n";
    return sandbox;
}

CheckOptions grading_options(const Options& o, const GradeArgs& a) {
    CheckOptions options;
    options.timing = !o.no_time;
    options.compile_seconds = o.compile_timeout;
    options.case_idle_seconds = o.case_timeout;
    options.sanitize = o.sanitize;
    options.judge_split = judge_split_wanted(o);
    // Without a GPU, grading emulates (correctness only, and every result says so).
    options.emulate = a.emulate;
    options.emulate_without_gpu = !a.no_emulate;
    return options;
}

// The instructor's course and the steps to grade: every step, or those --step names (steps or
// lessons, separated by commas: "01,02/3").
bool prepare(const Options& o, CoursePaths& course, Manifest& m, std::vector<StepRef>& steps) {
    if (!open_course(o, course, m)) return false;
    if (o.step.empty()) {
        steps = all_steps(m);
        return true;
    }
    for (const auto& part : split(o.step, ',')) {
        std::string error;
        auto found = resolve_steps(m, part, &error);
        if (!found) {
            std::cerr << "cudalings: " << error << "\n";
            return false;
        }
        for (const auto& ref : *found)
            if (std::none_of(steps.begin(), steps.end(), [&](const StepRef& s) {
                    return s.lesson == ref.lesson && s.step == ref.step;
                }))
                steps.push_back(ref);
    }
    return true;
}

std::string result_file_name(const std::string& name, int round, int repeat) {
    return name + (repeat > 1 ? ".round" + std::to_string(round) : "");
}

// ---------------------------------------------------------------- the worker

// One submission, one round: grade it, write its result (and its Gradescope file).
int run_worker(const Options& o, const GradeArgs& a) {
    CoursePaths course;
    Manifest m;
    std::vector<StepRef> steps;
    if (!prepare(o, course, m, steps)) return exit_code::usage;
    if (a.submissions.size() != 1) {
        std::cerr << "cudalings: a grading worker takes one submission\n";
        return exit_code::usage;
    }
    GradeContext context;
    context.course = course;
    context.manifest = m;
    context.steps = steps;
    context.options = grading_options(o, a);
    context.work_dir = a.work_dir.empty() ? course.state_dir : a.work_dir;
    context.out_dir = a.out;
    context.course_fingerprint = course_fingerprint(course.root);
    if (a.secret_on_fd) {
        char buffer[128] = {};
        ssize_t got = ::read(4, buffer, sizeof buffer - 1);
        ::close(4);
        unsigned char key[16];
        if (got <= 0 || !parse_secret(std::string(buffer, static_cast<std::size_t>(got)), key)) {
            std::cerr << "cudalings: the grading worker did not receive its secret\n";
            return kGraderFailed;
        }
        context.seeds = secret_source(key);
    } else if (!seed_source(o, a, context.seeds)) {
        return exit_code::usage;
    }
    json result;
    auto sandbox = grading_sandbox(a, true);
    if (!sandbox && !a.no_sandbox) {
        result = {{"format", kResultFormat},       {"version", kFormatVersion},
                  {"tool", tool_version()},        {"submission", a.submissions.front()},
                  {"name", a.result_name},         {"round", a.round},
                  {"error", "the sandbox failed"}, {"results", json::array()}};
        add_totals(result);
    } else {
        context.options.sandbox = sandbox;
        if (sandbox) context.sandbox = sandbox->description();
        try {
            result = grade_submission(context, a.submissions.front(), a.result_name, a.round);
        } catch (const std::exception& e) {
            // The grader's own failure on this submission: recorded in its result, which is
            // still written (the batch then says the grader failed).
            result = {{"format", kResultFormat},
                      {"version", kFormatVersion},
                      {"tool", tool_version()},
                      {"submission", a.submissions.front()},
                      {"name", a.result_name},
                      {"round", a.round},
                      {"error", std::string("the grader failed on this submission: ") + e.what()},
                      {"results", json::array()}};
            add_totals(result);
            make_valid_utf8(result);
        }
    }
    // The graded copy's builds are of no use to anyone else.
    std::error_code ec;
    fs::remove_all(course.state_dir + "/build", ec);
    fs::remove_all(course.state_dir + "/build-emu", ec);
    // Written whatever it holds: a text that is still not valid UTF-8 (every text is made
    // valid where it is captured) is written with replacement characters, and the result says
    // the grader failed there, rather than a worker that dies with no result at all.
    bool repaired = false;
    std::string text = dump_json(result, 2, &repaired);
    if (repaired) {
        result["error"] =
            "the grader wrote this result with replacement characters: a text in it "
            "was not valid UTF-8";
        text = dump_json(result, 2);
    }
    bool written = write_file_atomic(a.out + "/" + a.result_file + ".json", text + "\n");
    auto wanted = [&](const char* format) {
        return std::find(a.formats.begin(), a.formats.end(), format) != a.formats.end();
    };
    auto converted = [&](auto convert, int indent) {
        try {
            return dump_json(convert(result), indent);
        } catch (const std::exception& e) {
            std::cerr << "cudalings: the result of " << a.submissions.front()
                      << " cannot be converted: " << e.what() << "\n";
            return std::string();
        }
    };
    if (wanted("gradescope")) {
        std::string gradescope = converted(gradescope_results, 2);
        written = !gradescope.empty() &&
                  write_file_atomic(a.out + "/" + a.result_file + ".gradescope.json",
                                    gradescope + "\n") &&
                  written;
    }
    if (wanted("classroom")) {
        std::string classroom = converted(classroom_results, -1);
        written =
            !classroom.empty() &&
            write_file_atomic(a.out + "/" + a.result_file + ".classroom.json", classroom + "\n") &&
            written;
    }
    if (!written) {
        std::cerr << "cudalings: cannot write the result of " << a.submissions.front() << " into "
                  << a.out << "\n";
        return kGraderFailed;
    }
    return exit_code::pass;
}

// ---------------------------------------------------------------- the batch

struct Task {
    std::string submission;
    std::string name;
    std::string file;  // the result file's name, without .json
    int round = 1;
};

// The worker's command line: this program, the same course and options, one submission.
std::vector<std::string> worker_argv(const Options& o, const GradeArgs& a, const Task& t,
                                     const std::string& root, const std::string& state,
                                     const std::string& work, bool secret) {
    std::error_code ec;
    std::vector<std::string> argv{fs::read_symlink("/proc/self/exe", ec).string(),
                                  "--root",
                                  root,
                                  "--state-dir",
                                  state,
                                  "grade",
                                  t.submission,
                                  "--out",
                                  a.out,
                                  "--result-name",
                                  t.name,
                                  "--result-file",
                                  t.file,
                                  "--round",
                                  std::to_string(t.round),
                                  "--work-dir",
                                  work,
                                  "--compile-timeout",
                                  std::to_string(o.compile_timeout),
                                  "--case-timeout",
                                  std::to_string(o.case_timeout),
                                  "--scratch-mb",
                                  std::to_string(a.scratch_mb)};
    if (!o.step.empty()) argv.insert(argv.end(), {"--step", o.step});
    if (o.no_time) argv.push_back("--no-time");
    if (o.sanitize) argv.push_back("--sanitize");
    if (!judge_split_wanted(o)) argv.push_back("--in-process");
    if (a.emulate) argv.push_back("--emulate");
    if (a.no_emulate) argv.push_back("--no-emulate");
    if (a.no_sandbox) argv.push_back("--no-sandbox");
    if (!a.bwrap.empty()) argv.insert(argv.end(), {"--bwrap", a.bwrap});
    if (!o.seed.empty()) argv.insert(argv.end(), {"--seed", o.seed});
    if (secret) argv.push_back("--secret-on-fd");
    for (const auto& f : a.formats) argv.insert(argv.end(), {"--format", f});
    return argv;
}

// A worker's longest honest run: every step built (twice under emulation) and run in up to
// four runner processes, with the sanitizer's four tools on top when asked.
double worker_budget(const Options& o, std::size_t steps) {
    double per_step = 2 * (3 * o.compile_timeout + 30) + 4 * 180 + (o.sanitize ? 4 * 180 : 0) + 60;
    return 60 + per_step * static_cast<double>(steps);
}

json failed_result(const Task& t, const std::string& why) {
    json r{{"format", kResultFormat},
           {"version", kFormatVersion},
           {"tool", tool_version()},
           {"submission", t.submission},
           {"name", t.name},
           {"round", t.round},
           {"error", why},
           {"results", json::array()}};
    add_totals(r);
    return r;
}

int cmd_grade(const Options& o, const GradeArgs& a) {
    CoursePaths course;
    Manifest m;
    std::vector<StepRef> steps;
    if (!prepare(o, course, m, steps)) return exit_code::usage;
    for (const auto& f : a.formats) {
        if (f != "gradescope" && f != "classroom" && f != "junit" && f != "csv" && f != "json") {
            std::cerr << "cudalings: unknown format " << f
                      << " (gradescope, classroom, junit, csv; the JSON results are always "
                         "written)\n";
            return exit_code::usage;
        }
    }
    SeedSource seeds;
    if (!seed_source(o, a, seeds)) return exit_code::usage;

    // The submissions: existing folders, each once, in a fixed order (every shard agrees).
    std::vector<std::string> submissions;
    bool missing = false;
    for (const auto& s : a.submissions) {
        std::error_code ec;
        fs::path p = fs::absolute(s, ec).lexically_normal();
        if (!p.has_filename()) p = p.parent_path();
        if (!fs::is_directory(p, ec)) {
            std::cerr << "cudalings: no submission folder " << s << "\n";
            missing = true;
            continue;
        }
        submissions.push_back(p.string());
    }
    if (missing) return exit_code::usage;
    std::sort(submissions.begin(), submissions.end());
    submissions.erase(std::unique(submissions.begin(), submissions.end()), submissions.end());
    const std::vector<std::string> names = result_names(submissions);

    int shard_index = 1, shard_count = 1;
    if (!a.shard.empty() && !parse_shard(a.shard, shard_index, shard_count)) {
        std::cerr << "cudalings: --shard takes I/N with 1 <= I <= N (e.g. 2/8)\n";
        return exit_code::usage;
    }
    // Slots: one worker per GPU of --gpus, --jobs workers, or one.
    std::vector<std::string> gpus;
    if (!a.gpus.empty() && a.jobs > 0) {
        std::cerr << "cudalings: give --gpus or --jobs, not both\n";
        return exit_code::usage;
    }
    if (!a.gpus.empty() && !parse_gpus(a.gpus, gpus)) {
        std::cerr << "cudalings: --gpus " << a.gpus << ": no GPU found\n";
        return exit_code::usage;
    }
    const std::size_t slots = !gpus.empty() ? gpus.size() : std::max(1, a.jobs);
    for (std::size_t i = 0; i < gpus.size(); ++i)
        if (std::count(gpus.begin(), gpus.end(), gpus[i]) > 1 && !o.no_time) {
            std::cerr << "cudalings: note: several workers share GPU " << gpus[i]
                      << ": their times disturb each other (use --no-time, or one worker per "
                         "GPU, for times you grade)\n";
            break;
        }

    auto sandbox = grading_sandbox(a, false);
    if (!sandbox && !a.no_sandbox) return kNoSandbox;
    if (!make_dirs(a.out)) {
        std::cerr << "cudalings: cannot create " << a.out << "\n";
        return exit_code::usage;
    }
    // The work folder: graded copies and the slots' caches, removed at the end.
    std::string work = a.work_dir;
    if (work.empty()) {
        const char* tmp = std::getenv("TMPDIR");
        std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/cudalings-grade-XXXXXX";
        std::vector<char> buffer(pattern.begin(), pattern.end());
        buffer.push_back('\0');
        if (!::mkdtemp(buffer.data())) {
            std::cerr << "cudalings: cannot create a work folder in " << pattern << "\n";
            return exit_code::usage;
        }
        work = buffer.data();
    } else if (!make_dirs(work)) {
        std::cerr << "cudalings: cannot create " << work << "\n";
        return exit_code::usage;
    }
    const std::string out = fs::absolute(a.out).string();

    std::vector<Task> tasks;
    for (int round = 1; round <= a.repeat; ++round)
        for (std::size_t i = 0; i < submissions.size(); ++i)
            if (static_cast<int>(i % static_cast<std::size_t>(shard_count)) == shard_index - 1)
                tasks.push_back(
                    {submissions[i], names[i], result_file_name(names[i], round, a.repeat), round});

    // The secret goes to each worker on a pipe (ChildOptions::secret, fd 4), never on its
    // command line or in its environment.
    const std::string secret =
        seeds.mode == SeedSource::Mode::Secret ? key_to_hex(seeds.key) : std::string();
    GradeArgs worker_args = a;
    worker_args.out = out;
    std::atomic<std::size_t> next{0};
    std::mutex lock;
    std::size_t done = 0;
    std::vector<BatchEntry> entries(tasks.size());
    auto run_slot = [&](std::size_t slot) {
        const std::string state = work + "/slot-" + std::to_string(slot);
        make_dirs(state);
        for (std::size_t t = next++; t < tasks.size(); t = next++) {
            const Task& task = tasks[t];
            ChildOptions co;
            co.wall_seconds = worker_budget(o, steps.size());
            co.output_cap = 16 * 1024;
            co.secret = secret;
            if (!gpus.empty()) {
                co.env["CUDA_VISIBLE_DEVICES"] = gpus[slot];
                co.env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
            }
            auto child = run_supervised(
                worker_argv(o, worker_args, task, course.root, state, state, !secret.empty()), co);
            BatchEntry& entry = entries[t];
            entry.file = task.file + ".json";
            bool ok = false;
            std::string text = read_file(out + "/" + entry.file, &ok);
            try {
                if (!ok || !child.exited_ok()) throw std::runtime_error("no result");
                entry.result = json::parse(text);
            } catch (const std::exception&) {
                std::string why =
                    !child.started ? "the grading worker could not start: " + child.start_error
                    : child.timed_out
                        ? "grading took longer than " + std::to_string(int(co.wall_seconds)) + " s"
                    : child.signal ? "the grading worker died: " + describe_signal(child.signal)
                                   : "the grading worker failed (exit code " +
                                         std::to_string(child.exit_code) + ")";
                std::string said = child.err.head.substr(0, 600);
                entry.result = failed_result(task, why + (said.empty() ? "" : ": " + said));
                make_valid_utf8(entry.result);  // the cut may split a character; paths are bytes
                write_file_atomic(out + "/" + entry.file, dump_json(entry.result, 2) + "\n");
            }
            std::lock_guard<std::mutex> guard(lock);
            ++done;
            std::cerr << "[" << done << "/" << tasks.size() << "] " << task.file << ": "
                      << one_line(entry.result) << " (" << std::fixed << std::setprecision(1)
                      << entry.result.value("seconds", child.wall_seconds) << " s)\n";
        }
    };
    std::vector<std::thread> threads;
    for (std::size_t s = 0; s < std::min(slots, std::max<std::size_t>(1, tasks.size())); ++s)
        threads.emplace_back(run_slot, s);
    for (auto& t : threads) t.join();

    Hasher batch;
    for (const auto& s : submissions) batch.add(s);
    batch.add(o.step).add(std::to_string(a.repeat)).add(seeds.mode_name()).add(seeds.fingerprint);
    batch.add(o.seed).add(o.no_time ? "untimed" : "timed").add(o.sanitize ? "sanitize" : "");
    json summary{{"batch",
                  {{"fingerprint", batch.hex()},
                   {"submissions", submissions.size()},
                   {"rounds", a.repeat},
                   {"steps", o.step.empty() ? "all" : o.step},
                   {"course", course.root},
                   {"seed", seeds.mode_name()}}},
                 {"shard", {{"index", shard_index}, {"count", shard_count}}},
                 {"sandbox", sandbox ? json(sandbox->description()) : json(nullptr)}};
    std::string error;
    if (!write_batch_files(out, summary, entries, a.formats, error)) {
        std::cerr << "cudalings: " << error << "\n";
        return kGraderFailed;
    }
    if (!a.keep_work && a.work_dir.empty()) {
        std::error_code ec;
        fs::remove_all(work, ec);
    }
    int failures = 0, passed = 0, failed = 0;
    for (const auto& e : entries) {
        failures += grading_failed(e.result);
        passed += e.result.value("passed", 0);
        failed += e.result.value("failed", 0) + e.result.value("skipped", 0);
    }
    std::cout << tasks.size() << " graded (" << passed << " steps passed, " << failed
              << " did not); results in " << out << "\n";
    if (failures) {
        std::cerr << "cudalings: the grader failed on " << failures
                  << " submission(s): see \"error\" and INTERNAL_ERROR in their results\n";
        return kGraderFailed;
    }
    return exit_code::pass;
}

// ---------------------------------------------------------------- merge

int cmd_merge(const GradeArgs& a) {
    std::vector<BatchEntry> entries;
    json batch;
    std::vector<int> seen;
    int count = 0;
    if (!make_dirs(a.out)) {
        std::cerr << "cudalings: cannot create " << a.out << "\n";
        return exit_code::usage;
    }
    for (const auto& dir : a.shards) {
        bool ok = false;
        json summary;
        try {
            summary = json::parse(read_file(dir + "/summary.json", &ok));
        } catch (const std::exception&) {
            ok = false;
        }
        if (!ok || summary.value("format", "") != kSummaryFormat) {
            std::cerr << "cudalings: " << dir << " holds no grading summary (summary.json)\n";
            return exit_code::usage;
        }
        if (summary.value("version", 0) != kFormatVersion) {
            std::cerr << "cudalings: " << dir << " was graded by another version of cudalings ("
                      << summary.value("tool", "?") << ")\n";
            return exit_code::usage;
        }
        const json& b = summary["batch"];
        if (batch.is_null()) {
            batch = b;
            count = summary["shard"].value("count", 1);
        } else if (b.value("fingerprint", "") != batch.value("fingerprint", "") ||
                   summary["shard"].value("count", 1) != count) {
            std::cerr << "cudalings: " << dir
                      << " is a shard of another batch (other submissions, steps, seeds or "
                         "shard count)\n";
            return exit_code::usage;
        }
        int index = summary["shard"].value("index", 1);
        if (std::find(seen.begin(), seen.end(), index) != seen.end()) {
            std::cerr << "cudalings: shard " << index << "/" << count << " given twice\n";
            return exit_code::usage;
        }
        seen.push_back(index);
        for (const auto& line : summary["results"]) {
            BatchEntry e;
            e.file = line.value("file", "");
            bool read = false;
            std::string text = read_file(dir + "/" + e.file, &read);
            try {
                if (!read) throw std::runtime_error("missing");
                e.result = json::parse(text);
            } catch (const std::exception&) {
                std::cerr << "cudalings: " << dir << "/" << e.file << " is missing or damaged\n";
                return kGraderFailed;
            }
            if (fs::absolute(dir) != fs::absolute(a.out)) {
                write_file_atomic(a.out + "/" + e.file, text);
                for (const char* format : {".gradescope.json", ".classroom.json"}) {
                    std::string file = e.file.substr(0, e.file.size() - 5) + format;
                    bool has = false;
                    std::string copy = read_file(dir + "/" + file, &has);
                    if (has) write_file_atomic(a.out + "/" + file, copy);
                }
            }
            entries.push_back(std::move(e));
        }
    }
    int missing = 0;
    for (int i = 1; i <= count; ++i)
        if (std::find(seen.begin(), seen.end(), i) == seen.end()) {
            std::cerr << "cudalings: shard " << i << "/" << count << " is missing\n";
            ++missing;
        }
    // The unsharded order: by round, then by submission.
    std::sort(entries.begin(), entries.end(), [](const BatchEntry& x, const BatchEntry& y) {
        int rx = x.result.value("round", 1), ry = y.result.value("round", 1);
        if (rx != ry) return rx < ry;
        return x.result.value("submission", "") < y.result.value("submission", "");
    });
    json summary{
        {"batch", batch}, {"shard", {{"index", 1}, {"count", 1}}}, {"merged_from", a.shards}};
    std::string error;
    if (!write_batch_files(a.out, summary, entries, a.formats, error)) {
        std::cerr << "cudalings: " << error << "\n";
        return kGraderFailed;
    }
    int failures = 0;
    for (const auto& e : entries) failures += grading_failed(e.result);
    std::cout << entries.size() << " results from " << seen.size() << " shard(s) merged into "
              << a.out << "\n";
    return missing || failures ? kGraderFailed : exit_code::pass;
}

int cmd_new_secret(const GradeArgs& a) {
    std::error_code ec;
    if (fs::exists(a.secret_file, ec)) {
        std::cerr << "cudalings: " << a.secret_file << " exists: a secret is never overwritten\n";
        return exit_code::usage;
    }
    // Readable by its owner only, from the moment it exists.
    mode_t old = ::umask(077);
    bool ok = write_file_atomic(a.secret_file, new_secret() + "\n");
    ::umask(old);
    if (!ok) {
        std::cerr << "cudalings: cannot write " << a.secret_file << "\n";
        return exit_code::usage;
    }
    std::cout << "a new secret seed is in " << a.secret_file << " (fingerprint " << [&] {
        unsigned char key[16];
        parse_secret(read_file(a.secret_file), key);
        return secret_fingerprint(key);
    }() << "); keep it with the course, out of the students' reach\n";
    return exit_code::pass;
}

}  // namespace

Command add_grade_command(CLI::App& app, Options& o) {
    auto args = std::make_shared<GradeArgs>();
    auto* grade = app.add_subcommand("grade", tool_summary("grade"));
    grade->add_option("submissions", args->submissions,
                      "submission folders (a course copy, lesson folders, or loose step files)");
    grade->add_option("--step", o.step,
                      "steps or lessons to grade, separated by commas (default: every step)");
    grade->add_option("--out", args->out, "where the results go (default grading-results)");
    grade->add_option("--repeat", args->repeat, "grade the whole batch this many times (rounds)")
        ->check(CLI::PositiveNumber);
    grade
        ->add_option("--format", args->formats,
                     "also write: gradescope (results.json), classroom (GitHub Classroom), "
                     "junit (junit.xml), csv (grades.csv)")
        ->delimiter(',');
    grade->add_option("--seed", o.seed,
                      "the same (public) seed for every submission, to replay a report");
    grade->add_option("--seed-file", args->seed_file,
                      "a file holding the secret seed (also CUDALINGS_SEED_FILE, CUDALINGS_SEED)");
    grade->add_option("--gpus", args->gpus,
                      "one worker per GPU: all, or a list such as 0,1 (0,0: two on GPU 0)");
    grade->add_option("--jobs", args->jobs, "this many workers (without GPUs: emulation)")
        ->check(CLI::PositiveNumber);
    grade->add_option("--shard", args->shard,
                      "grade only shard I of N of the submissions (I/N), for `grade merge`");
    grade->add_flag("--no-time", o.no_time, "correctness only");
    grade->add_flag("--sanitize", o.sanitize, "also run compute-sanitizer");
    add_judge_split_flags(grade, o);
    grade->add_flag("--emulate", args->emulate, "run on the CPU emulator even where a GPU is");
    grade->add_flag("--no-emulate", args->no_emulate,
                    "without a GPU, only compile (SKIPPED) instead of emulating");
    grade
        ->add_option("--compile-timeout", o.compile_timeout,
                     "seconds of CPU time each compiler process of a build may use (its wall-clock "
                     "limit: 3x + 30 s)")
        ->check(CLI::PositiveNumber);
    grade->add_option("--case-timeout", o.case_timeout, "seconds without progress before a TIMEOUT")
        ->check(CLI::PositiveNumber);
    grade->add_flag("--no-sandbox", args->no_sandbox,
                    "grade without the bubblewrap sandbox (unsafe for untrusted code)");
    grade->add_option("--bwrap", args->bwrap, "the bwrap program (default: CUDALINGS_BWRAP, PATH)");
    grade
        ->add_option("--scratch-mb", args->scratch_mb,
                     "size of each sandboxed child's scratch /tmp (default 512)")
        ->check(CLI::PositiveNumber);
    grade->add_option("--work-dir", args->work_dir,
                      "where graded copies are made (default: a fresh folder in TMPDIR)");
    grade->add_flag("--keep-work", args->keep_work, "keep the work folder (for debugging)");
    // A worker, started by the batch for one submission (not for people).
    grade->add_option("--result-name", args->result_name)->group("");
    grade->add_option("--result-file", args->result_file)->group("");
    grade->add_option("--round", args->round)->group("");
    grade->add_flag("--secret-on-fd", args->secret_on_fd)->group("");

    auto* merge = grade->add_subcommand(
        "merge", "join the shards of a class (folders written by grade --shard) into one");
    merge->add_option("shards", args->shards, "the shards' output folders")->required();
    merge->add_option("--out", args->out, "where the merged results go")->required();
    merge->add_option("--format", args->formats, "also write: junit, csv, gradescope")
        ->delimiter(',');
    auto* secret = grade->add_subcommand(
        "new-secret", "write a fresh secret seed into a new file (readable by you only)");
    secret->add_option("file", args->secret_file, "the file to create")->required();

    return {grade, [&o, args, merge, secret, grade] {
                if (*merge) return cmd_merge(*args);
                if (*secret) return cmd_new_secret(*args);
                if (args->submissions.empty()) {
                    std::cerr << grade->help();
                    return exit_code::usage;
                }
                if (!args->result_name.empty()) return run_worker(o, *args);
                return cmd_grade(o, *args);
            }};
}

}  // namespace cudalings::cli
