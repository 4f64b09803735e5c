#include "hash.h"

#include <cstdio>
#include <fstream>
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

std::string read_file(const std::string& path, bool* ok) {
    std::ifstream in(path, std::ios::binary);
    if (ok) *ok = static_cast<bool>(in);
    if (!in) return {};
    std::ostringstream contents;
    contents << in.rdbuf();
    return contents.str();
}

}  // namespace cudalings
