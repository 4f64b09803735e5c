// The lesson kit: launching a kernel from a header. The CPU emulator's rewriter turns
// `k<<<grid, block, shmem, stream>>>(args)` into a call of its runtime, but only in the file it
// rewrites, never in the headers that file includes; kernels launched from kit headers (templates
// over a lesson's functors) use this macro instead, which spells the launch both ways.
#pragma once

#ifdef CUDALINGS_EMULATOR
#define KIT_LAUNCH(kernel, grid, block, shmem, stream, ...)                                  \
    ::cudalings_emu::Launch(__FILE__, __LINE__, #kernel, (grid), (block), (shmem), (stream)) \
        .go([&](auto&... kit_launch_args) { kernel(kit_launch_args...); }, __VA_ARGS__)
#else
#define KIT_LAUNCH(kernel, grid, block, shmem, stream, ...) \
    kernel<<<(grid), (block), (shmem), (stream)>>>(__VA_ARGS__)
#endif
