// The class summary page (formats.h): one self-contained HTML file, no script, two inline SVG
// charts (pass rate per step; each timed step's times across the class, with the reference).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "text.h"
#include "formats.h"
#include "result.h"

using nlohmann::json;

namespace cudalings::grading {
namespace {

std::string fmt(double v, const char* format = "%.1f") {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

std::string time_text(double us) {
    return us >= 10000 ? fmt(us / 1000, "%.2f") + " ms" : fmt(us, "%.1f") + " µs";
}

const char* verdict_colour(const std::string& verdict) {
    if (verdict == "PASS") return "#2e7d32";
    if (verdict == "SKIPPED" || verdict == "SUSPECT") return "#b08900";
    return "#c62828";
}

struct StepStats {
    std::string step;
    std::string title;
    int graded = 0;
    int passed = 0;
    std::map<std::string, int> verdicts;
    std::vector<std::pair<std::string, double>> times;  // submission, median µs (passing)
    std::vector<double> references;
};

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

std::vector<StepStats> statistics(const std::vector<json>& results) {
    std::vector<StepStats> stats;
    for (const auto& r : results) {
        for (const auto& s : r.value("results", json::array())) {
            const std::string step = s.value("step", "");
            auto it = std::find_if(stats.begin(), stats.end(),
                                   [&](const StepStats& x) { return x.step == step; });
            if (it == stats.end()) {
                StepStats fresh;
                fresh.step = step;
                fresh.title = s.value("title", "");
                stats.push_back(fresh);
                it = stats.end() - 1;
            }
            const std::string verdict = s.value("verdict", "");
            ++it->graded;
            ++it->verdicts[verdict];
            if (verdict == "PASS") ++it->passed;
            if (s.contains("timing") && s["timing"].is_object()) {
                const auto& t = s["timing"];
                double us = t.value("learner", json::object()).value("median_us", 0.0);
                if (verdict == "PASS" && us > 0) it->times.push_back({r.value("name", ""), us});
                if (t.contains("reference") && t["reference"].is_object()) {
                    double ref = t["reference"].value("median_us", 0.0);
                    if (ref > 0) it->references.push_back(ref);
                }
            }
        }
    }
    return stats;
}

std::string pass_rate_chart(const std::vector<StepStats>& stats) {
    const int row = 26, label = 300, bar = 420, height = row * static_cast<int>(stats.size()) + 30;
    std::ostringstream svg;
    svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" width=\"" << label + bar + 80
        << "\" height=\"" << height << "\" font-family=\"sans-serif\" font-size=\"13\">\n"
        << "<title>Share of submissions that pass each step</title>\n";
    for (std::size_t i = 0; i < stats.size(); ++i) {
        const auto& s = stats[i];
        double rate = s.graded ? double(s.passed) / s.graded : 0;
        int y = 10 + row * static_cast<int>(i);
        svg << "<text x=\"" << label - 8 << "\" y=\"" << y + 15 << "\" text-anchor=\"end\">"
            << markup_escape(s.step) << "</text>\n"
            << "<rect x=\"" << label << "\" y=\"" << y + 3 << "\" width=\"" << bar
            << "\" height=\"16\" fill=\"#eeeeee\"/>\n"
            << "<rect x=\"" << label << "\" y=\"" << y + 3 << "\" width=\""
            << fmt(rate * bar, "%.1f") << "\" height=\"16\" fill=\"#2e7d32\"/>\n"
            << "<text x=\"" << label + bar + 6 << "\" y=\"" << y + 15 << "\">" << s.passed << "/"
            << s.graded << "</text>\n";
    }
    svg << "</svg>\n";
    return svg.str();
}

// Each timed step on a row; a dot per passing submission's median time, a red bar at the median
// of the reference's times; log scale, ticks at 1, 2 and 5 times powers of ten.
std::string times_chart(const std::vector<StepStats>& stats) {
    std::vector<const StepStats*> timed;
    double lo = 1e300, hi = 0;
    for (const auto& s : stats) {
        if (s.times.empty()) continue;
        timed.push_back(&s);
        for (const auto& [who, us] : s.times) lo = std::min(lo, us), hi = std::max(hi, us);
        for (double ref : s.references) lo = std::min(lo, ref), hi = std::max(hi, ref);
    }
    if (timed.empty())
        return "<p>No times: every step was graded without timing (on the CPU emulator, with "
               "<code>--no-time</code>, or untimed steps).</p>\n";
    double a = std::floor(std::log10(lo)), b = std::ceil(std::log10(hi));
    if (b <= a) b = a + 1;
    const int row = 34, label = 300, width = 560,
              height = row * static_cast<int>(timed.size()) + 50;
    auto x = [&](double us) { return label + (std::log10(us) - a) / (b - a) * width; };
    std::ostringstream svg;
    svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" width=\"" << label + width + 30
        << "\" height=\"" << height << "\" font-family=\"sans-serif\" font-size=\"13\">\n"
        << "<title>Median time of each passing submission per timed step (log scale); red: the "
           "reference solution</title>\n";
    for (double decade = a; decade <= b; ++decade) {
        for (double m : {1.0, 2.0, 5.0}) {
            double us = m * std::pow(10.0, decade);
            if (std::log10(us) > b + 1e-9) break;
            double px = x(us);
            svg << "<line x1=\"" << fmt(px) << "\" x2=\"" << fmt(px) << "\" y1=\"10\" y2=\""
                << height - 30 << "\" stroke=\"#dddddd\"/>\n";
            if (m == 1.0)
                svg << "<text x=\"" << fmt(px) << "\" y=\"" << height - 12
                    << "\" text-anchor=\"middle\">" << markup_escape(time_text(us)) << "</text>\n";
        }
    }
    for (std::size_t i = 0; i < timed.size(); ++i) {
        const auto& s = *timed[i];
        int y = 10 + row * static_cast<int>(i) + row / 2;
        svg << "<text x=\"" << label - 8 << "\" y=\"" << y + 4 << "\" text-anchor=\"end\">"
            << markup_escape(s.step) << "</text>\n";
        for (const auto& [who, us] : s.times)
            svg << "<circle cx=\"" << fmt(x(us)) << "\" cy=\"" << y
                << "\" r=\"4\" fill=\"#1565c0\" fill-opacity=\"0.6\"><title>" << markup_escape(who)
                << ": " << markup_escape(time_text(us)) << "</title></circle>\n";
        if (!s.references.empty()) {
            double ref = median(s.references);
            svg << "<rect x=\"" << fmt(x(ref) - 1.5) << "\" y=\"" << y - 10
                << "\" width=\"3\" height=\"20\" fill=\"#c62828\"><title>reference: "
                << markup_escape(time_text(ref)) << "</title></rect>\n";
        }
    }
    svg << "</svg>\n";
    return svg.str();
}

}  // namespace

std::string class_summary_html(const std::vector<json>& results) {
    const auto stats = statistics(results);
    int graded = 0, failures = 0;
    bool emulated = false;
    std::string seed_mode, sandbox, tool;
    for (const auto& r : results) {
        ++graded;
        failures += grading_failed(r);
        emulated = emulated || r.value("emulated", false);
        if (r.contains("seed") && r["seed"].is_object())
            seed_mode = r["seed"].value("mode", seed_mode);
        if (r.contains("sandbox") && r["sandbox"].is_string()) sandbox = r["sandbox"];
        tool = r.value("tool", tool);
    }
    std::ostringstream page;
    page << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         << "<title>cudalings: class summary</title>\n<style>\n"
         << "body{font-family:sans-serif;margin:2em;max-width:75em}\n"
         << "table{border-collapse:collapse;margin:1em 0}\n"
         << "td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left}\n"
         << "td.v{color:#fff;font-weight:bold;font-size:85%}\n"
         << "</style>\n</head>\n<body>\n<h1>Class summary</h1>\n<p>" << graded
         << " graded submission" << (graded == 1 ? "" : "s") << " (" << markup_escape(tool)
         << "); seeds: " << markup_escape(seed_mode.empty() ? "fresh" : seed_mode)
         << "; sandbox: " << markup_escape(sandbox.empty() ? "none" : sandbox) << ".";
    if (emulated) page << " Graded on the CPU emulator: correctness only, no timing.";
    if (failures)
        page << " <strong>The grader failed on " << failures
             << " of them: see their result files.</strong>";
    page << "</p>\n<h2>Pass rate per step</h2>\n" << pass_rate_chart(stats);
    page << "<table>\n<tr><th>step</th><th>passed</th><th>other verdicts</th>"
         << "<th>median time (passing)</th><th>fastest</th><th>reference</th></tr>\n";
    for (const auto& s : stats) {
        std::vector<double> times;
        for (const auto& [who, us] : s.times) times.push_back(us);
        std::string others;
        for (const auto& [verdict, count] : s.verdicts)
            if (verdict != "PASS")
                others += (others.empty() ? "" : ", ") + verdict + " " + std::to_string(count);
        page << "<tr><td>" << markup_escape(s.step) << "</td><td>" << s.passed << "/" << s.graded
             << "</td><td>" << markup_escape(others) << "</td><td>"
             << (times.empty() ? "—" : markup_escape(time_text(median(times)))) << "</td><td>"
             << (times.empty()
                     ? "—"
                     : markup_escape(time_text(*std::min_element(times.begin(), times.end()))))
             << "</td><td>"
             << (s.references.empty() ? "—" : markup_escape(time_text(median(s.references))))
             << "</td></tr>\n";
    }
    page << "</table>\n<h2>Times per step</h2>\n" << times_chart(stats);
    page << "<h2>Submissions</h2>\n<table>\n<tr><th>submission</th><th>score</th>";
    for (const auto& s : stats)
        page << "<th>" << markup_escape(s.step.substr(s.step.find('/') + 1)) << "</th>";
    page << "</tr>\n";
    for (const auto& r : results) {
        std::string name = r.value("name", "");
        int round = r.value("round", 1);
        if (round > 1) name += " (round " + std::to_string(round) + ")";
        page << "<tr><td>" << markup_escape(name) << "</td><td>"
             << (r.contains("error") ? std::string("not graded")
                                     : fmt(r.value("score", 0.0), "%g") + " / " +
                                           fmt(r.value("max_score", 0.0), "%g"))
             << "</td>";
        std::map<std::string, std::string> verdicts;
        for (const auto& s : r.value("results", json::array()))
            verdicts[s.value("step", "")] = s.value("verdict", "");
        for (const auto& s : stats) {
            auto v = verdicts.count(s.step) ? verdicts[s.step] : std::string();
            if (v.empty())
                page << "<td></td>";
            else
                page << "<td class=\"v\" style=\"background:" << verdict_colour(v) << "\">"
                     << markup_escape(v) << "</td>";
        }
        page << "</tr>\n";
    }
    page << "</table>\n</body>\n</html>\n";
    return page.str();
}

}  // namespace cudalings::grading
