// Stacks for CUDA threads, and fiber start-up. Each stack has a guard page below it, so a
// runaway recursion in a kernel stops with a signal instead of corrupting a neighbour.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "internal.h"

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

namespace cudalings_emu {
namespace {

std::vector<Stack*>& pool() {
    static std::vector<Stack*> stacks;
    return stacks;
}

}  // namespace

Stack* take_stack() {
    auto& p = pool();
    if (!p.empty()) {
        Stack* s = p.back();
        p.pop_back();
        return s;
    }
    std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    std::size_t bytes = (opts().stack_bytes + page - 1) / page * page;
    void* m = ::mmap(nullptr, bytes + page, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) throw std::bad_alloc();
    ::mprotect(m, page, PROT_NONE);
    auto* s = new Stack;
    s->base = static_cast<char*>(m) + page;
    s->size = bytes;
    return s;
}

void give_stack(Stack* s) {
    if (s) pool().push_back(s);
}

#if defined(__x86_64__)
extern "C" void cudalings_emu_fiber_start();

void* fiber_prepare(Stack* s, void (*entry)()) {
    // Layout popped by cudalings_emu_switch: [mxcsr|fpucw] r15 r14 r13 r12 rbx rbp ret
    auto top = reinterpret_cast<std::uintptr_t>(s->base + s->size);
    top &= ~std::uintptr_t{15};
    auto* sp = reinterpret_cast<std::uint64_t*>(top) - 8;  // 64 bytes; sp+8 words = top
    // At cudalings_emu_fiber_start, rsp = top: 16-byte aligned before its call, as the ABI wants.
    std::uint32_t mxcsr = 0;
    std::uint16_t fpucw = 0;
    asm volatile("stmxcsr %0" : "=m"(mxcsr));
    asm volatile("fnstcw %0" : "=m"(fpucw));
    sp[0] = std::uint64_t{mxcsr} | (std::uint64_t{fpucw} << 32);
    sp[1] = 0;                                                            // r15
    sp[2] = 0;                                                            // r14
    sp[3] = 0;                                                            // r13
    sp[4] = reinterpret_cast<std::uint64_t>(entry);                       // r12
    sp[5] = 0;                                                            // rbx
    sp[6] = 0;                                                            // rbp
    sp[7] = reinterpret_cast<std::uint64_t>(&cudalings_emu_fiber_start);  // ret
    return sp;
}
#else
// Portable fallback: ucontext (slower: it saves the signal mask with a system call).
namespace {
struct Ctx {
    ucontext_t uc;
};
}  // namespace
void* fiber_prepare(Stack* s, void (*entry)()) {
    auto* c = new (s->base) Ctx;
    getcontext(&c->uc);
    c->uc.uc_stack.ss_sp = s->base + sizeof(Ctx) + 64;
    c->uc.uc_stack.ss_size = s->size - sizeof(Ctx) - 64;
    c->uc.uc_link = nullptr;
    makecontext(&c->uc, entry, 0);
    return c;
}
extern "C" void cudalings_emu_switch(void** save, void* to) {
    Ctx here;
    *save = &here;
    swapcontext(&here.uc, &static_cast<Ctx*>(to)->uc);
}
#endif

}  // namespace cudalings_emu
