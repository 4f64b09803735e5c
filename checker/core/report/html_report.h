// `cudalings report`: one self-contained HTML page (inline CSS and SVG, no script, nothing
// fetched) with the learner's progress and, for every lesson with timed steps, its staircase:
// each step's time and share of the GPU's copy bandwidth, the reference solution's beside it,
// and the library baselines of the lesson's last full check; and, for every step checked with
// --explain, the emulator's access pictures (one warp per access line, access_picture.h).
//
// The page is drawn from a small model (ReportModel) that is read from the state directory's
// records (history.h) by one function, so a change of the report's JSON touches only that.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "access_picture.h"
#include "course.h"
#include "goals.h"
#include "manifest.h"

namespace cudalings {

struct ChartRow {
    std::string label;  // "03_float4" or "cub::DeviceReduce::Sum"
    std::string title;
    bool baseline = false;
    double median_us = 0, percent_of_copy = 0, gbps = 0;
    // The reference solution's figures for a step (0 when it was not timed).
    double reference_us = 0, reference_percent = 0;
    // A compute-bound problem's (kit::Traffic::fp32): FLOP/s, the share of the FP32 rate, FLOP per
    // minimal byte; 0 for a memory-bound one.
    double gflops = 0, percent_of_fp32 = 0, reference_percent_fp32 = 0, intensity = 0;
    std::string note;  // "n = 2^24" where the row was timed at another size
};

struct LessonChart {
    std::string lesson, title;
    double copy_gbps = 0;
    double fp32_gflops = 0;  // the FP32 rate measured where the lesson's problem counts its work
    // Whether the bars are shares of the FP32 rate (a compute-bound lesson), not of the copy rate.
    bool compute_bound() const;
    std::string size;  // "2^28"
    std::vector<ChartRow> rows;
};

struct StepStatus {
    std::string id, title;
    std::string status;             // "done", "failed", "pending"
    std::string verdict;            // the last check's, or ""
    std::vector<GoalResult> goals;  // its performance goals, from its last emulated check
};

struct LessonStatus {
    std::string id, title;
    std::vector<StepStatus> steps;
};

// The access pictures of a step's last explained check.
struct StepPictures {
    std::string lesson, step;  // "01_vector_add", "03_float4"
    std::vector<AccessPicture> pictures;
};

struct ReportModel {
    std::string heading = "your progress";
    bool progress = true;   // the learner's progress (false: a stored run's charts only)
    std::string generated;  // when, in words
    std::string gpu;        // the GPU of the timings, or ""
    std::vector<LessonStatus> lessons;
    std::vector<LessonChart> charts;
    std::vector<StepPictures> pictures;
    std::size_t access_picture_count() const;
};

// From the manifest, the progress and the records (step -> report JSON, lesson -> staircase JSON,
// step -> its explained record).
ReportModel report_model(const Manifest& m, const Progress& progress,
                         const std::map<std::string, nlohmann::json>& results,
                         const std::map<std::string, nlohmann::json>& staircases,
                         const std::map<std::string, nlohmann::json>& explained = {});

// A stored run's page (`cudalings report --from FILE`): every lesson's staircase and roofline
// from a results file's staircases (to_json(Staircase)'s form, with the figures it derives),
// the steps' rows as the reference solutions' times; no progress.
ReportModel report_model_from_run(const Manifest& m, const std::vector<nlohmann::json>& staircases,
                                  const std::string& gpu, const std::string& date);

// A compute-bound lesson's roofline: log-log, FLOP per minimal byte against FLOP/s, under the
// copy rate's slope and the FP32 rate's ceiling; a point per step and baseline. "" when the chart
// has no FP32 figures.
std::string roofline_svg(const LessonChart& chart);

std::string render_html_report(const ReportModel& model);
// One lesson's staircase as an SVG element (also used on its own by tests): each row's share of
// the copy rate, of the FP32 rate where the lesson is compute-bound.
std::string staircase_svg(const LessonChart& chart);

}  // namespace cudalings
