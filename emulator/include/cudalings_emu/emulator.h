// The emulator's control interface, for the programs that host emulated code (the emulated
// runner, the tests): options, and the diagnostics found so far.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#define CUDALINGS_EMU_API __attribute__((visibility("default")))

namespace cudalings_emu {

// The order in which a grid's blocks start (a GPU guarantees none).
enum class BlockOrder : std::uint8_t {
    InOrder,  // blockIdx order: x fastest, then y, then z
    Reverse,  // the last block first
    Shuffle,  // a seeded permutation, a different one for every launch
};

struct Options {
    bool lockstep = true;  // lanes of a warp advance one memory access at a time
    bool check = true;     // races, uninitialised shared reads (needs instrumented code)
    bool explain = false;  // teaching metrics: bank conflicts, sectors, warp efficiency
    std::size_t stack_bytes = 128 * 1024;  // per CUDA thread
    // Schedules (docs/emulator.md, "Schedules"). Blocks start in `block_order`; up to
    // `resident_blocks` of them run at once, interleaved by time slices in which each thread
    // of the block makes about `quantum` memory accesses (fiber resumes); the permutation of a
    // shuffled launch comes from `schedule_seed` and the launch's serial number.
    BlockOrder block_order = BlockOrder::InOrder;
    std::uint64_t schedule_seed = 0;
    unsigned resident_blocks = 1;
    unsigned quantum = 16;
    // The first block of each launch to start is held back right after its first global atomic
    // (the ticket of a look-back or chained scan, drawn in start order) while the other blocks
    // run, until they all wait or end; then it goes on. A GPU may run a block that slowly (an SM
    // busy with other blocks): a tile that reads a predecessor's still-empty status word as 0,
    // instead of waiting for it, shows here; a correct program finishes the same.
    bool hold_back = false;
    // A launch still running after this many seconds (0: no limit) is stopped and reported as
    // "slow": it makes progress, but too slowly to be emulated (it may finish on a GPU). A CUDA
    // thread that runs this long without one memory access (a loop that never reads or writes
    // memory: it never ends) is reported as "stuck" to the host's stuck handler, with its line.
    double time_limit_seconds = 0;
    // Launches are checked (dimensions, shared memory) and not run, and device-to-device
    // memsets and copies are skipped: the launch geometry of a size too large to emulate, on
    // memory that is never touched (so never committed).
    bool dry = false;
    // Dry mode with a sample (sizes too large to emulate whole, docs/emulator.md): each launch
    // runs `sample_blocks` of its blocks at its real geometry instead of none (the first, the
    // last, and blocks picked from `sample_seed` and the launch's serial number), each alone,
    // for at most `sample_seconds` in all; then the launch ends, its other blocks never run. A
    // block that waits for memory no sampled block changes ends without a report. Only
    // out-of-bounds accesses are reported from a sample: what else a partial run on memory never
    // filled can do (a wait, a trap, a stop for time) is not a finding. A launch runs a sample
    // only while device memory is as dry mode leaves it (set_options starts that): once a
    // sampled launch changed global memory, or a memset of a value other than 0 or a
    // device-to-device copy was skipped, the later launches are checked and not run.
    unsigned sample_blocks = 0;
    std::uint64_t sample_seed = 0;
    double sample_seconds = 0.2;
};

// Read once from the environment, set_options overrides:
//   CUDALINGS_EMU_MODE=plain|check|explain    CUDALINGS_EMU_LOCKSTEP=0|1
//   CUDALINGS_EMU_BLOCK_ORDER=in-order|reverse|shuffle
//   CUDALINGS_EMU_SEED=<hex>                  CUDALINGS_EMU_RESIDENT=<n>
//   CUDALINGS_EMU_QUANTUM=<n>                 CUDALINGS_EMU_TIME_LIMIT=<seconds>
//   CUDALINGS_EMU_HOLD_BACK=0|1
CUDALINGS_EMU_API Options get_options();
CUDALINGS_EMU_API void set_options(const Options& o);
// The defaults with what the variables above say, read now (a bad value is ignored with a
// warning on stderr).
CUDALINGS_EMU_API Options environment_options();
// "in-order", "reverse", "shuffle" (the CUDALINGS_EMU_BLOCK_ORDER values) and back; false
// for another name.
CUDALINGS_EMU_API const char* block_order_name(BlockOrder order);
CUDALINGS_EMU_API bool parse_block_order(const std::string& name, BlockOrder* order);

struct Diagnostic {
    std::string kind;      // "race", "out-of-bounds", "use-after-free", "host-pointer",
                           // "uninitialised-shared", "misaligned", "divergent-barrier",
                           // "skipped-barrier", "deadlock", "warp-mask", "memcpy",
                           // "launch", "cross-block-wait", "slow", "stuck", "trap",
                           // "unsupported", "metric", "access" (explain mode:
                           // one warp's request at a line, its detail JSON, docs/emulator.md)
    std::string severity;  // "error", "warning", "info"
    std::string file;      // the learner's file (when known)
    int line = 0;
    std::string message;      // one line
    std::string detail;       // more lines (the other access, waiting threads, ...)
    std::uint64_t count = 1;  // how many times this exact finding occurred
};

// Everything found since the last call (duplicates merged); clears the list.
CUDALINGS_EMU_API std::vector<Diagnostic> take_diagnostics();
// Text for a learner: "file:line: error: message" lines with details indented.
CUDALINGS_EMU_API std::string format(const std::vector<Diagnostic>& diagnostics);

// Called from the emulator's watchdog thread (not the thread that runs kernels, which is stuck
// in a CUDA thread that never yields) with a "stuck" diagnostic naming the line it loops at. The
// handler reports it and ends the process; it must not return (if it does, the process exits).
CUDALINGS_EMU_API void set_stuck_handler(void (*handler)(const Diagnostic& stuck));
// The time limit counts from here (a host's unit of work: a test case with several launches);
// without it, from each launch.
CUDALINGS_EMU_API void start_time_budget();

struct Statistics {
    std::uint64_t launches = 0, blocks = 0, threads = 0;
};
CUDALINGS_EMU_API Statistics statistics();

// Device memory two processes share (the checker's judge and the learner's process): a memfd
// mapped at the same address in both, so a device pointer means the same bytes in each.
//   share_device_memory: the judge, before its first allocation: its allocations come from the
//     lower half of the arena; returns the memfd (close-on-exec) or -1 with `why`.
//   join_device_memory: the learner's process, before its first allocation, with that memfd:
//     nothing of the judge's is accessible until adopted; its own allocations come from the
//     upper half.
//   adopt_allocation: the learner's side of one of the judge's allocations (its start and size
//     as the judge made it), accessible from now on and named `name` in reports.
//   drop_allocation: an adopted allocation the judge took back: closed here for good (a kernel
//     that still reaches it makes a use after free), and no longer opened around kernels.
CUDALINGS_EMU_API int share_device_memory(std::string* why);
// Whether `p` lies in the emulator's device memory (async-signal-safe: a fault handler asks).
CUDALINGS_EMU_API bool is_device_address(const void* p);
CUDALINGS_EMU_API bool join_device_memory(int fd, std::string* why);
CUDALINGS_EMU_API bool adopt_allocation(const void* p, std::size_t bytes, const std::string& name,
                                        std::string* why);
CUDALINGS_EMU_API void drop_allocation(const void* p);
// What the host marked in an allocation (cudalings_emu_set_extent, cudalings_emu_name_array):
// the array's extent inside it (its guard zones around), its name and element size, so the
// learner's process can mark its side of a lent allocation the same way (mark_allocation).
struct Marks {
    std::size_t offset = 0, bytes = 0;  // the extent, from the allocation's start (0, 0: none)
    std::size_t element = 0;
    std::string name;
    // Values made on demand and words tracked (below), from the allocation's start (0: none):
    // the learner's process registers its side itself (learner/main.cpp).
    std::size_t on_demand_offset = 0, on_demand_bytes = 0;
    std::size_t tracked_offset = 0, tracked_bytes = 0;
};
CUDALINGS_EMU_API bool allocation_marks(const void* p, Marks* out);
CUDALINGS_EMU_API void mark_allocation(const void* p, const Marks& marks);

// Values at the sampled sizes (docs/emulator.md, "Values at the sizes too large to emulate"):
//   fill_on_demand: the bytes [p, p + bytes) of a device allocation are made by `fill(offset,
//     count, dst)` (offset and count in bytes from p: whole 4 KiB pages, the last one short) the
//     first time a kernel touches their page, or a copy reads it; nothing else of them is ever
//     made. false when [p, p + bytes) is not inside one allocation.
//   track_writes: from now on, the 4-byte words of [p, p + bytes) that kernels store to are
//     recorded; written_words lists them as [first, end) word ranges from p, in order.
//   Both end when the allocation is freed.
//   sample_skips: the launches, memsets and copies skipped since set_options because an earlier
//     sampled launch had changed memory (what a sample wrote may then not be the call's result).
CUDALINGS_EMU_API bool fill_on_demand(
    const void* p, std::size_t bytes,
    std::function<void(std::size_t offset, std::size_t count, void* dst)> fill);
CUDALINGS_EMU_API bool track_writes(const void* p, std::size_t bytes);
CUDALINGS_EMU_API std::vector<std::pair<std::size_t, std::size_t>> written_words(const void* p);
CUDALINGS_EMU_API std::uint64_t sample_skips();
// The pages made on demand that [p, p + bytes) touches, made now (the judge, asked by the
// learner's process, whose own fill_on_demand asks it: the bytes are shared).
CUDALINGS_EMU_API void make_on_demand(const void* p, std::size_t bytes);

}  // namespace cudalings_emu
