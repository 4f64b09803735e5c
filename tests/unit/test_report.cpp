#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <nlohmann/json.hpp>

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
    CaseReport pass;
    pass.name = "n=32, uniform in [-1, 1)";
    pass.n = 32;
    pass.verdict = Verdict::Pass;
    CaseReport fail;
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
    r.timing.present = true;
    r.timing.n = 1u << 28;
    r.timing.bytes = 12.0 * (1u << 28);
    r.timing.copy_gbps = 4300;
    r.timing.learner = {true, 800, 798, 802, 790, 20, "spread below target"};
    r.timing.reference = {true, 780, 779, 781, 775, 20, "spread below target"};
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
