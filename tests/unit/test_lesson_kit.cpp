// The lesson kit's promise: a lesson plugs in through its own folders (lessons/NN, solutions/NN,
// checks/NN) and one line of course order, then `dev update` writes what is generated from them,
// with no edit anywhere else. tests/throwaway holds such a lesson (saxpy); this test adds it to a
// course exactly as docs/adding-a-lesson.md says and checks it with the real `cudalings`.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli_support.h"

using namespace test_support;
namespace fs = std::filesystem;

namespace {
std::string read_text(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}
void write_text(const fs::path& path, const std::string& text) {
    std::ofstream out(path);
    out << text;
    REQUIRE(out.good());
}
nlohmann::json check_json(const std::string& root, std::vector<std::string> args) {
    args.insert(args.begin(), {"--root", root});
    auto r = cudalings(args);
    INFO("exit " << r.code << "\n" << r.out.substr(0, 3000) << "\n" << r.err.substr(0, 2000));
    REQUIRE(r.code != -2);
    return nlohmann::json::parse(r.out);
}
}  // namespace

TEST_CASE("a lesson added as docs/adding-a-lesson.md says plugs in", "[kit]") {
    // A course with no lesson yet, made of this project's course-level files: the root README
    // with its course table, the pristine record's script, course.json.
    const fs::path source = CUDALINGS_SOURCE_DIR;
    const fs::path root = fs::path(test_support::temp_path("throwaway_course"));
    for (const char* dir : {"cmake", "lessons", "solutions", "checks"})
        fs::create_directories(root / dir);
    fs::copy_file(source / "README.md", root / "README.md");
    fs::copy_file(source / "cmake" / "CudalingsPristineRecord.cmake",
                  root / "cmake" / "CudalingsPristineRecord.cmake");
    write_text(root / "course.json", "{\"lessons\": []}\n");
    auto update = cudalings({"--root", root.string(), "dev", "update"});
    INFO(update.out << update.err);
    REQUIRE(update.code == 0);

    // The page's steps: the lesson's three folders, and its id in course.json...
    for (const char* dir : {"lessons", "solutions", "checks"})
        fs::copy(source / "tests" / "throwaway" / dir / "90_saxpy", root / dir / "90_saxpy",
                 fs::copy_options::recursive);
    write_text(root / "course.json", "{\"lessons\": [\"90_saxpy\"]}\n");
    // ... which `dev check` finds incomplete, naming the command that completes it ...
    auto stale = cudalings({"--root", root.string(), "dev", "check"});
    INFO(stale.out << stale.err);
    CHECK(stale.code != 0);
    CHECK_THAT(stale.out, Catch::Matchers::ContainsSubstring("README.md"));
    CHECK_THAT(stale.out, Catch::Matchers::ContainsSubstring("cmake/pristine-lessons.sha256"));
    CHECK_THAT(stale.out, Catch::Matchers::ContainsSubstring("./cudalings dev update"));
    // ... and then `dev update`: the course table has the lesson's row, the record its files.
    update = cudalings({"--root", root.string(), "dev", "update"});
    INFO(update.out << update.err);
    REQUIRE(update.code == 0);
    CHECK_THAT(read_text(root / "README.md"),
               Catch::Matchers::ContainsSubstring(
                   "| [90_saxpy](lessons/90_saxpy/README.md) | `out = a·x + y`, one thread per "
                   "element | how a lesson plugs in: three folders and one line |"));
    CHECK_THAT(read_text(root / "cmake" / "pristine-lessons.sha256"),
               Catch::Matchers::ContainsSubstring("  90_saxpy/01_saxpy.cu"));

    // The course's own consistency: steps, hints, problems (both builds of its checks), links,
    // the summary, the generated parts.
    auto dev = cudalings({"--root", root.string(), "dev", "check"});
    INFO(dev.out << dev.err);
    CHECK(dev.code == 0);
    CHECK_THAT(dev.out, Catch::Matchers::ContainsSubstring("no problems found"));

    // Its solution passes and its skeleton fails, under the emulator (any machine).
    auto solved =
        check_json(root.string(), {"check", "90/1", "--solutions", "--emulate", "--json"});
    CHECK(solved["results"][0]["verdict"] == "PASS");
    CHECK(solved["results"][0]["cases"].size() >= 8);
    auto skeleton = check_json(root.string(), {"check", "90/1", "--emulate", "--json"});
    CHECK(skeleton["results"][0]["verdict"] == "WRONG");

    // Its fixture gets its verdict.
    const auto fixture = read_fixture(
        (root / "checks" / "90_saxpy" / "fixtures" / "wrong_no_bounds_grid.cu").string());
    write_fixture(fixture.path, (root / "lessons" / fixture.step).string());
    auto bad = check_json(root.string(), {"check", "90/1", "--emulate", "--json"});
    CHECK(bad["results"][0]["verdict"] == fixture.emulated);
    CHECK_THAT(bad["results"][0]["reason"].get<std::string>(),
               Catch::Matchers::ContainsSubstring(fixture.reason));

    // On a GPU it is checked and timed like any lesson: tests/gpu ("a throwaway lesson is
    // checked and timed on the GPU like any lesson"), which never shares the GPU with another
    // GPU test's timed calls.
    fs::remove_all(root);
}
