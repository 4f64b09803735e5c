// The grid's schedule. Blocks start in a dispatch order (in-order, reverse, or a seeded
// permutation that differs for every launch); up to `resident_blocks` of them are resident at
// once and share the OS thread by time slices (a quantum of fiber resumes per thread, less when a
// block cannot go on); the next block starts when a resident one ends. Each resident block
// keeps its own shared memory: the dynamic buffer is its own, and the registered `__shared__`
// variables (statics at one address) are saved and restored when another block's slice runs.
//
// A cross-block spin-wait progresses as long as the block it waits for has started. When no
// block progresses over whole rounds of slices (no store or atomic changed memory, no thread
// ended, no collective saw new values, and the threads only re-read what they had read, one of
// them the same words over and over, as a spin-wait does), the grid is stalled: with blocks
// still waiting to start, the waiters wait for a block that has not started, which a GPU does
// not guarantee ever to happen. The scheduler then starts the
// pending blocks one at a time, alone, until one of them stores to a word a waiter polls, and
// reports both with their lines; with no block left to start, it reports a grid deadlock.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <sstream>
#include <unordered_set>

#include <sys/mman.h>

#include "internal.h"

namespace cudalings_emu {
namespace {

// ------------------------------------------------------------------ dispatch order
std::uint64_t mix64(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// Position in the dispatch order -> linear block index. A shuffled order is a 4-round Feistel
// network over the smallest even power of two >= the block count, walked until it lands inside
// the grid (a bijection on [0, blocks) that needs no table, whatever the grid's size).
class DispatchOrder {
  public:
    DispatchOrder(BlockOrder order, std::uint64_t blocks, std::uint64_t seed, std::uint32_t launch)
        : order_(order), blocks_(blocks) {
        unsigned bits = 2;
        while (bits < 64 && (std::uint64_t{1} << bits) < blocks) bits += 2;
        half_ = bits / 2;
        half_mask_ = (std::uint64_t{1} << half_) - 1;
        for (unsigned k = 0; k < 4; ++k)
            keys_[k] = mix64(seed * 0x9e3779b97f4a7c15ull + launch * 0xd1b54a32d192ed03ull +
                             (k + 1) * 0x632be59bd9b4e019ull);
    }

    std::uint64_t at(std::uint64_t i) const {
        switch (order_) {
            case BlockOrder::Reverse:
                return blocks_ - 1 - i;
            case BlockOrder::Shuffle: {
                if (blocks_ < 2) return i;
                std::uint64_t x = permute(i);
                while (x >= blocks_) x = permute(x);
                return x;
            }
            default:
                return i;
        }
    }

  private:
    std::uint64_t permute(std::uint64_t x) const {
        std::uint64_t l = x >> half_, r = x & half_mask_;
        for (std::uint64_t k : keys_) {
            std::uint64_t next = l ^ (mix64(r ^ k) & half_mask_);
            l = r;
            r = next;
        }
        return (l << half_) | r;
    }

    BlockOrder order_;
    std::uint64_t blocks_;
    unsigned half_ = 1;
    std::uint64_t half_mask_ = 1;
    std::uint64_t keys_[4] = {};
};

// ------------------------------------------------------------------ stall detection
// A read made while reads are watched: what a waiting thread polls.
struct Poll {
    std::uintptr_t addr = 0;
    unsigned size = 0;
    const void* pc = nullptr;
    uint3 block{};
    std::uint32_t serial = 0;
    unsigned tid = 0;
    bool shared = false;
};
// Per thread: a spin-wait re-reads its own words; a loop that walks an array (every thread
// re-reading what *other* threads read before, with stores that leave memory unchanged, as a
// grid-stride loop with a step of 1 does) reads new words of its own all the time.
struct PollKey {
    std::uint32_t serial;
    std::uint32_t tid;
    std::uintptr_t granule;
    bool operator==(const PollKey& o) const {
        return serial == o.serial && tid == o.tid && granule == o.granule;
    }
};
struct PollKeyHash {
    std::size_t operator()(const PollKey& k) const {
        return std::size_t(
            mix64(k.granule ^ (std::uint64_t{k.serial} << 48) ^ (std::uint64_t{k.tid} << 32)));
    }
};

// Quiet rounds (no progress, nothing new read) before the grid counts as stalled, and the
// fiber resumes they must add up to: a finite loop that re-reads the same words for this long
// without changing memory is not something lesson code does; a spin-wait does it forever.
constexpr unsigned kQuietRounds = 4;
constexpr std::uint64_t kQuietResumes = std::uint64_t{1} << 18;
// The same for a block started alone while a stall is diagnosed (a stall is already known).
constexpr std::uint64_t kQuietResumesLate = std::uint64_t{1} << 14;
// Fiber resumes without progress before reads are watched at all.
constexpr std::uint64_t kWatchAfter = 4096;
// More distinct words read than this while watching: the threads stream, they do not poll.
constexpr std::size_t kMaxPolls = 1 << 16;
// A thread waits when it reads its words over and over: at least this many reads of the window
// per distinct word, in the thread that repeats most. Memory alone cannot tell a spin-wait from
// a finite loop that walks the same words again and changes nothing (its counter is in a
// register): a block that counts the keys into each slice of the bins in turn re-reads its
// keys once per slice, and with no key in a slice it stores 0 over 0 for a whole pass. Such a
// loop re-reads each word once per pass (tens of passes at most); a spin-wait re-reads its
// word or two on every turn, so it reaches this count soon after the quiet rounds.
constexpr std::uint64_t kPollRepeats = 128;

// Per thread of the window: its reads, and how many different words they were.
struct ThreadReads {
    std::uint64_t reads = 0;
    std::uint64_t words = 0;
};

struct Watch {
    std::unordered_map<PollKey, Poll, PollKeyHash> polls;  // this window's reads
    std::unordered_map<std::uint64_t, ThreadReads> threads;  // by block serial << 32 | thread
    unsigned quiet_rounds = 0;
    std::uint64_t resumes_at_start = 0;
    std::uint64_t quiet_since = 0;  // resumes at the last progress

    void stop() {
        rt().watch_reads = false;
        polls.clear();
        threads.clear();
        quiet_rounds = 0;
    }
    void start() {
        rt().watch_reads = true;
        polls.clear();
        threads.clear();
        quiet_rounds = 0;
        resumes_at_start = rt().resumes;
    }
    // Reads per distinct word in the thread that repeats most (kPollRepeats).
    std::uint64_t most_repeats() const {
        std::uint64_t most = 0;
        for (const auto& [key, t] : threads)
            if (t.words) most = std::max(most, t.reads / t.words);
        return most;
    }
};
Watch g_watch;

// The stall being diagnosed: its waiters' polls, and the global words among them.
std::vector<Poll> g_waiters;
std::unordered_set<std::uintptr_t> g_watched;

// ------------------------------------------------------------------ reports
int line_of(const void* pc, std::string* file) {
    std::string w = where_pc(pc);
    auto colon = w.rfind(':');
    if (colon == std::string::npos) {
        *file = w;
        return 0;
    }
    *file = w.substr(0, colon);
    return std::atoi(w.c_str() + colon + 1);
}

// "status[4]", or "element 4 (8-byte) of the array allocated at scan.cu:120": what the reports
// of out-of-bounds accesses call the same memory (global_location).
std::string what_is_polled(const Poll& p) {
    if (p.shared) return "shared memory";
    std::uintptr_t a = p.addr;
    if (in_arena(a)) {
        Allocation* al = find_allocation(a, nullptr);
        if (al && !al->name.empty()) return global_location(*al, a);
        if (al) {
            std::size_t element = p.size ? (a - al->begin) / p.size : 0;
            std::string of = al->where.find("unknown") == std::string::npos
                                 ? "the array allocated at " + al->where
                                 : "a " + std::to_string(al->bytes) + "-byte device allocation";
            return "element " + std::to_string(element) + " (" + std::to_string(p.size) +
                   "-byte) of " + of;
        }
    }
    return "a __device__ variable at " + hex(a);
}

std::string schedule_text() {
    const Options& o = opts();
    Runtime& r = rt();
    std::string text = "schedule: blocks started ";
    switch (o.block_order) {
        case BlockOrder::Reverse:
            text += "in reverse order";
            break;
        case BlockOrder::Shuffle:
            text += "in a shuffled order (seed " + hex(o.schedule_seed) + ", launch " +
                    std::to_string(r.launch_serial) + ")";
            break;
        default:
            text += "in order";
            break;
    }
    return text + ", " + std::to_string(o.resident_blocks) + " resident at a time\n";
}

std::string waiters_text(const std::vector<Poll>& waiters) {
    std::ostringstream s;
    std::size_t shown = 0;
    std::vector<std::pair<std::uint32_t, const void*>> seen;
    for (const Poll& p : waiters) {
        std::pair<std::uint32_t, const void*> key{p.serial, p.pc};
        if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
        seen.push_back(key);
        if (shown++ == 8) break;
        Thread t;
        t.tid = {p.tid % rt().block_dim.x, p.tid / rt().block_dim.x % rt().block_dim.y,
                 p.tid / (rt().block_dim.x * rt().block_dim.y)};
        s << "block " << block_name(p.block) << ", " << thread_name(t) << ", polls "
          << what_is_polled(p) << " at " << where_pc(p.pc) << "\n";
    }
    if (shown > 8) s << "(and more waiting threads)\n";
    return s.str();
}

const char* kStartOrderAdvice =
    "blocks start in no guaranteed order on a GPU: a block may only wait for blocks that "
    "started before it — take tile numbers from an atomic counter in start order";

// ------------------------------------------------------------------ the resident blocks
// The longest a block is held back (Options::hold_back), in fiber resumes of the other blocks:
// about 16 times the stall detector's quiet window, so that the others wait out their own
// detection first; a wrong look-back that does not wait is long done by then.
constexpr std::uint64_t kHoldResumes = std::uint64_t{1} << 22;

struct Grid {
    std::vector<std::unique_ptr<Block>> slots;
    std::vector<Block*> idle;
    std::vector<Block*> active;  // in the order they started
    std::vector<Block*> parked;  // the waiters of a stall being diagnosed
    Block* held = nullptr;       // held back after its first global atomic (Options::hold_back)
    bool hold_used = false;      // once a launch
    std::uint64_t held_since = 0;  // fiber resumes when it was held
    std::uint64_t next = 0, total = 0;
    bool diagnosing = false;
    std::uint64_t pending_at_stall = 0;
};

Block* new_slot(Grid& g) {
    if (!g.idle.empty()) {
        Block* b = g.idle.back();
        g.idle.pop_back();
        return b;
    }
    Runtime& r = rt();
    auto b = std::make_unique<Block>();
    const dim3 d = r.block_dim;
    b->count = d.x * d.y * d.z;
    b->warps = (b->count + 31) / 32;
    b->threads.assign(b->count, Thread{});
    b->warp_sync.assign(b->warps, 0u);
    b->window = take_window();
    for (unsigned z = 0, i = 0; z < d.z; ++z)
        for (unsigned y = 0; y < d.y; ++y)
            for (unsigned x = 0; x < d.x; ++x, ++i) {
                Thread& t = b->threads[i];
                t.tid = {x, y, z};
                t.linear = i;
                t.lane = i % 32;
                t.warp = i / 32;
            }
    g.slots.push_back(std::move(b));
    return g.slots.back().get();
}

void admit(Grid& g, std::uint64_t linear) {
    Runtime& r = rt();
    Block* b = new_slot(g);
    ++g.next;
    const dim3 grid = r.grid_dim;
    b->idx = {unsigned(linear % grid.x), unsigned(linear / grid.x % grid.y),
              unsigned(linear / (std::uint64_t{grid.x} * grid.y))};
    start_block(*b);
    b->late = g.diagnosing;
    // The held-back schedule: the launch's first block, once it made a global atomic.
    b->hold_armed = opts().hold_back && !g.hold_used && g.next == 1 && g.total > 1;
    b->yield_now = false;
    // Garbage, as shared memory is at a block's start: 0xFF bytes (a float reads as NaN).
    std::memset(b->window + kDynamicOffset, 0xff, r.dynamic_bytes);
    b->has_var.clear();
    r.block = b;
    on_block_start(*b);
    g.active.push_back(b);
}

void switch_to(Block& b) { rt().block = &b; }

void retire(Grid& g, Block* b) {
    Runtime& r = rt();
    r.block = b;
    on_block_end(*b);
    g.active.erase(std::find(g.active.begin(), g.active.end(), b));
    g.idle.push_back(b);
}

void drop(Grid& g, Block* b) {
    drop_fibers(*b);
    retire(g, b);
}

void fail_launch(const Diagnostic& d) {
    report(d);
    Runtime& r = rt();
    if (r.pending_error == cudaSuccess) r.pending_error = cudaErrorLaunchTimeout;
    r.abort = true;
}

// Every resident block spins and nothing is left to start, or they spin on shared memory.
void report_grid_deadlock(const std::vector<Poll>& waiters, bool pending) {
    Diagnostic d;
    d.kind = "deadlock";
    d.severity = "error";
    d.line = line_of(waiters.front().pc, &d.file);
    bool any_global = false;
    for (const Poll& p : waiters) any_global = any_global || !p.shared;
    d.message =
        !any_global
            ? "deadlock: every running block spins on shared memory that none of its threads "
              "will change"
        : pending ? "deadlock across blocks: every running block waits for memory that no "
                    "block changes, not even the blocks that had not started"
                  : "deadlock across blocks: every running block waits for memory that no "
                    "running block will change, and no block is left to start (blocks waiting "
                    "for each other, or for a value nobody writes)";
    d.detail = waiters_text(waiters) + schedule_text();
    fail_launch(d);
}

// Blocks started alone after a stall never stored to a polled word.
void report_unnamed_wait(const Grid& g) {
    const Poll* w = nullptr;
    for (const Poll& p : g_waiters)
        if (!p.shared) {
            w = &p;
            break;
        }
    Diagnostic d;
    d.kind = "cross-block-wait";
    d.severity = "error";
    d.line = line_of(w->pc, &d.file);
    d.message = "block " + block_name(w->block) +
                " waits for a block that has not started: it polls " + what_is_polled(*w) +
                " (line " + std::to_string(d.line) + "), which no running block changes, and " +
                std::to_string(g.pending_at_stall) +
                (g.pending_at_stall == 1 ? " block" : " blocks") +
                " had not started when every block was waiting (" + kStartOrderAdvice + ")";
    d.detail = waiters_text(g_waiters) + schedule_text();
    fail_launch(d);
}

// The launch ran past the time limit while it still made progress (a hang would have been
// found as a stall): too slow to emulate, which is not a verdict on the code.
void report_slow(const Grid& g) {
    Runtime& r = rt();
    const double seconds = thread_cpu_seconds() - r.budget_started;
    const std::uint64_t finished = g.next - g.active.size() - g.parked.size();
    Diagnostic d;
    d.kind = "slow";
    d.severity = "error";
    std::string where =
        g.active.empty() ? std::string() : where_threads_are(*g.active.front(), &d.file, &d.line);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.0f", seconds);
    d.message = std::string("the kernel was still running after ") + buf +
                " s of CPU time of emulation, and still making progress (" +
                std::to_string(finished) + " of " + std::to_string(g.total) +
                (g.total == 1 ? " block" : " blocks") +
                " finished): too slow to emulate at this size, not a hang. Does a thread do "
                "far more work than it should (a loop whose step is 1 where the grid's size "
                "was meant)?";
    d.detail =
        (where.empty() ? ""
                       : "in block " + block_name(g.active.front()->idx) + ": " + where + "\n") +
        schedule_text();
    fail_launch(d);
}

// The round's outcome for the stall detector; true when the grid is stalled.
bool stalled(bool progressed, std::uint64_t polls_before, std::uint64_t need_resumes) {
    Runtime& r = rt();
    if (progressed || g_watch.polls.size() > kMaxPolls) {
        g_watch.stop();
        g_watch.quiet_since = r.resumes;
        return false;
    }
    if (!r.watch_reads) {
        // Reads are watched (a hash lookup each) only once nothing changed for a while.
        if (r.resumes - g_watch.quiet_since >= kWatchAfter) g_watch.start();
        return false;
    }
    if (g_watch.polls.empty() || g_watch.polls.size() != polls_before) {
        g_watch.quiet_rounds = 0;
        return false;
    }
    return ++g_watch.quiet_rounds >= kQuietRounds &&
           r.resumes - g_watch.resumes_at_start >= need_resumes &&
           g_watch.most_repeats() >= kPollRepeats;
}

std::vector<Poll> window_polls() {
    std::vector<Poll> out;
    out.reserve(g_watch.polls.size());
    for (const auto& [key, p] : g_watch.polls) out.push_back(p);
    std::sort(out.begin(), out.end(), [](const Poll& a, const Poll& b) {
        if (a.serial != b.serial) return a.serial < b.serial;
        if (a.tid != b.tid) return a.tid < b.tid;
        return a.addr < b.addr;
    });
    return out;
}

}  // namespace

void note_read(std::uintptr_t a, unsigned size, const void* pc, bool shared) {
    Runtime& r = rt();
    Block& b = *r.block;
    PollKey key{b.serial, r.current ? r.current->linear : 0, a & ~std::uintptr_t{3}};
    auto [it, fresh] = g_watch.polls.try_emplace(key);
    ThreadReads& t = g_watch.threads[std::uint64_t{key.serial} << 32 | key.tid];
    ++t.reads;
    if (!fresh) return;
    ++t.words;
    Poll& p = it->second;
    p.addr = a;
    p.size = size;
    p.pc = pc;
    p.block = b.idx;
    p.serial = b.serial;
    p.tid = r.current ? r.current->linear : 0;
    p.shared = shared;
}

void note_polled_store(std::uintptr_t a, unsigned size, const void* pc) {
    Runtime& r = rt();
    if (!r.block || !r.block->late) return;
    for (std::uintptr_t g = a & ~std::uintptr_t{3}; g < a + size; g += 4) {
        if (!g_watched.count(g)) continue;
        const Poll* w = nullptr;
        for (const Poll& p : g_waiters)
            if (!p.shared && p.addr < g + 4 && g < p.addr + p.size) {
                w = &p;
                break;
            }
        if (!w) continue;
        Diagnostic d;
        d.kind = "cross-block-wait";
        d.severity = "error";
        d.line = line_of(w->pc, &d.file);
        std::string writer_file;
        int writer_line = line_of(pc, &writer_file);
        std::string writer = block_name(r.block->idx);
        d.message = "block " + block_name(w->block) +
                    " waits for a block that has not started: it polls " + what_is_polled(*w) +
                    " (line " + std::to_string(d.line) + "), which block " + writer +
                    " writes (line " + std::to_string(writer_line) + "), and block " + writer +
                    " had not started (" + kStartOrderAdvice + ")";
        d.detail = waiters_text(g_waiters) + "block " + writer + " writes it at " + where_pc(pc) +
                   "\n" + schedule_text();
        report(d);
        abort_kernel(cudaErrorLaunchTimeout);
    }
}

void run_grid() {
    Runtime& r = rt();
    const Options& o = opts();
    Grid g;
    g.total = std::uint64_t{r.grid_dim.x} * r.grid_dim.y * r.grid_dim.z;
    DispatchOrder order(o.block_order, g.total, o.schedule_seed, r.launch_serial);
    const std::uint64_t capacity =
        std::min<std::uint64_t>(std::max(1u, o.resident_blocks), g.total);
    // A slice: about `quantum` resumes per thread of the block.
    const unsigned quantum = unsigned(std::min<std::uint64_t>(
        std::uint64_t{std::max(1u, o.quantum)} * r.block_dim.x * r.block_dim.y * r.block_dim.z,
        1u << 30));
    g_watch.stop();
    g_watch.quiet_since = r.resumes;
    g_waiters.clear();
    g_watched.clear();
    r.watch_writes = false;

    while (!r.abort) {
        bool progressed = false;
        // While a stall is diagnosed, the pending blocks start one at a time, alone.
        std::uint64_t room = g.diagnosing ? 1 : capacity;
        while (g.active.size() < room && g.next < g.total) {
            admit(g, order.at(g.next));
            progressed = true;
        }
        if (g.active.empty()) {
            if (g.diagnosing) report_unnamed_wait(g);
            break;
        }
        // The held block goes on when it is the only one that could run, or after a while
        // (kHoldResumes): a wait the stall detector does not see must not turn into a "slow".
        if (g.held && (g.active.size() == 1 || r.resumes - g.held_since > kHoldResumes)) {
            g.held = nullptr;
            progressed = true;
        }
        std::uint64_t progress_before = r.progress;
        std::size_t polls_before = g_watch.polls.size();
        for (std::size_t i = 0; i < g.active.size() && !r.abort;) {
            Block* b = g.active[i];
            if (b == g.held) {
                ++i;
                continue;
            }
            switch_to(*b);
            SliceEnd end = run_slice(*b, quantum);
            r.current = nullptr;
            if (b->yield_now) {  // it drew its ticket: held back from now on
                b->yield_now = b->hold_armed = false;
                g.hold_used = true;
                if (end != SliceEnd::Finished) {
                    g.held = b;
                    g.held_since = r.resumes;
                }
            }
            if (end == SliceEnd::Finished) {
                retire(g, b);
                progressed = true;
                continue;
            }
            ++i;
        }
        if (r.abort) break;
        if (o.time_limit_seconds > 0 &&
            thread_cpu_seconds() - r.budget_started > o.time_limit_seconds) {
            report_slow(g);
            break;
        }
        progressed = progressed || r.progress != progress_before;
        if (!stalled(progressed, polls_before, g.diagnosing ? kQuietResumesLate : kQuietResumes))
            continue;

        // Stalled while a block is held back: the others wait for it (as a look-back waits for
        // an earlier tile), so it goes on. Not a finding: a GPU may run a block this late.
        if (g.held) {
            g.held = nullptr;
            g_watch.stop();
            g_watch.quiet_since = r.resumes;
            continue;
        }
        // Stalled. A block started after the stall that waits too: it is not the writer.
        std::vector<Poll> polls = window_polls();
        g_watch.stop();
        if (g.diagnosing) {
            while (!g.active.empty()) drop(g, g.active.back());
            continue;
        }
        bool any_global = false;
        for (const Poll& p : polls) any_global = any_global || !p.shared;
        if (g.next == g.total || !any_global) {
            report_grid_deadlock(polls, g.next < g.total);
            break;
        }
        // Blocks are still pending: the waiters wait for one of them. Park the waiters, start
        // the pending blocks one at a time and watch for a store to a polled word.
        g_waiters = polls;
        for (const Poll& p : polls)
            if (!p.shared)
                for (std::uintptr_t w = p.addr & ~std::uintptr_t{3}; w < p.addr + p.size; w += 4)
                    g_watched.insert(w);
        g.parked = g.active;
        g.active.clear();
        g.diagnosing = true;
        g.pending_at_stall = g.total - g.next;
        r.watch_writes = true;
    }

    for (Block* b : g.parked) g.active.push_back(b);
    while (!g.active.empty()) drop(g, g.active.back());
    g_watch.stop();
    r.watch_writes = false;
    r.block = nullptr;
}

// The blocks of a dry-mode sample, by linear index: the first, the last, then seeded picks
// (another set for each launch), `count` in all (every block of a smaller grid).
namespace {
std::vector<std::uint64_t> sample_of(std::uint64_t blocks, unsigned count, std::uint64_t seed,
                                     std::uint32_t launch) {
    std::vector<std::uint64_t> picks;
    auto add = [&](std::uint64_t b) {
        if (picks.size() < count && std::find(picks.begin(), picks.end(), b) == picks.end())
            picks.push_back(b);
    };
    if (blocks <= count) {
        for (std::uint64_t b = 0; b < blocks; ++b) picks.push_back(b);
        return picks;
    }
    add(0);
    add(blocks - 1);
    for (std::uint64_t k = 0; picks.size() < count && k < 4ull * count; ++k)
        add(mix64(seed * 0x9e3779b97f4a7c15ull + launch * 0xd1b54a32d192ed03ull + k) % blocks);
    return picks;
}
}  // namespace

void run_sample() {
    Runtime& r = rt();
    const Options& o = opts();
    Grid g;
    const std::vector<std::uint64_t> picks =
        sample_of(std::uint64_t{r.grid_dim.x} * r.grid_dim.y * r.grid_dim.z,
                  std::max(1u, o.sample_blocks), o.sample_seed, r.launch_serial);
    g.total = picks.size();
    const unsigned quantum = unsigned(std::min<std::uint64_t>(
        std::uint64_t{std::max(1u, o.quantum)} * r.block_dim.x * r.block_dim.y * r.block_dim.z,
        1u << 30));
    // The budget is the launch's, shared by its blocks: a block that waits for one never run
    // (a look-back), or loops over far more than a sample needs (a grid-stride loop at 2^28),
    // ends when its share is spent.
    const double share = std::max(0.0, o.sample_seconds) / double(picks.size());
    g_waiters.clear();
    g_watched.clear();
    r.watch_writes = false;
    const std::size_t findings_at_start = pending_count();
    const cudaError_t pending_at_start = r.pending_error;
    for (std::uint64_t linear : picks) {
        if (r.abort) {
            // A block stopped the kernel: an out-of-bounds access ends the sample; anything else
            // (a trap on a value never filled in, a null pointer read from memory) is no
            // finding of a sample, and the next block runs.
            while (!g.active.empty()) drop(g, g.active.back());
            if (keep_pending_since(findings_at_start, "out-of-bounds")) break;
            r.abort = false;
            r.pending_error = pending_at_start;
        }
        admit(g, linear);
        Block* b = g.active.back();
        const auto started = std::chrono::steady_clock::now();
        g_watch.stop();
        g_watch.quiet_since = r.resumes;
        while (!r.abort) {
            const std::uint64_t progress_before = r.progress;
            const std::size_t polls_before = g_watch.polls.size();
            switch_to(*b);
            const SliceEnd end = run_slice(*b, quantum);
            r.current = nullptr;
            if (end == SliceEnd::Finished) {
                retire(g, b);
                break;
            }
            if (r.abort) break;
            const double spent =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
            // Out of time, or waiting for memory no block of the sample changes: the block ends
            // here, unreported (its other blocks would have let it go on).
            if (spent > share ||
                stalled(r.progress != progress_before, polls_before, kQuietResumes)) {
                drop(g, b);
                break;
            }
        }
    }
    while (!g.active.empty()) drop(g, g.active.back());
    g_watch.stop();
    r.block = nullptr;
}

// ------------------------------------------------------------------ shared memory
namespace {
std::vector<unsigned char*> g_free_windows;
}  // namespace

unsigned char* take_window() {
    if (!g_free_windows.empty()) {
        unsigned char* w = g_free_windows.back();
        g_free_windows.pop_back();
        return w;
    }
    // Reserved, committed page by page as it is touched.
    void* m = ::mmap(nullptr, kSharedWindow, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) {
        std::perror("cudalings emulator: cannot map shared memory");
        std::abort();
    }
    return static_cast<unsigned char*>(m);
}

void give_window(unsigned char* w) {
    if (w) g_free_windows.push_back(w);
}

Block::~Block() { give_window(window); }

void* dynamic_shared() {
    Runtime& r = rt();
    return r.block ? static_cast<void*>(r.block->window + kDynamicOffset) : nullptr;
}

void* dynamic_shared_named(const char* name, std::size_t element) {
    Runtime& r = rt();
    if (r.block && name) {
        r.dynamic_name = name;
        r.dynamic_element = element ? element : 1;
    }
    return dynamic_shared();
}

// A red zone after each variable: an index a little out of range lands there, not in the next
// variable, and is reported with the variable's name.
static std::size_t red_zone(std::size_t bytes) { return 256 + bytes / 2; }

void* shared_slot(SharedKey* key, const SharedShape& shape, const char* name) {
    Runtime& r = rt();
    if (!r.in_kernel || !r.block) {
        // Host code that calls a device function: a buffer of its own (never a GPU's case).
        static std::vector<std::unique_ptr<unsigned char[]>> host;
        host.emplace_back(new unsigned char[shape.bytes + 16]);
        return host.back().get();
    }
    if (key->launch != r.launch_serial || key->index >= r.shared_vars.size()) {
        std::size_t align = std::max<std::size_t>(16, shape.align);
        std::size_t at = (r.shared_next + align - 1) / align * align;
        Runtime::SharedVar v;
        v.begin = at;
        v.end = at + shape.bytes;
        v.name = name ? name : "?";
        v.element = shape.element ? shape.element : 1;
        v.rank = std::min<std::size_t>(shape.rank, 4);
        for (std::size_t i = 0; i < v.rank; ++i) v.dims[i] = shape.dims[i];
        if (v.end + red_zone(shape.bytes) > kDynamicOffset) {
            Diagnostic d;
            d.kind = "launch";
            d.severity = "error";
            d.message = "the kernel's __shared__ variables need more than " +
                        std::to_string(kDynamicOffset / 1024) + " KiB";
            report(d);
            abort_kernel(cudaErrorInvalidValue);
        }
        r.shared_next = v.end + red_zone(shape.bytes);
        r.static_shared += shape.bytes;
        key->launch = r.launch_serial;
        key->index = std::uint32_t(r.shared_vars.size());
        r.shared_vars.push_back(v);
        if (r.static_shared + r.dynamic_bytes > r.shared_limit) {
            // The GPU refuses such a launch: nothing of it runs.
            r.last_error = cudaErrorInvalidValue;
            Diagnostic d;
            d.kind = "launch";
            d.severity = "error";
            if (r.site) {
                d.file = r.site->file;
                d.line = r.site->line;
            }
            d.message =
                "the launch of " + std::string(r.site ? r.site->kernel : "the kernel") +
                " fails on a GPU: " + std::to_string(r.static_shared) +
                " bytes of __shared__ variables and " + std::to_string(r.dynamic_bytes) +
                " bytes of dynamic shared memory are more than the " +
                std::to_string(r.shared_limit) + " bytes a block may use" +
                (r.shared_limit == 48 * 1024 ? " without cudaFuncSetAttribute(kernel, "
                                               "cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)"
                                             : "");
            report(d);
            abort_kernel(cudaErrorInvalidValue);
        }
    }
    const Runtime::SharedVar& v = r.shared_vars[key->index];
    Block& b = *r.block;
    if (b.has_var.size() <= key->index) b.has_var.resize(key->index + 1, 0);
    if (!b.has_var[key->index]) {
        // First use in this block: garbage (0xFF bytes), as uninitialised shared memory is.
        std::memset(b.window + v.begin, 0xff, v.end - v.begin);
        b.has_var[key->index] = 1;
    }
    return b.window + v.begin;
}

namespace {
std::string indices(std::size_t element, const Runtime::SharedVar& v) {
    if (v.rank <= 1) return "[" + std::to_string(element) + "]";
    std::size_t idx[4] = {};
    for (std::size_t k = v.rank; k-- > 0;) {
        std::size_t extent = v.dims[k] ? v.dims[k] : 1;
        idx[k] = k == 0 ? element : element % extent;
        element /= extent;
    }
    std::string out;
    for (std::size_t k = 0; k < v.rank; ++k) out += "[" + std::to_string(idx[k]) + "]";
    return out;
}
std::string declared(const Runtime::SharedVar& v) {
    std::string out = v.name;
    if (v.rank == 0) return out;
    for (std::size_t k = 0; k < v.rank; ++k) out += "[" + std::to_string(v.dims[k]) + "]";
    return out;
}
}  // namespace

bool shared_inside(std::size_t offset, std::size_t size) {
    const Runtime& r = rt();
    if (offset >= kDynamicOffset) return offset + size <= kDynamicOffset + r.dynamic_bytes;
    for (const auto& v : r.shared_vars)
        if (offset >= v.begin && offset + size <= v.end) return true;
    return false;
}

std::string shared_location(std::size_t offset, bool* inside, std::string* past) {
    Runtime& r = rt();
    *inside = true;
    if (offset >= kDynamicOffset) {
        std::size_t o = offset - kDynamicOffset;
        std::string name = r.dynamic_name.empty() ? "the dynamic shared memory" : r.dynamic_name;
        std::size_t element = r.dynamic_element ? r.dynamic_element : 4;
        if (o >= r.dynamic_bytes) {
            *inside = false;
            if (past)
                *past = "the launch gave " + std::to_string(r.dynamic_bytes) +
                        " bytes of dynamic shared memory" +
                        (r.dynamic_bytes == 0 ? " (none: the third <<<>>> parameter is 0)" : "");
        }
        return name + "[" + std::to_string(o / element) + "]";
    }
    const Runtime::SharedVar* before = nullptr;
    for (const auto& v : r.shared_vars) {
        if (offset >= v.begin && offset < v.end) {
            std::size_t e = (offset - v.begin) / v.element;
            return std::string(v.name) + indices(e, v);
        }
        if (v.begin <= offset) before = &v;
    }
    *inside = false;
    if (!before) return "shared memory";
    std::size_t e = (offset - before->begin) / before->element;
    if (past)
        *past = "__shared__ " + declared(*before) + " has " +
                std::to_string((before->end - before->begin) / before->element) + " elements";
    return std::string(before->name) + "[" + std::to_string(e) + "]";
}

}  // namespace cudalings_emu
