// `cudalings dev check`: each rule finds what breaks it (on a small course made here; the real
// course is checked by the ctest "course_dev_check", which builds every lesson's checks).
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <filesystem>
#include <fstream>

#include "cli_support.h"
#include "coverage.h"
#include "devcheck.h"
#include "fixtures.h"
#include "generated.h"
#include "manifest.h"
#include "supervise.h"

using namespace cudalings;
namespace fs = std::filesystem;

namespace {

struct DemoCourse {
    fs::path root = fs::path(test_support::temp_path("devcheck_course"));
    ChecksContents contents{{"demo"}, {{"demo", "cub"}}, ""};

    DemoCourse() {
        fs::remove_all(root);
        for (const char* dir : {"lessons/01_demo", "solutions/01_demo", "checks/01_demo/fixtures"})
            fs::create_directories(root / dir);
        write("course.json", R"({"lessons": ["01_demo"]})");
        write(
            "checks/01_demo/lesson.json",
            R"({"id": "01_demo", "title": "Demo", "problem": "demo", "summary": {"write": "w", "teaches": "t"},
                  "steps": [{"id": "01_a", "hint": "h"}, {"id": "02_b", "hint": "h"}],
                  "baselines": [{"name": "cub", "title": "cub::Something"}]})");
        for (const char* side : {"lessons", "solutions"})
            for (const char* step : {"01_a", "02_b"})
                write(std::string(side) + "/01_demo/" + step + ".cu", "// a step\n");
        write("lessons/01_demo/README.md", "See [step 1](01_a.cu) and [above](#top).\n");
        write("checks/01_demo/fixtures/good.cu",
              "// expect: WRONG\n// step: 01_demo/02_b.cu\n// needs: gpu\n// emulated: WRONG\n");
    }
    ~DemoCourse() { fs::remove_all(root); }
    void write(const std::string& rel, const std::string& text) const {
        std::ofstream(root / rel) << text;
    }
    std::vector<DevFinding> check() const {
        const Manifest m = load_manifest(root.string());
        const ChecksContents c = contents;
        return dev_check(root.string(), m, [c](const LessonInfo&) { return c; });
    }
    // The one finding of `rule`, or a failed test.
    DevFinding only(const std::string& rule) const {
        const auto found = check();
        INFO("findings: " << found.size());
        REQUIRE(found.size() == 1);
        CHECK(found[0].rule == rule);
        return found[0];
    }
};

}  // namespace

TEST_CASE("dev check: a healthy course has no findings", "[devcheck]") {
    DemoCourse course;
    CHECK(course.check().empty());
}

TEST_CASE("dev check: every step has a skeleton and a solution, and no file is left over",
          "[devcheck]") {
    DemoCourse course;
    fs::remove(course.root / "solutions/01_demo/02_b.cu");
    CHECK(course.only("files").file == "solutions/01_demo/02_b.cu");
    course.write("solutions/01_demo/02_b.cu", "// back\n");
    course.write("lessons/01_demo/03_extra.cu", "// not in the manifest\n");
    CHECK_THAT(course.only("files").message, Catch::Matchers::ContainsSubstring("does not list"));
}

TEST_CASE("dev check: every step has a hint", "[devcheck]") {
    DemoCourse course;
    course.write("checks/01_demo/lesson.json",
                 R"({"id": "01_demo", "problem": "demo", "summary": {"write": "w", "teaches": "t"},
                     "steps": [{"id": "01_a", "hint": "h"}, {"id": "02_b"}],
                     "baselines": [{"name": "cub"}]})");
    CHECK_THAT(course.only("hints").message, Catch::Matchers::ContainsSubstring("02_b"));
}

TEST_CASE("dev check: a step the emulator cannot build says it needs a GPU", "[devcheck]") {
    DemoCourse course;
    course.write("solutions/01_demo/02_b.cu", "#include <cub/device/device_scan.cuh>\n");
    const DevFinding f = course.only("gpu");
    CHECK(f.file == "checks/01_demo/lesson.json");
    CHECK_THAT(f.message, Catch::Matchers::ContainsSubstring("02_b"));
    CHECK_THAT(f.message, Catch::Matchers::ContainsSubstring("needs_gpu"));
    course.write("checks/01_demo/lesson.json",
                 R"({"id": "01_demo", "problem": "demo", "summary": {"write": "w", "teaches": "t"},
                     "steps": [{"id": "01_a", "hint": "h"},
                               {"id": "02_b", "hint": "h", "needs_gpu": true}],
                     "baselines": [{"name": "cub"}]})");
    CHECK(course.check().empty());
}

TEST_CASE("dev check: a cut emulated values-only case lies between the emulated sizes",
          "[devcheck]") {
    DemoCourse course;
    const auto with_cut = [&](const std::string& size) {
        course.write("checks/01_demo/lesson.json",
                     R"({"id": "01_demo", "problem": "demo", "summary": {"write": "w", "teaches": "t"},
                         "steps": [{"id": "01_a", "hint": "h",
                                    "emulated": {"values_up_to": ")" +
                         size + R"(", "why": "tiles are independent"}},
                                   {"id": "02_b", "hint": "h"}],
                         "baselines": [{"name": "cub"}]})");
    };
    with_cut("2^18+3");
    CHECK(course.check().empty());
    for (const char* bad : {"2^16", "2^21"}) {
        with_cut(bad);
        INFO(bad);
        const DevFinding f = course.only("emulated");
        CHECK_THAT(f.message, Catch::Matchers::ContainsSubstring("01_a"));
    }
}

TEST_CASE("dev check: every step's problem exists in the lesson's checks", "[devcheck]") {
    DemoCourse course;
    course.contents.problems = {"other"};
    const auto found = course.check();
    REQUIRE(found.size() == 3);  // both steps, and the baseline's problem
    CHECK(found[0].rule == "problems");
    CHECK_THAT(found[0].message, Catch::Matchers::ContainsSubstring("\"demo\""));
    course.contents = {{}, {}, "the lesson's checks do not build: kit.h:3: error"};
    CHECK_THAT(course.only("problems").message, Catch::Matchers::ContainsSubstring("do not build"));
}

TEST_CASE("dev check: every baseline is registered by the lesson's baselines", "[devcheck]") {
    DemoCourse course;
    course.contents.baselines = {{"demo", "thrust"}};
    CHECK(course.only("baselines").file == "checks/01_demo/baselines.cu");
}

TEST_CASE("dev check: a lesson's profile metrics are ones the course explains", "[devcheck]") {
    DemoCourse course;
    const auto lesson = [&](const std::string& metrics) {
        course.write(
            "checks/01_demo/lesson.json",
            R"({"id": "01_demo", "problem": "demo", "summary": {"write": "w", "teaches": "t"},
                         "steps": [{"id": "01_a", "hint": "h"}, {"id": "02_b", "hint": "h"}],
                         "baselines": [{"name": "cub"}], "profile": {"metrics": [)" +
                metrics + "]}}");
    };
    lesson(R"("lts__t_sector_hit_rate.pct", "dram__bytes_read.sum")");
    CHECK(course.check().empty());
    lesson(R"("lts__t_sector_hit_rate.pct", "sm__made_up_counter.sum")");
    const DevFinding unknown = course.only("profile");
    CHECK(unknown.file == "checks/01_demo/lesson.json");
    CHECK_THAT(unknown.message, Catch::Matchers::ContainsSubstring("sm__made_up_counter.sum"));
    lesson(R"("lts__t_sector_hit_rate.pct", "lts__t_sector_hit_rate.pct")");
    CHECK_THAT(course.only("profile").message, Catch::Matchers::ContainsSubstring("twice"));
    lesson(R"("gpu__time_duration.sum")");
    CHECK_THAT(course.only("profile").message, Catch::Matchers::ContainsSubstring("summary"));
}

TEST_CASE("dev check: every lesson has its row of the course table", "[devcheck]") {
    DemoCourse course;
    course.write("checks/01_demo/lesson.json",
                 R"({"id": "01_demo", "problem": "demo", "summary": {"write": "w"},
                     "steps": [{"id": "01_a", "hint": "h"}, {"id": "02_b", "hint": "h"}],
                     "baselines": [{"name": "cub"}]})");
    const DevFinding half = course.only("summary");
    CHECK(half.file == "checks/01_demo/lesson.json");
    CHECK_THAT(half.message, Catch::Matchers::ContainsSubstring("teaches"));
}

TEST_CASE("dev check: a pristine record that no longer matches lessons/ is named", "[devcheck]") {
    const std::string cmake = cudalings::find_program("cmake");
    if (cmake.empty()) SKIP("no cmake on PATH");
    DemoCourse course;
    fs::create_directories(course.root / "cmake");
    fs::copy_file(fs::path(CUDALINGS_SOURCE_DIR) / "cmake" / "CudalingsPristineRecord.cmake",
                  course.root / "cmake" / "CudalingsPristineRecord.cmake");
    const Manifest m = load_manifest(course.root.string());
    const ChecksContents c = course.contents;
    const auto check = [&] {
        return dev_check(
            course.root.string(), m, [c](const LessonInfo&) { return c; }, cmake);
    };
    // No record yet, then the record of the files as they are, then a skeleton edited after it.
    auto found = check();
    REQUIRE(found.size() == 1);
    CHECK(found[0].rule == "generated");
    CHECK(found[0].file == "cmake/pristine-lessons.sha256");
    CHECK_THAT(found[0].message, Catch::Matchers::ContainsSubstring("./cudalings dev update"));
    UpdateOptions options;
    options.cmake = cmake;
    REQUIRE(dev_update(course.root.string(), m, options).error.empty());
    CHECK(check().empty());
    course.write("lessons/01_demo/01_a.cu", "// a step, edited\n");
    found = check();
    REQUIRE(found.size() == 1);
    CHECK(found[0].file == "cmake/pristine-lessons.sha256");
    // Without a CMake to run the record's script, the record is not looked at.
    CHECK(course.check().empty());
}

TEST_CASE("dev check: every fixture has a valid header", "[devcheck]") {
    DemoCourse course;
    course.write("checks/01_demo/fixtures/bad.cu", "// expect: WORNG\n");
    CHECK_THAT(course.only("fixtures").message, Catch::Matchers::ContainsSubstring("WORNG"));
    course.write("checks/01_demo/fixtures/bad.cu", "// reason: values\n");
    CHECK_THAT(course.only("fixtures").message, Catch::Matchers::ContainsSubstring("expect"));
    course.write("checks/01_demo/fixtures/bad.cu", "// expect: WRONG\n// step: 01_demo/09_z.cu\n");
    CHECK_THAT(course.only("fixtures").message, Catch::Matchers::ContainsSubstring("09_z"));
    course.write("checks/01_demo/fixtures/bad.cu", "// expect: WRONG\n// emulated: FINE\n");
    CHECK(course.only("fixtures").rule == "fixtures");
    course.write("checks/01_demo/fixtures/bad.cu",
                 "// expect: WRONG\n// emulated-detail: __syncthreads()\n");
    CHECK_THAT(course.only("fixtures").message,
               Catch::Matchers::ContainsSubstring("emulated-detail"));
    course.write("checks/01_demo/fixtures/bad.cu", "// expect: WRONG\n// colour: blue\n//\n");
    CHECK_THAT(course.only("fixtures").message, Catch::Matchers::ContainsSubstring("\"colour:\""));
    // Further down the header, after a blank comment line, such a line is prose.
    course.write("checks/01_demo/fixtures/bad.cu", "// expect: WRONG\n//\n// colour: blue\n");
    CHECK(course.check().empty());
}

TEST_CASE("dev check: a fixture whose patch no longer applies is named", "[devcheck]") {
    DemoCourse course;
    std::string body;
    for (int i = 1; i <= 12; ++i) body += "int v" + std::to_string(i) + ";\n";
    course.write("solutions/01_demo/02_b.cu", "// the solution\n" + body);
    std::string edited = body;
    edited.replace(edited.find("int v6;"), 7, "int v6 = 1;");
    course.write("checks/01_demo/fixtures/patched.cu",
                 "// expect: WRONG\n// step: 01_demo/02_b.cu\n" +
                     unified_diff(body, edited, "solutions/01_demo/02_b.cu",
                                  "checks/01_demo/fixtures/patched.cu"));
    CHECK(course.check().empty());
    // The solution's prose may change; a line the patch needs may not.
    course.write("solutions/01_demo/02_b.cu", "// new prose\n//\n// more\n" + body);
    CHECK(course.check().empty());
    std::string changed = body;
    changed.replace(changed.find("int v5;"), 7, "long v5;");
    course.write("solutions/01_demo/02_b.cu", "// the solution\n" + changed);
    const DevFinding f = course.only("fixtures");
    CHECK(f.file == "checks/01_demo/fixtures/patched.cu");
    CHECK_THAT(f.message, Catch::Matchers::ContainsSubstring(
                              "the patch no longer applies to solutions/01_demo/02_b.cu"));
    CHECK_THAT(f.message, Catch::Matchers::ContainsSubstring("hunk 1"));
    CHECK_THAT(f.message,
               Catch::Matchers::ContainsSubstring("line 6 of solutions/01_demo/02_b.cu"));
    // A corpus submission's patch too, and its header needs a step and an emulated verdict.
    course.write("solutions/01_demo/02_b.cu", "// the solution\n" + body);
    fs::create_directories(course.root / "checks/01_demo/corpus");
    course.write("checks/01_demo/corpus/c.cu", "// expect: PASS\nint x;\n");
    const auto found = course.check();
    REQUIRE(found.size() == 2);
    CHECK(found[0].file == "checks/01_demo/corpus/c.cu");
    CHECK_THAT(found[0].message, Catch::Matchers::ContainsSubstring("step"));
    CHECK_THAT(found[1].message, Catch::Matchers::ContainsSubstring("emulated"));
}

TEST_CASE("dev check: lesson READMEs link only to files inside the course", "[devcheck]") {
    DemoCourse course;
    course.write("lessons/01_demo/README.md", "[targets](../../../shared/targets.md)\n");
    CHECK_THAT(course.only("links").message, Catch::Matchers::ContainsSubstring("outside"));
    course.write("lessons/01_demo/README.md", "[paper](https://example.org/scan.pdf)\n");
    CHECK_THAT(course.only("links").message, Catch::Matchers::ContainsSubstring("outside"));
    course.write("lessons/01_demo/README.md", "[step 3](03_c.cu)\n");
    CHECK_THAT(course.only("links").message, Catch::Matchers::ContainsSubstring("does not exist"));
}

TEST_CASE("dev check --coverage: loops and the lines of their own bodies, read from the source",
          "[devcheck]") {
    const std::string text =
        "__global__ void k(float* x, int n) {\n"                     // 1
        "    // for (int i = 0; i < n; ++i) a comment is no loop\n"  // 2
        "    const char* s = \"while (1) {\";\n"                     // 3
        "    for (int i = threadIdx.x; i < n; i += 32) {\n"          // 4
        "        x[i] *= 2;\n"                                       // 5
        "        for (int j = 0; j < 4; ++j)\n"                      // 6
        "            x[i] += j;\n"                                   // 7
        "        int k = 0;\n"                                       // 8
        "        while (k < 3) { ++k; }\n"                           // 9
        "    }\n"                                                    // 10
        "    do {\n"                                                 // 11
        "        --n;\n"                                             // 12
        "    } while (n > 0);\n"                                     // 13
        "}\n";
    const auto loops = find_loops(text);
    REQUIRE(loops.size() == 4);
    CHECK(loops[0].header == 4);
    // The outer body's own lines: not the inner loops', headers included.
    CHECK(loops[0].own_lines == std::vector<int>{5, 8});
    CHECK(loops[1].header == 6);
    CHECK(loops[1].own_lines == std::vector<int>{7});
    CHECK(loops[2].header == 9);
    CHECK(loops[2].own_lines == std::vector<int>{9});  // all on one line: judged by it
    CHECK(loops[3].header == 11);
    CHECK(loops[3].own_lines == std::vector<int>{12});
}
