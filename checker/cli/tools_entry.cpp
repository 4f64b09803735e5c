// The `cudalings-tools` executable's entry point (tools_main.cpp says what it holds).
#include "run.h"

int main(int argc, char** argv) { return cudalings::cli::run_tools(argc, argv); }
