#include "formats.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "text.h"
#include "result.h"

using nlohmann::json;

namespace cudalings::grading {
namespace {

std::string number(double v, int digits = 6) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    return buf;
}

// "01_vector_add/02_grid_stride_loop" -> "1.2" (Gradescope's test number).
std::string test_number(const std::string& step) {
    auto lead = [](const std::string& part) {
        std::size_t i = 0;
        while (i < part.size() && std::isdigit(static_cast<unsigned char>(part[i]))) ++i;
        return i ? std::to_string(std::stol(part.substr(0, i))) : std::string("0");
    };
    auto slash = step.find('/');
    return lead(step.substr(0, slash)) + "." +
           lead(slash == std::string::npos ? "" : step.substr(slash + 1));
}

std::string short_step(const std::string& step) { return step.substr(step.find('/') + 1); }

// The steps of a batch in the order they were graded, each once.
std::vector<std::string> step_names(const std::vector<json>& results) {
    std::vector<std::string> names;
    for (const auto& r : results)
        for (const auto& s : r.value("results", json::array())) {
            std::string name = s.value("step", "");
            if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
        }
    return names;
}

double median_us(const json& step) {
    if (!step.contains("timing") || !step["timing"].is_object()) return 0;
    return step["timing"].value("learner", json::object()).value("median_us", 0.0);
}

double reference_us(const json& step) {
    if (!step.contains("timing") || !step["timing"].is_object()) return 0;
    const auto& t = step["timing"];
    return t.contains("reference") && t["reference"].is_object()
               ? t["reference"].value("median_us", 0.0)
               : 0.0;
}

std::string submission_label(const json& r) {
    std::string name = r.value("name", "");
    int round = r.value("round", 1);
    return round > 1 ? name + " (round " + std::to_string(round) + ")" : name;
}

}  // namespace

std::string csv_line(const std::vector<std::string>& fields) {
    std::string line;
    for (std::size_t i = 0; i < fields.size(); ++i) {
        if (i) line += ',';
        const std::string& f = fields[i];
        if (f.find_first_of(",\"\n\r") == std::string::npos) {
            line += f;
            continue;
        }
        line += '"';
        for (char c : f) line += c == '"' ? std::string("\"\"") : std::string(1, c);
        line += '"';
    }
    return line + "\r\n";
}

json gradescope_results(const json& result) {
    json out;
    const bool emulated = result.value("emulated", false);
    std::ostringstream summary;
    if (result.contains("error")) {
        summary << "The grader failed on this submission, through no fault of yours: "
                << result["error"].get<std::string>() << "\nYour instructor has been told.\n";
        out["score"] = 0;
        out["tests"] = json::array();
    } else {
        summary << result.value("passed", 0) << " of " << result["results"].size()
                << " steps passed: " << number(result.value("score", 0.0)) << " of "
                << number(result.value("max_score", 0.0)) << " points.\n";
        if (emulated)
            summary << "Graded on the CPU emulator (no GPU here): correctness only, no timing.\n";
        if (result.value("skipped", 0) > 0)
            summary << "Some steps could not be checked here (SKIPPED): your instructor grades "
                       "them on a GPU.\n";
        json tests = json::array();
        for (const auto& s : result["results"]) {
            const std::string step = s.value("step", "");
            json t;
            t["name"] = step + (s.value("title", "").empty() ? "" : " — " + s.value("title", ""));
            t["number"] = test_number(step);
            t["score"] = s.value("points", 0.0);
            t["max_score"] = s.value("max_points", 0.0);
            t["status"] = s.value("verdict", "") == "PASS" ? "passed" : "failed";
            t["output"] = s.value("output", "");
            t["output_format"] = "text";
            t["visibility"] = s.value("visibility", "visible");
            t["tags"] = json::array({step.substr(0, step.find('/')), s.value("verdict", "")});
            tests.push_back(t);
        }
        out["score"] = result.value("score", 0.0);
        out["tests"] = tests;
        // The leaderboard: each timed step that passed, fastest first.
        json board = json::array();
        for (const auto& s : result["results"]) {
            double us = median_us(s);
            if (s.value("verdict", "") != "PASS" || us <= 0) continue;
            board.push_back({{"name", short_step(s.value("step", "")) + " (µs)"},
                             {"value", std::round(us * 10) / 10},
                             {"order", "asc"}});
        }
        if (!board.empty()) out["leaderboard"] = board;
    }
    out["execution_time"] = static_cast<int>(std::ceil(result.value("seconds", 0.0)));
    out["output"] = summary.str();
    out["output_format"] = "text";
    out["test_output_format"] = "text";
    out["stdout_visibility"] = "hidden";
    out["extra_data"] = {{"tool", result.value("tool", "")},
                         {"format_version", result.value("version", 0)},
                         {"submission", result.value("submission", "")},
                         {"round", result.value("round", 1)},
                         {"emulated", emulated},
                         {"sandbox", result.value("sandbox", json())},
                         {"seed", result.value("seed", json::object())}};
    return out;
}

json classroom_results(const json& result) {
    json tests = json::array();
    bool all_pass = true;
    for (const auto& s : result.value("results", json::array())) {
        const std::string verdict = s.value("verdict", "");
        const std::string status = verdict == "PASS"             ? "pass"
                                   : verdict == "INTERNAL_ERROR" ? "error"
                                                                 : "fail";
        all_pass = all_pass && status == "pass";
        tests.push_back({{"name", s.value("step", "")},
                         {"status", status},
                         {"score", s.value("points", 0.0)},
                         {"message", s.value("output", "")},
                         {"test_code", "cudalings grade --step " + s.value("step", "")},
                         {"filename", s.value("submitted", json()).is_string()
                                          ? s["submitted"].get<std::string>()
                                          : std::string()},
                         {"line_no", 0},
                         {"execution_time", number(s.value("seconds", 0.0), 3) + "s"}});
    }
    const std::string status = result.contains("error") ? "error" : all_pass ? "pass" : "fail";
    return json{{"version", 1},
                {"status", status},
                {"max_score", result.value("max_score", 0.0)},
                {"tests", tests}};
}

std::string junit_xml(const std::vector<json>& results) {
    int tests = 0, failures = 0, errors = 0, skipped = 0;
    double seconds = 0;
    std::ostringstream suites;
    for (const auto& r : results) {
        int t = 0, f = 0, e = 0, s = 0;
        std::ostringstream cases;
        const std::string suite = submission_label(r);
        if (r.contains("error")) {
            ++t;
            ++e;
            cases << "    <testcase classname=\"" << markup_escape(suite)
                  << "\" name=\"grading\" time=\"0\">\n      <error message=\""
                  << markup_escape(r["error"].get<std::string>()) << "\" type=\"grader\"/>\n"
                  << "    </testcase>\n";
        }
        for (const auto& step : r.value("results", json::array())) {
            ++t;
            const std::string verdict = step.value("verdict", "");
            const std::string name = step.value("step", "");
            cases << "    <testcase classname=\""
                  << markup_escape(suite + "." + name.substr(0, name.find('/'))) << "\" name=\""
                  << markup_escape(short_step(name)) << "\" time=\""
                  << number(step.value("seconds", 0.0)) << "\">\n";
            const std::string message = verdict + ": " + step.value("reason", "");
            if (verdict == "SKIPPED") {
                ++s;
                cases << "      <skipped message=\"" << markup_escape(message) << "\"/>\n";
            } else if (verdict == "INTERNAL_ERROR") {
                ++e;
                cases << "      <error message=\"" << markup_escape(message) << "\" type=\""
                      << verdict << "\">" << markup_escape(step.value("output", ""))
                      << "</error>\n";
            } else if (verdict != "PASS") {
                ++f;
                cases << "      <failure message=\"" << markup_escape(message) << "\" type=\""
                      << verdict << "\">" << markup_escape(step.value("output", ""))
                      << "</failure>\n";
            }
            cases << "    </testcase>\n";
        }
        tests += t;
        failures += f;
        errors += e;
        skipped += s;
        seconds += r.value("seconds", 0.0);
        suites << "  <testsuite name=\"" << markup_escape(suite) << "\" tests=\"" << t
               << "\" failures=\"" << f << "\" errors=\"" << e << "\" skipped=\"" << s
               << "\" time=\"" << number(r.value("seconds", 0.0)) << "\">\n"
               << "    <properties>\n"
               << "      <property name=\"submission\" value=\""
               << markup_escape(r.value("submission", "")) << "\"/>\n"
               << "      <property name=\"score\" value=\"" << number(r.value("score", 0.0))
               << "\"/>\n"
               << "      <property name=\"max_score\" value=\"" << number(r.value("max_score", 0.0))
               << "\"/>\n"
               << "      <property name=\"emulated\" value=\""
               << (r.value("emulated", false) ? "true" : "false") << "\"/>\n"
               << "    </properties>\n"
               << cases.str() << "  </testsuite>\n";
    }
    std::ostringstream xml;
    xml << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        << "<testsuites name=\"cudalings\" tests=\"" << tests << "\" failures=\"" << failures
        << "\" errors=\"" << errors << "\" skipped=\"" << skipped << "\" time=\"" << number(seconds)
        << "\">\n"
        << suites.str() << "</testsuites>\n";
    return xml.str();
}

std::string grades_csv(const std::vector<json>& results) {
    const auto steps = step_names(results);
    std::vector<std::string> header{"name",   "submission", "round",   "score",    "max_score",
                                    "passed", "failed",     "skipped", "emulated", "error"};
    header.insert(header.end(), steps.begin(), steps.end());
    std::string csv = csv_line(header);
    for (const auto& r : results) {
        std::vector<std::string> row{r.value("name", ""),
                                     r.value("submission", ""),
                                     std::to_string(r.value("round", 1)),
                                     number(r.value("score", 0.0)),
                                     number(r.value("max_score", 0.0)),
                                     std::to_string(r.value("passed", 0)),
                                     std::to_string(r.value("failed", 0)),
                                     std::to_string(r.value("skipped", 0)),
                                     r.value("emulated", false) ? "yes" : "no",
                                     r.value("error", "")};
        std::map<std::string, std::string> verdicts;
        for (const auto& s : r.value("results", json::array()))
            verdicts[s.value("step", "")] = s.value("verdict", "");
        for (const auto& step : steps) row.push_back(verdicts.count(step) ? verdicts[step] : "");
        csv += csv_line(row);
    }
    return csv;
}

std::string class_summary_csv(const std::vector<json>& results) {
    std::string csv = csv_line({"name", "round", "step", "verdict", "points", "max_points",
                                "median_us", "reference_us", "speed_vs_reference", "reason"});
    for (const auto& r : results) {
        for (const auto& s : r.value("results", json::array())) {
            double us = median_us(s), ref = reference_us(s);
            csv += csv_line({r.value("name", ""), std::to_string(r.value("round", 1)),
                             s.value("step", ""), s.value("verdict", ""),
                             number(s.value("points", 0.0)), number(s.value("max_points", 0.0)),
                             us > 0 ? number(us) : "", ref > 0 ? number(ref) : "",
                             us > 0 && ref > 0 ? number(ref / us, 4) : "", s.value("reason", "")});
        }
    }
    return csv;
}

}  // namespace cudalings::grading
