// Values at the sizes too large to emulate whole (emulator.h: fill_on_demand, track_writes).
//
// A sampled launch runs a few of its blocks on memory that was never filled. For a problem whose
// output elements depend only on the inputs, the checker makes the inputs the sampled blocks read
// on demand (a 4 KiB page at a time, from the same generator as at every other size, the first
// time a kernel or a copy touches it) and records the words those blocks store to, so it can
// judge exactly those outputs: a kernel that is right up to 2^20 and wrong above 2^21 is WRONG
// where a sampled block sees it.
//
// A page not yet made is closed (PROT_NONE). A kernel of the learner's (its accesses hooked) or a
// copy makes it before touching it; the checker's own code is not hooked, so its first touch
// faults, and the fault handler here makes the page and lets the access go on. Any other fault
// goes to the handler that was there before. A page made stays open: the pages of a region are
// left out of the protection that closes device memory to host code between kernels (api.cpp),
// which would otherwise reopen and close them all at every launch.
#include <signal.h>
#include <sys/mman.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>

#include "internal.h"

namespace cudalings_emu {
namespace {

constexpr std::uintptr_t kSampledPage = 4096;
constexpr std::size_t kSampledWords = kSampledPage / 4;

struct OnDemand {
    std::uintptr_t begin = 0, end = 0;  // the values
    std::uintptr_t first_page = 0;      // the page holding begin
    std::function<void(std::size_t, std::size_t, void*)> fill;
    std::vector<bool> made;  // per page from first_page
};

struct Tracked {
    std::uintptr_t begin = 0;
    std::size_t bytes = 0;
    // Per page (from begin) touched by a store: one bit per 4-byte word.
    std::map<std::size_t, std::vector<bool>> pages;
};

// An allocation's parts: the values made on demand, the words tracked (one of each at most: the
// checker's buffers hold one array each).
struct Sampled {
    std::optional<OnDemand> on_demand;
    std::optional<Tracked> tracked;
};

std::map<const Allocation*, Sampled>& all() {
    static std::map<const Allocation*, Sampled> m;
    return m;
}

Allocation* allocation_holding(const void* p, std::size_t bytes) {
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    if (!in_arena(a)) return nullptr;
    Allocation* al = find_allocation(a, nullptr);
    if (!al || al->freed || a + bytes > al->begin + al->bytes) return nullptr;
    return al;
}

// Page k of a region: opened, then its values made (the generator is the checker's code: its
// stores are no kernel's, so no progress and no change a sample would stop at).
void make_page(OnDemand& od, std::size_t k) {
    if (od.made[k]) return;
    od.made[k] = true;
    const std::uintptr_t page = od.first_page + k * kSampledPage;
    ::mprotect(reinterpret_cast<void*>(page), kSampledPage, PROT_READ | PROT_WRITE);
    const std::uintptr_t lo = std::max(page, od.begin);
    const std::uintptr_t hi = std::min(page + kSampledPage, od.end);
    Runtime& r = rt();
    Thread* current = r.current;
    r.current = nullptr;
    od.fill(lo - od.begin, hi - lo, reinterpret_cast<void*>(lo));
    r.current = current;
}

void make_pages(OnDemand& od, std::uintptr_t a, std::size_t size) {
    const std::uintptr_t lo = std::max(a, od.begin), hi = std::min(a + size, od.end);
    if (lo >= hi) return;
    for (std::size_t k = (lo - od.first_page) / kSampledPage;
         k <= (hi - 1 - od.first_page) / kSampledPage; ++k)
        make_page(od, k);
}

// Closes the pages not yet made, a run at a time.
void close_unmade(const OnDemand& od) {
    const std::size_t pages = od.made.size();
    for (std::size_t k = 0; k < pages;) {
        if (od.made[k]) {
            ++k;
            continue;
        }
        std::size_t end = k;
        while (end < pages && !od.made[end]) ++end;
        ::mprotect(reinterpret_cast<void*>(od.first_page + k * kSampledPage),
                   (end - k) * kSampledPage, PROT_NONE);
        k = end;
    }
}

struct sigaction g_previous;
bool g_installed = false;

void restore_handler() {
    if (!g_installed) return;
    ::sigaction(SIGSEGV, &g_previous, nullptr);
    g_installed = false;
}

void on_fault(int, siginfo_t* info, void*) {
    const auto a = reinterpret_cast<std::uintptr_t>(info->si_addr);
    for (auto& [al, sampled] : all()) {
        if (!sampled.on_demand) continue;
        OnDemand& od = *sampled.on_demand;
        const std::size_t k = (a - od.first_page) / kSampledPage;
        if (a >= od.first_page && k < od.made.size() && !od.made[k]) {
            make_page(od, k);
            return;  // the access runs again, on the page made
        }
    }
    // Not ours: the handler from before takes it (the access faults again).
    restore_handler();
}

void install_handler() {
    if (g_installed) return;
    struct sigaction sa {};
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    g_installed = ::sigaction(SIGSEGV, &sa, &g_previous) == 0;
}

}  // namespace

namespace {
void mark_written(const Allocation& al, std::uintptr_t a, std::size_t size) {
    auto it = all().find(&al);
    if (it == all().end()) return;
    if (!it->second.tracked) return;
    Tracked& t = *it->second.tracked;
    const std::uintptr_t lo = std::max(a, t.begin), hi = std::min(a + size, t.begin + t.bytes);
    for (std::size_t word = (lo - t.begin) / 4; lo < hi && word <= (hi - 1 - t.begin) / 4; ++word) {
        auto& bits = t.pages[word / kSampledWords];
        if (bits.empty()) bits.assign(kSampledWords, false);
        bits[word % kSampledWords] = true;
    }
}
}  // namespace

void sampled_access(const Allocation& al, std::uintptr_t a, std::size_t size, bool write,
                    Thread* t) {
    auto it = all().find(&al);
    if (it == all().end()) return;
    if (it->second.on_demand) make_pages(*it->second.on_demand, a, size);
    if (!write || !it->second.tracked) return;
    if (!t) {
        mark_written(al, a, size);
        return;
    }
    t->sampled_alloc = &al;
    t->sampled_at = a;
    t->sampled_size = static_cast<unsigned>(size);
}

void commit_sampled_store(Thread& t) {
    mark_written(*t.sampled_alloc, t.sampled_at, t.sampled_size);
    t.sampled_alloc = nullptr;
    t.sampled_size = 0;
}

bool on_demand_span(const Allocation& al, std::uintptr_t* lo, std::uintptr_t* hi) {
    auto it = all().find(&al);
    if (it == all().end() || !it->second.on_demand) return false;
    const OnDemand& od = *it->second.on_demand;
    *lo = od.first_page;
    *hi = od.first_page + od.made.size() * kSampledPage;
    return true;
}

void sampled_marks(const Allocation& al, Marks* marks) {
    auto it = all().find(&al);
    if (it == all().end()) return;
    if (it->second.on_demand) {
        const OnDemand& od = *it->second.on_demand;
        marks->on_demand_offset = od.begin - al.begin;
        marks->on_demand_bytes = od.end - od.begin;
    }
    if (it->second.tracked) {
        const Tracked& t = *it->second.tracked;
        marks->tracked_offset = t.begin - al.begin;
        marks->tracked_bytes = t.bytes;
    }
}

void forget_sampled(const Allocation& al) {
    all().erase(&al);
    bool any = false;
    for (const auto& [a, sampled] : all()) any = any || sampled.on_demand.has_value();
    if (!any) restore_handler();
}

void make_on_demand(const void* p, std::size_t bytes) {
    Allocation* al = allocation_holding(p, bytes);
    if (al && al->sampled)
        sampled_access(*al, reinterpret_cast<std::uintptr_t>(p), bytes, false, nullptr);
}

bool fill_on_demand(const void* p, std::size_t bytes,
                    std::function<void(std::size_t offset, std::size_t count, void* dst)> fill) {
    Allocation* al = allocation_holding(p, bytes);
    if (!al || al->host || !bytes || !fill || all()[al].on_demand) return false;
    al->sampled = true;
    OnDemand od;
    od.begin = reinterpret_cast<std::uintptr_t>(p);
    od.end = od.begin + bytes;
    od.first_page = od.begin & ~(kSampledPage - 1);
    od.fill = std::move(fill);
    od.made.assign((od.end - od.first_page + kSampledPage - 1) / kSampledPage, false);
    close_unmade(od);
    all()[al].on_demand = std::move(od);
    install_handler();
    return true;
}

bool track_writes(const void* p, std::size_t bytes) {
    Allocation* al = allocation_holding(p, bytes);
    if (!al || !bytes || all()[al].tracked) return false;
    al->sampled = true;
    Tracked t;
    t.begin = reinterpret_cast<std::uintptr_t>(p);
    t.bytes = bytes;
    all()[al].tracked = std::move(t);
    return true;
}

std::vector<std::pair<std::size_t, std::size_t>> written_words(const void* p) {
    std::vector<std::pair<std::size_t, std::size_t>> out;
    Allocation* al = allocation_holding(p, 1);
    if (!al) return out;
    auto it = all().find(al);
    if (it == all().end() || !it->second.tracked) return out;
    const Tracked& t = *it->second.tracked;
    if (t.begin != reinterpret_cast<std::uintptr_t>(p)) return out;
    const std::size_t words = (t.bytes + 3) / 4;
    for (const auto& [page, bits] : t.pages)
        for (std::size_t k = 0; k < kSampledWords; ++k) {
            const std::size_t word = page * kSampledWords + k;
            if (word >= words || !bits[k]) continue;
            if (!out.empty() && out.back().second == word)
                ++out.back().second;
            else
                out.emplace_back(word, word + 1);
        }
    return out;
}

}  // namespace cudalings_emu
