// The CUDA runtime API on the emulator: one emulated device, device memory as one reserved
// address range with unmapped gaps between allocations (so out-of-bounds accesses and
// use-after-free are found), streams and events that are synchronous, and errors reported
// as the GPU reports them (launch errors by cudaGetLastError, kernel faults by the next
// synchronizing call).
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

#include "internal.h"

namespace cudalings_emu {
namespace {

constexpr std::size_t kArenaBytes = std::size_t{1} << 40;  // reserved, not committed
constexpr std::size_t kGap = 64 * 1024;                    // unmapped between allocations
// In dry mode (the sizes too large to emulate whole, where a sample of blocks runs), 16 GiB
// unmapped on either side of an allocation: an index that a 32-bit product threw off (any int
// times an element of up to 8 bytes) lands in a gap, never in the next array.
constexpr std::size_t kDryGap = std::size_t{16} << 30;
constexpr std::size_t kPage = 4096;

// Where a shared arena is mapped, in the judge's process and the learner's alike: 16 TiB, far
// below where the loader and mmap put anything on x86-64 and AArch64 (top-down from 128 TiB or
// 256 TiB) and above the executable (at most a few GiB).
constexpr std::uintptr_t kSharedArenaAt = std::uintptr_t{1} << 44;

struct Arena {
    std::uintptr_t begin = 0, end = 0, next = 0;
    std::size_t gap_before_next = kGap;  // unmapped between the last allocation and `next`
    std::map<std::uintptr_t, std::unique_ptr<Allocation>> allocations;  // by begin
    // The device allocations the protection opens and closes around kernels (neither freed nor
    // pinned), by begin; and the pinned ones, which stay open: a run of closed memory that
    // spans none of them closes with one mprotect.
    std::map<std::uintptr_t, Allocation*> closable;
    std::map<std::uintptr_t, Allocation*> pinned;
    Allocation* last = nullptr;
};

Arena& the_arena() {
    static Arena a;
    return a;
}

// Maps the shared arena at kSharedArenaAt: the judge's half (lower) or the learner's (upper).
bool map_shared_arena(Arena& a, int fd, bool upper, std::string* why) {
    if (a.begin) {
        if (why) *why = "device memory is already in use";
        return false;
    }
    void* m = ::mmap(reinterpret_cast<void*>(kSharedArenaAt), kArenaBytes, PROT_NONE,
                     MAP_SHARED | MAP_FIXED_NOREPLACE | MAP_NORESERVE, fd, 0);
    if (m == MAP_FAILED || reinterpret_cast<std::uintptr_t>(m) != kSharedArenaAt) {
        if (why) *why = std::string("cannot map shared device memory: ") + std::strerror(errno);
        if (m != MAP_FAILED) ::munmap(m, kArenaBytes);
        return false;
    }
    a.begin = kSharedArenaAt;
    a.end = upper ? a.begin + kArenaBytes : a.begin + kArenaBytes / 2;
    a.next = (upper ? a.begin + kArenaBytes / 2 : a.begin) + kGap;
    return true;
}

Arena& arena() {
    Arena& a = the_arena();
    if (!a.begin) {
        void* m = ::mmap(nullptr, kArenaBytes, PROT_NONE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED) {
            std::perror("cudalings emulator: cannot reserve device memory");
            std::abort();
        }
        a.begin = reinterpret_cast<std::uintptr_t>(m);
        a.end = a.begin + kArenaBytes;
        a.next = a.begin + kGap;
    }
    return a;
}

// Device memory is out of host code's reach outside kernels, as on a GPU: every device
// allocation is PROT_NONE except while a kernel runs or the runtime itself copies or sets it, so
// host code that dereferences a device pointer ends with SIGSEGV there as it would on a GPU
// (CUDALINGS_EMU_PROTECT=0 turns this off). Pinned host memory stays open.
struct Protection {
    std::mutex m;
    int open = 0;  // how many DeviceAccess scopes are open
    bool on = [] {
        const char* v = std::getenv("CUDALINGS_EMU_PROTECT");
        return !(v && std::string(v) == "0");
    }();
};
Protection& protection() {
    static Protection p;
    return p;
}
void set_access(const Allocation& a, bool open) {
    if (a.host || a.freed) return;
    const int prot = open ? PROT_READ | PROT_WRITE : PROT_NONE;
    std::uintptr_t lo = 0, hi = 0;
    if (a.sampled && on_demand_span(a, &lo, &hi)) {  // its pages keep their own protection
        if (lo > a.begin) ::mprotect(reinterpret_cast<void*>(a.begin), lo - a.begin, prot);
        if (a.begin + a.mapped > hi)
            ::mprotect(reinterpret_cast<void*>(hi), a.begin + a.mapped - hi, prot);
        return;
    }
    ::mprotect(reinterpret_cast<void*>(a.begin), a.mapped, prot);
}
// Opens every closable allocation (one mprotect each: the gaps between them stay closed), or
// closes them all. Closing coalesces: what lies between two allocations is a gap or a freed
// allocation, closed already, unless a pinned allocation lies there or the pages of an
// allocation's values made on demand (which keep their own protection); so one mprotect closes
// each run of allocations between those.
void set_all_access(bool open) {
    Arena& ar = the_arena();
    if (open) {
        for (auto& [begin, a] : ar.closable) set_access(*a, true);
        return;
    }
    std::uintptr_t run_lo = 0, run_hi = 0;  // the run being gathered, [run_lo, run_hi)
    auto flush = [&] {
        if (run_hi > run_lo)
            ::mprotect(reinterpret_cast<void*>(run_lo), run_hi - run_lo, PROT_NONE);
        run_lo = run_hi = 0;
    };
    auto add = [&](std::uintptr_t lo, std::uintptr_t hi) {
        if (lo >= hi) return;
        if (run_hi > run_lo) {
            auto p = ar.pinned.lower_bound(run_hi);
            if (p != ar.pinned.end() && p->first < lo) flush();  // a pinned allocation between
        }
        if (run_hi > run_lo)
            run_hi = hi;
        else
            run_lo = lo, run_hi = hi;
    };
    for (auto& [begin, a] : ar.closable) {
        std::uintptr_t lo = 0, hi = 0;
        if (a->sampled && on_demand_span(*a, &lo, &hi)) {
            add(a->begin, lo);
            flush();  // the span between stays as it is
            add(hi, a->begin + a->mapped);
        } else {
            add(a->begin, a->begin + a->mapped);
        }
    }
    flush();
}

cudaError_t set_error(cudaError_t e) {
    if (e != cudaSuccess) rt().last_error = e;
    return e;
}

// Synchronizing calls return a fault a kernel left behind (once).
cudaError_t take_pending() {
    Runtime& r = rt();
    cudaError_t e = r.pending_error;
    r.pending_error = cudaSuccess;
    return e;
}

cudaError_t allocate(void** p, std::size_t bytes, bool host, const std::string& where) {
    if (!p) return set_error(cudaErrorInvalidValue);
    Arena& a = arena();
    std::size_t mapped = (bytes + kPage - 1) / kPage * kPage;
    if (mapped == 0) mapped = kPage;
    if (a.next + mapped + kGap > a.end) {
        *p = nullptr;
        return set_error(cudaErrorMemoryAllocation);
    }
    // Wide gaps in dry mode while the arena has room for them (else the usual ones).
    const std::size_t gap = opts().dry && a.next + 2 * kDryGap + mapped <= a.end ? kDryGap : kGap;
    std::uintptr_t at = a.next + (gap > a.gap_before_next ? gap - a.gap_before_next : 0);
    if (::mprotect(reinterpret_cast<void*>(at), mapped, PROT_READ | PROT_WRITE) != 0) {
        *p = nullptr;
        return set_error(cudaErrorMemoryAllocation);
    }
    a.next = at + mapped + gap;
    a.gap_before_next = gap;
    auto alloc = std::make_unique<Allocation>();
    alloc->begin = at;
    alloc->bytes = bytes;
    alloc->mapped = mapped;
    alloc->host = host;
    alloc->where = where;
    {
        Protection& pr = protection();
        std::lock_guard<std::mutex> lock(pr.m);
        if (pr.on && pr.open == 0) set_access(*alloc, false);
    }
    (host ? a.pinned : a.closable)[at] = alloc.get();
    a.allocations[at] = std::move(alloc);
    *p = reinterpret_cast<void*>(at);
    return cudaSuccess;
}

cudaError_t release(void* p, bool host, const std::string& where) {
    if (!p) return cudaSuccess;
    Arena& a = arena();
    auto it = a.allocations.find(reinterpret_cast<std::uintptr_t>(p));
    if (it == a.allocations.end() || it->second->freed || it->second->host != host) {
        Diagnostic d;
        d.kind = "free";
        d.severity = "error";
        d.message = std::string(host ? "cudaFreeHost" : "cudaFree") + " of a pointer that " +
                    (it == a.allocations.end() ? "is not the start of an allocation"
                     : it->second->freed ? "was already freed (at " + it->second->freed_where + ")"
                                         : "was allocated by the other allocator");
        auto colon = where.rfind(':');
        d.file = where.substr(0, colon);
        d.line = colon == std::string::npos ? 0 : std::atoi(where.c_str() + colon + 1);
        report(d);
        return set_error(cudaErrorInvalidValue);
    }
    Allocation& al = *it->second;
    a.closable.erase(al.begin);
    a.pinned.erase(al.begin);
    if (al.sampled) forget_sampled(al);
    al.freed = true;
    al.freed_where = where;
    ::madvise(p, al.mapped, MADV_DONTNEED);
    ::mprotect(p, al.mapped, PROT_NONE);
    delete al.shadow;
    al.shadow = nullptr;
    if (a.last == &al) a.last = nullptr;
    return cudaSuccess;
}

std::string here(const char* file, int line) {
    return file ? std::string(file) + ":" + std::to_string(line) : "an unknown place";
}

// Which kind of memory a pointer is, for cudaMemcpy's checks.
enum class Space { Host, Device, Pinned, Bad };
Space space_of(const void* p, std::size_t bytes, std::string* why) {
    auto a = reinterpret_cast<std::uintptr_t>(p);
    // Static data may be a __device__ variable (cudaGetSymbolAddress) or a host array: both.
    if (!in_arena(a)) return in_loaded_module(a) ? Space::Pinned : Space::Host;
    Allocation* nearest = nullptr;
    Allocation* al = find_allocation(a, &nearest);
    if (!al) {
        *why = "is not inside any device allocation";
        return Space::Bad;
    }
    if (al->freed) {
        *why = "points into memory freed at " + al->freed_where;
        return Space::Bad;
    }
    if (a + bytes > al->begin + al->bytes) {
        *why = "has only " + std::to_string(al->begin + al->bytes - a) + " of the " +
               std::to_string(bytes) + " bytes in its allocation (allocated at " + al->where + ")";
        return Space::Bad;
    }
    return al->host ? Space::Pinned : Space::Device;
}

void memcpy_diagnostic(const char* file, int line, const std::string& message) {
    Diagnostic d;
    d.kind = "memcpy";
    d.severity = "error";
    d.file = file ? file : "";
    d.line = line;
    d.message = message;
    report(d);
}

cudaError_t do_memcpy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind,
                      const char* file, int line) {
    if (bytes == 0) return cudaSuccess;
    if (!dst || !src) {
        memcpy_diagnostic(file, line, "cudaMemcpy with a null pointer");
        return set_error(cudaErrorInvalidValue);
    }
    std::string why_d, why_s;
    Space d = space_of(dst, bytes, &why_d), s = space_of(src, bytes, &why_s);
    if (d == Space::Bad || s == Space::Bad) {
        memcpy_diagnostic(file, line,
                          std::string("cudaMemcpy of ") + std::to_string(bytes) + " bytes: the " +
                              (d == Space::Bad ? "destination " + why_d : "source " + why_s));
        return set_error(cudaErrorInvalidValue);
    }
    DeviceAccess access;
    auto is_dev = [](Space x) { return x == Space::Device || x == Space::Pinned; };
    auto is_host = [](Space x) { return x == Space::Host || x == Space::Pinned; };
    bool ok = true;
    std::string expect;
    switch (kind) {
        case cudaMemcpyHostToDevice:
            ok = is_host(s) && is_dev(d);
            expect = "HostToDevice";
            break;
        case cudaMemcpyDeviceToHost:
            ok = is_dev(s) && is_host(d);
            expect = "DeviceToHost";
            break;
        case cudaMemcpyDeviceToDevice:
            ok = is_dev(s) && is_dev(d);
            expect = "DeviceToDevice";
            break;
        case cudaMemcpyHostToHost:
            ok = is_host(s) && is_host(d);
            expect = "HostToHost";
            break;
        case cudaMemcpyDefault:
            break;
        default:
            memcpy_diagnostic(file, line, "cudaMemcpy with an invalid kind");
            return set_error(cudaErrorInvalidMemcpyDirection);
    }
    if (!ok) {
        auto name = [](Space x) { return x == Space::Host ? "host" : "device"; };
        bool swapped = (kind == cudaMemcpyHostToDevice && s == Space::Device && d == Space::Host) ||
                       (kind == cudaMemcpyDeviceToHost && s == Space::Host && d == Space::Device);
        memcpy_diagnostic(file, line,
                          "cudaMemcpy" + expect + " but the destination is " + name(d) +
                              " memory and the source is " + name(s) + " memory" +
                              (swapped ? ": the arguments are swapped — cudaMemcpy(dst, src, "
                                         "bytes, kind) takes the destination first"
                                       : ""));
        return set_error(cudaErrorInvalidValue);
    }
    if (!(opts().dry && is_dev(s) && is_dev(d))) {
        if (is_dev(s)) make_on_demand(src, bytes);
        std::memmove(dst, src, bytes);
    } else if (bytes) {
        rt().sample_intact = false;  // the destination is not what it would be
        if (opts().sample_blocks) ++rt().sample_skips;
    }
    return cudaSuccess;
}

struct EventImpl {
    double ms = 0;
    bool recorded = false;
};

double now_ms() {
    using namespace std::chrono;
    return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

}  // namespace

bool is_device_address(const void* p) {
    const Arena& a = the_arena();  // never made here: a fault handler asks
    const auto at = reinterpret_cast<std::uintptr_t>(p);
    return a.begin != 0 && at >= a.begin && at < a.begin + kArenaBytes;
}

int share_device_memory(std::string* why) {
    int fd = ::memfd_create("cudalings-device-memory", MFD_CLOEXEC);
    if (fd < 0 || ::ftruncate(fd, static_cast<off_t>(kArenaBytes)) != 0) {
        if (why) *why = std::string("cannot make shared device memory: ") + std::strerror(errno);
        if (fd >= 0) ::close(fd);
        return -1;
    }
    if (!map_shared_arena(the_arena(), fd, false, why)) {
        ::close(fd);
        return -1;
    }
    return fd;
}

bool join_device_memory(int fd, std::string* why) {
    return map_shared_arena(the_arena(), fd, true, why);
}

bool adopt_allocation(const void* p, std::size_t bytes, const std::string& name, std::string* why) {
    Arena& a = arena();
    const auto at = reinterpret_cast<std::uintptr_t>(p);
    const std::size_t mapped = std::max<std::size_t>((bytes + kPage - 1) / kPage * kPage, kPage);
    if (at % kPage != 0 || at < a.begin || at + mapped > a.begin + kArenaBytes / 2 ||
        a.allocations.count(at)) {
        if (why) *why = "not an allocation of the shared device memory's lower half";
        return false;
    }
    if (::mprotect(reinterpret_cast<void*>(at), mapped, PROT_READ | PROT_WRITE) != 0) {
        if (why) *why = std::string("mprotect: ") + std::strerror(errno);
        return false;
    }
    auto alloc = std::make_unique<Allocation>();
    alloc->begin = at;
    alloc->bytes = bytes;
    alloc->mapped = mapped;
    alloc->where = "the checker";
    alloc->checker = true;
    alloc->name = name;
    alloc->host_named = !name.empty();
    {
        // Closed to host code outside kernels, as this process's own allocations are.
        Protection& pr = protection();
        std::lock_guard<std::mutex> lock(pr.m);
        if (pr.on && pr.open == 0) set_access(*alloc, false);
    }
    a.closable[at] = alloc.get();
    a.allocations[at] = std::move(alloc);
    return true;
}

void drop_allocation(const void* p) {
    Arena& a = arena();
    auto it = a.allocations.find(reinterpret_cast<std::uintptr_t>(p));
    if (it == a.allocations.end() || !it->second->checker || it->second->freed) return;
    Allocation& al = *it->second;
    a.closable.erase(al.begin);
    if (al.sampled) forget_sampled(al);
    al.freed = true;
    al.freed_where = "the checker (it took the buffer back)";
    ::mprotect(reinterpret_cast<void*>(al.begin), al.mapped, PROT_NONE);
    delete al.shadow;
    al.shadow = nullptr;
    if (a.last == &al) a.last = nullptr;
}

bool in_arena(std::uintptr_t a) {
    Arena& ar = arena();
    return a - ar.begin < kArenaBytes;
}

Allocation* find_allocation(std::uintptr_t a, Allocation** nearest) {
    Arena& ar = arena();
    if (ar.last && a - ar.last->begin < ar.last->bytes) return ar.last;
    auto it = ar.allocations.upper_bound(a);
    if (nearest) *nearest = nullptr;
    if (it == ar.allocations.begin()) return nullptr;
    --it;
    Allocation* al = it->second.get();
    if (nearest) *nearest = al;
    if (a - al->begin < std::max<std::size_t>(al->bytes, 1)) {
        if (!al->freed) ar.last = al;
        return al;
    }
    return nullptr;
}

Allocation* allocation_after(std::uintptr_t a) {
    Arena& ar = arena();
    auto it = ar.allocations.upper_bound(a);
    return it == ar.allocations.end() ? nullptr : it->second.get();
}

bool is_device_pointer(const void* p) { return in_arena(reinterpret_cast<std::uintptr_t>(p)); }

DeviceAccess::DeviceAccess() {
    Protection& pr = protection();
    std::lock_guard<std::mutex> lock(pr.m);
    if (pr.on && pr.open++ == 0) set_all_access(true);
}
DeviceAccess::~DeviceAccess() {
    Protection& pr = protection();
    std::lock_guard<std::mutex> lock(pr.m);
    if (pr.on && --pr.open == 0) set_all_access(false);
}

cudaError_t malloc_at(void** p, std::size_t bytes, const char* file, int line) {
    return allocate(p, bytes, false, here(file, line));
}
cudaError_t free_at(void* p, const char* file, int line) {
    return release(p, false, here(file, line));
}
cudaError_t memcpy_at(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind,
                      const char* file, int line) {
    cudaError_t e = take_pending();
    if (e != cudaSuccess) return e;
    return do_memcpy(dst, src, bytes, kind, file, line);
}

}  // namespace cudalings_emu

using namespace cudalings_emu;

// ------------------------------------------------------------------ the C API
extern "C" {

CUDALINGS_EMU_API cudaError_t cudaMalloc(void** p, size_t bytes) {
    return allocate(p, bytes, false, "an unknown place");
}
CUDALINGS_EMU_API cudaError_t cudaMallocManaged(void** p, size_t bytes, unsigned) {
    return allocate(p, bytes, true, "an unknown place (managed)");
}
CUDALINGS_EMU_API cudaError_t cudaMallocHost(void** p, size_t bytes) {
    return allocate(p, bytes, true, "an unknown place (pinned host)");
}
CUDALINGS_EMU_API cudaError_t cudaHostAlloc(void** p, size_t bytes, unsigned) {
    return allocate(p, bytes, true, "an unknown place (pinned host)");
}
CUDALINGS_EMU_API cudaError_t cudaFree(void* p) { return release(p, false, "an unknown place"); }
CUDALINGS_EMU_API cudaError_t cudaFreeHost(void* p) { return release(p, true, "an unknown place"); }
CUDALINGS_EMU_API cudaError_t cudaMallocAsync(void** p, size_t bytes, cudaStream_t) {
    return allocate(p, bytes, false, "an unknown place (cudaMallocAsync)");
}
CUDALINGS_EMU_API cudaError_t cudaFreeAsync(void* p, cudaStream_t) {
    return release(p, false, "cudaFreeAsync");
}

CUDALINGS_EMU_API cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes,
                                         cudaMemcpyKind kind) {
    return memcpy_at(dst, src, bytes, kind, nullptr, 0);
}
CUDALINGS_EMU_API cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes,
                                              cudaMemcpyKind kind, cudaStream_t) {
    return do_memcpy(dst, src, bytes, kind, nullptr, 0);
}
CUDALINGS_EMU_API cudaError_t cudaMemset(void* p, int value, size_t bytes) {
    std::string why;
    if (bytes && space_of(p, bytes, &why) != Space::Device &&
        space_of(p, bytes, &why) != Space::Pinned) {
        memcpy_diagnostic(nullptr, 0,
                          "cudaMemset on memory that is not (all) device memory: " + why);
        return set_error(cudaErrorInvalidValue);
    }
    DeviceAccess access;
    if (!opts().dry)
        std::memset(p, value, bytes);
    else if (bytes && (value & 0xff) != 0) {
        rt().sample_intact = false;  // the memory stays 0, which a sample would read
        if (opts().sample_blocks) ++rt().sample_skips;
    }
    return cudaSuccess;
}
CUDALINGS_EMU_API cudaError_t cudaMemsetAsync(void* p, int value, size_t bytes, cudaStream_t) {
    return cudaMemset(p, value, bytes);
}
CUDALINGS_EMU_API cudaError_t cudaMemcpyToSymbol(const void* symbol, const void* src, size_t bytes,
                                                 size_t offset, cudaMemcpyKind) {
    std::memcpy(static_cast<char*>(const_cast<void*>(symbol)) + offset, src, bytes);
    return cudaSuccess;
}
CUDALINGS_EMU_API cudaError_t cudaMemcpyFromSymbol(void* dst, const void* symbol, size_t bytes,
                                                   size_t offset, cudaMemcpyKind) {
    std::memcpy(dst, static_cast<const char*>(symbol) + offset, bytes);
    return cudaSuccess;
}
CUDALINGS_EMU_API cudaError_t cudaMemcpyToSymbolAsync(const void* symbol, const void* src,
                                                      size_t bytes, size_t offset, cudaMemcpyKind k,
                                                      cudaStream_t) {
    return cudaMemcpyToSymbol(symbol, src, bytes, offset, k);
}
CUDALINGS_EMU_API cudaError_t cudaMemcpyFromSymbolAsync(void* dst, const void* symbol, size_t bytes,
                                                        size_t offset, cudaMemcpyKind k,
                                                        cudaStream_t) {
    return cudaMemcpyFromSymbol(dst, symbol, bytes, offset, k);
}
CUDALINGS_EMU_API cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total) {
    if (free_bytes) *free_bytes = std::size_t{16} << 30;
    if (total) *total = std::size_t{16} << 30;
    return cudaSuccess;
}

CUDALINGS_EMU_API cudaError_t cudaGetLastError(void) {
    Runtime& r = rt();
    cudaError_t e = r.last_error;
    r.last_error = cudaSuccess;
    return e;
}
CUDALINGS_EMU_API cudaError_t cudaPeekAtLastError(void) { return rt().last_error; }

CUDALINGS_EMU_API const char* cudaGetErrorName(cudaError_t e) {
#define CUDALINGS_ERROR(x) \
    { x, #x }
    static const struct {
        cudaError_t error;
        const char* name;
    } names[] = {
        CUDALINGS_ERROR(cudaSuccess),
        CUDALINGS_ERROR(cudaErrorInvalidValue),
        CUDALINGS_ERROR(cudaErrorMemoryAllocation),
        CUDALINGS_ERROR(cudaErrorInitializationError),
        CUDALINGS_ERROR(cudaErrorInvalidConfiguration),
        CUDALINGS_ERROR(cudaErrorInvalidMemcpyDirection),
        CUDALINGS_ERROR(cudaErrorInvalidDevice),
        CUDALINGS_ERROR(cudaErrorInvalidResourceHandle),
        CUDALINGS_ERROR(cudaErrorNotSupported),
        CUDALINGS_ERROR(cudaErrorIllegalAddress),
        CUDALINGS_ERROR(cudaErrorMisalignedAddress),
        CUDALINGS_ERROR(cudaErrorLaunchFailure),
        CUDALINGS_ERROR(cudaErrorLaunchTimeout),
        CUDALINGS_ERROR(cudaErrorAssert),
        CUDALINGS_ERROR(cudaErrorNoDevice),
        CUDALINGS_ERROR(cudaErrorInvalidDeviceFunction),
        CUDALINGS_ERROR(cudaErrorNotReady),
        CUDALINGS_ERROR(cudaErrorUnknown),
    };
#undef CUDALINGS_ERROR
    for (const auto& n : names)
        if (n.error == e) return n.name;
    return "cudaErrorUnknown";
}
CUDALINGS_EMU_API const char* cudaGetErrorString(cudaError_t e) {
    switch (e) {
        case cudaSuccess:
            return "no error";
        case cudaErrorInvalidValue:
            return "invalid argument";
        case cudaErrorMemoryAllocation:
            return "out of memory";
        case cudaErrorInvalidConfiguration:
            return "invalid configuration argument";
        case cudaErrorInvalidMemcpyDirection:
            return "invalid copy direction for memcpy";
        case cudaErrorIllegalAddress:
            return "an illegal memory access was encountered";
        case cudaErrorMisalignedAddress:
            return "misaligned address";
        case cudaErrorLaunchFailure:
            return "unspecified launch failure";
        case cudaErrorLaunchTimeout:
            return "the launch timed out and was terminated (the emulator found a deadlock)";
        case cudaErrorAssert:
            return "device-side assert triggered";
        case cudaErrorNotSupported:
            return "operation not supported";
        default:
            return "unknown error";
    }
}

CUDALINGS_EMU_API cudaError_t cudaDeviceSynchronize(void) { return take_pending(); }
CUDALINGS_EMU_API cudaError_t cudaDeviceReset(void) {
    rt().pending_error = cudaSuccess;
    rt().last_error = cudaSuccess;
    return cudaSuccess;
}
CUDALINGS_EMU_API cudaError_t cudaGetDeviceCount(int* n) {
    if (n) *n = 1;
    return cudaSuccess;
}
CUDALINGS_EMU_API cudaError_t cudaGetDevice(int* d) {
    if (d) *d = 0;
    return cudaSuccess;
}
CUDALINGS_EMU_API cudaError_t cudaSetDevice(int d) {
    return d == 0 ? cudaSuccess : set_error(cudaErrorInvalidDevice);
}
CUDALINGS_EMU_API cudaError_t cudaFree0() { return cudaSuccess; }

namespace {
// The emulated device has one SM unless CUDALINGS_EMU_SMS says otherwise. A kernel that sizes its
// grid from the SM count (one wave: SMs x blocks per SM) then has 2048 threads, fewer than the
// emulated sizes: its grid-stride loop goes round, and a bug between two iterations (a missing
// barrier at the end of a tile, a loop that is not there) shows without a GPU, as it does on a
// GPU at 2^28. With the H200's 132 SMs, one wave covers every size the emulator runs.
int emulated_sms() {
    static const int sms = [] {
        const char* env = std::getenv("CUDALINGS_EMU_SMS");
        const int n = env ? std::atoi(env) : 1;
        return n >= 1 && n <= 1024 ? n : 1;
    }();
    return sms;
}
}  // namespace

CUDALINGS_EMU_API cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int device) {
    if (!p || device != 0) return set_error(cudaErrorInvalidValue);
    std::memset(p, 0, sizeof *p);
    std::snprintf(p->name, sizeof p->name, "cudalings CPU emulator (sm_90 model)");
    p->major = 9;
    p->minor = 0;
    p->multiProcessorCount = emulated_sms();
    p->maxThreadsPerMultiProcessor = 2048;
    p->maxThreadsPerBlock = 1024;
    p->maxThreadsDim[0] = 1024;
    p->maxThreadsDim[1] = 1024;
    p->maxThreadsDim[2] = 64;
    p->maxGridSize[0] = 2147483647;
    p->maxGridSize[1] = 65535;
    p->maxGridSize[2] = 65535;
    p->warpSize = 32;
    p->sharedMemPerBlock = 48 * 1024;
    p->sharedMemPerBlockOptin = 227 * 1024;
    p->sharedMemPerMultiprocessor = 228 * 1024;
    p->regsPerBlock = 65536;
    p->regsPerMultiprocessor = 65536;
    p->l2CacheSize = 4 * 1024 * 1024;
    p->totalGlobalMem = std::size_t{16} << 30;
    p->totalConstMem = 64 * 1024;
    p->maxBlocksPerMultiProcessor = 32;
    p->memoryBusWidth = 5120;
    p->unifiedAddressing = 1;
    p->managedMemory = 1;
    p->concurrentKernels = 1;
    p->uuid.bytes[0] = 0xe5;
    return cudaSuccess;
}

CUDALINGS_EMU_API cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
    if (!value || device != 0) return set_error(cudaErrorInvalidValue);
    cudaDeviceProp p;
    cudaGetDeviceProperties(&p, 0);
    switch (attr) {
        case cudaDevAttrMultiProcessorCount:
            *value = p.multiProcessorCount;
            break;
        case cudaDevAttrMaxThreadsPerMultiProcessor:
            *value = p.maxThreadsPerMultiProcessor;
            break;
        case cudaDevAttrMaxThreadsPerBlock:
            *value = 1024;
            break;
        case cudaDevAttrWarpSize:
            *value = 32;
            break;
        case cudaDevAttrMaxSharedMemoryPerBlock:
            *value = 48 * 1024;
            break;
        case cudaDevAttrMaxSharedMemoryPerBlockOptin:
            *value = 227 * 1024;
            break;
        case cudaDevAttrMaxSharedMemoryPerMultiprocessor:
            *value = 228 * 1024;
            break;
        case cudaDevAttrComputeCapabilityMajor:
            *value = 9;
            break;
        case cudaDevAttrComputeCapabilityMinor:
            *value = 0;
            break;
        case cudaDevAttrMaxBlockDimX:
            *value = 1024;
            break;
        case cudaDevAttrMaxBlockDimY:
            *value = 1024;
            break;
        case cudaDevAttrMaxBlockDimZ:
            *value = 64;
            break;
        case cudaDevAttrMaxGridDimX:
            *value = 2147483647;
            break;
        case cudaDevAttrMaxGridDimY:
            *value = 65535;
            break;
        case cudaDevAttrMaxGridDimZ:
            *value = 65535;
            break;
        case cudaDevAttrL2CacheSize:
            *value = p.l2CacheSize;
            break;
        case cudaDevAttrMaxBlocksPerMultiprocessor:
            *value = 32;
            break;
        case cudaDevAttrMaxRegistersPerBlock:
            *value = 65536;
            break;
        case cudaDevAttrMaxRegistersPerMultiprocessor:
            *value = 65536;
            break;
        default:
            *value = 0;
            break;
    }
    return cudaSuccess;
}
CUDALINGS_EMU_API cudaError_t cudaDriverGetVersion(int* v) {
    if (v) *v = CUDART_VERSION;
    return cudaSuccess;
}
CUDALINGS_EMU_API cudaError_t cudaRuntimeGetVersion(int* v) {
    if (v) *v = CUDART_VERSION;
    return cudaSuccess;
}

CUDALINGS_EMU_API cudaError_t cudaStreamCreate(cudaStream_t* s) {
    if (!s) return set_error(cudaErrorInvalidValue);
    *s = reinterpret_cast<cudaStream_t>(new char[1]);
    return cudaSuccess;
}
CUDALINGS_EMU_API cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned) {
    return cudaStreamCreate(s);
}
CUDALINGS_EMU_API cudaError_t cudaStreamCreateWithPriority(cudaStream_t* s, unsigned, int) {
    return cudaStreamCreate(s);
}
CUDALINGS_EMU_API cudaError_t cudaStreamDestroy(cudaStream_t s) {
    delete[] reinterpret_cast<char*>(s);
    return cudaSuccess;
}
CUDALINGS_EMU_API cudaError_t cudaStreamSynchronize(cudaStream_t) { return take_pending(); }
CUDALINGS_EMU_API cudaError_t cudaStreamQuery(cudaStream_t) { return cudaSuccess; }
CUDALINGS_EMU_API cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned) {
    return cudaSuccess;
}

CUDALINGS_EMU_API cudaError_t cudaEventCreate(cudaEvent_t* e) {
    if (!e) return set_error(cudaErrorInvalidValue);
    *e = reinterpret_cast<cudaEvent_t>(new EventImpl);
    return cudaSuccess;
}
CUDALINGS_EMU_API cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned) {
    return cudaEventCreate(e);
}
CUDALINGS_EMU_API cudaError_t cudaEventDestroy(cudaEvent_t e) {
    delete reinterpret_cast<EventImpl*>(e);
    return cudaSuccess;
}
CUDALINGS_EMU_API cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t) {
    if (!e) return set_error(cudaErrorInvalidResourceHandle);
    auto* ev = reinterpret_cast<EventImpl*>(e);
    ev->ms = now_ms();
    ev->recorded = true;
    return cudaSuccess;
}
CUDALINGS_EMU_API cudaError_t cudaEventRecordWithFlags(cudaEvent_t e, cudaStream_t s, unsigned) {
    return cudaEventRecord(e, s);
}
CUDALINGS_EMU_API cudaError_t cudaEventSynchronize(cudaEvent_t) { return take_pending(); }
CUDALINGS_EMU_API cudaError_t cudaEventQuery(cudaEvent_t) { return cudaSuccess; }
CUDALINGS_EMU_API cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t a, cudaEvent_t b) {
    if (!ms || !a || !b) return set_error(cudaErrorInvalidValue);
    *ms = float(reinterpret_cast<EventImpl*>(b)->ms - reinterpret_cast<EventImpl*>(a)->ms);
    return cudaSuccess;
}

CUDALINGS_EMU_API cudaError_t cudaFuncSetAttribute(const void* f, cudaFuncAttribute attr,
                                                   int value) {
    return func_set_attribute("", f, attr, value);
}
CUDALINGS_EMU_API cudaError_t cudaGetSymbolAddress(void** p, const void* symbol) {
    if (!p) return set_error(cudaErrorInvalidValue);
    *p = const_cast<void*>(symbol);
    return cudaSuccess;
}
CUDALINGS_EMU_API cudaError_t cudaLaunchKernel(const void*, dim3, dim3, void**, size_t,
                                               cudaStream_t) {
    unsupported(
        "cudaLaunchKernel of a kernel cast to const void* (the emulator needs the "
        "kernel's type: pass the kernel itself)",
        nullptr, 0);
    return cudaErrorNotSupported;
}
CUDALINGS_EMU_API cudaError_t cudaFuncSetCacheConfig(const void*, cudaFuncCache) {
    return cudaSuccess;
}
CUDALINGS_EMU_API cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* a, const void*) {
    if (a) {
        std::memset(a, 0, sizeof *a);
        a->maxThreadsPerBlock = 1024;
        a->numRegs = 32;
    }
    return cudaSuccess;
}
CUDALINGS_EMU_API cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* n, const void*,
                                                                            int block, size_t) {
    if (n) *n = block > 0 ? std::max(1, std::min(32, 2048 / block)) : 0;
    return cudaSuccess;
}
CUDALINGS_EMU_API cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    int* n, const void* f, int block, size_t smem, unsigned) {
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(n, f, block, smem);
}
CUDALINGS_EMU_API cudaError_t cudaDeviceSetLimit(cudaLimit, size_t) { return cudaSuccess; }
CUDALINGS_EMU_API cudaError_t cudaDeviceSetCacheConfig(cudaFuncCache) { return cudaSuccess; }
CUDALINGS_EMU_API cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* a, const void* p) {
    if (!a) return set_error(cudaErrorInvalidValue);
    std::memset(a, 0, sizeof *a);
    a->type = is_device_pointer(p) ? cudaMemoryTypeDevice : cudaMemoryTypeUnregistered;
    a->devicePointer = is_device_pointer(p) ? const_cast<void*>(p) : nullptr;
    a->hostPointer = is_device_pointer(p) ? nullptr : const_cast<void*>(p);
    return cudaSuccess;
}

}  // extern "C"

bool cudalings_emu::allocation_marks(const void* p, Marks* out) {
    const Allocation* al = find_allocation(reinterpret_cast<std::uintptr_t>(p), nullptr);
    if (!al || !out) return false;
    *out = Marks{};
    if (al->user_end > al->user_begin) {
        out->offset = al->user_begin - al->begin;
        out->bytes = al->user_end - al->user_begin;
    }
    out->element = al->element;
    if (al->host_named) out->name = al->name;
    if (al->sampled) sampled_marks(*al, out);
    return true;
}

void cudalings_emu::mark_allocation(const void* p, const Marks& marks) {
    const auto at = reinterpret_cast<std::uintptr_t>(p);
    Allocation* al = find_allocation(at, nullptr);
    if (!al || al->begin != at) return;
    // Within the allocation only: the marks come from another process.
    if (marks.bytes && marks.offset <= al->bytes && marks.bytes <= al->bytes - marks.offset) {
        al->user_begin = at + marks.offset;
        al->user_end = al->user_begin + marks.bytes;
    }
    if (!marks.name.empty()) {
        al->name = marks.name;
        al->element = marks.element;
        al->host_named = true;
    }
}

CUDALINGS_EMU_API void cudalings_emu::cudalings_emu_set_extent(const void* p, size_t bytes) {
    auto a = reinterpret_cast<std::uintptr_t>(p);
    Allocation* al = find_allocation(a, nullptr);
    if (!al) return;
    al->user_begin = a;
    al->user_end = a + bytes;
}

CUDALINGS_EMU_API void cudalings_emu::cudalings_emu_checker_memory(const void* p) {
    const auto at = reinterpret_cast<std::uintptr_t>(p);
    Allocation* al = find_allocation(at, nullptr);
    if (!al || al->begin != at) return;
    al->checker = true;
    al->where = "the checker";
    // The kit's own variable (`p`) is no name for a learner: the checker names its buffers.
    al->name.clear();
    al->element = 0;
    al->host_named = false;
}

CUDALINGS_EMU_API void cudalings_emu::cudalings_emu_name_array(const void* p, const char* name,
                                                               size_t element_bytes) {
    Allocation* al = find_allocation(reinterpret_cast<std::uintptr_t>(p), nullptr);
    if (!al || !name) return;
    al->name = name;
    al->element = element_bytes;
    al->host_named = true;
}

namespace cudalings_emu {

namespace {
// "(allocated at f.cu:40)" only for the learner's own allocations: the checker's are named by
// their buffer's name, and the kit's allocating line means nothing to a learner.
bool say_where(const Allocation& al) {
    return !al.host_named && !al.checker && al.where.find("unknown") == std::string::npos;
}
std::string unnamed(const Allocation& al) {
    return al.checker ? "the checker's own " + std::to_string(al.bytes) +
                            "-byte array (none of the buffers your code was given)"
                      : "the " + std::to_string(al.bytes) + "-byte allocation";
}
std::string byte_count(std::uint64_t bytes) {
    const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    double v = static_cast<double>(bytes);
    while (v >= 1024 && u < 4) {
        v /= 1024;
        ++u;
    }
    char buf[64];
    if (u == 0)
        std::snprintf(buf, sizeof buf, "%llu bytes", static_cast<unsigned long long>(bytes));
    else
        std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
    return buf;
}
}  // namespace

std::string global_location(const Allocation& al, std::uintptr_t a) {
    const std::uintptr_t base = al.user_end ? al.user_begin : al.begin;
    if (!al.name.empty() && a >= base) {
        std::string text = al.element
                               ? al.name + "[" + std::to_string((a - base) / al.element) + "]"
                               : "byte " + std::to_string(a - base) + " of " + al.name;
        if (say_where(al)) text += " (allocated at " + al.where + ")";
        return text;
    }
    std::string text = "byte " + std::to_string(a - al.begin) + " of " + unnamed(al);
    if (say_where(al)) text += " made at " + al.where;
    return text;
}

std::string location_before(const Allocation& al, std::uintptr_t a) {
    const std::uintptr_t base = al.user_end ? al.user_begin : al.begin;
    const std::size_t bytes = base - a;
    if (!al.name.empty() && al.element) {
        std::string text = al.name + "[-" + std::to_string((bytes + al.element - 1) / al.element) +
                           "]: out of bounds (" + std::to_string(bytes) +
                           " bytes before its start)";
        if (say_where(al)) text += " (allocated at " + al.where + ")";
        return text;
    }
    std::string text = "byte -" + std::to_string(bytes) + " of " + unnamed(al);
    if (say_where(al)) text += " made at " + al.where;
    return text + ": out of bounds (before its start)";
}

bool near_allocation(const Allocation& al, std::size_t distance) {
    return distance <= std::max<std::size_t>(al.bytes, kGap);
}

std::string wild_address_text(std::uintptr_t a, unsigned size, std::string* detail) {
    std::string message = "a wild address, ";
    // How far it is from the nearest allocation, when it lies among them.
    if (in_arena(a)) {
        Allocation* below = nullptr;
        find_allocation(a, &below);
        Allocation* above = allocation_after(a);
        std::uint64_t d = ~std::uint64_t{0};
        if (below && a >= below->begin + below->bytes) d = a - (below->begin + below->bytes);
        if (above) d = std::min<std::uint64_t>(d, above->begin - a);
        message += d == ~std::uint64_t{0} ? "outside every device allocation"
                                          : byte_count(d) + " from the nearest device allocation";
    } else {
        message += "not in device memory";
    }
    // The checker fills outputs and workspaces with a poison pattern, a NaN (which reads as
    // 0x7fffffff, the GPU's canonical NaN, once a kernel has stored it): an index or a pointer
    // made from either was read from memory the kernel (or the launcher) never wrote. An index
    // near such a value, or near a multiple of it by a power of two (a tile number times the
    // tile's size), is made from it.
    const std::uint64_t patterns[] = {poison_bits(), poison_bits() ? 0x7fffffffu : 0u};
    // How far an index is from the poison (times m, per m): ~0 when it is not near.
    auto poison_distance = [&](std::uint64_t index) {
        std::uint64_t best = ~std::uint64_t{0};
        for (const std::uint64_t poison : patterns) {
            for (std::uint64_t m = 1; poison && m <= (1u << 16); m *= 2) {
                const std::uint64_t centre = poison * m;
                const std::uint64_t off = index >= centre ? index - centre : centre - index;
                if (off <= (m << 16)) best = std::min(best, off / m);
            }
        }
        return best;
    };
    // Where it may have come from. The emulator does not see how an address was computed, only
    // the pointers the kernel was given: the one below it from which the index is nearest the
    // poison, else the nearest one (below it, or above for an index gone negative).
    const unsigned unit = size ? size : 1;
    const void* from = nullptr;
    std::uint64_t from_poison = ~std::uint64_t{0};
    for (const void* p : rt().pointer_args) {
        auto v = reinterpret_cast<std::uintptr_t>(p);
        if (!p || !in_arena(v) || !find_allocation(v, nullptr)) continue;
        const std::uint64_t pd =
            v <= a && (a - v) % unit == 0 ? poison_distance((a - v) / unit) : ~std::uint64_t{0};
        auto dist = [&](std::uintptr_t x) { return x <= a ? a - x : x - a; };
        const bool nearer = !from || dist(v) < dist(reinterpret_cast<std::uintptr_t>(from));
        if (pd < from_poison || (pd == from_poison && nearer)) {
            from = p;
            from_poison = pd;
        }
    }
    bool poisoned = from_poison != ~std::uint64_t{0};
    if (from) {
        auto v = reinterpret_cast<std::uintptr_t>(from);
        const Allocation* al = find_allocation(v, nullptr);
        const std::uint64_t off = a >= v ? a - v : v - a;
        const std::string sign = a >= v ? "" : "-";
        const std::string at = off % unit == 0 ? "element " + sign + std::to_string(off / unit) +
                                                     " (of " + std::to_string(unit) + " bytes)"
                                               : "byte " + sign + std::to_string(off);
        *detail += std::string(poisoned ? "the pointer the kernel was given that points at "
                                        : "of the pointers the kernel was given, the nearest "
                                          "points at ") +
                   global_location(*al, v) + "; from there this is " + at +
                   ": an index or an offset far out of range, not an overrun of an array\n";
    }
    for (const std::uint64_t poison : patterns)
        poisoned = poisoned || (poison && ((a >> 32) == poison || (a & 0xffffffffu) == poison));
    if (poisoned)
        *detail +=
            "the address is made from the bits of the NaN the checker fills its buffers "
            "with (" +
            hex(poison_bits()) +
            ", or 0x7fffffff once a kernel stored it): "
            "an index, a counter or a pointer read from memory that was never written "
            "or cleared (cudaMemsetAsync it before the kernel, or write it first)\n";
    return message;
}

cudaError_t malloc_named(void** p, std::size_t bytes, const char* file, int line, const char* text,
                         std::size_t element) {
    cudaError_t e = allocate(p, bytes, false, here(file, line));
    if (e != cudaSuccess || !text) return e;
    // "&partials", "(void**)&d_in", "reinterpret_cast<void**>(&buf)": the variable's name.
    std::string t = text;
    std::size_t amp = t.rfind('&');
    std::string name = amp == std::string::npos ? t : t.substr(amp + 1);
    while (!name.empty() && (name.back() == ')' || name.back() == ' ')) name.pop_back();
    while (!name.empty() && (name.front() == '(' || name.front() == ' ')) name.erase(0, 1);
    bool plain = !name.empty();
    for (char c : name)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '>' ||
              c == '-' || c == '[' || c == ']'))
            plain = false;
    if (plain) {
        cudalings_emu_name_array(*p, name.c_str(), element);
        if (Allocation* al = find_allocation(reinterpret_cast<std::uintptr_t>(*p), nullptr))
            al->host_named = false;  // the learner's own: say where it was allocated
    }
    return e;
}

}  // namespace cudalings_emu
