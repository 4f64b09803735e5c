// Line coverage of the learner's device code, for `cudalings dev check --coverage` (the rule that
// a step's hazard cases run every line of its solution, checker/core/tools/coverage.h).
//
// The emulated build is compiled with GCC's -fsanitize-coverage=trace-pc, which calls
// __sanitizer_cov_trace_pc at the start of every basic block. Inside a kernel launch that is
// checked for hazards (Options::check, not a dry run), the emulator counts each block's runs per
// CUDA thread; when a CUDA block ends its counts are folded into one record per code address:
// runs in all, the most runs by one thread (a loop body run twice by one thread), and in how many
// CUDA blocks. After each launch the records so far are written to
// $CUDALINGS_EMU_COVERAGE/<pid>.cov (a file per process, rewritten whole: a runner may be killed
// once it has said all it will say, so nothing waits for the exit):
//
//   launch-blocks <the most blocks of one such launch>
//   <module>\t<offset, hex>\t<runs>\t<most by one thread>\t<blocks, at most 2>
//
// The checker reads the module's code addresses (objdump) and lines (addr2line) itself.
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unordered_map>

#include "internal.h"

namespace cudalings_emu {
namespace {

struct Point {
    std::uint64_t runs = 0;
    unsigned most_in_thread = 0;
    unsigned blocks = 0;
    std::uint64_t last_block = 0;  // the serial + 1 of the block that ran it last
};

struct Coverage {
    std::string dir;  // empty: off
    std::unordered_map<const void*, Point> points;
    std::uint64_t launch_blocks = 0;
    bool launch_counted = false;
};

Coverage& coverage() {
    static Coverage c = [] {
        Coverage c;
        if (const char* dir = std::getenv("CUDALINGS_EMU_COVERAGE")) c.dir = dir;
        return c;
    }();
    return c;
}

}  // namespace

bool coverage_on() { return !coverage().dir.empty(); }

void coverage_block_end(Block& b) {
    Coverage& c = coverage();
    if (c.dir.empty()) return;
    for (Thread& t : b.threads) {
        for (const auto& [pc, n] : t.covered) {
            Point& p = c.points[pc];
            p.runs += n;
            p.most_in_thread = std::max(p.most_in_thread, n);
            if (p.last_block != std::uint64_t(b.serial) + 1) {
                p.last_block = std::uint64_t(b.serial) + 1;
                p.blocks = std::min(2u, p.blocks + 1);
            }
        }
        t.covered.clear();
    }
    if (!c.launch_counted) {
        const dim3 g = rt().grid_dim;
        c.launch_blocks = std::max<std::uint64_t>(c.launch_blocks, std::uint64_t(g.x) * g.y * g.z);
        c.launch_counted = true;
    }
}

void coverage_launch_end() {
    Coverage& c = coverage();
    if (c.dir.empty() || !c.launch_counted) return;
    c.launch_counted = false;
    const std::string path = c.dir + "/" + std::to_string(::getpid()) + ".cov";
    const std::string temporary = path + ".tmp";
    FILE* f = std::fopen(temporary.c_str(), "w");
    if (!f) return;
    std::fprintf(f, "launch-blocks %llu\n", static_cast<unsigned long long>(c.launch_blocks));
    for (const auto& [pc, p] : c.points) {
        Dl_info info{};
        if (!dladdr(pc, &info) || !info.dli_fname) continue;
        const auto offset =
            reinterpret_cast<std::uintptr_t>(pc) - reinterpret_cast<std::uintptr_t>(info.dli_fbase);
        std::fprintf(f, "%s\t%llx\t%llu\t%u\t%u\n", info.dli_fname,
                     static_cast<unsigned long long>(offset),
                     static_cast<unsigned long long>(p.runs), p.most_in_thread, p.blocks);
    }
    const bool ok = std::fclose(f) == 0;
    if (ok) std::rename(temporary.c_str(), path.c_str());
}

}  // namespace cudalings_emu

// GCC's -fsanitize-coverage=trace-pc hook: the start of a basic block of instrumented code.
extern "C" CUDALINGS_EMU_API void __sanitizer_cov_trace_pc() {
    using namespace cudalings_emu;
    Runtime& r = rt();
    if (!r.current || !r.in_kernel || !opts().check || opts().dry || !coverage_on()) return;
    ++r.current->covered[__builtin_return_address(0)];
}
