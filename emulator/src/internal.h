// The emulator's runtime internals: CUDA threads as fibers, the block scheduler, device
// memory, and the diagnostics they produce.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "cudalings_emu/abi.h"
#include "cudalings_emu/emulator.h"

namespace cudalings_emu {

// ------------------------------------------------------------------ fibers
struct Stack {
    char* base = nullptr;  // lowest usable byte (a guard page lies below)
    std::size_t size = 0;
};
Stack* take_stack();
void give_stack(Stack* s);
// Saves the current registers in *save and continues on `to`.
extern "C" void cudalings_emu_switch(void** save, void* to);
// Prepares a fresh stack whose first switch calls entry().
void* fiber_prepare(Stack* s, void (*entry)());

// ------------------------------------------------------------------ memory accesses
// How an access is made: a plain load or store, a volatile one, or an atomic operation.
// Volatile and atomic accesses to one word from different blocks are not a data race (the
// PTX memory model treats volatile as relaxed, like an atomic); within a block, a volatile
// pair is still reported (the legacy warp-synchronous reduction).
enum class Access : std::uint8_t { Plain = 0, Atomic = 1, Volatile = 2 };

// One access as the race detector remembers it: who (block serial, thread), when (the block's
// barrier epoch and the warp's collective count), how, where, and the synchronisation counter.
struct AccessRecord {
    std::uint32_t block = 0;  // block serial (0: none)
    std::uint32_t epoch = 0, wsync = 0;
    std::uint16_t tid = 0;
    Access kind = Access::Plain;
    bool rmw = false;       // a write by a thread that had read the word in the same epoch
    std::uint64_t seq = 0;  // the synchronisation counter at the access
    const void* pc = nullptr;
};

// The race detector's shadow of one 4-byte granule: its last write, and the reads since then
// that nothing orders before one another (several threads may read a word in one epoch; a
// read-modify-write race needs the other readers, not only the latest one).
constexpr int kShadowReaders = 4;
struct Shadow {
    AccessRecord write;
    // When the last write was a read-modify-write (write.rmw), the instruction at which its
    // thread read the word: another thread's read at the same instruction is the same x += v.
    const void* write_read_pc = nullptr;
    // When the last write is an atomic, the atomic write before it by another thread: a plain
    // read conflicts with both (a thread's own atomicAdd does not make a plain read of the
    // counter safe while other blocks add to it too).
    AccessRecord earlier_atomic;
    AccessRecord reads[kShadowReaders];
    std::uint8_t next_evict = 0;
};

// The shadow of a device allocation, made a page at a time where the kernels touch it: a shadow
// granule is ~200 bytes, so a whole 4 MiB workspace of which a kernel writes a few counters
// would cost 200 MB to clear at its first access, at every case.
struct ShadowPages {
    static constexpr std::size_t kGranules = 1024;  // 4 KiB of device memory a page
    explicit ShadowPages(std::size_t granules) : pages((granules + kGranules - 1) / kGranules) {}
    Shadow& at(std::size_t granule) {
        auto& page = pages[granule / kGranules];
        if (!page) page.reset(new Shadow[kGranules]());
        return page[granule % kGranules];
    }
    std::vector<std::unique_ptr<Shadow[]>> pages;
};

// Explain mode: accesses grouped into warp requests, one per dynamic execution of an
// instruction by a warp: same warp, same instruction, same synchronisation interval (the
// block's barriers and the warp's collectives completed so far), and the same execution count
// of the instruction within that interval. Counting executions over the whole kernel instead
// would group lane 0's third round of a loop with lane 1's second where lane 1 skipped a round
// (a Blelloch sweep's `if (t < active)`), which is no request the hardware ever made.
struct RequestKey {
    std::uint32_t warp;
    const void* pc;
    std::uint64_t interval;  // (barrier epoch << 32) | warp collectives
    std::uint32_t k;
    bool operator<(const RequestKey& o) const {
        if (warp != o.warp) return warp < o.warp;
        if (pc != o.pc) return pc < o.pc;
        if (interval != o.interval) return interval < o.interval;
        return k < o.k;
    }
};
// A thread's executions of one instruction in its current synchronisation interval.
struct ExecCount {
    std::uint64_t interval = 0;
    std::uint32_t k = 0;
};
struct Request {
    bool shared = false;
    bool write = false;
    unsigned size = 0;
    std::vector<std::uintptr_t> addrs;
    std::vector<std::uint8_t> lanes;  // the lane of each address
    // The array the first lane touched, for the access picture: its allocation (global), or its
    // offset in the block's shared window.
    const struct Allocation* alloc = nullptr;
    std::size_t shared_offset = 0;
};

// ------------------------------------------------------------------ CUDA threads
enum class State : std::uint8_t { NotStarted, Ready, AtBarrier, AtWarp, Done };

struct Thread {
    uint3 tid{};
    unsigned linear = 0, lane = 0, warp = 0;
    State state = State::NotStarted;
    void* sp = nullptr;
    Stack* stack = nullptr;
    // where it waits (barrier or warp collective)
    const char* file = nullptr;
    int line = 0;
    // a warp collective in progress
    int op = 0;
    unsigned mask = 0;
    unsigned long long value = 0, result = 0;
    int bytes = 0, arg = 0, width = 32, pred = 0;
    int barrier_kind = -1;  // syncthreads_reduce kind, -1 for plain __syncthreads
    int barrier_pred = 0;
    unsigned barriers_passed = 0;
    bool saw_barrier = false;
    // Its last plain store, not yet compared: the bytes before it (progress tracking: a store
    // that leaves memory as it was is no progress).
    std::uintptr_t store_at = 0;
    unsigned store_size = 0;
    bool store_global = false;  // not shared memory
    unsigned char store_before[16] = {};
    // Its last store to a tracked range (sampled.cpp), recorded once it happened: a thread whose
    // block a sample drops between the hook and the store wrote nothing.
    const struct Allocation* sampled_alloc = nullptr;
    std::uintptr_t sampled_at = 0;
    unsigned sampled_size = 0;
    // Its last volatile or atomic read, and the progress count then (a repeat is a poll).
    std::uintptr_t poll_at = 0;
    std::uint64_t poll_progress = 0;
    // Its last memory access (to name where a lane was when it exited), and the granule it last
    // read (a store to it next is a read-modify-write: x += v).
    const void* last_pc = nullptr;
    std::uintptr_t last_read = 0;
    // Coverage mode (coverage.cpp): the runs of each basic block of the learner's code.
    std::unordered_map<const void*, unsigned> covered;
    const void* last_read_pc = nullptr;  // the instruction of that read
    // A plain read of a word another thread changed with an atomic, not yet reported: the
    // compare-and-swap loop reads the word plainly, then validates the value with atomicCAS on
    // the same word. The report is dropped when this thread's next access to the word is an
    // atomic, and made at its next barrier, collective, plain store to the word, or exit.
    std::uintptr_t pending_at = 0, pending_end = 0;  // the granules it covers
    const void* pending_pc = nullptr;                // the read's instruction
    Diagnostic pending;
    // This thread's last plain read (its granule and instruction), racy or not: an atomic on the
    // same granule next validates the instruction for every thread (see check_race).
    std::uintptr_t watch_at = 0;
    const void* watch_pc = nullptr;
    // The __activemask() call in progress: the lanes at the same call site when it completed.
    bool activemask = false;
};

// One resident block: its threads, barrier and warp state, its own shared memory (the dynamic
// buffer, and its copies of the registered __shared__ variables while another block runs),
// and its shadow of shared memory for the race detector.
struct Block {
    std::vector<Thread> threads;
    unsigned warps = 0;
    unsigned count = 0;
    unsigned done = 0;
    uint3 idx{};
    std::uint32_t serial = 0;                // a number unique to this block in the process
    std::uint32_t epoch = 0;                 // __syncthreads completed so far
    std::vector<std::uint32_t> warp_sync;    // warp collectives completed, per warp
    // A hash of the values of each warp's last kRecentCollectives collectives (the stall
    // detector: a polling loop with two ballots repeats two hashes).
    static constexpr unsigned kRecentCollectives = 4;
    std::vector<std::uint64_t> warp_values;  // kRecentCollectives a warp, a ring
    unsigned next_warp = 0;                  // where its next time slice starts
    unsigned repolls = 0;                    // polls of an unchanged word in this time slice
    bool late = false;  // admitted while the scheduler looks for the writer a waiter polls
    bool hold_armed = false;  // to be held back after its first global atomic (Options::hold_back)
    bool yield_now = false;   // it made that atomic: its time slice ends at once
    // The synchronisation counter at this block's last atomic or volatile global access, and
    // at its last store (for the race detector's cross-block ordering).
    std::uint64_t sync_seq = 0, store_seq = 0;
    // shared memory: a window of its own (kSharedWindow bytes): the __shared__ variables from
    // offset 0 with red zones between them, the dynamic shared memory at kDynamicOffset.
    unsigned char* window = nullptr;
    std::vector<std::uint8_t> has_var;  // per registered __shared__ variable: poisoned here
    ~Block();
    // checks
    std::unordered_map<std::uintptr_t, Shadow> shared_shadow;
    std::map<RequestKey, Request> requests;                              // explain mode
    std::vector<std::unordered_map<const void*, ExecCount>> exec_count;  // per thread
};

// ------------------------------------------------------------------ global state
struct Runtime {
    Options options;
    bool options_read = false;
    // the launch in progress
    bool in_kernel = false;
    Thread* current = nullptr;
    Block* block = nullptr;  // the block whose time slice runs now
    dim3 block_dim{}, grid_dim{};
    void* scheduler_sp = nullptr;
    KernelBody body = nullptr;
    void* closure = nullptr;
    const LaunchSite* site = nullptr;
    // The launch's pointer arguments, in order (what a wild address may have come from).
    std::vector<const void*> pointer_args;
    std::uint32_t launch_serial = 0;
    std::uint32_t block_serial = 0;
    // Counts fences, atomic and volatile global accesses: the race detector orders accesses
    // of different blocks by it.
    std::uint64_t sync_counter = 0;
    bool abort = false;
    // shared memory of the running launch
    std::size_t dynamic_bytes = 0;
    std::string dynamic_name;  // the extern __shared__ array's name, when the kernel named it
    std::size_t dynamic_element = 0;
    struct SharedVar {
        std::size_t begin = 0, end = 0;  // offsets in a block's window
        const char* name = "";
        std::size_t element = 1;
        std::size_t rank = 0, dims[4] = {};
    };
    std::vector<SharedVar> shared_vars;    // registered __shared__ variables, by offset
    std::size_t shared_next = 0;           // the next free offset for a variable
    std::size_t static_shared = 0;         // their bytes (the launch limit counts them)
    std::size_t shared_limit = 48 * 1024;  // static + dynamic, for this launch's kernel
    // Progress, for the scheduler's stall detection (schedule.cpp): bumped when a store or an
    // atomic changes memory, when a thread ends, when a warp collective sees new values.
    std::uint64_t progress = 0;
    // Stores and atomics that changed global memory (a dry-mode sample stops at the first).
    std::uint64_t global_changes = 0;
    // Device memory is as dry mode leaves it: a launch may run a sample (Options::sample_blocks).
    bool sample_intact = false;
    // Launches, memsets and copies skipped since set_options because a sample had begun to
    // change memory (emulator.h, sample_skips).
    std::uint64_t sample_skips = 0;
    std::uint64_t resumes = 0;  // fiber resumes so far
    // For the watchdog thread (watchdog.cpp): the resumes, and whether a kernel runs.
    std::atomic<std::uint64_t> heartbeat{0};
    std::atomic<bool> kernel_running{false};
    // When the time limit began: the CPU time of the thread that runs kernels (a machine busy
    // with other work slows the emulator down, and must not make a kernel "slow").
    double budget_started = 0;
    bool budget_set = false;    // start_time_budget() was called: not reset by each launch
    bool watch_reads = false;   // record what threads read (no change for a whole round)
    bool watch_writes = false;  // a stall is being diagnosed: look for a polled word's writer
    // errors
    cudaError_t last_error = cudaSuccess;     // cudaGetLastError
    cudaError_t pending_error = cudaSuccess;  // returned by the next synchronizing call
    // statistics
    std::uint64_t threads_run = 0, blocks_run = 0, launches = 0;
};
extern Runtime g_runtime;
// Every hook and intrinsic starts here: an inline reference, not a call.
inline Runtime& rt() { return g_runtime; }
const Options& opts();

inline Thread* cur() { return rt().current; }
// "0x1f40": an address or a seed in a report.
std::string hex(std::uint64_t v);
// Suspends the running CUDA thread (its state says why) and returns when it is resumed.
void yield_to_scheduler();
// Ends the whole kernel from inside a CUDA thread: the grid stops, `error` is reported at the
// next synchronizing call.
[[noreturn]] void abort_kernel(cudaError_t error);

// ------------------------------------------------------------------ shared memory windows
constexpr std::size_t kSharedWindow = 512 * 1024;
constexpr std::size_t kDynamicOffset = 256 * 1024;  // dynamic shared memory (at most 227 KiB)
unsigned char* take_window();
void give_window(unsigned char* w);
// "sdata[130]", "tile[3][5]", "the dynamic shared memory s[12]" for a byte offset in a block's
// window; `inside` says whether the offset lies in a variable (or the dynamic memory's size).
std::string shared_location(std::size_t offset, bool* inside, std::string* past = nullptr);
// Whether [offset, offset + size) lies inside one variable or the dynamic shared memory (no
// text: every shared access asks).
bool shared_inside(std::size_t offset, std::size_t size);

// ------------------------------------------------------------------ device memory
struct Allocation {
    std::uintptr_t begin = 0;
    std::size_t bytes = 0;
    std::size_t mapped = 0;
    bool freed = false;
    bool host = false;  // cudaMallocHost / cudaHostAlloc (pinned, usable by kernels)
    std::string where, freed_where;
    struct ShadowPages* shadow = nullptr;  // per 4-byte granule, check mode
    // The part the learner's code may touch, when the checker says so (an output between its
    // guard zones): accesses outside it are out of bounds, with the learner's line.
    std::uintptr_t user_begin = 0, user_end = 0;
    // What the array is called and its element size, when known (the checker's buffers: their
    // names; a learner's cudaMalloc(&partials, ...): "partials"), for "partials[257]".
    std::string name;
    std::size_t element = 0;
    bool host_named = false;  // named by the host program (the checker's own arrays)
    // Made by the checker's kit for itself (cudalings_emu_checker_memory): never named by the
    // kit's allocating line, which means nothing to a learner.
    bool checker = false;
    // Values at the sampled sizes (sampled.cpp): part of it is made on demand, or the words
    // kernels store to are recorded.
    bool sampled = false;
};
// sampled.cpp: an access by a kernel (or a copy) to an allocation marked `sampled`: pages made on
// demand are made first, stores to a tracked range recorded. Forgotten with the allocation.
// `t`: the CUDA thread that accesses (its store is recorded once it happened, settle_store),
// null for a copy.
void sampled_access(const Allocation& al, std::uintptr_t a, std::size_t size, bool write,
                    Thread* t);
void commit_sampled_store(Thread& t);
void forget_sampled(const Allocation& al);
// The pages of the allocation's values made on demand, [lo, hi): false when it has none. The
// protection that opens and closes device memory around kernels leaves them alone.
bool on_demand_span(const Allocation& al, std::uintptr_t* lo, std::uintptr_t* hi);
// Its on-demand and tracked ranges, in `marks` (for the learner's process of the judge split).
void sampled_marks(const Allocation& al, Marks* marks);
// "workspace[257]" (or "byte 1028 of the 65796-byte allocation made at f.cu:12").
std::string global_location(const Allocation& al, std::uintptr_t a);
bool in_arena(std::uintptr_t a);
// The allocation that holds [a, a + n): null when none does; *nearest gets the allocation
// nearest below a (for out-of-bounds messages).
Allocation* find_allocation(std::uintptr_t a, Allocation** nearest);
// The allocation that starts above a (null when none), and "a[-4194304]: out of bounds (16777216
// bytes before its start)" for an address before an allocation's data (an index gone negative).
Allocation* allocation_after(std::uintptr_t a);
std::string location_before(const Allocation& al, std::uintptr_t a);
// Whether an access `distance` bytes outside an allocation is an overrun of it (an index a little
// past its end or before its start) rather than a wild address: within the allocation's own size
// (an index at most twice too large), or within the unmapped gap that follows every allocation.
bool near_allocation(const Allocation& al, std::size_t distance);
// An out-of-bounds access that is near no allocation: "a wild address" and what is known of
// where it came from (the kernel's pointer argument below it, the index from there, and whether
// the index looks like the checker's poison: a value read from memory nobody wrote).
std::string wild_address_text(std::uintptr_t a, unsigned size, std::string* detail);
// The checker's poison pattern (0 when none is set).
std::uint32_t poison_bits();
bool is_device_pointer(const void* p);
// Device memory open to this process's host code while it lives (a kernel's run, the runtime's
// own copies and sets); closed (PROT_NONE) otherwise, as on a GPU. Nests; thread-safe.
struct DeviceAccess {
    DeviceAccess();
    ~DeviceAccess();
    DeviceAccess(const DeviceAccess&) = delete;
    DeviceAccess& operator=(const DeviceAccess&) = delete;
};
bool in_loaded_module(std::uintptr_t a);  // a program's or library's static data
bool is_host_accessible_device(const void* p);

// ------------------------------------------------------------------ diagnostics

void report(Diagnostic d);
// How many diagnostics are pending; and, of those after the first `from`, keep only those of
// `kind` (a dry-mode sample reports nothing else). True when one is kept.
std::size_t pending_count();
bool keep_pending_since(std::size_t from, const std::string& kind);
// Coverage mode (coverage.cpp, CUDALINGS_EMU_COVERAGE): a block's counts folded in when it ends,
// the records so far written after each launch.
// The CPU time of the calling thread, in seconds.
double thread_cpu_seconds();
bool coverage_on();
void coverage_block_end(Block& b);
void coverage_launch_end();
std::string where_pc(const void* pc);  // "file.cu:12" of a code address
// For a code address in a helper inlined into the learner's other functions: "f.cu:66 is in
// load_status(), called at f.cu:110 (in look_back())"; "" otherwise. report() adds it to the
// detail of a finding at that line whose code addresses were named through where_pc.
std::string call_chain(const void* pc);
std::string thread_name(const Thread& t);
std::string block_name(uint3 b);
std::string site(const char* file, int line);

// The bytes of shared memory (static and dynamic) a block of this kernel may use: 48 KiB, or
// what cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, ...) opted in to.
std::size_t shared_memory_limit(const char* kernel);
// The thread's deferred report of a plain read racing an atomic (Thread::pending): kept for
// the launch's end, when it is made unless some thread validated a read at the same
// instruction with an atomic on the word (a compare-and-swap loop, also one that exits early
// when the value it read needs no update).
void flush_pending(Thread& t);

// Memory access by the running CUDA thread (called from the TSan hooks and atomics).
void on_access(std::uintptr_t a, unsigned size, bool write, Access kind, const void* pc,
               bool check_alignment = true);
// A __threadfence() by the running CUDA thread.
void on_fence();
void on_block_start(Block& b);
void on_block_end(Block& b);
void on_launch_end();

// Progress: the running thread's last plain store changed memory (or not); called before
// its next access, barrier or collective, and when it ends.
void canonicalize_poison(std::uintptr_t a, unsigned size);
inline void settle_store(Thread& t) {
    if (t.sampled_size) commit_sampled_store(t);
    if (!t.store_size) return;
    canonicalize_poison(t.store_at, t.store_size);
    if (std::memcmp(reinterpret_cast<const void*>(t.store_at), t.store_before, t.store_size) != 0) {
        ++rt().progress;
        if (t.store_global) ++rt().global_changes;
    }
    t.store_size = 0;
}

// ------------------------------------------------------------------ blocks and the grid
// runtime.cpp: one block's threads.
enum class SliceEnd { Finished, Preempted, Aborted };
void start_block(Block& b);  // fresh threads, barrier and warp state
// Runs the block's threads for about `budget` fiber resumes (whole lockstep sweeps of a warp),
// or until the block ends, or until the kernel aborts (a deadlock inside the block is
// reported there and aborts it).
SliceEnd run_slice(Block& b, unsigned budget);
void drop_fibers(Block& b);  // after an abort: the stacks of its unfinished threads

// watchdog.cpp: started with the first launch under a time limit, it reports a CUDA thread
// that runs without yielding (a loop that never touches memory) to the stuck handler.
void watch_for_stuck_threads();
// What a running block's threads are doing, for slow and stuck reports: "120 threads at
// f.cu:12, 8 at f.cu:15".
std::string where_threads_are(const Block& b, std::string* file, int* line);

// schedule.cpp: the grid's blocks in dispatch order, several resident at a time, and the
// stall detector (cross-block waits).
void run_grid();
// Dry mode's sample (Options::sample_blocks): a few of the grid's blocks, each alone, in a time
// budget; a block that waits for memory no sampled block changes ends quietly.
void run_sample();
// A read (or an atomic that changed nothing) while reads are watched: a possible poll.
void note_read(std::uintptr_t a, unsigned size, const void* pc, bool shared);
// A store to global memory while a stall is diagnosed: is it the word a waiter polls?
void note_polled_store(std::uintptr_t a, unsigned size, const void* pc);

}  // namespace cudalings_emu
