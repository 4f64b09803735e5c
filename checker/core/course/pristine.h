// The course's own lesson files as shipped (build/pristine, made at configure time by
// cmake/CudalingsPristine.cmake from the recorded hashes): what the references and the checks
// are built against, and what `cudalings reset` restores.
#pragma once

#include <string>
#include <vector>

#include "manifest.h"

namespace cudalings {

// `tool_dir`/pristine when it is a course (course.json and lessons/), else "".
std::string pristine_root(const std::string& tool_dir);
// Whether the pristine copy has a folder for every lesson of `m` (a lesson added since the
// build was configured has none until the next build).
bool pristine_covers(const std::string& pristine, const Manifest& m);
// Lesson files whose course version could not be verified when the copy was made
// (pristine/unverified.txt), as paths under lessons/.
std::vector<std::string> unverified_lesson_files(const std::string& pristine);

// A lesson file (sources and headers under lessons/) that differs from the course's version.
struct ChangedFile {
    std::string path;  // under lessons/: "01_vector_add/vector_add.cuh"
    bool missing = false;
    bool is_step = false;  // a step file (NN_name.cu), the learner's to edit
};
std::vector<ChangedFile> changed_lesson_files(const std::string& root, const std::string& pristine);

// Puts the course's version of lessons/`path` back in `root`, after copying the current file
// to `backup_dir` (named with the time); `backup` gets the copy's path ("" when there was no
// file). False, with `error`, when it cannot.
bool restore_lesson_file(const std::string& root, const std::string& pristine,
                         const std::string& path, const std::string& backup_dir,
                         std::string& backup, std::string& error);

}  // namespace cudalings
