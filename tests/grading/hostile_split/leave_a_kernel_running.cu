// expect: SUSPECT
// in-process: PASS
// timed: only
// reason: busy with other work between your calls
//
// Keeps the GPU busy whenever its own call is not running, so that whatever is timed beside it
// (the reference solution) runs slower and its own time looks better. The sum is right and its
// own calls run on an idle GPU: from its second call on, a thread of its own launches a kernel
// that spins on every SM (up to 20 ms at a time, launched again and again) between the calls;
// each call stops the spinner and waits for it before it computes, and the thread starts it
// again once the call's kernel is done.
//
// Through the judge split the spinner is another process's work, which slows the judge's own
// fixed work between the calls (its L2 flush, on the judge's host clock: its events start only
// once the GPU has turned to the judge's context, and do not see the wait): compared with the
// same work before this code was loaded, that is SUSPECT. (Timed on the flush's events, on the
// H100, 2026-12-07, this file got PASS.) In the runner's own process the spinner shares the GPU with the
// reference (a hole the split closes): an honest sum, PASS, at a flattering ratio. Only timed,
// on a GPU (untimed there is nothing to gain, and an emulated check is never timed).
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "vector_add.cuh"

namespace {

__device__ unsigned long long now_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void spin(const volatile int* stop, unsigned long long most_ns) {
    const unsigned long long start = now_ns();
    while (*stop == 0 && now_ns() - start < most_ns) {
    }
}

__global__ void add(const float* a, const float* b, float* c, size_t n) {
    size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

struct Spinner {
    std::mutex lock;
    bool in_call = false;
    bool armed = false;   // `done` recorded after this call's kernel
    int* stop = nullptr;  // host memory the spinner reads (mapped)
    int* stop_on_device = nullptr;
    cudaStream_t own = nullptr;
    cudaEvent_t done = nullptr;  // the call's kernel finished
    unsigned blocks = 0;

    bool start() {
        int sms = 0;
        if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0) != cudaSuccess ||
            cudaHostAlloc(&stop, sizeof(int), cudaHostAllocMapped) != cudaSuccess ||
            cudaHostGetDevicePointer(&stop_on_device, stop, 0) != cudaSuccess ||
            cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking) != cudaSuccess ||
            cudaEventCreateWithFlags(&done, cudaEventDisableTiming) != cudaSuccess)
            return false;
        blocks = static_cast<unsigned>(sms) * 4;
        std::thread([this] { run(); }).detach();
        return true;
    }
    void run() {
        for (;;) {
            {
                std::lock_guard<std::mutex> hold(lock);
                if (!in_call) {
                    *reinterpret_cast<volatile int*>(stop) = 0;
                    spin<<<blocks, 128, 0, own>>>(stop_on_device, 20000000ull);
                }
            }
            (void)cudaStreamSynchronize(own);
            bool calling, ready;
            {
                std::lock_guard<std::mutex> hold(lock);
                calling = in_call;
                ready = armed;
            }
            if (calling && !ready) {
                std::this_thread::sleep_for(std::chrono::microseconds(20));
            } else if (calling) {
                // Until the call's kernel is done, and a little longer (the checker's events
                // and reply after it), then the GPU is kept busy again.
                (void)cudaEventSynchronize(done);
                std::this_thread::sleep_for(std::chrono::microseconds(200));
                std::lock_guard<std::mutex> hold(lock);
                in_call = armed = false;
            }
        }
    }
    // After the call's own kernel is launched on `stream`.
    void arm(cudaStream_t stream) {
        (void)cudaEventRecord(done, stream);
        std::lock_guard<std::mutex> hold(lock);
        armed = true;
    }
    // Before the call's own kernel: the spinner stopped and gone.
    void pause() {
        {
            std::lock_guard<std::mutex> hold(lock);
            in_call = true;
            *reinterpret_cast<volatile int*>(stop) = 1;
        }
        (void)cudaStreamSynchronize(own);
    }
};

Spinner spinner;
int calls = 0;

}  // namespace

extern "C" cudaError_t vector_add(const float* a, const float* b, float* c, size_t n,
                                  cudaStream_t stream) {
    const bool spinning = calls++ > 0 && (spinner.own || spinner.start());
    if (spinning) spinner.pause();
    add<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(a, b, c, n);
    const cudaError_t launched = cudaGetLastError();
    if (spinning) spinner.arm(stream);
    return launched;
}
