// `cudalings watch [STEP]`: checks the current step (the named one, else the one the learner is
// on: cli.h's current_step) and again every time its file is saved; after a pass it names the
// reference solution to compare with and moves on to the next unfinished step, the rest of the
// same lesson first (a step that needs a GPU, where there is none, is passed over). Between
// checks it shows the course's progress bar and the step being watched. Keys (on a terminal, or
// a line on standard input): Enter or r checks again, n skips to the next step, h shows the
// hint, l lists the steps, q quits. Inotify notices a save at once; where a
// file system says nothing (WSL2's Windows drives, network shares) the file is looked at every
// second, and Enter always checks.
//
// --json: one JSON object per line: {"event": "watching"|"change"|"result"|"done", ...}.
#include <termios.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <iostream>

#include "../core/course/watch.h"
#include "../core/report/history.h"
#include "../core/report/text.h"
#include "../core/run/supervise.h"
#include "../core/run/verdict.h"
#include "cli.h"

namespace cudalings::cli {
namespace {

// The terminal's settings before watch made keys arrive one at a time; restored on exit and by
// the signal handler (tcsetattr is async-signal-safe).
termios saved_terminal;
bool terminal_changed = false;

void restore_terminal(int) {
    if (terminal_changed) ::tcsetattr(0, TCSANOW, &saved_terminal);
    if (live_terminal(2)) (void)!::write(2, "\r\033[K", 4);
}

struct KeysOneAtATime {
    KeysOneAtATime() {
        if (!::isatty(0) || ::tcgetattr(0, &saved_terminal) != 0) return;
        termios raw = saved_terminal;
        raw.c_lflag &= static_cast<tcflag_t>(~(ICANON | ECHO));
        raw.c_cc[VMIN] = 1;
        raw.c_cc[VTIME] = 0;
        terminal_changed = ::tcsetattr(0, TCSANOW, &raw) == 0;
    }
    ~KeysOneAtATime() { restore_terminal(0); }
};

void emit(const nlohmann::json& event) { std::cout << versioned(event).dump() << std::endl; }

double now_seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

int run_watch(Options& o) {
    CoursePaths paths;
    Manifest m;
    if (!open_course(o, paths, m)) return exit_code::usage;
    Progress progress(paths.state_dir + "/progress.json");
    std::vector<StepRef> chosen;
    if (!select_steps(o, paths, m, progress, chosen)) return exit_code::usage;
    if (chosen.size() > 1) {
        std::cerr << "cudalings: watch takes one step (or none: the one you are on)\n";
        return exit_code::usage;
    }
    CheckOptions options;
    if (!check_options(o, options)) return exit_code::usage;
    const bool fixed_seed = !o.seed.empty();
    options.emulate = o.emulate || o.explain;
    options.explain = o.explain;
    options.first_failure = !o.all_cases;  // a verdict as soon as there is one
#if defined(CUDALINGS_AUTO_EMULATE) && CUDALINGS_AUTO_EMULATE
    options.emulate_without_gpu = !o.no_emulate;
#endif
    Checker checker(paths, m, options);
    RenderOptions render;
    render.color = use_color(o);
    render.verbose = o.verbose;
    render.command = "./cudalings";
    const bool screen = !o.json && live_terminal(1);
    const bool unicode = unicode_terminal();
    KeysOneAtATime keys;
    end_children_on_termination(restore_terminal);  // and restore the terminal on Ctrl-C
    int input = 0;                                  // standard input, until it ends

    std::optional<StepRef> current =
        chosen.empty() ? std::nullopt : std::optional<StepRef>(chosen.front());
    FileWatcher watcher;
    auto file_of = [&](const StepRef& ref) {
        return paths.step_file(m.lessons[ref.lesson], m.lessons[ref.lesson].steps[ref.step], false);
    };
    auto status = [&] {
        std::size_t done = 0, total = 0;
        for (const auto& ref : all_steps(m)) {
            ++total;
            done += progress.passed(step_name(m, ref));
        }
        if (o.json) {
            emit({{"event", "watching"},
                  {"step", current ? step_name(m, *current) : ""},
                  {"file", current ? file_of(*current) : ""},
                  {"done", done},
                  {"total", total},
                  {"inotify", watcher.using_inotify()}});
            return;
        }
        std::cout << "\n"
                  << progress_bar(done, total, 30, unicode) << "  " << done << " of " << total
                  << " steps done\n";
        if (current)
            std::cout << "Watching "
                      << std::filesystem::relative(file_of(*current), paths.root).string()
                      << ": save it to check again.\n"
                      << "[Enter] check  [n] next step  [h] hint  [l] list  [q] quit\n"
                      << std::flush;
    };

    bool check_now = true;
    bool rerun = false;  // a check asked for with a key runs again even if nothing changed
    while (current) {
        if (check_now) {
            check_now = false;
            if (screen) std::cout << "\033[2J\033[H" << std::flush;  // a fresh screen per check
            if (!fixed_seed)
                checker = Checker(paths, m, [&] {
                    CheckOptions fresh = options;
                    fresh.seed = fresh_seed();  // fresh inputs on every check, as `check` does
                    fresh.reuse_unchanged = options.reuse_unchanged && !rerun;
                    return fresh;
                }());
            record_current_step(paths.state_dir, step_name(m, *current));  // for `hint`
            rerun = false;
            const StepReport r = check_and_record(checker, o, m, progress, *current);
            // After a pass (or a step this machine cannot run): the reference to compare with,
            // and the next step, the rest of this lesson first.
            std::optional<StepRef> next;
            const std::string after = what_next(paths, m, progress, *current, r, next);
            if (o.json) {
                nlohmann::json event{
                    {"event", "result"}, {"t", now_seconds()}, {"report", to_json(r)}};
                what_next_json(paths, m, progress, *current, r, event);
                emit(event);
            } else {
                std::cout << render_text(r, render) << after << std::flush;
            }
            if (!after.empty()) {
                if (!next) {
                    if (o.json) emit({{"event", "done"}});
                    return exit_code::pass;
                }
                current = next;
                check_now = true;  // the next step is checked once, then watched
            }
            watcher.watch(file_of(*current));
            if (!check_now) status();
            continue;
        }
        const auto event = watcher.wait(input, -1);
        if (event == FileWatcher::Event::Changed) {
            if (o.json) emit({{"event", "change"}, {"t", now_seconds()}, {"file", watcher.file()}});
            check_now = true;
            continue;
        }
        if (event != FileWatcher::Event::Input) continue;
        char key = 0;
        if (::read(input, &key, 1) <= 0) {
            input = -1;  // standard input ended: keep watching the file alone
            continue;
        }
        switch (key) {
            case '\n':
            case '\r':
            case 'r':
                check_now = true;
                rerun = true;
                break;
            case 'n': {
                auto steps = all_steps(m);
                for (std::size_t i = 0; i + 1 < steps.size(); ++i)
                    if (steps[i].lesson == current->lesson && steps[i].step == current->step) {
                        current = steps[i + 1];
                        break;
                    }
                check_now = true;
                break;
            }
            case 'h': {
                const auto& step = m.lessons[current->lesson].steps[current->step];
                std::cout << "\nhint: " << (step.hint.empty() ? "(no hint)" : step.hint) << "\n";
                status();
                break;
            }
            case 'l':
                for (const auto& ref : all_steps(m))
                    std::cout << (progress.passed(step_name(m, ref)) ? "  done  " : "        ")
                              << step_name(m, ref) << "\n";
                status();
                break;
            case 'q':
                return exit_code::pass;
            default:
                break;
        }
    }
    std::cout << all_done_sentence(paths, m, progress) << "\n";
    return exit_code::pass;
}

}  // namespace

Command add_watch_command(CLI::App& app, Options& o) {
    auto* watch = app.add_subcommand(
        "watch", "check the current step every time you save it, then move on to the next");
    watch->add_option(
        "step", o.step,
        "the step to start with (default: the one you are on, else the first unfinished)");
    add_check_flags(watch, o);
    return {watch, [&o] { return run_watch(o); }};
}

}  // namespace cudalings::cli
