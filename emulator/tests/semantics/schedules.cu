// Schedules: kernels whose results or diagnostics depend on the order in which blocks start and
// on how many blocks run at once. emulator/tests/test_schedules.cpp runs each `sched_*` entry
// point under the options it chooses. Lines the tests look for carry a `// line: NAME` marker.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "device_vectors.cuh"

namespace {

// ------------------------------------------------------------------ the start order
// The first thread of every block takes a ticket: ticket[b] is the rank of block b's start.
__global__ void take_ticket(unsigned* counter, unsigned* ticket) {
    unsigned b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    if (threadIdx.x == 0) ticket[b] = atomicAdd(counter, 1u);
}

// ------------------------------------------------------------------ shared memory per block
constexpr unsigned kSharedBlock = 64;
constexpr unsigned kSpinReads = 40;

// Every block keeps its index in static and dynamic shared memory while it reads global
// memory for a while (each read is a point where other blocks may run), then reads them back.
// `most` receives the largest number of blocks that were running at once.
__global__ void shared_per_block(const unsigned* zeros, unsigned* ok, unsigned* running,
                                 unsigned* most) {
    __shared__ unsigned block_id;
    __shared__ unsigned mine[kSharedBlock];
    extern __shared__ unsigned dyn[];
    unsigned t = threadIdx.x, b = blockIdx.x;
    if (t == 0) {
        block_id = b;
        atomicMax(most, atomicAdd(running, 1u) + 1u);
    }
    mine[t] = b * 1000u + t;
    dyn[t] = b * 7u + t;
    unsigned acc = 0;
    for (unsigned k = 0; k < kSpinReads; ++k) acc += zeros[(t + k) % kSharedBlock];
    __syncthreads();
    unsigned next = (t + 1) % kSharedBlock;
    bool good = acc == 0 && block_id == b && mine[next] == b * 1000u + next && dyn[t] == b * 7u + t;
    ok[b * kSharedBlock + t] = good ? 1u : 0u;
    __syncthreads();
    if (t == 0) atomicSub(running, 1u);
}

// ------------------------------------------------------------------ tile scans
constexpr unsigned kTile = 64;

// Inclusive scan of one tile in shared memory (Hillis-Steele); returns this thread's value.
__device__ int tile_scan(const int* x, int n, unsigned tile, int* s) {
    unsigned t = threadIdx.x;
    int i = int(tile * kTile + t);
    s[t] = i < n ? x[i] : 0;
    __syncthreads();
    for (unsigned o = 1; o < kTile; o *= 2) {
        int v = t >= o ? s[t - o] : 0;
        __syncthreads();
        s[t] += v;
        __syncthreads();
    }
    return s[t];
}

// The tile this block works on: in start order from a counter (correct), or its blockIdx.x
// (wrong when a tile waits for the one before it: that block may not have started).
__device__ unsigned my_tile(unsigned* next_tile, bool from_counter) {
    __shared__ unsigned tile;
    if (threadIdx.x == 0) tile = from_counter ? atomicAdd(next_tile, 1u) : blockIdx.x;
    __syncthreads();
    return tile;
}

// A chained scan: each tile waits for the previous tile's carry-out. The carry is a plain
// word published by a __threadfence() and a volatile flag (kFence false: the fence is missing).
template <bool kFence>
__global__ void chained_scan(const int* x, int* y, int n, unsigned* next_tile, int* carry,
                             volatile int* ready, bool from_counter) {
    __shared__ int s[kTile];
    __shared__ int prefix;
    unsigned tile = my_tile(next_tile, from_counter);
    int v = tile_scan(x, n, tile, s);
    if (threadIdx.x == 0) {
        int before = 0;
        if (tile > 0) {
            while (ready[tile - 1] == 0) {  // line: chained poll
            }
            before = carry[tile - 1];  // line: chained carry read
        }
        carry[tile] = before + s[kTile - 1];
        if (kFence) __threadfence();
        ready[tile] = 1;
        prefix = before;
    }
    __syncthreads();
    int i = int(tile * kTile + threadIdx.x);
    if (i < n) y[i] = v + prefix;
}

// A decoupled look-back: a tile publishes its aggregate at once, then adds the aggregates of
// the tiles before it until one has published its inclusive prefix. kPacked: one 64-bit
// volatile status word per tile {flag, value}; else a value, a __threadfence(), a volatile flag
// (aggregates and prefixes in separate arrays, as a word may be read after it changes).
constexpr unsigned kInvalid = 0, kAggregate = 1, kPrefix = 2;

struct LookBack {
    volatile unsigned long long* status;  // packed
    int* aggregates;                      // split
    int* prefixes;
    volatile unsigned* flags;
};

template <bool kPacked>
__device__ void publish(const LookBack& lb, unsigned tile, unsigned flag, int value) {
    if (kPacked) {
        lb.status[tile] = (static_cast<unsigned long long>(flag) << 32) | unsigned(value);
    } else {
        (flag == kPrefix ? lb.prefixes : lb.aggregates)[tile] = value;
        __threadfence();
        lb.flags[tile] = flag;
    }
}

// kWait false: a predecessor's empty word counts as an aggregate of 0 (no wait), wrong.
template <bool kPacked, bool kWait = true>
__global__ void lookback_scan(const int* x, int* y, int n, unsigned* next_tile, LookBack lb,
                              bool from_counter) {
    __shared__ int s[kTile];
    __shared__ int prefix;
    unsigned tile = my_tile(next_tile, from_counter);
    int v = tile_scan(x, n, tile, s);
    if (threadIdx.x == 0) {
        int aggregate = s[kTile - 1];
        publish<kPacked>(lb, tile, tile == 0 ? kPrefix : kAggregate, aggregate);
        int exclusive = 0;
        for (int j = int(tile) - 1; j >= 0; --j) {
            unsigned flag;
            int value;
            if (kPacked) {
                unsigned long long word;
                do {
                    word = lb.status[j];  // line: packed poll
                } while (kWait && word >> 32 == kInvalid);
                flag = unsigned(word >> 32);
                value = int(unsigned(word));
            } else {
                do {
                    flag = lb.flags[j];  // line: split poll
                } while (flag == kInvalid);
                value = flag == kPrefix ? lb.prefixes[j] : lb.aggregates[j];
            }
            exclusive += value;
            if (flag == kPrefix) break;
        }
        if (tile > 0) publish<kPacked>(lb, tile, kPrefix, exclusive + aggregate);
        prefix = exclusive;
    }
    __syncthreads();
    int i = int(tile * kTile + threadIdx.x);
    if (i < n) y[i] = v + prefix;
}

// ------------------------------------------------------------------ sums of floats
constexpr unsigned kSumBlock = 64;

__device__ float block_total(const float* x, int n) {
    __shared__ float s[kSumBlock];
    unsigned t = threadIdx.x;
    int i = int(blockIdx.x * kSumBlock + t);
    s[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (unsigned o = kSumBlock / 2; o > 0; o /= 2) {
        if (t < o) s[t] += s[t + o];
        __syncthreads();
    }
    return s[0];
}

// One float atomicAdd per block: the order of the additions is the order the blocks finish.
__global__ void sum_atomic(const float* x, int n, float* sum) {
    float total = block_total(x, n);
    if (threadIdx.x == 0) atomicAdd(sum, total);
}

// Two passes: partials by block index, then one thread adds them in a fixed order.
__global__ void sum_partials(const float* x, int n, float* partials) {
    float total = block_total(x, n);
    if (threadIdx.x == 0) partials[blockIdx.x] = total;
}
__global__ void sum_final(const float* partials, int count, float* sum) {
    float acc = 0.0f;
    for (int i = 0; i < count; ++i) acc += partials[i];
    *sum = acc;
}

// ------------------------------------------------------------------ bugs across blocks
// Block b reads what block b + 1 writes, with nothing between them.
__global__ void neighbour_race(int* data, int* out) {
    unsigned b = blockIdx.x, next = (b + 1) % gridDim.x;
    if (threadIdx.x == 0) {
        data[b] = int(b);     // line: neighbour write
        out[b] = data[next];  // line: neighbour read
    }
}

// Every block waits for the next one's flag before it sets its own: a cycle.
__global__ void wait_in_a_cycle(volatile int* flags) {
    unsigned b = blockIdx.x, next = (b + 1) % gridDim.x;
    if (threadIdx.x == 0) {
        while (flags[next] == 0) {  // line: cycle poll
        }
        flags[b] = 1;
    }
}

// Inside one block: thread 1 spins on a shared flag that thread 0 sets after a barrier that
// thread 1 never reaches.
__global__ void spin_on_shared(int* out) {
    __shared__ volatile int flag;
    if (threadIdx.x == 0) {
        flag = 0;
        __syncthreads();
        flag = 1;
    } else {
        while (flag == 0) {  // line: shared poll
        }
        __syncthreads();
    }
    out[threadIdx.x] = 1;
}

std::vector<int> scan_input(int n) {
    std::vector<int> x(n);
    for (int i = 0; i < n; ++i) x[i] = (i * 7) % 11 - 5;
    return x;
}

bool scan_right(const std::vector<int>& x, const std::vector<int>& y) {
    long long acc = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        acc += x[i];
        if (y[i] != acc) return false;
    }
    return true;
}

}  // namespace

// order[k] = the linear index of the k-th block to start; 0 when every block started once.
extern "C" int sched_start_order(unsigned gx, unsigned gy, unsigned* order) {
    unsigned blocks = gx * gy;
    unsigned *counter, *ticket;
    cudaMalloc(&counter, 4);
    cudaMalloc(&ticket, blocks * 4);
    cudaMemset(counter, 0, 4);
    cudaMemset(ticket, 0xff, blocks * 4);
    take_ticket<<<dim3(gx, gy), 32>>>(counter, ticket);
    if (cudaDeviceSynchronize() != cudaSuccess) return 1;
    auto t = back(ticket, blocks);
    cudaFree(counter);
    cudaFree(ticket);
    std::vector<int> seen(blocks, 0);
    for (unsigned b = 0; b < blocks; ++b) {
        if (t[b] >= blocks || seen[t[b]]++) return 2;
        order[t[b]] = b;
    }
    return 0;
}

// 0 when every block saw its own shared memory; *most = the most blocks running at once.
extern "C" int sched_shared_per_block(unsigned blocks, unsigned* most) {
    std::vector<unsigned> zeros(kSharedBlock, 0);
    unsigned* z = device(zeros);
    unsigned *ok, *counters;
    cudaMalloc(&ok, blocks * kSharedBlock * 4);
    cudaMalloc(&counters, 8);
    cudaMemset(ok, 0, blocks * kSharedBlock * 4);
    cudaMemset(counters, 0, 8);
    shared_per_block<<<blocks, kSharedBlock, kSharedBlock * sizeof(unsigned)>>>(z, ok, counters,
                                                                                counters + 1);
    if (cudaDeviceSynchronize() != cudaSuccess) return 1;
    auto good = back(ok, blocks * kSharedBlock);
    *most = back(counters + 1, 1)[0];
    cudaFree(z);
    cudaFree(ok);
    cudaFree(counters);
    for (unsigned g : good)
        if (g != 1) return 2;
    return 0;
}

// The scans: 0 when right, 1 when the launch failed (the error at the synchronisation), 2 when
// the result is wrong. variant: 0 chained, 1 chained without its fence, 2 packed look-back,
// 3 split look-back, 4 packed look-back that takes an empty word for 0 (no wait).
extern "C" int sched_scan(int variant, int n, int from_counter) {
    auto x = scan_input(n);
    int* dx = device(x);
    unsigned tiles = (unsigned(n) + kTile - 1) / kTile;
    int *y, *carry, *aggregates, *prefixes;
    int* ready;
    unsigned *next, *flags;
    unsigned long long* status;
    cudaMalloc(&y, n * 4);
    cudaMalloc(&next, 4);
    cudaMalloc(&carry, tiles * 4);
    cudaMalloc(&ready, tiles * 4);
    cudaMalloc(&status, tiles * 8);
    cudaMalloc(&aggregates, tiles * 4);
    cudaMalloc(&prefixes, tiles * 4);
    cudaMalloc(&flags, tiles * 4);
    cudaMemset(next, 0, 4);
    cudaMemset(ready, 0, tiles * 4);
    cudaMemset(status, 0, tiles * 8);
    cudaMemset(flags, 0, tiles * 4);
    LookBack lb{status, aggregates, prefixes, flags};
    bool fc = from_counter != 0;
    switch (variant) {
        case 0:
            chained_scan<true><<<tiles, kTile>>>(dx, y, n, next, carry, ready, fc);
            break;
        case 1:
            chained_scan<false><<<tiles, kTile>>>(dx, y, n, next, carry, ready, fc);
            break;
        case 2:
            lookback_scan<true><<<tiles, kTile>>>(dx, y, n, next, lb, fc);
            break;
        case 4:
            lookback_scan<true, false><<<tiles, kTile>>>(dx, y, n, next, lb, fc);
            break;
        default:
            lookback_scan<false><<<tiles, kTile>>>(dx, y, n, next, lb, fc);
            break;
    }
    cudaError_t e = cudaDeviceSynchronize();
    auto got = back(y, n);
    for (void* p : {(void*)dx, (void*)y, (void*)next, (void*)carry, (void*)ready, (void*)status,
                    (void*)aggregates, (void*)prefixes, (void*)flags})
        cudaFree(p);
    if (e != cudaSuccess) return 1;
    return scan_right(x, got) ? 0 : 2;
}

// `calls` sums of the same floats; bits[k] = the bits of the k-th result. two_pass: partials
// and a fixed-order second pass; else one float atomicAdd per block.
extern "C" int sched_sum_bits(int two_pass, int calls, unsigned* bits) {
    const int n = int(kSumBlock) * 48;
    std::vector<float> h(n);
    for (int i = 0; i < n; ++i)
        h[i] = float((i * 37) % 101 + 1) * std::pow(10.0f, float(i % 9) - 4.0f);
    float* x = device(h);
    float *sum, *partials;
    unsigned blocks = unsigned(n) / kSumBlock;
    cudaMalloc(&sum, 4);
    cudaMalloc(&partials, blocks * 4);
    for (int k = 0; k < calls; ++k) {
        cudaMemset(sum, 0, 4);
        if (two_pass) {
            sum_partials<<<blocks, kSumBlock>>>(x, n, partials);
            sum_final<<<1, 1>>>(partials, int(blocks), sum);
        } else {
            sum_atomic<<<blocks, kSumBlock>>>(x, n, sum);
        }
        if (cudaDeviceSynchronize() != cudaSuccess) return 1;
        float s = back(sum, 1)[0];
        std::memcpy(&bits[k], &s, 4);
    }
    cudaFree(x);
    cudaFree(sum);
    cudaFree(partials);
    return 0;
}

extern "C" int sched_neighbour_race(unsigned blocks) {
    int *data, *out;
    cudaMalloc(&data, blocks * 4);
    cudaMalloc(&out, blocks * 4);
    cudaMemset(data, 0, blocks * 4);
    neighbour_race<<<blocks, 32>>>(data, out);
    cudaError_t e = cudaDeviceSynchronize();
    cudaFree(data);
    cudaFree(out);
    return e == cudaSuccess ? 0 : 1;
}

// The error the launch ends with (cudaErrorLaunchTimeout expected).
extern "C" int sched_wait_in_a_cycle(unsigned blocks) {
    int* flags;
    cudaMalloc(&flags, blocks * 4);
    cudaMemset(flags, 0, blocks * 4);
    wait_in_a_cycle<<<blocks, 32>>>(flags);
    cudaError_t e = cudaDeviceSynchronize();
    cudaFree(flags);
    return int(e);
}

extern "C" int sched_spin_on_shared() {
    int* out;
    cudaMalloc(&out, 64 * 4);
    spin_on_shared<<<2, 64>>>(out);
    cudaError_t e = cudaDeviceSynchronize();
    cudaFree(out);
    return int(e);
}

// A finite loop that walks the same words again and again and changes nothing: each block
// counts its keys into every slice of the bins in turn, and with every key in slice 0 the other
// slices see none (the counters are stored 0 over 0, nothing else is written). Memory looks
// as it does under a spin-wait; the loop still ends (the stall detector's repetition rule).
namespace {
constexpr unsigned kWalkSlice = 256;
__global__ void walk_every_slice(const unsigned* keys, unsigned* bins, unsigned n,
                                 unsigned num_bins) {
    __shared__ unsigned counts[kWalkSlice];
    for (unsigned lo = 0; lo < num_bins; lo += kWalkSlice) {
        for (unsigned b = threadIdx.x; b < kWalkSlice; b += blockDim.x) counts[b] = 0;
        __syncthreads();
        for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
            if (keys[i] - lo < kWalkSlice) atomicAdd(&counts[keys[i] - lo], 1u);  // line: walk
        __syncthreads();
        for (unsigned b = threadIdx.x; b < kWalkSlice; b += blockDim.x)
            if (counts[b] != 0) atomicAdd(&bins[lo + b], counts[b]);
        __syncthreads();
    }
}
}  // namespace

// 1 when every key (all 0) is counted in bin 0 and no other bin; the launch's error otherwise.
extern "C" int sched_walk_every_slice(unsigned n, unsigned num_bins) {
    unsigned *keys, *bins;
    cudaMalloc(&keys, n * 4);
    cudaMalloc(&bins, num_bins * 4);
    cudaMemset(keys, 0, n * 4);
    cudaMemset(bins, 0, num_bins * 4);
    walk_every_slice<<<4, 128>>>(keys, bins, n, num_bins);
    cudaError_t e = cudaDeviceSynchronize();
    std::vector<unsigned> host(num_bins);
    cudaMemcpy(host.data(), bins, num_bins * 4, cudaMemcpyDeviceToHost);
    cudaFree(keys);
    cudaFree(bins);
    if (e != cudaSuccess) return int(e);
    bool right = host[0] == n;
    for (unsigned b = 1; b < num_bins; ++b) right = right && host[b] == 0;
    return right ? 1 : 0;
}
