// Grading one submission in one round: find its step files, make the graded copy (its step
// files and the instructor's headers), check every step against the instructor's manifest with
// the round's seeds, and return the result (result.h).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "check.h"
#include "course.h"
#include "manifest.h"
#include "seeds.h"

namespace cudalings::grading {

struct GradeContext {
    CoursePaths course;  // the instructor's course; state_dir is the grader's own (caches)
    Manifest manifest;   // the instructor's
    std::vector<StepRef> steps;
    CheckOptions options;  // limits, timing, emulation, the sandbox
    SeedSource seeds;
    std::string work_dir;  // where graded copies are made (and removed)
    std::string out_dir;   // where results are written: no submission may lie in it
    std::string sandbox;   // the sandbox's description, "" when grading without one
    std::string course_fingerprint;
};

nlohmann::json grade_submission(const GradeContext& context, const std::string& submission,
                                const std::string& name, int round);

}  // namespace cudalings::grading
