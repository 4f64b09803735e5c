// What `cudalings dev update` writes, and what `dev check` compares with it: the parts of the
// course's Markdown that are generated, never edited by hand.
//
// A generated part is a *region* between two HTML comments (invisible once rendered), each on a
// line of its own:
//
//   <!-- cudalings:staircase gpu="NVIDIA H100 80GB HBM3" results="docs/results/h100-....json" -->
//   ... generated ...
//   <!-- /cudalings:staircase -->
//
// Kinds of region:
//   staircase     in a lesson's README: the lesson's staircase table from a stored results file
//                 (attributes: gpu, the GPU model the table is from; results, the stored file,
//                 relative to the course root; optional figures="time,copy,previous,against"
//                 (which figures each cell shows, in that order; the default is the first three)
//                 and against="ROW" (a row's label: "against" is that row's time over each row's,
//                 in the same column, as a percentage))
//   course-table  in the root README: every lesson of course.json, linked, with its summary
//                 (checks/NN_topic/lesson.json's "summary": {"write": ..., "teaches": ...})
//
// A stored results file (docs/results/*.json) is what `cudalings --json check --all
// --solutions` printed on a GPU, trimmed to what the regions need: the run (GPU, date, commit,
// copy rate) and every staircase's rows and cells, without their derived figures (report.h's
// to_json computes them again, the same way the checker does).
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "manifest.h"
#include "report.h"

namespace cudalings {

struct Region {
    std::string kind;                                             // "staircase"
    std::vector<std::pair<std::string, std::string>> attributes;  // in the marker's order
    int line = 0;                                         // the opening marker's line, from 1
    std::size_t begin = 0;                                // the opening marker's first byte
    std::size_t body_begin = 0;                           // after the opening marker's line
    std::size_t body_end = 0;                             // the closing marker's first byte
    std::size_t end = 0;                                  // after the closing marker's line
    std::string attribute(const std::string& key) const;  // "" when absent
    void set(const std::string& key, const std::string& value);
};

// Every region of `text`, in order. False, with `error` (naming the line), when a marker is
// malformed, unclosed, closes another kind or lies inside another region.
bool find_regions(const std::string& text, std::vector<Region>& regions, std::string& error);
// `<!-- cudalings:KIND key="value" ... -->`
std::string opening_marker(const Region& r);

struct StoredResults {
    RunRecord run;
    std::vector<Staircase> staircases;
    const Staircase* find(const std::string& lesson) const;
};
nlohmann::json to_json(const StoredResults& s);  // the stored form (docs/results/*.json)
// to_json(s) as the file is written: one line per staircase row (small, and diffs by row).
std::string stored_text(const StoredResults& s);
// A results file: a stored one, or `check --json`'s output (then `date` stands in for a
// missing run record's date). False, with `error`, when it is neither or cannot be used: no
// GPU, no staircase, files that are not the reference solutions.
bool read_results(const nlohmann::json& j, const std::string& date, StoredResults& out,
                  bool& was_stored, std::string& error);
bool load_results(const std::string& path, const std::string& date, StoredResults& out,
                  bool& was_stored, std::string& error);
// "h100-80gb-hbm3-2026-12-05": a stored file's default name (without .json).
std::string results_name(const RunRecord& run);

// A staircase region's body from `stored` (the region's attributes choose the figures);
// `link` is the stored file's path relative to the Markdown file. False, with `error`, when the
// attributes ask for something the staircase does not have.
bool render_staircase_region(const Region& region, const Staircase& staircase, const RunRecord& run,
                             const std::string& results, const std::string& link, std::string& body,
                             std::string& error);
// The course table region's body.
std::string render_course_table(const Manifest& m);

struct UpdateOptions {
    std::string results;     // a results file to take staircases from ("" for none)
    std::string date;        // its date, for a file without a run record
    std::string store;       // where its trimmed form goes ("": docs/results/<results_name>.json)
    bool other_gpu = false;  // replace regions that name another GPU model
    std::string cmake;       // writes the pristine record (cmake/CudalingsPristineRecord.cmake)
};
struct UpdateOutcome {
    std::string error;                 // nothing was written when set
    std::vector<std::string> written;  // course-relative paths
    std::vector<std::string> notes;
};
// Rewrites every generated part of the course at `root`: the pristine record (with `cmake`),
// the root README's course table, and every staircase region from the stored file it names.
// With `options.results` (stored first, trimmed, when it is a check's output) the staircase
// regions of its lessons that name its GPU model, or none, take it instead; a lesson whose
// regions all name another model is refused unless `other_gpu`, which replaces them all.
// Nothing is written when anything is refused.
UpdateOutcome dev_update(const std::string& root, const Manifest& m, const UpdateOptions& options);

// What `dev check` says of the generated parts: (file, message) for every region that differs
// from what dev_update would write, or that cannot be generated; with `cmake` (a CMake program)
// also the pristine record where the course has one and it does not match lessons/.
std::vector<std::pair<std::string, std::string>> stale_generated(const std::string& root,
                                                                 const Manifest& m,
                                                                 const std::string& cmake = "");

}  // namespace cudalings
