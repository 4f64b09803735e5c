// The policy screen: rules a step's file must follow, checked on the *preprocessed* source, so
// that macros, token pasting and computed includes cannot hide what the file really uses.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudalings {

struct PolicyRules {
    // Libraries the step may not use: "cub", "thrust", "cublas".
    std::vector<std::string> forbidden_libraries;
    // Directories whose files may not be included (the course's solutions/, the checker).
    std::vector<std::string> forbidden_dirs;
    // Exceptions inside them: the course's own lesson headers kept in the build (build/pristine).
    std::vector<std::string> allowed_dirs;
    // Directories whose files' own text is screened for forbidden identifiers (the course:
    // the learner's file and any header beside it). Identifiers inside system headers are not
    // the learner's doing.
    std::vector<std::string> screened_dirs;
};

struct PolicyViolation {
    std::string rule;    // "no-cub", "no-dlopen", "no-solutions"...
    std::string detail;  // what matched, and where
};

// nvcc -E output in, the first violation out (nothing when the file follows the rules).
std::optional<PolicyViolation> screen_preprocessed(std::string_view preprocessed,
                                                   const PolicyRules& rules);

// When the preprocessor stopped at an #include it could not find (its stderr in `diagnostics`):
// the include is still a violation when the path it names would lie in a forbidden directory,
// as seen from the including file or any include directory. In a sandbox the course's solutions
// are not there to be found, and an attempt to include them is REJECTED all the same.
std::optional<PolicyViolation> screen_missing_includes(std::string_view diagnostics,
                                                       const std::vector<std::string>& include_dirs,
                                                       const PolicyRules& rules);

// The nvcc -E command for a file (same include directories as the build).
std::vector<std::string> preprocess_command(const std::string& nvcc, const std::string& source,
                                            const std::vector<std::string>& include_dirs,
                                            const std::string& output);

}  // namespace cudalings
