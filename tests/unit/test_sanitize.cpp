#include <catch2/catch_test_macros.hpp>

#include <algorithm>

#include "sanitize.h"

using namespace cudalings;

TEST_CASE("memcheck findings in the learner's file are read back with file:line", "[sanitize]") {
    const char* out =
        "========= COMPUTE-SANITIZER\n"
        "========= Invalid __global__ write of size 4 bytes\n"
        "=========     at add(const float *, const float *, float *, unsigned long)+0x1b0 in "
        "/home/me/course/lessons/01_vector_add/01_one_thread_per_element.cu:7\n"
        "=========     by thread (1,0,0) in block (0,0,0)\n"
        "=========     Address 0x7f2c4e000404 is out of bounds\n"
        "=========     Saved host backtrace up to driver entry point at kernel launch time\n"
        "=========         Host Frame: [0x2f3c1] in libcuda.so.1\n"
        "========= \n"
        "========= Invalid __global__ read of size 4 bytes\n"
        "=========     at generate_kernel(float *, unsigned long, harness::Dist, unsigned "
        "long)+0x90 in /src/checker/runner/harness.cu:40\n"
        "========= \n"
        "========= ERROR SUMMARY: 2 errors\n";
    auto f = parse_sanitizer_output(
        out, "memcheck", "/home/me/course/lessons/01_vector_add/01_one_thread_per_element.cu");
    REQUIRE(f.size() == 1);  // the runner's own kernel is not the learner's finding
    CHECK(f[0].tool == "memcheck");
    CHECK(f[0].message == "Invalid __global__ write of size 4 bytes");
    CHECK(f[0].line == 7);
    CHECK(f[0].detail.find("out of bounds") != std::string::npos);
    CHECK(f[0].detail.find("Host Frame") == std::string::npos);
}

TEST_CASE("racecheck reports name both accesses", "[sanitize]") {
    const char* out =
        "========= Error: Race reported between Write access at stage(float const *, float *)+0x90 "
        "in /c/lessons/x/race.cu:10\n"
        "=========     and Read access at stage(float const *, float *)+0xb0 in "
        "/c/lessons/x/race.cu:12 [248 hazards]\n"
        "========= \n"
        "========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)\n";
    auto f = parse_sanitizer_output(out, "racecheck", "/c/lessons/x/race.cu");
    REQUIRE(f.size() == 1);
    CHECK(f[0].line == 10);
    CHECK(f[0].detail.find("Read access") != std::string::npos);
    CHECK(f[0].detail.find(":12") != std::string::npos);
}

TEST_CASE("clean output has no findings", "[sanitize]") {
    CHECK(parse_sanitizer_output("========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n",
                                 "memcheck", "/x.cu")
              .empty());
}

TEST_CASE("memcheck gets padding, every tool an error exit code", "[sanitize]") {
    auto cmd = sanitizer_command("/cuda/bin/compute-sanitizer", "memcheck", {"runner", "check"});
    CHECK(cmd[0] == "/cuda/bin/compute-sanitizer");
    CHECK(std::find(cmd.begin(), cmd.end(), "--padding") != cmd.end());
    CHECK(std::find(cmd.begin(), cmd.end(), "--error-exitcode") != cmd.end());
    CHECK(cmd.back() == "check");
    auto race = sanitizer_command("cs", "racecheck", {"runner"});
    CHECK(std::find(race.begin(), race.end(), "--padding") == race.end());
}
