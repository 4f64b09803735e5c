#include "lend.h"

#include <cuda.h>
#include <cuda_runtime.h>
#include <unistd.h>

namespace cudalings::lend {
namespace {

// The driver's virtual memory API, found through the runtime (which loads libcuda itself): a
// program that links this runs, and says "no GPU", on a machine without the driver.
struct Driver {
    decltype(&cuMemCreate) create = nullptr;
    decltype(&cuMemRelease) release = nullptr;
    decltype(&cuMemAddressReserve) reserve = nullptr;
    decltype(&cuMemAddressFree) address_free = nullptr;
    decltype(&cuMemMap) map = nullptr;
    decltype(&cuMemUnmap) unmap = nullptr;
    decltype(&cuMemSetAccess) set_access = nullptr;
    decltype(&cuMemExportToShareableHandle) export_handle = nullptr;
    decltype(&cuMemImportFromShareableHandle) import_handle = nullptr;
    decltype(&cuMemGetAllocationGranularity) granularity = nullptr;
    decltype(&cuGetErrorName) error_name = nullptr;
    bool ok = false;
};

template <typename F>
bool entry(const char* name, F& fn) {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &found) !=
            cudaSuccess ||
        found != cudaDriverEntryPointSuccess || !p)
        return false;
    fn = reinterpret_cast<F>(p);
    return true;
}

const Driver& cu() {
    static const Driver d = [] {
        Driver x;
        x.ok = entry("cuMemCreate", x.create) && entry("cuMemRelease", x.release) &&
               entry("cuMemAddressReserve", x.reserve) &&
               entry("cuMemAddressFree", x.address_free) && entry("cuMemMap", x.map) &&
               entry("cuMemUnmap", x.unmap) && entry("cuMemSetAccess", x.set_access) &&
               entry("cuMemExportToShareableHandle", x.export_handle) &&
               entry("cuMemImportFromShareableHandle", x.import_handle) &&
               entry("cuMemGetAllocationGranularity", x.granularity) &&
               entry("cuGetErrorName", x.error_name);
        return x;
    }();
    return d;
}

CUmemAllocationProp exportable() {
    CUmemAllocationProp p{};
    p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p.location.id = 0;
    p.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    return p;
}

CUmemAccessDesc read_write() {
    CUmemAccessDesc d{};
    d.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    d.location.id = 0;
    d.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    return d;
}

bool ok(CUresult r, const char* what, std::string* why) {
    if (r == CUDA_SUCCESS) return true;
    const char* name = nullptr;
    if (cu().error_name) cu().error_name(r, &name);
    if (why) *why = std::string(what) + ": " + (name ? name : "unknown error");
    return false;
}

// Maps `handle` at a fresh address range of `bytes`: the address, or 0.
CUdeviceptr map(CUmemGenericAllocationHandle handle, std::size_t bytes, std::string* why) {
    CUdeviceptr p = 0;
    if (!ok(cu().reserve(&p, bytes, 0, 0, 0), "cuMemAddressReserve", why)) return 0;
    if (!ok(cu().map(p, bytes, 0, handle, 0), "cuMemMap", why)) {
        cu().address_free(p, bytes);
        return 0;
    }
    const CUmemAccessDesc access = read_write();
    if (!ok(cu().set_access(p, bytes, &access, 1), "cuMemSetAccess", why)) {
        cu().unmap(p, bytes);
        cu().address_free(p, bytes);
        return 0;
    }
    return p;
}

}  // namespace

std::size_t granularity() {
    static std::size_t g = [] {
        std::size_t value = 0;
        if (!cu().ok) return std::size_t{2} << 20;
        CUmemAllocationProp prop = exportable();
        if (cu().granularity(&value, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) !=
            CUDA_SUCCESS)
            value = std::size_t{2} << 20;
        return value;
    }();
    return g;
}

bool make(std::size_t bytes, Loan& loan, std::string* why) {
    if (!cu().ok) {
        if (why) *why = "the CUDA driver's virtual memory API is not available";
        return false;
    }
    const std::size_t g = granularity();
    loan = Loan{};
    loan.bytes = (bytes == 0 ? g : (bytes + g - 1) / g * g);
    CUmemAllocationProp prop = exportable();
    CUmemGenericAllocationHandle handle;
    if (!ok(cu().create(&handle, loan.bytes, &prop, 0), "cuMemCreate", why)) return false;
    CUdeviceptr p = map(handle, loan.bytes, why);
    int fd = -1;
    const bool exported =
        p && ok(cu().export_handle(&fd, handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                                             0),
                "cuMemExportToShareableHandle", why);
    cu().release(handle);  // the mapping (and the descriptor) keep the memory
    if (!exported) {
        if (p) {
            cu().unmap(p, loan.bytes);
            cu().address_free(p, loan.bytes);
        }
        return false;
    }
    loan.address = p;
    loan.fd = fd;
    return true;
}

void release(Loan& loan) {
    if (loan.address && cu().ok) {
        cu().unmap(loan.address, loan.bytes);
        cu().address_free(loan.address, loan.bytes);
    }
    if (loan.fd >= 0) ::close(loan.fd);
    loan = Loan{};
}

int shared_memory(std::string*) { return -1; }

bool join(int shared_fd, std::string* why) {
    if (shared_fd < 0) return true;
    if (why) *why = "a GPU's loans need no shared memory";
    return false;
}

std::uintptr_t import(int fd, std::size_t bytes, std::uintptr_t, std::string* why) {
    if (!cu().ok) {
        ::close(fd);
        if (why) *why = "the CUDA driver's virtual memory API is not available";
        return 0;
    }
    CUmemGenericAllocationHandle handle;
    const bool imported = ok(
        cu().import_handle(&handle, reinterpret_cast<void*>(static_cast<std::intptr_t>(fd)),
                                       CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
        "cuMemImportFromShareableHandle", why);
    ::close(fd);
    if (!imported) return 0;
    CUdeviceptr p = map(handle, bytes, why);
    cu().release(handle);
    return p;
}

void unmap(std::uintptr_t address, std::size_t bytes) {
    if (!address || !cu().ok) return;
    cu().unmap(address, bytes);
    cu().address_free(address, bytes);
}

}  // namespace cudalings::lend
