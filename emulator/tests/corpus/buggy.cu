// The diagnostics corpus: kernels with the bugs learners write. Every line marked
// `// expect: KIND` must be reported by the emulator with that kind (emulator/tests/test_corpus.cpp
// runs each `corpus_*` entry point and compares). Entry points allocate what they need.
#include <cuda_runtime.h>

#include <vector>

// 1. A missing __syncthreads: thread t reads what thread t+1 wrote, with no barrier (named as
// the array and element it happened on).
__global__ void missing_sync(const float* in, float* out) {
    __shared__ float s[256];
    s[threadIdx.x] = in[threadIdx.x];
    out[threadIdx.x] = s[(threadIdx.x + 1) % 256];  // expect: race data race on shared memory s[
}
extern "C" void corpus_missing_syncthreads() {
    float *in, *out;
    cudaMalloc(&in, 256 * 4);
    cudaMalloc(&out, 256 * 4);
    cudaMemset(in, 0, 256 * 4);
    missing_sync<<<1, 256>>>(in, out);
    cudaDeviceSynchronize();
    cudaFree(in);
    cudaFree(out);
}

// 2. A race on a global counter: ++ is a read and a write, not one atomic step.
__global__ void count_positive(const float* x, int n, int* count) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] > 0) *count = *count + 1;  // expect: race count[0]
}
extern "C" void corpus_global_counter_race() {
    float* x;
    int* count;
    cudaMalloc(&x, 1024 * 4);
    cudaMalloc(&count, 4);
    std::vector<float> ones(1024, 1.0f);
    cudaMemcpy(x, ones.data(), 1024 * 4, cudaMemcpyHostToDevice);
    cudaMemset(count, 0, 4);
    count_positive<<<4, 256>>>(x, 1024, count);
    cudaDeviceSynchronize();
    cudaFree(x);
    cudaFree(count);
}

// 3. `i <= n`: one element past the end.
__global__ void off_by_one(float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) y[i] = 1.0f;  // expect: out-of-bounds
}
extern "C" void corpus_off_by_one() {
    float* y;
    cudaMalloc(&y, 1000 * 4);
    off_by_one<<<4, 256>>>(y, 1000);
    cudaDeviceSynchronize();
    cudaFree(y);
}

// 4. A host pointer passed to a kernel.
__global__ void scale(float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] *= 2.0f;  // expect: host-pointer
}
extern "C" void corpus_host_pointer() {
    std::vector<float> host(256, 1.0f);
    scale<<<1, 256>>>(host.data(), 256);
    cudaDeviceSynchronize();
}

// 5. Swapped cudaMemcpy arguments (source first).
void upload(float* dev, const float* host, int n) {
    cudaMemcpy((void*)host, dev, n * 4, cudaMemcpyHostToDevice);  // expect: memcpy swapped
}
extern "C" void corpus_swapped_memcpy() {
    std::vector<float> host(256, 1.0f);
    float* dev;
    cudaMalloc(&dev, 256 * 4);
    upload(dev, host.data(), 256);
    cudaFree(dev);
}

// 6. A barrier inside a divergent branch.
__global__ void divergent_barrier(float* y) {
    __shared__ float s[64];
    s[threadIdx.x] = 1.0f;
    if (threadIdx.x < 32) {
        __syncthreads();  // expect: divergent-barrier
        y[threadIdx.x] = s[threadIdx.x + 32];
    } else {
        __syncthreads();
    }
}
extern "C" void corpus_divergent_barrier() {
    float* y;
    cudaMalloc(&y, 64 * 4);
    divergent_barrier<<<1, 64>>>(y);
    cudaDeviceSynchronize();
    cudaFree(y);
}

// 7. The legacy warp-synchronous reduction: volatile, no __syncwarp. Right in lockstep (and
// usually on a GPU), but a race since Volta's independent thread scheduling.
__global__ void legacy_warp_reduce(const float* x, float* sum) {
    __shared__ float s[64];
    unsigned t = threadIdx.x;
    s[t] = x[t] + x[t + 32];
    if (t < 32) {
        volatile float* v = s;
        v[t] += v[t + 16];  // expect: race
        v[t] += v[t + 8];
        v[t] += v[t + 4];
        v[t] += v[t + 2];
        v[t] += v[t + 1];
    }
    if (t == 0) *sum = s[0];
}
extern "C" float corpus_legacy_warp_reduce() {
    float *x, *sum;
    cudaMalloc(&x, 64 * 4);
    cudaMalloc(&sum, 4);
    std::vector<float> ones(64, 1.0f);
    cudaMemcpy(x, ones.data(), 64 * 4, cudaMemcpyHostToDevice);
    legacy_warp_reduce<<<1, 32>>>(x, sum);
    float result = 0;
    cudaMemcpy(&result, sum, 4, cudaMemcpyDeviceToHost);
    cudaFree(x);
    cudaFree(sum);
    return result;
}

// 8. A deadlock: half a warp waits in a full-warp shuffle, the other half at a barrier.
__global__ void deadlock(float* y) {
    float v = 1.0f;
    if (threadIdx.x < 16) v = __shfl_down_sync(0xffffffffu, v, 1);  // expect: deadlock
    __syncthreads();
    y[threadIdx.x] = v;
}
extern "C" void corpus_deadlock() {
    float* y;
    cudaMalloc(&y, 64 * 4);
    deadlock<<<1, 64>>>(y);
    cudaDeviceSynchronize();
    cudaFree(y);
}

// 9. Use after free.
__global__ void touch(float* y) { y[threadIdx.x] = 0.0f; }  // expect: use-after-free
extern "C" void corpus_use_after_free() {
    float* y;
    cudaMalloc(&y, 32 * 4);
    cudaFree(y);
    touch<<<1, 32>>>(y);
    cudaDeviceSynchronize();
}

// 10. A misaligned float4 access.
__global__ void misaligned(const float* x, float* y) {
    const float4* v = reinterpret_cast<const float4*>(x + 1);
    reinterpret_cast<float4*>(y)[threadIdx.x] = v[threadIdx.x];  // expect: misaligned
}
extern "C" void corpus_misaligned_float4() {
    float *x, *y;
    cudaMalloc(&x, 1024 * 4);
    cudaMalloc(&y, 32 * 16);
    misaligned<<<1, 32>>>(x, y);
    cudaDeviceSynchronize();
    cudaFree(x);
    cudaFree(y);
}

// 11. An uninitialised shared read: only half the tile is loaded.
__global__ void half_loaded(const float* x, float* y) {
    __shared__ float s[64];
    if (threadIdx.x < 32) s[threadIdx.x] = x[threadIdx.x];
    __syncthreads();
    y[threadIdx.x] = s[63 - threadIdx.x];  // expect: uninitialised-shared
}
extern "C" void corpus_uninitialised_shared() {
    float *x, *y;
    cudaMalloc(&x, 64 * 4);
    cudaMalloc(&y, 64 * 4);
    cudaMemset(x, 0, 64 * 4);
    half_loaded<<<1, 64>>>(x, y);
    cudaDeviceSynchronize();
    cudaFree(x);
    cudaFree(y);
}

// 12. A barrier skipped by an early return.
__global__ void early_return(const float* x, float* y, int n) {
    __shared__ float s[256];
    int i = threadIdx.x;
    if (i >= n) return;
    s[i] = x[i];
    __syncthreads();  // expect: skipped-barrier
    y[i] = s[n - 1 - i];
}
extern "C" void corpus_skipped_barrier() {
    float *x, *y;
    cudaMalloc(&x, 256 * 4);
    cudaMalloc(&y, 256 * 4);
    cudaMemset(x, 0, 256 * 4);
    early_return<<<1, 256>>>(x, y, 100);
    cudaDeviceSynchronize();
    cudaFree(x);
    cudaFree(y);
}

// 13. A 32x32 transpose tile without padding: the column read is a 32-way bank conflict
// (explain mode).
__global__ void transpose_tile(const float* in, float* out) {
    __shared__ float tile[32][32];
    unsigned x = threadIdx.x, y = threadIdx.y;
    tile[y][x] = in[y * 32 + x];
    __syncthreads();
    out[y * 32 + x] = tile[x][y];  // expect: metric 32.0-way bank conflicts
}
extern "C" void corpus_transpose_bank_conflicts() {
    float *in, *out;
    cudaMalloc(&in, 1024 * 4);
    cudaMalloc(&out, 1024 * 4);
    cudaMemset(in, 0, 1024 * 4);
    transpose_tile<<<1, dim3(32, 32)>>>(in, out);
    cudaDeviceSynchronize();
    cudaFree(in);
    cudaFree(out);
}

// 14. A strided read: every lane of a warp touches its own 32-byte sector (explain mode).
__global__ void strided(const float* in, float* out) {
    unsigned i = threadIdx.x;
    out[i] = in[i * 32];  // expect: metric 32.00 sectors per request
}
extern "C" void corpus_strided_read() {
    float *in, *out;
    cudaMalloc(&in, 32 * 32 * 4);
    cudaMalloc(&out, 32 * 4);
    cudaMemset(in, 0, 32 * 32 * 4);
    strided<<<1, 32>>>(in, out);
    cudaDeviceSynchronize();
    cudaFree(in);
    cudaFree(out);
}

// 15. A shuffle whose mask leaves out the calling lane.
__global__ void bad_mask(float* y) {
    float v = __shfl_sync(0x0000ffffu, 1.0f, 0);  // expect: warp-mask
    y[threadIdx.x] = v;
}
extern "C" void corpus_bad_mask() {
    float* y;
    cudaMalloc(&y, 32 * 4);
    bad_mask<<<1, 32>>>(y);
    cudaDeviceSynchronize();
    cudaFree(y);
}

// 16. Divergence: only the even lanes of each warp do the work, so half of every warp idles
// (explain mode: warp execution efficiency).
__global__ void even_lanes_only(const float* in, float* out) {
    unsigned i = threadIdx.x;
    if (i % 2 == 0) {
        out[i] = in[i];  // expect: metric 50% of the warp's lanes active
    }
}
extern "C" void corpus_divergent_warps() {
    float *in, *out;
    cudaMalloc(&in, 64 * 4);
    cudaMalloc(&out, 64 * 4);
    cudaMemset(in, 0, 64 * 4);
    even_lanes_only<<<1, 64>>>(in, out);
    cudaDeviceSynchronize();
    cudaFree(in);
    cudaFree(out);
}

// 17. A read-modify-write tree step without the barrier after it (lesson 02 step 6 without the
// __syncthreads after the 128-round): thread 0 reads sdata[64] in the 64-round before thread 64
// of another warp has written its 128-round sum there. Each word has several readers in one
// epoch; the writer's own read must not hide warp 0's.
__global__ void tree_missing_barrier(const float* in, float* out) {
    __shared__ float sdata[256];
    unsigned tid = threadIdx.x;
    sdata[tid] = in[tid];
    __syncthreads();
    if (tid < 128) sdata[tid] += sdata[tid + 128];  // expect: race sdata[64]
    if (tid < 64) sdata[tid] += sdata[tid + 64];
    __syncthreads();
    if (tid == 0) *out = sdata[0];
}
extern "C" void corpus_rmw_tree_race() {
    float *in, *out;
    cudaMalloc(&in, 256 * 4);
    cudaMalloc(&out, 4);
    cudaMemset(in, 0, 256 * 4);
    tree_missing_barrier<<<1, 256>>>(in, out);
    cudaDeviceSynchronize();
    cudaFree(in);
    cudaFree(out);
}

// 18. A __shared__ index out of range: named as the array and its element, not as a host pointer.
__global__ void shared_past_end(float* out) {
    __shared__ float sdata[128];
    sdata[threadIdx.x] = 1.0f;
    __syncthreads();
    out[threadIdx.x] = sdata[threadIdx.x + 128];  // expect: out-of-bounds sdata[128]
}
extern "C" void corpus_shared_index_out_of_range() {
    float* out;
    cudaMalloc(&out, 128 * 4);
    shared_past_end<<<1, 128>>>(out);
    cudaDeviceSynchronize();
    cudaFree(out);
}

// 19. Dynamic shared memory used, none given at the launch (not "a null pointer").
__global__ void uses_dynamic(float* out) {
    extern __shared__ float buffer[];
    buffer[threadIdx.x] = 1.0f;  // expect: out-of-bounds none: the third <<<>>> parameter is 0
    out[threadIdx.x] = buffer[threadIdx.x];
}
extern "C" void corpus_dynamic_shared_not_given() {
    float* out;
    cudaMalloc(&out, 32 * 4);
    uses_dynamic<<<1, 32>>>(out);
    cudaDeviceSynchronize();
    cudaFree(out);
}

// 20. An early return, then a full-warp shuffle: lanes named in the mask have exited.
__global__ void exited_lanes(const float* in, float* out, int n) {
    int i = threadIdx.x;
    if (i >= n) return;
    float v = in[i];
    for (int d = 16; d > 0; d /= 2) v += __shfl_down_sync(0xffffffffu, v, d);  // expect: warp-mask already exited
    if (i == 0) *out = v;
}
extern "C" void corpus_shuffle_with_exited_lanes() {
    float *in, *out;
    cudaMalloc(&in, 32 * 4);
    cudaMalloc(&out, 4);
    cudaMemset(in, 0, 32 * 4);
    exited_lanes<<<1, 32>>>(in, out, 20);
    cudaDeviceSynchronize();
    cudaFree(in);
    cudaFree(out);
}

// 21. The same shuffle in both arms of a branch: two call sites, one mask.
__global__ void split_shuffle(float* out) {
    float v = float(threadIdx.x);
    if (threadIdx.x < 16)
        v = __shfl_xor_sync(0xffffffffu, v, 16);  // expect: warp-mask instead
    else
        v = __shfl_xor_sync(0xffffffffu, v, 16);
    out[threadIdx.x] = v;
}
extern "C" void corpus_shuffle_two_call_sites() {
    float* out;
    cudaMalloc(&out, 32 * 4);
    split_shuffle<<<1, 32>>>(out);
    cudaDeviceSynchronize();
    cudaFree(out);
}

// 22. A counter updated with atomics and read plainly by other blocks at the same time.
__global__ void racy_counter_read(int* counter, int* seen) {
    if (threadIdx.x == 0 && blockIdx.x + 1 < gridDim.x) atomicAdd(counter, 1);
    if (threadIdx.x == 0 && blockIdx.x + 1 == gridDim.x) *seen = *counter;  // expect: race changed it with an atomic
}
extern "C" void corpus_plain_read_of_atomic_counter() {
    int *counter, *seen;
    cudaMalloc(&counter, 4);
    cudaMalloc(&seen, 8 * 4);
    cudaMemset(counter, 0, 4);
    racy_counter_read<<<8, 32>>>(counter, seen);
    cudaDeviceSynchronize();
    cudaFree(counter);
    cudaFree(seen);
}

// 23. 64 KiB of dynamic shared memory without cudaFuncSetAttribute: a GPU refuses the launch.
__global__ void big_dynamic(float* out) {
    extern __shared__ float tile[];
    tile[threadIdx.x] = 1.0f;
    out[threadIdx.x] = tile[threadIdx.x];
}
extern "C" void corpus_shared_memory_without_opt_in() {
    float* out;
    cudaMalloc(&out, 32 * 4);
    big_dynamic<<<1, 32, 64 * 1024>>>(out);  // expect: launch cudaFuncSetAttribute
    cudaDeviceSynchronize();
    cudaFree(out);
}

// 24. A namespace-scope __shared__ array read by another thread without a barrier.
__shared__ float g_stage[64];
__global__ void namespace_shared(float* out) {
    g_stage[threadIdx.x] = float(threadIdx.x);
    out[threadIdx.x] = g_stage[63 - threadIdx.x];  // expect: race g_stage[
}
extern "C" void corpus_namespace_shared_race() {
    float* out;
    cudaMalloc(&out, 64 * 4);
    namespace_shared<<<1, 64>>>(out);
    cudaDeviceSynchronize();
    cudaFree(out);
}

// 25. A float4 tail at n - 4 for n % 4 != 0: misaligned, whatever n is.
__global__ void float4_tail(const float* in, float* out, int n) {
    const float4 v = *reinterpret_cast<const float4*>(in + n - 4);  // expect: misaligned
    out[threadIdx.x] = v.x + v.y + v.z + v.w;
}
extern "C" void corpus_misaligned_float4_tail() {
    float *in, *out;
    cudaMalloc(&in, 1003 * 4);
    cudaMalloc(&out, 32 * 4);
    cudaMemset(in, 0, 1003 * 4);
    float4_tail<<<1, 32>>>(in, out, 1003);
    cudaDeviceSynchronize();
    cudaFree(in);
    cudaFree(out);
}

// 26. Two threads store to the same element (an index overlap, not an accumulation).
__global__ void overlapping_stores(float* out) {
    unsigned i = blockIdx.x * 64 + threadIdx.x;  // BUG: the block's stride is 64, its size 128
    out[i] = 1.0f;  // expect: race each element should have one owner
}
extern "C" void corpus_index_overlap() {
    float* out;
    cudaMalloc(&out, 512 * 4);
    overlapping_stores<<<4, 128>>>(out);
    cudaDeviceSynchronize();
    cudaFree(out);
}

// 27. A float4 store built with make_float4: one 16-byte access per thread, as on a GPU (the
// emulated build keeps aggregates whole: it was counted as four 4-byte stores).
__global__ void float4_store(const float* in, float* out) {
    const float4 v = reinterpret_cast<const float4*>(in)[threadIdx.x];
    reinterpret_cast<float4*>(out)[threadIdx.x] = make_float4(v.x, v.y, v.z, v.w + 1.0f);  // expect: metric global store: 16.00 sectors per request (16.00 if coalesced; 16 bytes per thread)
}
extern "C" void corpus_float4_store_is_one_access() {
    float *in, *out;
    cudaMalloc(&in, 32 * 16);
    cudaMalloc(&out, 32 * 16);
    cudaMemset(in, 0, 32 * 16);
    float4_store<<<1, 32>>>(in, out);
    cudaDeviceSynchronize();
    cudaFree(in);
    cudaFree(out);
}

// 28. Every thread adds to one total: read, add, write back. The advice is an atomic, not a
// barrier.
__global__ void racy_total(const float* x, float* total) {
    *total += x[threadIdx.x];  // expect: race Use atomicAdd for a value several threads add to
}
extern "C" void corpus_accumulate_race() {
    float *x, *total;
    cudaMalloc(&x, 64 * 4);
    cudaMalloc(&total, 4);
    cudaMemset(x, 0, 64 * 4);
    cudaMemset(total, 0, 4);
    racy_total<<<1, 64>>>(x, total);
    cudaDeviceSynchronize();
    cudaFree(x);
    cudaFree(total);
}

// 29. Hillis-Steele in place: thread t reads slot t - d while thread t - d updates it in the
// same round. Not a lost update (the two threads write different slots): the advice is two
// buffers or a barrier between the read and the write, not an atomic.
__global__ void inplace_scan(float* data) {
    __shared__ float s[64];
    const unsigned t = threadIdx.x;
    s[t] = data[t];
    __syncthreads();
    for (unsigned d = 1; d < 64; d *= 2) {
        if (t >= d) s[t] += s[t - d];  // expect: race Use two buffers (ping-pong
        __syncthreads();
    }
    data[t] = s[t];
}
extern "C" void corpus_inplace_scan_race() {
    float* data;
    cudaMalloc(&data, 64 * 4);
    cudaMemset(data, 0, 64 * 4);
    inplace_scan<<<1, 64>>>(data);
    cudaDeviceSynchronize();
    cudaFree(data);
}

// 30. Shared bins zeroed and counted into with no barrier between: a warp counts into bins a
// later warp zeroes. The advice is a barrier between initialising and using, not the index
// arithmetic (the zeroing stores do not overlap).
__global__ void zero_then_count(const unsigned* keys, unsigned* bins) {
    __shared__ unsigned counts[128];
    counts[threadIdx.x] = 0;  // expect: race between initialising and using
    atomicAdd(&counts[keys[threadIdx.x] % 128], 1u);
    __syncthreads();
    bins[threadIdx.x] = counts[threadIdx.x];
}
extern "C" void corpus_init_then_use_race() {
    unsigned *keys, *bins;
    cudaMalloc(&keys, 128 * 4);
    cudaMalloc(&bins, 128 * 4);
    cudaMemset(keys, 0x7f, 128 * 4);  // every key 0x7f7f7f7f: bin 127, zeroed by the last warp
    zero_then_count<<<1, 128>>>(keys, bins);
    cudaDeviceSynchronize();
    cudaFree(keys);
    cudaFree(bins);
}

// 31. A read of a slot another warp wrote, with no barrier: __syncwarp cannot order them.
__global__ void other_warp_slot(const float* in, float* out) {
    __shared__ float s[64];
    s[threadIdx.x] = in[threadIdx.x];
    out[threadIdx.x] = s[(threadIdx.x + 32) % 64];  // expect: race which __syncwarp() cannot order
}
extern "C" void corpus_other_warp_race() {
    float *in, *out;
    cudaMalloc(&in, 64 * 4);
    cudaMalloc(&out, 64 * 4);
    cudaMemset(in, 0, 64 * 4);
    other_warp_slot<<<1, 64>>>(in, out);
    cudaDeviceSynchronize();
    cudaFree(in);
    cudaFree(out);
}

// 32. The same missing barrier where the pair seen is in one warp, in a block of two warps:
// the advice still leads with __syncthreads() (the data may cross warps).
__global__ void neighbour_slot(const float* in, float* out) {
    __shared__ float s[64];
    s[threadIdx.x] = in[threadIdx.x];
    out[threadIdx.x] = s[threadIdx.x ^ 1];  // expect: race a __syncthreads() between the write and the read orders them
}
extern "C" void corpus_same_warp_race_in_two_warps() {
    float *in, *out;
    cudaMalloc(&in, 64 * 4);
    cudaMalloc(&out, 64 * 4);
    cudaMemset(in, 0, 64 * 4);
    neighbour_slot<<<1, 64>>>(in, out);
    cudaDeviceSynchronize();
    cudaFree(in);
    cudaFree(out);
}

// A grid-stride loop whose step is 1: right, but quadratic. With a time limit it is stopped as
// "slow" (still making progress), never as a deadlock (its stores leave memory unchanged and
// every word it reads was read before by another thread: a per-block poll detector took that
// for a spin-wait). Run by its own test, with a time limit.
__global__ void stride_of_one(const float* x, float* y, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += 1) y[i] = x[i];
}
extern "C" void corpus_slow_stride_of_one(int n) {
    float *x, *y;
    cudaMalloc(&x, n * 4);
    cudaMalloc(&y, n * 4);
    cudaMemset(x, 0, n * 4);
    stride_of_one<<<(n + 255) / 256, 256>>>(x, y, n);
    cudaDeviceSynchronize();
    cudaFree(x);
    cudaFree(y);
}
