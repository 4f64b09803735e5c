// cudalings: the learner's (and the instructor's) command.
//
//   cudalings list                     lessons and steps, with what is done
//   cudalings check [STEP]             check a step (the next unfinished one by default)
//   cudalings check --all [--solutions]
//   cudalings hint [STEP]
//   cudalings grade SUBMISSION...      many submissions in one batch
//   cudalings dev check                the course's own consistency (lesson authors, CI)
//
// Exit codes: 0 pass, 1 fail, 2 usage, 77 no GPU (it compiled; nothing else could run).
// Each command lives in its own file (cli.h lists them); this file parses and dispatches.
#include <CLI/CLI.hpp>

#include <vector>

#include "../core/verdict.h"
#include "cli.h"

using namespace cudalings;
using namespace cudalings::cli;

int main(int argc, char** argv) {
    CLI::App app{"cudalings: learn CUDA by writing kernels; checks, tests and times your code"};
    app.require_subcommand(1);
    app.fallthrough();  // global options may also follow the subcommand
    Options o;
    app.add_option("--root", o.root, "the course directory (default: found from here upwards)");
    app.add_option("--state-dir", o.state_dir,
                   "where progress and caches live (default: <root>/.cudalings)");
    app.add_flag("--json", o.json, "machine-readable output");
    app.add_flag("--no-color", o.no_color, "no colour (also: NO_COLOR=1)");

    const std::vector<Command> commands{add_list_command(app, o), add_check_command(app, o),
                                        add_grade_command(app, o), add_hint_command(app, o),
                                        add_dev_command(app, o)};
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        app.exit(e);
        return exit_code::usage;
    }
    for (const auto& c : commands)
        if (*c.app) return c.run();
    return exit_code::usage;
}
