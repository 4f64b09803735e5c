#include "emulate.h"

#include <unistd.h>

#include <cstdlib>
#include <regex>
#include <sstream>

#include "compile.h"
#include "hash.h"

#ifndef CUDALINGS_EMU_INCLUDE_DIR
#define CUDALINGS_EMU_INCLUDE_DIR ""
#endif
#ifndef CUDALINGS_CUDA_INCLUDE_DIR
#define CUDALINGS_CUDA_INCLUDE_DIR "/usr/local/cuda/include"
#endif
#ifndef CUDALINGS_HOST_CXX
#define CUDALINGS_HOST_CXX "g++"
#endif

namespace cudalings {

bool should_emulate(bool forced, bool gpu_present) { return forced || !gpu_present; }

std::string emulation_blocker(const std::string& text) {
    // Comments do not count: strip // and /* */ first.
    static const std::regex comments(R"(//[^\n]*|/\*[\s\S]*?\*/)");
    std::string code = std::regex_replace(text, comments, " ");
    // Nor does code in `#if 0` (nested conditionals inside it are skipped with it).
    std::string kept;
    std::istringstream lines(code);
    std::string line;
    int disabled = 0;  // depth of conditionals inside an #if 0, 0 when not in one
    static const std::regex if0(R"(^\s*#\s*if\s+0\b)"), any_if(R"(^\s*#\s*if)"),
        endif(R"(^\s*#\s*endif\b)"), else_(R"(^\s*#\s*(else|elif)\b)");
    while (std::getline(lines, line)) {
        if (disabled) {
            if (std::regex_search(line, any_if))
                ++disabled;
            else if (std::regex_search(line, endif))
                --disabled;
            else if (disabled == 1 && std::regex_search(line, else_))
                disabled = 0;
            continue;
        }
        if (std::regex_search(line, if0)) {
            disabled = 1;
            continue;
        }
        kept += line + "\n";
    }
    code = kept;
    // CUB and Thrust are device libraries (inline PTX, __CUDA_ARCH__ paths). libcu++
    // (<cuda/std/...>, <cuda/atomic>) and cooperative groups are tried: a build that fails is
    // SKIPPED with the compiler's reason (Checker::run_emulated).
    static const std::regex cub(R"(#\s*include\s*[<"](cub|thrust)/)");
    if (std::regex_search(code, cub))
        return "it uses CUB or Thrust, which the emulator cannot build (they use inline PTX)";
    static const std::regex ptx(R"(\basm\s*(volatile\s*)?\(|\b__asm__\b)");
    if (std::regex_search(code, ptx))
        return "it uses inline PTX (asm), which the emulator cannot run";
    return {};
}

std::vector<std::vector<std::string>> emulated_build_commands(const EmulatedBuild& b) {
    std::vector<std::string> compile{b.cxx, "-std=c++17"};
    if (b.optimize)
        compile.insert(compile.end(), {"-O2", "-g", "-gdwarf-4"});
    else
        compile.push_back("-O0");
    compile.insert(compile.end(),
                   {"-fPIC",
                    "-w",  // nvcc already showed the warnings
                    // Aggregates stay whole: a float4 load or store is one
                    // 16-byte access (alignment, --explain), not four floats.
                    "-fno-tree-sra", "-include", b.emulator_include + "/cudalings_emu/cuda_emu.h",
                    // Its cooperative_groups.h comes before NVIDIA's.
                    "-I" + b.emulator_include,
                    // libcu++ (<cuda/std/...>) where nvcc finds it.
                    "-isystem", b.cuda_include + "/cccl", "-isystem", b.cuda_include});
    if (b.instrument) {
        // ThreadSanitizer's instrumentation only: the emulator provides the hooks.
        compile.insert(compile.end(), {"-fsanitize=thread", "--param=tsan-distinguish-volatile=1",
                                       "--param=tsan-instrument-func-entry-exit=0"});
    }
    // Unoptimised, so that each basic block is a piece of one line, as the source has it (at
    // -O2 a block the compiler makes, such as the path past a loop never entered, carries the
    // line after it).
    if (b.coverage) compile.insert(compile.end(), {"-O0", "-fsanitize-coverage=trace-pc"});
    std::string dir = b.source.substr(0, b.source.find_last_of('/') + 1);
    if (!dir.empty()) compile.push_back("-iquote" + dir);
    for (const auto& d : b.include_dirs) compile.push_back("-I" + d);
    compile.insert(compile.end(), {"-c", "-o", b.object, b.rewritten});
    return {
        {b.rewriter, b.source, b.rewritten, "--name", b.source},
        compile,
        // Linked without -fsanitize: the hooks come from the emulator, not from libtsan.
        {b.cxx, "-shared", "-o", b.output, b.object},
    };
}

std::string emulated_cache_key(const EmulatedBuild& b, const std::vector<std::string>& headers) {
    Hasher h;
    h.add("emulated-v2");
    EmulatedBuild flags = b;
    flags.rewritten = flags.object = flags.output = "";
    for (const auto& cmd : emulated_build_commands(flags))
        for (const auto& part : cmd) h.add(part);
    h.add_file(b.source);
    for (const auto& header : headers) h.add(header).add_file(header);
    for (const auto& header : headers_beside(b.source)) h.add(header).add_file(header);
    h.add_file(b.emulator_include + "/cudalings_emu/cuda_emu.h");
    h.add_file(b.emulator_include + "/cudalings_emu/abi.h");
    h.add_file(b.emulator_include + "/cooperative_groups.h");
    h.add_file(b.rewriter);
    return h.hex();
}

std::string emulator_include_dir(const std::string& tool_dir) {
    if (const char* env = std::getenv("CUDALINGS_EMU_INCLUDE")) return env;
    std::string built = CUDALINGS_EMU_INCLUDE_DIR;
    if (!built.empty() && ::access((built + "/cudalings_emu/cuda_emu.h").c_str(), R_OK) == 0)
        return built;
    return tool_dir + "/emulator/include";
}

std::string cuda_include_dir() {
    if (const char* env = std::getenv("CUDALINGS_CUDA_INCLUDE")) return env;
    return CUDALINGS_CUDA_INCLUDE_DIR;
}

std::string host_compiler() {
    if (const char* env = std::getenv("CUDALINGS_CXX")) return env;
    return CUDALINGS_HOST_CXX;
}

}  // namespace cudalings
