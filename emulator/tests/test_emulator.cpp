// The emulator's own tests (label cpu): semantics of emulated kernels, the diagnostics corpus
// with the line each report must name, the rewriter, and speed.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <chrono>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "cudalings_emu/emulator.h"
#include "rewrite.h"
#include "test_support.h"

using Catch::Matchers::ContainsSubstring;
using emu_test::entry;
using emu_test::open_module;
using emu_test::use_options;
namespace emu = cudalings_emu;

namespace {

// `// expect: KIND [text]` markers of the corpus: entry point -> (line, kind, text).
struct Expected {
    int line;
    std::string kind, text;
};
std::map<std::string, Expected> corpus_expectations() {
    std::ifstream in(CUDALINGS_EMU_CORPUS_SOURCE);
    std::string line;
    int number = 0;
    std::vector<Expected> pending;
    std::map<std::string, Expected> found;
    static const std::regex marker(R"(// expect: ([\w-]+) ?(.*)$)");
    static const std::regex function(R"(extern "C" \w+ (corpus_\w+)\()");
    while (std::getline(in, line)) {
        ++number;
        std::smatch m;
        if (std::regex_search(line, m, marker)) pending.push_back({number, m[1], m[2]});
        if (std::regex_search(line, m, function) && !pending.empty()) {
            found[m[1]] = pending.back();
            pending.clear();
        }
    }
    return found;
}

}  // namespace

TEST_CASE("emulated kernels compute what the GPU computes", "[emu][semantics]") {
    use_options(true, false);
    void* m = open_module(CUDALINGS_EMU_SEMANTICS_MODULE);
    for (const char* name :
         {"sem_block_reduction", "sem_shuffles", "sem_votes", "sem_atomics", "sem_dynamic_shared",
          "sem_indices_and_float4", "sem_launch_validation", "sem_fault_reported_at_sync"}) {
        auto f = entry<int (*)()>(m, name);
        int result = f();
        auto found = emu::take_diagnostics();
        INFO(name << ": " << emu::format(found));
        CHECK(result == 0);
        if (std::string(name) != "sem_fault_reported_at_sync") {
            for (const auto& d : found) CHECK(d.severity != "error");
        }
    }
}

TEST_CASE("dry mode checks launches without running them or touching memory", "[emu][semantics]") {
    use_options(true, false);
    void* m = open_module(CUDALINGS_EMU_SEMANTICS_MODULE);
    emu::Options o = emu::get_options();
    o.dry = true;
    emu::set_options(o);
    const auto start = std::chrono::steady_clock::now();
    const int result = entry<int (*)()>(m, "sem_dry_launches")();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    o.dry = false;
    emu::set_options(o);
    auto found = emu::take_diagnostics();
    INFO(emu::format(found));
    CHECK(result == 0);
    CHECK(seconds < 1.0);  // 2^20 blocks over 2 GiB, were they run or the memory touched: minutes
    use_options(true, false);
}

// The launch-only sizes of the checker: a sample of each launch's blocks runs, bounds checked;
// nothing else a partial run on memory never filled does is a finding.
TEST_CASE("a dry-mode sample finds an index that overflows only at 2^28 and nothing else",
          "[emu][semantics]") {
    use_options(false, false);
    void* m = open_module(CUDALINGS_EMU_SEMANTICS_MODULE);
    emu::Options o = emu::get_options();
    const emu::Options before = o;
    o.dry = true;
    o.sample_blocks = 4;
    o.sample_seed = 0x5eed;
    o.sample_seconds = 0.2;
    o.time_limit_seconds = 10;
    std::uint64_t ran = 0;  // blocks the last entry ran
    auto run = [&](const char* name) {
        emu::set_options(o);  // each entry starts with memory as dry mode leaves it
        const std::uint64_t blocks_before = emu::statistics().blocks;
        const auto start = std::chrono::steady_clock::now();
        const int result = entry<int (*)()>(m, name)();
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        auto found = emu::take_diagnostics();
        INFO(name << " returned " << result << " in " << seconds << " s\n" << emu::format(found));
        CHECK(result == 0);
        CHECK(seconds < 1.5);  // a launch's budget, and the stall detector
        ran = emu::statistics().blocks - blocks_before;
        return found;
    };
    const auto overflow = run("sem_sample_overflow");
    REQUIRE(overflow.size() == 1);
    CHECK(overflow[0].kind == "out-of-bounds");
    CHECK(overflow[0].line > 0);
    CHECK_THAT(overflow[0].message, ContainsSubstring("[-4194304]: out of bounds"));
    CHECK_THAT(overflow[0].detail, ContainsSubstring("block (63)"));
    CHECK(ran == 2);  // block 0 (its share of the time spent), then block 63 (the fault)
    for (const char* name : {"sem_sample_quiet_wait", "sem_sample_quiet_stride",
                             "sem_sample_quiet_assert", "sem_sample_quiet_pointer"}) {
        for (const auto& d : run(name)) CHECK(d.severity != "error");
        CHECK(ran == 4);  // the first block, the last and two picked from the seed
    }
    for (const auto& d : run("sem_sample_stops_after_a_change")) CHECK(d.severity != "error");
    CHECK(ran == 4);  // fill_ones's sample; the copy after it is not run
    for (const auto& d : run("sem_sample_values")) CHECK(d.severity != "error");
    CHECK(ran == 4);  // the first launch's sample; the second is skipped
    emu::set_options(before);
    use_options(true, false);
}

TEST_CASE("correct code in unusual forms runs without a finding", "[emu][semantics]") {
    use_options(true, false);
    void* m = open_module(CUDALINGS_EMU_UNUSUAL_MODULE);
    for (const char* name :
         {"unusual_cas_loop", "unusual_activemask_in_branch", "unusual_cooperative_groups",
          "unusual_libcu", "unusual_launch_kernel", "unusual_shared_memory_opt_in",
          "unusual_namespace_shared", "unusual_reduce_sync", "unusual_symbols",
          "unusual_shared_per_instantiation", "unusual_written_nan"}) {
        auto f = entry<int (*)()>(m, name);
        int result = f();
        auto found = emu::take_diagnostics();
        INFO(name << " returned " << result << "\n" << emu::format(found));
        CHECK(result == 0);
        for (const auto& d : found) CHECK(d.severity != "error");
    }
}

TEST_CASE("the diagnostics corpus: each bug is reported at its line", "[emu][corpus]") {
    void* m = open_module(CUDALINGS_EMU_CORPUS_MODULE);
    auto expectations = corpus_expectations();
    REQUIRE(expectations.size() >= 15);
    for (const auto& [name, want] : expectations) {
        bool metric = want.kind == "metric";
        use_options(true, metric);
        if (name == "corpus_legacy_warp_reduce") {
            // Right in lockstep (as usually on a GPU), and still reported as a race.
            CHECK(entry<float (*)()>(m, name)() == 64.0f);
        } else {
            entry<void (*)()>(m, name)();
        }
        auto found = emu::take_diagnostics();
        bool matched = false;
        for (const auto& d : found) {
            bool file_ok = d.file.find("buggy.cu") != std::string::npos;
            // The words may be in the message or in its detail (the advice).
            bool text_ok = want.text.empty() || d.message.find(want.text) != std::string::npos ||
                           d.detail.find(want.text) != std::string::npos;
            if (d.kind == want.kind && d.line == want.line && file_ok && text_ok) matched = true;
        }
        INFO(name << " expects " << want.kind << " at buggy.cu:" << want.line << " " << want.text
                  << "\nfound:\n"
                  << emu::format(found));
        CHECK(matched);
    }
    use_options(true, false);
}

TEST_CASE("a slow kernel is stopped as slow at the time limit, not taken for a deadlock",
          "[emu][corpus]") {
    use_options(true, false);
    void* m = open_module(CUDALINGS_EMU_CORPUS_MODULE);
    auto slow = entry<void (*)(int)>(m, "corpus_slow_stride_of_one");
    // Small: quadratic but quick. No finding may call it a hang.
    slow(1000);
    for (const auto& d : emu::take_diagnostics()) {
        INFO(d.kind << ": " << d.message);
        CHECK(d.kind != "deadlock");
        CHECK(d.kind != "slow");
    }
    emu::Options o = emu::get_options();
    o.time_limit_seconds = 0.5;
    emu::set_options(o);
    slow(1 << 16);
    auto found = emu::take_diagnostics();
    INFO(emu::format(found));
    bool reported = false;
    for (const auto& d : found) {
        CHECK(d.kind != "deadlock");
        if (d.kind == "slow") {
            reported = true;
            CHECK_THAT(d.message, ContainsSubstring("still making progress"));
            CHECK(d.file.find("buggy.cu") != std::string::npos);
            CHECK(d.line > 0);
        }
    }
    CHECK(reported);
    o.time_limit_seconds = 0;
    emu::set_options(o);
    use_options(true, false);
}

TEST_CASE("the rewriter turns launches and shared memory into C++, keeping lines",
          "[emu][rewrite]") {
    std::string src =
        "// k<<<1, 2>>>(x) in a comment stays\n"
        "__global__ void k(float* x) {\n"
        "    extern __shared__ float dyn[];\n"
        "    __shared__ float tile[32][33], other[4];\n"
        "}\n"
        "void host(float* x, cudaStream_t s) {\n"
        "    ns::kern<float, 4><<<dim3(2, 2), 256, 0, s>>>(x,\n"
        "        1);\n"
        "    k<<<1, 32>>>(x);  const char* t = \"<<<\";\n"
        "}\n";
    std::string out, error;
    REQUIRE(cudalings_emu_tools::rewrite(src, "/tmp/f.cu", &out, &error));
    CHECK_THAT(out, ContainsSubstring("#line 1 \"/tmp/f.cu\""));
    CHECK_THAT(out, ContainsSubstring("// k<<<1, 2>>>(x) in a comment stays"));
    CHECK_THAT(out, ContainsSubstring("float* const dyn = "
                                      "reinterpret_cast<float*>(::cudalings_emu::dynamic_shared_"
                                      "named(\"dyn\", sizeof(float)));"));
    CHECK_THAT(
        out,
        ContainsSubstring(
            "using cudalings_shared_t_tile = float [32][33]; static ::cudalings_emu::SharedKey "
            "cudalings_shared_k_tile; cudalings_shared_t_tile& tile = "
            "::cudalings_emu::shared_ref<cudalings_shared_t_tile>(&cudalings_shared_k_tile, "
            "\"tile\");"));
    CHECK_THAT(out, ContainsSubstring("using cudalings_shared_t_other = float [4];"));
    CHECK_THAT(out,
               ContainsSubstring("::cudalings_emu::Launch(__FILE__, __LINE__, \"ns::kern<float, "
                                 "4>\", dim3(2, 2), 256, 0, s).go([&](auto&... cudalings_a) { "
                                 "ns::kern<float, 4>(cudalings_a...); }, x,\n        1)"));
    CHECK_THAT(out, ContainsSubstring("\"k\", 1, 32).go("));
    CHECK_THAT(out, ContainsSubstring("const char* t = \"<<<\";"));
    // Same number of lines (plus the #line directive).
    CHECK(std::count(out.begin(), out.end(), '\n') == std::count(src.begin(), src.end(), '\n') + 1);
}

TEST_CASE("the rewriter reads every form of __shared__ declaration", "[emu][rewrite]") {
    // [[maybe_unused]] made the rewriter fail; namespace-scope arrays were plain statics (no
    // poison, no race checks, one copy for all blocks).
    std::string src =
        "__shared__ float g[256];\n"
        "extern __shared__ float gdyn[];\n"
        "__global__ void k(float* x) {\n"
        "    [[maybe_unused]] __shared__ int flag;\n"
        "    static __shared__ volatile float v[64], *vp;\n"
        "    __shared__ __align__(16) unsigned char bytes[128];\n"
        "    extern __shared__ __align__(16) float4 dyn[];\n"
        "}\n";
    std::string out, error;
    REQUIRE(cudalings_emu_tools::rewrite(src, "/tmp/g.cu", &out, &error));
    INFO(out);
    CHECK_THAT(out, ContainsSubstring(
                        "static ::cudalings_emu::SharedGlobal<cudalings_shared_t_g> g{\"g\"};"));
    CHECK_THAT(out,
               ContainsSubstring("static ::cudalings_emu::DynamicShared<float> gdyn{\"gdyn\"};"));
    CHECK_THAT(out, ContainsSubstring("using cudalings_shared_t_flag = int ;"));
    CHECK_THAT(out, ContainsSubstring("using cudalings_shared_t_v = volatile float [64];"));
    CHECK_THAT(out, ContainsSubstring("using cudalings_shared_t_vp = volatile float *;"));
    CHECK_THAT(out, ContainsSubstring("using cudalings_shared_t_bytes = unsigned char [128];"));
    CHECK_THAT(out, ContainsSubstring("float4* const dyn = "
                                      "reinterpret_cast<float4*>(::cudalings_emu::dynamic_shared_"
                                      "named(\"dyn\", sizeof(float4)));"));
    CHECK(std::count(out.begin(), out.end(), '\n') == std::count(src.begin(), src.end(), '\n') + 1);
}

TEST_CASE("a 1M-thread vector add runs in under a second (plain mode, one core)", "[emu][speed]") {
    emu::Options o = emu::get_options();
    o.check = false;
    o.explain = false;
    emu::set_options(o);
    void* m = open_module(CUDALINGS_EMU_SEMANTICS_MODULE);
    auto f = entry<double (*)(int)>(m, "sem_vector_add_seconds");
    double seconds = f(1 << 20);
    INFO("1M-thread vector add: " << seconds << " s of CPU time");
    WARN("1M-thread vector add (plain mode, lockstep): " << seconds << " s of CPU time");
    CHECK(seconds > 0);
    CHECK(seconds < 1.0);
    use_options(true, false);
}
