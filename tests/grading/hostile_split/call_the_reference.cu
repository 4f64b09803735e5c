// expect: WRONG
// timed: yes
// in-process-timed: PASS
//
// Lets the reference do its work. When a step is timed on a GPU, the runner loads the lesson's
// reference solution into the process that runs the step. This file walks the objects loaded in
// its process (dl_iterate_phdr), reads each one's dynamic symbol table from its file (no dlsym:
// the policy screen refuses that), finds another object that defines vector_add, and calls it
// with its own arguments. Where none is found it computes nothing.
//
// Through the judge split the process is the learner's, which never holds the reference:
// nothing is found, the outputs stay unwritten, WRONG, timed or not (H100, 2026-12-06). Graded
// timed in the runner's own process it finds the reference and passes: the hole the split
// closes (H100, 2026-12-07; before then `grade` timed without any reference, its graded copy
// holding no solutions/, so there was nothing to find).
// Without timing (and under emulation) no reference is loaded: WRONG either way.
#include <elf.h>
#include <link.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "vector_add.cuh"

namespace {

using Entry = cudaError_t (*)(const float*, const float*, float*, size_t, cudaStream_t);

// The value of `name` in the dynamic symbol table of the ELF file at `path`, or 0.
std::uint64_t dynamic_symbol(const char* path, const char* name) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return 0;
    const std::vector<char> file((std::istreambuf_iterator<char>(in)),
                                 std::istreambuf_iterator<char>());
    if (file.size() < sizeof(Elf64_Ehdr)) return 0;
    const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(file.data());
    if (std::memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_shoff == 0 ||
        eh->e_shoff + std::uint64_t{eh->e_shnum} * sizeof(Elf64_Shdr) > file.size())
        return 0;
    const auto* sh = reinterpret_cast<const Elf64_Shdr*>(file.data() + eh->e_shoff);
    for (int i = 0; i < eh->e_shnum; ++i) {
        if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_link >= eh->e_shnum) continue;
        const Elf64_Shdr& strings = sh[sh[i].sh_link];
        if (sh[i].sh_offset + sh[i].sh_size > file.size() ||
            strings.sh_offset + strings.sh_size > file.size())
            continue;
        const auto* sym = reinterpret_cast<const Elf64_Sym*>(file.data() + sh[i].sh_offset);
        const std::size_t count = sh[i].sh_size / sizeof(Elf64_Sym);
        for (std::size_t k = 0; k < count; ++k) {
            if (sym[k].st_name >= strings.sh_size || sym[k].st_value == 0) continue;
            if (std::strcmp(file.data() + strings.sh_offset + sym[k].st_name, name) == 0)
                return sym[k].st_value;
        }
    }
    return 0;
}

struct Search {
    std::uintptr_t own = 0;  // an address inside this file's object
    Entry found = nullptr;
};

int visit(dl_phdr_info* info, size_t, void* data) {
    auto* s = static_cast<Search*>(data);
    if (!info->dlpi_name || !info->dlpi_name[0]) return 0;
    for (int i = 0; i < info->dlpi_phnum; ++i) {  // skip this file's own object
        const ElfW(Phdr)& p = info->dlpi_phdr[i];
        const std::uintptr_t start = info->dlpi_addr + p.p_vaddr;
        if (p.p_type == PT_LOAD && s->own >= start && s->own < start + p.p_memsz) return 0;
    }
    if (const std::uint64_t value = dynamic_symbol(info->dlpi_name, "vector_add")) {
        s->found = reinterpret_cast<Entry>(info->dlpi_addr + value);
        return 1;
    }
    return 0;
}

}  // namespace

extern "C" cudaError_t vector_add(const float* a, const float* b, float* c, size_t n,
                                  cudaStream_t stream) {
    Search s;
    s.own = reinterpret_cast<std::uintptr_t>(&visit);
    dl_iterate_phdr(visit, &s);
    if (s.found) return s.found(a, b, c, n, stream);
    return cudaSuccess;
}
