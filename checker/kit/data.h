// The lesson kit: the buffers a problem hands to a step. Inputs are generated (counter-based, so
// they can prove they were not modified) and sized exactly, with guard zones around them;
// outputs and workspaces are poisoned before every call and fenced by guard zones on both sides.
// Every buffer registers itself with its problem: the driver poisons, checks and regenerates
// them all, so a lesson never writes that sequence itself.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>

#include "device.h"
#include "launch.h"
#include "sample.h"

namespace kit {

class Problem;

// Which side of a timed comparison a call is for: the step being checked, or the reference.
// Both use the same buffers unless the problem was made with Setup::spare (then the reference
// writes into spare outputs: the runner's CUDALINGS_TIMING_BUFFERS=separate experiment).
enum class Side { Learner, Reference };

inline constexpr std::uint32_t kPoisonBits = 0x7fdeadbfu;  // a quiet NaN no arithmetic makes
inline constexpr unsigned char kGuardByte = 0xcd;
inline constexpr std::size_t kFrontGuard = 256;  // keeps the data 256-byte aligned
inline constexpr std::size_t kBackGuard = 64 * 1024;

template <typename T>
__host__ __device__ inline std::uint32_t bits_of(T v) {
    static_assert(sizeof(T) == 4, "4-byte elements");
    std::uint32_t b;
    memcpy(&b, &v, 4);
    return b;
}

// A write (or, for inputs, any change) outside a buffer's data.
struct GuardHit {
    bool hit = false;
    bool before = false;  // in the guard zone before the data (else after it)
    u64 bytes = 0;        // guard bytes changed
    u64 nearest = 0;      // distance in bytes from the data to the nearest change
    u64 farthest = 0;
};

// What every buffer of a problem can be asked by the driver.
class Buffer {
  public:
    Buffer(Problem& owner, std::string name);
    virtual ~Buffer() = default;
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    const std::string& name() const { return name_; }
    virtual bool is_input() const { return false; }
    virtual void poison(cudaStream_t) {}  // outputs and workspaces: the poison, guards reset
    virtual GuardHit check_guards(cudaStream_t s) const = 0;
    virtual u64 changed(cudaStream_t) const { return 0; }  // inputs: elements not as generated
    virtual void regenerate(u64, cudaStream_t) {}          // inputs: values from another seed
    // A 64-bit fingerprint of the learner's data (outputs), for the same-bits check.
    virtual std::uint64_t fingerprint(cudaStream_t) const { return 0; }
    // Under emulation, at a size too large to emulate whole (the launch-only case of
    // runner/backend_emu.cu): an input's values are made on demand, where kernels read them; an
    // output's written words are recorded (emulator.h, fill_on_demand and track_writes). Nothing
    // on a GPU.
    virtual void sample_values() {}
    // What to tell the learner when a write lands in this buffer's guard zones ("only thread 0
    // of the last pass should write, and only out[0]").
    void on_overrun(std::string advice) { overrun_advice_ = std::move(advice); }
    const std::string& overrun_advice() const { return overrun_advice_; }

  protected:
    Problem& owner_;
    std::string name_;
    std::string overrun_advice_;
};

// The guarded allocation behind every buffer: [front guard][data][back guard].
class GuardedBytes {
  public:
    GuardedBytes(std::size_t data_bytes, std::size_t front, std::size_t back);
    ~GuardedBytes();
    GuardedBytes(const GuardedBytes&) = delete;
    GuardedBytes& operator=(const GuardedBytes&) = delete;
    unsigned char* data() const { return base_ + front_; }
    std::size_t bytes() const { return bytes_; }
    void fill_guards(cudaStream_t s);
    GuardHit check(cudaStream_t s) const;

  private:
    std::size_t bytes_, front_, back_;
    unsigned char* base_ = nullptr;
};

namespace detail {
// Input plumbing: the stream number of the next input of a problem, and the problem's setup.
u64 next_input_stream(Problem& p);
cudaStream_t stream_of(const Problem& p);
u64 seed_of(const Problem& p);
bool exact_inputs(const Problem& p);
bool spare_outputs(const Problem& p);
// Under the emulator: accesses outside [p, p + bytes) are reported at the learner's line, and
// reports name the array ("workspace[257]", elements of `element_bytes`).
// Under emulation (emulator.h): [p, p + bytes) made on demand by `make`, or its writes recorded.
void make_on_demand(void* p, std::size_t bytes,
                    std::function<void(std::size_t offset, std::size_t bytes, void* dst)> make);
void track_writes(void* p, std::size_t bytes);
void mark_extent(const void* p, std::size_t bytes, const std::string& name,
                 std::size_t element_bytes);

// Device kernels behind inputs, one per (type, generator).
template <typename T, typename Gen>
__global__ void generate_kernel(T* out, u64 n, Gen gen, u64 base) {
    for (u64 i = blockIdx.x * u64{blockDim.x} + threadIdx.x; i < n;
         i += u64{gridDim.x} * blockDim.x)
        out[i] = gen(base, i);
}
template <typename T, typename Gen>
__global__ void count_changed_kernel(const T* in, u64 n, Gen gen, u64 base,
                                     unsigned long long* changed) {
    unsigned long long local = 0;
    for (u64 i = blockIdx.x * u64{blockDim.x} + threadIdx.x; i < n;
         i += u64{gridDim.x} * blockDim.x)
        local += bits_of(in[i]) != bits_of(gen(base, i));
    if (local) atomicAdd(changed, local);
}
unsigned grid_for(u64 n, unsigned block = 256);
u64 read_counter_and_free(unsigned long long* counter, cudaStream_t s);
unsigned long long* new_counter(cudaStream_t s);
}  // namespace detail

// The generators of the built-in distributions.
struct FloatGen {
    Dist dist;
    u64 cols = 0;  // the row length of a 2-D array (for dist::coordinates)
    __host__ __device__ float operator()(u64 base, u64 i) const {
        return sample_float(dist, base, i, cols);
    }
};
struct KeyGen {
    Dist dist;
    u32 range = 1;
    u64 n = 0;
    __host__ __device__ u32 operator()(u64 base, u64 i) const {
        return sample_key(dist, range, base, i, n);
    }
};

// An input of n elements of T whose values come from a generator: a device functor
// `T operator()(u64 base, u64 i) const`, where base changes with the seed.
template <typename T>
class Input : public Buffer {
  public:
    template <typename Gen>
    Input(Problem& owner, std::string name, u64 n, Gen gen)
        : Buffer(owner, std::move(name)),
          n_(n),
          stream_(detail::next_input_stream(owner)),
          mem_(n * sizeof(T) ? n * sizeof(T) : 1, detail::exact_inputs(owner) ? 0 : kFrontGuard,
               detail::exact_inputs(owner) ? 0 : kBackGuard) {
        fill_ = [gen](T* data, u64 count, u64 base, cudaStream_t s) {
            KIT_LAUNCH(detail::generate_kernel, detail::grid_for(count), 256, 0, s, data, count,
                       gen, base);
            DEV_CHECK(cudaGetLastError());
        };
#ifdef CUDALINGS_EMULATOR
        make_ = [gen](T* data, u64 first, u64 count, u64 base) {
            for (u64 i = 0; i < count; ++i) data[i] = gen(base, first + i);
        };
#endif
        count_ = [gen](const T* data, u64 count, u64 base, cudaStream_t s) {
            unsigned long long* c = detail::new_counter(s);
            KIT_LAUNCH(detail::count_changed_kernel, detail::grid_for(count), 256, 0, s, data,
                       count, gen, base, c);
            DEV_CHECK(cudaGetLastError());
            return detail::read_counter_and_free(c, s);
        };
        detail::mark_extent(mem_.data(), n * sizeof(T), this->name(), sizeof(T));
        regenerate(detail::seed_of(owner), detail::stream_of(owner));
    }
    // A built-in distribution: floats (`extra`: the row length of a 2-D array, for
    // dist::coordinates), or integer keys below `extra` (the range: bins, say).
    Input(Problem& owner, std::string name, u64 n, Dist d, u64 extra = 0)
        : Input(owner, std::move(name), n, builtin(d, n, extra)) {}

    const T* get() const { return reinterpret_cast<const T*>(mem_.data()); }
    operator const T*() const { return get(); }
    u64 size() const { return n_; }
    u64 base() const { return base_; }  // the generator's base for the current values

    bool is_input() const override { return true; }
    void regenerate(u64 seed, cudaStream_t s) override {
        base_ = stream_base(seed, stream_);
        fill_(reinterpret_cast<T*>(mem_.data()), n_, base_, s);
        mem_.fill_guards(s);
    }
    u64 changed(cudaStream_t s) const override { return count_(get(), n_, base_, s); }
    void sample_values() override {
#ifdef CUDALINGS_EMULATOR
        if (!n_) return;
        detail::make_on_demand(mem_.data(), n_ * sizeof(T),
                               [this](std::size_t offset, std::size_t bytes, void* dst) {
                                   make_(static_cast<T*>(dst), offset / sizeof(T),
                                         bytes / sizeof(T), base_);
                               });
#endif
    }
    GuardHit check_guards(cudaStream_t s) const override { return mem_.check(s); }

  private:
    static auto builtin(Dist d, u64 n, u64 extra) {
        if constexpr (std::is_floating_point_v<T>)
            return FloatGen{d, extra};
        else
            return KeyGen{d, static_cast<u32>(extra), n};
    }
    u64 n_;
    u64 stream_;
    u64 base_ = 0;
    GuardedBytes mem_;
    std::function<void(T*, u64, u64, cudaStream_t)> fill_;
    std::function<u64(const T*, u64, u64, cudaStream_t)> count_;
#ifdef CUDALINGS_EMULATOR
    std::function<void(T*, u64, u64, u64)> make_;  // elements [first, first + count), on the host
#endif
};

// An output of n 4-byte elements (float, unsigned, int), poisoned before every call.
class OutputBytes : public Buffer {
  public:
    OutputBytes(Problem& owner, std::string name, u64 n, std::size_t element_bytes);
    void poison(cudaStream_t s) override;
    GuardHit check_guards(cudaStream_t s) const override { return mem_.check(s); }
    std::uint64_t fingerprint(cudaStream_t s) const override;
    u64 size() const { return n_; }
    void sample_values() override;

  protected:
    unsigned char* data(Side side) const;
    u64 n_;
    GuardedBytes mem_;
    std::unique_ptr<dev::Array<unsigned char>> spare_;
};

template <typename T>
class Output : public OutputBytes {
    static_assert(sizeof(T) == 4, "outputs are 4-byte elements");

  public:
    Output(Problem& owner, std::string name, u64 n) : OutputBytes(owner, std::move(name), n, 4) {}
    T* get() const { return at(Side::Learner); }
    T* at(Side side) const { return reinterpret_cast<T*>(data(side)); }
};

// Scratch memory a step may use: poisoned (NaN bits) at every call, guarded on both sides.
class Workspace : public OutputBytes {
  public:
    Workspace(Problem& owner, std::string name, std::size_t bytes);
    void* at(Side side) const { return data(side); }
    std::size_t bytes() const { return bytes_; }
    std::uint64_t fingerprint(cudaStream_t) const override { return 0; }  // scratch

  private:
    std::size_t bytes_;
};

}  // namespace kit
