// What the grading tests share: running `cudalings grade` with its own environment, sample
// submissions, temporary folders, the sandbox's availability, JSON Schema validation, and a
// look at the process table.
#pragma once

#include <sys/types.h>
#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

#include "cli_support.h"

namespace grading_test {

// A temporary folder, removed with everything in it at the end of the scope.
class TempDir {
  public:
    explicit TempDir(const std::string& tag);
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::string& path() const { return path_; }
    std::string operator/(const std::string& name) const { return path_ + "/" + name; }

  private:
    std::string path_;
};

// Whether bubblewrap makes a sandbox here; `why` when it does not.
bool sandbox_works(std::string* why = nullptr);
// {} where the sandbox works, {"--no-sandbox"} where it does not (tests of grading that are not
// about the sandbox still run there).
std::vector<std::string> sandbox_or_not();

// `cudalings ARGS` with these variables added to the environment, from `cwd`.
test_support::Run run_cudalings(std::vector<std::string> args,
                                const std::map<std::string, std::string>& env = {},
                                const std::string& cwd = CUDALINGS_SOURCE_DIR);

// A submission folder `parent/name`:
//   untouched  a course copy whose lessons/01_vector_add/ are the skeletons
//   solved     the same with the solutions in place
//   broken     one loose file, 01_one_thread_per_element.cu, that does not compile
//   empty      nothing at all
std::string sample_submission(const std::string& parent, const std::string& name,
                              const std::string& kind);

nlohmann::json read_json(const std::string& path);
std::string read_text(const std::string& path);

// Validates `file` against `schema` with python3-jsonschema. 0 valid, 1 invalid (errors in
// `message`), 77 the validator is not installed.
int validate_json(const std::string& schema, const std::string& file, std::string* message);

// Processes whose name (/proc/PID/comm) is `name`.
std::vector<pid_t> processes_named(const std::string& name);

// The verdict of each step of a result file: {"01_vector_add/01_...": "PASS"}.
std::map<std::string, std::string> verdicts(const nlohmann::json& result);

}  // namespace grading_test
