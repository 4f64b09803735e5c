// Lesson 10, step 3 — 1-D register blocking: several outputs per thread (solution).
//
// Teaches: in step 2 every multiply-add needs two shared-memory loads, and shared memory
// delivers far fewer words per clock than the FMA units consume. Give each thread a column of
// kTM = 8 outputs instead of one: per k index it loads one B value into a register and reuses
// it for 8 multiply-adds against 8 A values. Shared loads per FMA fall from 2 to 9/8.
//
// The block computes a 64 x 64 tile of C with 512 threads (64 * 64 / 8), walking k in slices
// of kBK = 8:
//   A tile 64 x 8 = 512 floats and B tile 8 x 64 = 512 floats: one of each per thread.
//   thread t: column tc = t % 64 of the tile, rows tr * 8 .. tr * 8 + 7 with tr = t / 64.
// A warp's 32 lanes share tr (the same A values: broadcasts) and take 32 consecutive columns
// (32 consecutive words of Bs: conflict-free).
//
// Check:  ./cudalings check 10_gemm/03_1d_blocking
// Stuck:  ./cudalings hint 10_gemm/03_1d_blocking

#include "gemm.cuh"

constexpr unsigned int kBM = 64, kBN = 64, kBK = 8;  // the block's tile of C, the k slice
constexpr unsigned int kTM = 8;                      // outputs per thread, down a column
constexpr unsigned int kThreads = kBM * kBN / kTM;   // 512

__global__ void __launch_bounds__(kThreads)
    gemm_1d_blocking_kernel(const float* __restrict__ A, const float* __restrict__ B,
                            float* __restrict__ C, unsigned int m, unsigned int n, unsigned int k,
                            float alpha, float beta) {
    __shared__ float As[kBM][kBK];
    __shared__ float Bs[kBK][kBN];

    const unsigned int t = threadIdx.x;
    const unsigned int row0 = blockIdx.y * kBM, col0 = blockIdx.x * kBN;
    // This thread's outputs: rows row0 + tr * kTM + i (i < kTM), column col0 + tc.
    const unsigned int tc = t % kBN, tr = t / kBN;
    // Its share of the loads: A(row0 + ar, p0 + ac) and B(p0 + br, col0 + bc).
    const unsigned int ar = t / kBK, ac = t % kBK;
    const unsigned int br = t / kBN, bc = t % kBN;

    float acc[kTM] = {};
    for (unsigned int p0 = 0; p0 < k; p0 += kBK) {
        As[ar][ac] =
            (row0 + ar < m && p0 + ac < k) ? A[static_cast<size_t>(row0 + ar) * k + p0 + ac] : 0.0f;
        Bs[br][bc] =
            (p0 + br < k && col0 + bc < n) ? B[static_cast<size_t>(p0 + br) * n + col0 + bc] : 0.0f;
        __syncthreads();

#pragma unroll
        for (unsigned int p = 0; p < kBK; ++p) {
            const float b = Bs[p][tc];  // one shared load, reused kTM times
#pragma unroll
            for (unsigned int i = 0; i < kTM; ++i) acc[i] += As[tr * kTM + i][p] * b;
        }
        __syncthreads();
    }

    const unsigned int col = col0 + tc;
#pragma unroll
    for (unsigned int i = 0; i < kTM; ++i) {
        const unsigned int row = row0 + tr * kTM + i;
        if (row < m && col < n) {
            float* c = C + static_cast<size_t>(row) * n + col;
            *c = alpha * acc[i] + beta * *c;
        }
    }
}

extern "C" cudaError_t gemm(const float* A, const float* B, float* C, size_t m, size_t n, size_t k,
                            float alpha, float beta, cudaStream_t stream) {
    const dim3 grid(static_cast<unsigned int>((n + kBN - 1) / kBN),
                    static_cast<unsigned int>((m + kBM - 1) / kBM));
    gemm_1d_blocking_kernel<<<grid, kThreads, 0, stream>>>(
        A, B, C, static_cast<unsigned int>(m), static_cast<unsigned int>(n),
        static_cast<unsigned int>(k), alpha, beta);
    return cudaGetLastError();
}
