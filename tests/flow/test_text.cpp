// Terminal text: widths as a terminal shows them, padding by width, suggestions, and the
// colour decision from NO_COLOR, FORCE_COLOR and TERM; and the command line's strictness.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cstdlib>
#include <set>
#include <sstream>

#include "flow_support.h"
#include "report.h"
#include "text.h"

using Catch::Matchers::ContainsSubstring;
using namespace cudalings;

TEST_CASE("display width counts columns, not bytes", "[text]") {
    CHECK(display_width("781.0 ms") == 8);
    CHECK(display_width("781.0 µs") == 8);                  // µ: two bytes, one column
    CHECK(display_width("\033[1;32mPASS\033[0m") == 4);     // colour takes no room
    CHECK(display_width("e\xCC\x81") == 1);                 // e + combining acute accent
    CHECK(display_width("\xE5\x8A\xA0\xE6\xB3\x95") == 4);  // two CJK characters, two columns each
    CHECK(display_width("\xFF") == 1);                      // a stray byte still takes a column
    CHECK(pad_right("781.0 µs", 10) == "781.0 µs  ");
    CHECK(pad_left("µs", 4) == "  µs");
    CHECK(display_width(pad_right("\xE5\x8A\xA0", 5)) == 5);
}

TEST_CASE("progress bars fill in proportion", "[text]") {
    CHECK(progress_bar(0, 22, 10, false) == "[----------]");
    CHECK(progress_bar(11, 22, 10, false) == "[#####-----]");
    CHECK(progress_bar(22, 22, 10, false) == "[##########]");
    CHECK(display_width(progress_bar(5, 22, 30, true)) == 32);
}

TEST_CASE("suggestions for what was mistyped", "[text]") {
    const std::vector<std::string> commands{"check", "list", "hint", "watch", "reset", "doctor"};
    CHECK(closest("chek", commands).front() == "check");
    CHECK(closest("docter", commands).front() == "doctor");
    CHECK(closest("frobnicate", commands).empty());
    CHECK_THAT(did_you_mean("lst", commands), ContainsSubstring("`list`"));
    CHECK(did_you_mean("zzzzzz", commands).empty());
}

TEST_CASE("colour follows NO_COLOR, FORCE_COLOR and TERM=dumb", "[text]") {
    const int fd = 1;  // not a terminal under ctest
    ::unsetenv("NO_COLOR");
    ::setenv("FORCE_COLOR", "1", 1);
    CHECK(color_wanted(fd, false));
    CHECK_FALSE(color_wanted(fd, true));  // --no-color wins
    ::setenv("NO_COLOR", "1", 1);
    CHECK_FALSE(color_wanted(fd, false));  // NO_COLOR wins over FORCE_COLOR
    ::unsetenv("NO_COLOR");
    ::setenv("FORCE_COLOR", "0", 1);
    CHECK_FALSE(color_wanted(fd, false));
    ::unsetenv("FORCE_COLOR");
    ::setenv("TERM", "dumb", 1);
    CHECK_FALSE(live_terminal(fd));
}

TEST_CASE("the command line is strict and helps", "[text][cli]") {
    auto chek = flow::cudalings({"chek"});
    CHECK(chek.code == 2);
    CHECK_THAT(chek.err, ContainsSubstring("did you mean `check`"));
    auto option = flow::cudalings({"check", "--seeed", "5"});
    CHECK(option.code == 2);
    CHECK_THAT(option.err, ContainsSubstring("did you mean `--seed`"));
    auto negative_seed = flow::cudalings({"check", "1/1", "--seed", "-5"});
    CHECK(negative_seed.code == 2);
    CHECK_THAT(negative_seed.err, ContainsSubstring("hexadecimal"));
    auto negative_timeout = flow::cudalings({"check", "1/1", "--case-timeout", "-1"});
    CHECK(negative_timeout.code == 2);
    CHECK_THAT(negative_timeout.err, ContainsSubstring("above 0"));
    auto step = flow::cudalings({"hint", "grid_strid"});
    CHECK(step.code == 2);
    CHECK_THAT(step.err, ContainsSubstring("grid_stride_loop"));
    auto version = flow::cudalings({"--version"});
    CHECK(version.code == 0);
    CHECK_THAT(version.out, ContainsSubstring("cudalings "));
    auto hint_json = flow::cudalings({"hint", "1/1", "--json"});
    CHECK(hint_json.code == 0);
    CHECK_THAT(hint_json.out, ContainsSubstring("\"format_version\": 1"));
}

TEST_CASE("steps are named relative to the current folder, or by their bare name", "[cli]") {
    const std::string lesson = std::string(CUDALINGS_SOURCE_DIR) + "/lessons/01_vector_add";
    auto relative = flow::cudalings({"hint", "02_grid_stride_loop.cu"}, {}, lesson);
    CHECK(relative.code == 0);
    CHECK_THAT(relative.out, ContainsSubstring("01_vector_add/02_grid_stride_loop"));
    auto bare = flow::cudalings({"hint", "grid_stride_loop"});
    CHECK(bare.code == 0);
    CHECK_THAT(bare.out, ContainsSubstring("01_vector_add/02_grid_stride_loop"));
    auto outside =
        flow::cudalings({"list"}, {{"CUDALINGS_DEFAULT_ROOT", CUDALINGS_SOURCE_DIR}}, "/");
    CHECK(outside.code == 0);  // the wrapper's own course, from anywhere
}

TEST_CASE("tables line up by display width when µs and ms mix and labels are not ASCII",
          "[text][report]") {
    Staircase st;
    st.lesson = "02_reduce";
    st.copy_gbps = 4210;
    const double bytes = 4.0 * (1 << 28);
    const std::uint64_t n = std::uint64_t{1} << 28;
    auto row = [&](const char* label, double us, bool baseline) {
        return StaircaseRow{label, "", "reduce_sum", baseline, {{"", us, bytes, n, "n=2^28"}}};
    };
    st.rows.push_back(row("01_interleaved", 12345.0, false));     // 12.35 ms
    st.rows.push_back(row("09_vectorized_loads", 262.5, false));  // 262.5 µs
    st.rows.push_back(row("réduction_naïve", 999.0, false));      // accents
    st.rows.push_back(row("cub::DeviceReduce::Sum", 260.0, true));
    const std::string table = render_staircase(st, RenderOptions{});
    std::istringstream lines(table);
    std::string line;
    std::getline(lines, line);  // the title
    std::getline(lines, line);  // the header
    std::set<std::size_t> widths, bytes_per_line;
    while (std::getline(lines, line)) {
        widths.insert(display_width(line));
        bytes_per_line.insert(line.size());
    }
    CHECK(widths.size() == 1);         // every row ends in the same column
    CHECK(bytes_per_line.size() > 1);  // although their byte lengths differ

    StepReport ms, us;
    ms.step = "02_reduce/01_interleaved";
    us.step = "02_reduce/09_vectorized_loads";
    ms.verdict = us.verdict = Verdict::Pass;
    ms.timings.resize(1);
    us.timings.resize(1);
    ms.timings[0].learner.median_us = 12345.0;
    us.timings[0].learner.median_us = 262.5;
    const auto a = render_step_line(ms, 0, 22, RenderOptions{});
    const auto b = render_step_line(us, 9, 22, RenderOptions{});
    CHECK(a.substr(0, 7) == "[ 1/22]");
    CHECK(b.substr(0, 7) == "[10/22]");
    CHECK(display_width(a) == display_width(b));
}

TEST_CASE("moving past a passed step that was edited since says so", "[cli]") {
    const std::string state = flow::temp_dir("state");
    // The first step passed with other contents than its file has now.
    flow::write(state + "/progress.json",
                "{\"passed\": {\"01_vector_add/01_one_thread_per_element\": \"0123\"}}\n");
    auto r = flow::cudalings({"hint"}, {{"CUDALINGS_STATE_DIR", state}});
    CHECK(r.code == 0);
    CHECK_THAT(r.out, ContainsSubstring("02_grid_stride_loop"));  // the next unfinished one
    CHECK_THAT(r.err, ContainsSubstring("01_vector_add/01_one_thread_per_element changed since "
                                        "it passed"));
}

TEST_CASE("explain's metrics are shown once per step, for the largest case", "[report]") {
    StepReport r;
    r.step = "02_reduce/03_sequential_addressing";
    r.verdict = Verdict::Pass;
    for (std::uint64_t n : {1u, 1000u, 65539u}) {
        CaseResult c;
        c.n = n;
        c.name = "n=" + std::to_string(n);
        c.verdict = Verdict::Pass;
        c.detail =
            "step.cu:29: info: shared load: 1.0-way bank conflicts (n=" + std::to_string(n) + ")";
        c.emulator.push_back({"metric", "info", "step.cu", 29, c.detail, "", 1});
        r.cases.push_back(c);
    }
    // The largest sizes, checked for their launches only: a detail, no metrics.
    CaseResult launches;
    launches.n = 1u << 28;
    launches.name = "launches only: 2^28";
    launches.verdict = Verdict::Pass;
    launches.detail = "each launch of your step at these sizes was checked";
    r.cases.push_back(launches);
    const std::string text = render_text(r, RenderOptions{});
    CHECK(text.find("explain  (launches only") == std::string::npos);
    CHECK(text.find("explain  (n=65539)") != std::string::npos);
    CHECK(text.find("(n=65539)\n      step.cu:29") != std::string::npos);
    CHECK(text.find("(n=1)") == std::string::npos);  // once, not per case
    RenderOptions verbose;
    verbose.verbose = true;
    CHECK(render_text(r, verbose).find("(n=1)") != std::string::npos);  // -v: every case
}
