// The machine's faults are SETUP_ERROR, never COMPILE_ERROR or INTERNAL_ERROR, never with the
// lesson's hint, and never cost the learner a step they had passed.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include "flow_support.h"
#include "setup.h"

using Catch::Matchers::ContainsSubstring;
using namespace cudalings;

namespace {

std::string fake_nvcc(const std::string& body) {
    const std::string path = flow::temp_dir("nvcc") + "/nvcc";
    flow::write(path, "#!/bin/sh\n" + body);
    ::chmod(path.c_str(), 0755);
    return path;
}

nlohmann::json check_json(const std::string& step, std::map<std::string, std::string> env,
                          std::vector<std::string> extra = {}) {
    std::vector<std::string> args{"--json", "check", step, "--no-time"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = flow::cudalings(args, std::move(env));
    INFO(r.err);
    return nlohmann::json::parse(r.out)["results"][0];
}

}  // namespace

TEST_CASE("build output that is the toolchain's fault is recognised", "[setup]") {
    CHECK(setup_problem_in_build_output(
        "/usr/local/cuda/include/crt/host_config.h:143:2: error: #error -- unsupported GNU "
        "version! gcc versions later than 13 are not supported!"));
    CHECK(
        setup_problem_in_build_output("nvcc fatal   : Unsupported gpu architecture 'compute_70'"));
    CHECK(setup_problem_in_build_output("sh: 1: cicc: not found"));
    CHECK(setup_problem_in_build_output("/usr/bin/ld: final link failed: No space left on device"));
    // The learner's own mistakes are not setup problems.
    CHECK_FALSE(setup_problem_in_build_output(
        "step.cu(12): error: identifier \"threadIdx_x\" is undefined"));
    CHECK_FALSE(setup_problem_in_build_output(
        "ptxas error   : Entry function '_Z3addPf' uses too much shared data (0x10000 bytes)"));
}

TEST_CASE("a GPU architecture nvcc cannot build for is a setup problem", "[setup]") {
    const std::string nvcc = fake_nvcc(
        "case \"$1\" in\n"
        "  --list-gpu-code) echo sm_75; echo sm_80; echo sm_90 ;;\n"
        "  --version) echo 'Cuda compilation tools, release 13.0, V13.0.88' ;;\n"
        "esac\n");
    CHECK_FALSE(unsupported_architecture(nvcc, "sm_80"));
    auto v100 = unsupported_architecture(nvcc, "sm_70");
    REQUIRE(v100);
    CHECK_THAT(v100->what, ContainsSubstring("sm_70"));
    CHECK_THAT(v100->fix, ContainsSubstring("CUDA 12"));
    auto future = unsupported_architecture(nvcc, "sm_120");
    REQUIRE(future);
    CHECK_THAT(future->fix, ContainsSubstring("newer"));
}

TEST_CASE("no nvcc is SETUP_ERROR without the lesson's hint", "[setup][cli]") {
    auto r = check_json("1/1", {{"CUDALINGS_NVCC", "/nonexistent/bin/nvcc"}});
    CHECK(r["verdict"] == "SETUP_ERROR");
    CHECK_THAT(r["reason"].get<std::string>(), ContainsSubstring("nvcc"));
    CHECK(r["hint"] == "");
}

TEST_CASE("an nvcc that refuses the host compiler is SETUP_ERROR", "[setup][cli]") {
    const std::string nvcc = fake_nvcc(
        "echo '/usr/local/cuda/include/crt/host_config.h:143:2: error: #error -- "
        "unsupported GNU version! gcc versions later than 13 are not supported!' >&2\n"
        "exit 1\n");
    auto r = check_json("1/1", {{"CUDALINGS_NVCC", nvcc}});
    CHECK(r["verdict"] == "SETUP_ERROR");
    CHECK_THAT(r["reason"].get<std::string>(), ContainsSubstring("host compiler"));
}

TEST_CASE("a state directory that cannot be created is SETUP_ERROR with the OS's reason",
          "[setup][cli]") {
    const std::string file = flow::temp_dir("file") + "/plain-file";
    flow::write(file, "not a directory\n");
    auto r = check_json("1/1", {{"CUDALINGS_STATE_DIR", file + "/state"}});
    CHECK(r["verdict"] == "SETUP_ERROR");
    CHECK_THAT(r["reason"].get<std::string>(), ContainsSubstring("Not a directory"));
}

TEST_CASE("a setup failure does not take away a passed step", "[setup][cli]") {
    const std::string state = flow::temp_dir("state");
    const std::string step = "01_vector_add/01_one_thread_per_element";
    // The step passed with the file as it is now.
    flow::write(state + "/progress.json", "{\"passed\": {\"" + step + "\": \"x\"}}\n");
    check_json("1/1", {{"CUDALINGS_STATE_DIR", state}, {"CUDALINGS_NVCC", "/nonexistent/nvcc"}});
    auto list = nlohmann::json::parse(
        flow::cudalings({"list", "--json"}, {{"CUDALINGS_STATE_DIR", state}}).out);
    CHECK(list["steps"][0]["status"] == "done");
}
