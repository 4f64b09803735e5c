// Grading: the instructor's formats, all made from the result files (result.h).
//
//   gradescope  Gradescope's results.json for one submission (score, tests with name, score,
//               max_score, status, output and visibility, execution_time, a leaderboard of the
//               timed steps); docs/grading/gradescope-results.schema.json describes it.
//   classroom   GitHub Classroom's autograding result for one submission (what the reporter
//               action, classroom-resources/autograding-grading-reporter, reads base64-encoded):
//               version, status, max_score, and a test per step with its score and message.
//   junit       one JUnit XML file for the batch: a test suite per submission, a test case per
//               step (CI systems and LMS plug-ins read it).
//   csv         grades.csv: a row per submission (and round) with its score and each step's
//               verdict, for a spreadsheet or an LMS import.
//   class summary  class-summary.csv (a row per submission and step: verdict, points, times) and
//               class-summary.html (pass rates, and an SVG chart of each timed step's times
//               across the class against the reference).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace cudalings::grading {

nlohmann::json gradescope_results(const nlohmann::json& result);
nlohmann::json classroom_results(const nlohmann::json& result);
std::string junit_xml(const std::vector<nlohmann::json>& results);
std::string grades_csv(const std::vector<nlohmann::json>& results);
std::string class_summary_csv(const std::vector<nlohmann::json>& results);
std::string class_summary_html(const std::vector<nlohmann::json>& results);

// One CSV line (RFC 4180: fields with commas, quotes or line breaks are quoted).
std::string csv_line(const std::vector<std::string>& fields);

}  // namespace cudalings::grading
