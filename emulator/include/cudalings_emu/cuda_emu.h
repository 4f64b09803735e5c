// cudalings CPU emulator: the header force-included (g++ -include) before every CUDA file that
// is built for emulation. It turns CUDA C++ into plain C++ that runs on the emulator's
// runtime: __global__/__device__/__host__ mean nothing, __shared__ variables live in each block's
// shared memory window (see the rewriter), the built-in index variables read the running CUDA
// thread, and barriers, warp intrinsics and atomics call into the runtime.
//
// The source rewriter (cudalings-emu-rewrite) has already turned `k<<<cfg>>>(args)` into
// `::cudalings_emu::Launch(...).go(...)` and `extern __shared__ T s[];` into a view of the
// dynamic shared memory. __CUDA_ARCH__ is never defined: code takes its host paths.
#pragma once

#define CUDALINGS_EMULATOR 1

// The runtime API's C functions first: the kernel overloads below must be declared before
// cuda_runtime.h, whose occupancy helpers (templates) call them with a kernel.
#include <cuda_runtime_api.h>

// What nvcc declares for a kernel given by name (a template on its type): here the kernel is
// an ordinary function, and its address is what the C API takes.
template <typename T>
inline cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attributes, T* kernel) {
    return ::cudaFuncGetAttributes(attributes, reinterpret_cast<const void*>(kernel));
}
template <typename T>
inline cudaError_t cudaFuncSetCacheConfig(T* kernel, cudaFuncCache config) {
    return ::cudaFuncSetCacheConfig(reinterpret_cast<const void*>(kernel), config);
}

#include <cuda_runtime.h>  // NVIDIA's own header: host-safe types and the runtime API
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>  // before __noinline__ is defined: libstdc++ uses __attribute__((__noinline__))
#include <new>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "abi.h"

// ------------------------------------------------------------------ execution-space keywords
#undef __global__
#undef __device__
#undef __host__
#undef __shared__
#undef __constant__
#undef __managed__
#undef __launch_bounds__
#undef __maxnreg__
#undef __grid_constant__
#undef __forceinline__
#define __global__
#define __device__
#define __host__
#define __constant__
#define __managed__
#define __grid_constant__
#define __launch_bounds__(...)
#define __maxnreg__(...)
// __noinline__ is left alone: newer libstdc++ writes __attribute__((__noinline__)) itself, which
// a macro would break (GCC 13). GCC reads __noinline__ inside an attribute natively.
#define __forceinline__ inline __attribute__((always_inline))
// The rewriter turns every `__shared__` declaration into a reference to the running block's copy
// (in the block's shared memory window: poisoned with 0xFF bytes at the start of every block, so
// an uninitialised float reads as NaN; red zones between variables). What is left for the macro
// is only code the rewriter did not see (a macro that expands to __shared__).
#define __shared__ static

#define CUDALINGS_EMU_INLINE static inline __attribute__((always_inline, unused))

// ------------------------------------------------------------------ built-in variables
// Values, not references: reading them is no memory access of the learner's code.
#define threadIdx (::cudalings_emu::thread_idx())
#define blockIdx (::cudalings_emu::block_idx())
#define blockDim (::cudalings_emu::block_dim())
#define gridDim (::cudalings_emu::grid_dim())
static constexpr int warpSize = 32;

// ------------------------------------------------------------------ launches
namespace cudalings_emu {

// A pointer argument of a launch (any qualifiers: `volatile int*` too), for the host-pointer
// check.
template <typename T>
inline void collect_pointer(const void** out, int& n, const T& v) {
    if constexpr (std::is_pointer_v<T> && std::is_object_v<std::remove_pointer_t<T>>)
        out[n++] = const_cast<const void*>(static_cast<const volatile void*>(v));
    (void)out, (void)n, (void)v;
}

class Launch {
public:
    Launch(const char* file, int line, const char* kernel, dim3 grid, dim3 block,
           std::size_t shared_bytes = 0, cudaStream_t stream = 0)
        : site_{file, line, kernel},
          config_{grid, block, shared_bytes, stream} {}

    // `call` invokes the kernel with its arguments as lvalues; the arguments are copied once,
    // here, as a launch copies them to the device; each CUDA thread then gets its own copy
    // (the kernel takes them by value).
    template <typename Call, typename... Args>
    void go(Call call, Args&&... args) {
        using Stored = std::tuple<std::decay_t<Args>...>;
        struct Closure {
            Call call;
            Stored args;
        };
        // Kernel parameters live in the emulator's parameter space, as on the GPU (a kernel
        // may read them; it may not read the launching host function's stack).
        void* space = ::cudalings_emu::parameter_space(sizeof(Closure), alignof(Closure));
        auto* closure = new (space) Closure{call, Stored(std::forward<Args>(args)...)};
        const void* pointers[sizeof...(Args) + 1] = {};
        int n = 0;
        std::apply([&](const auto&... a) { (collect_pointer(pointers, n, a), ...); }, closure->args);
        ::cudalings_emu::launch(
            site_, config_,
            [](void* c) {
                auto* cl = static_cast<Closure*>(c);
                std::apply(cl->call, cl->args);
            },
            closure, pointers, n);
        closure->~Closure();
    }

private:
    LaunchSite site_;
    LaunchConfig config_;
};

}  // namespace cudalings_emu

namespace cudalings_emu {
// `extern __shared__ T s[];` at namespace scope: a view of this launch's dynamic shared memory.
template <typename T>
struct DynamicShared {
    const char* name = nullptr;
    T* get() const { return static_cast<T*>(dynamic_shared_named(name, sizeof(T))); }
    operator T*() const { return get(); }
    T& operator[](std::ptrdiff_t i) const { return get()[i]; }
};

// The shape of a __shared__ variable's type: its size, alignment, element and extents.
template <typename T>
constexpr SharedShape shape_of() {
    SharedShape s{sizeof(T), alignof(T), sizeof(std::remove_all_extents_t<T>), std::rank_v<T>, {}};
    if constexpr (std::rank_v<T> > 0) s.dims[0] = std::extent_v<T, 0>;
    if constexpr (std::rank_v<T> > 1) s.dims[1] = std::extent_v<T, 1>;
    if constexpr (std::rank_v<T> > 2) s.dims[2] = std::extent_v<T, 2>;
    if constexpr (std::rank_v<T> > 3) s.dims[3] = std::extent_v<T, 3>;
    return s;
}
// `__shared__ T x[N];` in a function becomes a reference to the running block's copy:
//   static SharedKey k; T (&x)[N] = shared_ref<T[N]>(&k, "x");
template <typename T>
CUDALINGS_EMU_INLINE T& shared_ref(SharedKey* key, const char* name) {
    static constexpr SharedShape shape = shape_of<T>();
    return *static_cast<T*>(shared_slot(key, shape, name));
}

// `__shared__ T x[N];` at namespace scope: every use reaches the running block's copy.
template <typename T>
class SharedGlobal {
  public:
    explicit SharedGlobal(const char* name) : name_(name) {}
    T& get() { return shared_ref<T>(&key_, name_); }
    operator T&() { return get(); }
    template <typename U = T, typename = std::enable_if_t<std::is_array_v<U>>>
    std::remove_extent_t<U>& operator[](std::ptrdiff_t i) { return get()[i]; }
    template <typename U = T, typename = std::enable_if_t<std::is_array_v<U>>>
    operator std::remove_extent_t<U>*() { return get(); }
    T* operator&() { return &get(); }
    template <typename V>
    SharedGlobal& operator=(const V& v) { get() = v; return *this; }
    template <typename V> T& operator+=(const V& v) { return get() += v; }
    template <typename V> T& operator-=(const V& v) { return get() -= v; }
    template <typename V> T& operator*=(const V& v) { return get() *= v; }
    template <typename V> T& operator|=(const V& v) { return get() |= v; }
    template <typename V> T& operator&=(const V& v) { return get() &= v; }
    template <typename U = T> auto operator++() -> decltype(++std::declval<U&>()) { return ++get(); }
    template <typename U = T> auto operator++(int) -> decltype(std::declval<U&>()++) { return get()++; }
    template <typename U = T> auto operator--() -> decltype(--std::declval<U&>()) { return --get(); }
    template <typename U = T> auto operator--(int) -> decltype(std::declval<U&>()--) { return get()--; }

  private:
    SharedKey key_;
    const char* name_;
};

// The size of what a cudaMalloc'd pointer points to (0 for void).
template <typename T>
constexpr std::size_t pointee_size(T**) {
    if constexpr (std::is_void_v<T>) return 0;
    else return sizeof(T);
}
constexpr std::size_t pointee_size(...) { return 0; }
}  // namespace cudalings_emu

// ------------------------------------------------------------------ barriers, fences
#define __syncthreads() ::cudalings_emu::syncthreads(__FILE__, __LINE__)
#define __syncthreads_count(p) ::cudalings_emu::syncthreads_reduce(0, (p) ? 1 : 0, __FILE__, __LINE__)
#define __syncthreads_and(p) ::cudalings_emu::syncthreads_reduce(1, (p) ? 1 : 0, __FILE__, __LINE__)
#define __syncthreads_or(p) ::cudalings_emu::syncthreads_reduce(2, (p) ? 1 : 0, __FILE__, __LINE__)
#define __threadfence_block() ::cudalings_emu::threadfence(0)
#define __threadfence() ::cudalings_emu::threadfence(1)
#define __threadfence_system() ::cudalings_emu::threadfence(2)
#define __trap() ::cudalings_emu::device_trap("__trap()", __FILE__, __LINE__)
#define __brkpt() ((void)0)
CUDALINGS_EMU_INLINE void __nanosleep(unsigned) {}
// clock64(): the emulator's own counter, 1000 "cycles" per read. A delay loop (`while (clock64()
// - start < N)`) ends after N / 1000 reads, instead of spinning N real CPU cycles in every CUDA
// thread one after another (a 200000-cycle delay took seconds per case, and timed out under
// load). Time measured inside a kernel means nothing here either way: timing is the GPU's.
CUDALINGS_EMU_INLINE long long clock64() {
    static long long cycles = 0;
    return cycles += 1000;
}
#define __activemask() ::cudalings_emu::activemask(__FILE__, __LINE__)
CUDALINGS_EMU_INLINE unsigned __lanemask_lt() { return (1u << ::cudalings_emu::lane_id()) - 1u; }

// ------------------------------------------------------------------ warp intrinsics
namespace cudalings_emu {

template <typename T>
CUDALINGS_EMU_INLINE unsigned long long to_bits(T v) {
    static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>,
                  "warp shuffles move values of at most 8 bytes");
    unsigned long long b = 0;
    std::memcpy(&b, &v, sizeof(T));
    return b;
}
template <typename T>
CUDALINGS_EMU_INLINE T from_bits(unsigned long long b) {
    T v;
    std::memcpy(&v, &b, sizeof(T));
    return v;
}
template <typename T>
CUDALINGS_EMU_INLINE T shfl(int op, const char* file, int line, unsigned mask, T var, int arg,
                            int width = 32) {
    return from_bits<T>(warp_op(op, mask, to_bits(var), int(sizeof(T)), arg, width, nullptr, file, line));
}
template <typename T>
CUDALINGS_EMU_INLINE unsigned match_any(const char* file, int line, unsigned mask, T v) {
    return unsigned(warp_op(kMatchAny, mask, to_bits(v), int(sizeof(T)), 0, 32, nullptr, file, line));
}
template <typename T>
CUDALINGS_EMU_INLINE unsigned match_all(const char* file, int line, unsigned mask, T v, int* pred) {
    return unsigned(warp_op(kMatchAll, mask, to_bits(v), int(sizeof(T)), 0, 32, pred, file, line));
}
CUDALINGS_EMU_INLINE unsigned vote(int op, const char* file, int line, unsigned mask, int pred) {
    return unsigned(warp_op(op, mask, pred ? 1u : 0u, 4, 0, 32, nullptr, file, line));
}
struct SyncWarpAt {  // __syncwarp() and __syncwarp(mask)
    const char* file;
    int line;
    void operator()(unsigned mask = 0xffffffffu) const {
        warp_op(kSyncWarp, mask, 0, 4, 0, 32, nullptr, file, line);
    }
};
template <typename T>
CUDALINGS_EMU_INLINE T reduce(int op, const char* file, int line, unsigned mask, T v) {
    static_assert(sizeof(T) == 4, "__reduce_*_sync takes 32-bit integers");
    return T(warp_op(op, mask, (unsigned long long)(unsigned)v, 4, 0, 32, nullptr, file, line));
}

}  // namespace cudalings_emu

#define __shfl_sync(...) ::cudalings_emu::shfl(::cudalings_emu::kShflIdx, __FILE__, __LINE__, __VA_ARGS__)
#define __shfl_up_sync(...) ::cudalings_emu::shfl(::cudalings_emu::kShflUp, __FILE__, __LINE__, __VA_ARGS__)
#define __shfl_down_sync(...) ::cudalings_emu::shfl(::cudalings_emu::kShflDown, __FILE__, __LINE__, __VA_ARGS__)
#define __shfl_xor_sync(...) ::cudalings_emu::shfl(::cudalings_emu::kShflXor, __FILE__, __LINE__, __VA_ARGS__)
#define __ballot_sync(m, p) ::cudalings_emu::vote(::cudalings_emu::kBallot, __FILE__, __LINE__, (m), (p))
#define __any_sync(m, p) ((int)::cudalings_emu::vote(::cudalings_emu::kAny, __FILE__, __LINE__, (m), (p)))
#define __all_sync(m, p) ((int)::cudalings_emu::vote(::cudalings_emu::kAll, __FILE__, __LINE__, (m), (p)))
#define __uni_sync(m, p) ((int)::cudalings_emu::vote(::cudalings_emu::kAll, __FILE__, __LINE__, (m), (p)))
#define __match_any_sync(m, v) ::cudalings_emu::match_any(__FILE__, __LINE__, (m), (v))
#define __match_all_sync(m, v, pred) ::cudalings_emu::match_all(__FILE__, __LINE__, (m), (v), (pred))
#define __syncwarp(...) ::cudalings_emu::SyncWarpAt{__FILE__, __LINE__}(__VA_ARGS__)
#define __reduce_add_sync(m, v) ::cudalings_emu::reduce(::cudalings_emu::kReduceAdd, __FILE__, __LINE__, (m), (v))
#define __reduce_and_sync(m, v) ::cudalings_emu::reduce(::cudalings_emu::kReduceAnd, __FILE__, __LINE__, (m), (v))
#define __reduce_or_sync(m, v) ::cudalings_emu::reduce(::cudalings_emu::kReduceOr, __FILE__, __LINE__, (m), (v))
#define __reduce_xor_sync(m, v) ::cudalings_emu::reduce(::cudalings_emu::kReduceXor, __FILE__, __LINE__, (m), (v))
#define __reduce_min_sync(m, v) ::cudalings_emu::reduce_minmax(false, __FILE__, __LINE__, (m), (v))
#define __reduce_max_sync(m, v) ::cudalings_emu::reduce_minmax(true, __FILE__, __LINE__, (m), (v))
namespace cudalings_emu {
CUDALINGS_EMU_INLINE int reduce_minmax(bool max, const char* f, int l, unsigned m, int v) {
    return reduce(max ? kReduceMax : kReduceMin, f, l, m, v);
}
CUDALINGS_EMU_INLINE unsigned reduce_minmax(bool max, const char* f, int l, unsigned m, unsigned v) {
    return reduce(max ? kReduceUMax : kReduceUMin, f, l, m, v);
}
}  // namespace cudalings_emu

// ------------------------------------------------------------------ atomics
// Written with the compiler's __atomic builtins: in the learner's (instrumented) code they
// reach the emulator as atomic accesses (never as racing plain ones), with their call site.
namespace cudalings_emu {
template <typename T>
CUDALINGS_EMU_INLINE T atomic_rmw_int(T* p, T (*f)(T, T), T v) {
    T old = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(p, &old, f(old, v), false, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED)) {
    }
    return old;
}
// Floating point: a compare-and-swap loop on the bits.
template <typename F, typename Bits>
CUDALINGS_EMU_INLINE F atomic_rmw_float(F* p, F (*f)(F, F), F v) {
    Bits* b = reinterpret_cast<Bits*>(p);
    Bits old = __atomic_load_n(b, __ATOMIC_RELAXED);
    while (true) {
        F o;
        std::memcpy(&o, &old, sizeof o);
        F n = f(o, v);
        Bits nb;
        std::memcpy(&nb, &n, sizeof nb);
        if (__atomic_compare_exchange_n(b, &old, nb, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            return o;
    }
}
template <typename T> CUDALINGS_EMU_INLINE T op_min(T a, T b) { return b < a ? b : a; }
template <typename T> CUDALINGS_EMU_INLINE T op_max(T a, T b) { return a < b ? b : a; }
template <typename T> CUDALINGS_EMU_INLINE T op_add(T a, T b) { return a + b; }
CUDALINGS_EMU_INLINE unsigned op_inc(unsigned old, unsigned lim) { return old >= lim ? 0u : old + 1u; }
CUDALINGS_EMU_INLINE unsigned op_dec(unsigned old, unsigned lim) {
    return (old == 0u || old > lim) ? lim : old - 1u;
}
}  // namespace cudalings_emu

#define CUDALINGS_EMU_INT_ATOMICS(T)                                                              \
    CUDALINGS_EMU_INLINE T atomicAdd(T* p, T v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); } \
    CUDALINGS_EMU_INLINE T atomicSub(T* p, T v) { return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED); } \
    CUDALINGS_EMU_INLINE T atomicExch(T* p, T v) { return __atomic_exchange_n(p, v, __ATOMIC_RELAXED); } \
    CUDALINGS_EMU_INLINE T atomicAnd(T* p, T v) { return __atomic_fetch_and(p, v, __ATOMIC_RELAXED); } \
    CUDALINGS_EMU_INLINE T atomicOr(T* p, T v) { return __atomic_fetch_or(p, v, __ATOMIC_RELAXED); }   \
    CUDALINGS_EMU_INLINE T atomicXor(T* p, T v) { return __atomic_fetch_xor(p, v, __ATOMIC_RELAXED); } \
    CUDALINGS_EMU_INLINE T atomicMin(T* p, T v) { return ::cudalings_emu::atomic_rmw_int<T>(p, ::cudalings_emu::op_min<T>, v); } \
    CUDALINGS_EMU_INLINE T atomicMax(T* p, T v) { return ::cudalings_emu::atomic_rmw_int<T>(p, ::cudalings_emu::op_max<T>, v); } \
    CUDALINGS_EMU_INLINE T atomicCAS(T* p, T compare, T v) {                                      \
        __atomic_compare_exchange_n(p, &compare, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);   \
        return compare;                                                                           \
    }
CUDALINGS_EMU_INT_ATOMICS(int)
CUDALINGS_EMU_INT_ATOMICS(unsigned int)
CUDALINGS_EMU_INT_ATOMICS(unsigned long long)
CUDALINGS_EMU_INT_ATOMICS(long long)
#undef CUDALINGS_EMU_INT_ATOMICS
CUDALINGS_EMU_INLINE unsigned short atomicCAS(unsigned short* p, unsigned short compare, unsigned short v) {
    __atomic_compare_exchange_n(p, &compare, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    return compare;
}
CUDALINGS_EMU_INLINE unsigned atomicInc(unsigned* p, unsigned lim) {
    return ::cudalings_emu::atomic_rmw_int<unsigned>(p, ::cudalings_emu::op_inc, lim);
}
CUDALINGS_EMU_INLINE unsigned atomicDec(unsigned* p, unsigned lim) {
    return ::cudalings_emu::atomic_rmw_int<unsigned>(p, ::cudalings_emu::op_dec, lim);
}
CUDALINGS_EMU_INLINE float atomicAdd(float* p, float v) {
    return ::cudalings_emu::atomic_rmw_float<float, unsigned>(p, ::cudalings_emu::op_add<float>, v);
}
CUDALINGS_EMU_INLINE double atomicAdd(double* p, double v) {
    return ::cudalings_emu::atomic_rmw_float<double, unsigned long long>(p, ::cudalings_emu::op_add<double>, v);
}
CUDALINGS_EMU_INLINE float atomicExch(float* p, float v) {
    unsigned b, o;
    std::memcpy(&b, &v, 4);
    o = __atomic_exchange_n(reinterpret_cast<unsigned*>(p), b, __ATOMIC_RELAXED);
    float r;
    std::memcpy(&r, &o, 4);
    return r;
}
CUDALINGS_EMU_INLINE float atomicMin(float* p, float v) {
    return ::cudalings_emu::atomic_rmw_float<float, unsigned>(p, ::cudalings_emu::op_min<float>, v);
}
CUDALINGS_EMU_INLINE float atomicMax(float* p, float v) {
    return ::cudalings_emu::atomic_rmw_float<float, unsigned>(p, ::cudalings_emu::op_max<float>, v);
}
// The scoped variants behave the same on one emulated device.
#define CUDALINGS_EMU_SCOPED(name)                                                       \
    template <typename... A>                                                             \
    CUDALINGS_EMU_INLINE auto name##_block(A... a) -> decltype(name(a...)) { return name(a...); } \
    template <typename... A>                                                             \
    CUDALINGS_EMU_INLINE auto name##_system(A... a) -> decltype(name(a...)) { return name(a...); }
CUDALINGS_EMU_SCOPED(atomicAdd)
CUDALINGS_EMU_SCOPED(atomicSub)
CUDALINGS_EMU_SCOPED(atomicExch)
CUDALINGS_EMU_SCOPED(atomicMin)
CUDALINGS_EMU_SCOPED(atomicMax)
CUDALINGS_EMU_SCOPED(atomicInc)
CUDALINGS_EMU_SCOPED(atomicDec)
CUDALINGS_EMU_SCOPED(atomicCAS)
CUDALINGS_EMU_SCOPED(atomicAnd)
CUDALINGS_EMU_SCOPED(atomicOr)
CUDALINGS_EMU_SCOPED(atomicXor)
#undef CUDALINGS_EMU_SCOPED

// ------------------------------------------------------------------ loads with cache hints
template <typename T> CUDALINGS_EMU_INLINE T __ldg(const T* p) { return *p; }
template <typename T> CUDALINGS_EMU_INLINE T __ldcg(const T* p) { return *p; }
template <typename T> CUDALINGS_EMU_INLINE T __ldca(const T* p) { return *p; }
template <typename T> CUDALINGS_EMU_INLINE T __ldcs(const T* p) { return *p; }
template <typename T> CUDALINGS_EMU_INLINE T __ldlu(const T* p) { return *p; }
template <typename T> CUDALINGS_EMU_INLINE T __ldcv(const T* p) { return *p; }
template <typename T> CUDALINGS_EMU_INLINE void __stcg(T* p, T v) { *p = v; }
template <typename T> CUDALINGS_EMU_INLINE void __stcs(T* p, T v) { *p = v; }
template <typename T> CUDALINGS_EMU_INLINE void __stwb(T* p, T v) { *p = v; }
template <typename T> CUDALINGS_EMU_INLINE void __stwt(T* p, T v) { *p = v; }

// ------------------------------------------------------------------ integer intrinsics
CUDALINGS_EMU_INLINE int __popc(unsigned x) { return __builtin_popcount(x); }
CUDALINGS_EMU_INLINE int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
CUDALINGS_EMU_INLINE int __ffs(int x) { return __builtin_ffs(x); }
CUDALINGS_EMU_INLINE int __ffsll(long long x) { return __builtin_ffsll(x); }
CUDALINGS_EMU_INLINE int __clz(int x) { return x == 0 ? 32 : __builtin_clz(unsigned(x)); }
CUDALINGS_EMU_INLINE int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
CUDALINGS_EMU_INLINE unsigned __brev(unsigned x) {
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
    return __builtin_bswap32(x);
}
CUDALINGS_EMU_INLINE unsigned long long __brevll(unsigned long long x) {
    return ((unsigned long long)__brev(unsigned(x)) << 32) | __brev(unsigned(x >> 32));
}
CUDALINGS_EMU_INLINE unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
    unsigned long long v = ((unsigned long long)y << 32) | x;
    unsigned r = 0;
    for (int i = 0; i < 4; ++i) r |= unsigned((v >> (8 * ((s >> (4 * i)) & 7))) & 0xff) << (8 * i);
    return r;
}
CUDALINGS_EMU_INLINE int __mul24(int a, int b) { return int(((long long)(a << 8 >> 8)) * (b << 8 >> 8)); }
CUDALINGS_EMU_INLINE unsigned __umul24(unsigned a, unsigned b) { return (a & 0xffffffu) * (b & 0xffffffu); }
CUDALINGS_EMU_INLINE int __mulhi(int a, int b) { return int(((long long)a * b) >> 32); }
CUDALINGS_EMU_INLINE unsigned __umulhi(unsigned a, unsigned b) { return unsigned(((unsigned long long)a * b) >> 32); }
CUDALINGS_EMU_INLINE long long __mul64hi(long long a, long long b) { return (long long)(((__int128)a * b) >> 64); }
CUDALINGS_EMU_INLINE unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
    return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
CUDALINGS_EMU_INLINE unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned s) {
    unsigned long long v = ((unsigned long long)hi << 32) | lo;
    return unsigned((v << (s & 31)) >> 32);
}
CUDALINGS_EMU_INLINE unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned s) {
    unsigned long long v = ((unsigned long long)hi << 32) | lo;
    return unsigned(v >> (s & 31));
}
CUDALINGS_EMU_INLINE int __hadd(int a, int b) { return int(((long long)a + b) >> 1); }
CUDALINGS_EMU_INLINE int __rhadd(int a, int b) { return int(((long long)a + b + 1) >> 1); }
CUDALINGS_EMU_INLINE unsigned __uhadd(unsigned a, unsigned b) { return unsigned(((unsigned long long)a + b) >> 1); }
CUDALINGS_EMU_INLINE unsigned __urhadd(unsigned a, unsigned b) { return unsigned(((unsigned long long)a + b + 1) >> 1); }
CUDALINGS_EMU_INLINE unsigned __sad(int a, int b, unsigned c) { return c + unsigned(a > b ? a - b : b - a); }
CUDALINGS_EMU_INLINE unsigned __usad(unsigned a, unsigned b, unsigned c) { return c + (a > b ? a - b : b - a); }

// ------------------------------------------------------------------ float intrinsics
// (__expf, __logf, __sinf, __cosf, __powf, __sincosf, sincosf, exp10f, __isnanf, ... come from
// glibc's math.h, which declares them with the same meaning.)
CUDALINGS_EMU_INLINE int __float_as_int(float f) { int i; std::memcpy(&i, &f, 4); return i; }
CUDALINGS_EMU_INLINE unsigned __float_as_uint(float f) { unsigned i; std::memcpy(&i, &f, 4); return i; }
CUDALINGS_EMU_INLINE float __int_as_float(int i) { float f; std::memcpy(&f, &i, 4); return f; }
CUDALINGS_EMU_INLINE float __uint_as_float(unsigned i) { float f; std::memcpy(&f, &i, 4); return f; }
CUDALINGS_EMU_INLINE long long __double_as_longlong(double d) { long long i; std::memcpy(&i, &d, 8); return i; }
CUDALINGS_EMU_INLINE double __longlong_as_double(long long i) { double d; std::memcpy(&d, &i, 8); return d; }
CUDALINGS_EMU_INLINE int __double2hiint(double d) { return int(__double_as_longlong(d) >> 32); }
CUDALINGS_EMU_INLINE int __double2loint(double d) { return int(__double_as_longlong(d)); }
CUDALINGS_EMU_INLINE float __fadd_rn(float a, float b) { return a + b; }
CUDALINGS_EMU_INLINE float __fsub_rn(float a, float b) { return a - b; }
CUDALINGS_EMU_INLINE float __fmul_rn(float a, float b) { return a * b; }
CUDALINGS_EMU_INLINE float __fdiv_rn(float a, float b) { return a / b; }
CUDALINGS_EMU_INLINE float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
CUDALINGS_EMU_INLINE double __dadd_rn(double a, double b) { return a + b; }
CUDALINGS_EMU_INLINE double __dmul_rn(double a, double b) { return a * b; }
CUDALINGS_EMU_INLINE double __fma_rn(double a, double b, double c) { return std::fma(a, b, c); }
CUDALINGS_EMU_INLINE float __fdividef(float a, float b) { return a / b; }
CUDALINGS_EMU_INLINE float __frcp_rn(float a) { return 1.0f / a; }
CUDALINGS_EMU_INLINE float __fsqrt_rn(float a) { return std::sqrt(a); }
CUDALINGS_EMU_INLINE float __frsqrt_rn(float a) { return 1.0f / std::sqrt(a); }
CUDALINGS_EMU_INLINE float rsqrtf(float a) { return 1.0f / std::sqrt(a); }
CUDALINGS_EMU_INLINE double rsqrt(double a) { return 1.0 / std::sqrt(a); }
CUDALINGS_EMU_INLINE float rcbrtf(float a) { return 1.0f / std::cbrt(a); }
CUDALINGS_EMU_INLINE float __saturatef(float a) { return a < 0.0f ? 0.0f : a > 1.0f ? 1.0f : (a == a ? a : 0.0f); }
CUDALINGS_EMU_INLINE int __float2int_rn(float a) { return int(std::nearbyint(a)); }
CUDALINGS_EMU_INLINE int __float2int_rz(float a) { return int(a); }
CUDALINGS_EMU_INLINE int __float2int_rd(float a) { return int(std::floor(a)); }
CUDALINGS_EMU_INLINE int __float2int_ru(float a) { return int(std::ceil(a)); }
CUDALINGS_EMU_INLINE unsigned __float2uint_rn(float a) { return unsigned(std::nearbyint(a)); }
CUDALINGS_EMU_INLINE unsigned __float2uint_rz(float a) { return unsigned(a); }
CUDALINGS_EMU_INLINE long long __float2ll_rn(float a) { return (long long)std::nearbyint(a); }
CUDALINGS_EMU_INLINE long long __float2ll_rz(float a) { return (long long)a; }
CUDALINGS_EMU_INLINE float __int2float_rn(int a) { return float(a); }
CUDALINGS_EMU_INLINE float __uint2float_rn(unsigned a) { return float(a); }
CUDALINGS_EMU_INLINE float __ll2float_rn(long long a) { return float(a); }
CUDALINGS_EMU_INLINE float __ull2float_rn(unsigned long long a) { return float(a); }
CUDALINGS_EMU_INLINE float __double2float_rn(double a) { return float(a); }
CUDALINGS_EMU_INLINE int __double2int_rn(double a) { return int(std::nearbyint(a)); }
CUDALINGS_EMU_INLINE int __double2int_rz(double a) { return int(a); }
CUDALINGS_EMU_INLINE double __int2double_rn(int a) { return double(a); }
CUDALINGS_EMU_INLINE double __ll2double_rn(long long a) { return double(a); }
CUDALINGS_EMU_INLINE float normcdff(float a) { return 0.5f * std::erfc(-a * 0.70710678118654752f); }
CUDALINGS_EMU_INLINE double normcdf(double a) { return 0.5 * std::erfc(-a * 0.70710678118654752); }

// CUDA's min/max overloads (host and device), as crt/math_functions.hpp declares them.
#define CUDALINGS_EMU_MINMAX(R, A, B)                                      \
    CUDALINGS_EMU_INLINE R min(A a, B b) { return static_cast<R>(a) < static_cast<R>(b) ? static_cast<R>(a) : static_cast<R>(b); } \
    CUDALINGS_EMU_INLINE R max(A a, B b) { return static_cast<R>(a) < static_cast<R>(b) ? static_cast<R>(b) : static_cast<R>(a); }
CUDALINGS_EMU_MINMAX(int, int, int)
CUDALINGS_EMU_MINMAX(unsigned, unsigned, unsigned)
CUDALINGS_EMU_MINMAX(unsigned, int, unsigned)
CUDALINGS_EMU_MINMAX(unsigned, unsigned, int)
CUDALINGS_EMU_MINMAX(long, long, long)
CUDALINGS_EMU_MINMAX(unsigned long, unsigned long, unsigned long)
CUDALINGS_EMU_MINMAX(unsigned long, long, unsigned long)
CUDALINGS_EMU_MINMAX(unsigned long, unsigned long, long)
CUDALINGS_EMU_MINMAX(long long, long long, long long)
CUDALINGS_EMU_MINMAX(unsigned long long, unsigned long long, unsigned long long)
CUDALINGS_EMU_MINMAX(unsigned long long, long long, unsigned long long)
CUDALINGS_EMU_MINMAX(unsigned long long, unsigned long long, long long)
CUDALINGS_EMU_MINMAX(float, float, float)
CUDALINGS_EMU_MINMAX(double, double, double)
CUDALINGS_EMU_MINMAX(double, float, double)
CUDALINGS_EMU_MINMAX(double, double, float)
#undef CUDALINGS_EMU_MINMAX
CUDALINGS_EMU_INLINE unsigned umin(unsigned a, unsigned b) { return a < b ? a : b; }
CUDALINGS_EMU_INLINE unsigned umax(unsigned a, unsigned b) { return a < b ? b : a; }
CUDALINGS_EMU_INLINE long long llmin(long long a, long long b) { return a < b ? a : b; }
CUDALINGS_EMU_INLINE long long llmax(long long a, long long b) { return a < b ? b : a; }
CUDALINGS_EMU_INLINE unsigned long long ullmin(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
CUDALINGS_EMU_INLINE unsigned long long ullmax(unsigned long long a, unsigned long long b) { return a < b ? b : a; }

// ------------------------------------------------------------------ runtime API call sites
// The calls whose diagnostics name a line: where memory was allocated, freed or copied.
#define cudaMalloc(p, bytes)                                                                   \
    ::cudalings_emu::malloc_named(reinterpret_cast<void**>(p), (bytes), __FILE__, __LINE__, #p, \
                                  ::cudalings_emu::pointee_size(p))
#define cudaFree(p) ::cudalings_emu::free_at((void*)(p), __FILE__, __LINE__)
#define cudaMemcpy(dst, src, bytes, kind) ::cudalings_emu::memcpy_at((dst), (src), (bytes), (kind), __FILE__, __LINE__)

// cudaFuncSetAttribute(kernel, attribute, value): nvcc also declares it for a kernel (a template),
// and the launch's opt-in to more than 48 KiB of shared memory is matched by the kernel as written.
namespace cudalings_emu {
template <typename F>
inline cudaError_t set_attribute(const char* text, F kernel, cudaFuncAttribute attr, int value) {
    return func_set_attribute(text, reinterpret_cast<const void*>(kernel), attr, value);
}
}  // namespace cudalings_emu
#define cudaFuncSetAttribute(...) ::cudalings_emu::set_attribute(#__VA_ARGS__, __VA_ARGS__)

// Symbols (__device__ and __constant__ variables are ordinary variables here): the overloads nvcc
// declares for a variable given by name.
template <typename T>
inline cudaError_t cudaGetSymbolAddress(void** p, const T& symbol) {
    if (!p) return cudaErrorInvalidValue;
    *p = const_cast<void*>(static_cast<const volatile void*>(&symbol));
    return cudaSuccess;
}
template <typename T>
inline cudaError_t cudaGetSymbolSize(size_t* size, const T&) {
    if (size) *size = sizeof(T);
    return cudaSuccess;
}
template <typename T>
inline cudaError_t cudaMemcpyToSymbol(const T& symbol, const void* src, size_t bytes,
                                      size_t offset = 0,
                                      cudaMemcpyKind kind = cudaMemcpyHostToDevice) {
    if (offset + bytes > sizeof(T)) return cudaErrorInvalidValue;
    return ::cudaMemcpyToSymbol(static_cast<const void*>(&symbol), src, bytes, offset, kind);
}
template <typename T>
inline cudaError_t cudaMemcpyFromSymbol(void* dst, const T& symbol, size_t bytes,
                                        size_t offset = 0,
                                        cudaMemcpyKind kind = cudaMemcpyDeviceToHost) {
    if (offset + bytes > sizeof(T)) return cudaErrorInvalidValue;
    return ::cudaMemcpyFromSymbol(dst, static_cast<const void*>(&symbol), bytes, offset, kind);
}
template <typename T>
inline cudaError_t cudaMemcpyToSymbolAsync(const T& symbol, const void* src, size_t bytes,
                                           size_t offset = 0,
                                           cudaMemcpyKind kind = cudaMemcpyHostToDevice,
                                           cudaStream_t = 0) {
    return cudaMemcpyToSymbol(symbol, src, bytes, offset, kind);
}
template <typename T>
inline cudaError_t cudaMemcpyFromSymbolAsync(void* dst, const T& symbol, size_t bytes,
                                             size_t offset = 0,
                                             cudaMemcpyKind kind = cudaMemcpyDeviceToHost,
                                             cudaStream_t = 0) {
    return cudaMemcpyFromSymbol(dst, symbol, bytes, offset, kind);
}

// cudaLaunchKernel(kernel, grid, block, args, shmem, stream): the kernel's parameter types say
// how to read `args`; a kernel cast to const void* cannot be called here (reported unsupported).
namespace cudalings_emu {
template <typename... P, std::size_t... I>
inline cudaError_t launch_with_args(const char* text, const char* file, int line,
                                    void (*kernel)(P...), dim3 grid, dim3 block, void** args,
                                    std::size_t shmem, cudaStream_t stream,
                                    std::index_sequence<I...>) {
    std::string name = text ? text : "kernel";
    name = name.substr(0, name.find(','));
    Launch(file, line, name.c_str(), grid, block, shmem, stream)
        .go([kernel](auto&... a) { kernel(a...); },
            *static_cast<std::decay_t<P>*>(args[I])...);
    return cudaPeekAtLastError();
}
template <typename... P>
inline cudaError_t launch_kernel(const char* text, const char* file, int line,
                                 void (*kernel)(P...), dim3 grid, dim3 block, void** args,
                                 std::size_t shmem = 0, cudaStream_t stream = 0) {
    return launch_with_args(text, file, line, kernel, grid, block, args, shmem, stream,
                            std::index_sequence_for<P...>{});
}
inline cudaError_t launch_kernel(const char*, const char* file, int line, const void*, dim3,
                                 dim3, void**, std::size_t = 0, cudaStream_t = 0) {
    unsupported("cudaLaunchKernel of a kernel cast to const void* (the emulator needs the "
                "kernel's parameter types: pass the kernel itself, as nvcc allows)",
                file, line);
    return cudaErrorNotSupported;
}
}  // namespace cudalings_emu
#define cudaLaunchKernel(...) ::cudalings_emu::launch_kernel(#__VA_ARGS__, __FILE__, __LINE__, __VA_ARGS__)
#define cudaLaunchCooperativeKernel(...) \
    ::cudalings_emu::launch_kernel(#__VA_ARGS__, __FILE__, __LINE__, __VA_ARGS__)
