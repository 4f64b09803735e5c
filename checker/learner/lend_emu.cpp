// lend.h under the CPU emulator: one shared memory for every loan (emulator.h).
#include <cuda_runtime.h>
#include <unistd.h>

#include "cudalings_emu/emulator.h"
#include "lend.h"

namespace cudalings::lend {

int shared_memory(std::string* why) {
    static int fd = -2;
    static std::string error;
    if (fd == -2) fd = cudalings_emu::share_device_memory(&error);
    if (fd < 0 && why) *why = error;
    return fd;
}

std::size_t granularity() { return 4096; }

bool make(std::size_t bytes, Loan& loan, std::string* why) {
    loan = Loan{};
    if (shared_memory(why) < 0) return false;
    void* p = nullptr;
    loan.bytes = (bytes + 4095) / 4096 * 4096;
    if (loan.bytes == 0) loan.bytes = 4096;
    if (cudaMalloc(&p, loan.bytes) != cudaSuccess) {
        if (why) *why = "cudaMalloc of shared device memory failed";
        return false;
    }
    loan.address = reinterpret_cast<std::uintptr_t>(p);
    return true;
}

void release(Loan& loan) {
    if (loan.address) cudaFree(reinterpret_cast<void*>(loan.address));
    if (loan.fd >= 0) ::close(loan.fd);
    loan = Loan{};
}

bool join(int shared_fd, std::string* why) {
    if (shared_fd < 0) {
        if (why) *why = "no shared device memory from the judge (descriptor 4)";
        return false;
    }
    const bool ok = cudalings_emu::join_device_memory(shared_fd, why);
    ::close(shared_fd);  // the mapping keeps it
    return ok;
}

std::uintptr_t import(int fd, std::size_t bytes, std::uintptr_t address, std::string* why) {
    if (fd >= 0) ::close(fd);
    return cudalings_emu::adopt_allocation(reinterpret_cast<const void*>(address), bytes, "",
                                           why)
               ? address
               : 0;
}

// The judge took the loan back: the adopted allocation is closed here for good.
void unmap(std::uintptr_t address, std::size_t) {
    cudalings_emu::drop_allocation(reinterpret_cast<const void*>(address));
}

}  // namespace cudalings::lend
