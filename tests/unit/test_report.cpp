#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <nlohmann/json.hpp>

#include "conclude.h"
#include "report.h"

using namespace cudalings;
using Catch::Matchers::ContainsSubstring;

namespace {
StepReport wrong_report() {
    StepReport r;
    r.step = "01_vector_add/01_one_thread_per_element";
    r.title = "One thread per element";
    r.verdict = Verdict::Wrong;
    r.reason = "n=33: unwritten output";
    r.seed = 0xabcdef;
    r.gpu = "NVIDIA H200";
    CaseResult pass;
    pass.name = "n=32, uniform in [-1, 1)";
    pass.n = 32;
    pass.verdict = Verdict::Pass;
    CaseResult fail;
    fail.index = 1;
    fail.name = "n=33, uniform in [-1, 1)";
    fail.n = 33;
    fail.verdict = Verdict::Wrong;
    fail.reason = "unwritten output";
    fail.wrong = 1;
    fail.unwritten = 1;
    fail.detail = "The last 1 element was never written";
    fail.first.push_back({32, "NaN (never written)", "0.25"});
    fail.tolerance = "bit-exact";
    r.cases = {pass, fail};
    r.pattern = "Only sizes that are not a multiple of 256 (the block size) fail";
    r.hint = "guard with if (i < n)";
    return r;
}
}  // namespace

TEST_CASE("a failing report names the case, the mismatch, the tolerance, the pattern and a hint",
          "[report]") {
    auto text = render_text(wrong_report(), {});
    CHECK_THAT(text, ContainsSubstring("1/2 correct"));
    CHECK_THAT(text, ContainsSubstring("n=33"));
    CHECK_THAT(text, ContainsSubstring("index 32: got NaN (never written), expected 0.25"));
    CHECK_THAT(text, ContainsSubstring("tolerance: bit-exact"));
    CHECK_THAT(text, ContainsSubstring("pattern: Only sizes"));
    CHECK_THAT(text, ContainsSubstring("hint: guard"));
    CHECK_THAT(text, ContainsSubstring("--seed 0000000000abcdef"));
    CHECK_THAT(text, ContainsSubstring("WRONG"));
    CHECK(text.find("\033[") == std::string::npos);  // no colour unless asked
    RenderOptions color;
    color.color = true;
    CHECK(render_text(wrong_report(), color).find("\033[") != std::string::npos);
}

TEST_CASE("a passing report shows time, bandwidth, percent of copy and the reference ratio",
          "[report]") {
    StepReport r;
    r.step = "01_vector_add/03_float4";
    r.verdict = Verdict::Pass;
    r.compile_cached = true;
    TimingResult t;
    t.n = 1u << 28;
    t.size = "n=2^28";
    t.bytes = 12.0 * (1u << 28);
    t.copy_gbps = 4300;
    t.learner = {true, 800, 798, 802, 790, 20, "spread below target"};
    t.reference = {true, 780, 779, 781, 775, 20, "spread below target"};
    r.timings = {t};
    auto text = render_text(r, {});
    CHECK_THAT(text, ContainsSubstring("compile  ok (cached)"));
    CHECK_THAT(text, ContainsSubstring("n = 2^28: 800.0 µs"));
    CHECK_THAT(text, ContainsSubstring("4.03 TB/s"));  // 3.22 GB / 800 µs
    CHECK_THAT(text, ContainsSubstring("93.6% of copy bandwidth"));
    CHECK_THAT(text, ContainsSubstring("0.97x the reference"));
    CHECK_THAT(text, ContainsSubstring("floor    749.1 µs"));
    CHECK_THAT(text, ContainsSubstring("PASS"));
    CHECK(text.find("hint") == std::string::npos);  // hints only for failures
}

TEST_CASE("a compile error shows the learner's file:line and the first error", "[report]") {
    StepReport r;
    r.step = "01_vector_add/01_one_thread_per_element";
    r.file = "lessons/01_vector_add/01_one_thread_per_element.cu";
    r.verdict = Verdict::CompileError;
    r.diagnostics = {{"lessons/01_vector_add/01_one_thread_per_element.cu", 11, "error",
                      "identifier \"blocks\" is undefined"},
                     {"lessons/01_vector_add/01_one_thread_per_element.cu", 12, "error", "x"}};
    r.compiler_output = "line one\nline two\n";
    auto text = render_text(r, {});
    CHECK_THAT(text,
               ContainsSubstring(
                   "01_one_thread_per_element.cu:11: error: identifier \"blocks\" is undefined"));
    CHECK_THAT(text, ContainsSubstring("the first of 2 errors"));
    CHECK_THAT(text, ContainsSubstring("| line two"));
    CHECK_THAT(text, ContainsSubstring("COMPILE_ERROR"));
    CHECK(text.find("reproduce") == std::string::npos);
}

TEST_CASE("JSON carries every field and reads back", "[report]") {
    auto r = wrong_report();
    auto j = to_json(r);
    CHECK(j["verdict"] == "WRONG");
    CHECK(j["seed"] == "0000000000abcdef");
    CHECK(j["cases"].size() == 2);
    CHECK(j["cases"][1]["first"][0]["index"] == 32);
    CHECK(j["timing"].is_null());
    CHECK(j["timings"].empty());
    auto back = step_report_from_json(nlohmann::json::parse(j.dump()));
    CHECK(back.verdict == Verdict::Wrong);
    CHECK(back.seed == 0xabcdef);
    CHECK(back.cases.size() == 2);
    CHECK(back.cases[1].unwritten == 1);
}

TEST_CASE("times are printed in units a learner reads", "[report]") {
    CHECK(format_time_us(781.23) == "781.2 µs");
    CHECK(format_time_us(9118) == "9118.0 µs");
    CHECK(format_time_us(12345) == "12.35 ms");
}

TEST_CASE("a step with several timed problems shows each, labelled", "[report]") {
    StepReport r;
    r.step = "06_histogram/04_vectorized";
    r.verdict = Verdict::Pass;
    for (const char* column : {"uniform", "all the same"}) {
        TimingResult t;
        t.column = column;
        t.size = "n=2^28";
        t.bytes = 4.0 * (1u << 28);
        t.learner = {true, 260, 259, 261, 258, 10, "spread below target"};
        r.timings.push_back(t);
    }
    auto text = render_text(r, {});
    CHECK_THAT(text, ContainsSubstring("time     uniform, n = 2^28: 260.0 µs"));
    CHECK_THAT(text, ContainsSubstring("time     all the same, n = 2^28: 260.0 µs"));
    auto back = step_report_from_json(nlohmann::json::parse(to_json(r).dump()));
    REQUIRE(back.timings.size() == 2);
    CHECK(back.timings[1].column == "all the same");
    CHECK(back.timings[1].learner.median_us == 260);
}

TEST_CASE("staircase ratios compare only rows that move the same bytes at the same size",
          "[report]") {
    Staircase st;
    st.lesson = "04_block_reduce";
    st.copy_gbps = 4000;
    const double n24 = 1 << 24, n28 = double(1u << 28);
    st.rows.push_back(
        {"01_atomic_sum", "", "atomic_sum", false, {{"", 9000, 4 * n24, 1u << 24, "n=2^24"}}});
    st.rows.push_back({"04_device_sum",
                       "",
                       "device_sum_deterministic",
                       false,
                       {{"", 500, 4 * n28, 1u << 28, "n=2^28"}}});
    st.rows.push_back(
        {"05_fast", "", "device_sum_fast", false, {{"", 250, 4 * n28, 1u << 28, "n=2^28"}}});
    auto j = to_json(st);
    // step 1 (2^24) is no base for step 4 (2^28): no "1899.99x" between different sizes
    CHECK(j["rows"][1]["cells"][0]["vs_previous"].is_null());
    CHECK(j["rows"][1]["cells"][0]["vs_first"] == 1.0);
    CHECK(j["rows"][2]["cells"][0]["vs_first"] == 2.0);
    CHECK(j["rows"][2]["cells"][0]["vs_previous"] == 2.0);
    auto text = render_staircase(st, {});
    CHECK_THAT(text, ContainsSubstring("2.00x"));
    CHECK(text.find("1899") == std::string::npos);
}

TEST_CASE("the verdict is decided in one place from what the check found", "[report]") {
    StepReport r;
    CaseResult ok;
    ok.verdict = Verdict::Pass;
    ok.n = 33;
    r.cases = {ok};
    conclude(r);
    CHECK(r.verdict == Verdict::Pass);
    // a timed output that was wrong fails the step, and says which call
    TimingResult t;
    t.size = "n=2^28";
    t.verified = false;
    t.failed_sample = 2;
    t.failure.verdict = Verdict::Wrong;
    t.failure.reason = "values";
    r.timings = {t};
    conclude(r);
    CHECK(r.verdict == Verdict::Wrong);
    CHECK_THAT(r.reason, ContainsSubstring("timed call 3"));
    CHECK(r.timings.empty());
    // Each timing below, alone in the step's record, concluded.
    auto conclude_with = [&r](const TimingResult& timing) {
        r.timings = {timing};
        conclude(r);
    };
    // faster than the memory allows: SUSPECT
    t.verified = true;
    t.bytes = 1e9;
    t.copy_gbps = 1000;  // floor 1000 µs
    t.learner = {true, 500, 500, 500, 500, 10, ""};
    t.host_median_us = 505;
    conclude_with(t);
    CHECK(r.verdict == Verdict::Suspect);
    // the host clock sees far more than the events: SUSPECT, and the reason names a shared GPU
    // as a cause (a correct step gets this when another process uses the GPU)
    t.copy_gbps = 4000;  // floor 250 µs: 500 µs is possible
    t.host_median_us = 5000;
    conclude_with(t);
    CHECK(r.verdict == Verdict::Suspect);
    CHECK_THAT(r.reason, ContainsSubstring("the GPU's clock does not see") &&
                             ContainsSubstring("Another process using this GPU"));
    // events longer than the host's interval: SUSPECT, without that cause
    t.host_median_us = 400;
    conclude_with(t);
    CHECK(r.verdict == Verdict::Suspect);
    CHECK_THAT(r.reason,
               ContainsSubstring("more time than passed") && !ContainsSubstring("Another process"));
    // clocks that agree: PASS
    t.host_median_us = 520;
    conclude_with(t);
    CHECK(r.verdict == Verdict::Pass);
    // through the judge split: a claim half what the judge's clock saw beyond its round trip
    // (the old rule would believe it), SUSPECT
    t.host_overhead_us = 60;
    t.host_overhead_iqr_us = 5;
    t.host_median_us = 1060;
    conclude_with(t);
    CHECK(r.verdict == Verdict::Suspect);
    CHECK_THAT(r.reason, ContainsSubstring("far below what the checker's own clock saw"));
    t.host_median_us = 570;  // the honest claim's round trip
    conclude_with(t);
    CHECK(r.verdict == Verdict::Pass);
    // the judge's own flush between the calls far slower than before the learner's code was
    // loaded: the GPU was shared, SUSPECT, said before the clocks (which disagree then too)
    t.flush_before_us = 130;
    t.flush_us = 1400;
    t.host_median_us = 1060;
    conclude_with(t);
    CHECK(r.verdict == Verdict::Suspect);
    CHECK_THAT(r.reason, ContainsSubstring("busy with other work between your calls"));
    t.flush_us = 140;
    t.host_median_us = 570;
    conclude_with(t);
    CHECK(r.verdict == Verdict::Pass);
    // the reference timed apart: a process beyond the checker's own on the GPU around its
    // phases (NVML) makes the comparison SUSPECT; none, or a count NVML could not take, does not
    t.others_on_gpu = 1;
    conclude_with(t);
    CHECK(r.verdict == Verdict::Suspect);
    CHECK_THAT(r.reason, ContainsSubstring("while the reference was timed"));
    for (int others : {0, -1}) {
        t.others_on_gpu = others;
        conclude_with(t);
        CHECK(r.verdict == Verdict::Pass);
    }
    // the worst case decides; the problem's advice for that verdict is shown
    CaseResult hang;
    hang.verdict = Verdict::Timeout;
    hang.name = "n=2^24";
    hang.reason = "kernel did not finish";
    r.cases.push_back(hang);
    r.advice_by_verdict = {{"TIMEOUT", "clear the status words"}};
    conclude(r);
    CHECK(r.verdict == Verdict::Timeout);
    CHECK(r.reason == "n=2^24: kernel did not finish");
    CHECK(r.advice == "clear the status words");
}

TEST_CASE("advice qualified by the words of the reason fits only that kind of error", "[report]") {
    const std::vector<std::pair<std::string, std::string>> advice = {
        {"MEMORY_ERROR/out of bounds|Invalid __global__ read", "use the boundary rule"},
        {"TIMEOUT", "clear the status words"}};
    CHECK(advice_for(advice, "MEMORY_ERROR",
                     "n=5: hazard (CPU emulator), line 40: read in[5]: out of bounds of a "
                     "20-byte array (4 bytes past its end)") == "use the boundary rule");
    CHECK(advice_for(advice, "MEMORY_ERROR",
                     "sanitizer (memcheck): Invalid __global__ read of size 4 bytes at line 9") ==
          "use the boundary rule");
    // a skipped barrier is a MEMORY_ERROR too, but the advice about reads does not fit it
    CHECK(advice_for(advice, "MEMORY_ERROR", "n=1: emulator: skipped-barrier").empty());
    CHECK(advice_for(advice, "TIMEOUT", "kernel did not finish") == "clear the status words");
    // a plain key is the fallback when no qualified one matches
    const std::vector<std::pair<std::string, std::string>> both = {
        {"MEMORY_ERROR", "general words"}, {"MEMORY_ERROR/race", "add the barrier"}};
    CHECK(advice_for(both, "MEMORY_ERROR", "emulator: race") == "add the barrier");
    CHECK(advice_for(both, "MEMORY_ERROR", "emulator: uninitialised-shared") == "general words");
    CHECK(advice_for(both, "WRONG", "values").empty());
}

namespace {

// A picture of one access: `lanes` active, global (sectors, ideal) or shared (degree).
AccessPicture goal_picture(const std::string& array, bool shared, bool store, unsigned bytes,
                           unsigned lanes, unsigned cost, unsigned ideal, int line = 40) {
    AccessPicture p;
    p.file = "/nonexistent/step.cu";
    p.line = line;
    p.case_name = "255×257, value = row·4096 + column";
    p.array = array;
    p.shared = shared;
    p.store = store;
    p.bytes = bytes;
    p.active = lanes;
    if (shared) {
        p.degree = cost;
        p.wavefronts = cost;
        p.ideal_wavefronts = ideal;
    } else {
        for (unsigned i = 0; i < cost; ++i) p.sectors.push_back(32 * i);
        p.ideal_sectors = ideal;
    }
    return p;
}

}  // namespace

TEST_CASE("performance goals are met or not from the pictures, and say why", "[report]") {
    const PerformanceGoal banks{"bank-conflicts", "tile", "", 16, "no bank conflicts"};
    const PerformanceGoal reads{"coalesced", "in", "load", 16, "coalesced reads"};
    const PerformanceGoal wide{"vector-width", "in", "load", 16, "float4 reads"};
    // A padded tile, coalesced 4-byte reads whose odd rows start mid-sector (5 where 4 do).
    auto results =
        evaluate_goals({banks, reads, wide}, {goal_picture("tile", true, false, 4, 32, 1, 1),
                                              goal_picture("in", false, false, 4, 32, 5, 4),
                                              goal_picture("out", false, true, 4, 32, 32, 4)});
    REQUIRE(results.size() == 3);
    CHECK((results[0].measured && results[0].met));
    CHECK((results[1].measured && results[1].met));  // the strided store is not about `in`
    CHECK((results[2].measured && !results[2].met));
    CHECK_THAT(results[2].evidence, Catch::Matchers::ContainsSubstring("moves 4 B per lane"));
    // An unpadded tile; strided reads; a ragged tail of 3 lanes does not count against reads.
    results = evaluate_goals({banks, reads}, {goal_picture("tile", true, false, 4, 32, 32, 1, 56),
                                              goal_picture("in", false, false, 4, 32, 16, 4, 41),
                                              goal_picture("in", false, false, 4, 3, 3, 1, 60)});
    CHECK((results[0].measured && !results[0].met));
    CHECK(results[0].evidence == "line 56: 32-way bank conflict (the worst warp of case 255×257)");
    CHECK(!results[1].met);
    CHECK(results[1].evidence ==
          "line 41: 16 sectors where 4 would do (the worst warp of case "
          "255×257)");
    // No access to the array: not measured, whatever else was seen.
    results = evaluate_goals({banks}, {goal_picture("other", true, false, 4, 32, 1, 1)});
    CHECK(!results[0].measured);
    CHECK(!results[0].met);
    // A report says each goal beside its verdict and never changes it.
    StepReport r;
    r.step = "08_transpose/04_padded_tile";
    r.verdict = Verdict::Pass;
    r.goals = evaluate_goals({banks}, {goal_picture("tile", true, false, 4, 32, 32, 1, 56)});
    const std::string text = render_text(r, RenderOptions{});
    CHECK_THAT(text, Catch::Matchers::ContainsSubstring(
                         "  goal     not met: no bank conflicts — line 56: 32-way bank conflict"));
    CHECK(text.rfind("PASS") != std::string::npos);
    const StepReport back = step_report_from_json(to_json(r));
    REQUIRE(back.goals.size() == 1);
    CHECK(back.goals[0].evidence == r.goals[0].evidence);
    CHECK(!back.goals[0].met);
}

namespace {
CaseResult clue_case(int index, std::uint64_t n, Verdict v, const std::string& key, bool alone) {
    CaseResult c;
    c.index = index;
    c.name = "n=" + std::to_string(n);
    c.n = n;
    c.verdict = v;
    c.reason = v == Verdict::Wrong ? "values" : "";
    if (!key.empty())
        c.clue = {key, "wrong only at the end of each tile of 256", "the right halo, advice",
                  alone};
    return c;
}
}  // namespace

// A judge's clue (kit::Clue) is the step's lead only where every failing case fits it: at least
// two of them, all WRONG with the same key, one that shows it alone.
TEST_CASE("a clue every failing case carries leads the step's reason, and only then", "[report]") {
    StepReport r;
    r.cases = {clue_case(0, 31, Verdict::Pass, "", false),
               clue_case(1, 255, Verdict::Wrong, "tile-end:256", false),
               clue_case(2, 513, Verdict::Wrong, "tile-end:256", true),
               clue_case(3, 1u << 20, Verdict::Skipped, "", false)};
    conclude(r);
    CHECK(r.verdict == Verdict::Wrong);
    CHECK(r.reason == "wrong only at the end of each tile of 256; the first: n=255: values");
    CHECK(r.pattern == "the right halo, advice");

    // No case shows it alone: the evidence also fits another cause.
    StepReport weak = r;
    weak.cases[2].clue.alone = false;
    conclude(weak);
    CHECK(weak.reason == "n=255: values");
    CHECK(weak.pattern.empty());

    // One failing case without the clue (or with another key): no lead.
    StepReport mixed = r;
    mixed.cases.push_back(clue_case(4, 4097, Verdict::Wrong, "", false));
    conclude(mixed);
    CHECK(mixed.reason == "n=255: values");
    StepReport other = r;
    other.cases[1].clue.key = "tile-end:512";
    conclude(other);
    CHECK(other.reason == "n=255: values");

    // A single failing case is no pattern across cases.
    StepReport one = r;
    one.cases.erase(one.cases.begin() + 1);
    conclude(one);
    CHECK(one.reason == "n=513: values");
}

// 2-D cases: the shapes that ran are the evidence; those not run (emulated, after a smaller
// failure) count neither way, and the lesson's advice qualified by the fact is chosen.
TEST_CASE("only non-square failures, every square passing, lead the reason of a 2-D step",
          "[report]") {
    auto shape = [](int index, std::uint64_t rows, std::uint64_t cols, Verdict v) {
        CaseResult c;
        c.index = index;
        c.name = std::to_string(rows) + "×" + std::to_string(cols);
        c.rows = rows;
        c.cols = cols;
        c.n = rows * cols;
        c.verdict = v;
        c.reason = v == Verdict::Wrong ? "unwritten output" : "";
        return c;
    };
    StepReport r;
    r.cases = {shape(0, 1, 1, Verdict::Pass), shape(1, 1, 33, Verdict::Wrong),
               shape(2, 33, 1, Verdict::Wrong), shape(3, 32, 32, Verdict::Pass),
               shape(4, 16384, 16384, Verdict::Skipped)};
    r.advice_by_verdict = {{"WRONG/only the non-square shapes fail", "the lesson's words"}};
    conclude(r);
    CHECK(r.reason ==
          "only the non-square shapes fail (every square one passed); the first: 1×33: "
          "unwritten output");
    CHECK_THAT(r.pattern, ContainsSubstring("rows and cols are swapped"));
    CHECK(r.advice == "the lesson's words");

    StepReport square_fails = r;
    square_fails.cases[3].verdict = Verdict::Wrong;
    square_fails.cases[3].reason = "values";
    conclude(square_fails);
    CHECK(square_fails.reason == "1×33: unwritten output");
    CHECK(square_fails.advice.empty());
}

// A compute-bound problem (kit::Traffic::fp32): GEMM at 4096^3, 2mnk operations, its minimal
// bytes A, B and C read, C written.
TEST_CASE("a compute-bound step shows its FLOP rate, its share of the FP32 rate and its intensity",
          "[report]") {
    const double m = 4096, ops = 2 * m * m * m, bytes = 4 * (3 * m * m + m * m);
    StepReport r;
    r.step = "10_gemm/07_register_pipelining";
    r.verdict = Verdict::Pass;
    TimingResult t;
    t.size = "4096×4096";
    t.bytes = bytes;
    t.fp32_ops = ops;
    t.copy_gbps = 3000;
    t.fp32_gflops = 50000;
    t.learner = {true, 3437.0, 3430, 3440, 3420, 20, "spread below target"};
    r.timings = {t};
    // 137.4 GFLOP in 3437 µs: 40.0 TFLOP/s, 80.0% of 50 TFLOP/s; 512 FLOP per byte.
    const auto text = render_text(r, {});
    CHECK_THAT(text,
               ContainsSubstring("compute  39.99 TFLOP/s  80.0% of the FP32 rate (50.00 TFLOP/s)"));
    CHECK_THAT(text, ContainsSubstring("512.0 FLOP per byte moved"));
    CHECK_THAT(render_step_line(r, 0, 1, {}), ContainsSubstring("80.0% of FP32"));
    const auto j = to_json(r);
    CHECK(j["timings"][0]["intensity"].get<double>() == 512.0);
    CHECK(std::abs(j["timings"][0]["learner"]["percent_of_fp32"].get<double>() - 79.97) < 0.01);
    CHECK(step_report_from_json(j).timings[0].fp32_ops == ops);

    // Without the FP32 rate (not measured) the rate and the intensity are still shown.
    r.timings[0].fp32_gflops = 0;
    CHECK_THAT(render_text(r, {}), ContainsSubstring("compute  39.99 TFLOP/s; 512.0 FLOP"));
    CHECK_FALSE(to_json(r)["timings"][0]["learner"].contains("percent_of_fp32"));

    // A memory-bound step has no compute line.
    r.timings[0].fp32_ops = 0;
    CHECK(render_text(r, {}).find("compute ") == std::string::npos);

    // The staircase: % of the FP32 rate beside % of copy, kept through its JSON.
    Staircase st;
    st.lesson = "10_gemm";
    st.copy_gbps = 3000;
    st.fp32_gflops = 50000;
    st.rows.push_back({"01_naive", "", "gemm", false, {{"", 27490, bytes, 0, "4096×4096", ops}}});
    st.rows.push_back(
        {"07_pipelined", "", "gemm", false, {{"", 3437, bytes, 0, "4096×4096", ops}}});
    const auto sj = to_json(st);
    CHECK(sj["fp32_gflops"] == 50000.0);
    CHECK(std::abs(sj["rows"][1]["cells"][0]["percent_of_fp32"].get<double>() - 79.97) < 0.01);
    CHECK(std::abs(sj["rows"][0]["cells"][0]["percent_of_fp32"].get<double>() - 10.0) < 0.01);
    CHECK(sj["rows"][0]["cells"][0]["intensity"] == 512.0);
    const Staircase back = staircase_from_json(sj);
    CHECK(back.fp32_gflops == 50000.0);
    CHECK(back.rows[1].cells[0].fp32_ops == ops);
    const auto table = render_staircase(st, {});
    CHECK_THAT(table, ContainsSubstring("% fp32"));
    CHECK_THAT(table, ContainsSubstring(" 80.0%"));
    // A memory-bound staircase has no such column.
    for (auto& row : st.rows) row.cells[0].fp32_ops = 0;
    CHECK(render_staircase(st, {}).find("% fp32") == std::string::npos);
}
