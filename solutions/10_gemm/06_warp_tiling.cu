// Lesson 10, step 6 — warp tiling (solution).
//
// Teaches: arrange the threads' squares so that each *warp* owns a compact tile of C. In step 5
// a thread's 8 x 8 square was a contiguous block, and lane tc read Bs[p][8 tc .. 8 tc + 7]: two
// float4s 32 bytes apart from lane to lane, so the 8 lanes of each float4 phase hit banks 0, 8,
// 16, 24 twice (2-way conflicts on every B operand). Here:
//   - the block's 128 x 128 tile is split among 8 warps, 2 down x 4 across: 64 x 32 each;
//   - a warp's tile is 2 x 2 sub-tiles of 32 x 16, and in each sub-tile the 32 lanes form an
//     8 x 4 grid, every lane a 4 x 4 square: 2 x 2 x 16 = 64 outputs per thread, as before;
//   - a lane's 4 B operands of a sub-tile are one float4, and the 4 lanes of a row read 4
//     *consecutive* float4s (64 bytes); its A operands likewise: no bank conflict anywhere.
// A warp also now reads only its 64 rows of As and 32 columns of Bs: fewer distinct shared
// words per warp, better reuse in registers.
//
// Check:  ./cudalings check 10_gemm/06_warp_tiling
// Stuck:  ./cudalings hint 10_gemm/06_warp_tiling

#include "gemm.cuh"

constexpr unsigned int kBM = 128, kBN = 128, kBK = 8;  // the block's tile, the k slice
constexpr unsigned int kWM = 64, kWN = 32;             // a warp's tile
constexpr unsigned int kWMIter = 2, kWNIter = 2;       // sub-tiles per warp: 2 x 2
constexpr unsigned int kWSubM = kWM / kWMIter, kWSubN = kWN / kWNIter;  // 32 x 16
constexpr unsigned int kTM = 4, kTN = 4;                           // a lane's square in a sub-tile
constexpr unsigned int kLaneCols = kWSubN / kTN;                   // 4 lanes across, 8 down
constexpr unsigned int kThreads = (kBM / kWM) * (kBN / kWN) * 32;  // 256
constexpr unsigned int kPad = 4;
static_assert((kWSubM / kTM) * (kWSubN / kTN) == 32, "32 lanes tile a sub-tile");

// Four floats of row r of a rows x cols matrix from column c on (zeros where they do not
// exist): one float4 load when every row of the matrix is 16-byte aligned (cols % 4 == 0).
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

__global__ void __launch_bounds__(kThreads)
    gemm_warp_tiling_kernel(const float* __restrict__ A, const float* __restrict__ B,
                            float* __restrict__ C, unsigned int m, unsigned int n, unsigned int k,
                            float alpha, float beta) {
    __shared__ __align__(16) float As[kBK][kBM + kPad];  // transposed, as in step 5
    __shared__ __align__(16) float Bs[kBK][kBN];

    const unsigned int t = threadIdx.x;
    const unsigned int row0 = blockIdx.y * kBM, col0 = blockIdx.x * kBN;
    const unsigned int warp = t / 32, lane = t % 32;
    const unsigned int warp_row = warp / (kBN / kWN), warp_col = warp % (kBN / kWN);
    const unsigned int lane_row = lane / kLaneCols, lane_col = lane % kLaneCols;
    // Within the block's tile: the first row of this lane's squares, and the first column.
    const unsigned int a_col = warp_row * kWM + lane_row * kTM;
    const unsigned int b_col = warp_col * kWN + lane_col * kTN;
    // Loads, as in step 5: one float4 of A's tile and one of B's per thread.
    const unsigned int ar = t / (kBK / 4), aq = t % (kBK / 4);
    const unsigned int br = t / (kBN / 4), bq = t % (kBN / 4);

    float acc[kWMIter * kTM][kWNIter * kTN] = {};
    for (unsigned int p0 = 0; p0 < k; p0 += kBK) {
        const float4 va = load4(A, m, k, row0 + ar, p0 + 4 * aq, k % 4 == 0);
        As[4 * aq + 0][ar] = va.x;
        As[4 * aq + 1][ar] = va.y;
        As[4 * aq + 2][ar] = va.z;
        As[4 * aq + 3][ar] = va.w;
        *reinterpret_cast<float4*>(&Bs[br][4 * bq]) =
            load4(B, k, n, p0 + br, col0 + 4 * bq, n % 4 == 0);
        __syncthreads();

#pragma unroll
        for (unsigned int p = 0; p < kBK; ++p) {
            float a[kWMIter * kTM], b[kWNIter * kTN];
#pragma unroll
            for (unsigned int w = 0; w < kWMIter; ++w)
                *reinterpret_cast<float4*>(&a[w * kTM]) =
                    *reinterpret_cast<const float4*>(&As[p][a_col + w * kWSubM]);
#pragma unroll
            for (unsigned int w = 0; w < kWNIter; ++w)
                *reinterpret_cast<float4*>(&b[w * kTN]) =
                    *reinterpret_cast<const float4*>(&Bs[p][b_col + w * kWSubN]);
#pragma unroll
            for (unsigned int i = 0; i < kWMIter * kTM; ++i)
#pragma unroll
                for (unsigned int j = 0; j < kWNIter * kTN; ++j) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }

    const bool c_vec = n % 4 == 0;
#pragma unroll
    for (unsigned int wm = 0; wm < kWMIter; ++wm)
#pragma unroll
        for (unsigned int i = 0; i < kTM; ++i) {
            const unsigned int row = row0 + a_col + wm * kWSubM + i;
            if (row >= m) continue;
            float* c_row = C + static_cast<size_t>(row) * n;
            const float* x = acc[wm * kTM + i];
#pragma unroll
            for (unsigned int wn = 0; wn < kWNIter; ++wn) {
                const unsigned int col = col0 + b_col + wn * kWSubN;
                const unsigned int e0 = wn * kTN;
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
                    for (unsigned int e = 0; e < kTN; ++e)
                        if (col + e < n) c_row[col + e] = alpha * x[e0 + e] + beta * c_row[col + e];
                }
            }
        }
}

extern "C" cudaError_t gemm(const float* A, const float* B, float* C, size_t m, size_t n, size_t k,
                            float alpha, float beta, cudaStream_t stream) {
    const dim3 grid(static_cast<unsigned int>((n + kBN - 1) / kBN),
                    static_cast<unsigned int>((m + kBM - 1) / kBM));
    gemm_warp_tiling_kernel<<<grid, kThreads, 0, stream>>>(
        A, B, C, static_cast<unsigned int>(m), static_cast<unsigned int>(n),
        static_cast<unsigned int>(k), alpha, beta);
    return cudaGetLastError();
}
