// The `cudalings` executable's entry point. The commands are compiled into the checker's library
// with its core (checker/CMakeLists.txt says why); this file includes nothing heavier than run.h.
#include "run.h"

int main(int argc, char** argv) { return cudalings::cli::run(argc, argv); }
