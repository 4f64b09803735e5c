// How a learner's file is prepared for the CPU emulator (checker/core/build/emulate.cpp): what is
// declined before a build is tried, and the build's flags.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>

#include "emulate.h"

using Catch::Matchers::ContainsSubstring;
using namespace cudalings;

TEST_CASE("CUB and Thrust are declined before a build, libcu++ and comments are not", "[emulate]") {
    CHECK_THAT(emulation_blocker("#include <cub/cub.cuh>\n"), ContainsSubstring("CUB"));
    CHECK_THAT(emulation_blocker("#include <thrust/reduce.h>\n"), ContainsSubstring("Thrust"));
    CHECK_THAT(emulation_blocker("void f() { asm volatile(\"membar.gl;\"); }\n"),
               ContainsSubstring("inline PTX"));
    // libcu++ and cooperative groups are built (the emulator provides or compiles them); the
    // old pattern asked for "cuda//" and so declined nothing, then the build failed.
    CHECK(emulation_blocker("#include <cuda/std/limits>\n#include <cuda/atomic>\n").empty());
    CHECK(emulation_blocker("#include <cooperative_groups.h>\n").empty());
    // What is not code: comments and disabled blocks (nested conditionals included).
    CHECK(emulation_blocker("// #include <cub/cub.cuh>\n/* asm(\"x\") */\n").empty());
    CHECK(emulation_blocker("#if 0\n#ifdef X\n#endif\n#include <cub/cub.cuh>\n#endif\n").empty());
    CHECK_FALSE(emulation_blocker("#if 0\n#else\n#include <cub/cub.cuh>\n#endif\n").empty());
}

TEST_CASE("the emulated build keeps aggregates whole and sees libcu++", "[emulate]") {
    EmulatedBuild b;
    b.rewriter = "rw";
    b.emulator_include = "/emu";
    b.cuda_include = "/cuda/include";
    b.source = "/course/lessons/x.cu";
    b.rewritten = "x.cpp";
    b.object = "x.o";
    b.output = "x.so";
    const auto commands = emulated_build_commands(b);
    REQUIRE(commands.size() == 3);
    const auto& compile = commands[1];
    auto has = [&](const std::string& arg) {
        return std::find(compile.begin(), compile.end(), arg) != compile.end();
    };
    CHECK(has("-fno-tree-sra"));  // a float4 load is one 16-byte access
    CHECK(has("/cuda/include/cccl"));
    CHECK(has("-I/emu"));  // before NVIDIA's: its cooperative_groups.h
}
