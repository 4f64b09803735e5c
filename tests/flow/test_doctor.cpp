// `cudalings doctor`: each judgement with made-up facts, then the real command with the
// conditions faked where they are met: no nvcc (CUDALINGS_NVCC), an old CMake (a `cmake` on
// PATH that says 3.18), an old driver and an old GPU (a fake libcuda, CUDALINGS_LIBCUDA).
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include "doctor.h"
#include "flow_support.h"

using Catch::Matchers::ContainsSubstring;
using namespace cudalings;

namespace {

DoctorFacts healthy() {
    DoctorFacts f;
    f.nvcc = "/usr/local/cuda/bin/nvcc";
    f.nvcc_runs = true;
    f.nvcc_release = "13.0";
    f.gpu_codes = {"sm_75", "sm_80", "sm_90", "sm_100", "sm_120"};
    f.host_build_ran = f.host_build_ok = true;
    f.host_compiler_version = "g++ 12.2.0";
    f.driver_loaded = true;
    f.driver_cuda_version = 13000;
    f.gpus = {{"NVIDIA H200", "sm_90"}};
    f.gpu_runner_built = true;
    f.cmake_version = "3.25.1";
    f.sanitizer = f.ncu = f.cuobjdump = "/usr/local/cuda/bin/tool";
    f.memory_cgroups = true;
    f.state_dir = "/tmp/state";
    return f;
}

const DoctorLine* line_for(const std::vector<DoctorLine>& lines, const std::string& topic,
                           Health health) {
    for (const auto& l : lines)
        if (l.topic == topic && l.health == health) return &l;
    return nullptr;
}

bool has(const std::vector<DoctorLine>& lines, const std::string& topic, Health health) {
    return line_for(lines, topic, health) != nullptr;
}

int errors(const std::vector<DoctorLine>& lines) {
    int n = 0;
    for (const auto& l : lines) n += l.health == Health::Error;
    return n;
}

// doctor --json's line for `topic` with `status`, or null.
nlohmann::json doctor_line(const flow::Run& r, const std::string& topic,
                           const std::string& status) {
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["format_version"] == 1);
    for (const auto& c : j["checks"])
        if (c["topic"] == topic && c["status"] == status) return c;
    return nullptr;
}

std::string script(const std::string& dir, const std::string& name, const std::string& body) {
    const std::string path = dir + "/" + name;
    flow::write(path, "#!/bin/sh\n" + body);
    ::chmod(path.c_str(), 0755);
    return path;
}

}  // namespace

TEST_CASE("doctor: a healthy machine has no warning and no error", "[doctor]") {
    const auto lines = diagnose(healthy());
    for (const auto& l : lines) CHECK(l.health == Health::Ok);
}

TEST_CASE("doctor: each problem is an error or a warning with a fix", "[doctor]") {
    SECTION("no GPU: a warning, checks emulate") {
        auto f = healthy();
        f.driver_loaded = false;
        f.gpus.clear();
        f.driver_error = "no NVIDIA driver: libcuda.so.1 cannot be loaded";
        const auto lines = diagnose(f);
        const auto* l = line_for(lines, "gpu", Health::Warning);
        REQUIRE(l);
        CHECK_THAT(l->fix, ContainsSubstring("emulator"));
        CHECK(errors(lines) == 0);
    }
    SECTION("no nvcc") {
        auto f = healthy();
        f.nvcc_runs = false;
        f.nvcc_error = "not found (nvcc)";
        const auto lines = diagnose(f);
        const auto* l = line_for(lines, "nvcc", Health::Error);
        REQUIRE(l);
        CHECK_THAT(l->fix, ContainsSubstring("CUDA Toolkit"));
    }
    SECTION("a GPU the toolkit cannot target (sm_70 with CUDA 13)") {
        auto f = healthy();
        f.gpus = {{"Tesla V100-SXM2-16GB", "sm_70"}};
        const auto lines = diagnose(f);
        const auto* l = line_for(lines, "gpu", Health::Error);
        REQUIRE(l);
        CHECK_THAT(l->text, ContainsSubstring("sm_70"));
        CHECK_THAT(l->fix, ContainsSubstring("CUDA 12"));
    }
    SECTION("a GPU newer than the toolkit") {
        auto f = healthy();
        f.gpus = {{"Future GPU", "sm_150"}};
        const auto lines = diagnose(f);
        const auto* l = line_for(lines, "gpu", Health::Error);
        REQUIRE(l);
        CHECK_THAT(l->fix, ContainsSubstring("newer CUDA Toolkit"));
    }
    SECTION("CMake older than 3.22 is an error; 3.22 to 3.24 a warning") {
        auto f = healthy();
        f.cmake_version = "3.18.4";
        CHECK(has(diagnose(f), "cmake", Health::Error));
        f.cmake_version = "3.22.1";
        CHECK(has(diagnose(f), "cmake", Health::Warning));
    }
    SECTION("a driver older than the toolkit: an error across a major version") {
        auto f = healthy();
        f.driver_cuda_version = 12040;
        const auto lines = diagnose(f);
        const auto* l = line_for(lines, "driver", Health::Error);
        REQUIRE(l);
        CHECK_THAT(l->text, ContainsSubstring("12.4"));
        CHECK_THAT(l->fix, ContainsSubstring("update the NVIDIA driver"));
        f.nvcc_release = "12.8";
        CHECK(has(diagnose(f), "driver", Health::Warning));  // minor-version compatible
    }
    SECTION("a host compiler nvcc refuses") {
        auto f = healthy();
        f.host_build_ok = false;
        f.host_build_output =
            "/usr/local/cuda/include/crt/host_config.h:143:2: error: #error -- unsupported GNU "
            "version! gcc versions later than 14 are not supported!";
        const auto lines = diagnose(f);
        const auto* l = line_for(lines, "host compiler", Health::Error);
        REQUIRE(l);
        CHECK_THAT(l->fix, ContainsSubstring("-ccbin"));
    }
    SECTION("an unwritable state directory") {
        auto f = healthy();
        f.state_dir_error = "cannot create /x/.cudalings (Permission denied)";
        CHECK(has(diagnose(f), "state", Health::Error));
    }
    SECTION("a checker built without libseccomp") {
        auto f = healthy();
        f.seccomp_filter = false;
        const auto lines = diagnose(f);
        const auto* l = line_for(lines, "seccomp", Health::Warning);
        REQUIRE(l);
        CHECK_THAT(l->fix, ContainsSubstring("libseccomp-dev"));
        CHECK(l->anchor == "seccomp");
    }
    SECTION("a GPU with no runner built") {
        auto f = healthy();
        f.gpu_runner_built = false;
        CHECK(has(diagnose(f), "runner", Health::Error));
    }
}

TEST_CASE("doctor, run for real, reports faked conditions", "[doctor][cli]") {
    SECTION("no nvcc") {
        auto r = flow::cudalings({"doctor", "--json"}, {{"CUDALINGS_NVCC", "/nonexistent/nvcc"}});
        CHECK(r.code == 1);
        CHECK(doctor_line(r, "nvcc", "error") != nullptr);
    }
    SECTION("a CMake older than 3.22") {
        const std::string bin = flow::temp_dir("bin");
        script(bin, "cmake", "echo 'cmake version 3.18.4'\n");
        auto r = flow::cudalings({"doctor", "--json"},
                                 {{"PATH", bin + ":" + std::string(std::getenv("PATH"))}});
        CHECK(r.code == 1);
        auto l = doctor_line(r, "cmake", "error");
        REQUIRE(l != nullptr);
        CHECK_THAT(l["text"].get<std::string>(), ContainsSubstring("3.18.4"));
    }
    SECTION("no GPU (no driver library)") {
        auto r = flow::cudalings({"doctor", "--json"},
                                 {{"CUDALINGS_LIBCUDA", "/nonexistent/libcuda.so.1"}});
        CHECK(doctor_line(r, "gpu", "warning") != nullptr);
    }
    SECTION("a driver older than the toolkit, and a GPU the toolkit cannot target") {
        auto r =
            flow::cudalings({"doctor", "--json"}, {{"CUDALINGS_LIBCUDA", CUDALINGS_FAKE_LIBCUDA},
                                                   {"FAKE_CUDA_DRIVER_VERSION", "11080"},
                                                   {"FAKE_CUDA_GPUS", "Tesla K80:3.7"}});
        CHECK(r.code == 1);
        CHECK(doctor_line(r, "driver", "error") != nullptr);
        auto gpu = doctor_line(r, "gpu", "error");
        REQUIRE(gpu != nullptr);
        CHECK_THAT(gpu["text"].get<std::string>(), ContainsSubstring("sm_37"));
    }
    SECTION("a supported GPU on a current driver is fine") {
        auto r =
            flow::cudalings({"doctor", "--json"}, {{"CUDALINGS_LIBCUDA", CUDALINGS_FAKE_LIBCUDA},
                                                   {"FAKE_CUDA_DRIVER_VERSION", "13000"},
                                                   {"FAKE_CUDA_GPUS", "NVIDIA H200:9.0"}});
        CHECK(doctor_line(r, "gpu", "ok") != nullptr);
        CHECK(doctor_line(r, "driver", "ok") != nullptr);
    }
}
