// Grading: where each check's seed comes from.
//
//   fresh   (default) a fresh random seed per submission, recorded in its result;
//   given   `--seed HEX`: that seed for every submission (replaying one report);
//   secret  a 128-bit key the instructor keeps (CUDALINGS_SEED, or a file): each step's seed is
//           SipHash-2-4 under the key of the step, the round and the submitted file's bytes.
//
// With a secret, every submission runs the same case table (sizes, edge cases, distributions),
// and the random values are a function of the key and the file: the same file always gets the
// same inputs (a regrade, or a second student with the same file, gets the same verdict), the
// instructor can replay any result with the key, and nobody without the key can tell which
// inputs a file will get; any edit to the file changes them all, so outputs copied from a
// failure report are worth nothing in the next submission. The key itself is never printed or
// written: results record only its fingerprint (a SipHash of a fixed message under the key), so
// an instructor can tell which key graded a result.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cudalings::grading {

struct SeedSource {
    enum class Mode { Fresh, Given, Secret };
    Mode mode = Mode::Fresh;
    std::uint64_t given = 0;
    unsigned char key[16] = {};
    std::string fingerprint;  // Secret: 16 hex digits

    std::string mode_name() const;  // "fresh", "given", "secret"
};

// The key from its text: 32 hexadecimal digits, surrounding white space ignored.
bool parse_secret(std::string_view text, unsigned char key[16]);
SeedSource secret_source(const unsigned char key[16]);
std::string secret_fingerprint(const unsigned char key[16]);

// The seed of one step of one submission in one round, under a secret.
std::uint64_t derived_seed(const unsigned char key[16], std::string_view step, int round,
                           std::string_view file_bytes);

// A fresh key as text (32 hex digits), for `cudalings grade new-secret`.
std::string new_secret();

}  // namespace cudalings::grading
