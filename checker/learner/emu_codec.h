// The judge split under the CPU emulator: what travels between the judge (cudalings-runner-emu)
// and the learner's process (cudalings-learner-emu) besides the calls, as bytes.
//   judge -> learner  the emulator's options for the next call (the case's schedule, checks,
//                     sample, time budget), and the marks of a lent allocation (the array's
//                     extent between its guard zones, its name)
//   learner -> judge  what the learner's emulator found during a call (races, out-of-bounds
//                     accesses, launches a GPU would refuse, a thread that never ends)
// Findings are the learner process's claims: they can only make its own verdict worse, except a
// "slow" one, which the judge believes only when its own clock agrees (runner/emulator_adapter.h).
// Both ends are built from the same sources, but the bytes come from a process that runs the
// learner's code: every read is bounds-checked, and a malformed message decodes to nothing.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "cudalings_emu/emulator.h"

namespace cudalings::emu_codec {

class Writer {
  public:
    void u64(std::uint64_t v) { raw(&v, sizeof v); }
    void text(const std::string& s) {
        u64(s.size());
        out_ += s;
    }
    void raw(const void* p, std::size_t n) { out_.append(static_cast<const char*>(p), n); }
    const std::string& bytes() const { return out_; }

  private:
    std::string out_;
};

class Reader {
  public:
    explicit Reader(const std::string& in) : in_(in) {}
    bool u64(std::uint64_t& v) { return raw(&v, sizeof v); }
    bool text(std::string& s, std::size_t limit = 1 << 20) {
        std::uint64_t n = 0;
        if (!u64(n) || n > limit || n > in_.size() - at_) return false;
        s.assign(in_, at_, n);
        at_ += n;
        return true;
    }
    bool raw(void* p, std::size_t n) {
        if (n > in_.size() - at_) return false;
        std::memcpy(p, in_.data() + at_, n);
        at_ += n;
        return true;
    }
    bool done() const { return at_ == in_.size(); }

  private:
    const std::string& in_;
    std::size_t at_ = 0;
};

// The options of the next call. `epoch` changes with every case: the learner's emulator starts
// the case's time budget then. `poison` is the checker's poison pattern (kit/data.h).
struct CallSetup {
    cudalings_emu::Options options;
    std::uint32_t poison = 0;
    std::uint64_t epoch = 0;
};
static_assert(std::is_trivially_copyable_v<cudalings_emu::Options>);

inline std::string pack(const CallSetup& s) {
    Writer w;
    w.raw(&s.options, sizeof s.options);
    w.u64(s.poison);
    w.u64(s.epoch);
    return w.bytes();
}

inline bool unpack(const std::string& bytes, CallSetup& s) {
    Reader r(bytes);
    std::uint64_t poison = 0;
    CallSetup got;
    if (!r.raw(&got.options, sizeof got.options) || !r.u64(poison) || !r.u64(got.epoch) ||
        !r.done())
        return false;
    got.poison = static_cast<std::uint32_t>(poison);
    s = got;
    return true;
}

inline std::string pack(const cudalings_emu::Marks& m) {
    Writer w;
    w.u64(m.offset);
    w.u64(m.bytes);
    w.u64(m.element);
    w.text(m.name);
    for (std::size_t v : {m.on_demand_offset, m.on_demand_bytes, m.tracked_offset, m.tracked_bytes})
        w.u64(v);
    return w.bytes();
}

inline bool unpack(const std::string& bytes, cudalings_emu::Marks& m) {
    Reader r(bytes);
    std::uint64_t offset = 0, size = 0, element = 0, sampled[4] = {};
    cudalings_emu::Marks got;
    if (!r.u64(offset) || !r.u64(size) || !r.u64(element) || !r.text(got.name, 256))
        return false;
    for (std::uint64_t& v : sampled)
        if (!r.u64(v)) return false;
    if (!r.done()) return false;
    got.offset = offset;
    got.bytes = size;
    got.element = element;
    got.on_demand_offset = sampled[0];
    got.on_demand_bytes = sampled[1];
    got.tracked_offset = sampled[2];
    got.tracked_bytes = sampled[3];
    m = got;
    return true;
}

// The words a call's kernels wrote in the learner's tracked ranges (emulator.h, written_words):
// per range, its address in device memory and its [first, end) word ranges; and how many
// launches, memsets and copies its emulator skipped after the sample changed memory (then the
// outputs are half made, and not judged). Claims: a learner's process can hide its writes this
// way, as it can lift its emulator's protection (docs/emulator.md: a known limit of emulated
// grades).
struct Written {
    std::vector<std::pair<std::uint64_t, std::vector<std::pair<std::size_t, std::size_t>>>> outputs;
    std::uint64_t skips = 0;
};

inline std::string pack(const Written& written) {
    Writer w;
    w.u64(written.skips);
    w.u64(written.outputs.size());
    for (const auto& [address, ranges] : written.outputs) {
        w.u64(address);
        w.u64(ranges.size());
        for (const auto& [lo, hi] : ranges) {
            w.u64(lo);
            w.u64(hi);
        }
    }
    return w.bytes();
}

inline bool unpack(const std::string& bytes, Written& written) {
    Reader r(bytes);
    std::uint64_t count = 0;
    Written got;
    if (!r.u64(got.skips) || !r.u64(count) || count > 4096) return false;
    for (std::uint64_t k = 0; k < count; ++k) {
        std::uint64_t address = 0, n = 0;
        if (!r.u64(address) || !r.u64(n) || n > (std::uint64_t{1} << 26)) return false;
        std::vector<std::pair<std::size_t, std::size_t>> ranges;
        for (std::uint64_t i = 0; i < n; ++i) {
            std::uint64_t lo = 0, hi = 0;
            if (!r.u64(lo) || !r.u64(hi) || hi < lo) return false;
            ranges.emplace_back(lo, hi);
        }
        got.outputs.emplace_back(address, std::move(ranges));
    }
    if (!r.done()) return false;
    written = std::move(got);
    return true;
}

inline std::string pack(const std::vector<cudalings_emu::Diagnostic>& found) {
    Writer w;
    w.u64(found.size());
    for (const auto& d : found) {
        for (const std::string* s : {&d.kind, &d.severity, &d.file, &d.message, &d.detail})
            w.text(*s);
        w.u64(static_cast<std::uint64_t>(static_cast<std::int64_t>(d.line)));
        w.u64(d.count);
    }
    return w.bytes();
}

inline bool unpack(const std::string& bytes, std::vector<cudalings_emu::Diagnostic>& found) {
    Reader r(bytes);
    std::uint64_t n = 0;
    if (!r.u64(n) || n > 100000) return false;
    std::vector<cudalings_emu::Diagnostic> got;
    for (std::uint64_t i = 0; i < n; ++i) {
        cudalings_emu::Diagnostic d;
        std::uint64_t line = 0;
        for (std::string* s : {&d.kind, &d.severity, &d.file, &d.message, &d.detail})
            if (!r.text(*s)) return false;
        if (!r.u64(line) || !r.u64(d.count)) return false;
        d.line = static_cast<int>(static_cast<std::int64_t>(line));
        got.push_back(std::move(d));
    }
    if (!r.done()) return false;
    found = std::move(got);
    return true;
}

}  // namespace cudalings::emu_codec
