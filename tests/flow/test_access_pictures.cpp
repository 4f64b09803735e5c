// --explain's access pictures (checker/core/run/access_picture.h): the text `check --explain`
// prints for a real lesson step on the emulator, the record it leaves for `cudalings report`, and
// the report's SVG (one diagram per access line, with the lanes, sectors, banks and links the
// picture holds), opened in a headless browser where one is installed.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <regex>
#include <sstream>

#include "access_picture.h"
#include "flow_support.h"
#include "history.h"
#include "html_report.h"
#include "supervise.h"

using Catch::Matchers::ContainsSubstring;
using namespace cudalings;
namespace fs = std::filesystem;

namespace {

std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

// The SVG elements of the report, one string each.
std::vector<std::string> access_svgs(const std::string& html) {
    std::vector<std::string> out;
    for (auto at = html.find("<svg class=\"access\""); at != std::string::npos;
         at = html.find("<svg class=\"access\"", at + 1))
        out.push_back(html.substr(at, html.find("</svg>", at) - at));
    return out;
}

// A picture in the emulator's format: `offset(lane)` for the active lanes.
template <typename F>
AccessPicture global_picture(int line, unsigned active, F offset) {
    nlohmann::json offsets = nlohmann::json::array(), lane_sector = nlohmann::json::array();
    std::vector<long long> sectors;
    for (unsigned lane = 0; lane < 32; ++lane) {
        if (lane >= active) {
            offsets.push_back(nullptr);
            continue;
        }
        const long long o = offset(lane);
        offsets.push_back(o);
        if (std::find(sectors.begin(), sectors.end(), o / 32 * 32) == sectors.end())
            sectors.push_back(o / 32 * 32);
    }
    for (unsigned lane = 0; lane < 32; ++lane)
        if (lane < active)
            lane_sector.push_back(
                std::find(sectors.begin(), sectors.end(), offset(lane) / 32 * 32) -
                sectors.begin());
        else
            lane_sector.push_back(nullptr);
    return access_picture_from_json({{"v", 1},
                                     {"file", "/course/lessons/step.cu"},
                                     {"line", line},
                                     {"message", "global load"},
                                     {"space", "global"},
                                     {"op", "load"},
                                     {"bytes", 4},
                                     {"array", "in"},
                                     {"active", active},
                                     {"offsets", offsets},
                                     {"sectors", sectors},
                                     {"lane_sector", lane_sector},
                                     {"lines", (sectors.back() - sectors.front()) / 128 + 1},
                                     {"ideal_sectors", (active * 4 + 31) / 32}});
}

AccessPicture shared_column(int line) {
    nlohmann::json offsets = nlohmann::json::array(), banks = nlohmann::json::array();
    for (int lane = 0; lane < 32; ++lane) {
        offsets.push_back(128 * lane);
        banks.push_back(0);
    }
    return access_picture_from_json({{"v", 1},
                                     {"file", "step.cu"},
                                     {"line", line},
                                     {"message", "shared load"},
                                     {"space", "shared"},
                                     {"op", "load"},
                                     {"bytes", 4},
                                     {"array", "tile"},
                                     {"active", 32},
                                     {"offsets", offsets},
                                     {"banks", banks},
                                     {"degree", 32},
                                     {"wavefronts", 32},
                                     {"ideal_wavefronts", 1}});
}

}  // namespace

TEST_CASE("access pictures: text within 80 columns and the verdict of each pattern", "[report]") {
    const auto coalesced = global_picture(10, 32, [](unsigned l) { return 4ll * l; });
    const auto strided = global_picture(11, 32, [](unsigned l) { return 8ll * l; });
    const auto partial = global_picture(12, 20, [](unsigned l) { return 4ll * l; });
    const auto column = shared_column(13);
    CHECK(access_verdict(coalesced) == "4 sectors = coalesced");
    CHECK(access_verdict(strided) == "8 sectors where 4 would do (2.0x the traffic)");
    CHECK(access_verdict(partial) == "3 sectors = coalesced");
    CHECK(access_verdict(column) == "32-way bank conflict (32 wavefronts where 1 would do)");
    const std::string text = access_text(strided, "      ");
    CHECK_THAT(text, ContainsSubstring("step.cu:11  global load of in (4 B per lane, 32 lanes)"));
    CHECK_THAT(text, ContainsSubstring("sector  00001111222233334444555566667777\n"));
    CHECK_THAT(access_text(partial, ""),
               ContainsSubstring("sector  00000000111111112222............\n"));
    // Two digit rows where a value reaches 10: the banks' tens, then their ones.
    const std::string banks = access_text(column, "");
    CHECK_THAT(banks, ContainsSubstring("bank    00000000000000000000000000000000\n"));
    std::istringstream lines(text + banks);
    std::string line;
    while (std::getline(lines, line)) CHECK(line.size() <= 80);
}

TEST_CASE("access pictures: the report draws one SVG per access line with the right counts",
          "[report]") {
    ReportModel model;
    model.lessons.push_back({"08_transpose", "Transpose", {}});
    StepPictures sp{"08_transpose", "03_shared_tile", {}};
    sp.pictures = {global_picture(10, 32, [](unsigned l) { return 4ll * l; }),
                   global_picture(11, 32, [](unsigned l) { return 8ll * l; }),
                   global_picture(12, 20, [](unsigned l) { return 4ll * l; }), shared_column(13)};
    model.pictures.push_back(sp);
    const std::string html = render_html_report(model);
    const auto svgs = access_svgs(html);
    REQUIRE(svgs.size() == 4);
    const std::size_t sectors[] = {4, 8, 3}, active[] = {32, 32, 20, 32};
    for (std::size_t i = 0; i < svgs.size(); ++i) {
        INFO(svgs[i]);
        CHECK(count(svgs[i], "<rect class=\"lane") == 32);
        CHECK(count(svgs[i], "<rect class=\"lane idle") == 32 - active[i]);
        CHECK(count(svgs[i], "<line class=\"link") == active[i]);
        if (i < 3) {
            CHECK(count(svgs[i], "<rect class=\"sector") == sectors[i]);
            CHECK_THAT(svgs[i], ContainsSubstring("data-sectors=\"" + std::to_string(sectors[i])));
        }
    }
    CHECK(count(svgs[0], "class=\"sector hot") == 0);  // coalesced: nothing to highlight
    CHECK(count(svgs[1], "class=\"sector hot") == 8);  // twice the sectors
    CHECK(count(svgs[1], "class=\"line128") == 2);     // 256 bytes: two lines
    CHECK(count(svgs[3], "<rect class=\"bank") == 32);
    CHECK(count(svgs[3], "<rect class=\"bank hot") == 1);  // every lane in bank 0
    CHECK(count(svgs[3], "<line class=\"link hot") == 32);
    CHECK_THAT(svgs[3], ContainsSubstring("32-way bank conflict"));
    CHECK_THAT(svgs[0], ContainsSubstring("step.cu:10"));
}

TEST_CASE("check --explain draws a lesson step's accesses; report draws them from the record",
          "[report][cli][emulate]") {
    // The shared-tile transpose (08/03) as the learner would have written it: its column read
    // of the tile is a 32-way bank conflict.
    const std::string root = flow::course_copy();
    fs::copy_file(root + "/solutions/08_transpose/03_shared_tile.cu",
                  root + "/lessons/08_transpose/03_shared_tile.cu",
                  fs::copy_options::overwrite_existing);
    const std::string state = flow::temp_dir("state");
    auto r = flow::cudalings({"check", "08_transpose/03", "--explain", "--emulate"},
                             {{"CUDALINGS_STATE_DIR", state}}, root);
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, ContainsSubstring("  access   one warp per access line"));
    CHECK_THAT(r.out, ContainsSubstring("shared load of tile (4 B per lane, 32 lanes)\n"
                                        "        32-way bank conflict"));
    CHECK_THAT(r.out, ContainsSubstring("        bank    00000000000000000000000000000000\n"));
    CHECK_THAT(r.out, ContainsSubstring("global store of output (4 B per lane, 32 lanes)\n"
                                        "        4 sectors = coalesced"));
    // The load into the tile, from a case wide enough for a whole warp (the largest case has
    // 4 columns).
    CHECK_THAT(r.out, ContainsSubstring("global load of in (4 B per lane, 32 lanes)"));
    CHECK_THAT(r.out, ContainsSubstring("shared store of tile (4 B per lane, 32 lanes)\n"
                                        "        no bank conflict"));
    // The record the report reads, and the page.
    const auto record = load_explained(state);
    REQUIRE(record.count("08_transpose/03_shared_tile"));
    const auto pictures = record.at("08_transpose/03_shared_tile")["access"]["pictures"];
    REQUIRE(pictures.size() >= 3);
    const std::string out = flow::temp_dir("html") + "/report.html";
    auto rep = flow::cudalings({"report", "--out", out}, {{"CUDALINGS_STATE_DIR", state}}, root);
    REQUIRE(rep.code == 0);
    const std::string html = flow::read(out);
    const auto svgs = access_svgs(html);
    CHECK(svgs.size() == pictures.size());
    std::size_t conflicts = 0;
    for (const auto& svg : svgs) conflicts += svg.find("data-degree=\"32\"") != std::string::npos;
    CHECK(conflicts == 1);
    // A later check without --explain leaves the pictures in place.
    r = flow::cudalings({"check", "08_transpose/03", "--emulate"}, {{"CUDALINGS_STATE_DIR", state}},
                        root);
    CHECK(r.code == 0);
    CHECK(r.out.find("one warp per access line") == std::string::npos);
    CHECK(load_explained(state).count("08_transpose/03_shared_tile"));
    // A real browser's parse of the page: the diagrams are in its DOM.
    const auto page = flow::headless_browser(out, {"--dump-dom"});
    if (!page.browser) SKIP(flow::kNoBrowser);
    REQUIRE(page.ok);
    const auto in_dom = access_svgs(page.out);
    CHECK(in_dom.size() == svgs.size());
    CHECK_THAT(page.out, ContainsSubstring("32-way bank conflict"));
    for (const auto& svg : in_dom) CHECK(count(svg, "<rect class=\"lane") == 32);
}

namespace {

// `check --explain --emulate` of a lesson file in a copy of the course, its output.
std::string explain_step(const std::string& root, const std::string& step) {
    auto r = flow::cudalings({"check", step, "--explain", "--emulate"},
                             {{"CUDALINGS_STATE_DIR", flow::temp_dir("state")}}, root);
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    return r.out;
}

// The picture block of an access in `--explain`'s text: from its heading line (which contains
// `heading`) to the next heading.
std::string picture_of(const std::string& out, const std::string& heading) {
    const auto at = out.find(heading);
    if (at == std::string::npos) return {};
    const auto next = out.find(".cu:", out.find('\n', at));
    return out.substr(at, next == std::string::npos ? std::string::npos : next - at);
}

}  // namespace

TEST_CASE("explain draws what the lessons mean: 08/1's strided store, 05/2 padded and not",
          "[report][cli][emulate]") {
    const std::string root = flow::course_copy();
    auto solve = [&](const std::string& lesson, const std::string& file) {
        fs::copy_file(root + "/solutions/" + lesson + "/" + file,
                      root + "/lessons/" + lesson + "/" + file,
                      fs::copy_options::overwrite_existing);
    };
    // 08/1: the store writes one element per output row, `rows` apart: 32 sectors for a warp.
    // (The smallest cases include a single input row, whose transposed store is contiguous: the
    // picture must come from a case that shows what the lesson means.)
    solve("08_transpose", "01_naive_rows.cu");
    std::string out = explain_step(root, "08_transpose/01");
    const std::string store = picture_of(out, "global store of output (4 B per lane, 32 lanes)");
    INFO(out);
    CHECK_THAT(store, ContainsSubstring("32 sectors where 4 would do (8.0x the traffic)"));
    CHECK_THAT(store, ContainsSubstring("the worst warp of case "));
    CHECK_THAT(picture_of(out, "global load of in (4 B per lane, 32 lanes)"),
               ContainsSubstring("would do (1.2x") || ContainsSubstring("4 sectors = coalesced"));
    // 05/2 padded (the solution): no shared access of either sweep has a conflict, in any round.
    solve("05_scan", "02_blelloch.cu");
    out = explain_step(root, "05_scan/02");
    CHECK(count(out, "shared load of s (4 B per lane, 32 lanes)") >= 3);
    CHECK(count(out, "bank conflict (") == 0);
    CHECK(count(out, "no bank conflict") >= 6);
    // Unpadded: the rounds of offset 16 put every lane in one bank. Each sweep's loads and
    // stores show it: a 32-way conflict, not the first round's 2-way.
    const std::string padded = flow::read(root + "/lessons/05_scan/02_blelloch.cu");
    const std::string flag = "constexpr bool kPad = true;";
    REQUIRE(padded.find(flag) != std::string::npos);
    std::string unpadded = padded;
    unpadded.replace(unpadded.find(flag), flag.size(), "constexpr bool kPad = false;");
    flow::write(root + "/lessons/05_scan/02_blelloch.cu", unpadded);
    out = explain_step(root, "05_scan/02");
    CHECK(count(out, "32-way bank conflict (32 wavefronts where 1 would do)") >= 6);
    CHECK(count(out, " 2-way bank conflict") == 0);
}

TEST_CASE("a performance goal is reported under emulation, beside the verdict, and in list",
          "[report][cli][emulate]") {
    // 08/4 is about the padded tile. Step 3's unpadded tile is as correct: it passes, and the
    // emulated check says its goal is not met, with the line of the conflicted read.
    const std::string root = flow::course_copy();
    const std::string state = flow::temp_dir("state");
    const std::string file = root + "/lessons/08_transpose/04_padded_tile.cu";
    std::string unpadded = flow::read(root + "/solutions/08_transpose/03_shared_tile.cu");
    flow::write(file, unpadded);
    auto r = flow::cudalings({"check", "08_transpose/04", "--emulate"},
                             {{"CUDALINGS_STATE_DIR", state}}, root);
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, ContainsSubstring("\nPASS"));
    CHECK_THAT(r.out,
               ContainsSubstring("  goal     not met: no bank conflicts in the tile — line "));
    CHECK_THAT(r.out, ContainsSubstring("32-way bank conflict (the worst warp of case "));
    // Pictures are not printed without --explain.
    CHECK(r.out.find("one warp per access line") == std::string::npos);
    auto list = flow::cudalings({"list"}, {{"CUDALINGS_STATE_DIR", state}}, root);
    CHECK_THAT(list.out, ContainsSubstring("[done] 04_padded_tile"));
    CHECK_THAT(list.out, ContainsSubstring("(goal not met: no bank conflicts in the tile)"));
    // The kept report, shown again unchanged, says it too.
    r = flow::cudalings({"check", "08_transpose/04", "--emulate"}, {{"CUDALINGS_STATE_DIR", state}},
                        root);
    CHECK_THAT(r.out, ContainsSubstring("unchanged since"));
    CHECK_THAT(r.out, ContainsSubstring("  goal     not met: no bank conflicts in the tile"));
    // Padded: met.
    fs::copy_file(root + "/solutions/08_transpose/04_padded_tile.cu", file,
                  fs::copy_options::overwrite_existing);
    r = flow::cudalings({"check", "08_transpose/04", "--emulate"}, {{"CUDALINGS_STATE_DIR", state}},
                        root);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, ContainsSubstring("  goal     met: no bank conflicts in the tile"));
    list = flow::cudalings({"list"}, {{"CUDALINGS_STATE_DIR", state}}, root);
    CHECK_THAT(list.out, ContainsSubstring("(goal met: no bank conflicts in the tile)"));
}
