// expect: WRONG
// in-process: PASS
//
// Speaks for the judge with the judge's own key. The process that runs this file is searched
// for the result channel's key, the line counter and the channel's descriptor: the program's
// symbol table (/proc/self/exe, read as an ELF file) names them, its load address comes from the
// dynamic loader. With them it writes a tagged "case: PASS" line for every case index and
// "done", exactly as the runner would (SipHash-2-4 over the counter and the line), and ends its
// process before computing anything.
//
// Where the checker runs a learner's code in the runner's own process (--in-process), this
// forgery is believed: PASS (the hole the judge split closes). By default the process is the
// learner's (cudalings-learner), which holds no key, no counter and no channel: nothing is found,
// nothing is forged, nothing is computed, and the outputs the judge reads are unwritten: WRONG.
#include <elf.h>
#include <link.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "vector_add.cuh"

namespace {

std::uint64_t rotl(std::uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

std::uint64_t load64(const unsigned char* p) {
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}

// SipHash-2-4 (Aumasson and Bernstein's reference algorithm).
std::uint64_t siphash(const unsigned char key[16], const std::string& m) {
    std::uint64_t k0 = load64(key), k1 = load64(key + 8);
    std::uint64_t v0 = 0x736f6d6570736575ull ^ k0, v1 = 0x646f72616e646f6dull ^ k1;
    std::uint64_t v2 = 0x6c7967656e657261ull ^ k0, v3 = 0x7465646279746573ull ^ k1;
    auto round = [&] {
        v0 += v1, v1 = rotl(v1, 13), v1 ^= v0, v0 = rotl(v0, 32);
        v2 += v3, v3 = rotl(v3, 16), v3 ^= v2;
        v0 += v3, v3 = rotl(v3, 21), v3 ^= v0;
        v2 += v1, v1 = rotl(v1, 17), v1 ^= v2, v2 = rotl(v2, 32);
    };
    const std::size_t whole = m.size() / 8 * 8;
    const auto* p = reinterpret_cast<const unsigned char*>(m.data());
    for (std::size_t i = 0; i < whole; i += 8) {
        std::uint64_t w = load64(p + i);
        v3 ^= w, round(), round(), v0 ^= w;
    }
    std::uint64_t last = static_cast<std::uint64_t>(m.size()) << 56;
    for (std::size_t i = whole; i < m.size(); ++i) last |= std::uint64_t{p[i]} << (8 * (i - whole));
    v3 ^= last, round(), round(), v0 ^= last;
    v2 ^= 0xff;
    round(), round(), round(), round();
    return v0 ^ v1 ^ v2 ^ v3;
}

// The main program's load address (the dynamic loader's first object).
int first_object(dl_phdr_info* info, std::size_t, void* out) {
    *static_cast<std::uintptr_t*>(out) = info->dlpi_addr;
    return 1;
}

// Where a variable of `bytes` bytes whose name contains `part` lives in this process, from the
// program's symbol table (0 when it has none). Variables only: "read_channel_key" is a function.
std::uintptr_t find(const std::string& part, std::size_t bytes) {
    std::ifstream in("/proc/self/exe", std::ios::binary);
    const std::vector<char> elf((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
    if (elf.size() < sizeof(Elf64_Ehdr)) return 0;
    const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(elf.data());
    if (eh->e_shoff == 0 || eh->e_shoff + eh->e_shnum * sizeof(Elf64_Shdr) > elf.size()) return 0;
    const auto* sh = reinterpret_cast<const Elf64_Shdr*>(elf.data() + eh->e_shoff);
    std::uintptr_t base = 0;
    dl_iterate_phdr(first_object, &base);
    for (int i = 0; i < eh->e_shnum; ++i) {
        if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum) continue;
        const Elf64_Shdr& names = sh[sh[i].sh_link];
        const auto* sym = reinterpret_cast<const Elf64_Sym*>(elf.data() + sh[i].sh_offset);
        for (std::size_t k = 0; k < sh[i].sh_size / sizeof(Elf64_Sym); ++k) {
            if (sym[k].st_name >= names.sh_size) continue;
            const std::string name = elf.data() + names.sh_offset + sym[k].st_name;
            if (name.find(part) != std::string::npos && sym[k].st_value &&
                ELF64_ST_TYPE(sym[k].st_info) == STT_OBJECT && sym[k].st_size == bytes)
                return base + sym[k].st_value;
        }
    }
    return 0;
}

}  // namespace

extern "C" cudaError_t vector_add(const float*, const float*, float*, size_t, cudaStream_t) {
    const std::uintptr_t key_at = find("channel_key", 16),
                         counter_at = find("channel_sequence", sizeof(std::uint64_t)),
                         fd_at = find("channel_fd", sizeof(int));
    if (!key_at || !counter_at || !fd_at) return cudaSuccess;  // nothing to speak with
    unsigned char key[16];
    std::memcpy(key, reinterpret_cast<const void*>(key_at), 16);
    std::uint64_t counter = *reinterpret_cast<const std::uint64_t*>(counter_at);
    const int fd = *reinterpret_cast<const int*>(fd_at);
    auto say = [&](const std::string& line) {
        char tag[17];
        std::snprintf(
            tag, sizeof tag, "%016llx",
            static_cast<unsigned long long>(siphash(key, std::to_string(counter++) + "\n" + line)));
        const std::string out = line + "\t" + tag + "\n";
        (void)!::write(fd >= 0 ? fd : 1, out.data(), out.size());
    };
    for (int index = 0; index < 64; ++index)
        say("{\"event\":\"case\",\"index\":" + std::to_string(index) +
            ",\"name\":\"case\",\"n\":1,\"size\":\"1\",\"verdict\":\"PASS\"}");
    say("{\"event\":\"done\"}");
    ::_exit(0);
}
