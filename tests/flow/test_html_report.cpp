// `cudalings report`: a self-contained HTML page whose SVG staircases show each step's share of
// the copy bandwidth (bars proportional to it), the reference's, and the library baseline; it
// parses as XML where it is SVG, fetches nothing, and opens in a real headless browser where
// one is installed (Debian: apt-get install chromium).
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_floating_point.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <array>
#include <cmath>
#include <regex>

#include "flow_support.h"
#include "history.h"
#include "html_report.h"
#include "supervise.h"

using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::WithinAbs;
using namespace cudalings;

namespace {

StepReport timed(const std::string& step, double us, double reference_us) {
    StepReport r;
    r.step = step;
    r.verdict = Verdict::Pass;
    r.gpu = "NVIDIA H200";
    TimingResult t;
    t.n = std::uint64_t{1} << 28;
    t.size = "n=2^28";
    t.bytes = 3.0 * 4 * (1 << 28);  // two reads and a write of 2^28 floats
    t.copy_gbps = 4210;
    t.learner = {true, us, us * 0.99, us * 1.01, us * 0.98, 10, "spread"};
    t.reference = {true, reference_us, reference_us, reference_us, reference_us, 10, ""};
    r.timings = {t};
    return r;
}

// Every element opened in `xml` is closed in order (a small well-formedness check).
bool balanced(const std::string& xml) {
    static const std::regex tag(R"(<(/?)([a-zA-Z][\w:-]*)[^>]*?(/?)>)");
    std::vector<std::string> open;
    for (std::sregex_iterator it(xml.begin(), xml.end(), tag), end; it != end; ++it) {
        const auto& m = *it;
        if (m[3] == "/") continue;  // <rect .../>
        if (m[1] == "/") {
            if (open.empty() || open.back() != m[2]) return false;
            open.pop_back();
        } else {
            open.push_back(m[2]);
        }
    }
    return open.empty();
}

std::string state_with_timings() {
    const std::string state = flow::temp_dir("report");
    record_result(state, timed("01_vector_add/01_one_thread_per_element", 800, 790));
    record_result(state, timed("01_vector_add/02_grid_stride_loop", 1600, 790));
    record_result(state, timed("01_vector_add/03_float4", 781, 779.9));
    Staircase st;
    st.lesson = "01_vector_add";
    st.copy_gbps = 4210;
    const double bytes = 3.0 * 4 * (1 << 28);
    st.rows.push_back({"03_float4",
                       "float4",
                       "vector_add",
                       false,
                       {{"", 781, bytes, std::uint64_t{1} << 28, "n=2^28"}}});
    st.rows.push_back({"cub::DeviceTransform",
                       "cub::DeviceTransform",
                       "vector_add",
                       true,
                       {{"", 790, bytes, std::uint64_t{1} << 28, "n=2^28"}}});
    record_staircase(state, st);
    flow::write(state + "/progress.json",
                "{\"passed\": {\"01_vector_add/01_one_thread_per_element\": \"a\", "
                "\"01_vector_add/02_grid_stride_loop\": \"b\", \"01_vector_add/03_float4\": "
                "\"c\"}}\n");
    return state;
}

}  // namespace

TEST_CASE("the staircase SVG draws each step in proportion to its share of copy bandwidth",
          "[report]") {
    const std::string state = state_with_timings();
    Manifest m = load_manifest(std::string(CUDALINGS_SOURCE_DIR));
    Progress progress(state + "/progress.json");
    const auto model = report_model(m, progress, load_results(state), load_staircases(state));
    REQUIRE(model.charts.size() == 1);
    const auto& chart = model.charts[0];
    REQUIRE(chart.rows.size() == 4);  // three steps, then the library baseline
    CHECK(chart.rows[3].baseline);
    CHECK(chart.rows[3].label == "cub::DeviceTransform");
    const std::string svg = staircase_svg(chart);
    CHECK(balanced(svg));
    // The bars: the width of each row's first rect is proportional to its % of copy bandwidth.
    static const std::regex row(
        R"re(<g class="row" data-label="([^"]+)" data-us="([\d.]+)" data-percent="([\d.]+)">[\s\S]*?<rect class="(bar|base)"[^>]*width="([\d.]+)")re");
    std::vector<std::pair<double, double>> bars;  // percent, width
    for (std::sregex_iterator it(svg.begin(), svg.end(), row), end; it != end; ++it)
        bars.emplace_back(std::stod((*it)[3]), std::stod((*it)[5]));
    REQUIRE(bars.size() == 4);
    for (const auto& [percent, width] : bars)
        CHECK_THAT(width / percent, WithinAbs(bars[0].second / bars[0].first, 0.05));
    // 800 µs for 3.22 GB is 4026 GB/s, 95.6% of 4210 GB/s; half the speed, half the bar.
    CHECK_THAT(bars[0].first, WithinAbs(95.6, 0.1));
    CHECK_THAT(bars[1].second, WithinAbs(bars[0].second / 2, 0.2));
    CHECK_THAT(svg, ContainsSubstring("class=\"ref\""));  // the reference under each step
}

// A compute-bound lesson (GEMM): its bars are shares of the FP32 rate, and a roofline places
// each row at its FLOP per byte under the copy rate's slope and the FP32 rate's ceiling.
TEST_CASE("a compute-bound lesson's chart shows shares of the FP32 rate and a roofline",
          "[report]") {
    LessonChart chart;
    chart.lesson = "10_gemm";
    chart.copy_gbps = 3000;
    chart.fp32_gflops = 50000;  // ridge: 16.7 FLOP per byte
    ChartRow naive;
    naive.label = "01_naive";
    naive.median_us = 27490;
    naive.gflops = 5000;
    naive.percent_of_fp32 = 10;
    naive.percent_of_copy = 0.2;
    naive.intensity = 512;
    ChartRow tiled = naive;
    tiled.label = "07_pipelined";
    tiled.median_us = 3437;
    tiled.gflops = 40000;
    tiled.percent_of_fp32 = 80;
    ChartRow skinny = tiled;
    skinny.label = "cublasSgemm";
    skinny.baseline = true;
    skinny.intensity = 8;  // left of the ridge: memory-bound there
    skinny.gflops = 20000;
    chart.rows = {naive, tiled, skinny};
    REQUIRE(chart.compute_bound());
    const std::string bars = staircase_svg(chart);
    CHECK_THAT(bars,
               ContainsSubstring(
                   "data-label=\"07_pipelined\" data-us=\"3437.000\" data-percent=\"80.00\""));
    const std::string roof = roofline_svg(chart);
    REQUIRE_FALSE(roof.empty());
    CHECK(balanced(roof));
    CHECK_THAT(roof, ContainsSubstring("data-ridge=\"16.67\""));
    // Each point's place: x by log10(intensity), y by log10(GFLOP/s), on one scale.
    static const std::regex point(
        R"re(data-label="([^"]+)" data-intensity="([\d.]+)" data-gflops="([\d.]+)">[\s\S]*?cx="([\d.]+)" cy="([\d.]+)")re");
    std::vector<std::array<double, 4>> points;  // intensity, gflops, x, y
    for (std::sregex_iterator it(roof.begin(), roof.end(), point), end; it != end; ++it)
        points.push_back(
            {std::stod((*it)[2]), std::stod((*it)[3]), std::stod((*it)[4]), std::stod((*it)[5])});
    REQUIRE(points.size() == 3);
    CHECK(points[0][2] == points[1][2]);  // the same intensity, the same x
    // 8x the FLOP/s is log10(8) higher; 64x the intensity log10(64) further right.
    const double per_decade_y = (points[0][3] - points[1][3]) / std::log10(8.0);
    CHECK_THAT(points[2][3] - points[1][3], WithinAbs(per_decade_y * std::log10(2.0), 0.5));
    CHECK(points[2][2] < points[1][2]);
    // A memory-bound chart has no roofline, and its bars stay shares of the copy rate.
    for (auto& r : chart.rows) r.intensity = 0;
    CHECK_FALSE(chart.compute_bound());
    CHECK(roofline_svg(chart).empty());
    CHECK_THAT(staircase_svg(chart), ContainsSubstring("data-percent=\"0.20\""));
}

TEST_CASE("cudalings report writes a self-contained page that a browser opens", "[report][cli]") {
    const std::string state = state_with_timings();
    const std::string out = flow::temp_dir("html") + "/report.html";
    auto r = flow::cudalings({"report", "--out", out}, {{"CUDALINGS_STATE_DIR", state}});
    REQUIRE(r.code == 0);
    const std::string html = flow::read(out);
    CHECK_THAT(html, ContainsSubstring("<svg class=\"staircase\" data-lesson=\"01_vector_add\""));
    CHECK_THAT(html, ContainsSubstring("<svg class=\"progress\""));
    // Nothing is fetched: no scripts, stylesheets or images from elsewhere.
    CHECK(html.find("<script") == std::string::npos);
    CHECK(html.find("<link") == std::string::npos);
    CHECK(std::regex_search(html, std::regex(R"(https?://(?!www\.w3\.org/2000/svg))")) == false);
    // A real browser, where one is installed.
    const auto page = flow::headless_browser(out, {"--dump-dom"});
    if (!page.browser) SKIP(flow::kNoBrowser);
    REQUIRE(page.ok);
    // The browser's own parse of the page: the staircase's rows, its bars, its labels.
    CHECK_THAT(page.out, ContainsSubstring("data-lesson=\"01_vector_add\""));
    CHECK_THAT(page.out, ContainsSubstring("cub::DeviceTransform"));
    CHECK_THAT(page.out, ContainsSubstring("781.0 µs"));
    const std::string png = flow::temp_dir("screenshot") + "/report.png";
    auto shot = flow::headless_browser(out, {"--window-size=1000,1400", "--screenshot=" + png});
    CHECK(shot.ok);
    CHECK(std::filesystem::file_size(png) > 10000);
}

// A stored run's page (report --from): the lesson's staircase and roofline from the results file
// alone, each point where the file's own time and work put it, and no progress (the page is not
// the learner's). The GEMM run of the H100 stored for lesson 10's README.
TEST_CASE("cudalings report --from draws a stored run's staircases and rooflines",
          "[report][cli]") {
    const std::string stored =
        std::string(CUDALINGS_SOURCE_DIR) + "/docs/results/h100-80gb-hbm3-2026-12-06-gemm.json";
    const std::string out = flow::temp_dir("stored") + "/run.html";
    auto r = flow::cudalings({"report", "--from", stored, "--out", out},
                             {{"CUDALINGS_STATE_DIR", flow::temp_dir("empty-state")}});
    INFO(r.err);
    REQUIRE(r.code == 0);
    const std::string html = flow::read(out);
    // Every SVG of the page is well formed.
    const std::regex svg(R"(<svg[\s\S]*?</svg>)");
    for (std::sregex_iterator it(html.begin(), html.end(), svg), end; it != end; ++it)
        CHECK(balanced(it->str()));
    CHECK_THAT(html, ContainsSubstring("NVIDIA H100 80GB HBM3"));
    CHECK(html.find("<svg class=\"progress\"") == std::string::npos);
    CHECK_THAT(html, ContainsSubstring("<svg class=\"staircase\" data-lesson=\"10_gemm\""));
    CHECK_THAT(html, ContainsSubstring("<svg class=\"roofline\" data-lesson=\"10_gemm\""));
    // Every row of the file's GEMM staircase is a point, at its FLOP/s from its first cell.
    const auto j = nlohmann::json::parse(flow::read(stored));
    int points = 0;
    for (const auto& st : j["staircases"]) {
        if (st["lesson"] != "10_gemm") continue;
        for (const auto& row : st["rows"]) {
            const auto& cell = row["cells"][0];
            const double gflops =
                cell["fp32_ops"].get<double>() / cell["median_us"].get<double>() / 1000.0;
            std::smatch m;
            const std::string label = row["label"].get<std::string>();
            const std::regex point("<g class=\"point\" data-label=\"" +
                                   std::regex_replace(label, std::regex(R"([()\[\].+*?^$|\\])"),
                                                      R"(\$&)") +
                                   "\" data-intensity=\"([0-9.]+)\" data-gflops=\"([0-9.]+)\"");
            INFO(label);
            REQUIRE(std::regex_search(html, m, point));
            CHECK_THAT(std::stod(m[2]), WithinAbs(gflops, 0.1));
            CHECK_THAT(std::stod(m[1]), WithinAbs(cell["fp32_ops"].get<double>() /
                                                      cell["bytes"].get<double>(),
                                                  0.01));
            ++points;
        }
    }
    CHECK(points >= 8);  // seven steps and cuBLAS
    // A file that is no results file is refused, with why.
    const std::string bogus = flow::temp_dir("bogus") + "/x.json";
    flow::write(bogus, "{\"a\": 1}\n");
    auto refused = flow::cudalings({"report", "--from", bogus, "--out", out});
    CHECK(refused.code != 0);
    CHECK_THAT(refused.err, ContainsSubstring("not a results file"));
}
