// Grading: what is taken from a submission, and the graded copy of the course it is checked in.
//
// The instructor's contract wins everywhere a submission is judged: the manifest, the lesson
// headers, the specs and the references come from the instructor's copy; only step files come
// from the student. A submission is checked in a fresh "graded copy": the student's step files
// and the instructor's headers, nothing else (no course.json, no solutions/, no other file of the
// submission).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "manifest.h"

namespace cudalings::grading {

// Names of result files, one per submission path (absolute, in the batch's order): the path
// relative to the submissions' common parent, in file-name-safe characters ("alice",
// "section1_alice"). A name that would collide with another, or with a file the batch writes
// itself (summary, results...), gets a short hash of its path. The same list always gives the
// same names, whichever shard of it is graded.
std::vector<std::string> result_names(const std::vector<std::string>& submissions);

// A step's file in a submission. Three layouts are accepted, in this order: a copy of the
// course (lessons/LESSON/STEP.cu), lesson folders (LESSON/STEP.cu), and loose files (STEP.cu,
// what a student drags into Gradescope).
struct StepFile {
    enum class Status { Found, Missing, Refused };
    Status status = Status::Missing;
    std::string path;      // the file in the submission (Found)
    std::string relative;  // where it is, relative to the submission
    std::string why;       // Missing / Refused: a sentence for the student
};
inline constexpr std::size_t kMaxStepFileBytes = std::size_t{1} << 20;
// A file that is a symbolic link (or sits in a linked folder), not a regular file, or larger
// than kMaxStepFileBytes is refused: a link could point at anything the grader can read.
StepFile locate_step_file(const std::string& submission, const LessonInfo& lesson,
                          const StepInfo& step);

// A folder the submission must not be, nor lie in: the instructor's course, the output
// folder... `label` names it for the student ("the course being graded"), never its path.
struct GuardedDir {
    std::string path;
    std::string label;
};
// Why the submission folder itself cannot be graded, or "" when it can: it is a symbolic link
// (a link to the course's solutions/ would be graded as the student's work), not a folder, or,
// with every link on its path resolved, one of `guarded` or inside one. A sentence for the
// student: it names no path of the grader's.
std::string refuse_submission_folder(const std::string& submission,
                                     const std::vector<GuardedDir>& guarded);

// Makes the graded copy under `root` (which must not exist yet): lessons/common/ and, for each
// lesson of `steps`, lessons/LESSON/ with the instructor's headers (.cuh, .h, .hpp) copied from
// `instructor_root`, then the submission's found step files. False, with `error`, when the copy
// cannot be made (the grader's problem, not the student's).
bool stage_course(const std::string& instructor_root, const std::string& root, const Manifest& m,
                  const std::vector<StepRef>& steps, const std::vector<StepFile>& files,
                  std::string& error);

// A fingerprint of the instructor's contract: course.json and every lesson header.
std::string course_fingerprint(const std::string& instructor_root);

}  // namespace cudalings::grading
