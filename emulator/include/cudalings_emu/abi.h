// The interface between code compiled for emulation (the forced-include header cuda_emu.h,
// inlined into the learner's kernels) and the emulator's runtime library (libcudalings_emu).
// Nothing here is for learners: they see CUDA, nothing else.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#define CUDALINGS_EMU_API __attribute__((visibility("default")))

namespace cudalings_emu {

// The built-in variables of the CUDA thread that is running now.
// The checker's harness: [p, p + bytes) is the array a kernel may touch inside its allocation
// (the rest is guard zone); an access outside it is reported as out of bounds at its line.
CUDALINGS_EMU_API void cudalings_emu_set_extent(const void* p, size_t bytes);
CUDALINGS_EMU_API uint3 thread_idx();
CUDALINGS_EMU_API uint3 block_idx();
CUDALINGS_EMU_API dim3 block_dim();
CUDALINGS_EMU_API dim3 grid_dim();

// Names the checker's arrays (for "workspace[257]" in reports) and says which 32-bit pattern is
// its poison: a kernel's store of exactly that pattern is written as the GPU's canonical NaN
// (0x7fffffff), because on a GPU arithmetic on a NaN never keeps its payload (x86 does).
CUDALINGS_EMU_API void cudalings_emu_name_array(const void* p, const char* name,
                                                std::size_t element_bytes);
CUDALINGS_EMU_API void cudalings_emu_set_poison(std::uint32_t bits);
// The checker's kit made the allocation at p for itself (dev::allocate): reports name it by the
// buffer's name the checker gives it, or as the checker's own memory, never by the kit's line.
CUDALINGS_EMU_API void cudalings_emu_checker_memory(const void* p);

// Space for one launch's kernel parameters (valid until the launch returns).
CUDALINGS_EMU_API void* parameter_space(std::size_t bytes, std::size_t align);

// A `__shared__` declaration: one static key per declaration (per template instantiation), and
// the variable's shape. shared_slot returns the running block's copy, in the block's shared
// memory window (poisoned with 0xFF bytes at its first use in every block, red zones around it).
struct SharedKey {
    std::uint32_t launch = 0;
    std::uint32_t index = 0;
};
struct SharedShape {
    std::size_t bytes, align, element, rank;
    std::size_t dims[4];
};
CUDALINGS_EMU_API void* shared_slot(SharedKey* key, const SharedShape& shape, const char* name);

// One kernel launch as written at a `<<<...>>>` site.
struct LaunchSite {
    const char* file;
    int line;
    const char* kernel;  // the callee as written ("vector_add_kernel")
};

struct LaunchConfig {
    dim3 grid, block;
    std::size_t shared_bytes;
    cudaStream_t stream;
};

using KernelBody = void (*)(void* closure);

// Validates the configuration (as the GPU does) and runs the whole grid before returning.
// `pointer_args` lists the kernel's pointer-typed arguments (for the host-pointer check).
CUDALINGS_EMU_API void launch(const LaunchSite& site, const LaunchConfig& config, KernelBody body,
                              void* closure, const void* const* pointer_args, int pointer_count);

CUDALINGS_EMU_API void* dynamic_shared();
// The same, for `extern __shared__ T name[];` (its name and element size are remembered).
CUDALINGS_EMU_API void* dynamic_shared_named(const char* name, std::size_t element);
// cudaFuncSetAttribute(kernel, ...), with the kernel as written (`text`: for the launch's
// opt-in to more than 48 KiB of dynamic shared memory) and its address.
CUDALINGS_EMU_API cudaError_t func_set_attribute(const char* text, const void* kernel,
                                                 cudaFuncAttribute attr, int value);
// Something the emulator cannot run (a grid-wide sync, a cudaLaunchKernel of a kernel it cannot
// see): reported as "unsupported" (the checker makes the step SKIPPED, never a verdict).
CUDALINGS_EMU_API void unsupported(const char* what, const char* file, int line);

// Barriers and warp collectives; file/line name the call site in the learner's file.
CUDALINGS_EMU_API void syncthreads(const char* file, int line);
// kind: 0 count, 1 and, 2 or
CUDALINGS_EMU_API int syncthreads_reduce(int kind, int predicate, const char* file, int line);

enum WarpOp : int {
    kSyncWarp,
    kShflIdx,
    kShflUp,
    kShflDown,
    kShflXor,
    kBallot,
    kAny,
    kAll,
    kMatchAny,
    kMatchAll,
    kReduceAdd,
    kReduceMin,
    kReduceMax,
    kReduceUMin,
    kReduceUMax,
    kReduceAnd,
    kReduceOr,
    kReduceXor,
    kActiveMask,  // __activemask(): the lanes that reach this call together
};
// Every lane named in `mask` meets here; returns this lane's result. `bytes` is the size of
// the value (shuffles of 8-byte types move 8 bytes). For kMatchAll, *pred receives the flag.
CUDALINGS_EMU_API unsigned long long warp_op(int op, unsigned mask, unsigned long long value,
                                             int bytes, int arg, int width, int* pred,
                                             const char* file, int line);
CUDALINGS_EMU_API unsigned activemask(const char* file, int line);
CUDALINGS_EMU_API unsigned lane_id();
CUDALINGS_EMU_API void threadfence(int scope);  // 0 block, 1 device, 2 system
CUDALINGS_EMU_API void device_trap(const char* what, const char* file, int line);

// The symbol a `cudaMalloc` call site names, for "allocated at file:line" (and the pointer's
// name as written, "&partials", with its element size, for "partials[257]").
CUDALINGS_EMU_API cudaError_t malloc_at(void** p, std::size_t bytes, const char* file, int line);
CUDALINGS_EMU_API cudaError_t malloc_named(void** p, std::size_t bytes, const char* file, int line,
                                           const char* text, std::size_t element);
CUDALINGS_EMU_API cudaError_t free_at(void* p, const char* file, int line);
CUDALINGS_EMU_API cudaError_t memcpy_at(void* dst, const void* src, std::size_t bytes,
                                        cudaMemcpyKind kind, const char* file, int line);

}  // namespace cudalings_emu
