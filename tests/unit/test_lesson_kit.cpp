// The lesson kit's promise: a lesson plugs in through its own folders (lessons/NN, solutions/NN,
// checks/NN) and one line of course order, with no edit anywhere else. tests/throwaway holds such
// a lesson (saxpy) in a course of its own; this test checks it with the real `cudalings`.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>

#include "cli_support.h"

using namespace test_support;
namespace fs = std::filesystem;

namespace {
nlohmann::json check_json(const std::string& root, std::vector<std::string> args) {
    args.insert(args.begin(), {"--root", root});
    auto r = cudalings(args);
    INFO("exit " << r.code << "\n" << r.out.substr(0, 3000) << "\n" << r.err.substr(0, 2000));
    REQUIRE(r.code != -2);
    return nlohmann::json::parse(r.out);
}
}  // namespace

TEST_CASE("a throwaway lesson plugs in through its own folders alone", "[kit]") {
    const fs::path root = fs::path(test_support::temp_path("throwaway_course"));
    fs::copy(fs::path(CUDALINGS_SOURCE_DIR) / "tests" / "throwaway", root,
             fs::copy_options::recursive);

    // The course's own consistency: steps, hints, problems (both builds of its checks), links.
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
