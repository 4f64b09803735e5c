#include "data.h"

#include <algorithm>

#include "problem.h"

#ifdef CUDALINGS_EMULATOR
#include "cudalings_emu/abi.h"
#include "cudalings_emu/emulator.h"
#endif

namespace kit {
namespace {

__global__ void poison_kernel(std::uint32_t* out, u64 n) {
    for (u64 i = blockIdx.x * u64{blockDim.x} + threadIdx.x; i < n;
         i += u64{gridDim.x} * blockDim.x)
        out[i] = kPoisonBits;
}

// result: [0] changed bytes, [1] min distance, [2] max distance
__global__ void guard_kernel(const unsigned char* guard, u64 bytes, bool before,
                             unsigned long long* result) {
    for (u64 i = blockIdx.x * u64{blockDim.x} + threadIdx.x; i < bytes;
         i += u64{gridDim.x} * blockDim.x) {
        if (guard[i] != kGuardByte) {
            // distance from the data: the guard before the data is counted backwards
            const unsigned long long distance = before ? bytes - 1 - i : i;
            atomicAdd(&result[0], 1ull);
            atomicMin(&result[1], distance);
            atomicMax(&result[2], distance);
        }
    }
}

// An order-independent 64-bit fingerprint of n words: the sum of a keyed mix of each word and
// its index (so a moved word changes it).
__global__ void fingerprint_kernel(const std::uint32_t* data, u64 n, unsigned long long* out) {
    unsigned long long local = 0;
    for (u64 i = blockIdx.x * u64{blockDim.x} + threadIdx.x; i < n;
         i += u64{gridDim.x} * blockDim.x)
        local += splitmix64((u64{data[i]} << 32) ^ (i * 0x9e3779b97f4a7c15ull));
    atomicAdd(out, local);
}

}  // namespace

namespace detail {

unsigned grid_for(u64 n, unsigned block) {
    const u64 blocks = (n + block - 1) / block;
    return static_cast<unsigned>(std::min<u64>(blocks ? blocks : 1, 8192));
}

unsigned long long* new_counter(cudaStream_t s) {
    auto* c = static_cast<unsigned long long*>(dev::allocate(sizeof(unsigned long long)));
    dev::fill_bytes(c, 0, sizeof(unsigned long long), s);
    return c;
}

u64 read_counter_and_free(unsigned long long* counter, cudaStream_t s) {
    unsigned long long value = 0;
    dev::sync_stream(s);
    dev::copy_to_host(&value, counter, sizeof value);
    dev::release(counter);
    return value;
}

void mark_extent(const void* p, std::size_t bytes, const std::string& name,
                 std::size_t element_bytes) {
#ifdef CUDALINGS_EMULATOR
    cudalings_emu::cudalings_emu_set_extent(p, bytes);
    // An identifier for "output[257]": "the output" -> output, "out[0]" -> out.
    std::string id = name.rfind("the ", 0) == 0 ? name.substr(4) : name;
    id = id.substr(0, id.find_first_of("[ "));
    cudalings_emu::cudalings_emu_name_array(p, id.c_str(), element_bytes);
    // A kernel's store of the poison is a NaN it wrote (the GPU's arithmetic canonicalises it).
    cudalings_emu::cudalings_emu_set_poison(kPoisonBits);
#else
    (void)p;
    (void)bytes;
    (void)name;
    (void)element_bytes;
#endif
}

void make_on_demand(void* p, std::size_t bytes,
                    std::function<void(std::size_t offset, std::size_t bytes, void* dst)> make) {
#ifdef CUDALINGS_EMULATOR
    cudalings_emu::fill_on_demand(p, bytes, std::move(make));
#else
    (void)p;
    (void)bytes;
    (void)make;
#endif
}

void track_writes(void* p, std::size_t bytes) {
#ifdef CUDALINGS_EMULATOR
    cudalings_emu::track_writes(p, bytes);
#else
    (void)p;
    (void)bytes;
#endif
}

}  // namespace detail

Buffer::Buffer(Problem& owner, std::string name) : owner_(owner), name_(std::move(name)) {
    owner.buffers_.push_back(this);
}

GuardedBytes::GuardedBytes(std::size_t data_bytes, std::size_t front, std::size_t back)
    : bytes_(data_bytes),
      front_(front),
      back_(back),
      base_(static_cast<unsigned char*>(dev::allocate_lendable(front + data_bytes + back))) {}

GuardedBytes::~GuardedBytes() { dev::release_lendable(base_); }

void GuardedBytes::fill_guards(cudaStream_t s) {
    if (front_) dev::fill_bytes(base_, kGuardByte, front_, s);
    if (back_) dev::fill_bytes(base_ + front_ + bytes_, kGuardByte, back_, s);
}

GuardHit GuardedBytes::check(cudaStream_t s) const {
    GuardHit report;
    const struct {
        const unsigned char* start;
        u64 bytes;
        bool before;
    } zones[] = {{base_, front_, true}, {base_ + front_ + bytes_, back_, false}};
    for (const auto& z : zones) {
        if (!z.bytes) continue;
        dev::Array<unsigned long long> result(3);
        unsigned long long init[3] = {0, ~0ull, 0};
        DEV_CHECK(cudaMemcpyAsync(result.get(), init, sizeof init, cudaMemcpyHostToDevice, s));
        guard_kernel<<<detail::grid_for(z.bytes), 256, 0, s>>>(z.start, z.bytes, z.before,
                                                               result.get());
        DEV_CHECK(cudaGetLastError());
        dev::sync_stream(s);
        unsigned long long out[3];
        dev::copy_to_host(out, result.get(), sizeof out);
        if (out[0]) {
            report.hit = true;
            report.before = z.before;
            report.bytes = out[0];
            report.nearest = out[1];
            report.farthest = out[2];
            return report;
        }
    }
    return report;
}

void OutputBytes::sample_values() {
    if (n_) detail::track_writes(mem_.data(), mem_.bytes());
}

OutputBytes::OutputBytes(Problem& owner, std::string name, u64 n, std::size_t element_bytes)
    : Buffer(owner, std::move(name)), n_(n), mem_(n * element_bytes, kFrontGuard, kBackGuard) {
    if (detail::spare_outputs(owner))
        spare_ = std::make_unique<dev::Array<unsigned char>>(n * element_bytes);
    // Under emulation, a learner's access into a guard zone is reported at its line.
    detail::mark_extent(mem_.data(), mem_.bytes(), this->name(), element_bytes);
}

unsigned char* OutputBytes::data(Side side) const {
    return side == Side::Reference && spare_ ? spare_->get() : mem_.data();
}

void OutputBytes::poison(cudaStream_t s) {
    mem_.fill_guards(s);
    const u64 words = mem_.bytes() / 4;
    poison_kernel<<<detail::grid_for(words), 256, 0, s>>>(
        reinterpret_cast<std::uint32_t*>(mem_.data()), words);
    DEV_CHECK(cudaGetLastError());
}

std::uint64_t OutputBytes::fingerprint(cudaStream_t s) const {
    unsigned long long* c = detail::new_counter(s);
    const u64 words = mem_.bytes() / 4;
    fingerprint_kernel<<<detail::grid_for(words), 256, 0, s>>>(
        reinterpret_cast<const std::uint32_t*>(mem_.data()), words, c);
    DEV_CHECK(cudaGetLastError());
    return detail::read_counter_and_free(c, s);
}

Workspace::Workspace(Problem& owner, std::string name, std::size_t bytes)
    : OutputBytes(owner, std::move(name), (bytes + 3) / 4, 4), bytes_(bytes) {}

}  // namespace kit
