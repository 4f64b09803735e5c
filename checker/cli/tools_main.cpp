// cudalings-tools: every command of `cudalings`, those of tools.h's table included (doctor,
// report, sass, profile, grade, dev). `cudalings` forwards those to this executable, which a new
// learner's first check does not need to build (tools.h says why).
#include "cli.h"
#include "run.h"
#include "tools.h"

namespace cudalings::cli {
namespace {

std::vector<Command> add_tool_commands(CLI::App& app, Options& o) {
    return {add_doctor_command(app, o),  add_report_command(app, o), add_sass_command(app, o),
            add_profile_command(app, o), add_grade_command(app, o),  add_dev_command(app, o)};
}

}  // namespace

int run_tools(int argc, char** argv) { return run_commands(argc, argv, add_tool_commands); }

}  // namespace cudalings::cli
