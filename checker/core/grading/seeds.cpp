#include "seeds.h"

#include <cstdio>
#include <string>

#include "hash.h"

namespace cudalings::grading {

std::string SeedSource::mode_name() const {
    switch (mode) {
        case Mode::Given:
            return "given";
        case Mode::Secret:
            return "secret";
        default:
            return "fresh";
    }
}

bool parse_secret(std::string_view text, unsigned char key[16]) {
    auto space = [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; };
    while (!text.empty() && space(text.front())) text.remove_prefix(1);
    while (!text.empty() && space(text.back())) text.remove_suffix(1);
    return text.size() == 32 && key_from_hex(text, key);
}

std::string secret_fingerprint(const unsigned char key[16]) {
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx",
                  static_cast<unsigned long long>(siphash24(key, "cudalings secret fingerprint")));
    return hex;
}

SeedSource secret_source(const unsigned char key[16]) {
    SeedSource s;
    s.mode = SeedSource::Mode::Secret;
    for (int i = 0; i < 16; ++i) s.key[i] = key[i];
    s.fingerprint = secret_fingerprint(key);
    return s;
}

std::uint64_t derived_seed(const unsigned char key[16], std::string_view step, int round,
                           std::string_view file_bytes) {
    // Length-prefixed fields: no two (step, round, file) give the same message.
    std::string message = "cudalings seed v1\n";
    message += std::to_string(step.size()) + ":" + std::string(step) + "\n";
    message += std::to_string(round) + "\n";
    message += std::to_string(file_bytes.size()) + ":";
    message.append(file_bytes.data(), file_bytes.size());
    return siphash24(key, message);
}

std::string new_secret() {
    unsigned char key[16];
    random_key(key);
    return key_to_hex(key);
}

}  // namespace cudalings::grading
