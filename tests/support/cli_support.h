// Running the real `cudalings` binary from tests: a private state directory per run, a
// throw-away course copy with a fixture in place of a step, and a GPU probe.
#pragma once

#include <string>
#include <vector>

namespace test_support {

struct Run {
    int code = -1;
    std::string out, err;
};

std::string fresh_state_dir();
Run cudalings(std::vector<std::string> args, const std::string& state = fresh_state_dir(),
              const std::string& cwd = CUDALINGS_SOURCE_DIR);

// A copy of the course (manifest and lessons/) where `fixture` replaces `step_file`
// (relative to lessons/, e.g. "01_vector_add/01_one_thread_per_element.cu").
std::string course_with(const std::string& fixture, const std::string& step_file);
void remove_course(const std::string& root);

bool gpu_present();
std::string gpu_absent_reason();

// The "// expect: VERDICT" and "// step: lesson/step" lines of a fixture file.
struct FixtureSpec {
    std::string expect;
    std::string step;  // the step whose file the fixture replaces (relative to lessons/)
};
FixtureSpec read_fixture(const std::string& path);

}  // namespace test_support
