// Explain mode's access pictures (kind "access"): one warp's request per access line, with each
// lane's offset and sector or bank, for patterns whose answer is known (semantics/access.cu).
#include <catch2/catch_test_macros.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "test_support.h"

namespace emu = cudalings_emu;
using emu_test::entry;
using emu_test::open_module;
using emu_test::use_options;
using nlohmann::json;

namespace {

// The line of access.cu that holds `// line: <tag>`.
int line_of(const std::string& tag) {
    std::ifstream in(CUDALINGS_EMU_ACCESS_SOURCE);
    std::string text;
    for (int n = 1; std::getline(in, text); ++n)
        if (text.find("// line: " + tag) != std::string::npos) return n;
    FAIL("no line tagged " << tag);
    return 0;
}

// The picture of the tagged line, parsed; fails when there is not exactly one.
json picture(const std::vector<emu::Diagnostic>& found, const std::string& tag) {
    const int line = line_of(tag);
    std::vector<const emu::Diagnostic*> at;
    for (const auto& d : found)
        if (d.kind == "access" && d.line == line) at.push_back(&d);
    INFO(tag << " (access.cu:" << line << ")\n" << emu::format(found));
    REQUIRE(at.size() == 1);
    CHECK(at[0]->severity == "info");
    CHECK(at[0]->file.find("access.cu") != std::string::npos);
    json j = json::parse(at[0]->detail);
    CHECK(j["v"] == 1);
    return j;
}

std::vector<emu::Diagnostic> run(const char* name) {
    use_options(true, true);
    void* m = open_module(CUDALINGS_EMU_ACCESS_MODULE);
    REQUIRE(entry<int (*)()>(m, name)() == 0);
    auto found = emu::take_diagnostics();
    use_options(true, false);
    return found;
}

}  // namespace

TEST_CASE("access picture: a coalesced float load touches 4 sectors in one line", "[emu][access]") {
    json p = picture(run("access_coalesced"), "coalesced load");
    CHECK(p["space"] == "global");
    CHECK(p["op"] == "load");
    CHECK(p["array"] == "in");
    CHECK(p["bytes"] == 4);
    CHECK(p["active"] == 32);
    CHECK(p["sectors"] == json({0, 32, 64, 96}));
    CHECK(p["lines"] == 1);
    CHECK(p["ideal_sectors"] == 4);
    for (int lane = 0; lane < 32; ++lane) {
        CHECK(p["offsets"][lane] == 4 * lane);
        CHECK(p["lane_sector"][lane] == lane / 8);
    }
}

TEST_CASE("access picture: a stride-2 load touches 8 sectors", "[emu][access]") {
    json p = picture(run("access_stride_two"), "stride-2 load");
    CHECK(p["sectors"].size() == 8);
    CHECK(p["lines"] == 2);
    CHECK(p["ideal_sectors"] == 4);
    CHECK(p["offsets"][31] == 8 * 31);
    CHECK(p["lane_sector"][31] == 7);
}

TEST_CASE("access picture: a float4 load touches 16 sectors, 16 bytes per lane", "[emu][access]") {
    json p = picture(run("access_float4"), "float4 load");
    CHECK(p["bytes"] == 16);
    CHECK(p["sectors"].size() == 16);
    CHECK(p["lines"] == 4);
    CHECK(p["ideal_sectors"] == 16);
    CHECK(p["offsets"][3] == 48);
    CHECK(p["lane_sector"][3] == 1);
}

TEST_CASE("access picture: s[threadIdx.x * 32] is a 32-way bank conflict", "[emu][access]") {
    json p = picture(run("access_shared_column"), "32-way store");
    CHECK(p["space"] == "shared");
    CHECK(p["op"] == "store");
    CHECK(p["array"] == "s");
    CHECK(p["degree"] == 32);
    CHECK(p["wavefronts"] == 32);
    CHECK(p["ideal_wavefronts"] == 1);
    const auto bank = p["banks"][0];
    for (int lane = 0; lane < 32; ++lane) {
        CHECK(p["offsets"][lane] == 128 * lane);
        CHECK(p["banks"][lane] == bank);
    }
}

TEST_CASE("access picture: s[threadIdx.x] has no bank conflict", "[emu][access]") {
    json p = picture(run("access_shared_row"), "conflict-free store");
    CHECK(p["degree"] == 1);
    CHECK(p["wavefronts"] == 1);
    std::vector<int> banks;
    for (const auto& b : p["banks"]) banks.push_back(b.get<int>());
    std::sort(banks.begin(), banks.end());
    for (int lane = 0; lane < 32; ++lane) CHECK(banks[lane] == lane);
}

TEST_CASE("access picture: a partially active warp (if (i < n), n = 20)", "[emu][access]") {
    use_options(true, true);
    void* m = open_module(CUDALINGS_EMU_ACCESS_MODULE);
    REQUIRE(entry<int (*)(int)>(m, "access_guarded")(20) == 0);
    auto found = emu::take_diagnostics();
    use_options(true, false);
    json p = picture(found, "guarded load");
    CHECK(p["active"] == 20);
    CHECK(p["offsets"][19] == 76);
    CHECK(p["offsets"][20].is_null());
    CHECK(p["lane_sector"][31].is_null());
    CHECK(p["sectors"] == json({0, 32, 64}));
    CHECK(p["ideal_sectors"] == 3);
}

TEST_CASE("access picture: a request is one round of a loop, not a lane's k-th execution",
          "[emu][access]") {
    // Round 5 has every lane; each round reads one word (a broadcast): no conflict anywhere.
    json p = picture(run("access_growing_rounds"), "broadcast per round");
    CHECK(p["active"] == 32);
    CHECK(p["degree"] == 1);
    CHECK(p["wavefronts"] == 1);
    for (int lane = 0; lane < 32; ++lane) CHECK(p["offsets"][lane] == 4 * 32 * 5);
}

TEST_CASE("access picture: of a loop's rounds with as many lanes, the worst is drawn",
          "[emu][access]") {
    // Stride 1, 2, 4 words: no conflict, 2-way, 4-way.
    json p = picture(run("access_doubling_stride"), "doubling stride");
    CHECK(p["active"] == 32);
    CHECK(p["degree"] == 4);
    CHECK(p["wavefronts"] == 4);
    for (int lane = 0; lane < 32; ++lane) CHECK(p["offsets"][lane] == 16 * lane);
}

TEST_CASE("without explain mode there are no access pictures", "[emu][access]") {
    use_options(true, false);
    void* m = open_module(CUDALINGS_EMU_ACCESS_MODULE);
    REQUIRE(entry<int (*)()>(m, "access_coalesced")() == 0);
    for (const auto& d : emu::take_diagnostics()) CHECK(d.kind != "access");
}
