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

// A path under the system's temporary folder, unique to this process and call
// ("cudalings_<what>_<pid>_<n>"), with nothing there yet: parallel test runs never share one.
std::string temp_path(const std::string& what);
std::string fresh_state_dir();
Run cudalings(std::vector<std::string> args, const std::string& state = fresh_state_dir(),
              const std::string& cwd = CUDALINGS_SOURCE_DIR);

// A copy of the course (manifest, lessons/, and checks/ linked) where `fixture` replaces
// `step_file` (relative to lessons/, e.g. "01_vector_add/01_one_thread_per_element.cu"): the
// fixture's text, a patch applied (checker/core/tools/fixtures.h); any other file as it is.
std::string course_with(const std::string& fixture, const std::string& step_file);
// A fixture's text as the checker compiles it (a patch applied; throws when it does not apply),
// and that text written to `dest` (replacing the file or link there).
std::string fixture_text(const std::string& path);
void write_fixture(const std::string& fixture, const std::string& dest);
void remove_course(const std::string& root);

bool gpu_present();
std::string gpu_absent_reason();

// A bad-submission fixture's header lines (read by checker/core/tools/fixtures.h, the one reader):
//   // expect: VERDICT      // reason: substring      // step: lesson/step.cu
//   // flags: --sanitize    // needs: cpu|gpu          // timing: yes
//   // emulated: VERDICT  (the verdict under the CPU emulator, where it is asserted)
//   // emulated-detail: substring  (in the detail of the first failing case under emulation)
//   // emulated-advice: substring  (in the step's advice under emulation: the advice chosen by
//                                   what the emulator saw, checks' advice() keys)
struct FixtureSpec {
    std::string path;
    std::string name;  // file name without .cu
    std::string expect;
    std::string emulated;  // the verdict under the CPU emulator, when it differs or is asserted
    std::string reason;
    std::string emulated_detail;  // must appear in the first failing case's detail, emulated
    std::string emulated_advice;  // must appear in the step's advice, emulated
    std::string step;             // the step whose file the fixture replaces (relative to lessons/)
    std::vector<std::string> flags;
    bool needs_gpu = true;
    bool timing = false;
};
FixtureSpec read_fixture(const std::string& path);
std::vector<FixtureSpec> all_fixtures();

// A submission folder `parent/NAME` holding a course copy with the fixture in place (and the
// course's solutions/ and checker/ linked in, as a student's clone would have them).
std::string make_submission(const FixtureSpec& fixture, const std::string& parent);

// Grades every fixture of `fixtures` (all with the same step, flags and timing) twice in one
// `cudalings grade --repeat 2` batch and returns, per fixture, a message for each mismatch.
std::vector<std::string> grade_fixtures(const std::vector<FixtureSpec>& fixtures);

// The same without Catch2 (safe to call from several threads at once), with more `grade`
// options: `no_sandbox` says why nothing was graded (grade's exit code 4), else `problems` holds
// the mismatches; `seconds` is the batch's wall time.
struct FixtureBatch {
    std::string no_sandbox;
    std::vector<std::string> problems;
    double seconds = 0;
};
FixtureBatch grade_fixture_batch(const std::vector<FixtureSpec>& fixtures,
                                 const std::vector<std::string>& extra_args = {});

}  // namespace test_support
