// A step's call, carried from the judge's process to the learner's (the judge split, docs/
// architecture.md). The judge never calls the learner's code: it packs the entry point's
// arguments into a CallMessage, the learner's process unpacks them with the same signature and
// makes the call there.
//
// Every lesson's checks already call their entry point one way,
//
//     return entry<decltype(&saxpy)>(fn)(x_, y_.at(side), n(), a(), stream());
//
// so the signature is known on both sides from the lesson's header alone: the judge packs with
// Signature<decltype(&saxpy)>::pack, and the learner's shim (built per lesson from the header:
// CUDALINGS_SHIM(saxpy)) unpacks with the same type. Nothing of a lesson's checks is needed in
// the learner's process.
//
// What travels, per argument (Arg):
//   - a pointer into memory the judge lent the learner (Lender::locate): the loan's number and
//     the offset in it; the learner's Borrower turns them into its own mapping's address;
//   - a pointer to a small host array the judge registered (stencil weights): its bytes, copied
//     into the message; the learner passes a pointer to its copy;
//   - a null pointer; the stream (the learner's own, whatever the judge's was);
//   - integers, floats and doubles by value.
// A pointer the judge did not lend is refused (RemoteCallError): the judge's own memory never
// reaches the learner. The signature travels as a hash of its argument kinds and sizes, so a
// shim built from another header version is an error, not a garbled call.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace kit::remote {

struct RemoteCallError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

enum class Kind : std::uint8_t { Null, Lent, Host, Stream, Signed, Unsigned, Float, Double };

struct Arg {
    Kind kind = Kind::Null;
    std::uint8_t size = 0;    // bytes of the scalar (Signed, Unsigned)
    std::uint32_t loan = 0;   // Lent: the loan's number; Host: offset into CallMessage::host
    std::uint64_t value = 0;  // Lent: offset in the loan; Host: bytes; scalars: their bits
};

inline constexpr int kMaxArgs = 16;
inline constexpr std::size_t kMaxHostBytes = 4096;

struct CallMessage {
    char symbol[64] = {};
    std::uint64_t signature = 0;
    std::uint32_t count = 0;
    std::uint32_t host_used = 0;
    Arg args[kMaxArgs];
    alignas(16) unsigned char host[kMaxHostBytes] = {};
};

// The judge's side: which of its pointers name memory it lent.
class Lender {
  public:
    virtual ~Lender() = default;
    // A lent allocation holding `p`: its number and p's offset in it.
    virtual bool locate(const void* p, std::uint32_t& loan, std::uint64_t& offset) const = 0;
    // A host array the judge agreed to copy (its first byte at `p`): its size in bytes.
    virtual bool host_block(const void* p, std::uint64_t& bytes) const {
        (void)p;
        (void)bytes;
        return false;
    }
};

// The learner's side: its own address for a loan's offset, and its stream.
class Borrower {
  public:
    virtual ~Borrower() = default;
    virtual void* address(std::uint32_t loan, std::uint64_t offset) const = 0;
    virtual cudaStream_t stream() const = 0;
};

namespace detail {

template <typename T>
constexpr char code() {
    if constexpr (std::is_same_v<T, cudaStream_t>)
        return 's';
    else if constexpr (std::is_pointer_v<T>)
        return 'p';
    else if constexpr (std::is_same_v<T, float>)
        return 'f';
    else if constexpr (std::is_same_v<T, double>)
        return 'd';
    else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>)
        return 'i';
    else if constexpr (std::is_integral_v<T> || std::is_enum_v<T>)
        return 'u';
    else
        return '?';
}

template <typename T>
constexpr bool supported() {
    return code<T>() != '?';
}

constexpr std::uint64_t fnv(std::uint64_t h, unsigned char c) { return (h ^ c) * 0x100000001b3ull; }

template <typename T>
Arg encode(const T& v, const Lender& lender, CallMessage& m) {
    Arg a;
    if constexpr (std::is_same_v<T, cudaStream_t>) {
        (void)v;
        a.kind = Kind::Stream;
    } else if constexpr (std::is_pointer_v<T>) {
        const void* p = static_cast<const void*>(v);
        std::uint64_t bytes = 0;
        if (!p) {
            a.kind = Kind::Null;
        } else if (lender.locate(p, a.loan, a.value)) {
            a.kind = Kind::Lent;
        } else if (lender.host_block(p, bytes)) {
            const std::uint32_t at = (m.host_used + 15u) & ~15u;
            if (at + bytes > kMaxHostBytes)
                throw RemoteCallError("a host array argument of " + std::to_string(bytes) +
                                      " bytes does not fit a call message");
            std::memcpy(m.host + at, p, bytes);
            m.host_used = at + static_cast<std::uint32_t>(bytes);
            a.kind = Kind::Host;
            a.loan = at;
            a.value = bytes;
        } else {
            throw RemoteCallError("a pointer argument names memory the judge did not lend");
        }
    } else if constexpr (std::is_same_v<T, float>) {
        std::uint32_t bits;
        std::memcpy(&bits, &v, 4);
        a.kind = Kind::Float;
        a.value = bits;
    } else if constexpr (std::is_same_v<T, double>) {
        a.kind = Kind::Double;
        std::memcpy(&a.value, &v, 8);
    } else {
        static_assert(std::is_integral_v<T> || std::is_enum_v<T>,
                      "an argument kind a call can carry");
        a.kind = std::is_signed_v<T> ? Kind::Signed : Kind::Unsigned;
        a.size = sizeof(T);
        if constexpr (std::is_signed_v<T>)
            a.value = static_cast<std::uint64_t>(static_cast<std::int64_t>(v));
        else
            a.value = static_cast<std::uint64_t>(v);
    }
    return a;
}

template <typename T>
T decode(const Arg& a, const Borrower& b, const CallMessage& m) {
    auto expect = [&](Kind k) {
        if (a.kind != k) throw RemoteCallError("an argument of another kind than the signature's");
    };
    if constexpr (std::is_same_v<T, cudaStream_t>) {
        expect(Kind::Stream);
        return b.stream();
    } else if constexpr (std::is_pointer_v<T>) {
        using Pointee = std::remove_pointer_t<T>;
        using Raw = std::conditional_t<std::is_const_v<Pointee>, const void*, void*>;
        switch (a.kind) {
            case Kind::Null:
                return nullptr;
            case Kind::Lent:
                return static_cast<T>(static_cast<Raw>(b.address(a.loan, a.value)));
            case Kind::Host:
                if (a.loan + a.value > m.host_used)
                    throw RemoteCallError("a host array beyond the message");
                // The learner's copy (the message outlives the call): const or not, writes to it
                // reach nobody.
                return static_cast<T>(
                    static_cast<Raw>(const_cast<unsigned char*>(m.host) + a.loan));
            default:
                throw RemoteCallError("a pointer argument of another kind");
        }
    } else if constexpr (std::is_same_v<T, float>) {
        expect(Kind::Float);
        std::uint32_t bits = static_cast<std::uint32_t>(a.value);
        float f;
        std::memcpy(&f, &bits, 4);
        return f;
    } else if constexpr (std::is_same_v<T, double>) {
        expect(Kind::Double);
        double d;
        std::memcpy(&d, &a.value, 8);
        return d;
    } else {
        expect(std::is_signed_v<T> ? Kind::Signed : Kind::Unsigned);
        if (a.size != sizeof(T)) throw RemoteCallError("a scalar argument of another size");
        if constexpr (std::is_signed_v<T>)
            return static_cast<T>(static_cast<std::int64_t>(a.value));
        else
            return static_cast<T>(a.value);
    }
}

}  // namespace detail

template <typename Fn>
struct Signature;

template <typename R, typename... A>
struct Signature<R (*)(A...)> {
    static_assert(sizeof...(A) <= kMaxArgs, "an entry point of at most 16 arguments");
    static_assert((detail::supported<std::decay_t<A>>() && ...),
                  "an entry point's arguments: pointers, integers, floats, doubles, a stream");

    // A hash of the argument kinds and sizes ("pp" + 'u' 8 + ... + 's').
    static constexpr std::uint64_t hash() {
        std::uint64_t h = 0xcbf29ce484222325ull;
        ((h = detail::fnv(
              detail::fnv(h, static_cast<unsigned char>(detail::code<std::decay_t<A>>())),
              static_cast<unsigned char>(sizeof(std::decay_t<A>)))),
         ...);
        return h;
    }

    static CallMessage pack(const char* symbol, const Lender& lender, A... args) {
        CallMessage m;
        std::snprintf(m.symbol, sizeof m.symbol, "%s", symbol);
        m.signature = hash();
        m.count = sizeof...(A);
        std::uint32_t i = 0;
        ((m.args[i++] = detail::encode<std::decay_t<A>>(args, lender, m)), ...);
        return m;
    }

    // The learner's side: `fn` is the learner's entry point, resolved by symbol.
    static R call(void* fn, const CallMessage& m, const Borrower& b) {
        if (m.signature != hash() || m.count != sizeof...(A))
            throw RemoteCallError(std::string("the call of ") + m.symbol +
                                  " was packed for another signature");
        return call_with(reinterpret_cast<R (*)(A...)>(fn), m, b, std::index_sequence_for<A...>{});
    }

  private:
    template <std::size_t... I>
    static R call_with(R (*f)(A...), const CallMessage& m, const Borrower& b,
                       std::index_sequence<I...>) {
        // Decoded in order into a tuple first: a decoding error throws before any call.
        std::tuple<std::decay_t<A>...> values{detail::decode<std::decay_t<A>>(m.args[I], b, m)...};
        return f(std::get<I>(values)...);
    }
};

// The judge's way to the learner's process, where the runner judges a step it does not load
// (the judge split). kit::Problem::entry routes a call there when its `fn` is learner_entry():
// the arguments are packed with the entry point's signature and `send` carries them over.
struct Route {
    std::string symbol;              // the lesson's entry point
    const Lender* lender = nullptr;  // the judge's memory the call may name
    // Makes the call in the learner's process: what the call returned. Throws what the runner
    // makes of a failure found after it (an error at the synchronisation, the process gone).
    std::function<cudaError_t(const CallMessage&)> send;
    // Called when the learner's function has returned and its device is being synchronised.
    std::function<void()> returning;
    // The learner's own account of the last call (set by send): its events' times. Claims: the
    // judge's host clock around the same call is the cross-check.
    double on_stream_us = 0, whole_device_us = 0;
    // What a round trip costs beyond its events on the judge's clock (microseconds): the median
    // and interquartile range of probes made before the learner's code was loaded (0: none).
    double overhead_us = 0, overhead_iqr_us = 0;
    // The median time of the judge's own work before each probe (its cold L2, on its events):
    // the canary's figure from before the learner's code was loaded (0: none).
    double canary_us = 0;
};
// The route of this process (null: every call is made here). Defined by the kit (problem.cu).
Route*& current_route();
// The `fn` that stands for the learner's entry point when it lives in another process.
void* learner_entry();
// The same for the reference's entry point, timed in a process of its own (runner/timing.h):
// its route, and the `fn` that stands for it.
Route*& reference_route();
void* reference_entry();

// Small host arrays a problem passes to its entry point (stencil weights): they travel with a
// call to the learner's process, copied into the message.
using HostBlocks = std::vector<std::pair<const void*, std::size_t>>;

// What Problem::entry returns: called like the entry point itself. With the learner's step in
// this process, a plain call; with the learner's step in its own (fn == learner_entry()),
// the arguments packed and sent along the process's route (above); the reference's likewise
// (fn == reference_entry(), along reference_route()).
template <typename Fn>
class Invoker;

template <typename R, typename... A>
class Invoker<R (*)(A...)> {
  public:
    Invoker(void* fn, const HostBlocks& host) : fn_(fn), host_(host) {}
    R operator()(A... args) const {
        const bool learners = fn_ == learner_entry();
        if (!learners && fn_ != reference_entry())
            return reinterpret_cast<R (*)(A...)>(fn_)(args...);
        static_assert(std::is_same_v<R, cudaError_t>, "an entry point returns cudaError_t");
        Route* route = learners ? current_route() : reference_route();
        if (!route || !route->lender || !route->send)
            throw RemoteCallError(std::string("a call for the ") +
                                  (learners ? "learner's" : "reference's") +
                                  " process with no route to it");
        const WithHost lender(*route->lender, host_);
        return route->send(Signature<R (*)(A...)>::pack(route->symbol.c_str(), lender, args...));
    }

  private:
    // The route's lender, and this problem's host arrays.
    class WithHost : public Lender {
      public:
        WithHost(const Lender& memory, const HostBlocks& host) : memory_(memory), host_(host) {}
        bool locate(const void* p, std::uint32_t& loan, std::uint64_t& offset) const override {
            return memory_.locate(p, loan, offset);
        }
        bool host_block(const void* p, std::uint64_t& bytes) const override {
            for (const auto& [at, size] : host_)
                if (at == p) {
                    bytes = size;
                    return true;
                }
            return false;
        }

      private:
        const Lender& memory_;
        const HostBlocks& host_;
    };
    void* fn_;
    const HostBlocks& host_;
};

}  // namespace kit::remote
