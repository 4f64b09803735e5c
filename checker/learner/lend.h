// Device memory the judge owns and lends to the learner's process: allocated with CUDA's
// virtual memory API (cuMemCreate) as an allocation that can be exported as a POSIX file
// descriptor, which travels over the judge's socket (wire.h) and is imported and mapped on the
// other side. It works across PID and user namespaces (the grading sandbox), where the legacy
// IPC API (cudaIpcGetMemHandle) does not. Sizes are rounded up to the allocation granularity
// (2 MiB on the GPUs measured), so a guard zone inside a loan stays where the judge put it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace cudalings::lend {

// The judge's side: one allocation, mapped here, and its descriptor (owned; -1 once sent).
struct Loan {
    std::uintptr_t address = 0;
    std::size_t bytes = 0;  // rounded up to the granularity
    int fd = -1;
};

// The granularity of device 0's exportable allocations.
std::size_t granularity();
// Allocates at least `bytes` on device 0, maps it here with read/write access, exports it.
// False, with `why`, when the device or driver cannot.
bool make(std::size_t bytes, Loan& loan, std::string* why);
// Unmaps and frees (the memory lives on while the learner still maps it) and closes the fd.
void release(Loan& loan);

// The learner's side: imports a descriptor the judge sent and maps `bytes` of it, read/write,
// on device 0; closes the descriptor. The address, or 0 with `why`.
std::uintptr_t import(int fd, std::size_t bytes, std::string* why);
void unmap(std::uintptr_t address, std::size_t bytes);

}  // namespace cudalings::lend
