// The `cudalings` command line, parsed and dispatched (main.cpp): what the executable's main()
// calls (entry.cpp). Returns the process's exit code.
#pragma once

namespace cudalings::cli {

int run(int argc, char** argv);

}  // namespace cudalings::cli
