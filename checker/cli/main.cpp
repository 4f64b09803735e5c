// cudalings: the learner's (and the instructor's) command.
//
//   cudalings list                     lessons and steps, with what is done
//   cudalings check [STEP]             check a step (the next unfinished one by default)
//   cudalings check --all [--solutions]
//   cudalings watch                    check the current step again on every save
//   cudalings hint [STEP]
//   cudalings reset STEP               the step's file as the course ships it (a backup is kept)
//   cudalings doctor                   is this machine ready?
//   cudalings report                   an HTML page: staircases, progress
//   cudalings sass STEP                what the compiler made of a step (SASS, or PTX)
//   cudalings profile STEP             Nsight Compute on one timed call of a step
//   cudalings grade SUBMISSION...      many submissions in one batch
//   cudalings dev check                the course's own consistency (lesson authors, CI)
//   cudalings --version
//
// Exit codes: 0 pass, 1 fail, 2 usage, 77 no GPU (it compiled; nothing else could run),
// 78 the machine's setup (profile: no ncu, no permission to the GPU's counters).
// Each command lives in its own file (cli.h lists them); this file parses and dispatches
// (cli::run), entry.cpp is the executable's main(). The commands of tools.h (doctor, report,
// sass, profile, grade, dev) are another executable's, cudalings-tools (tools_main.cpp): this
// one forwards them to it, and builds it the first time one is asked for.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <vector>

#include "../core/report/text.h"
#include "../core/run/supervise.h"
#include "../core/run/verdict.h"
#include "cli.h"
#include "run.h"
#include "tools.h"

using namespace cudalings;
using namespace cudalings::cli;

namespace {

// A progress line may be half drawn when Ctrl-C arrives: clear it (async-signal-safe).
void clear_progress_line(int) {
    if (live_terminal(2)) (void)!::write(2, "\r\033[K", 4);
}

// "did you mean" for an unknown command or option.
void suggest(const CLI::App& app, int argc, char** argv) {
    const auto commands = command_names(app);
    std::vector<std::string> options;
    for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; }))
        for (const auto* opt : sub->get_options())
            for (const auto& name : opt->get_lnames()) options.push_back("--" + name);
    bool first_word = true;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg.rfind("--", 0) == 0) {
            const std::string flag = arg.substr(0, arg.find('='));
            if (std::find(options.begin(), options.end(), flag) == options.end() &&
                flag != "--root" && flag != "--state-dir" && flag != "--json" &&
                flag != "--no-color" && flag != "--help" && flag != "--version")
                std::cerr << "cudalings: unknown option " << flag << did_you_mean(flag, options)
                          << "\n";
        } else if (first_word && arg[0] != '-') {
            first_word = false;
            if (std::find(commands.begin(), commands.end(), arg) == commands.end())
                std::cerr << "cudalings: unknown command \"" << arg << "\""
                          << did_you_mean(arg, commands) << "; `cudalings --help` lists them\n";
        }
    }
}

// `cudalings grade ...` in the learner's executable: the same command line, run by
// cudalings-tools beside it. Built here the first time (the build tree this executable lives in
// has CMake's cache); afterwards the wrapper rebuilds it with `cudalings` when the checker's
// sources change.
int forward_to_tools(const char* command, char** argv) {
    const std::string dir = tool_dir();
    const std::string tools = dir + "/cudalings-tools";
    // Another command may be building it right now: one build at a time, then the others find
    // it built (the lock goes with this process, or with the exec below).
    const int lock =
        ::open((dir + "/cudalings-tools.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock >= 0) (void)::flock(lock, LOCK_EX);
    if (::access(tools.c_str(), X_OK) != 0) {
        const std::string cmake = checker_cmake();
        if (cmake.empty() || ::access((dir + "/CMakeCache.txt").c_str(), R_OK) != 0) {
            std::cerr << "cudalings: `" << command << "` is in cudalings-tools, which is not built "
                      << "beside " << dir << "/cudalings: build the target cudalings-tools\n";
            return exit_code::usage;
        }
        std::cerr << "cudalings: `" << command
                  << "` is one of the instructor's and author's commands (doctor, report, sass, "
                     "profile, grade, dev), built on first use: building them now, once\n";
        end_children_on_termination(clear_progress_line);  // Ctrl-C ends the build too
        ChildOptions build;
        build.wall_seconds = 3600;
        build.output_cap = 1 << 20;
        const ChildResult built =
            run_supervised({cmake, "--build", dir, "--target", "cudalings-tools"}, build);
        if (!built.exited_ok()) {
            const std::string& said = built.out.head.empty() ? built.err.head : built.out.head;
            std::cerr << said.substr(said.size() > 4000 ? said.size() - 4000 : 0)
                      << "\ncudalings: building cudalings-tools failed ("
                      << (built.started ? describe_exit(built.signal, built.exit_code)
                                        : built.start_error)
                      << "): `cmake --build " << dir << " --target cudalings-tools` says why\n";
            return exit_code::usage;
        }
    }
    ::execv(tools.c_str(), argv);
    std::perror(("cudalings: cannot start " + tools).c_str());
    return exit_code::usage;
}

// The command a command line names: its first argument that is neither an option nor the value
// of --root or --state-dir (nullptr when there is none).
const char* command_word(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--root" || arg == "--state-dir") {
            ++i;
        } else if (arg.empty() || arg[0] != '-') {
            return argv[i];
        }
    }
    return nullptr;
}

}  // namespace

int cudalings::cli::run(int argc, char** argv) {
    // A command of tools.h's is cudalings-tools's from its first word on (--help included).
    if (const char* word = command_word(argc, argv))
        for (const auto& t : kToolCommands)
            if (std::string(word) == t.name) return forward_to_tools(t.name, argv);
    return run_commands(argc, argv, nullptr);
}

int cudalings::cli::run_commands(int argc, char** argv, AddToolCommands add_tools) {
    // Ctrl-C or SIGTERM ends every process the checker started, always (supervise.h).
    end_children_on_termination(clear_progress_line);
    CLI::App app{"cudalings: learn CUDA by writing kernels; checks, tests and times your code"};
    app.require_subcommand(0, 1);
    app.fallthrough();  // global options may also follow the subcommand
    Options o;
    bool version = false;
    app.add_option("--root", o.root, "the course directory (default: found from here upwards)");
    app.add_option("--state-dir", o.state_dir,
                   "where progress and caches live (default: <root>/.cudalings)");
    app.add_flag("--json", o.json, "machine-readable output (every command; versioned)");
    app.add_flag("--no-color", o.no_color,
                 "no colour (also: NO_COLOR=1, TERM=dumb; FORCE_COLOR=1 forces it)");
    app.add_flag("--version", version, "the checker's version");

    std::vector<Command> commands{add_list_command(app, o),  add_check_command(app, o),
                                  add_watch_command(app, o), add_hint_command(app, o),
                                  add_reset_command(app, o), add_version_command(app, o)};
    if (add_tools) {
        for (auto& c : add_tools(app, o)) commands.push_back(std::move(c));
    } else {
        // Each of tools.h's commands, as far as this executable knows it: its name and summary,
        // for --help and "did you mean" (run() forwards a command line that names one).
        for (const auto& t : kToolCommands) {
            auto* stub = app.add_subcommand(t.name, t.summary);
            stub->allow_extras();
            const char* name = t.name;
            commands.push_back({stub, [name, argv] { return forward_to_tools(name, argv); }});
        }
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        suggest(app, argc, argv);
        app.exit(e);
        return exit_code::usage;
    }
    if (version) return print_version(o);
    for (const auto& c : commands)
        if (*c.app) return c.run();
    std::cerr << app.help() << "\ncudalings: name a command (`cudalings check` to start)\n";
    return exit_code::usage;
}
