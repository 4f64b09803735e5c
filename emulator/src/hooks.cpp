// Memory accesses of emulated kernels. The learner's file is compiled with GCC's ThreadSanitizer
// *instrumentation* (-fsanitize=thread) but linked against these hooks instead of libtsan (as
// the Linux kernel's KCSAN does): every load and store of kernel code calls in here first.
// That gives, with the learner's file and line: out-of-bounds, use-after-free and host-pointer
// accesses, misaligned vector accesses, and (check mode) data races and uninitialised shared
// reads, from a shadow word per 4-byte granule. Each access is also a lockstep point.
#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <unordered_map>

#include "internal.h"

namespace cudalings_emu {

bool in_parameter_space(std::uintptr_t a);

namespace {

// ------------------------------------------------------------------ loaded modules' data
struct Range {
    std::uintptr_t begin, end;
};
std::vector<Range> g_modules;
unsigned long long g_module_adds = ~0ull;

int collect_module(dl_phdr_info* info, size_t, void*) {
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const auto& ph = info->dlpi_phdr[i];
        if (ph.p_type != PT_LOAD) continue;
        std::uintptr_t b = info->dlpi_addr + ph.p_vaddr;
        g_modules.push_back({b, b + ph.p_memsz});
    }
    return 0;
}

int count_adds(dl_phdr_info* info, size_t size, void* out) {
    if (size >= offsetof(dl_phdr_info, dlpi_adds) + sizeof info->dlpi_adds)
        *static_cast<unsigned long long*>(out) = info->dlpi_adds;
    return 1;
}

void refresh_modules() {
    unsigned long long adds = 0;
    dl_iterate_phdr(count_adds, &adds);
    if (adds == g_module_adds && !g_modules.empty()) return;
    g_module_adds = adds;
    g_modules.clear();
    dl_iterate_phdr(collect_module, nullptr);
    std::sort(g_modules.begin(), g_modules.end(),
              [](auto& x, auto& y) { return x.begin < y.begin; });
}

bool in_module(std::uintptr_t a);
}  // namespace
// __device__ and __constant__ variables live in the loaded modules' data.
bool in_loaded_module(std::uintptr_t a) {
    refresh_modules();
    return in_module(a);
}
namespace {
bool in_module(std::uintptr_t a) {
    static Range last{0, 0};
    if (a - last.begin < last.end - last.begin) return true;
    auto it = std::upper_bound(g_modules.begin(), g_modules.end(), a,
                               [](std::uintptr_t v, const Range& r) { return v < r.begin; });
    if (it == g_modules.begin()) return false;
    --it;
    if (a < it->end) {
        last = *it;
        return true;
    }
    return false;
}

// ------------------------------------------------------------------ shadow state
// The blocks of the launch in progress, by serial number (serial - g_launch_first_block):
// their index, and the synchronisation counter at each of their __threadfence()s that
// followed a store (what publishes the block's earlier stores to other blocks).
struct BlockRecord {
    uint3 idx{};
    std::vector<std::uint64_t> fences;
};
std::vector<BlockRecord> g_blocks;
// Plain reads of atomically updated words, by instruction, and the instructions whose read some
// thread then checked with an atomic on the same word (see flush_pending).
std::map<const void*, Diagnostic> g_guesses;
std::set<const void*> g_validated_guesses;
std::uint32_t g_launch_first_block = 1;

BlockRecord* record_of(std::uint32_t serial) {
    std::size_t i = serial - g_launch_first_block;
    return serial >= g_launch_first_block && i < g_blocks.size() ? &g_blocks[i] : nullptr;
}

void set_location(Diagnostic& d, const void* pc) {
    std::string w = where_pc(pc);
    auto colon = w.rfind(':');
    if (colon != std::string::npos) {
        d.file = w.substr(0, colon);
        d.line = std::atoi(w.c_str() + colon + 1);
    } else {
        d.file = w;
    }
}

[[noreturn]] void fatal(const char* kind, const std::string& message, const std::string& detail,
                        const void* pc, cudaError_t error) {
    Diagnostic d;
    d.kind = kind;
    d.severity = "error";
    set_location(d, pc);
    d.message = message;
    d.detail = detail;
    report(d);
    abort_kernel(error);
}

const char* access_word(bool write, Access kind) {
    return kind == Access::Atomic     ? "atomic access to"
           : kind == Access::Volatile ? (write ? "volatile write to" : "volatile read of")
           : write                    ? "write to"
                                      : "read of";
}

// Where an access landed, turned into text only when something is reported.
struct Place {
    bool shared = false;
    std::size_t offset = 0;  // in the block's shared window
    const Allocation* alloc = nullptr;
};
std::string place_text(const Place& p, std::uintptr_t a) {
    if (p.shared) {
        bool inside = true;
        return shared_location(p.offset + (a - (a & ~std::uintptr_t{3})), &inside);
    }
    return global_location(*p.alloc, a);
}

// Are the earlier access `prev` and the running thread's access ordered (not a race)?
// Blocks run concurrently: another block's access is ordered before this one only when both
// are atomic or volatile (relaxed atomics in the PTX memory model), or when it was published:
// its block executed a __threadfence() after it, and this block made an atomic or volatile
// access (the flag or counter it checks) after that fence. The values the emulator computes
// are sequentially consistent; this is where a missing fence between data and flag shows.
bool ordered(const AccessRecord& prev, Access kind, bool shared) {
    Runtime& r = rt();
    const Thread& t = *r.current;
    const Block& b = *r.block;
    if (prev.block == 0) return true;                    // no earlier access
    if (prev.block < g_launch_first_block) return true;  // an earlier launch
    if (prev.kind == Access::Atomic && kind == Access::Atomic) return true;
    if (prev.block == b.serial) {
        if (prev.tid == t.linear) return true;
        if (prev.epoch != b.epoch) return true;  // a __syncthreads in between
        if (prev.tid / 32 == t.warp && prev.wsync != b.warp_sync[t.warp]) return true;
        return false;
    }
    if (shared) return true;  // another block's shared memory (not reachable)
    if (prev.kind != Access::Plain && kind != Access::Plain) return true;
    const BlockRecord* other = record_of(prev.block);
    if (!other) return false;
    auto fence = std::upper_bound(other->fences.begin(), other->fences.end(), prev.seq);
    return fence != other->fences.end() && b.sync_seq > *fence;
}

std::string who_text(const AccessRecord& a) {
    Runtime& r = rt();
    // Named as thread_name() names the current thread: (x,y) in a 2-D block, so that the two
    // threads of a report (and whether they share a warp) can be compared.
    const dim3 d = r.block_dim;
    std::string thread = "thread (" + std::to_string(a.tid % d.x);
    if (d.y > 1 || d.z > 1) thread += "," + std::to_string(a.tid / d.x % d.y);
    if (d.z > 1) thread += "," + std::to_string(a.tid / (d.x * d.y));
    thread += ")";
    if (a.block == r.block->serial) return thread + " of this block";
    if (const BlockRecord* other = record_of(a.block))
        return thread + " of block " + block_name(other->idx);
    return thread + " of another block";
}

AccessRecord record_now(Access kind, const void* pc) {
    Runtime& r = rt();
    const Thread& t = *r.current;
    const Block& b = *r.block;
    AccessRecord a;
    a.block = b.serial;
    a.tid = std::uint16_t(t.linear);
    a.epoch = b.epoch;
    a.wsync = b.warp_sync[t.warp];
    a.kind = kind;
    a.seq = r.sync_counter;
    a.pc = pc;
    return a;
}

// What a race's evidence says to do: first what the two accesses are (RaceShape, from what the
// shadow recorded), then the sentence for that shape. docs/emulator.md ("How race advice is
// chosen") describes the rules.
enum class RaceShape {
    OtherBlock,     // the two threads are in different blocks
    LostUpdate,     // both read the word at the same instruction and (at least one) wrote it back
    SameStatement,  // a read and a write at one line, not the same x += v: a thread reads the
                    // slot another updates in the same round (an in-place scan or tree step)
    InitThenUse,    // a plain store that did not read the word first (an initialisation)
                    // against an atomic or read-modify-write at another line (a use)
    TwoOwners,      // two plain stores, neither of which read the word first
    Unordered,      // a write and a read at different lines with no barrier between them
};

// One race's evidence. `other` is the earlier access, `write`/`kind`/`pc` this one;
// `other_wrote` whether the earlier one was a write; `rmw` whether this thread (a write) had
// read the word first in the same epoch, at `read_pc`; `other_read_pc` the instruction at which
// the other thread read the word before its write (when other.rmw).
struct RaceEvidence {
    const AccessRecord& other;
    bool other_wrote, write;
    Access kind;
    bool rmw;
    const void* pc;
    const void* read_pc;
    const void* other_read_pc;
};

RaceShape classify_race(const RaceEvidence& e) {
    const bool other_block = e.other.block != rt().block->serial;
    const bool same_line = where_pc(e.other.pc) == where_pc(e.pc);
    // An update (x += v): a store by a thread that read the word first at the same line. A read
    // at another line earlier in the epoch (a word read in one round of a loop and overwritten
    // in the next, with the barrier between them missing) is no update of it.
    const auto update = [](bool rmw, const void* read_pc, const void* write_pc) {
        return rmw && read_pc && where_pc(read_pc) == where_pc(write_pc);
    };
    const bool my_update = e.write && update(e.rmw, e.read_pc, e.pc);
    const bool other_update = e.other_wrote && update(e.other.rmw, e.other_read_pc, e.other.pc);
    // A use: an atomic, or an update.
    const bool my_use = e.write && (my_update || e.kind == Access::Atomic);
    const bool other_use = e.other_wrote && (other_update || e.other.kind == Access::Atomic);
    if (e.write && e.other_wrote) {
        if (my_use && other_use) return RaceShape::LostUpdate;
        if (my_use == other_use) return RaceShape::TwoOwners;
        if (other_block) return RaceShape::OtherBlock;
        return same_line ? RaceShape::Unordered : RaceShape::InitThenUse;
    }
    // A write against a read: the writer's own read of the word, and the reader's instruction.
    const void* writer_read =
        e.write ? (my_update ? e.read_pc : nullptr) : (other_update ? e.other_read_pc : nullptr);
    const void* reader = e.write ? e.other.pc : e.pc;
    if (writer_read && writer_read == reader) return RaceShape::LostUpdate;
    if (other_block) return RaceShape::OtherBlock;
    return same_line ? RaceShape::SameStatement : RaceShape::Unordered;
}

std::string race_advice(const RaceEvidence& e, bool shared) {
    const Runtime& r = rt();
    const Thread& t = *r.current;
    const Block& b = *r.block;
    const bool same_block = e.other.block == b.serial;
    const bool same_warp = same_block && e.other.tid / 32 == t.warp;
    const bool one_warp_block = b.count <= 32;
    const bool volatile_pair = e.kind == Access::Volatile || e.other.kind == Access::Volatile;
    const std::string volatile_note = volatile_pair ? " (volatile alone does not order them)" : "";
    // The barrier that orders the threads of this block: within a block of one warp, __syncwarp.
    const std::string barrier = one_warp_block ? "__syncwarp()" : "__syncthreads()";
    switch (classify_race(e)) {
        case RaceShape::OtherBlock:
            return "different blocks run at the same time, in no guaranteed order: a value one "
                   "block writes may be read by another only in a later kernel launch (or after "
                   "the "
                   "writer's __threadfence() and a volatile or atomic flag that the reader checks "
                   "first)";
        case RaceShape::LostUpdate:
            return std::string(
                       "both threads read the element, add to it and write it back: one "
                       "update overwrites the other. ") +
                   (shared && same_block ? "Give each thread its own slot and combine them after "
                                           "a __syncthreads(), or use atomicAdd"
                                         : "Use atomicAdd for a value several threads add to");
        case RaceShape::SameStatement:
            return "one thread reads the element in the statement where another thread writes it: "
                   "a read of one round against a write of the same or the next round (an "
                   "in-place update that reads another thread's slot), not a lost update. Use two "
                   "buffers (ping-pong: read one, write the other, swap them after a " +
                   barrier +
                   ") or a barrier between the read and the write (read into a register, " +
                   barrier + ", then write)" + volatile_note;
        case RaceShape::InitThenUse:
            return "one thread initialises the element with a plain store while another thread "
                   "updates it (an atomic or x += v) at another line: a __syncthreads() between "
                   "initialising and using is missing (every thread initialises its share, then "
                   "the barrier, then the updates)";
        case RaceShape::TwoOwners:
            return std::string(
                       "two threads store to the same element: each element should have "
                       "one owner, so check the index arithmetic (the ranges of ") +
                   (same_block ? "two threads" : "two blocks") +
                   " overlap, or a stride is too small)";
        case RaceShape::Unordered:
            break;
    }
    if (!same_warp)
        return "they are in different warps of the block, which __syncwarp() cannot order: a "
               "__syncthreads() between the write and the read is missing" +
               volatile_note;
    if (!one_warp_block)
        return "a __syncthreads() between the write and the read orders them. These two "
               "threads are in one warp, where a __syncwarp() would also do, but only if no "
               "thread of another warp ever touches the data" +
               volatile_note;
    return "they are in one warp, and lanes are not guaranteed to run in lockstep (since "
           "Volta): a __syncwarp() between the read and the write orders them" +
           volatile_note;
}

void race_report(const RaceEvidence& e, bool shared, const std::string& where) {
    const AccessRecord& other = e.other;
    const Runtime& r = rt();
    const Thread& t = *r.current;
    Diagnostic d;
    d.kind = "race";
    d.severity = "error";
    set_location(d, e.pc);
    const bool other_block = other.block != r.block->serial;
    d.message = std::string("data race on ") + (shared ? "shared" : "global") + " memory " + where +
                ": " + access_word(e.write, e.kind) + " it by " + thread_name(t) +
                (other_block ? " of block " + block_name(r.block->idx) : "") + " while " +
                who_text(other) + " " + (e.other_wrote ? "wrote" : "read") + " it at " +
                where_pc(other.pc);
    d.detail = "nothing orders the two accesses: " + race_advice(e, shared) + "\n";
    report(d);
}

// A plain read of a word another thread changed with an atomic: reported later unless this
// thread validates the value with an atomic on the same word (a compare-and-swap loop).
void defer_atomic_race(std::uintptr_t granule, const AccessRecord& other, const void* pc,
                       bool shared, const std::string& where) {
    Thread& t = *rt().current;
    if (t.pending_at && granule == t.pending_end) {
        t.pending_end = granule + 4;  // the next word of the same (8- or 16-byte) read
        return;
    }
    flush_pending(t);
    Diagnostic d;
    d.kind = "race";
    d.severity = "error";
    set_location(d, pc);
    d.message = std::string("data race on ") + (shared ? "shared" : "global") + " memory " + where +
                ": read of it by " + thread_name(t) + " while " + who_text(other) +
                " changed it with an atomic at " + where_pc(other.pc);
    d.detail = std::string(
                   "a plain read of a word that other threads update atomically may see any "
                   "value: read it with an atomic (atomicAdd(p, 0)), or order the two (") +
               (other.block == rt().block->serial ? "__syncthreads()" : "a later kernel launch") +
               "). Reading it plainly is fine only to guess a value that an atomicCAS on the "
               "same word then checks\n";
    t.pending = std::move(d);
    t.pending_at = granule;
    t.pending_end = granule + 4;
    t.pending_pc = pc;
}

void check_race(Shadow& s, std::uintptr_t a, bool write, Access kind, const void* pc,
                const Place& place) {
    const bool shared = place.shared;
    auto where_text = [&] { return place_text(place, a); };
    Runtime& r = rt();
    Thread& t = *r.current;
    const Block& b = *r.block;
    const AccessRecord me = record_now(kind, pc);
    // A compare-and-swap loop validates its plain read's instruction whenever a thread reads
    // and then checks the word, also when that read was ordered (the first thread to reach the
    // loop reads the initial value): another thread's racy read at the same line that then left
    // the loop without a CAS (its value lost the comparison) was the same loop's guess. Without
    // this, the verdict hung on which thread's read raced, which depends on the schedule.
    if (kind == Access::Atomic && write && t.watch_pc && a == t.watch_at)
        g_validated_guesses.insert(t.watch_pc);
    if (!write && kind == Access::Plain) {
        t.watch_at = a;
        t.watch_pc = pc;
    }
    if (t.pending_at && a >= t.pending_at && a < t.pending_end) {
        // The compare-and-swap that checks the value read: the read was a guess, not a race.
        if (kind == Access::Atomic) {
            t.pending_at = 0;
            g_validated_guesses.insert(t.pending_pc);
        } else if (write) {
            flush_pending(t);
        }
    }
    if (shared && !write && kind != Access::Atomic && s.write.block != b.serial) {
        Diagnostic d;
        d.kind = "uninitialised-shared";
        d.severity = "error";
        set_location(d, pc);
        d.message = "read of shared memory " + where_text() +
                    " that no thread of this block has written: it holds garbage (0xFF bytes "
                    "here, so a float reads as NaN)";
        d.detail = "by " + thread_name(t) + " in block " + block_name(b.idx) + "\n";
        report(d);
    }
    // Did this thread read the word first (x += v)? Its own record, or (when more readers
    // evicted it) its last read; and at which instruction.
    bool read_it = write && t.last_read == a;
    const void* read_pc = read_it ? t.last_read_pc : nullptr;
    if (write)
        for (const AccessRecord& rd : s.reads)
            if (rd.block && rd.block == me.block && rd.tid == me.tid && rd.epoch == me.epoch) {
                read_it = true;
                read_pc = rd.pc;
            }
    // This access against the last write.
    const AccessRecord& w = s.write;
    if (!ordered(w, kind, shared)) {
        if (!write && w.kind == Access::Atomic && kind == Access::Plain)
            defer_atomic_race(a, w, pc, shared, where_text());
        else if (write || w.kind != Access::Atomic || kind != Access::Atomic)
            race_report({w, true, write, kind, read_it, pc, read_pc, s.write_read_pc}, shared,
                        where_text());
    } else if (!write && kind == Access::Plain && w.kind == Access::Atomic &&
               s.earlier_atomic.block && !ordered(s.earlier_atomic, kind, shared)) {
        // Ordered after the last atomic (this thread's own), not after another thread's.
        defer_atomic_race(a, s.earlier_atomic, pc, shared, where_text());
    }
    if (write) {
        // A write against every read since the last write, and it becomes the last write.
        bool reported = false;
        for (AccessRecord& rd : s.reads) {
            if (!rd.block) continue;
            if (!reported && kind != Access::Atomic && !ordered(rd, kind, shared)) {
                race_report({rd, false, true, kind, read_it, pc, read_pc, nullptr}, shared,
                            where_text());
                reported = true;
            }
        }
        // An atomic over another thread's atomic: keep that one too (see Shadow).
        if (kind == Access::Atomic && s.write.kind == Access::Atomic && s.write.block &&
            !(s.write.block == me.block && s.write.tid == me.tid))
            s.earlier_atomic = s.write;
        else if (kind != Access::Atomic)
            s.earlier_atomic.block = 0;
        s.write = me;
        s.write.rmw = read_it;
        s.write_read_pc = read_pc;
        for (AccessRecord& rd : s.reads) rd.block = 0;
        s.next_evict = 0;
    } else {
        t.last_read = a;
        t.last_read_pc = pc;
        // A read joins the reads: it replaces this thread's earlier read, and the reads ordered
        // before it (they are ordered before anything ordered after it too).
        AccessRecord* slot = nullptr;
        for (AccessRecord& rd : s.reads) {
            if (rd.block == me.block && rd.tid == me.tid) {
                slot = &rd;
                break;
            }
        }
        if (!slot)
            for (AccessRecord& rd : s.reads)
                if (!rd.block || ordered(rd, kind, shared)) {
                    slot = &rd;
                    break;
                }
        if (!slot) {
            // More unordered readers than slots: forget one (a race may then go unseen).
            slot = &s.reads[s.next_evict];
            s.next_evict = std::uint8_t((s.next_evict + 1) % kShadowReaders);
        }
        *slot = me;
    }
}

struct LineMetric {
    bool shared = false, write = false;
    unsigned size = 0;
    std::uint64_t requests = 0;
    double sum = 0, ideal = 0;  // wavefronts (shared) or sectors (global)
    unsigned worst = 0;
    // Warp execution efficiency at this instruction: lanes that executed it, out of the lanes
    // their warps had (a partial last warp has fewer than 32).
    double lanes = 0, lane_slots = 0;
};
std::map<const void*, LineMetric> g_metrics;

// Explain mode: the access joins its warp's request (per block: blocks run interleaved).
void record_request(std::uintptr_t a, unsigned size, bool write, const Place& place,
                    const void* pc) {
    Runtime& r = rt();
    const Thread& t = *r.current;
    Block& b = *r.block;
    if (b.exec_count.size() < b.count) b.exec_count.resize(b.count);
    const std::uint64_t interval = std::uint64_t(b.epoch) << 32 | b.warp_sync[t.warp];
    ExecCount& c = b.exec_count[t.linear][pc];
    if (c.interval != interval) c = ExecCount{interval, 0};
    Request& q = b.requests[{t.warp, pc, interval, c.k++}];
    if (q.addrs.empty()) {
        q.alloc = place.alloc;
        q.shared_offset = place.offset;
    }
    q.shared = place.shared;
    q.write = write;
    q.size = size;
    q.addrs.push_back(a);
    q.lanes.push_back(std::uint8_t(t.lane));
}

// A shared request's wavefronts: lanes are served in phases of 128 bytes; within a phase,
// distinct 4-byte words in one of the 32 banks are serialised. `degree` gets the most distinct
// words one bank held in one phase (1: no conflict).
unsigned shared_wavefronts(const Request& q, unsigned* degree) {
    unsigned per_phase = std::max(1u, 128u / std::max(4u, q.size));
    unsigned wavefronts = 0;
    *degree = 0;
    for (std::size_t p = 0; p < q.addrs.size(); p += per_phase) {
        std::map<unsigned, std::vector<std::uintptr_t>> banks;
        for (std::size_t i = p; i < std::min(q.addrs.size(), p + per_phase); ++i)
            for (unsigned b = 0; b < std::max(1u, q.size / 4); ++b) {
                std::uintptr_t word = q.addrs[i] / 4 + b;
                auto& v = banks[unsigned(word % 32)];
                if (std::find(v.begin(), v.end(), word) == v.end()) v.push_back(word);
            }
        unsigned most = 0;
        for (auto& [bank, words] : banks) most = std::max<unsigned>(most, unsigned(words.size()));
        wavefronts += most;
        *degree = std::max(*degree, most);
    }
    return wavefronts;
}
unsigned ideal_wavefronts(const Request& q) {
    unsigned per_phase = std::max(1u, 128u / std::max(4u, q.size));
    return unsigned((q.addrs.size() + per_phase - 1) / per_phase);
}

// A global request's 32-byte sectors (sector numbers: address / 32), sorted, each once.
std::vector<std::uintptr_t> global_sectors(const Request& q) {
    std::vector<std::uintptr_t> sectors;
    for (auto a : q.addrs)
        for (std::uintptr_t s = a / 32; s <= (a + q.size - 1) / 32; ++s) sectors.push_back(s);
    std::sort(sectors.begin(), sectors.end());
    sectors.erase(std::unique(sectors.begin(), sectors.end()), sectors.end());
    return sectors;
}

// Explain mode's access pictures: for each access line of a launch, one warp's request as it
// was, drawn by the checker (`check --explain`, `report`). The request kept is the one with the
// most active lanes (a whole warp rather than a grid's ragged edge); among those, the worst:
// the most sectors (global) or wavefronts (shared) beyond what the lanes need, so a line that
// is conflicted in one round of a loop shows that round; then the lowest block and warp.
constexpr std::size_t kPicturesPerLaunch = 16;
struct Picture {
    Request request;
    std::uint32_t warp = 0;
    uint3 block{};
    std::size_t excess = 0;  // sectors or wavefronts beyond the ideal
};
std::map<const void*, Picture> g_pictures;

// The block's number in the grid (x fastest), to prefer the lowest whatever order blocks ran in.
std::uint64_t block_number(uint3 b) {
    const dim3 g = rt().grid_dim;
    return b.x + std::uint64_t(g.x) * (b.y + std::uint64_t(g.y) * b.z);
}

void keep_picture(const RequestKey& key, const Request& q, const Block& b, std::size_t excess) {
    auto it = g_pictures.find(key.pc);
    if (it == g_pictures.end()) {
        if (g_pictures.size() >= kPicturesPerLaunch) return;
    } else {
        // Requests of a block arrive here by warp, then by round: on a tie the first one stays.
        const Picture& kept = it->second;
        const std::size_t lanes = q.addrs.size(), kept_lanes = kept.request.addrs.size();
        if (lanes != kept_lanes) {
            if (lanes < kept_lanes) return;
        } else if (excess != kept.excess) {
            if (excess < kept.excess) return;
        } else {
            const auto mine = block_number(b.idx), theirs = block_number(kept.block);
            if (mine > theirs || (mine == theirs && key.warp >= kept.warp)) return;
        }
    }
    g_pictures[key.pc] = Picture{q, key.warp, b.idx, excess};
}

void flush_requests(Block& b) {
    const unsigned threads = b.count;
    for (auto& [key, q] : b.requests) {
        LineMetric& m = g_metrics[key.pc];
        unsigned warp_threads = std::min(32u, threads - std::min(threads, key.warp * 32u));
        m.lanes += double(q.addrs.size());
        m.lane_slots += double(std::max(1u, warp_threads));
        m.shared = q.shared;
        m.write = q.write;
        m.size = q.size;
        ++m.requests;
        std::size_t cost = 0, ideal = 0;
        if (q.shared) {
            unsigned degree = 0;
            cost = shared_wavefronts(q, &degree);
            ideal = ideal_wavefronts(q);
        } else {
            cost = global_sectors(q).size();
            ideal = (q.addrs.size() * q.size + 31) / 32;
        }
        m.sum += double(cost);
        m.ideal += double(ideal);
        m.worst = std::max(m.worst, unsigned(cost));
        keep_picture(key, q, b, cost > ideal ? cost - ideal : 0);
    }
    b.requests.clear();
}

// A JSON string (the array names the emulator knows are identifiers, but a learner's
// allocation may be named by any expression).
std::string json_string(const std::string& text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(c));
            out += buf;
        } else {
            out += c;
        }
    }
    return out + "\"";
}

// The array a picture's first lane touched: its name, its first byte, its size and element.
struct ArrayName {
    std::string name;
    std::uintptr_t base = 0;
    std::size_t bytes = 0, element = 0;
};
ArrayName array_of(const Request& q) {
    ArrayName n;
    if (q.shared) {
        const Runtime& r = rt();
        const std::uintptr_t window = q.addrs.front() - q.shared_offset;
        if (q.shared_offset >= kDynamicOffset) {
            n.name = r.dynamic_name.empty() ? "dynamic shared memory" : r.dynamic_name;
            n.base = window + kDynamicOffset;
            n.bytes = r.dynamic_bytes;
            n.element = r.dynamic_element ? r.dynamic_element : 4;
            return n;
        }
        for (const auto& v : r.shared_vars)
            if (q.shared_offset >= v.begin && q.shared_offset < v.end) {
                n.name = v.name;
                n.base = window + v.begin;
                n.bytes = v.end - v.begin;
                n.element = v.element;
                return n;
            }
        n.name = "shared memory";
        n.base = window;
        return n;
    }
    const Allocation& al = *q.alloc;
    n.base = al.user_end ? al.user_begin : al.begin;
    n.bytes = al.user_end ? al.user_end - al.user_begin : al.bytes;
    n.element = al.element;
    n.name = al.name.empty() ? "the " + std::to_string(n.bytes) + "-byte allocation" : al.name;
    return n;
}

// One picture as a diagnostic of kind "access": the message in words, the detail as one JSON
// object (format 1, documented in docs/emulator.md):
//   {"v":1, "space":"global"|"shared", "op":"load"|"store", "bytes":<per lane>,
//    "array":<name>, "array_bytes":<size>, "element":<bytes, 0 unknown>,
//    "block":[x,y,z], "warp":<index in the block>, "active":<lanes>,
//    "offsets":[<byte offset from the array's start, or null for an inactive lane> x32],
//    global: "sectors":[<byte offset of each 32-byte sector touched, ascending>],
//            "lane_sector":[<index in sectors of the lane's first sector, or null> x32],
//            "lines":<128-byte lines touched>, "ideal_sectors":<sectors if coalesced>
//    shared: "banks":[<the lane's first bank, or null> x32], "degree":<most distinct words in
//            one bank>, "wavefronts":<n>, "ideal_wavefronts":<n>}
Diagnostic picture_diagnostic(const void* pc, const Picture& p) {
    const Request& q = p.request;
    const ArrayName array = array_of(q);
    std::vector<long long> offset(32, 0);
    std::vector<bool> active(32, false);
    std::vector<std::uintptr_t> first(32, 0);
    for (std::size_t i = 0; i < q.addrs.size(); ++i) {
        unsigned lane = q.lanes[i] % 32;
        if (active[lane]) continue;  // (one address per lane and request)
        active[lane] = true;
        first[lane] = q.addrs[i];
        offset[lane] = static_cast<long long>(q.addrs[i]) - static_cast<long long>(array.base);
    }
    auto per_lane = [&](auto value) {
        std::string s = "[";
        for (unsigned lane = 0; lane < 32; ++lane) {
            if (lane) s += ",";
            s += active[lane] ? std::to_string(value(lane)) : "null";
        }
        return s + "]";
    };
    std::string j = std::string("{\"v\":1,\"space\":\"") + (q.shared ? "shared" : "global") +
                    "\",\"op\":\"" + (q.write ? "store" : "load") +
                    "\",\"bytes\":" + std::to_string(q.size) +
                    ",\"array\":" + json_string(array.name) +
                    ",\"array_bytes\":" + std::to_string(array.bytes) +
                    ",\"element\":" + std::to_string(array.element) + ",\"block\":[" +
                    std::to_string(p.block.x) + "," + std::to_string(p.block.y) + "," +
                    std::to_string(p.block.z) + "],\"warp\":" + std::to_string(p.warp) +
                    ",\"active\":" + std::to_string(q.addrs.size()) +
                    ",\"offsets\":" + per_lane([&](unsigned l) { return offset[l]; });
    Diagnostic d;
    d.kind = "access";
    d.severity = "info";
    set_location(d, pc);
    char buf[300];
    const char* op = q.write ? "store" : "load";
    if (q.shared) {
        unsigned degree = 0;
        const unsigned wavefronts = shared_wavefronts(q, &degree);
        const unsigned ideal = ideal_wavefronts(q);
        j += ",\"banks\":" + per_lane([&](unsigned l) { return (first[l] / 4) % 32; }) +
             ",\"degree\":" + std::to_string(degree) +
             ",\"wavefronts\":" + std::to_string(wavefronts) +
             ",\"ideal_wavefronts\":" + std::to_string(ideal);
        if (degree > 1)
            std::snprintf(buf, sizeof buf,
                          "shared %s of %s, %zu lanes: %u-way bank conflict (%u wavefronts, %u "
                          "without conflicts)",
                          op, array.name.c_str(), q.addrs.size(), degree, wavefronts, ideal);
        else
            std::snprintf(buf, sizeof buf, "shared %s of %s, %zu lanes: no bank conflict", op,
                          array.name.c_str(), q.addrs.size());
    } else {
        const auto sectors = global_sectors(q);
        std::set<std::uintptr_t> lines;
        for (auto s : sectors) lines.insert(s / 4);
        const std::size_t ideal = (q.addrs.size() * q.size + 31) / 32;
        auto sector_offset = [&](std::uintptr_t s) {
            return static_cast<long long>(s * 32) - static_cast<long long>(array.base);
        };
        std::string list = "[";
        for (std::size_t i = 0; i < sectors.size(); ++i)
            list += (i ? "," : "") + std::to_string(sector_offset(sectors[i]));
        j += ",\"sectors\":" + list + "],\"lane_sector\":" + per_lane([&](unsigned l) {
                 return std::lower_bound(sectors.begin(), sectors.end(), first[l] / 32) -
                        sectors.begin();
             }) +
             ",\"lines\":" + std::to_string(lines.size()) +
             ",\"ideal_sectors\":" + std::to_string(ideal);
        std::snprintf(buf, sizeof buf,
                      "global %s of %s, %zu lanes: %zu sectors of 32 bytes in %zu lines of 128 "
                      "(%zu if coalesced)",
                      op, array.name.c_str(), q.addrs.size(), sectors.size(), lines.size(), ideal);
    }
    d.message = buf;
    d.detail = j + "}";
    return d;
}

}  // namespace

void on_block_start(Block& b) {
    b.shared_shadow.clear();
    if (opts().explain)
        for (auto& m : b.exec_count) m.clear();
    std::size_t i = b.serial - g_launch_first_block;
    if (g_blocks.size() <= i) g_blocks.resize(i + 1);
    g_blocks[i].idx = b.idx;
    g_blocks[i].fences.clear();
}

void on_block_end(Block& b) {
    coverage_block_end(b);
    if (opts().explain) flush_requests(b);
}

void on_fence() {
    Runtime& r = rt();
    Block& b = *r.block;
    BlockRecord* rec = record_of(b.serial);
    if (!rec) return;
    // Only a fence after a new store publishes anything new.
    if (rec->fences.empty() || b.store_seq >= rec->fences.back())
        rec->fences.push_back(++r.sync_counter);
}

void on_launch_end() {
    coverage_launch_end();
    for (auto& [pc, d] : g_guesses)
        if (!g_validated_guesses.count(pc)) report(std::move(d));
    g_guesses.clear();  // (an instruction once validated stays so: the same code, checked)
    g_blocks.clear();
    g_launch_first_block = rt().block_serial + 1;
    if (!opts().explain) return;
    double all_lanes = 0, all_slots = 0, lowest = 2;
    const void* lowest_pc = nullptr;
    for (auto& [pc, m] : g_metrics) {
        if (m.requests == 0) continue;
        all_lanes += m.lanes;
        all_slots += m.lane_slots;
        double eff = m.lane_slots > 0 ? m.lanes / m.lane_slots : 1;
        if (eff < lowest) lowest = eff, lowest_pc = pc;
        Diagnostic d;
        d.kind = "metric";
        d.severity = "info";
        set_location(d, pc);
        char buf[400];
        double avg = m.sum / double(m.requests), ideal = m.ideal / double(m.requests);
        if (m.shared) {
            std::snprintf(buf, sizeof buf,
                          "shared %s: %.1f-way bank conflicts (%.2f wavefronts per request, "
                          "%.2f without conflicts; worst %u)",
                          m.write ? "store" : "load", ideal > 0 ? avg / ideal : 0.0, avg, ideal,
                          m.worst);
        } else {
            std::snprintf(buf, sizeof buf,
                          "global %s: %.2f sectors per request (%.2f if coalesced; %u bytes per "
                          "thread)",
                          m.write ? "store" : "load", avg, ideal, m.size);
        }
        d.message = buf;
        if (m.lane_slots > 0) {
            std::snprintf(buf, sizeof buf, "; %.0f%% of the warp's lanes active",
                          100.0 * m.lanes / m.lane_slots);
            d.message += buf;
        }
        report(d);
    }
    // One picture per access line (the first kPicturesPerLaunch lines the launch's blocks ended
    // with).
    for (const auto& [pc, p] : g_pictures) report(picture_diagnostic(pc, p));
    g_pictures.clear();
    if (all_slots > 0 && lowest_pc) {
        // One line per launch: warp execution efficiency over the memory instructions (the
        // instructions the emulator observes), placed at the most divergent one.
        Diagnostic d;
        d.kind = "metric";
        d.severity = "info";
        set_location(d, lowest_pc);
        char buf[300];
        std::snprintf(buf, sizeof buf,
                      "warp execution efficiency %.0f%% over the kernel's memory instructions "
                      "(lowest here: %.0f%% of the lanes active)",
                      100.0 * all_lanes / all_slots, 100.0 * lowest);
        d.message = buf;
        report(d);
    }
    g_metrics.clear();
}

namespace {

// The store about to happen: progress when it changes memory (settle_store compares).
void remember_store(Thread& t, std::uintptr_t a, unsigned size, bool global) {
    if (size > sizeof t.store_before) {
        ++rt().progress;
        if (global) ++rt().global_changes;
        return;
    }
    t.store_at = a;
    t.store_size = size;
    t.store_global = global;
    std::memcpy(t.store_before, reinterpret_cast<const void*>(a), size);
}

}  // namespace

namespace {

std::uint32_t g_poison_bits = 0;
bool g_has_poison = false;

[[noreturn]] void misaligned(std::uintptr_t a, unsigned size, bool write, Access kind,
                             const void* pc) {
    fatal("misaligned",
          std::string(access_word(write, kind)) + " " + std::to_string(size) +
              " bytes at an address that is not a multiple of " + std::to_string(size) + " (" +
              hex(a) + ", " + std::to_string(a % size) + " bytes past a multiple)",
          "a " + std::to_string(size) +
              "-byte access (a float4 is 16) needs an address that is a multiple of " +
              std::to_string(size) +
              " (a GPU stops with cudaErrorMisalignedAddress): vector loads and stores may "
              "start only where the element index is a multiple of " +
              std::to_string(size / 4 ? size / 4 : 1) +
              "; handle the elements before and after such a range one by one\n",
          pc, cudaErrorMisalignedAddress);
}

}  // namespace

std::uint32_t poison_bits() { return g_has_poison ? g_poison_bits : 0; }

void cudalings_emu_set_poison(std::uint32_t bits) {
    g_poison_bits = bits;
    g_has_poison = bits != 0;  // 0: none
}

// A kernel's store of the checker's poison pattern: what a GPU would have stored is the
// canonical NaN (its arithmetic never keeps a NaN's payload; x86 does), so the element reads as
// a NaN the kernel wrote, not as one it never wrote.
void canonicalize_poison(std::uintptr_t a, unsigned size) {
    if (!g_has_poison || size < 4) return;
    for (std::uintptr_t w = (a + 3) & ~std::uintptr_t{3}; w + 4 <= a + size; w += 4) {
        auto* p = reinterpret_cast<std::uint32_t*>(w);
        if (*p == g_poison_bits) *p = 0x7fffffffu;
    }
}

void flush_pending(Thread& t) {
    if (!t.pending_at) return;
    t.pending_at = 0;
    g_guesses.try_emplace(t.pending_pc, std::move(t.pending));
    t.pending = Diagnostic{};
}

void on_access(std::uintptr_t a, unsigned size, bool write, Access kind, const void* pc,
               bool check_alignment) {
    Runtime& r = rt();
    Thread* t = r.current;
    if (!t) return;
    if (t->stack && a - reinterpret_cast<std::uintptr_t>(t->stack->base) < t->stack->size) return;
    settle_store(*t);
    t->last_pc = pc;
    Block& b = *r.block;
    const bool atomic = kind == Access::Atomic;
    if (in_parameter_space(a)) return;  // kernel parameters
    // A GPU checks the alignment first: a misaligned vector access is misaligned wherever it
    // points.
    if (check_alignment && (size == 2 || size == 4 || size == 8 || size == 16) && (a % size) != 0)
        misaligned(a, size, write, kind, pc);
    // Shared memory: the block's window (its __shared__ variables and dynamic shared memory).
    Place place;
    const auto window = reinterpret_cast<std::uintptr_t>(b.window);
    if (a - window < kSharedWindow) {
        place.shared = true;
        place.offset = a - window;
        if (!shared_inside(place.offset, size)) {
            bool inside = true;
            std::string past;
            std::string where = shared_location(place.offset, &inside, &past);
            if (inside) shared_location(place.offset + size - 1, &inside, &past);
            fatal("out-of-bounds",
                  std::string(access_word(write, kind)) + " " + where +
                      ": out of bounds of shared memory (" + past + ")",
                  "by " + thread_name(*t) + " in block " + block_name(b.idx) +
                      " (on a GPU it reads or overwrites another variable, or faults)\n",
                  pc, cudaErrorIllegalAddress);
        }
    }
    Allocation* alloc = nullptr;
    if (!place.shared) {
        if (in_arena(a)) {
            Allocation* nearest = nullptr;
            alloc = find_allocation(a, &nearest);
            if (!alloc || alloc->freed || a + size > alloc->begin + alloc->bytes) {
                Allocation* z = alloc ? alloc : nearest;
                std::string what = std::string(access_word(write, kind)) + " " +
                                   std::to_string(size) + " bytes at " + hex(a);
                if (z && z->freed && a >= z->begin && a < z->begin + z->bytes)
                    fatal("use-after-free",
                          what + ": use after free, " + global_location(*z, a) + " of an array",
                          "allocated at " + z->where + ", freed at " + z->freed_where + "\n", pc,
                          cudaErrorIllegalAddress);
                // Between two arrays: the nearer one is the likelier target (an index that went
                // negative reaches below the next array, rather than past the previous one).
                // Only an array it is near: an address gigabytes away from every allocation (an
                // index read from memory nobody wrote) is wild, not an overrun of the last one.
                Allocation* after = allocation_after(a);
                if (after && (after->freed || !near_allocation(*after, after->begin - a)))
                    after = nullptr;
                if (z && !(a >= z->begin && a < z->begin + z->bytes) &&
                    !near_allocation(*z, a + size - (z->begin + z->bytes)))
                    z = nullptr;
                if (after && (!z || after->begin - a < a + size - (z->begin + z->bytes)))
                    fatal("out-of-bounds",
                          std::string(access_word(write, kind)) + " " + location_before(*after, a),
                          "by " + thread_name(*t) + " in block " + block_name(b.idx) + "\n", pc,
                          cudaErrorIllegalAddress);
                if (!z) {
                    std::string detail =
                        "by " + thread_name(*t) + " in block " + block_name(b.idx) + "\n";
                    const std::string wild = wild_address_text(a, size, &detail);
                    fatal("out-of-bounds", what + ": " + wild, detail, pc, cudaErrorIllegalAddress);
                }
                {
                    const std::string made =
                        z->checker || z->host_named ? "" : "; allocated at " + z->where;
                    fatal("out-of-bounds",
                          std::string(access_word(write, kind)) + " " + global_location(*z, a) +
                              ": out of bounds (" +
                              std::to_string(a + size - (z->begin + z->bytes)) +
                              " bytes past the end of its " + std::to_string(z->bytes) +
                              "-byte allocation)",
                          "by " + thread_name(*t) + " in block " + block_name(b.idx) + made + "\n",
                          pc, cudaErrorIllegalAddress);
                }
            }
            place.alloc = alloc;
            if (alloc->sampled) sampled_access(*alloc, a, size, write, t);
            if (alloc->user_end && (a < alloc->user_begin || a + size > alloc->user_end)) {
                std::size_t n = alloc->user_end - alloc->user_begin;
                std::string where =
                    a < alloc->user_begin
                        ? std::to_string(alloc->user_begin - a) + " bytes before its start"
                        : std::to_string(a + size - alloc->user_end) + " bytes past its end";
                // Not fatal: the access lands in the checker's guard zone, as it would on a GPU
                // (the same verdict there and here), and this report names the line.
                Diagnostic d;
                d.kind = "out-of-bounds";
                d.severity = "error";
                set_location(d, pc);
                d.message = std::string(access_word(write, kind)) + " " +
                            global_location(*alloc, a) + ": out of bounds of a " +
                            std::to_string(n) + "-byte array (" + where + ")";
                d.detail = "by " + thread_name(*t) + " in block " + block_name(b.idx) + "\n";
                report(d);
            }
        } else {
            refresh_modules();
            if (a < 65536 || !in_module(a)) {
                // A host pointer argument is the likely cause only when the kernel was given
                // one: otherwise the address was computed (a wild index) or read from memory.
                bool host_argument = false;
                for (const void* p : r.pointer_args) {
                    auto v = reinterpret_cast<std::uintptr_t>(p);
                    host_argument = host_argument || (p && !in_arena(v) && !in_module(v));
                }
                std::string detail =
                    "by " + thread_name(*t) + " in block " + block_name(b.idx) + "\n";
                std::string what =
                    a < 65536 ? ": a null (or nearly null) pointer"
                    : host_argument
                        ? ": host memory, not device memory — a host pointer was passed to the "
                          "kernel (copy the data with cudaMemcpy and pass the device pointer)"
                        : ": " + wild_address_text(a, size, &detail);
                fatal("host-pointer",
                      std::string(access_word(write, kind)) + " address " + hex(a) + what, detail,
                      pc, cudaErrorIllegalAddress);
            }
            // __device__ / __constant__ variables, tables: no shadow, and a lockstep point only
            // for the volatile and atomic accesses a spin-wait polls.
            if (kind == Access::Plain) {
                if (write) remember_store(*t, a, size, true);
                return;
            }
        }
    }
    const bool shared = place.shared;
    const Options& o = opts();
    const bool global_strong = kind != Access::Plain && !shared;
    if (o.check && (shared || alloc)) {
        std::uintptr_t g = a & ~std::uintptr_t{3};
        std::uintptr_t last = (a + size - 1) & ~std::uintptr_t{3};
        for (; g <= last; g += 4) {
            Shadow* s;
            if (shared) {
                s = &b.shared_shadow[g];
            } else {
                if (!alloc->shadow) alloc->shadow = new ShadowPages((alloc->bytes + 3) / 4);
                s = &alloc->shadow->at((g - alloc->begin) / 4);
            }
            Place at = place;
            if (shared) at.offset = g - window;
            check_race(*s, g, write, kind, pc, at);
        }
    }
    if (write && !shared) b.store_seq = r.sync_counter;  // for on_fence
    if (write && r.watch_writes && !shared) note_polled_store(a, size, pc);
    if (r.watch_reads && (!write || atomic)) note_read(a, size, pc, shared);
    if (o.explain && (shared || alloc)) record_request(a, size, write, place, pc);
    // Lockstep; and a spin-wait on a volatile or atomic word lets the other threads and
    // blocks run even without lockstep.
    if (o.lockstep || kind != Access::Plain) yield_to_scheduler();
    // The bytes a store is about to overwrite (atomics: the hook compares).
    if (write && !atomic) remember_store(*t, a, size, !shared);
    // The block's last atomic or volatile access, counted when it really happens (after the
    // yield: a flag read here sees the stores made while this thread waited its turn), and
    // after its own check (an access does not order itself).
    if (global_strong) {
        r.block->sync_seq = ++r.sync_counter;
        if (!write || atomic) {
            // The same word again, and nothing changed since: a poll (the slice may end).
            if (t->poll_at == a && t->poll_progress == r.progress) ++r.block->repolls;
            t->poll_at = a;
            t->poll_progress = r.progress;
        }
    }
}

}  // namespace cudalings_emu

// ------------------------------------------------------------------ the TSan ABI
using cudalings_emu::on_access;
namespace {
constexpr cudalings_emu::Access kPlain = cudalings_emu::Access::Plain;
constexpr cudalings_emu::Access kVolatile = cudalings_emu::Access::Volatile;
constexpr cudalings_emu::Access kAtomic = cudalings_emu::Access::Atomic;
// An atomic operation that changed memory is progress (the stall detector).
inline void atomic_result(const volatile void* a, bool changed) {
    if (!changed) return;
    cudalings_emu::Runtime& r = cudalings_emu::rt();
    ++r.progress;
    const auto window = reinterpret_cast<std::uintptr_t>(r.block ? r.block->window : nullptr);
    if (!window || reinterpret_cast<std::uintptr_t>(a) - window >= cudalings_emu::kSharedWindow) {
        ++r.global_changes;
        if (r.block && r.block->hold_armed) r.block->yield_now = true;  // the held-back schedule
    }
}
// An atomic stored a value: the poison pattern becomes the GPU's canonical NaN (see
// canonicalize_poison).
inline void written(const volatile void* a, int bits) {
    if (bits == 32 && cudalings_emu::rt().current)
        cudalings_emu::canonicalize_poison(reinterpret_cast<std::uintptr_t>(a), 4);
}
}  // namespace
#define CUDALINGS_PC __builtin_return_address(0)
#define CUDALINGS_HOOK(n)                                                                          \
    extern "C" CUDALINGS_EMU_API void __tsan_read##n(void* p) {                                    \
        if (cudalings_emu::rt().current)                                                           \
            on_access(reinterpret_cast<std::uintptr_t>(p), n, false, kPlain, CUDALINGS_PC);        \
    }                                                                                              \
    extern "C" CUDALINGS_EMU_API void __tsan_write##n(void* p) {                                   \
        if (cudalings_emu::rt().current)                                                           \
            on_access(reinterpret_cast<std::uintptr_t>(p), n, true, kPlain, CUDALINGS_PC);         \
    }                                                                                              \
    extern "C" CUDALINGS_EMU_API void __tsan_unaligned_read##n(void* p) {                          \
        if (cudalings_emu::rt().current)                                                           \
            on_access(reinterpret_cast<std::uintptr_t>(p), n, false, kPlain, CUDALINGS_PC, false); \
    }                                                                                              \
    extern "C" CUDALINGS_EMU_API void __tsan_unaligned_write##n(void* p) {                         \
        if (cudalings_emu::rt().current)                                                           \
            on_access(reinterpret_cast<std::uintptr_t>(p), n, true, kPlain, CUDALINGS_PC, false);  \
    }                                                                                              \
    extern "C" CUDALINGS_EMU_API void __tsan_volatile_read##n(void* p) {                           \
        if (cudalings_emu::rt().current)                                                           \
            on_access(reinterpret_cast<std::uintptr_t>(p), n, false, kVolatile, CUDALINGS_PC);     \
    }                                                                                              \
    extern "C" CUDALINGS_EMU_API void __tsan_volatile_write##n(void* p) {                          \
        if (cudalings_emu::rt().current)                                                           \
            on_access(reinterpret_cast<std::uintptr_t>(p), n, true, kVolatile, CUDALINGS_PC);      \
    }
CUDALINGS_HOOK(1)
CUDALINGS_HOOK(2)
CUDALINGS_HOOK(4)
CUDALINGS_HOOK(8)
CUDALINGS_HOOK(16)
#undef CUDALINGS_HOOK

extern "C" CUDALINGS_EMU_API void __tsan_read_range(void* p, unsigned long n) {
    if (cudalings_emu::rt().current && n)
        on_access(reinterpret_cast<std::uintptr_t>(p), unsigned(n), false, kPlain, CUDALINGS_PC,
                  false);
}
extern "C" CUDALINGS_EMU_API void __tsan_write_range(void* p, unsigned long n) {
    if (cudalings_emu::rt().current && n)
        on_access(reinterpret_cast<std::uintptr_t>(p), unsigned(n), true, kPlain, CUDALINGS_PC,
                  false);
}
extern "C" CUDALINGS_EMU_API void __tsan_init() {}
extern "C" CUDALINGS_EMU_API void __tsan_func_entry(void*) {}
extern "C" CUDALINGS_EMU_API void __tsan_func_exit() {}
extern "C" CUDALINGS_EMU_API void __tsan_vptr_update(void*, void*) {}
extern "C" CUDALINGS_EMU_API void __tsan_vptr_read(void*) {}
// A release (or stronger) atomic or fence publishes the thread's earlier stores to other blocks,
// as a __threadfence() before it does: libcu++'s cuda::atomic_ref / cuda::atomic stores and RMWs
// and cuda::atomic_thread_fence with memory_order_release, acq_rel or seq_cst (ThreadSanitizer's
// order numbers: relaxed 0, consume 1, acquire 2, release 3, acq_rel 4, seq_cst 5). CUDA's own
// atomicAdd and friends are relaxed (cuda_emu.h): they publish nothing, as on a GPU. The scope is
// not seen here: a block-scope release counts as a device-scope one (a missed bug, never a false
// report).
static void release_fence(int order) {
    if (order >= 3 && cudalings_emu::rt().current) cudalings_emu::on_fence();
}
extern "C" CUDALINGS_EMU_API void __tsan_atomic_thread_fence(int order) { release_fence(order); }
extern "C" CUDALINGS_EMU_API void __tsan_atomic_signal_fence(int) {}
extern "C" CUDALINGS_EMU_API void __tsan_ignore_thread_begin() {}
extern "C" CUDALINGS_EMU_API void __tsan_ignore_thread_end() {}

// Atomic operations: performed here (one OS thread runs every CUDA thread, so a plain
// read-modify-write is atomic), after the access checks.
#define CUDALINGS_ATOMICS(bits, T)                                                                \
    extern "C" CUDALINGS_EMU_API T __tsan_atomic##bits##_load(const volatile T* a, int) {         \
        on_access(reinterpret_cast<std::uintptr_t>(a), bits / 8, false, kAtomic, CUDALINGS_PC);   \
        return *a;                                                                                \
    }                                                                                             \
    extern "C" CUDALINGS_EMU_API void __tsan_atomic##bits##_store(volatile T* a, T v, int mo) {   \
        release_fence(mo);                                                                        \
        on_access(reinterpret_cast<std::uintptr_t>(a), bits / 8, true, kAtomic, CUDALINGS_PC);    \
        atomic_result(a, *a != v);                                                                \
        *a = v;                                                                                   \
        written(a, bits);                                                                         \
    }                                                                                             \
    extern "C" CUDALINGS_EMU_API T __tsan_atomic##bits##_exchange(volatile T* a, T v, int mo) {   \
        release_fence(mo);                                                                        \
        on_access(reinterpret_cast<std::uintptr_t>(a), bits / 8, true, kAtomic, CUDALINGS_PC);    \
        T o = *a;                                                                                 \
        *a = v;                                                                                   \
        written(a, bits);                                                                         \
        atomic_result(a, o != v);                                                                 \
        return o;                                                                                 \
    }                                                                                             \
    CUDALINGS_RMW(bits, T, fetch_add, o + v)                                                      \
    CUDALINGS_RMW(bits, T, fetch_sub, o - v)                                                      \
    CUDALINGS_RMW(bits, T, fetch_and, o& v)                                                       \
    CUDALINGS_RMW(bits, T, fetch_or, o | v)                                                       \
    CUDALINGS_RMW(bits, T, fetch_xor, o ^ v)                                                      \
    CUDALINGS_RMW(bits, T, fetch_nand, T(~(o & v)))                                               \
    CUDALINGS_CAS(bits, T, strong)                                                                \
    CUDALINGS_CAS(bits, T, weak)                                                                  \
    extern "C" CUDALINGS_EMU_API T __tsan_atomic##bits##_compare_exchange_val(volatile T* a, T c, \
                                                                              T v, int mo, int) { \
        release_fence(mo);                                                                        \
        on_access(reinterpret_cast<std::uintptr_t>(a), bits / 8, true, kAtomic, CUDALINGS_PC);    \
        T o = *a;                                                                                 \
        if (o == c) *a = v;                                                                       \
        if (o == c) written(a, bits);                                                             \
        atomic_result(a, o == c && o != v);                                                       \
        return o;                                                                                 \
    }
#define CUDALINGS_RMW(bits, T, name, expr)                                                     \
    extern "C" CUDALINGS_EMU_API T __tsan_atomic##bits##_##name(volatile T* a, T v, int mo) {  \
        release_fence(mo);                                                                     \
        on_access(reinterpret_cast<std::uintptr_t>(a), bits / 8, true, kAtomic, CUDALINGS_PC); \
        T o = *a;                                                                              \
        T n = T(expr);                                                                         \
        *a = n;                                                                                \
        written(a, bits);                                                                      \
        atomic_result(a, o != n);                                                              \
        return o;                                                                              \
    }
// Strong and weak compare-exchange alike: with one OS thread, a weak one never fails spuriously.
#define CUDALINGS_CAS(bits, T, kind)                                                           \
    extern "C" CUDALINGS_EMU_API int __tsan_atomic##bits##_compare_exchange_##kind(            \
        volatile T* a, T* c, T v, int mo, int) {                                               \
        release_fence(mo);                                                                     \
        on_access(reinterpret_cast<std::uintptr_t>(a), bits / 8, true, kAtomic, CUDALINGS_PC); \
        T o = *a;                                                                              \
        if (o == *c) {                                                                         \
            *a = v;                                                                            \
            written(a, bits);                                                                  \
            atomic_result(a, o != v);                                                          \
            return 1;                                                                          \
        }                                                                                      \
        *c = o;                                                                                \
        return 0;                                                                              \
    }
CUDALINGS_ATOMICS(8, std::uint8_t)
CUDALINGS_ATOMICS(16, std::uint16_t)
CUDALINGS_ATOMICS(32, std::uint32_t)
CUDALINGS_ATOMICS(64, std::uint64_t)
#undef CUDALINGS_ATOMICS
#undef CUDALINGS_RMW
#undef CUDALINGS_CAS
