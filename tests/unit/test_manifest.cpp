#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <filesystem>
#include <fstream>

#include "cli_support.h"
#include "course.h"
#include "emulate.h"
#include "manifest.h"

using namespace cudalings;

namespace {
const char* kCourse = R"({
  "lessons": [
    {"id": "01_vector_add", "title": "Vector add", "problem": "vector_add", "steps": [
      {"id": "01_one_thread_per_element", "title": "One", "hint": "h1"},
      {"id": "02_grid_stride_loop", "title": "Two", "hint": "h2"},
      {"id": "03_float4", "title": "Three"}]},
    {"id": "02_reduce", "title": "Reduce", "problem": "reduce_sum", "steps": [
      {"id": "01_interleaved", "title": "A", "timed": false},
      {"id": "02_strided_index", "title": "B"}]}
  ]
})";

std::vector<std::pair<std::size_t, std::size_t>> resolve(const Manifest& m, const std::string& t) {
    std::string error;
    auto refs = resolve_steps(m, t, &error);
    std::vector<std::pair<std::size_t, std::size_t>> out;
    if (refs)
        for (auto& r : *refs) out.emplace_back(r.lesson, r.step);
    return out;
}
}  // namespace

TEST_CASE("the manifest gives lessons and steps in order", "[manifest]") {
    Manifest m = parse_manifest(kCourse);
    REQUIRE(m.lessons.size() == 2);
    CHECK(m.lessons[0].problem == "vector_add");
    CHECK(m.lessons[0].steps[0].problem == "vector_add");
    CHECK(m.lessons[0].steps.size() == 3);
    CHECK(m.lessons[0].steps[1].hint == "h2");
    CHECK(m.lessons[0].steps[2].hint.empty());
    CHECK(m.lessons[1].steps[0].timed == false);
    CHECK(m.lessons[1].steps[1].timed == true);
    CHECK(step_name(m, {1, 1}) == "02_reduce/02_strided_index");
}

TEST_CASE("malformed manifests are refused with a reason", "[manifest]") {
    CHECK_THROWS_WITH(parse_manifest("{"), Catch::Matchers::ContainsSubstring("not valid JSON"));
    CHECK_THROWS_WITH(parse_manifest("{}"), Catch::Matchers::ContainsSubstring("lessons"));
    CHECK_THROWS(parse_manifest(R"({"lessons":[{"id":"x","problem":"s","steps":[]}]})"));
    CHECK_THROWS(parse_manifest(R"({"lessons":[{"id":"x","steps":[{"id":"a"}]}]})"));
}

TEST_CASE("a step's performance goals are read, and malformed ones refused", "[manifest]") {
    auto course = [](const std::string& goals) {
        return R"({"lessons":[{"id":"08_transpose","problem":"transpose","steps":[{"id":"04_tile",)"
               R"("goals":)" +
               goals + "}]}]}";
    };
    Manifest m = parse_manifest(course(
        R"([{"metric":"bank-conflicts","array":"tile","says":"no bank conflicts"},)"
        R"({"metric":"vector-width","array":"in","op":"load","bytes":8,"says":"float2 reads"}])"));
    const auto& goals = m.lessons[0].steps[0].goals;
    REQUIRE(goals.size() == 2);
    CHECK(goals[0].metric == "bank-conflicts");
    CHECK(goals[0].array == "tile");
    CHECK(goals[0].op.empty());
    CHECK(goals[1].op == "load");
    CHECK(goals[1].bytes == 8);
    using Catch::Matchers::ContainsSubstring;
    CHECK_THROWS_WITH(parse_manifest(course(R"([{"metric":"speed","array":"a","says":"x"}])")),
                      ContainsSubstring("bank-conflicts, coalesced or vector-width"));
    CHECK_THROWS_WITH(parse_manifest(course(R"([{"metric":"coalesced","says":"x"}])")),
                      ContainsSubstring("\"array\""));
    CHECK_THROWS_WITH(
        parse_manifest(course(R"([{"metric":"coalesced","array":"a","op":"rw","says":"x"}])")),
        ContainsSubstring("load or store"));
    CHECK_THROWS_WITH(parse_manifest(course(R"({"metric":"coalesced"})")),
                      ContainsSubstring("is a list"));
}

TEST_CASE("steps can be named in every way the docs promise", "[manifest]") {
    Manifest m = parse_manifest(kCourse);
    using P = std::vector<std::pair<std::size_t, std::size_t>>;
    CHECK(resolve(m, "01_vector_add/02_grid_stride_loop") == P{{0, 1}});
    CHECK(resolve(m, "01/02") == P{{0, 1}});
    CHECK(resolve(m, "1/2") == P{{0, 1}});
    CHECK(resolve(m, "1.3") == P{{0, 2}});
    CHECK(resolve(m, "vector_add/3") == P{{0, 2}});
    CHECK(resolve(m, "lessons/01_vector_add/03_float4.cu") == P{{0, 2}});
    CHECK(resolve(m, "/home/me/course/solutions/02_reduce/01_interleaved.cu") == P{{1, 0}});
    CHECK(resolve(m, "02") == P{{1, 0}, {1, 1}});
    CHECK(resolve(m, "reduce") == P{{1, 0}, {1, 1}});
    CHECK(resolve(m, "lessons/02_reduce/") == P{{1, 0}, {1, 1}});
}

TEST_CASE("unknown steps say what is wrong", "[manifest]") {
    Manifest m = parse_manifest(kCourse);
    std::string error;
    CHECK_FALSE(resolve_steps(m, "7", &error));
    CHECK_THAT(error, Catch::Matchers::ContainsSubstring("no lesson"));
    CHECK_FALSE(resolve_steps(m, "1/9", &error));
    CHECK_THAT(error, Catch::Matchers::ContainsSubstring("no step"));
    CHECK_FALSE(resolve_steps(m, "", &error));
}

TEST_CASE("the course root is found from any directory below it", "[course]") {
    namespace fs = std::filesystem;
    fs::path root = fs::path(test_support::temp_path("root_test"));
    fs::remove_all(root);
    fs::create_directories(root / "lessons" / "01_vector_add");
    std::ofstream(root / "course.json") << kCourse;
    auto found = find_course_root((root / "lessons" / "01_vector_add").string());
    REQUIRE(found);
    CHECK(fs::equivalent(*found, root));
    CHECK_FALSE(find_course_root("/"));
    fs::remove_all(root);
}

TEST_CASE("progress is saved atomically and read back", "[course]") {
    namespace fs = std::filesystem;
    fs::path dir = fs::path(test_support::temp_path("progress_test"));
    fs::remove_all(dir);
    std::string file = (dir / "state" / "progress.json").string();
    {
        Progress p(file);
        CHECK_FALSE(p.passed("01_vector_add/01_one_thread_per_element"));
        p.mark_passed("01_vector_add/01_one_thread_per_element", "abc");
        p.mark_passed("01_vector_add/02_grid_stride_loop", "def");
        p.clear("01_vector_add/02_grid_stride_loop");
        REQUIRE(p.save());
    }
    Progress again(file);
    CHECK(again.passed("01_vector_add/01_one_thread_per_element"));
    CHECK_FALSE(again.passed("01_vector_add/02_grid_stride_loop"));
    std::ofstream(file) << "not json";
    Progress damaged(file);  // a damaged file starts afresh rather than failing
    CHECK_FALSE(damaged.passed("01_vector_add/01_one_thread_per_element"));
    fs::remove_all(dir);
}

TEST_CASE("a lesson named by id is read from its own part, checks/<id>/lesson.json", "[manifest]") {
    const std::string course = R"({"lessons": ["05_scan"]})";
    const std::string part = R"({"id": "05_scan", "title": "Scan", "problem": "inclusive_scan",
      "steps": [{"id": "01_tile", "problem": "tile_scan", "timed_size": "2^24"},
                {"id": "02_device"}],
      "baselines": [{"name": "cub", "title": "cub::DeviceScan::InclusiveSum"}]})";
    std::string asked;
    Manifest m = parse_manifest(course, [&](const std::string& id) {
        asked = id;
        return part;
    });
    CHECK(asked == "05_scan");
    REQUIRE(m.lessons.size() == 1);
    CHECK(m.lessons[0].steps[0].problem == "tile_scan");
    CHECK(m.lessons[0].steps[0].timed_size == (1u << 24));
    CHECK(m.lessons[0].steps[1].problem == "inclusive_scan");
    CHECK(m.lessons[0].baselines[0].problem == "inclusive_scan");
    // a part whose id is not the one asked for is refused
    CHECK_THROWS_WITH(
        parse_manifest(course,
                       [](const std::string&) {
                           return std::string(
                               R"({"id": "06_x", "problem": "p", "steps": [{"id": "a"}]})");
                       }),
        Catch::Matchers::ContainsSubstring("not \"05_scan\""));
}

TEST_CASE("sizes read as a learner writes them", "[manifest]") {
    CHECK(parse_size("2^24") == (1u << 24));
    CHECK(parse_size("2^20+3") == (1u << 20) + 3);
    CHECK(parse_size("2^16-1") == 65535);
    CHECK(parse_size("1000") == 1000);
    CHECK(parse_size("2^x") == 0);
    CHECK(parse_size("3^4") == 0);
    CHECK(parse_size("") == 0);
}

TEST_CASE("a step can say it needs a GPU; anything but true or false is refused", "[manifest]") {
    const auto course = [](const std::string& flag) {
        return R"({"lessons":[{"id":"07_compact","problem":"compact","steps":[{"id":"01_cub")" +
               flag + R"(},{"id":"02_by_hand"}]}]})";
    };
    const Manifest m = parse_manifest(course(R"(, "needs_gpu": true)"));
    CHECK(m.lessons[0].steps[0].needs_gpu);
    CHECK_FALSE(m.lessons[0].steps[1].needs_gpu);
    CHECK_THROWS_WITH(parse_manifest(course(R"(, "needs_gpu": "yes")")),
                      Catch::Matchers::ContainsSubstring("needs_gpu"));
}

// A step may cut its emulated values-only case, and must say why; the size given is kept
// between the two emulated sizes.
TEST_CASE("a step's emulated values-only case can be cut, with a reason", "[manifest]") {
    const auto course = [](const std::string& field) {
        return R"({"lessons":[{"id":"05_scan","problem":"scan","steps":[{"id":"01_tile")" +
               field + R"(},{"id":"02_other"}]}]})";
    };
    const Manifest m = parse_manifest(
        course(R"(, "emulated": {"values_up_to": "2^18+3", "why": "tiles are independent"})"));
    CHECK(m.lessons[0].steps[0].emulated_values_up_to == (1u << 18) + 3);
    CHECK(m.lessons[0].steps[0].emulated_values_why == "tiles are independent");
    CHECK(m.lessons[0].steps[1].emulated_values_up_to == 0);
    CHECK(emulated_large_n(m.lessons[0].steps[0].emulated_values_up_to) == (1u << 18) + 3);
    CHECK(emulated_large_n(0) == kEmulatedLargeN);
    CHECK(emulated_large_n(kEmulatedLargeN * 4) == kEmulatedLargeN);
    CHECK(emulated_large_n(1000) == kEmulatedMaxN + 1);
    for (const char* bad : {R"(, "emulated": {"values_up_to": "2^18+3"})",
                            R"(, "emulated": {"values_up_to": "2^18+3", "why": ""})",
                            R"(, "emulated": {"values_up_to": "lots", "why": "w"})",
                            R"(, "emulated": "2^18")"}) {
        INFO(bad);
        CHECK_THROWS_WITH(parse_manifest(course(bad)),
                          Catch::Matchers::ContainsSubstring("emulated"));
    }
}

// Where the learner goes next: the rest of the lesson first (after 09/2 comes 09/3, not 01/1),
// then on through the course and round to its start; a step that needs a GPU is passed over
// where there is none, as a passed one is.
TEST_CASE("the next step is the same lesson's, and a GPU-only step holds nothing up", "[course]") {
    namespace fs = std::filesystem;
    Manifest m = parse_manifest(kCourse);
    m.lessons[1].steps[0].needs_gpu = true;  // 02_reduce/01_interleaved
    const fs::path dir = fs::path(test_support::temp_path("next_step"));
    Progress p((dir / "progress.json").string());
    const auto name = [&](std::optional<StepRef> r) { return r ? step_name(m, *r) : "-"; };
    CHECK(name(next_unfinished(m, p, true)) == "01_vector_add/01_one_thread_per_element");
    p.mark_passed("01_vector_add/02_grid_stride_loop", "h");
    // After 01/2 passed: 01/3, though 01/1 is not done.
    CHECK(name(next_unfinished(m, p, true, StepRef{0, 1})) == "01_vector_add/03_float4");
    // After the last step of a lesson: the lesson's unfinished steps before it come first.
    CHECK(name(next_unfinished(m, p, true, StepRef{0, 2})) ==
          "01_vector_add/01_one_thread_per_element");
    // After the last step of the course: the rest of its lesson, then round to the start.
    CHECK(name(next_unfinished(m, p, true, StepRef{1, 1})) == "02_reduce/01_interleaved");
    CHECK(name(next_unfinished(m, p, false, StepRef{1, 1})) ==
          "01_vector_add/01_one_thread_per_element");
    // 02/1 needs a GPU: once lesson 01 is done, it comes next with one, and is passed over
    // without.
    p.mark_passed("01_vector_add/01_one_thread_per_element", "h");
    CHECK(name(next_unfinished(m, p, true, StepRef{0, 2})) == "02_reduce/01_interleaved");
    CHECK(name(next_unfinished(m, p, false, StepRef{0, 2})) == "02_reduce/02_strided_index");
    p.clear("01_vector_add/01_one_thread_per_element");
    // The step in hand: the current one while unfinished, the next once passed (or, without a
    // GPU, when it needs one), the first unfinished when there is none.
    CHECK(name(step_in_hand(m, p, true, StepRef{0, 2})) == "01_vector_add/03_float4");
    CHECK(name(step_in_hand(m, p, true, StepRef{0, 1})) == "01_vector_add/03_float4");
    CHECK(name(step_in_hand(m, p, false, StepRef{1, 0})) == "02_reduce/02_strided_index");
    CHECK(name(step_in_hand(m, p, true, StepRef{1, 0})) == "02_reduce/01_interleaved");
    CHECK(name(step_in_hand(m, p, true, std::nullopt)) ==
          "01_vector_add/01_one_thread_per_element");
    CHECK(name(step_in_hand(m, p, true, StepRef{7, 0})) ==
          "01_vector_add/01_one_thread_per_element");
    // Every step that can be done here is done: nothing, though 02/1 waits for a GPU.
    for (const char* s : {"01_vector_add/01_one_thread_per_element", "01_vector_add/03_float4",
                          "02_reduce/02_strided_index"})
        p.mark_passed(s, "h");
    CHECK(name(next_unfinished(m, p, false)) == "-");
    CHECK(name(next_unfinished(m, p, true)) == "02_reduce/01_interleaved");
    CHECK(name(find_step(m, "02_reduce/02_strided_index")) == "02_reduce/02_strided_index");
    CHECK_FALSE(find_step(m, "02_reduce/09_missing"));
}
