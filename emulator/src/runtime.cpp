// The execution model inside a block: every CUDA thread is a fiber on the calling OS thread.
// Warps run one after another; within a warp the lanes take turns, one memory access each
// (lockstep), so warp-synchronous code behaves as on a GPU. __syncthreads completes when every
// live thread of the block waits at a barrier; a warp collective completes when every live
// lane of its mask has arrived. When nothing can run and nothing can complete, the block is
// deadlocked: every waiting thread is reported. A block runs in time slices (run_slice); which
// blocks run, and when, is schedule.cpp's business.
#include <dlfcn.h>
#include <malloc.h>
#include <time.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>

#include "internal.h"

namespace cudalings_emu {

// The library's shared objects are constructed before any program that links it, or any
// emulated module it loads, can run a kernel or call the API.
Runtime g_runtime;

namespace {
// Each launch allocates its blocks' threads (hundreds of KiB a block) and the race detector's
// shadow pages (200 KiB each), and frees them when it ends or its allocation is freed. With
// glibc's defaults that memory goes back to the kernel (unmapped, or trimmed off the heap) and
// every launch faults it in again, page by page: a third of an emulated check's page faults.
// Kept on the heap instead: chunks below 4 MiB never get a mapping of their own, and up to
// 64 MiB free at the heap's top stays there.
const bool g_heap_kept = [] {
    ::mallopt(M_MMAP_THRESHOLD, 4 << 20);
    ::mallopt(M_TRIM_THRESHOLD, 64 << 20);
    return true;
}();
}  // namespace

namespace {

// A positive number from the environment, or `fallback` (with a warning) when it is not one.
unsigned env_count(const char* name, const char* text, unsigned fallback) {
    char* end = nullptr;
    unsigned long v = std::strtoul(text, &end, 10);
    if (end == text || *end || v == 0 || v > 1u << 20) {
        std::fprintf(stderr, "cudalings emulator: ignoring %s=%s (a positive number expected)\n",
                     name, text);
        return fallback;
    }
    return unsigned(v);
}

}  // namespace

Options environment_options() {
    Options o;
    if (const char* m = std::getenv("CUDALINGS_EMU_MODE")) {
        std::string mode = m;
        // "pictures": explain mode's recording for the checker (a step's performance goals),
        // which the runner does not turn into text.
        o.check = mode == "check" || mode == "explain" || mode == "pictures";
        o.explain = mode == "explain" || mode == "pictures";
    }
    if (const char* l = std::getenv("CUDALINGS_EMU_LOCKSTEP")) o.lockstep = std::atoi(l) != 0;
    if (const char* b = std::getenv("CUDALINGS_EMU_BLOCK_ORDER"))
        if (!parse_block_order(b, &o.block_order))
            std::fprintf(stderr,
                         "cudalings emulator: ignoring CUDALINGS_EMU_BLOCK_ORDER=%s "
                         "(in-order, reverse or shuffle expected)\n",
                         b);
    if (const char* seed = std::getenv("CUDALINGS_EMU_SEED")) {
        char* end = nullptr;
        unsigned long long v = std::strtoull(seed, &end, 16);
        if (end == seed || *end)
            std::fprintf(stderr,
                         "cudalings emulator: ignoring CUDALINGS_EMU_SEED=%s (hex expected)\n",
                         seed);
        else
            o.schedule_seed = v;
    }
    if (const char* k = std::getenv("CUDALINGS_EMU_RESIDENT"))
        o.resident_blocks = env_count("CUDALINGS_EMU_RESIDENT", k, o.resident_blocks);
    if (const char* h = std::getenv("CUDALINGS_EMU_HOLD_BACK")) o.hold_back = std::atoi(h) != 0;
    if (const char* q = std::getenv("CUDALINGS_EMU_QUANTUM"))
        o.quantum = env_count("CUDALINGS_EMU_QUANTUM", q, o.quantum);
    if (const char* t = std::getenv("CUDALINGS_EMU_TIME_LIMIT")) {
        char* end = nullptr;
        double v = std::strtod(t, &end);
        if (end == t || *end || !(v >= 0))
            std::fprintf(stderr,
                         "cudalings emulator: ignoring CUDALINGS_EMU_TIME_LIMIT=%s (seconds "
                         "expected)\n",
                         t);
        else
            o.time_limit_seconds = v;
    }
    return o;
}

const Options& opts() {
    Runtime& r = rt();
    if (!r.options_read) {
        r.options_read = true;
        r.options = environment_options();
    }
    return r.options;
}

const char* block_order_name(BlockOrder order) {
    switch (order) {
        case BlockOrder::Reverse:
            return "reverse";
        case BlockOrder::Shuffle:
            return "shuffle";
        default:
            return "in-order";
    }
}

bool parse_block_order(const std::string& name, BlockOrder* order) {
    for (BlockOrder o : {BlockOrder::InOrder, BlockOrder::Reverse, BlockOrder::Shuffle})
        if (name == block_order_name(o)) {
            *order = o;
            return true;
        }
    return false;
}

Options get_options() { return opts(); }
void set_options(const Options& o) {
    rt().options = o;
    rt().options_read = true;
    rt().sample_intact = o.dry && o.sample_blocks > 0;
    rt().sample_skips = 0;
}

std::uint64_t sample_skips() { return rt().sample_skips; }

Statistics statistics() { return {rt().launches, rt().blocks_run, rt().threads_run}; }

double thread_cpu_seconds() {
    timespec t{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

void start_time_budget() {
    rt().budget_set = true;
    rt().budget_started = thread_cpu_seconds();
}

uint3 thread_idx() { return cur() ? cur()->tid : uint3{0, 0, 0}; }
uint3 block_idx() { return rt().block ? rt().block->idx : uint3{0, 0, 0}; }
dim3 block_dim() { return rt().block_dim; }
dim3 grid_dim() { return rt().grid_dim; }
unsigned lane_id() { return cur() ? cur()->lane : 0; }

namespace {

alignas(64) unsigned char g_params[64 * 1024];

void fiber_entry() {
    Runtime& r = rt();
    r.body(r.closure);
    Thread* t = r.current;
    settle_store(*t);
    flush_pending(*t);
    t->state = State::Done;
    ++r.block->done;
    ++r.progress;
    cudalings_emu_switch(&t->sp, r.scheduler_sp);
    __builtin_unreachable();
}

void resume(Thread& t) {
    Runtime& r = rt();
    if (t.state == State::NotStarted) {
        t.stack = take_stack();
        t.sp = fiber_prepare(t.stack, &fiber_entry);
        t.state = State::Ready;
        ++r.threads_run;
    }
    r.current = &t;
    ++r.resumes;
    r.heartbeat.store(r.resumes, std::memory_order_relaxed);
    cudalings_emu_switch(&r.scheduler_sp, t.sp);
    r.current = nullptr;
    if (t.state == State::Done) {
        give_stack(t.stack);
        t.stack = nullptr;
    }
}

std::string lanes_text(unsigned mask) {
    std::ostringstream s;
    bool first = true;
    for (int i = 0; i < 32;) {
        if (!(mask >> i & 1)) {
            ++i;
            continue;
        }
        int j = i;
        while (j + 1 < 32 && (mask >> (j + 1) & 1)) ++j;
        s << (first ? "" : ", ") << i;
        if (j > i) s << "-" << j;
        first = false;
        i = j + 1;
    }
    return first ? "none" : s.str();
}

const char* op_name(int op) {
    switch (op) {
        case kSyncWarp:
            return "__syncwarp";
        case kShflIdx:
            return "__shfl_sync";
        case kShflUp:
            return "__shfl_up_sync";
        case kShflDown:
            return "__shfl_down_sync";
        case kShflXor:
            return "__shfl_xor_sync";
        case kBallot:
            return "__ballot_sync";
        case kAny:
            return "__any_sync";
        case kAll:
            return "__all_sync";
        case kMatchAny:
            return "__match_any_sync";
        case kMatchAll:
            return "__match_all_sync";
        case kActiveMask:
            return "__activemask";
        default:
            return "__reduce_*_sync";
    }
}

// Lanes of warp w that exist in this block and have not exited.
unsigned live_lanes(const Block& b, unsigned w) {
    unsigned m = 0;
    for (unsigned l = 0; l < 32; ++l) {
        unsigned i = w * 32 + l;
        if (i < b.count && b.threads[i].state != State::Done) m |= 1u << l;
    }
    return m;
}

// The source lane of a shuffle, as PTX defines it (width splits the warp into segments).
unsigned shuffle_source(int op, unsigned lane, int arg, int width) {
    unsigned segmask = unsigned(32 - width) & 31u;
    unsigned cval = op == kShflUp ? 0u : 31u;
    unsigned b = unsigned(arg) & 31u;
    unsigned maxl = (lane & segmask) | (cval & ~segmask);
    unsigned minl = lane & segmask;
    long j = lane;
    bool ok = true;
    switch (op) {
        case kShflUp:
            j = long(lane) - long(b);
            ok = j >= long(maxl);
            break;
        case kShflDown:
            j = long(lane) + long(b);
            ok = j <= long(maxl);
            break;
        case kShflXor:
            j = long(lane ^ b);
            ok = j <= long(maxl);
            break;
        default:
            j = long(minl | (b & ~segmask));
            ok = j <= long(maxl);
            break;
    }
    if (op == kShflUp || op == kShflDown || op == kShflXor || op == kShflIdx)
        if (arg < 0 || arg > 31) ok = op == kShflIdx ? ok : false;
    return ok ? unsigned(j) : lane;
}

bool same_site(const Thread& a, const Thread& b) {
    return a.line == b.line &&
           (a.file == b.file || (a.file && b.file && !std::strcmp(a.file, b.file)));
}

// Lanes of warp w that exited (existing lanes only: a partial last warp has fewer than 32).
unsigned exited_lanes(const Block& b, unsigned w) {
    unsigned m = 0;
    for (unsigned l = 0; l < 32; ++l) {
        unsigned i = w * 32 + l;
        if (i < b.count && b.threads[i].state == State::Done) m |= 1u << l;
    }
    return m;
}

std::string hex_mask(unsigned mask) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%08x", mask);
    return buf;
}

// A lane named in a collective's mask has exited: the collective waits for it on some GPUs and
// reads garbage from it on others (undefined behaviour), whatever the emulator makes of it.
void report_exited_lanes(const Block& b, const Thread& t, unsigned gone) {
    const Thread& first = b.threads[t.warp * 32 + unsigned(__builtin_ctz(gone))];
    Diagnostic d;
    d.kind = "warp-mask";
    d.severity = "error";
    d.file = t.file ? t.file : "";
    d.line = t.line;
    d.message = std::string(op_name(t.op)) + " with mask " + hex_mask(t.mask) + " names lane" +
                (__builtin_popcount(gone) == 1 ? " " : "s ") + lanes_text(gone) + " of warp " +
                std::to_string(t.warp) + ", which ha" +
                (__builtin_popcount(gone) == 1 ? "s" : "ve") +
                " already exited: every lane named in the mask must reach the call (undefined "
                "behaviour: on a GPU it may hang or read garbage)";
    d.detail = thread_name(first) + " of block " + block_name(b.idx) + " exited" +
               (first.last_pc ? " after its access at " + where_pc(first.last_pc) : "") +
               "; keep every lane alive until the collective (no early return before it), or "
               "name only the lanes that call it (e.g. __ballot_sync(0xffffffff, i < n) before "
               "the branch)\n";
    report(d);
}

// Lanes of one warp met in the same collective from two different call sites.
void report_other_site(const Block& b, const Thread& t, const Thread& other) {
    Diagnostic d;
    d.kind = "warp-mask";
    d.severity = "error";
    d.file = t.file ? t.file : "";
    d.line = t.line;
    d.message = std::string(op_name(t.op)) + " with mask " + hex_mask(t.mask) + ": lane " +
                std::to_string(other.lane) + " of warp " + std::to_string(t.warp) +
                ", named in the mask, calls it at " + site(other.file, other.line) +
                " instead: every lane named in the mask must call the same " + op_name(t.op);
    d.detail = thread_name(t) + " of block " + block_name(b.idx) + " waits at " +
               site(t.file, t.line) + ", " + thread_name(other) + " at " +
               site(other.file, other.line) + "\n";
    report(d);
}

// Completes the collective of warp w that `leader` waits in, when every lane it needs is there:
// the lanes at the same call site with the same operation and mask (`merge`: also those at
// another call site, after report_other_site said so).
bool try_complete(Block& b, unsigned w, const Thread& leader, bool merge = false) {
    const unsigned mask = leader.mask;
    const int op = leader.op;
    if (op == kActiveMask) return false;  // completes only when the warp cannot go on
    unsigned need = mask & live_lanes(b, w);
    for (unsigned l = 0; l < 32; ++l) {
        if (!(need >> l & 1)) continue;
        const Thread& t = b.threads[w * 32 + l];
        if (t.state != State::AtWarp || t.mask != mask || t.op != op) return false;
        if (!merge && !same_site(t, leader)) return false;
    }
    if (unsigned gone = mask & exited_lanes(b, w)) report_exited_lanes(b, leader, gone);
    Thread* lanes = &b.threads[w * 32];
    unsigned long long vals[32] = {};
    for (unsigned l = 0; l < 32; ++l)
        if (need >> l & 1) vals[l] = lanes[l].value;
    // Progress for the stall detector: a collective whose values differ from each of the warp's
    // last few (a loop of shuffles computes; a polling loop's ballots see the same values on
    // every turn, also when the loop holds two of them, as "published?" and "inclusive?").
    std::uint64_t h = 0xcbf29ce484222325ull ^ (std::uint64_t(op) << 32 | need);
    for (unsigned l = 0; l < 32; ++l)
        if (need >> l & 1) {
            h = (h ^ vals[l]) * 0x100000001b3ull;
            h = (h ^ unsigned(lanes[l].arg)) * 0x100000001b3ull;
        }
    std::uint64_t* recent = &b.warp_values[std::size_t{w} * Block::kRecentCollectives];
    if (std::find(recent, recent + Block::kRecentCollectives, h) ==
        recent + Block::kRecentCollectives) {
        std::copy_backward(recent, recent + Block::kRecentCollectives - 1,
                           recent + Block::kRecentCollectives);
        recent[0] = h;
        ++rt().progress;
    }
    unsigned ballot = 0;
    for (unsigned l = 0; l < 32; ++l)
        if ((need >> l & 1) && vals[l]) ballot |= 1u << l;
    bool all_equal = true;
    {
        int first = -1;
        for (unsigned l = 0; l < 32; ++l) {
            if (!(need >> l & 1)) continue;
            if (first < 0)
                first = int(l);
            else if (vals[l] != vals[first])
                all_equal = false;
        }
    }
    long long acc_s = 0;
    unsigned long long acc_u = 0;
    bool started = false;
    for (unsigned l = 0; l < 32; ++l) {
        if (!(need >> l & 1)) continue;
        unsigned u = unsigned(vals[l]);
        int s = int(u);
        if (!started) {
            acc_u = u;
            acc_s = s;
            started = true;
            continue;
        }
        switch (op) {
            case kReduceAdd:
                acc_u = unsigned(acc_u + u);
                break;
            case kReduceMin:
                acc_s = s < acc_s ? s : acc_s;
                break;
            case kReduceMax:
                acc_s = s > acc_s ? s : acc_s;
                break;
            case kReduceUMin:
                acc_u = u < acc_u ? u : acc_u;
                break;
            case kReduceUMax:
                acc_u = u > acc_u ? u : acc_u;
                break;
            case kReduceAnd:
                acc_u &= u;
                break;
            case kReduceOr:
                acc_u |= u;
                break;
            case kReduceXor:
                acc_u ^= u;
                break;
            default:
                break;
        }
    }
    for (unsigned l = 0; l < 32; ++l) {
        if (!(need >> l & 1)) continue;
        Thread& t = lanes[l];
        flush_pending(t);
        switch (op) {
            case kSyncWarp:
                t.result = 0;
                break;
            case kShflIdx:
            case kShflUp:
            case kShflDown:
            case kShflXor: {
                unsigned src = shuffle_source(op, l, t.arg, t.width);
                t.result = (need >> src & 1) ? vals[src] : vals[l];
                if (!(need >> src & 1) && !(mask >> src & 1) && opts().check) {
                    Diagnostic d;
                    d.kind = "warp-mask";
                    d.severity = "warning";
                    d.file = t.file ? t.file : "";
                    d.line = t.line;
                    d.message = std::string(op_name(op)) + ": lane " + std::to_string(l) +
                                " reads lane " + std::to_string(src) +
                                ", which is not in the mask: the value is undefined";
                    report(d);
                }
                break;
            }
            case kBallot:
                t.result = ballot;
                break;
            case kAny:
                t.result = ballot != 0;
                break;
            case kAll:
                t.result = ballot == need;
                break;
            case kMatchAny: {
                unsigned m = 0;
                for (unsigned k = 0; k < 32; ++k)
                    if ((need >> k & 1) && vals[k] == vals[l]) m |= 1u << k;
                t.result = m;
                break;
            }
            case kMatchAll:
                t.result = all_equal ? need : 0;
                t.pred = all_equal;
                break;
            case kReduceMin:
            case kReduceMax:
                t.result = unsigned(int(acc_s));
                break;
            default:
                t.result = acc_u;
                break;
        }
        t.state = State::Ready;
    }
    ++b.warp_sync[w];
    return true;
}

// __activemask() of the lanes waiting at `leader`'s call site: completed once no lane of the
// warp can run on (the others took another path and wait elsewhere, or exited), so the mask is
// the lanes that reached this call together, as after a branch on a GPU.
void complete_activemask(Block& b, unsigned w, const Thread& leader) {
    Thread* lanes = &b.threads[w * 32];
    unsigned together = 0;
    for (unsigned l = 0; l < 32 && w * 32 + l < b.count; ++l)
        if (lanes[l].state == State::AtWarp && lanes[l].op == kActiveMask &&
            same_site(lanes[l], leader))
            together |= 1u << l;
    for (unsigned l = 0; l < 32; ++l)
        if (together >> l & 1) {
            lanes[l].result = together;
            lanes[l].state = State::Ready;
        }
}

// No lane of warp w can run: complete what can be completed. An __activemask() completes with
// the lanes at its call site; a collective whose missing lanes wait in the same operation with
// the same mask at another call site is reported, then completed with them. True when a lane
// was released.
bool resolve_stuck_warp(Block& b, unsigned w) {
    Thread* lanes = &b.threads[w * 32];
    const unsigned n = std::min(32u, b.count - w * 32);
    for (unsigned l = 0; l < n; ++l)
        if (lanes[l].state == State::AtWarp && try_complete(b, w, lanes[l])) return true;
    for (unsigned l = 0; l < n; ++l)
        if (lanes[l].state == State::AtWarp && lanes[l].op == kActiveMask) {
            complete_activemask(b, w, lanes[l]);
            return true;
        }
    for (unsigned l = 0; l < n; ++l) {
        const Thread& t = lanes[l];
        if (t.state != State::AtWarp) continue;
        const unsigned need = t.mask & live_lanes(b, w);
        const Thread* other = nullptr;
        bool all_there = true;
        for (unsigned k = 0; k < n; ++k) {
            if (!(need >> k & 1)) continue;
            const Thread& u = lanes[k];
            if (u.state != State::AtWarp || u.mask != t.mask || u.op != t.op) {
                all_there = false;
                break;
            }
            if (!same_site(u, t) && !other) other = &u;
        }
        if (all_there && other) {
            if (opts().check) report_other_site(b, t, *other);
            return try_complete(b, w, t, true);
        }
    }
    return false;
}

void report_deadlock(const Block& b) {
    // Group the waiting threads by where they wait.
    std::map<std::pair<std::string, int>, std::vector<const Thread*>> at;
    for (const Thread& t : b.threads)
        if (t.state == State::AtBarrier || t.state == State::AtWarp)
            at[{t.file ? t.file : "?", t.line}].push_back(&t);
    Diagnostic d;
    d.kind = "deadlock";
    d.severity = "error";
    std::ostringstream detail;
    bool first = true;
    for (auto& [loc, threads] : at) {
        const Thread& t0 = *threads.front();
        if (first) {
            d.file = loc.first;
            d.line = loc.second;
            first = false;
        }
        detail << threads.size() << " thread" << (threads.size() == 1 ? "" : "s") << " ("
               << thread_name(*threads.front());
        if (threads.size() > 1) detail << " .. " << thread_name(*threads.back());
        detail << ") wait at " << site(loc.first.c_str(), loc.second) << " in ";
        if (t0.state == State::AtBarrier) {
            detail << "__syncthreads\n";
        } else {
            unsigned missing = t0.mask & live_lanes(b, t0.warp);
            for (const Thread* t : threads) missing &= ~(1u << t->lane);
            detail << op_name(t0.op) << " (mask 0x" << std::hex << t0.mask << std::dec
                   << "), waiting for lane" << (__builtin_popcount(missing) == 1 ? " " : "s ")
                   << lanes_text(missing) << " of warp " << t0.warp << "\n";
        }
    }
    unsigned exited = b.done;
    if (exited) detail << exited << " thread" << (exited == 1 ? " has" : "s have") << " exited\n";
    d.message = "deadlock in block " + block_name(b.idx) +
                ": no thread can continue and no barrier can complete";
    d.detail = detail.str();
    report(d);
}

// Called when every live thread of the block waits at a __syncthreads.
void release_barrier(Block& b) {
    // Divergent barrier: threads wait at different __syncthreads call sites.
    const Thread* first = nullptr;
    const Thread* other = nullptr;
    int count = 0, pred_and = 1, pred_or = 0;
    for (const Thread& t : b.threads) {
        if (t.state != State::AtBarrier) continue;
        if (!first)
            first = &t;
        else if (!other && (t.line != first->line || std::strcmp(t.file, first->file) != 0))
            other = &t;
        count += t.barrier_pred;
        pred_and &= t.barrier_pred;
        pred_or |= t.barrier_pred;
    }
    if (other) {
        Diagnostic d;
        d.kind = "divergent-barrier";
        d.severity = "error";
        d.file = first->file;
        d.line = first->line;
        d.message = "threads of block " + block_name(b.idx) +
                    " wait at different __syncthreads: a barrier inside a branch that not "
                    "every thread takes (undefined behaviour; on a GPU it may hang)";
        d.detail = thread_name(*first) + " waits at " + site(first->file, first->line) + ", " +
                   thread_name(*other) + " at " + site(other->file, other->line) + "\n";
        report(d);
    }
    if (b.done > 0 && first) {
        // Threads that exited without passing this barrier while others wait at it.
        const Thread* gone = nullptr;
        for (const Thread& t : b.threads)
            if (t.state == State::Done && t.barriers_passed <= first->barriers_passed) {
                gone = &t;
                break;
            }
        if (gone) {
            Diagnostic d;
            d.kind = "skipped-barrier";
            d.severity = "error";
            d.file = first->file;
            d.line = first->line;
            d.message = "some threads of block " + block_name(b.idx) +
                        " exited without reaching this __syncthreads (an early return or a "
                        "barrier inside a branch): every thread of the block must reach it";
            d.detail = thread_name(*gone) + " had exited; " + thread_name(*first) + " waits here\n";
            report(d);
        }
    }
    for (Thread& t : b.threads) {
        if (t.state != State::AtBarrier) continue;
        switch (t.barrier_kind) {
            case 0:
                t.result = unsigned(count);
                break;
            case 1:
                t.result = unsigned(pred_and);
                break;
            case 2:
                t.result = unsigned(pred_or);
                break;
            default:
                break;
        }
        ++t.barriers_passed;
        t.state = State::Ready;
    }
    ++b.epoch;
}

}  // namespace

void start_block(Block& b) {
    Runtime& r = rt();
    b.done = 0;
    b.epoch = 0;
    b.next_warp = 0;
    b.sync_seq = b.store_seq = 0;
    b.serial = ++r.block_serial;
    std::fill(b.warp_sync.begin(), b.warp_sync.end(), 0u);
    b.warp_values.assign(std::size_t{b.warps} * Block::kRecentCollectives, 0u);
    for (unsigned i = 0; i < b.count; ++i) {
        Thread& t = b.threads[i];
        t.state = State::NotStarted;
        t.barriers_passed = 0;
        t.file = nullptr;
        t.line = 0;
        t.store_size = 0;
        t.sampled_size = 0;
        t.poll_at = 0;
    }
    ++r.blocks_run;
}

// Polls of an unchanged word after which a block's slice ends early.
constexpr unsigned kRepollsPerSlice = 16;

SliceEnd run_slice(Block& b, unsigned budget) {
    Runtime& r = rt();
    unsigned used = 0;
    // A block whose threads poll (re-read a volatile or atomic word while nothing changes)
    // gives way before its quantum ends: a waiter does not hold up the block it waits for.
    b.repolls = 0;
    while (true) {
        // Each warp runs until none of its lanes can (a full sweep of the lanes at a time, so
        // lockstep holds), starting where the last slice stopped, so a warp that spins does
        // not starve the others.
        for (unsigned k = 0; k < b.warps && !r.abort; ++k) {
            unsigned w = (b.next_warp + k) % b.warps;
            Thread* lanes = &b.threads[w * 32];
            unsigned n = std::min(32u, b.count - w * 32);
            bool any = true;
            while (any && !r.abort) {
                any = false;
                for (unsigned l = 0; l < n && !r.abort; ++l) {
                    State s = lanes[l].state;
                    if (s == State::Ready || s == State::NotStarted) {
                        resume(lanes[l]);
                        ++used;
                        any = true;
                    }
                }
                // Lanes that exited may let a collective of the others complete.
                if (!any) any = resolve_stuck_warp(b, w);
                if (any && (used >= budget || b.repolls >= kRepollsPerSlice || b.yield_now)) {
                    b.next_warp = (w + 1) % b.warps;
                    return r.abort ? SliceEnd::Aborted : SliceEnd::Preempted;
                }
            }
        }
        if (r.abort) return SliceEnd::Aborted;
        if (b.done == b.count) return SliceEnd::Finished;
        bool all_at_barrier = true;
        for (const Thread& t : b.threads)
            if (t.state != State::Done && t.state != State::AtBarrier) all_at_barrier = false;
        if (all_at_barrier) {
            release_barrier(b);
            if (used >= budget) return SliceEnd::Preempted;
            continue;
        }
        report_deadlock(b);
        r.pending_error = cudaErrorLaunchTimeout;
        r.abort = true;
        return SliceEnd::Aborted;
    }
}

void drop_fibers(Block& b) {
    for (Thread& t : b.threads)
        if (t.stack) {
            give_stack(t.stack);
            t.stack = nullptr;
        }
}

void* parameter_space(std::size_t bytes, std::size_t align) {
    (void)align;
    if (bytes > sizeof g_params) {
        std::fprintf(stderr, "cudalings emulator: kernel parameters of %zu bytes exceed %zu\n",
                     bytes, sizeof g_params);
        std::abort();
    }
    return g_params;
}

bool in_parameter_space(std::uintptr_t a) {
    auto p = reinterpret_cast<std::uintptr_t>(g_params);
    return a - p < sizeof g_params;
}

void yield_to_scheduler() {
    Runtime& r = rt();
    Thread* t = r.current;
    cudalings_emu_switch(&t->sp, r.scheduler_sp);
    if (r.abort) {
        // Never resumed after an abort (the scheduler drops aborted fibers); defensive.
        abort_kernel(r.pending_error);
    }
}

[[noreturn]] void abort_kernel(cudaError_t error) {
    Runtime& r = rt();
    if (r.pending_error == cudaSuccess) r.pending_error = error;
    r.abort = true;
    Thread* t = r.current;
    t->state = State::Done;
    cudalings_emu_switch(&t->sp, r.scheduler_sp);
    __builtin_unreachable();
}

void syncthreads(const char* file, int line) { syncthreads_reduce(-1, 0, file, line); }

int syncthreads_reduce(int kind, int predicate, const char* file, int line) {
    Thread* t = cur();
    if (!t) return 0;
    settle_store(*t);
    flush_pending(*t);
    t->state = State::AtBarrier;
    t->file = file;
    t->line = line;
    t->barrier_kind = kind;
    t->barrier_pred = predicate;
    yield_to_scheduler();
    return int(t->result);
}

unsigned long long warp_op(int op, unsigned mask, unsigned long long value, int bytes, int arg,
                           int width, int* pred, const char* file, int line) {
    Thread* t = cur();
    if (!t) return value;
    if (!(mask >> t->lane & 1)) {
        Diagnostic d;
        d.kind = "warp-mask";
        d.severity = "error";
        d.file = file;
        d.line = line;
        d.message = std::string(op_name(op)) + " called by lane " + std::to_string(t->lane) +
                    " with a mask (0x" +
                    [&] {
                        char buf[16];
                        std::snprintf(buf, sizeof buf, "%08x", mask);
                        return std::string(buf);
                    }() +
                    ") that does not include it: undefined behaviour";
        report(d);
        mask = 1u << t->lane;  // it takes part alone
    }
    if (width <= 0 || width > 32 || (width & (width - 1))) width = 32;
    settle_store(*t);
    t->op = op;
    t->mask = mask;
    t->value = value;
    t->bytes = bytes;
    t->arg = arg;
    t->width = width;
    t->file = file;
    t->line = line;
    t->state = State::AtWarp;
    flush_pending(*t);
    try_complete(*rt().block, t->warp, *t);
    // Even when complete: give the other lanes their turn (lockstep).
    yield_to_scheduler();
    if (pred) *pred = t->pred;
    return t->result;
}

unsigned activemask(const char* file, int line) {
    Thread* t = cur();
    if (!t) return 1;
    return unsigned(warp_op(kActiveMask, 0xffffffffu, 0, 4, 0, 32, nullptr, file, line));
}

void threadfence(int scope) {
    if (!cur()) return;
    if (scope >= 1) on_fence();  // __threadfence_block orders nothing across blocks
}

void device_trap(const char* what, const char* file, int line) {
    Diagnostic d;
    d.kind = "trap";
    d.severity = "error";
    d.file = file;
    d.line = line;
    d.message = std::string(what) + " stopped the kernel";
    report(d);
    if (cur()) abort_kernel(cudaErrorLaunchFailure);
}

namespace {

constexpr std::size_t kDefaultSharedLimit = 48 * 1024;

// A kernel as written at a launch or in cudaFuncSetAttribute, without spaces, casts or `&`.
std::string kernel_key(std::string text) {
    text.erase(
        std::remove_if(text.begin(), text.end(), [](unsigned char c) { return std::isspace(c); }),
        text.end());
    for (bool changed = true; changed;) {
        changed = false;
        for (const char* prefix : {"(constvoid*)", "(void*)", "&", "::"})
            if (text.rfind(prefix, 0) == 0) {
                text.erase(0, std::strlen(prefix));
                changed = true;
            }
        for (const char* cast : {"reinterpret_cast<constvoid*>(", "reinterpret_cast<void*>(",
                                 "static_cast<constvoid*>(", "(", "("})
            if (text.rfind(cast, 0) == 0 && text.back() == ')') {
                text = text.substr(std::strlen(cast), text.size() - std::strlen(cast) - 1);
                changed = true;
                break;
            }
    }
    return text;
}
std::string base_name(const std::string& key) { return key.substr(0, key.find('<')); }

// cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes) calls.
std::map<std::string, int>& opt_ins() {
    static std::map<std::string, int> m;
    return m;
}

}  // namespace

std::size_t shared_memory_limit(const char* kernel) {
    const std::string key = kernel_key(kernel ? kernel : "");
    auto& m = opt_ins();
    auto it = m.find(key);
    if (it != m.end()) return std::max<std::size_t>(kDefaultSharedLimit, std::size_t(it->second));
    // The same kernel spelled differently (k<kBlock> and k<256>): the opt-in of its template.
    for (const auto& [name, bytes] : m)
        if (base_name(name) == base_name(key))
            return std::max<std::size_t>(kDefaultSharedLimit, std::size_t(bytes));
    return kDefaultSharedLimit;
}

cudaError_t func_set_attribute(const char* text, const void* kernel, cudaFuncAttribute attr,
                               int value) {
    (void)kernel;
    if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize) return cudaSuccess;
    if (value < 0 || value > 227 * 1024) {
        rt().last_error = cudaErrorInvalidValue;
        return cudaErrorInvalidValue;
    }
    // The first argument as written (the macro passes all of them as text).
    std::string all = text ? text : "";
    int depth = 0;
    std::size_t end = all.size();
    for (std::size_t i = 0; i < all.size(); ++i) {
        char c = all[i];
        if (c == '(' || c == '<' || c == '[') ++depth;
        if (c == ')' || c == '>' || c == ']') --depth;
        if (c == ',' && depth == 0) {
            end = i;
            break;
        }
    }
    opt_ins()[kernel_key(all.substr(0, end))] = value;
    return cudaSuccess;
}

void unsupported(const char* what, const char* file, int line) {
    Diagnostic d;
    d.kind = "unsupported";
    d.severity = "error";
    d.file = file ? file : "";
    d.line = line;
    d.message = std::string("the emulator cannot run this: ") + what;
    report(d);
    if (cur()) abort_kernel(cudaErrorNotSupported);
    rt().last_error = cudaErrorNotSupported;
}

// A failed assert() in a kernel: the GPU stops the kernel and the next synchronizing call
// returns cudaErrorAssert. glibc's assert calls __assert_fail; the emulator's library comes
// before libc, so its __assert_fail sees every assert, and hands the host's to glibc.
extern "C" CUDALINGS_EMU_API void __assert_fail(const char* expression, const char* file,
                                                unsigned int line, const char* function) noexcept {
    if (Thread* t = cur()) {
        Diagnostic d;
        d.kind = "trap";
        d.severity = "error";
        d.file = file ? file : "";
        d.line = int(line);
        d.message = std::string("assert(") + (expression ? expression : "") + ") failed in " +
                    thread_name(*t) + " of block " + block_name(rt().block->idx) +
                    ": the kernel stops (device-side assert)";
        report(d);
        abort_kernel(cudaErrorAssert);
    }
    using Real = void (*)(const char*, const char*, unsigned int, const char*);
    if (auto real = reinterpret_cast<Real>(dlsym(RTLD_NEXT, "__assert_fail")))
        real(expression, file, line, function);
    std::abort();
}

void launch(const LaunchSite& site, const LaunchConfig& c, KernelBody body, void* closure,
            const void* const* pointer_args, int pointer_count) {
    Runtime& r = rt();
    opts();
    ++r.launches;
    auto fail = [&](cudaError_t e, const std::string& why) {
        r.last_error = e;
        Diagnostic d;
        d.kind = "launch";
        // The GPU refuses the launch too: the learner's code sees the error (an info, not a
        // finding of its own); the report names the line.
        d.severity = "info";
        d.file = site.file;
        d.line = site.line;
        d.message = "the launch of " + std::string(site.kernel) + " failed: " + why;
        report(d);
    };
    unsigned long long threads = 1ull * c.block.x * c.block.y * c.block.z;
    if (r.in_kernel) {
        fail(cudaErrorNotSupported,
             "a kernel launched from a kernel (dynamic parallelism) is not emulated");
        return;
    }
    if (c.block.x == 0 || c.block.y == 0 || c.block.z == 0 || c.grid.x == 0 || c.grid.y == 0 ||
        c.grid.z == 0) {
        fail(cudaErrorInvalidConfiguration, "a grid or block dimension is 0");
        return;
    }
    if (threads > 1024 || c.block.x > 1024 || c.block.y > 1024 || c.block.z > 64) {
        fail(cudaErrorInvalidConfiguration,
             "a block of " + std::to_string(threads) + " threads (the limit is 1024)");
        return;
    }
    if (c.grid.y > 65535 || c.grid.z > 65535 || c.grid.x > 2147483647u) {
        fail(cudaErrorInvalidConfiguration,
             "grid dimensions beyond the limits (x < 2^31, y and z <= 65535)");
        return;
    }
    if (c.shared_bytes > 227 * 1024) {
        fail(cudaErrorInvalidValue, std::to_string(c.shared_bytes) +
                                        " bytes of dynamic shared memory (the limit is 227 KiB)");
        return;
    }
    const std::size_t limit = shared_memory_limit(site.kernel);
    if (c.shared_bytes > limit) {
        fail(cudaErrorInvalidValue,
             std::to_string(c.shared_bytes) + " bytes of dynamic shared memory, more than the " +
                 std::to_string(limit) + " bytes a block may use" +
                 (limit == kDefaultSharedLimit
                      ? " without opting in first: cudaFuncSetAttribute(" +
                            std::string(site.kernel) +
                            ", cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)"
                      : " (the value its cudaFuncSetAttribute opted in to)"));
        return;
    }
    // Pointer arguments that are host memory: the GPU faults when the kernel uses them, so they
    // are reported at the first access (a kernel may never use them).
    // Dry mode: checked, not run, or a sample of the blocks run while memory is as dry mode
    // leaves it (Options::sample_blocks).
    const bool sample = opts().dry && opts().sample_blocks > 0 && r.sample_intact;
    if (opts().dry && opts().sample_blocks > 0 && !r.sample_intact) ++r.sample_skips;
    if (opts().dry && !sample) return;
    DeviceAccess access;  // device memory is open to the kernel (and closed to host code after)
    const std::size_t findings_before = pending_count();
    const cudaError_t pending_before = r.pending_error, last_before = r.last_error;
    const std::uint64_t changes_before = r.global_changes;
    r.body = body;
    r.closure = closure;
    r.site = &site;
    // Kept for the out-of-bounds reports: a wild address is named from the argument below it.
    r.pointer_args.assign(pointer_args, pointer_args + (pointer_count > 0 ? pointer_count : 0));
    r.grid_dim = c.grid;
    r.block_dim = c.block;
    r.dynamic_bytes = c.shared_bytes;
    r.dynamic_name.clear();
    r.dynamic_element = 0;
    r.shared_vars.clear();
    r.shared_next = 0;
    r.static_shared = 0;
    r.shared_limit = limit;
    r.abort = false;
    ++r.launch_serial;
    if (!r.budget_set) r.budget_started = thread_cpu_seconds();
    r.in_kernel = true;
    watch_for_stuck_threads();
    r.kernel_running.store(true);
    if (sample)
        run_sample();
    else
        run_grid();
    r.kernel_running.store(false);
    r.in_kernel = false;
    r.current = nullptr;
    r.block = nullptr;
    on_launch_end();
    if (sample) {
        // Only an out-of-bounds access is a finding of a sample; what else stopped it (a trap, a
        // deadlock, a fault on a pointer read from memory never filled) leaves no error behind.
        if (!keep_pending_since(findings_before, "out-of-bounds")) {
            r.pending_error = pending_before;
            r.last_error = last_before;
        }
        if (r.global_changes != changes_before) r.sample_intact = false;
    }
    r.body = nullptr;
    r.closure = nullptr;
    r.site = nullptr;
    r.pointer_args.clear();
}

}  // namespace cudalings_emu
