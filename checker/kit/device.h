// The runner's whole use of the CUDA runtime API, behind one thin interface. Everything the
// runner (not the learner) asks of the GPU goes through here, so another backend (a CPU
// emulator) can provide the same functions.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace dev {

// A failed runtime call made by the runner itself.
struct Error : std::runtime_error {
    cudaError_t code;
    Error(cudaError_t c, const std::string& what) : std::runtime_error(what), code(c) {}
};

// Throws dev::Error naming the call and the error when `status` is not cudaSuccess.
void check(cudaError_t status, const char* call, const char* file, int line);
#define DEV_CHECK(call) ::dev::check((call), #call, __FILE__, __LINE__)

const char* error_name(cudaError_t e);
const char* error_text(cudaError_t e);

struct Properties {
    int count = 0;
    std::string name;
    int major = 0, minor = 0;
    int sms = 0;
    std::size_t l2_bytes = 0;
    std::size_t global_bytes = 0;
    std::string uuid;
    int driver_version = 0, runtime_version = 0;
    cudaError_t error = cudaSuccess;  // why count is 0
};
Properties probe();
// Creates the CUDA context now (errors are left for probe() to report): the slow part of a
// runner's start, done while the checker may still be building the step.
void start_runtime();

void* allocate(std::size_t bytes);  // throws on failure
void release(void* p) noexcept;

// Memory a learner's step may be given (a problem's buffers, guard zones included). Where the
// runner judges a step that runs in another process, memory it can lend there (the runner's
// split.h sets it); else allocate()'s.
struct LendableMemory {
    virtual ~LendableMemory() = default;
    virtual void* allocate(std::size_t bytes) = 0;  // throws dev::Error
    virtual void release(void* p) noexcept = 0;
};
void set_lendable_memory(LendableMemory* m);
void* allocate_lendable(std::size_t bytes);
void release_lendable(void* p) noexcept;
void copy_to_host(void* dst, const void* src, std::size_t bytes);
void copy_device_to_device_async(void* dst, const void* src, std::size_t bytes, cudaStream_t s);
void fill_bytes(void* dst, int value, std::size_t bytes, cudaStream_t s);

cudaStream_t create_stream();
void destroy_stream(cudaStream_t s) noexcept;
void sync_stream(cudaStream_t s);
void sync_device();
cudaError_t sync_device_status();  // no throw: the learner's errors surface here
cudaError_t take_last_error();     // cudaGetLastError

class Event {
  public:
    Event();
    ~Event();
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;
    void record(cudaStream_t s);
    void wait();
    float ms_since(const Event& start) const;  // elapsed from start to this
    cudaEvent_t raw() const { return e_; }

  private:
    cudaEvent_t e_{};
};

// RAII device array (no guard zones: see data.h for those).
template <typename T>
class Array {
  public:
    explicit Array(std::size_t n) : n_(n), p_(static_cast<T*>(allocate(n * sizeof(T) + 16))) {}
    ~Array() { release(p_); }
    Array(const Array&) = delete;
    Array& operator=(const Array&) = delete;
    T* get() const { return p_; }
    std::size_t size() const { return n_; }

  private:
    std::size_t n_;
    T* p_;
};

}  // namespace dev
