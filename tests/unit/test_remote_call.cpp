// The judge split's call ABI (checker/kit/remote_call.h): a call packed on the judge's side with
// the entry point's signature, unpacked and made on the learner's side, where lent memory has
// other addresses.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cstring>
#include <map>
#include <vector>

#include "remote_call.h"

using namespace kit::remote;

namespace {

// Two "allocations" of the judge, and where the learner has each mapped.
struct Loans : Lender, Borrower {
    std::vector<float> judge_in = std::vector<float>(64), judge_out = std::vector<float>(64);
    std::vector<float> learner_in = std::vector<float>(64), learner_out = std::vector<float>(64);
    std::vector<float> weights = {0.25f, 0.5f, 0.25f};
    cudaStream_t learner_stream = reinterpret_cast<cudaStream_t>(0x5eed);

    bool locate(const void* p, std::uint32_t& loan, std::uint64_t& offset) const override {
        const auto* b = static_cast<const unsigned char*>(p);
        const std::vector<float>* arrays[] = {&judge_in, &judge_out};
        for (std::uint32_t i = 0; i < 2; ++i) {
            const auto* base = reinterpret_cast<const unsigned char*>(arrays[i]->data());
            if (b >= base && b < base + arrays[i]->size() * sizeof(float)) {
                loan = i;
                offset = static_cast<std::uint64_t>(b - base);
                return true;
            }
        }
        return false;
    }
    bool host_block(const void* p, std::uint64_t& bytes) const override {
        if (p != weights.data()) return false;
        bytes = weights.size() * sizeof(float);
        return true;
    }
    void* address(std::uint32_t loan, std::uint64_t offset) const override {
        auto* base = reinterpret_cast<unsigned char*>(
            const_cast<float*>(loan == 0 ? learner_in.data() : learner_out.data()));
        return base + offset;
    }
    cudaStream_t stream() const override { return learner_stream; }
};

// What the learner's entry point saw.
struct Seen {
    const float* in;
    float* out;
    size_t n;
    int radius;
    float alpha;
    double beta;
    std::vector<float> weights;
    void* workspace;
    size_t workspace_bytes;
    unsigned char flag;
    cudaStream_t stream;
} seen;

extern "C" cudaError_t entry_point(const float* in, float* out, size_t n, int radius, float alpha,
                                   double beta, const float* weights, void* workspace,
                                   size_t workspace_bytes, unsigned char flag, cudaStream_t s) {
    seen = {in,
            out,
            n,
            radius,
            alpha,
            beta,
            std::vector<float>(weights, weights + 3),
            workspace,
            workspace_bytes,
            flag,
            s};
    return cudaErrorInvalidValue;  // any code: it comes back as the call's result
}
using Entry = decltype(&entry_point);

}  // namespace

TEST_CASE("a call packed by the judge is made by the learner with its own addresses", "[remote]") {
    Loans loans;
    cudaStream_t judge_stream = reinterpret_cast<cudaStream_t>(0xbad);
    CallMessage m = Signature<Entry>::pack("entry_point", loans, loans.judge_in.data() + 3,
                                           loans.judge_out.data(), size_t{1} << 40, -2, 1.5f,
                                           -0.125, loans.weights.data(), nullptr, size_t{0},
                                           static_cast<unsigned char>(7), judge_stream);
    CHECK(std::string(m.symbol) == "entry_point");
    CHECK(m.count == 11);
    // Nothing of the judge's addresses is in the message.
    const auto judge_in = reinterpret_cast<std::uintptr_t>(loans.judge_in.data());
    for (std::uint32_t i = 0; i < m.count; ++i) CHECK(m.args[i].value != judge_in + 12);

    cudaError_t r = Signature<Entry>::call(reinterpret_cast<void*>(&entry_point), m, loans);
    CHECK(r == cudaErrorInvalidValue);
    CHECK(seen.in == loans.learner_in.data() + 3);
    CHECK(seen.out == loans.learner_out.data());
    CHECK(seen.n == size_t{1} << 40);
    CHECK(seen.radius == -2);
    CHECK(seen.alpha == 1.5f);
    CHECK(seen.beta == -0.125);
    CHECK(seen.weights == loans.weights);
    CHECK(seen.weights.data() != loans.weights.data());
    CHECK(seen.workspace == nullptr);
    CHECK(seen.workspace_bytes == 0);
    CHECK(seen.flag == 7);
    CHECK(seen.stream == loans.learner_stream);
}

TEST_CASE("the judge's own memory never travels, and a call for another signature is refused",
          "[remote]") {
    Loans loans;
    float judge_private[4] = {};
    CHECK_THROWS_AS(
        Signature<Entry>::pack("entry_point", loans, judge_private, loans.judge_out.data(),
                               size_t{1}, 1, 1.0f, 1.0, loans.weights.data(), nullptr, size_t{0},
                               static_cast<unsigned char>(0), cudaStream_t{}),
        RemoteCallError);

    using Other = cudaError_t (*)(const float*, float*, int, cudaStream_t);
    CallMessage m = Signature<Other>::pack("entry_point", loans, loans.judge_in.data(),
                                           loans.judge_out.data(), 5, cudaStream_t{});
    CHECK(Signature<Other>::hash() != Signature<Entry>::hash());
    CHECK_THROWS_AS(Signature<Entry>::call(reinterpret_cast<void*>(&entry_point), m, loans),
                    RemoteCallError);
    // A size_t where the shim expects an int is another signature too.
    using Wider = cudaError_t (*)(const float*, float*, size_t, cudaStream_t);
    CHECK(Signature<Wider>::hash() != Signature<Other>::hash());
}

// The kit defines these (checker/kit/problem.cu); this test links no kit.
namespace kit::remote {
Route*& current_route() {
    static Route* route = nullptr;
    return route;
}
void* learner_entry() {
    static char mark;
    return &mark;
}
Route*& reference_route() {
    static Route* route = nullptr;
    return route;
}
void* reference_entry() {
    static char mark;
    return &mark;
}
}  // namespace kit::remote

TEST_CASE("a problem's call goes to the learner's process only when its entry point is there",
          "[remote]") {
    Loans loans;
    HostBlocks host{{loans.weights.data(), loans.weights.size() * sizeof(float)}};
    auto call = [&](void* fn) {
        return Invoker<Entry>(fn, host)(loans.judge_in.data(), loans.judge_out.data(), size_t{9}, 1,
                                        2.0f, 3.0, loans.weights.data(), nullptr, size_t{0},
                                        static_cast<unsigned char>(1), cudaStream_t{});
    };
    // Here: a plain call with the judge's own addresses.
    seen = {};
    CHECK(call(reinterpret_cast<void*>(&entry_point)) == cudaErrorInvalidValue);
    CHECK(seen.in == loans.judge_in.data());

    // There, with no route: refused, never called here.
    seen = {};
    CHECK_THROWS_AS(call(learner_entry()), RemoteCallError);
    CHECK(seen.in == nullptr);

    // There, along a route: packed with the route's symbol and made with the learner's addresses
    // (the route here makes the call at once, as the learner's shim would).
    Route route;
    route.symbol = "entry_point";
    route.lender = &loans;
    int sent = 0;
    route.send = [&](const CallMessage& m) {
        ++sent;
        CHECK(std::string(m.symbol) == "entry_point");
        return Signature<Entry>::call(reinterpret_cast<void*>(&entry_point), m, loans);
    };
    current_route() = &route;
    seen = {};
    CHECK(call(learner_entry()) == cudaErrorInvalidValue);
    CHECK(sent == 1);
    CHECK(seen.in == loans.learner_in.data());
    CHECK(seen.out == loans.learner_out.data());
    CHECK(seen.weights == loans.weights);
    // The reference's entry point goes along the reference's route, never the learner's.
    CHECK_THROWS_AS(call(reference_entry()), RemoteCallError);
    CHECK(sent == 1);
    Route theirs = route;
    int sent_theirs = 0;
    theirs.symbol = "entry_point";
    theirs.send = [&](const CallMessage& m) {
        ++sent_theirs;
        return Signature<Entry>::call(reinterpret_cast<void*>(&entry_point), m, loans);
    };
    reference_route() = &theirs;
    seen = {};
    CHECK(call(reference_entry()) == cudaErrorInvalidValue);
    CHECK(sent == 1);
    CHECK(sent_theirs == 1);
    CHECK(seen.in == loans.learner_in.data());
    reference_route() = nullptr;
    // A host array the problem did not share does not travel.
    host.clear();
    CHECK_THROWS_AS(call(learner_entry()), RemoteCallError);
    CHECK(sent == 1);
    current_route() = nullptr;
}
