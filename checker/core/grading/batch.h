// Grading: the files of a whole batch, written by `cudalings grade` once every submission is
// graded and by `cudalings grade merge` from the shards of a class.
//
//   summary.json         the batch: its fingerprint, the shard, and per result its submission,
//                        name, round, file, score and verdicts (how to find any result)
//   results.json         Gradescope's file, when the batch is one submission graded once
//   junit.xml            with --format junit
//   grades.csv           with --format csv
//   class-summary.html   always: pass rates and times per step (SVG), every submission
//   class-summary.csv    always: a row per submission and step
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace cudalings::grading {

// One graded submission of the batch: its result and the file it is in (relative to the
// output folder).
struct BatchEntry {
    std::string file;
    nlohmann::json result;
};

// The summary's line for one entry.
nlohmann::json summary_entry(const BatchEntry& entry);

// Writes the batch files (not the per-submission results, already written) into `out`;
// `summary` is summary.json's object, to which the entries are added. False, with `error`, when a
// file cannot be written.
bool write_batch_files(const std::string& out, nlohmann::json summary,
                       const std::vector<BatchEntry>& entries,
                       const std::vector<std::string>& formats, std::string& error);

}  // namespace cudalings::grading
