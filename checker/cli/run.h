// The `cudalings` command line, parsed and dispatched (main.cpp): what the executables' main()
// calls. Returns the process's exit code.
#pragma once

namespace cudalings::cli {

// `cudalings` (entry.cpp): the learner's commands; the others of tools.h are forwarded.
int run(int argc, char** argv);
// `cudalings-tools` (tools_entry.cpp, tools_main.cpp): every command.
int run_tools(int argc, char** argv);

}  // namespace cudalings::cli
