// A learner's header edit, a compile error in a lesson file and solved steps never break
// `check`, `list` and `hint` of other steps: the checker takes the course's own lesson headers
// from build/pristine, and only the learner's steps see the learner's files. `reset` puts a
// file back and keeps the learner's copy.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <nlohmann/json.hpp>

#include "flow_support.h"

using Catch::Matchers::ContainsSubstring;

namespace {

std::string verdict_of(const flow::Run& r) {
    auto j = nlohmann::json::parse(r.out, nullptr, false);
    if (j.is_discarded() || !j.contains("results")) return "no result: " + r.err;
    return j["results"][0]["verdict"];
}

}  // namespace

TEST_CASE("edits, errors and solutions in lesson files stay with their own steps",
          "[pristine][cli]") {
    const std::string root = flow::course_copy();
    const std::string lessons = root + "/lessons";
    // The header's contract changed (size_t n -> int n), a syntax error in another lesson,
    // and a solved step.
    std::string header = flow::read(lessons + "/01_vector_add/vector_add.cuh");
    const auto at = header.find("size_t n");
    REQUIRE(at != std::string::npos);
    header.replace(at, 8, "int n");
    flow::write(lessons + "/01_vector_add/vector_add.cuh", header);
    flow::write(lessons + "/02_reduce/01_interleaved.cu", "this is not CUDA {\n");
    flow::write(
        lessons + "/01_vector_add/03_float4.cu",
        flow::read(std::string(CUDALINGS_SOURCE_DIR) + "/solutions/01_vector_add/03_float4.cu"));
    const std::string state = flow::temp_dir("state");
    const std::map<std::string, std::string> env{{"CUDALINGS_STATE_DIR", state}};
    CHECK(flow::cudalings({"--root", root, "list"}, env).code == 0);
    CHECK(flow::cudalings({"--root", root, "hint", "1/1"}, env).code == 0);
    CHECK(flow::cudalings({"--root", root, "hint", "2/1"}, env).code == 0);
    // Another lesson's skeleton is checked as usual.
    CHECK(verdict_of(flow::cudalings({"--root", root, "--json", "check", "3/1", "--emulate"},
                                     env)) == "WRONG");
    // The broken file is that step's COMPILE_ERROR, nothing more.
    CHECK(verdict_of(flow::cudalings({"--root", root, "--json", "check", "2/1", "--emulate"},
                                     env)) == "COMPILE_ERROR");
}

TEST_CASE("reset restores the course's version and keeps the learner's", "[pristine][cli]") {
    const std::string root = flow::course_copy();
    const std::string file = root + "/lessons/01_vector_add/01_one_thread_per_element.cu";
    const std::string original = flow::read(file);
    flow::write(file, "// my attempt\n");
    const std::string state = flow::temp_dir("state");
    auto r = flow::cudalings({"--root", root, "--json", "reset", "1/1"},
                             {{"CUDALINGS_STATE_DIR", state}});
    REQUIRE(r.code == 0);
    CHECK(flow::read(file) == original);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(flow::read(j["backup"].get<std::string>()) == "// my attempt\n");
    // A header, by its path.
    flow::write(root + "/lessons/01_vector_add/vector_add.cuh", "// broken\n");
    CHECK(flow::cudalings({"--root", root, "reset", "01_vector_add/vector_add.cuh"},
                          {{"CUDALINGS_STATE_DIR", state}})
              .code == 0);
    CHECK(
        flow::read(root + "/lessons/01_vector_add/vector_add.cuh") ==
        flow::read(std::string(CUDALINGS_PRISTINE_DIR) + "/lessons/01_vector_add/vector_add.cuh"));
    // A whole lesson is refused.
    CHECK(flow::cudalings({"--root", root, "reset", "01"}, {{"CUDALINGS_STATE_DIR", state}}).code ==
          2);
}
