// cudalings CPU emulator: cooperative groups for emulated code. Found before NVIDIA's header
// (the emulator's include directory comes first), it gives the same names on the emulator's
// runtime: the block, tiles of a warp (static and dynamic sizes that divide 32), coalesced
// groups, and cg::reduce / cg::inclusive_scan / cg::exclusive_scan over them. A grid-wide
// sync (this_grid().sync()) needs every block resident at once: the emulator reports it as
// unsupported (the step is SKIPPED under emulation, never judged).
//
// Every collective passes the learner's file and line (default arguments evaluated at the call
// site), so the emulator's reports name the line that called the group, not this header.
#pragma once

#include <cstddef>
#include <type_traits>

#include "cudalings_emu/cuda_emu.h"

namespace cooperative_groups {
namespace cudalings_detail {

using ::cudalings_emu::kAll;
using ::cudalings_emu::kAny;
using ::cudalings_emu::kBallot;
using ::cudalings_emu::kShflDown;
using ::cudalings_emu::kShflIdx;
using ::cudalings_emu::kShflUp;
using ::cudalings_emu::kShflXor;
using ::cudalings_emu::kSyncWarp;

inline unsigned lane() { return ::cudalings_emu::lane_id(); }
inline unsigned linear_thread() {
    const uint3 t = ::cudalings_emu::thread_idx();
    const dim3 d = ::cudalings_emu::block_dim();
    return t.x + d.x * (t.y + d.y * t.z);
}
inline unsigned block_threads() {
    const dim3 d = ::cudalings_emu::block_dim();
    return d.x * d.y * d.z;
}
// The lanes of the tile of `size` lanes (a power of two up to 32) that holds this lane.
inline unsigned tile_mask(unsigned size) {
    const unsigned base = lane() & ~(size - 1);
    return size >= 32 ? 0xffffffffu : ((1u << size) - 1u) << base;
}
// The lane of `mask` with rank `rank` (the rank-th set bit), or 32 when there is none.
inline unsigned nth_lane(unsigned mask, unsigned rank) {
    for (unsigned l = 0; l < 32; ++l)
        if (mask >> l & 1u) {
            if (rank == 0) return l;
            --rank;
        }
    return 32;
}

// A group of lanes of one warp: a tile (contiguous, `size` a power of two) or coalesced lanes.
class lane_group {
  public:
    lane_group(unsigned mask, bool contiguous, unsigned size, unsigned meta_rank,
               unsigned meta_size)
        : mask_(mask),
          contiguous_(contiguous),
          size_(size),
          meta_rank_(meta_rank),
          meta_size_(meta_size) {}

    unsigned num_threads() const { return size_; }
    unsigned size() const { return size_; }
    unsigned thread_rank() const {
        return contiguous_ ? lane() & (size_ - 1)
                           : __builtin_popcount(mask_ & ((1u << lane()) - 1u));
    }
    unsigned meta_group_rank() const { return meta_rank_; }
    unsigned meta_group_size() const { return meta_size_; }
    void sync(const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        ::cudalings_emu::warp_op(kSyncWarp, mask_, 0, 4, 0, 32, nullptr, file, line);
    }

    template <typename T>
    T shfl(T v, int src_rank, const char* file = __builtin_FILE(),
           int line = __builtin_LINE()) const {
        if (contiguous_)
            return ::cudalings_emu::shfl(kShflIdx, file, line, mask_, v, src_rank, int(size_));
        unsigned src = nth_lane(mask_, unsigned(src_rank) % (size_ ? size_ : 1));
        return ::cudalings_emu::shfl(kShflIdx, file, line, mask_, v, int(src));
    }
    template <typename T>
    T shfl_down(T v, unsigned delta, const char* file = __builtin_FILE(),
                int line = __builtin_LINE()) const {
        if (contiguous_)
            return ::cudalings_emu::shfl(kShflDown, file, line, mask_, v, int(delta), int(size_));
        unsigned r = thread_rank() + delta;
        unsigned src = r < size_ ? nth_lane(mask_, r) : lane();
        return ::cudalings_emu::shfl(kShflIdx, file, line, mask_, v, int(src));
    }
    template <typename T>
    T shfl_up(T v, unsigned delta, const char* file = __builtin_FILE(),
              int line = __builtin_LINE()) const {
        if (contiguous_)
            return ::cudalings_emu::shfl(kShflUp, file, line, mask_, v, int(delta), int(size_));
        unsigned r = thread_rank();
        unsigned src = r >= delta ? nth_lane(mask_, r - delta) : lane();
        return ::cudalings_emu::shfl(kShflIdx, file, line, mask_, v, int(src));
    }
    template <typename T>
    T shfl_xor(T v, unsigned lane_mask, const char* file = __builtin_FILE(),
               int line = __builtin_LINE()) const {
        if (contiguous_)
            return ::cudalings_emu::shfl(kShflXor, file, line, mask_, v, int(lane_mask),
                                         int(size_));
        unsigned r = thread_rank() ^ lane_mask;
        unsigned src = r < size_ ? nth_lane(mask_, r) : lane();
        return ::cudalings_emu::shfl(kShflIdx, file, line, mask_, v, int(src));
    }
    int any(int pred, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        return int(::cudalings_emu::vote(kAny, file, line, mask_, pred));
    }
    int all(int pred, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        return int(::cudalings_emu::vote(kAll, file, line, mask_, pred));
    }
    // The ballot in ranks: bit k is the lane of rank k.
    unsigned ballot(int pred, const char* file = __builtin_FILE(),
                    int line = __builtin_LINE()) const {
        unsigned lanes = ::cudalings_emu::vote(kBallot, file, line, mask_, pred);
        if (contiguous_)
            return size_ >= 32 ? lanes : (lanes >> (lane() & ~(size_ - 1))) & ((1u << size_) - 1u);
        unsigned out = 0;
        for (unsigned r = 0; r < size_; ++r)
            if (lanes >> nth_lane(mask_, r) & 1u) out |= 1u << r;
        return out;
    }
    template <typename T>
    unsigned match_any(T v, const char* file = __builtin_FILE(),
                       int line = __builtin_LINE()) const {
        return ::cudalings_emu::match_any(file, line, mask_, v);
    }
    template <typename T>
    unsigned match_all(T v, int& pred, const char* file = __builtin_FILE(),
                       int line = __builtin_LINE()) const {
        return ::cudalings_emu::match_all(file, line, mask_, v, &pred);
    }
    unsigned lanes() const { return mask_; }

  private:
    unsigned mask_;
    bool contiguous_;
    unsigned size_, meta_rank_, meta_size_;
};

}  // namespace cudalings_detail

// ------------------------------------------------------------------ the block
class thread_block {
  public:
    static void sync(const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
        ::cudalings_emu::syncthreads(file, line);
    }
    static unsigned thread_rank() { return cudalings_detail::linear_thread(); }
    static unsigned num_threads() { return cudalings_detail::block_threads(); }
    static unsigned size() { return num_threads(); }
    static dim3 group_index() {
        const uint3 b = ::cudalings_emu::block_idx();
        return dim3(b.x, b.y, b.z);
    }
    static dim3 thread_index() {
        const uint3 t = ::cudalings_emu::thread_idx();
        return dim3(t.x, t.y, t.z);
    }
    static dim3 group_dim() { return ::cudalings_emu::block_dim(); }
    static dim3 dim_threads() { return ::cudalings_emu::block_dim(); }
};
inline thread_block this_thread_block() { return thread_block(); }

// ------------------------------------------------------------------ the grid
class grid_group {
  public:
    static void sync(const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
        ::cudalings_emu::unsupported(
            "grid_group::sync() (a grid-wide barrier needs every block resident at once)", file,
            line);
    }
    static bool is_valid() { return true; }
    static unsigned long long thread_rank() {
        const uint3 b = ::cudalings_emu::block_idx();
        const dim3 g = ::cudalings_emu::grid_dim();
        unsigned long long block = b.x + 1ull * g.x * (b.y + 1ull * g.y * b.z);
        return block * cudalings_detail::block_threads() + cudalings_detail::linear_thread();
    }
    static unsigned long long num_threads() {
        const dim3 g = ::cudalings_emu::grid_dim();
        return 1ull * g.x * g.y * g.z * cudalings_detail::block_threads();
    }
    static unsigned long long size() { return num_threads(); }
    static unsigned long long num_blocks() {
        const dim3 g = ::cudalings_emu::grid_dim();
        return 1ull * g.x * g.y * g.z;
    }
    static dim3 group_dim() { return ::cudalings_emu::grid_dim(); }
    static dim3 dim_blocks() { return ::cudalings_emu::grid_dim(); }
    static dim3 block_index() {
        const uint3 b = ::cudalings_emu::block_idx();
        return dim3(b.x, b.y, b.z);
    }
};
inline grid_group this_grid() { return grid_group(); }

// ------------------------------------------------------------------ tiles and lane groups
// A group of lanes whose size is known only at run time (tiled_partition(parent, n), or the
// lanes that are active together).
class thread_group : public cudalings_detail::lane_group {
  public:
    using lane_group::lane_group;
};

class coalesced_group : public thread_group {
  public:
    using thread_group::thread_group;
};

template <unsigned Size, typename Parent = void>
class thread_block_tile;

template <unsigned Size>
class thread_block_tile<Size, void> : public cudalings_detail::lane_group {
    static_assert(Size >= 1 && Size <= 32 && (Size & (Size - 1)) == 0,
                  "a thread_block_tile has a power of two of at most 32 threads");

  public:
    thread_block_tile()
        : lane_group(cudalings_detail::tile_mask(Size), true, Size,
                     cudalings_detail::linear_thread() / Size,
                     (cudalings_detail::block_threads() + Size - 1) / Size) {}
    static constexpr unsigned num_threads() { return Size; }
    static constexpr unsigned size() { return Size; }
};

template <unsigned Size, typename Parent>
class thread_block_tile : public thread_block_tile<Size, void> {};

template <unsigned Size, typename Parent>
thread_block_tile<Size, Parent> tiled_partition(const Parent&) {
    return thread_block_tile<Size, Parent>();
}

inline thread_group tiled_partition(const thread_block&, unsigned size,
                                    const char* file = __builtin_FILE(),
                                    int line = __builtin_LINE()) {
    if (size == 0 || size > 32 || (size & (size - 1)) != 0)
        ::cudalings_emu::unsupported("tiled_partition(block, n) with n not a power of two up to 32",
                                     file, line);
    return thread_group(cudalings_detail::tile_mask(size), true, size,
                        cudalings_detail::linear_thread() / size,
                        (cudalings_detail::block_threads() + size - 1) / size);
}

// The lanes of this warp that reach this call together (after a branch: the branch's lanes).
inline coalesced_group coalesced_threads(const char* file = __builtin_FILE(),
                                         int line = __builtin_LINE()) {
    const unsigned mask = ::cudalings_emu::activemask(file, line);
    return coalesced_group(mask, false, unsigned(__builtin_popcount(mask)), 0, 1);
}

template <typename Group>
void sync(const Group& g, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    g.sync(file, line);
}
template <typename Group>
auto thread_rank(const Group& g) -> decltype(g.thread_rank()) {
    return g.thread_rank();
}
template <typename Group>
auto group_size(const Group& g) -> decltype(g.num_threads()) {
    return g.num_threads();
}

// ------------------------------------------------------------------ reduce and scan
template <typename T = void>
struct plus {
    T operator()(const T& a, const T& b) const { return a + b; }
};
template <typename T = void>
struct less {
    T operator()(const T& a, const T& b) const { return b < a ? b : a; }
};
template <typename T = void>
struct greater {
    T operator()(const T& a, const T& b) const { return a < b ? b : a; }
};
template <typename T = void>
struct bit_and {
    T operator()(const T& a, const T& b) const { return a & b; }
};
template <typename T = void>
struct bit_or {
    T operator()(const T& a, const T& b) const { return a | b; }
};
template <typename T = void>
struct bit_xor {
    T operator()(const T& a, const T& b) const { return a ^ b; }
};

#define CUDALINGS_CG_VOID_OP(name, expr)             \
    template <>                                      \
    struct name<void> {                              \
        template <typename T>                        \
        T operator()(const T& a, const T& b) const { \
            return expr;                             \
        }                                            \
    };
CUDALINGS_CG_VOID_OP(plus, a + b)
CUDALINGS_CG_VOID_OP(less, b < a ? b : a)
CUDALINGS_CG_VOID_OP(greater, a < b ? b : a)
CUDALINGS_CG_VOID_OP(bit_and, a& b)
CUDALINGS_CG_VOID_OP(bit_or, a | b)
CUDALINGS_CG_VOID_OP(bit_xor, a ^ b)
#undef CUDALINGS_CG_VOID_OP

// Every lane of the group gets op over the values of all its lanes.
template <typename Group, typename T, typename Op>
T reduce(const Group& g, T value, Op op, const char* file = __builtin_FILE(),
         int line = __builtin_LINE()) {
    const unsigned n = g.num_threads();
    if ((n & (n - 1)) == 0) {
        // A butterfly: log2(n) exchanges, every lane ends with the whole result.
        for (unsigned k = n / 2; k > 0; k /= 2) value = op(value, g.shfl_xor(value, k, file, line));
        return value;
    }
    T total = g.shfl(value, 0, file, line);
    for (unsigned r = 1; r < n; ++r) total = op(total, g.shfl(value, int(r), file, line));
    return total;
}

// Lane k gets op over the values of lanes 0..k (inclusive) or 0..k-1 (exclusive; lane 0 gets
// a value-initialised T).
template <typename Group, typename T, typename Op = plus<T>>
T inclusive_scan(const Group& g, T value, Op op = Op(), const char* file = __builtin_FILE(),
                 int line = __builtin_LINE()) {
    const unsigned rank = g.thread_rank();
    for (unsigned d = 1; d < g.num_threads(); d *= 2) {
        T other = g.shfl_up(value, d, file, line);
        if (rank >= d) value = op(other, value);
    }
    return value;
}
template <typename Group, typename T, typename Op = plus<T>>
T exclusive_scan(const Group& g, T value, Op op = Op(), const char* file = __builtin_FILE(),
                 int line = __builtin_LINE()) {
    T inclusive = inclusive_scan(g, value, op, file, line);
    T previous = g.shfl_up(inclusive, 1, file, line);
    return g.thread_rank() == 0 ? T() : previous;
}

}  // namespace cooperative_groups
