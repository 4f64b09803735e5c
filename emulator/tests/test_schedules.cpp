// Schedules (label cpu): the order in which blocks start, several resident blocks interleaved,
// what correct cross-block code does under them (no diagnostics), and what wrong code gets
// (cross-block waits, deadlocks, races, results that change from call to call).
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "cudalings_emu/emulator.h"
#include "test_support.h"

using Catch::Matchers::ContainsSubstring;
using emu_test::entry;
using emu_test::open_module;
namespace emu = cudalings_emu;

namespace {

// Each test sets its own schedules; the next test gets back the options it found (those of
// the environment).
struct KeepOptions {
    emu::Options saved = emu::get_options();
    ~KeepOptions() { emu::set_options(saved); }
};

void schedule(emu::BlockOrder order, unsigned resident, unsigned quantum = 16,
              std::uint64_t seed = 0x5eed, bool hold_back = false) {
    emu::Options o = emu::get_options();
    o.hold_back = hold_back;
    o.check = true;
    o.explain = false;
    o.lockstep = true;
    o.block_order = order;
    o.resident_blocks = resident;
    o.quantum = quantum;
    o.schedule_seed = seed;
    emu::set_options(o);
    (void)emu::take_diagnostics();
}

std::string schedule_name(const emu::Options& o) {
    return std::string(emu::block_order_name(o.block_order)) + ", " +
           std::to_string(o.resident_blocks) + " resident, quantum " + std::to_string(o.quantum) +
           (o.hold_back ? ", the first block held back" : "");
}

// The line of schedules.cu that carries `// line: NAME`.
int marker_line(const std::string& name) {
    std::ifstream in(CUDALINGS_EMU_SCHEDULES_SOURCE);
    std::string line;
    for (int number = 1; std::getline(in, line); ++number)
        if (line.find("// line: " + name) != std::string::npos) return number;
    FAIL("no marker `// line: " << name << "` in schedules.cu");
    return 0;
}

std::vector<emu::Diagnostic> problems(const std::vector<emu::Diagnostic>& found) {
    std::vector<emu::Diagnostic> out;
    for (const auto& d : found)
        if (d.severity == "error" || d.severity == "warning") out.push_back(d);
    return out;
}

const emu::Diagnostic* find(const std::vector<emu::Diagnostic>& found, const std::string& kind,
                            int line) {
    for (const auto& d : found)
        if (d.kind == kind && d.line == line && d.file.find("schedules.cu") != std::string::npos)
            return &d;
    return nullptr;
}

void* module() { return open_module(CUDALINGS_EMU_SCHEDULES_MODULE); }

}  // namespace

TEST_CASE("block orders: names as the environment spells them", "[emu][schedule]") {
    KeepOptions keep;
    for (auto o : {emu::BlockOrder::InOrder, emu::BlockOrder::Reverse, emu::BlockOrder::Shuffle}) {
        emu::BlockOrder back = emu::BlockOrder::InOrder;
        CHECK(emu::parse_block_order(emu::block_order_name(o), &back));
        CHECK(back == o);
    }
    emu::BlockOrder untouched = emu::BlockOrder::Reverse;
    CHECK_FALSE(emu::parse_block_order("random", &untouched));
    CHECK(untouched == emu::BlockOrder::Reverse);
    CHECK(std::string(emu::block_order_name(emu::BlockOrder::InOrder)) == "in-order");
}

TEST_CASE("the schedule variables of the environment", "[emu][schedule]") {
    KeepOptions keep;
    const char* names[] = {"CUDALINGS_EMU_BLOCK_ORDER", "CUDALINGS_EMU_SEED",
                           "CUDALINGS_EMU_RESIDENT", "CUDALINGS_EMU_QUANTUM"};
    std::vector<std::pair<std::string, std::string>> saved;
    for (const char* n : names)
        if (const char* v = std::getenv(n)) saved.emplace_back(n, v);
    auto set = [&](const char* order, const char* seed, const char* resident, const char* q) {
        const char* values[] = {order, seed, resident, q};
        for (int i = 0; i < 4; ++i) ::setenv(names[i], values[i], 1);
        return emu::environment_options();
    };
    emu::Options o = set("shuffle", "0x1F", "4", "8");
    CHECK(o.block_order == emu::BlockOrder::Shuffle);
    CHECK(o.schedule_seed == 0x1f);
    CHECK(o.resident_blocks == 4);
    CHECK(o.quantum == 8);
    CHECK(set("reverse", "c0ffee", "1", "16").schedule_seed == 0xc0ffee);
    // Bad values leave the defaults (with a warning on stderr).
    o = set("random", "zz", "0", "-3");
    emu::Options defaults;
    CHECK(o.block_order == defaults.block_order);
    CHECK(o.schedule_seed == defaults.schedule_seed);
    CHECK(o.resident_blocks == defaults.resident_blocks);
    CHECK(o.quantum == defaults.quantum);
    for (const char* n : names) ::unsetenv(n);
    for (const auto& [n, v] : saved) ::setenv(n.c_str(), v.c_str(), 1);
}

TEST_CASE("blocks start in the order asked for, with any number resident", "[emu][schedule]") {
    KeepOptions keep;
    auto start_order = entry<int (*)(unsigned, unsigned, unsigned*)>(module(), "sched_start_order");
    const unsigned gx = 5, gy = 3, blocks = gx * gy;
    std::vector<unsigned> identity(blocks), reversed(blocks);
    for (unsigned b = 0; b < blocks; ++b) identity[b] = b, reversed[b] = blocks - 1 - b;
    for (unsigned resident : {1u, 4u, 32u}) {
        INFO(resident << " resident");
        std::vector<unsigned> order(blocks);
        schedule(emu::BlockOrder::InOrder, resident);
        REQUIRE(start_order(gx, gy, order.data()) == 0);
        CHECK(order == identity);
        schedule(emu::BlockOrder::Reverse, resident);
        REQUIRE(start_order(gx, gy, order.data()) == 0);
        CHECK(order == reversed);
        // Shuffled: every block once (checked by the entry point), and a different
        // permutation for every launch.
        schedule(emu::BlockOrder::Shuffle, resident);
        std::set<std::vector<unsigned>> seen;
        for (int launch = 0; launch < 4; ++launch) {
            REQUIRE(start_order(gx, gy, order.data()) == 0);
            CHECK(order != identity);
            seen.insert(order);
        }
        CHECK(seen.size() == 4);
        CHECK(problems(emu::take_diagnostics()).empty());
    }
}

TEST_CASE("resident blocks interleave, each with its own shared memory", "[emu][schedule]") {
    KeepOptions keep;
    auto shared = entry<int (*)(unsigned, unsigned*)>(module(), "sched_shared_per_block");
    struct Case {
        emu::BlockOrder order;
        unsigned resident, quantum;
    };
    for (Case c : {Case{emu::BlockOrder::InOrder, 1, 16}, Case{emu::BlockOrder::Shuffle, 4, 16},
                   Case{emu::BlockOrder::Reverse, 3, 1}, Case{emu::BlockOrder::Shuffle, 8, 7}}) {
        schedule(c.order, c.resident, c.quantum);
        INFO(schedule_name(emu::get_options()));
        unsigned most = 0;
        CHECK(shared(12, &most) == 0);
        // The blocks really ran at the same time: as many as were allowed.
        CHECK(most == c.resident);
        auto found = problems(emu::take_diagnostics());
        INFO(emu::format(found));
        CHECK(found.empty());
    }
}

TEST_CASE("a chained scan and a decoupled look-back pass under any schedule, with no findings",
          "[emu][schedule]") {
    KeepOptions keep;
    auto scan = entry<int (*)(int, int, int)>(module(), "sched_scan");
    struct Case {
        emu::BlockOrder order;
        unsigned resident, quantum;
        bool hold_back = false;
    };
    const int n = 64 * 20 + 5;  // 21 tiles, the last one partial
    for (int variant : {0, 2, 3}) {
        for (Case c : {Case{emu::BlockOrder::InOrder, 1, 16}, Case{emu::BlockOrder::Shuffle, 4, 16},
                       Case{emu::BlockOrder::Shuffle, 4, 1}, Case{emu::BlockOrder::Reverse, 3, 16},
                       Case{emu::BlockOrder::Shuffle, 32, 5},
                       Case{emu::BlockOrder::Shuffle, 4, 16, true},
                       Case{emu::BlockOrder::InOrder, 2, 1, true}}) {
            schedule(c.order, c.resident, c.quantum, 0x5eed, c.hold_back);
            INFO("variant " << variant << " (0 chained, 2 packed look-back, 3 split look-back), "
                            << schedule_name(emu::get_options()));
            CHECK(scan(variant, n, 1) == 0);
            auto found = problems(emu::take_diagnostics());
            INFO(emu::format(found));
            CHECK(found.empty());
        }
    }
}

// "Empty counts as zero": a look-back that reads a predecessor's empty status word as an
// aggregate of 0 passes whenever every predecessor has published before it looks, which is how
// blocks interleave in the schedules above (a later tile trails the earlier ones). Holding the
// first block back after it drew its ticket shows it.
TEST_CASE("the held-back schedule: a look-back that does not wait for an empty word is wrong",
          "[emu][schedule]") {
    KeepOptions keep;
    auto scan = entry<int (*)(int, int, int)>(module(), "sched_scan");
    const int n = 64 * 20 + 5;
    schedule(emu::BlockOrder::InOrder, 4);
    CHECK(scan(4, n, 1) == 0);  // the miss the held-back schedule is for
    for (auto order : {emu::BlockOrder::InOrder, emu::BlockOrder::Shuffle}) {
        schedule(order, 4, 16, 0x5eed, true);
        INFO(schedule_name(emu::get_options()));
        CHECK(scan(4, n, 1) == 2);
        CHECK(scan(2, n, 1) == 0);  // the same look-back with its wait
        auto found = problems(emu::take_diagnostics());
        INFO(emu::format(found));
        CHECK(found.empty());
    }
}

TEST_CASE("a scan whose tile is blockIdx.x waits for blocks that have not started",
          "[emu][schedule]") {
    KeepOptions keep;
    auto scan = entry<int (*)(int, int, int)>(module(), "sched_scan");
    const int n = 64 * 20 + 5;
    struct Case {
        int variant;
        const char* poll;
    };
    for (Case c : {Case{0, "chained poll"}, Case{2, "packed poll"}, Case{3, "split poll"}}) {
        INFO("variant " << c.variant);
        // In order, the tile before a block's own has always started: it passes.
        for (unsigned resident : {1u, 4u}) {
            schedule(emu::BlockOrder::InOrder, resident);
            CHECK(scan(c.variant, n, 0) == 0);
            auto found = problems(emu::take_diagnostics());
            INFO(emu::format(found));
            CHECK(found.empty());
        }
        // In reverse, a block polls the status of a block that has not started.
        for (unsigned resident : {1u, 4u}) {
            schedule(emu::BlockOrder::Reverse, resident);
            CHECK(scan(c.variant, n, 0) == 1);  // cudaErrorLaunchTimeout at the synchronisation
            auto found = emu::take_diagnostics();
            INFO(resident << " resident:\n" << emu::format(found));
            const emu::Diagnostic* d = find(found, "cross-block-wait", marker_line(c.poll));
            REQUIRE(d);
            CHECK(d->severity == "error");
            CHECK_THAT(d->message, ContainsSubstring("waits for a block that has not started"));
            CHECK_THAT(d->message, ContainsSubstring("had not started"));
            CHECK_THAT(d->message, ContainsSubstring("atomic counter in start order"));
            // The look-backs publish their aggregate first: the writer is named. The chained
            // scan publishes only after its own wait, so no block started alone writes it.
            if (c.variant != 0) CHECK_THAT(d->message, ContainsSubstring("which block ("));
        }
    }
}

TEST_CASE("one float atomicAdd per block: different bits from call to call when shuffled",
          "[emu][schedule]") {
    KeepOptions keep;
    auto sum = entry<int (*)(int, int, unsigned*)>(module(), "sched_sum_bits");
    const int calls = 8;
    auto distinct = [&](int two_pass) {
        std::vector<unsigned> bits(calls);
        REQUIRE(sum(two_pass, calls, bits.data()) == 0);
        return std::set<unsigned>(bits.begin(), bits.end()).size();
    };
    schedule(emu::BlockOrder::Shuffle, 4);
    CHECK(distinct(0) > 1);   // the blocks add in a different order every call
    CHECK(distinct(1) == 1);  // partials and a fixed-order pass: the same bits every call
    schedule(emu::BlockOrder::InOrder, 1);
    CHECK(distinct(0) == 1);  // one order: the same bits, which hides the problem
    CHECK(problems(emu::take_diagnostics()).empty());
}

TEST_CASE("races between blocks that run at the same time are found", "[emu][schedule]") {
    KeepOptions keep;
    void* m = module();
    auto neighbour = entry<int (*)(unsigned)>(m, "sched_neighbour_race");
    auto scan = entry<int (*)(int, int, int)>(m, "sched_scan");
    for (auto order : {emu::BlockOrder::InOrder, emu::BlockOrder::Shuffle}) {
        schedule(order, order == emu::BlockOrder::InOrder ? 1 : 4, 3);
        INFO(schedule_name(emu::get_options()));
        CHECK(neighbour(9) == 0);
        auto found = emu::take_diagnostics();
        INFO(emu::format(found));
        CHECK((find(found, "race", marker_line("neighbour read")) ||
               find(found, "race", marker_line("neighbour write"))));
        // The chained scan without its __threadfence: the values are right (the emulator's
        // memory is sequentially consistent), the carry's read is a race.
        CHECK(scan(1, 64 * 20 + 5, 1) == 0);
        found = emu::take_diagnostics();
        INFO(emu::format(found));
        const emu::Diagnostic* d = find(found, "race", marker_line("chained carry read"));
        REQUIRE(d);
        CHECK_THAT(d->detail, ContainsSubstring("__threadfence()"));
    }
}

TEST_CASE("waits that can never end are reported with the waiting line", "[emu][schedule]") {
    KeepOptions keep;
    void* m = module();
    auto cycle = entry<int (*)(unsigned)>(m, "sched_wait_in_a_cycle");
    auto shared = entry<int (*)()>(m, "sched_spin_on_shared");
    // Every block resident, each waiting for the next: a deadlock across blocks.
    schedule(emu::BlockOrder::Shuffle, 4);
    CHECK(cycle(3) == int(cudaErrorLaunchTimeout));
    auto found = emu::take_diagnostics();
    INFO(emu::format(found));
    const emu::Diagnostic* d = find(found, "deadlock", marker_line("cycle poll"));
    REQUIRE(d);
    CHECK_THAT(d->message, ContainsSubstring("no block is left to start"));
    // One block at a time: the first waits for a block that has not started.
    schedule(emu::BlockOrder::InOrder, 1);
    CHECK(cycle(3) == int(cudaErrorLaunchTimeout));
    found = emu::take_diagnostics();
    INFO(emu::format(found));
    CHECK(find(found, "cross-block-wait", marker_line("cycle poll")));
    // Inside a block: threads spin on shared memory that the only writer sets after a barrier.
    schedule(emu::BlockOrder::InOrder, 1);
    CHECK(shared() == int(cudaErrorLaunchTimeout));
    found = emu::take_diagnostics();
    INFO(emu::format(found));
    d = find(found, "deadlock", marker_line("shared poll"));
    REQUIRE(d);
    CHECK_THAT(d->message, ContainsSubstring("shared memory"));
}

TEST_CASE("a finite loop that re-reads its words and changes nothing is no deadlock",
          "[emu][schedule]") {
    KeepOptions keep;
    auto walk = entry<int (*)(unsigned, unsigned)>(module(), "sched_walk_every_slice");
    // 64 slices of 256 bins, 32 keys per thread: each pass re-reads the same keys, and 63 of the
    // 64 passes change no memory at all (about 10^6 quiet resumes, four times the quiet window).
    for (auto order : {emu::BlockOrder::InOrder, emu::BlockOrder::Shuffle}) {
        schedule(order, 4);
        CHECK(walk(4 * 128 * 32, 64 * 256) == 1);
        auto found = problems(emu::take_diagnostics());
        INFO(emu::format(found));
        CHECK(found.empty());
    }
}

TEST_CASE("without lockstep, a thread that polls still gives way", "[emu][schedule]") {
    KeepOptions keep;
    auto scan = entry<int (*)(int, int, int)>(module(), "sched_scan");
    auto lockstep_off = [](emu::BlockOrder order) {
        schedule(order, 4);
        emu::Options o = emu::get_options();
        o.lockstep = false;
        emu::set_options(o);
    };
    lockstep_off(emu::BlockOrder::Shuffle);
    CHECK(scan(2, 64 * 20 + 5, 1) == 0);
    auto found = problems(emu::take_diagnostics());
    INFO(emu::format(found));
    CHECK(found.empty());
    lockstep_off(emu::BlockOrder::Reverse);
    CHECK(scan(2, 64 * 20 + 5, 0) == 1);
    found = emu::take_diagnostics();
    INFO(emu::format(found));
    CHECK(find(found, "cross-block-wait", marker_line("packed poll")));
}

TEST_CASE("interleaving costs little: a 1M-thread vector add shuffled, 4 resident, under a second",
          "[emu][schedule][speed]") {
    KeepOptions keep;
    emu::Options o = emu::get_options();
    o.check = false;
    o.explain = false;
    o.block_order = emu::BlockOrder::Shuffle;
    o.resident_blocks = 4;
    o.quantum = 16;
    emu::set_options(o);
    void* m = open_module(CUDALINGS_EMU_SEMANTICS_MODULE);
    double seconds = entry<double (*)(int)>(m, "sem_vector_add_seconds")(1 << 20);
    WARN("1M-thread vector add (plain mode, lockstep, shuffled, 4 resident): " << seconds
                                                                               << " s of CPU time");
    CHECK(seconds > 0);
    CHECK(seconds < 1.0);
}
