// A small, stable content hash (two 64-bit FNV-1a lanes) for cache keys. Not for security.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace cudalings {

class Hasher {
public:
    Hasher& add(std::string_view bytes);
    Hasher& add_file(const std::string& path);  // contents, or a marker when unreadable
    std::string hex() const;                    // 32 hex digits

private:
    std::uint64_t a_ = 0xcbf29ce484222325ull;
    std::uint64_t b_ = 0x84222325cbf29ce4ull;
};

std::string read_file(const std::string& path, bool* ok = nullptr);

}  // namespace cudalings
