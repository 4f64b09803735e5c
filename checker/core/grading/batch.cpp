#include "batch.h"

#include <algorithm>

#include "course.h"
#include "formats.h"
#include "result.h"

using nlohmann::json;

namespace cudalings::grading {
namespace {

bool wanted(const std::vector<std::string>& formats, const std::string& format) {
    return std::find(formats.begin(), formats.end(), format) != formats.end();
}

}  // namespace

json summary_entry(const BatchEntry& entry) {
    const json& r = entry.result;
    json verdicts = json::object();
    for (const auto& s : r.value("results", json::array()))
        verdicts[s.value("step", "")] = s.value("verdict", "");
    json line{{"submission", r.value("submission", "")},
              {"name", r.value("name", "")},
              {"round", r.value("round", 1)},
              {"file", entry.file},
              {"score", r.value("score", 0.0)},
              {"max_score", r.value("max_score", 0.0)},
              {"emulated", r.value("emulated", false)},
              {"verdicts", verdicts}};
    if (r.contains("error")) line["error"] = r["error"];
    return line;
}

bool write_batch_files(const std::string& out, json summary, const std::vector<BatchEntry>& entries,
                       const std::vector<std::string>& formats, std::string& error) {
    std::vector<json> results;
    json lines = json::array();
    int failures = 0;
    for (const auto& e : entries) {
        results.push_back(e.result);
        lines.push_back(summary_entry(e));
        failures += grading_failed(e.result);
    }
    summary["format"] = kSummaryFormat;
    summary["version"] = kFormatVersion;
    summary["tool"] = tool_version();
    summary["results"] = lines;
    summary["grader_failures"] = failures;
    std::vector<std::pair<std::string, std::string>> files{
        {"summary.json", dump_json(summary, 2) + "\n"},
        {"class-summary.html", class_summary_html(results)},
        {"class-summary.csv", class_summary_csv(results)}};
    if (wanted(formats, "junit")) files.push_back({"junit.xml", junit_xml(results)});
    if (wanted(formats, "csv")) files.push_back({"grades.csv", grades_csv(results)});
    if (wanted(formats, "gradescope") && entries.size() == 1)
        files.push_back({"results.json", dump_json(gradescope_results(results.front()), 2) + "\n"});
    for (const auto& [name, text] : files) {
        if (!write_file_atomic(out + "/" + name, text)) {
            error = "cannot write " + out + "/" + name;
            return false;
        }
    }
    return true;
}

}  // namespace cudalings::grading
