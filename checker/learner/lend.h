// Device memory the judge owns and lends to the learner's process: allocated with CUDA's
// virtual memory API (cuMemCreate) as an allocation that can be exported as a POSIX file
// descriptor, which travels over the judge's socket (wire.h) and is imported and mapped on the
// other side. A descriptor is a capability: the learner maps what it was sent and nothing else,
// across PID and user namespaces (the grading sandbox). The legacy IPC API (cudaIpcGetMemHandle)
// is not used: anything of the same user that learns a handle's bytes can open it. Sizes are
// rounded up to the allocation granularity (2 MiB on the GPUs measured), so a guard zone inside a
// loan stays where the judge put it.
//
// Under the CPU emulator (lend_emu.cpp) device memory is host memory: the judge's emulator puts
// it in a memfd (emulator.h, share_device_memory) that the learner's process maps at the same
// address (its descriptor travels once, on the learner's descriptor 4); a loan then needs no
// descriptor of its own, only its address, which the learner adopts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace cudalings::lend {

// The judge's side: one allocation, mapped here, and its descriptor (owned until release: each
// process it is lent to gets a copy).
struct Loan {
    std::uintptr_t address = 0;
    std::size_t bytes = 0;  // rounded up to the granularity
    int fd = -1;            // -1 under the emulator: the address is the loan
};

// The descriptor of the device memory the learner's process must map before any loan (the
// emulator's shared memory), made once; -1 where loans need none (a GPU). `why` is set only when
// making it failed.
int shared_memory(std::string* why);

// The granularity of device 0's exportable allocations.
std::size_t granularity();
// Allocates at least `bytes` on device 0, maps it here with read/write access, exports it.
// False, with `why`, when the device or driver cannot.
bool make(std::size_t bytes, Loan& loan, std::string* why);
// Unmaps and frees (the memory lives on while the learner still maps it) and closes the fd.
void release(Loan& loan);

// The learner's side. join: maps the judge's shared memory (the descriptor shared_memory() made
// there; a no-op with -1). import: a descriptor the judge sent (closed here), mapped read/write
// on device 0, or under the emulator the judge's `address` adopted; the address, or 0 with `why`.
bool join(int shared_fd, std::string* why);
std::uintptr_t import(int fd, std::size_t bytes, std::uintptr_t address, std::string* why);
void unmap(std::uintptr_t address, std::size_t bytes);

}  // namespace cudalings::lend
