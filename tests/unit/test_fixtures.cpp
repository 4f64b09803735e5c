// The one reader of fixture headers and the strict patch applier (checker/core/tools/fixtures.h):
// keys, the default step, the two forms, and every patched fixture of the course still applying.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli_support.h"
#include "fixtures.h"
#include "hash.h"

using namespace cudalings;
using Catch::Matchers::ContainsSubstring;
namespace fs = std::filesystem;

namespace {

// A course of one lesson (two steps) with a solution to patch.
struct TinyCourse {
    fs::path root = fs::path(test_support::temp_path("fixtures_course"));
    TinyCourse() {
        for (const char* dir : {"lessons/01_demo", "solutions/01_demo", "checks/01_demo/fixtures"})
            fs::create_directories(root / dir);
        for (const char* step : {"01_a.cu", "02_b.cu"})
            write("lessons/01_demo/" + std::string(step), "");
        write("solutions/01_demo/01_a.cu", solution());
        write("solutions/01_demo/02_b.cu", "// another\nint b;\n");
    }
    ~TinyCourse() { fs::remove_all(root); }
    static std::string solution() {
        std::string s = "// The solution's own prose,\n// which a patch never sees.\n";
        for (int i = 1; i <= 20; ++i) s += "line " + std::to_string(i) + "\n";
        return s;
    }
    void write(const std::string& rel, const std::string& text) const {
        std::ofstream(root / rel, std::ios::binary) << text;
    }
    std::string fixture(const std::string& name) const {
        return (root / "checks/01_demo/fixtures" / name).string();
    }
};

const std::string kHeader = "// expect: WRONG\n// reason: values\n";
// Line 10 of the body changed, with 3 lines of context.
const std::string kPatch =
    "--- solutions/01_demo/01_a.cu\n+++ checks/01_demo/fixtures/f.cu\n"
    "@@ -7,7 +7,7 @@\n line 7\n line 8\n line 9\n-line 10\n+line ten\n line 11\n line 12\n"
    " line 13\n";

std::string expected_text() {
    std::string body = file_body(TinyCourse::solution());
    body.replace(body.find("line 10\n"), 8, "line ten\n");
    return kHeader + body;
}

std::string materialised(const std::string& path, const std::string& root, std::string* why) {
    std::string text;
    if (!materialise(read_fixture(path, root), root, &text, why)) return "(none)";
    return text;
}

}  // namespace

TEST_CASE("fixtures: a patch of the step's solution body materialises as header and body",
          "[fixtures]") {
    TinyCourse course;
    course.write("checks/01_demo/fixtures/f.cu", kHeader + kPatch);
    const Fixture f = read_fixture(course.fixture("f.cu"), course.root.string());
    CHECK(f.form == FixtureForm::patch);
    CHECK(f.kind == FixtureKind::fixture);
    CHECK(f.lesson == "01_demo");
    CHECK(f.rel == "checks/01_demo/fixtures/f.cu");
    CHECK(f.keys.base == "solutions/01_demo/01_a.cu");
    std::string why;
    CHECK(materialised(course.fixture("f.cu"), course.root.string(), &why) == expected_text());
    INFO(why);
    // The root is found from the fixture's place when none is given.
    CHECK(materialised(course.fixture("f.cu"), "", &why) == expected_text());
}

TEST_CASE("fixtures: a hunk is found at an offset, never with fuzz", "[fixtures]") {
    TinyCourse course;
    course.write("checks/01_demo/fixtures/f.cu", kHeader + kPatch);
    // The solution grew four lines above the hunk and its prose changed: the patch still applies.
    std::string moved =
        "// New prose.\n#include <a>\n#include <b>\n\n\n" + file_body(TinyCourse::solution());
    course.write("solutions/01_demo/01_a.cu", moved);
    std::string why, text = materialised(course.fixture("f.cu"), course.root.string(), &why);
    INFO(why);
    CHECK_THAT(text, ContainsSubstring("line 9\nline ten\nline 11\n"));
    CHECK(text.rfind(kHeader + "#include <a>\n", 0) == 0);
    // A context line that changed: no fuzz, and the message names the hunk and the line.
    std::string changed = TinyCourse::solution();
    changed.replace(changed.find("line 8\n"), 7, "line eight\n");
    course.write("solutions/01_demo/01_a.cu", changed);
    CHECK(materialised(course.fixture("f.cu"), course.root.string(), &why) == "(none)");
    CHECK_THAT(why, ContainsSubstring("no longer applies to solutions/01_demo/01_a.cu"));
    CHECK_THAT(why, ContainsSubstring("hunk 1 (@@ -7,7 +7,7 @@)"));
    // Body line 8 is line 10 of the file (two lines of prose above it).
    CHECK_THAT(why, ContainsSubstring("line 10 of solutions/01_demo/01_a.cu differs"));
    CHECK_THAT(why, ContainsSubstring("\"line eight\""));
}

TEST_CASE("fixtures: a whole file passes through byte for byte", "[fixtures]") {
    TinyCourse course;
    const std::string text = kHeader + "\n--- not a patch: the body starts with a blank line\n";
    course.write("checks/01_demo/fixtures/w.cu", text);
    const Fixture f = read_fixture(course.fixture("w.cu"), course.root.string());
    CHECK(f.form == FixtureForm::whole);
    std::string why;
    CHECK(materialised(course.fixture("w.cu"), course.root.string(), &why) == text);
    // Any file, a solution too (tests pass those to course_with).
    const std::string solution = (course.root / "solutions/01_demo/01_a.cu").string();
    CHECK(materialised(solution, course.root.string(), &why) == TinyCourse::solution());
}

TEST_CASE("fixtures: the default step is the lesson's first; base: names another", "[fixtures]") {
    TinyCourse course;
    course.write("checks/01_demo/fixtures/d.cu", "// expect: WRONG\nint x;\n");
    Fixture f = read_fixture(course.fixture("d.cu"), course.root.string());
    CHECK(f.keys.step == "01_demo/01_a.cu");
    CHECK(f.keys.step_defaulted);
    course.write("checks/01_demo/fixtures/d.cu", "// expect: WRONG\n// step: 01_demo/02_b.cu\n");
    f = read_fixture(course.fixture("d.cu"), course.root.string());
    CHECK(f.keys.step == "01_demo/02_b.cu");
    CHECK_FALSE(f.keys.step_defaulted);
    CHECK(f.keys.base == "solutions/01_demo/02_b.cu");
    // A base other than the step's solution: its `base:` line is not part of the text.
    std::string patch = kPatch;
    course.write("checks/01_demo/fixtures/d.cu",
                 "// expect: WRONG\n// reason: values\n// step: 01_demo/02_b.cu\n"
                 "// base: solutions/01_demo/01_a.cu\n" +
                     patch);
    f = read_fixture(course.fixture("d.cu"), course.root.string());
    CHECK(f.keys.base == "solutions/01_demo/01_a.cu");
    std::string why;
    CHECK(materialised(course.fixture("d.cu"), course.root.string(), &why) ==
          "// expect: WRONG\n// reason: values\n// step: 01_demo/02_b.cu\n" +
              file_body(expected_text()));
    // The --- line must name the base.
    course.write("checks/01_demo/fixtures/d.cu",
                 "// expect: WRONG\n// step: 01_demo/02_b.cu\n" + patch);
    CHECK(materialised(course.fixture("d.cu"), course.root.string(), &why) == "(none)");
    CHECK_THAT(why, ContainsSubstring("does not name its base"));
}

TEST_CASE("fixtures: every key is read, and unknown keys only before the first blank line",
          "[fixtures]") {
    const Fixture f = parse_fixture(
        "/nowhere/x.cu",
        "// expect: CRASH\n// emulated: WRONG\n// emulated-detail: d\n// emulated-advice: a\n"
        "// reason: r\n// reason-emulated: re\n// flags: --sanitize --case-timeout 30\n"
        "// needs: cpu\n// timing: yes\n// setup: huge\n// in-process: PASS\n// timed: yes\n"
        "// colour: blue\n//\n// result: prose, not a key\n// step: 01_demo/02_b.cu\nint x;\n",
        "");
    const FixtureHeader& h = f.keys;
    CHECK(h.expect == "CRASH");
    CHECK(h.emulated == "WRONG");
    CHECK(h.emulated_detail == "d");
    CHECK(h.emulated_advice == "a");
    CHECK(h.reason == "r");
    CHECK(h.reason_emulated == "re");
    CHECK(h.flags == std::vector<std::string>{"--sanitize", "--case-timeout", "30"});
    CHECK(h.needs == "cpu");
    CHECK(h.timing == "yes");
    CHECK(h.setup == "huge");
    CHECK(h.in_process == "PASS");
    CHECK(h.timed == "yes");
    CHECK(h.step == "01_demo/02_b.cu");  // known keys count anywhere in the header
    CHECK(h.unknown == std::vector<std::string>{"colour"});
    CHECK(f.body == "int x;\n");
    CHECK(f.form == FixtureForm::whole);
}

TEST_CASE("fixtures: the differ and the applier agree, ends without a newline included",
          "[fixtures]") {
    std::string before, after;
    for (int i = 0; i < 60; ++i) before += "l" + std::to_string(i) + "\n";
    after = before;
    after.replace(after.find("l3\n"), 3, "");             // removed near the start
    after.replace(after.find("l30\n"), 4, "x30\ny30\n");  // changed in the middle
    after += "tail without newline";                      // added at the end, no newline
    const std::string diff = unified_diff(before, after, "a.cu", "b.cu");
    CHECK(diff.rfind("--- a.cu\n+++ b.cu\n@@ -1,7 +1,6 @@\n l0\n l1\n l2\n-l3\n l4\n", 0) == 0);
    CHECK_THAT(diff, ContainsSubstring("\\ No newline at end of file\n"));
    std::string out, why;
    REQUIRE(apply_patch(before, diff, "a.cu", 1, &out, &why));
    CHECK(out == after);
    CHECK(unified_diff(before, before, "a.cu", "b.cu").empty());
    // Counts that do not fit the hunk's lines are an error, not a guess.
    CHECK_FALSE(apply_patch(before, "--- a\n+++ b\n@@ -1,3 +1,3 @@\n l0\n", "a", 1, &out, &why));
    CHECK_THAT(why, ContainsSubstring("hunk 1"));
}

TEST_CASE("fixtures: a fixture rewritten as a patch gives its text back", "[fixtures]") {
    TinyCourse course;
    const std::string path = course.fixture("r.cu");
    std::string text, why;
    REQUIRE(rediff_fixture(path, expected_text(), course.root.string(), "", &text, &why));
    CHECK(text.rfind(kHeader + "--- solutions/01_demo/01_a.cu\n+++ checks/01_demo/fixtures/r.cu\n",
                     0) == 0);
    course.write("checks/01_demo/fixtures/r.cu", text);
    CHECK(materialised(path, course.root.string(), &why) == expected_text());
    // Against another base than the step's solution, the header gains `base:`.
    REQUIRE(rediff_fixture(
        path, "// expect: WRONG\n// step: 01_demo/02_b.cu\n" + file_body(expected_text()),
        course.root.string(), "solutions/01_demo/01_a.cu", &text, &why));
    CHECK_THAT(text, ContainsSubstring("// base: solutions/01_demo/01_a.cu\n--- "));
}

// The course's own: every patch applies, and its text keeps the fixture's header on top, so the
// line numbers its assertions name are the ones a learner's copy of the file has.
TEST_CASE("fixtures: every patched fixture and corpus file of the course applies", "[fixtures]") {
    std::size_t patches = 0, files = 0;
    for (const auto kind : {FixtureKind::fixture, FixtureKind::corpus, FixtureKind::hostile})
        for (const auto& path : fixture_files(CUDALINGS_SOURCE_DIR, kind)) {
            const Fixture f = read_fixture(path, CUDALINGS_SOURCE_DIR);
            ++files;
            if (f.form != FixtureForm::patch) continue;
            ++patches;
            INFO(f.rel);
            CHECK(kind != FixtureKind::hostile);  // hostile submissions stay whole
            std::string text, why;
            CHECK(materialise(f, CUDALINGS_SOURCE_DIR, &text, &why));
            INFO(why);
            std::string header;  // its own header, less the `base:` line
            std::istringstream lines(f.header);
            for (std::string line; std::getline(lines, line);)
                if (line.rfind("// base: ", 0) != 0) header += line + "\n";
            CHECK(text.rfind(header, 0) == 0);
            CHECK(parse_fixture(path, text, CUDALINGS_SOURCE_DIR).form == FixtureForm::whole);
        }
    CHECK(files >= 230);
    CHECK(patches >= 45);  // 49 when they became patches
}

TEST_CASE("dev fixtures: lists every file with its header, and writes their text", "[fixtures]") {
    const std::string dir = test_support::temp_path("dev_fixtures");
    auto r = test_support::cudalings({"--root", CUDALINGS_SOURCE_DIR, "dev", "fixtures", "--json",
                                      "--kind", "corpus", "--write", dir});
    INFO(r.err.substr(0, 2000));
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["errors"].empty());
    REQUIRE(j["fixtures"].size() >= 40);
    std::size_t patches = 0;
    for (const auto& e : j["fixtures"]) {
        CHECK(e["kind"] == "corpus");
        CHECK_FALSE(e["step"].get<std::string>().empty());
        CHECK_FALSE(e["emulated"].get<std::string>().empty());
        const std::string file = e["file"];
        CHECK(file == (fs::path(dir) / e["path"].get<std::string>()).string());
        CHECK(read_file(file) == test_support::fixture_text(std::string(CUDALINGS_SOURCE_DIR) +
                                                            "/" + e["path"].get<std::string>()));
        if (e["form"] == "patch") ++patches;
    }
    CHECK(patches >= 1);
    fs::remove_all(dir);
    // A filter and a kind: one file; an unknown kind is a usage error.
    r = test_support::cudalings({"--root", CUDALINGS_SOURCE_DIR, "dev", "fixtures", "--json",
                                 "--kind", "fixture", "05_scan/fixtures/wrong_status_not_cleared"});
    REQUIRE(r.code == 0);
    const auto one = nlohmann::json::parse(r.out)["fixtures"];
    REQUIRE(one.size() == 1);
    CHECK(one[0]["step"] == "05_scan/06_chained_scan.cu");
    r = test_support::cudalings({"--root", CUDALINGS_SOURCE_DIR, "dev", "fixtures", "--kind", "x"});
    CHECK(r.code == 2);
}
