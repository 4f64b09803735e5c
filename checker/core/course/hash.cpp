#include "hash.h"

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>

namespace cudalings {

Hasher& Hasher::add(std::string_view bytes) {
    for (unsigned char c : bytes) {
        a_ = (a_ ^ c) * 0x100000001b3ull;
        b_ = (b_ ^ static_cast<unsigned char>(c + 0x5b)) * 0x100000001b3ull;
    }
    // A separator, so ("ab","c") and ("a","bc") differ.
    a_ = (a_ ^ 0xff) * 0x100000001b3ull;
    b_ = (b_ ^ bytes.size()) * 0x100000001b3ull;
    return *this;
}

Hasher& Hasher::add_file(const std::string& path) {
    bool ok = false;
    std::string contents = read_file(path, &ok);
    return add(ok ? contents : "<unreadable:" + path + ">");
}

std::string Hasher::hex() const {
    char text[33];
    std::snprintf(text, sizeof text, "%016llx%016llx", static_cast<unsigned long long>(a_),
                  static_cast<unsigned long long>(b_));
    return text;
}

namespace {
inline std::uint64_t rotl(std::uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }
inline std::uint64_t load64(const unsigned char* p) {
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}
}  // namespace

std::uint64_t siphash24(const unsigned char key[16], std::string_view message) {
    std::uint64_t k0 = load64(key), k1 = load64(key + 8);
    std::uint64_t v0 = 0x736f6d6570736575ull ^ k0, v1 = 0x646f72616e646f6dull ^ k1;
    std::uint64_t v2 = 0x6c7967656e657261ull ^ k0, v3 = 0x7465646279746573ull ^ k1;
    auto round = [&] {
        v0 += v1;
        v1 = rotl(v1, 13);
        v1 ^= v0;
        v0 = rotl(v0, 32);
        v2 += v3;
        v3 = rotl(v3, 16);
        v3 ^= v2;
        v0 += v3;
        v3 = rotl(v3, 21);
        v3 ^= v0;
        v2 += v1;
        v1 = rotl(v1, 17);
        v1 ^= v2;
        v2 = rotl(v2, 32);
    };
    const auto* data = reinterpret_cast<const unsigned char*>(message.data());
    std::size_t len = message.size(), whole = len - len % 8;
    for (std::size_t i = 0; i < whole; i += 8) {
        std::uint64_t m = load64(data + i);
        v3 ^= m;
        round();
        round();
        v0 ^= m;
    }
    std::uint64_t b = static_cast<std::uint64_t>(len) << 56;
    for (std::size_t i = 0; i < len % 8; ++i)
        b |= static_cast<std::uint64_t>(data[whole + i]) << (8 * i);
    v3 ^= b;
    round();
    round();
    v0 ^= b;
    v2 ^= 0xff;
    round();
    round();
    round();
    round();
    return v0 ^ v1 ^ v2 ^ v3;
}

std::string line_tag(const unsigned char key[16], std::uint64_t sequence, std::string_view line) {
    std::string message = std::to_string(sequence) + "\n";
    message.append(line);
    char text[17];
    std::snprintf(text, sizeof text, "%016llx",
                  static_cast<unsigned long long>(siphash24(key, message)));
    return text;
}

void random_key(unsigned char key[16]) {
    std::random_device rd;
    for (int i = 0; i < 16; i += 4) {
        unsigned v = rd();
        for (int j = 0; j < 4; ++j) key[i + j] = static_cast<unsigned char>(v >> (8 * j));
    }
}

std::string key_to_hex(const unsigned char key[16]) {
    char text[33];
    for (int i = 0; i < 16; ++i) std::snprintf(text + 2 * i, 3, "%02x", key[i]);
    return text;
}

bool key_from_hex(std::string_view hex, unsigned char key[16]) {
    if (hex.size() < 32) return false;
    for (int i = 0; i < 16; ++i) {
        unsigned v = 0;
        for (int j = 0; j < 2; ++j) {
            char c = hex[2 * i + j];
            v <<= 4;
            if (c >= '0' && c <= '9')
                v |= static_cast<unsigned>(c - '0');
            else if (c >= 'a' && c <= 'f')
                v |= static_cast<unsigned>(c - 'a' + 10);
            else
                return false;
        }
        key[i] = static_cast<unsigned char>(v);
    }
    return true;
}

std::string read_file(const std::string& path, bool* ok) {
    std::ifstream in(path, std::ios::binary);
    if (ok) *ok = static_cast<bool>(in);
    if (!in) return {};
    std::ostringstream contents;
    contents << in.rdbuf();
    return contents.str();
}

std::string file_identity(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return path + ":missing";
    return path + ":" + std::to_string(st.st_size) + ":" + std::to_string(st.st_mtime);
}

}  // namespace cudalings
