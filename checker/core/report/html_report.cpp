#include "html_report.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <sstream>

#include "cases.h"
#include "report.h"
#include "text.h"

namespace cudalings {
namespace {

std::string num(double v, int digits = 1) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

const char* kStyle = R"(
body { font: 15px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 60em; color: #1d2330;
       padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: .2em; } h2 { margin-top: 2em; font-size: 1.25em; }
.meta { color: #5b6475; } table { border-collapse: collapse; }
td { padding: .15em .8em .15em 0; vertical-align: top; }
.done { color: #1a7f37; } .failed { color: #b42318; } .pending { color: #5b6475; }
.goal { display: block; } .goal.met { color: #1a7f37; } .goal.missed { color: #9a6700; }
svg text { font: 12px system-ui, sans-serif; fill: #1d2330; }
svg .bar { fill: #2f6fde; } svg .ref { fill: #8aa6d6; } svg .base { fill: #d9822b; }
svg .track { fill: #e3e7ee; }
svg .grid { stroke: #d8dde6; } svg .copy { stroke: #1d2330; stroke-dasharray: 4 3; }
h3 { font-size: 1.05em; margin: 1.4em 0 .2em; }
svg.access { display: block; margin: .6em 0 1.2em; }
svg.access .lane { fill: #2f6fde; } svg.access .lane.idle { fill: #e3e7ee; }
svg.access .sector, svg.access .bank { fill: #8aa6d6; } svg.access .hot { fill: #d64545; }
svg.access .line128 { fill: #eef1f6; stroke: #b9c3d3; }
svg.access .link { stroke: #5b6475; stroke-width: 1; } svg.access .link.hot { stroke: #d64545; }
svg.access .verdict.hot { fill: #b42318; font-weight: 600; }
svg.access .ways { fill: #b42318; font-weight: 600; }
.legend span { display: inline-block; width: .9em; height: .9em; margin: 0 .3em 0 1em;
               vertical-align: -.1em; }
)";

// A step's performance goals (its last emulated check): met or not, each with its evidence.
std::string goals_cell(const std::vector<GoalResult>& goals) {
    std::string out;
    for (const auto& g : goals) {
        if (!g.measured) continue;
        out += std::string("<span class=\"goal ") + (g.met ? "met" : "missed") + "\" title=\"" +
               markup_escape(g.evidence) + "\">" + (g.met ? "goal met: " : "goal not met: ") +
               markup_escape(g.says) + "</span> ";
    }
    return out;
}

// The progress of the whole course and of each lesson, as bars.
std::string progress_svg(const std::vector<LessonStatus>& lessons) {
    const int width = 720, label = 200, bar = width - label - 70, row = 24;
    std::ostringstream s;
    const int height = row * static_cast<int>(lessons.size() + 1) + 8;
    s << "<svg class=\"progress\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width
      << "\" height=\"" << height << "\" viewBox=\"0 0 " << width << " " << height
      << "\" role=\"img\" aria-label=\"progress\">\n";
    std::size_t all_done = 0, all = 0;
    for (const auto& l : lessons)
        for (const auto& st : l.steps) {
            ++all;
            all_done += st.status == "done";
        }
    auto line = [&](int y, const std::string& name, std::size_t done, std::size_t total) {
        const double filled = total ? static_cast<double>(bar) * static_cast<double>(done) /
                                          static_cast<double>(total)
                                    : 0;
        s << "  <g class=\"lesson-progress\" data-done=\"" << done << "\" data-total=\"" << total
          << "\">\n"
          << "    <text x=\"0\" y=\"" << y + 15 << "\">" << markup_escape(name) << "</text>\n"
          << "    <rect class=\"track\" x=\"" << label << "\" y=\"" << y + 4 << "\" width=\"" << bar
          << "\" height=\"14\" rx=\"3\"/>\n"
          << "    <rect class=\"bar\" x=\"" << label << "\" y=\"" << y + 4 << "\" width=\""
          << num(filled) << "\" height=\"14\" rx=\"3\"/>\n"
          << "    <text x=\"" << label + bar + 8 << "\" y=\"" << y + 15 << "\">" << done << "/"
          << total << "</text>\n  </g>\n";
    };
    line(0, "the course", all_done, all);
    int y = row;
    for (const auto& l : lessons) {
        std::size_t done = 0;
        for (const auto& st : l.steps) done += st.status == "done";
        line(y, l.id, done, l.steps.size());
        y += row;
    }
    s << "</svg>\n";
    return s.str();
}

}  // namespace

namespace {
// A staircase row's first cell (its first timed problem, as a step's "timing" is), with the
// figures to_json(Staircase) derived.
ChartRow chart_row(const nlohmann::json& r) {
    const auto& cell = r["cells"].front();
    ChartRow row;
    row.label = r.value("label", "");
    row.title = r.value("title", "");
    row.baseline = r.value("baseline", false);
    row.median_us = cell.value("median_us", 0.0);
    row.gbps = cell.value("gbps", 0.0);
    row.percent_of_copy = cell.value("percent_of_copy", 0.0);
    row.gflops = cell.value("gflops", 0.0);
    row.percent_of_fp32 = cell.value("percent_of_fp32", 0.0);
    row.intensity = cell.value("intensity", 0.0);
    return row;
}
}  // namespace

ReportModel report_model_from_run(const Manifest& m, const std::vector<nlohmann::json>& staircases,
                                  const std::string& gpu, const std::string& date) {
    ReportModel model;
    model.heading = "a stored run";
    model.progress = false;
    model.generated = "run of " + date;
    model.gpu = gpu;
    for (const auto& lesson : m.lessons)
        for (const auto& st : staircases) {
            if (st.value("lesson", "") != lesson.id) continue;
            LessonChart chart;
            chart.lesson = lesson.id;
            chart.title = lesson.title;
            chart.copy_gbps = st.value("copy_gbps", 0.0);
            chart.fp32_gflops = st.value("fp32_gflops", 0.0);
            for (const auto& r : st.value("rows", nlohmann::json::array()))
                if (!r.value("cells", nlohmann::json::array()).empty()) {
                    chart.rows.push_back(chart_row(r));
                    if (chart.size.empty()) chart.size = r["cells"].front().value("size", "");
                }
            if (chart.rows.empty()) continue;
            model.lessons.push_back({lesson.id, lesson.title, {}});
            model.charts.push_back(std::move(chart));
        }
    return model;
}

ReportModel report_model(const Manifest& m, const Progress& progress,
                         const std::map<std::string, nlohmann::json>& results,
                         const std::map<std::string, nlohmann::json>& staircases,
                         const std::map<std::string, nlohmann::json>& explained) {
    ReportModel model;
    model.generated = local_time_now("%Y-%m-%d %H:%M");
    for (const auto& lesson : m.lessons) {
        LessonStatus ls{lesson.id, lesson.title, {}};
        LessonChart chart;
        chart.lesson = lesson.id;
        chart.title = lesson.title;
        std::uint64_t lesson_n = 0;
        for (const auto& step : lesson.steps) {
            const std::string name = lesson.id + "/" + step.id;
            const auto found = results.find(name);
            StepStatus st{step.id, step.title, progress.passed(name) ? "done" : "pending", "", {}};
            if (found != results.end()) {
                const auto& r = found->second;
                st.verdict = r.value("verdict", "");
                for (const auto& g : r.value("goals", nlohmann::json::array()))
                    st.goals.push_back(goal_result_from_json(g));
                if (st.status != "done" && !st.verdict.empty() && st.verdict != "PASS" &&
                    st.verdict != "SKIPPED")
                    st.status = "failed";
                const auto& t = r.contains("timing") ? r["timing"] : nlohmann::json();
                if (st.verdict == "PASS" && t.is_object() && t.contains("learner")) {
                    ChartRow row;
                    row.label = step.id;
                    row.title = step.title;
                    row.median_us = t["learner"].value("median_us", 0.0);
                    row.gbps = t["learner"].value("gbps", 0.0);
                    row.percent_of_copy = t["learner"].value("percent_of_copy", 0.0);
                    row.gflops = t["learner"].value("gflops", 0.0);
                    row.percent_of_fp32 = t["learner"].value("percent_of_fp32", 0.0);
                    row.intensity = t.value("intensity", 0.0);
                    if (t.contains("reference") && t["reference"].is_object()) {
                        row.reference_us = t["reference"].value("median_us", 0.0);
                        row.reference_percent = t["reference"].value("percent_of_copy", 0.0);
                        row.reference_percent_fp32 = t["reference"].value("percent_of_fp32", 0.0);
                    }
                    chart.fp32_gflops = std::max(chart.fp32_gflops, t.value("fp32_gflops", 0.0));
                    const auto n = t.value("n", std::uint64_t{0});
                    if (!lesson_n) lesson_n = n;
                    if (n && n != lesson_n) row.note = "n = " + format_size(n);
                    chart.copy_gbps = std::max(chart.copy_gbps, t.value("copy_gbps", 0.0));
                    if (model.gpu.empty()) model.gpu = r.value("gpu", "");
                    chart.rows.push_back(row);
                }
            }
            ls.steps.push_back(st);
            const auto pictures = explained.find(name);
            if (pictures != explained.end()) {
                const auto access = pictures->second.value("access", nlohmann::json::object());
                StepPictures sp{lesson.id, step.id, {}};
                for (const auto& p : access.value("pictures", nlohmann::json::array())) {
                    try {
                        sp.pictures.push_back(access_picture_from_json(p));
                    } catch (const std::exception&) {
                        // A damaged or newer record: that picture is not drawn.
                    }
                }
                if (!sp.pictures.empty()) model.pictures.push_back(std::move(sp));
            }
        }
        // The library baselines come from the lesson's last full check (its staircase).
        const auto stair = staircases.find(lesson.id);
        if (stair != staircases.end() && !chart.rows.empty())
            for (const auto& r : stair->second.value("rows", nlohmann::json::array()))
                if (r.value("baseline", false) && !r.value("cells", nlohmann::json::array()).empty())
                    chart.rows.push_back(chart_row(r));
        if (lesson_n) chart.size = format_size(lesson_n);
        model.lessons.push_back(ls);
        if (!chart.rows.empty()) model.charts.push_back(chart);
    }
    return model;
}

std::size_t ReportModel::access_picture_count() const {
    std::size_t n = 0;
    for (const auto& sp : pictures) n += sp.pictures.size();
    return n;
}

bool LessonChart::compute_bound() const {
    return fp32_gflops > 0 &&
           std::any_of(rows.begin(), rows.end(), [](const ChartRow& r) { return r.intensity > 0; });
}

std::string staircase_svg(const LessonChart& chart) {
    // One row per step: a bar as long as its share of the copy bandwidth (the dashed line is
    // 100%), the reference's share as a thinner bar under it, baselines in their own colour. A
    // compute-bound lesson's bars are shares of the FP32 rate instead.
    const int label = 230, plot = 380, right = 170, row = 34, top = 22;
    const int width = label + plot + right;
    const int height = top + row * static_cast<int>(chart.rows.size()) + 10;
    const bool fp32 = chart.compute_bound();
    auto share = [&](const ChartRow& r) { return fp32 ? r.percent_of_fp32 : r.percent_of_copy; };
    auto reference_share = [&](const ChartRow& r) {
        return fp32 ? r.reference_percent_fp32 : r.reference_percent;
    };
    double scale_max = 100;
    for (const auto& r : chart.rows)
        scale_max = std::max({scale_max, share(r), reference_share(r)});
    auto x_of = [&](double percent) { return label + plot * percent / scale_max; };
    std::ostringstream s;
    s << "<svg class=\"staircase\" data-lesson=\"" << markup_escape(chart.lesson)
      << "\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" viewBox=\"0 0 " << width << " " << height << "\" role=\"img\" aria-label=\""
      << markup_escape(chart.lesson) << " staircase\">\n";
    for (int percent = 0; percent <= 100; percent += 25) {
        const double x = x_of(percent);
        s << "  <line class=\"" << (percent == 100 ? "copy" : "grid") << "\" x1=\"" << num(x)
          << "\" y1=\"" << top - 4 << "\" x2=\"" << num(x) << "\" y2=\"" << height - 6
          << "\"/>\n  <text x=\"" << num(x - 10) << "\" y=\"" << top - 8 << "\">" << percent
          << "%</text>\n";
    }
    int y = top;
    for (const auto& r : chart.rows) {
        const std::string cls = r.baseline ? "base" : "bar";
        s << "  <g class=\"row\" data-label=\"" << markup_escape(r.label) << "\" data-us=\""
          << num(r.median_us, 3) << "\" data-percent=\"" << num(share(r), 2) << "\">\n"
          << "    <title>" << markup_escape(r.title) << "</title>\n"
          << "    <text x=\"0\" y=\"" << y + 15 << "\">" << markup_escape(r.label) << "</text>\n"
          << "    <rect class=\"" << cls << "\" x=\"" << label << "\" y=\"" << y + 4
          << "\" width=\"" << num(x_of(share(r)) - label) << "\" height=\"14\"/>\n";
        if (r.reference_us > 0)
            s << "    <rect class=\"ref\" data-us=\"" << num(r.reference_us, 3) << "\" x=\""
              << label << "\" y=\"" << y + 20 << "\" width=\""
              << num(x_of(reference_share(r)) - label) << "\" height=\"6\"/>\n";
        s << "    <text x=\"" << label + plot + 10 << "\" y=\"" << y + 15 << "\">"
          << markup_escape(format_time_us(r.median_us)) << "  " << num(share(r)) << "%"
          << (r.note.empty() ? "" : "  (" + markup_escape(r.note) + ")") << "</text>\n  </g>\n";
        y += row;
    }
    s << "</svg>\n";
    return s.str();
}

std::string roofline_svg(const LessonChart& chart) {
    if (!chart.compute_bound() || chart.copy_gbps <= 0) return "";
    // Log-log: x is FLOP per minimal byte, y is GFLOP/s. The roof is the copy rate's slope
    // (x times GB/s) up to the ridge, where it meets the FP32 rate's ceiling.
    const double ridge = chart.fp32_gflops / chart.copy_gbps;
    double x_lo = ridge, x_hi = ridge, y_lo = chart.fp32_gflops;
    for (const auto& r : chart.rows) {
        if (r.intensity <= 0 || r.gflops <= 0) continue;
        x_lo = std::min(x_lo, r.intensity);
        x_hi = std::max(x_hi, r.intensity);
        y_lo = std::min(y_lo, r.gflops);
    }
    x_lo = std::pow(10, std::floor(std::log10(x_lo / 2)));
    x_hi = std::pow(10, std::ceil(std::log10(x_hi * 2)));
    y_lo = std::pow(10, std::floor(std::log10(std::min(y_lo, x_lo * chart.copy_gbps))));
    const double y_hi = std::pow(10, std::ceil(std::log10(chart.fp32_gflops * 1.5)));
    const int left = 70, plot_w = 520, plot_h = 300, top = 16, bottom = 40, right = 230;
    const int width = left + plot_w + right, height = top + plot_h + bottom;
    auto x_of = [&](double v) {
        return left +
               plot_w * (std::log10(v) - std::log10(x_lo)) / (std::log10(x_hi) - std::log10(x_lo));
    };
    auto y_of = [&](double v) {
        return top + plot_h * (1 - (std::log10(v) - std::log10(y_lo)) /
                                       (std::log10(y_hi) - std::log10(y_lo)));
    };
    std::ostringstream s;
    s << "<svg class=\"roofline\" data-lesson=\"" << markup_escape(chart.lesson)
      << "\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" viewBox=\"0 0 " << width << " " << height << "\" role=\"img\" aria-label=\""
      << markup_escape(chart.lesson) << " roofline\">\n";
    for (double v = x_lo; v <= x_hi * 1.001; v *= 10)
        s << "  <line class=\"grid\" x1=\"" << num(x_of(v)) << "\" y1=\"" << top << "\" x2=\""
          << num(x_of(v)) << "\" y2=\"" << top + plot_h << "\"/>\n  <text x=\"" << num(x_of(v) - 8)
          << "\" y=\"" << top + plot_h + 16 << "\">" << num(v, v < 1 ? 1 : 0) << "</text>\n";
    for (double v = y_lo; v <= y_hi * 1.001; v *= 10)
        s << "  <line class=\"grid\" x1=\"" << left << "\" y1=\"" << num(y_of(v)) << "\" x2=\""
          << left + plot_w << "\" y2=\"" << num(y_of(v)) << "\"/>\n  <text x=\"0\" y=\""
          << num(y_of(v) + 4) << "\">" << (v >= 1000 ? num(v / 1000, 0) + " T" : num(v, 0) + " G")
          << "</text>\n";
    s << "  <text x=\"" << left + plot_w / 2 - 90 << "\" y=\"" << height - 4
      << "\">FLOP per byte moved (log)</text>\n";
    // The roof: memory-bound left of the ridge, compute-bound right of it.
    s << "  <polyline class=\"copy\" fill=\"none\" data-ridge=\"" << num(ridge, 2) << "\" points=\""
      << num(x_of(x_lo)) << "," << num(y_of(x_lo * chart.copy_gbps)) << " " << num(x_of(ridge))
      << "," << num(y_of(chart.fp32_gflops)) << " " << num(x_of(x_hi)) << ","
      << num(y_of(chart.fp32_gflops)) << "\"/>\n";
    s << "  <text x=\"" << num(x_of(ridge) + 6) << "\" y=\"" << num(y_of(chart.fp32_gflops) - 6)
      << "\">FP32 " << num(chart.fp32_gflops / 1000, 1) << " TFLOP/s; copy "
      << num(chart.copy_gbps / 1000, 2) << " TB/s</text>\n";
    int label_y = top + 12;
    for (const auto& r : chart.rows) {
        if (r.intensity <= 0 || r.gflops <= 0) continue;
        const std::string cls = r.baseline ? "base" : "bar";
        s << "  <g class=\"point\" data-label=\"" << markup_escape(r.label)
          << "\" data-intensity=\"" << num(r.intensity, 2) << "\" data-gflops=\""
          << num(r.gflops, 1) << "\">\n"
          << "    <title>" << markup_escape(r.title) << "</title>\n"
          << "    <circle class=\"" << cls << "\" cx=\"" << num(x_of(r.intensity)) << "\" cy=\""
          << num(y_of(r.gflops)) << "\" r=\"4\"/>\n"
          << "    <text x=\"" << left + plot_w + 12 << "\" y=\"" << label_y << "\">"
          << markup_escape(r.label) << "  " << num(r.percent_of_fp32) << "%</text>\n  </g>\n";
        label_y += 16;
    }
    s << "</svg>\n";
    return s.str();
}

std::string render_html_report(const ReportModel& model) {
    std::ostringstream s;
    s << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<title>cudalings: " << markup_escape(model.heading) << "</title>\n<style>" << kStyle
      << "</style>\n</head>\n"
      << "<body>\n<h1>cudalings: " << markup_escape(model.heading) << "</h1>\n<p class=\"meta\">"
      << markup_escape(model.generated)
      << (model.gpu.empty() ? "" : " · timings on " + markup_escape(model.gpu)) << "</p>\n";
    if (model.progress) s << progress_svg(model.lessons);
    for (const auto& l : model.lessons) {
        s << "<h2>" << markup_escape(l.id) << " — " << markup_escape(l.title) << "</h2>\n";
        if (model.progress) s << "<table>\n";
        for (const auto& st : l.steps)
            s << "<tr><td class=\"" << st.status << "\">" << st.status << "</td><td>"
              << markup_escape(st.id) << "</td><td>" << markup_escape(st.title) << "</td><td>"
              << markup_escape(st.verdict) << "</td><td>" << goals_cell(st.goals) << "</td></tr>\n";
        if (model.progress) s << "</table>\n";
        for (const auto& chart : model.charts) {
            if (chart.lesson != l.id) continue;
            const bool fp32 = chart.compute_bound();
            s << (fp32 ? "<p>Each step's share of this GPU's FP32 rate (" +
                             num(chart.fp32_gflops / 1000, 1) + " TFLOP/s)"
                       : std::string("<p>Each step's share of this GPU's copy bandwidth") +
                             (chart.copy_gbps > 0 ? " (" + num(chart.copy_gbps / 1000, 2) + " TB/s)"
                                                  : ""))
              << (chart.size.empty() ? "" : " at n = " + markup_escape(chart.size))
              << ": longer is faster. <span class=\"legend\"><span style=\"background:#2f6fde\">"
                 "</span>yours<span style=\"background:#8aa6d6\"></span>the reference"
                 "<span style=\"background:#d9822b\"></span>library</span></p>\n";
            s << staircase_svg(chart);
            const std::string roof = roofline_svg(chart);
            if (!roof.empty())
                s << "<p>The roofline: each step's FLOP/s against its FLOP per byte moved. Under "
                     "the "
                     "slope a step cannot beat the copy rate, under the ceiling the FP32 rate; a "
                     "step far below the roof has room.</p>\n"
                  << roof;
        }
        for (const auto& sp : model.pictures) {
            if (sp.lesson != l.id) continue;
            s << "<h3>" << markup_escape(sp.step)
              << ": one warp per access line</h3>\n<p class=\"meta\">From the last <code>check "
                 "--explain</code> of this step, on the emulator: which sector of 32 bytes "
                 "(global memory, grouped in lines of 128) or which of the 32 banks (shared "
                 "memory) each lane of one warp touched, for each access line its fullest warp. "
                 "Red marks bank conflicts and sectors beyond what a coalesced access needs.</p>\n";
            for (const auto& p : sp.pictures) s << access_svg(p);
        }
    }
    if (model.charts.empty())
        s << "<p class=\"meta\">No timings yet: steps are timed on a GPU once they pass "
             "(`./cudalings check 01` times a whole lesson and its library baseline).</p>\n";
    s << "</body>\n</html>\n";
    return s.str();
}

}  // namespace cudalings
