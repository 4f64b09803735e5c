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

// SipHash-2-4 of `message` under a 128-bit key: authenticates the runner's result lines, so
// that a line printed by the learner's code (which runs in the runner process, but never sees
// the key: it is read and its file descriptor closed before the learner's library is loaded)
// is told apart from the runner's own.
std::uint64_t siphash24(const unsigned char key[16], std::string_view message);

// A line's tag: 16 hex digits of siphash24(key, decimal sequence number + "\n" + line).
std::string line_tag(const unsigned char key[16], std::uint64_t sequence, std::string_view line);

// A fresh random 128-bit key, and its 32-hex-digit text form (and back).
void random_key(unsigned char key[16]);
std::string key_to_hex(const unsigned char key[16]);
bool key_from_hex(std::string_view hex, unsigned char key[16]);

// A file's identity for cache keys without reading it: its path, size and modification time.
std::string file_identity(const std::string& path);

}  // namespace cudalings
