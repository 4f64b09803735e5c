// Lesson 10, step 7 — pipelining through registers (the lesson's capstone).
//
// Teaches: hide the global loads behind the math. Each thread issues the *next* slice's global
// loads into registers before it computes the current slice from shared memory, so the loads
// are in flight while the outer products run. Shared memory holds two buffers: the registers go
// into the one nobody is reading, then one barrier:
//
//     regs <- global(slice 0); shared[0] <- regs; barrier          (given)
//     for each slice s, reading buffer b (stage):
//         if there is a next one: regs <- global(slice s + 1)
//         compute slice s from shared[b]
//         if there is a next one: shared[b ^ 1] <- regs
//         barrier
//
// The helpers (load_slice, store_slice, compute_slice) and the store of C are given; the kernel
// is a template over its tile sizes so that bench/gemm_sweep can time other shapes of it. The
// Config's kStages / kPrefetch are for those variants: this step's default is two shared
// buffers with prefetch, k in slices of 16. Read "Step 7" in lessons/10_gemm/README.md.
//
// Check:  ./cudalings check 10_gemm/07_register_prefetch
// Stuck:  ./cudalings hint 10_gemm/07_register_prefetch
//
// As given, this file compiles and runs but computes nothing (acc stays 0), so C becomes
// beta * C and every test fails.

#include "gemm.cuh"

template <unsigned int BM, unsigned int BN, unsigned int BK, unsigned int WM, unsigned int WN,
          unsigned int WMITER, unsigned int WNITER, unsigned int TM, unsigned int TN,
          unsigned int Stages, bool Prefetch, unsigned int Pad = 4, unsigned int MinBlocks = 1>
struct GemmConfig {
    static constexpr unsigned int kBM = BM, kBN = BN, kBK = BK;  // the block's tile, the slice
    static constexpr unsigned int kWM = WM, kWN = WN;            // a warp's tile
    static constexpr unsigned int kWMIter = WMITER, kWNIter = WNITER;  // sub-tiles per warp
    static constexpr unsigned int kTM = TM, kTN = TN;  // a lane's part of a sub-tile
    static constexpr unsigned int kStages = Stages;    // shared buffers: 1 or 2
    static constexpr bool kPrefetch = Prefetch;        // next slice in registers
    static constexpr unsigned int kWarps = (BM / WM) * (BN / WN);
    static constexpr unsigned int kThreads = kWarps * 32;
    static constexpr unsigned int kWSubM = WM / WMITER, kWSubN = WN / WNITER;
    static constexpr unsigned int kLaneCols = kWSubN / TN;           // lanes across a sub-tile
    static constexpr unsigned int kALoads = BM * BK / 4 / kThreads;  // float4s per thread
    static constexpr unsigned int kBLoads = BK * BN / 4 / kThreads;
    static constexpr unsigned int kPad = Pad;  // As rows of BM + Pad; 4: conflict-free stores
    static constexpr unsigned int kMinBlocks = MinBlocks;  // blocks per SM: a register cap
    static_assert(BM % WM == 0 && BN % WN == 0, "warps tile the block");
    static_assert((kWSubM / TM) * (kWSubN / TN) == 32, "32 lanes tile a sub-tile");
    static_assert(TM % 4 == 0 && TN % 4 == 0 && BK % 4 == 0, "float4 operands");
    static_assert(BM * BK % (4 * kThreads) == 0 && BK * BN % (4 * kThreads) == 0,
                  "every thread loads the same number of float4s");
    static_assert(Stages == 1 || Stages == 2, "one or two shared buffers");
    static_assert(Prefetch || Stages == 2, "one buffer without prefetch is step 6");
    static_assert(Pad % 4 == 0, "As rows stay float4-aligned");
};

// 2 blocks of 256 threads per SM: at most 128 registers a thread (65536 per SM).
using DefaultConfig = GemmConfig<128, 128, 16, 64, 32, 2, 2, 4, 4, 2, true, 4, 2>;

// The next slice of A and B, in registers: float4s of A's rows and B's rows.
template <class Cfg>
struct Slice {
    float4 a[Cfg::kALoads];
    float4 b[Cfg::kBLoads];
};

// Four floats of row r of a rows x cols matrix from column c on, zeros where they do not exist;
// one float4 load when every row of the matrix is 16-byte aligned (cols % 4 == 0).
__device__ __forceinline__ float4 load4(const float* __restrict__ M, unsigned int rows,
                                        unsigned int cols, unsigned int r, unsigned int c,
                                        bool aligned) {
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (r >= rows) return v;
    const float* src = M + static_cast<size_t>(r) * cols + c;
    if (aligned && c < cols) return *reinterpret_cast<const float4*>(src);  // c + 3 < cols too
    v.x = c < cols ? src[0] : 0.0f;
    v.y = c + 1 < cols ? src[1] : 0.0f;
    v.z = c + 2 < cols ? src[2] : 0.0f;
    v.w = c + 3 < cols ? src[3] : 0.0f;
    return v;
}

template <class Cfg>
__device__ __forceinline__ void load_slice(Slice<Cfg>& s, const float* __restrict__ A,
                                           const float* __restrict__ B, unsigned int m,
                                           unsigned int n, unsigned int k, unsigned int row0,
                                           unsigned int col0, unsigned int p0) {
#pragma unroll
    for (unsigned int j = 0; j < Cfg::kALoads; ++j) {
        const unsigned int idx = threadIdx.x + j * Cfg::kThreads;
        const unsigned int r = idx / (Cfg::kBK / 4), q = idx % (Cfg::kBK / 4);
        s.a[j] = load4(A, m, k, row0 + r, p0 + 4 * q, k % 4 == 0);
    }
#pragma unroll
    for (unsigned int j = 0; j < Cfg::kBLoads; ++j) {
        const unsigned int idx = threadIdx.x + j * Cfg::kThreads;
        const unsigned int r = idx / (Cfg::kBN / 4), q = idx % (Cfg::kBN / 4);
        s.b[j] = load4(B, k, n, p0 + r, col0 + 4 * q, n % 4 == 0);
    }
}

// Registers to shared memory: A transposed (As[p][r]), B as it is (Bs[p][c]).
template <class Cfg>
__device__ __forceinline__ void store_slice(const Slice<Cfg>& s, float (*As)[Cfg::kBM + Cfg::kPad],
                                            float (*Bs)[Cfg::kBN]) {
#pragma unroll
    for (unsigned int j = 0; j < Cfg::kALoads; ++j) {
        const unsigned int idx = threadIdx.x + j * Cfg::kThreads;
        const unsigned int r = idx / (Cfg::kBK / 4), q = idx % (Cfg::kBK / 4);
        As[4 * q + 0][r] = s.a[j].x;
        As[4 * q + 1][r] = s.a[j].y;
        As[4 * q + 2][r] = s.a[j].z;
        As[4 * q + 3][r] = s.a[j].w;
    }
#pragma unroll
    for (unsigned int j = 0; j < Cfg::kBLoads; ++j) {
        const unsigned int idx = threadIdx.x + j * Cfg::kThreads;
        const unsigned int r = idx / (Cfg::kBN / 4), q = idx % (Cfg::kBN / 4);
        *reinterpret_cast<float4*>(&Bs[r][4 * q]) = s.b[j];
    }
}

// One slice's outer products: for each k index, the lane's column of A values (kWMIter sub-
// tiles x kTM) and row of B values (kWNIter x kTN), from consecutive shared words.
template <class Cfg>
__device__ __forceinline__ void compute_slice(
    float (&acc)[Cfg::kWMIter * Cfg::kTM][Cfg::kWNIter * Cfg::kTN],
    const float (*As)[Cfg::kBM + Cfg::kPad], const float (*Bs)[Cfg::kBN], unsigned int a_col,
    unsigned int b_col) {
#pragma unroll
    for (unsigned int p = 0; p < Cfg::kBK; ++p) {
        float a[Cfg::kWMIter * Cfg::kTM], b[Cfg::kWNIter * Cfg::kTN];
#pragma unroll
        for (unsigned int w = 0; w < Cfg::kWMIter; ++w)
#pragma unroll
            for (unsigned int i = 0; i < Cfg::kTM; i += 4)
                *reinterpret_cast<float4*>(&a[w * Cfg::kTM + i]) =
                    *reinterpret_cast<const float4*>(&As[p][a_col + w * Cfg::kWSubM + i]);
#pragma unroll
        for (unsigned int w = 0; w < Cfg::kWNIter; ++w)
#pragma unroll
            for (unsigned int j = 0; j < Cfg::kTN; j += 4)
                *reinterpret_cast<float4*>(&b[w * Cfg::kTN + j]) =
                    *reinterpret_cast<const float4*>(&Bs[p][b_col + w * Cfg::kWSubN + j]);
#pragma unroll
        for (unsigned int i = 0; i < Cfg::kWMIter * Cfg::kTM; ++i)
#pragma unroll
            for (unsigned int j = 0; j < Cfg::kWNIter * Cfg::kTN; ++j) acc[i][j] += a[i] * b[j];
    }
}

template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks)
    gemm_prefetch_kernel(const float* __restrict__ A, const float* __restrict__ B,
                         float* __restrict__ C, unsigned int m, unsigned int n, unsigned int k,
                         float alpha, float beta) {
    __shared__ __align__(16) float As[Cfg::kStages][Cfg::kBK][Cfg::kBM + Cfg::kPad];
    __shared__ __align__(16) float Bs[Cfg::kStages][Cfg::kBK][Cfg::kBN];

    const unsigned int row0 = blockIdx.y * Cfg::kBM, col0 = blockIdx.x * Cfg::kBN;
    const unsigned int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const unsigned int warp_row = warp / (Cfg::kBN / Cfg::kWN);
    const unsigned int warp_col = warp % (Cfg::kBN / Cfg::kWN);
    const unsigned int lane_row = lane / Cfg::kLaneCols, lane_col = lane % Cfg::kLaneCols;
    // The first tile row and column of this lane's sub-tile (0, 0), within the block's tile.
    const unsigned int a_col = warp_row * Cfg::kWM + lane_row * Cfg::kTM;
    const unsigned int b_col = warp_col * Cfg::kWN + lane_col * Cfg::kTN;

    float acc[Cfg::kWMIter * Cfg::kTM][Cfg::kWNIter * Cfg::kTN] = {};
    Slice<Cfg> next;
    load_slice<Cfg>(next, A, B, m, n, k, row0, col0, 0);
    store_slice<Cfg>(next, As[0], Bs[0]);
    __syncthreads();

    unsigned int stage = 0;
    for (unsigned int p0 = 0; p0 < k; p0 += Cfg::kBK) {
        const bool more = p0 + Cfg::kBK < k;  // the same for every thread: barriers below are
                                              // reached by all or by none
        // TODO(1 of 1, ~6 lines): the loop body above, for two shared buffers:
        //   if (more) load_slice<Cfg>(next, A, B, m, n, k, row0, col0, p0 + Cfg::kBK);
        //   compute_slice<Cfg>(acc, As[stage], Bs[stage], a_col, b_col);
        //   if (more) store_slice<Cfg>(next, As[stage ^ 1], Bs[stage ^ 1]);
        //   a barrier (slice s + 1 is complete, and no warp still reads As[stage]); stage ^= 1.
        //   Every thread computes the same `more`, so every thread reaches every barrier.
        //   Delete the (void) line when you are done.
        (void)more, (void)stage, (void)a_col, (void)b_col;
    }

    // C = alpha * acc + beta * C, a float4 of each row of each sub-tile at a time.
    const bool c_vec = n % 4 == 0;
#pragma unroll
    for (unsigned int wm = 0; wm < Cfg::kWMIter; ++wm)
#pragma unroll
        for (unsigned int i = 0; i < Cfg::kTM; ++i) {
            const unsigned int row = row0 + a_col + wm * Cfg::kWSubM + i;
            if (row >= m) continue;
            float* c_row = C + static_cast<size_t>(row) * n;
            const float* x = acc[wm * Cfg::kTM + i];
#pragma unroll
            for (unsigned int wn = 0; wn < Cfg::kWNIter; ++wn)
#pragma unroll
                for (unsigned int j = 0; j < Cfg::kTN; j += 4) {
                    const unsigned int col = col0 + b_col + wn * Cfg::kWSubN + j;
                    const unsigned int e0 = wn * Cfg::kTN + j;
                    if (c_vec && col < n) {
                        float4* c4 = reinterpret_cast<float4*>(c_row + col);
                        float4 v = *c4;
                        v.x = alpha * x[e0 + 0] + beta * v.x;
                        v.y = alpha * x[e0 + 1] + beta * v.y;
                        v.z = alpha * x[e0 + 2] + beta * v.z;
                        v.w = alpha * x[e0 + 3] + beta * v.w;
                        *c4 = v;
                    } else {
#pragma unroll
                        for (unsigned int e = 0; e < 4; ++e)
                            if (col + e < n)
                                c_row[col + e] = alpha * x[e0 + e] + beta * c_row[col + e];
                    }
                }
        }
}

template <class Cfg>
cudaError_t gemm_with(const float* A, const float* B, float* C, size_t m, size_t n, size_t k,
                      float alpha, float beta, cudaStream_t stream) {
    const dim3 grid(static_cast<unsigned int>((n + Cfg::kBN - 1) / Cfg::kBN),
                    static_cast<unsigned int>((m + Cfg::kBM - 1) / Cfg::kBM));
    gemm_prefetch_kernel<Cfg><<<grid, Cfg::kThreads, 0, stream>>>(
        A, B, C, static_cast<unsigned int>(m), static_cast<unsigned int>(n),
        static_cast<unsigned int>(k), alpha, beta);
    return cudaGetLastError();
}

extern "C" cudaError_t gemm(const float* A, const float* B, float* C, size_t m, size_t n, size_t k,
                            float alpha, float beta, cudaStream_t stream) {
    return gemm_with<DefaultConfig>(A, B, C, m, n, k, alpha, beta, stream);
}
