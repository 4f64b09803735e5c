// Where things are: the course root (found by walking up from a directory, as git does),
// the state directory (progress, caches), and the tool's own directory (runner, references).
#pragma once

#include <optional>
#include <string>

#include "manifest.h"

namespace cudalings {

inline constexpr const char* kManifestName = "course.json";

// The nearest directory at or above `start` that holds course.json.
std::optional<std::string> find_course_root(const std::string& start);

struct CoursePaths {
    std::string root;       // holds course.json, lessons/, solutions/
    std::string state_dir;  // progress and caches; $CUDALINGS_STATE_DIR or <root>/.cudalings
    std::string tool_dir;   // the directory of the cudalings binary: runner and refs/ live here

    std::string manifest() const { return root + "/" + kManifestName; }
    // Where the lesson headers (the exercise contract) are taken from: the course itself, or,
    // when grading submissions, the instructor's trusted copy.
    std::string include_root;
    std::string lesson_dir(const LessonInfo& l) const { return lessons_root() + l.id; }
    std::string common_dir() const { return lessons_root() + "common"; }  // shared headers
    std::string lessons_root() const {
        return (include_root.empty() ? root : include_root) + "/lessons/";
    }
    std::string step_file(const LessonInfo& l, const StepInfo& s, bool solution) const;
    // Where solutions/ is when not beside the lessons: a graded copy's references (the timing
    // baseline) are the instructor's.
    std::string solutions_root;
    // The lesson's checks (lesson.json, checks.cu, baselines.cu, fixtures/): the course's own,
    // or, when grading submissions, the instructor's copy.
    std::string checks_root;  // where checks/ is when not beside the lessons (a graded copy)
    std::string checks_dir(const LessonInfo& l) const {
        return (!checks_root.empty()   ? checks_root
                : include_root.empty() ? root
                                       : include_root) +
               "/checks/" + l.id;
    }
    std::string runner() const { return tool_dir + "/cudalings-runner"; }
    // The lesson kit's headers (checker/kit), which every lesson's checks include.
    std::string kit_dir() const;
};

// Progress: which steps passed, and with which file contents.
class Progress {
  public:
    explicit Progress(std::string file);
    bool passed(const std::string& step) const;
    // The content hash of the file when it passed ("" when it has not passed).
    std::string passed_hash(const std::string& step) const;
    void mark_passed(const std::string& step, const std::string& content_hash);
    void clear(const std::string& step);
    bool save() const;  // atomic (write + rename); false when the directory is not writable

  private:
    std::string file_;
    std::vector<std::pair<std::string, std::string>> passed_;
};

// Where the learner goes next. A step marked needs_gpu cannot be finished without a GPU (the
// emulator cannot run it), so there it is passed over, as a passed step is: it never holds up
// the course.
inline bool finishable_here(const StepInfo& step, bool gpu) { return gpu || !step.needs_gpu; }
// The first step that is not passed and can be finished here (`gpu`: a GPU is present), in
// course order from the start, or, given `after`, its own lesson first: the steps after it, then
// those before it, then the next lessons, round to the course's start. After 09/2 comes 09/3
// (whatever lesson 01 holds), and after 09/4 an unfinished 09/1 before 10/1.
std::optional<StepRef> next_unfinished(const Manifest& m, const Progress& p, bool gpu,
                                       std::optional<StepRef> after = std::nullopt);
// The step the learner is on: `current` (the step `watch` or the last `check` of one step was
// on) while it is unfinished and can be finished here, else the next unfinished after it; the
// first unfinished when there is no current step.
std::optional<StepRef> step_in_hand(const Manifest& m, const Progress& p, bool gpu,
                                    std::optional<StepRef> current);
// A step named exactly as step_name() spells it, if the manifest has it.
std::optional<StepRef> find_step(const Manifest& m, const std::string& name);

// mkdir -p; true when the directory exists afterwards.
bool make_dirs(const std::string& path);

// Write a file atomically (temporary file in the same directory, then rename).
bool write_file_atomic(const std::string& path, const std::string& contents);

}  // namespace cudalings
