// Grading: the result of one submission in one round, as the JSON file `cudalings grade` writes.
//
//   {"format": "cudalings-grade-result", "version": 1, "tool": "cudalings 0.1.0",
//    "submission": "/abs/path", "name": "alice", "round": 1,
//    "course": {"root": ..., "fingerprint": ...}, "sandbox": "bubblewrap 0.8.0 (...)" | null,
//    "emulated": false, "seed": {"mode": "secret", "fingerprint": "..."},
//    "score": 2, "max_score": 3, "passed": 2, "failed": 1, "skipped": 0, "seconds": 12.5,
//    "results": [ <the step's report, as `check --json` writes it>
//                 + "points", "max_points", "visibility", "submitted", "output" ],
//    "error": "..."   (only when the grader itself failed on this submission)}
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "manifest.h"
#include "report.h"
#include "submission.h"

namespace cudalings::grading {

inline constexpr const char* kResultFormat = "cudalings-grade-result";
inline constexpr const char* kSummaryFormat = "cudalings-grade-summary";
inline constexpr int kFormatVersion = 1;

std::string tool_version();  // "cudalings 0.1.0"

// Replaces `from` with `to` in every text of the report that can name a file (the graded copy's
// paths become the submission's own: lessons/01_vector_add/...).
void rewrite_paths(StepReport& r, const std::string& from, const std::string& to);

// One step's entry: the report, what it is worth, when it is shown, the file it came from, and
// the text a student sees (the report as `check` prints it).
nlohmann::json step_result(const StepReport& r, const StepInfo& step, const StepFile& file);

// A step that could not be checked: no file, or a file refused before checking.
StepReport unchecked_step(const std::string& step_name, const StepInfo& step, const StepFile& file);

// Fills in a result's totals from its "results": score, max_score, passed, failed, skipped and
// whether any step was emulated.
void add_totals(nlohmann::json& result);

// The grader failed on this submission (an "error", or a step that is INTERNAL_ERROR): the
// result is not a fair grade and the batch says so.
bool grading_failed(const nlohmann::json& result);

// Every string of `value` (and every key) made valid UTF-8 (text.h's valid_utf8): a result is
// written whatever bytes a submission's path, its compiler or its program produced.
void make_valid_utf8(nlohmann::json& value);

// `value` as JSON text, never an exception: a string that is still not valid UTF-8 (a bug: texts
// are made valid where they are captured) is written with replacement characters, and
// `repaired`, when given, says so.
std::string dump_json(const nlohmann::json& value, int indent, bool* repaired = nullptr);

// A short line for progress output: "2/3 points: 01_one=PASS 02_grid=WRONG".
std::string one_line(const nlohmann::json& result);

}  // namespace cudalings::grading
