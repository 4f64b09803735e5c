// The emulator's runtime internals: CUDA threads as fibers, the block scheduler, device
// memory, and the diagnostics they produce.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
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
};

struct Block {
    std::vector<Thread> threads;
    unsigned warps = 0;
    unsigned count = 0;
    unsigned done = 0;
    std::uint32_t serial = 0;   // a number unique to this block in the process
    std::uint32_t epoch = 0;    // __syncthreads completed so far
    std::vector<std::uint32_t> warp_sync;  // warp collectives completed, per warp
    bool did_fence = false;
    std::uint64_t fence_seq = 0;
    bool did_atomic = false;
};

// ------------------------------------------------------------------ global state
struct Runtime {
    Options options;
    bool options_read = false;
    // the launch in progress
    bool in_kernel = false;
    Thread* current = nullptr;
    Block block;
    uint3 block_idx{};
    dim3 block_dim{}, grid_dim{};
    void* scheduler_sp = nullptr;
    KernelBody body = nullptr;
    void* closure = nullptr;
    const LaunchSite* site = nullptr;
    std::uint32_t launch_serial = 0;
    std::uint32_t block_serial = 0;
    std::uint64_t fence_counter = 0;
    bool abort = false;
    // shared memory of the running launch
    std::vector<unsigned char> dynamic_shared;
    std::size_t dynamic_bytes = 0;
    struct SharedVar {
        std::uintptr_t begin = 0, end = 0;
        std::uint32_t block_serial = 0;
    };
    std::vector<SharedVar> shared_vars;
    // errors
    cudaError_t last_error = cudaSuccess;     // cudaGetLastError
    cudaError_t pending_error = cudaSuccess;  // returned by the next synchronizing call
    // statistics
    std::uint64_t threads_run = 0, blocks_run = 0, launches = 0;
};
Runtime& rt();
const Options& opts();

inline Thread* cur() { return rt().current; }
// Suspends the running CUDA thread (its state says why) and returns when it is resumed.
void yield_to_scheduler();
// Ends the whole kernel from inside a CUDA thread: the grid stops, `error` is reported at the
// next synchronizing call.
[[noreturn]] void abort_kernel(cudaError_t error);

// ------------------------------------------------------------------ device memory
struct Allocation {
    std::uintptr_t begin = 0;
    std::size_t bytes = 0;
    std::size_t mapped = 0;
    bool freed = false;
    bool host = false;  // cudaMallocHost / cudaHostAlloc (pinned, usable by kernels)
    std::string where, freed_where;
    std::vector<struct Shadow>* shadow = nullptr;  // per 4-byte granule, check mode
    // The part the learner's code may touch, when the checker says so (an output between its
    // guard zones): accesses outside it are out of bounds, with the learner's line.
    std::uintptr_t user_begin = 0, user_end = 0;
};
bool in_arena(std::uintptr_t a);
// The allocation that holds [a, a + n): null when none does; *nearest gets the allocation
// nearest below a (for out-of-bounds messages).
Allocation* find_allocation(std::uintptr_t a, Allocation** nearest);
bool is_device_pointer(const void* p);
bool is_host_accessible_device(const void* p);
void reset_shadow_for_launch();

// ------------------------------------------------------------------ diagnostics
struct Shadow {
    std::uint32_t w_block = 0;  // block serial of the last write (0: none)
    std::uint32_t w_epoch = 0, w_wsync = 0;
    std::uint16_t w_tid = 0;
    std::uint8_t w_atomic = 0;
    std::uint64_t w_seq = 0;
    const void* w_pc = nullptr;
    std::uint32_t r_block = 0;
    std::uint32_t r_epoch = 0, r_wsync = 0;
    std::uint16_t r_tid = 0;
    const void* r_pc = nullptr;
};

void report(Diagnostic d);
std::string where_pc(const void* pc);  // "file.cu:12" of a code address
std::string thread_name(const Thread& t);
std::string block_name(uint3 b);
std::string site(const char* file, int line);

// Memory access by the running CUDA thread (called from the TSan hooks and atomics).
void on_access(std::uintptr_t a, unsigned size, bool write, bool atomic, const void* pc,
               bool check_alignment = true);
void on_block_start();
void on_block_end();
void on_launch_end();

}  // namespace cudalings_emu
