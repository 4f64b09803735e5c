// `cudalings doctor`: what this machine has for the course, one line per part, each ok,
// warning or error with the fix. The facts are gathered first (gather_facts: nvcc, the host
// compiler, the driver and GPUs through libcuda, CMake, the CUDA tools, cgroups, the state
// directory, the emulator, the build, the lesson files) and judged by a pure function
// (diagnose), so that every judgement is tested with made-up facts too.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "course.h"

namespace cudalings {

enum class Health { Ok, Warning, Error };

struct DoctorLine {
    std::string topic;  // "nvcc", "driver", "gpu", ...
    Health health = Health::Ok;
    std::string text;    // what was found
    std::string fix;     // what to do (warnings and errors)
    std::string anchor;  // its section of docs/troubleshooting.md
};

struct GpuFact {
    std::string name;  // "NVIDIA H200"
    std::string arch;  // "sm_90"
};

struct DoctorFacts {
    // The CUDA Toolkit.
    std::string nvcc;  // as configured (path or name)
    bool nvcc_runs = false;
    std::string nvcc_error;              // why it does not run
    std::string nvcc_release;            // "13.0"
    std::vector<std::string> gpu_codes;  // "sm_75", ...
    // A tiny file built with nvcc: the host compiler and nvcc agree (empty output: fine).
    bool host_build_ran = false, host_build_ok = false;
    std::string host_build_output;
    std::string host_compiler, host_compiler_version;
    // The driver (through libcuda) and the GPUs.
    bool driver_loaded = false;
    std::string driver_error;     // why libcuda could not be used
    int driver_cuda_version = 0;  // cuDriverGetVersion: 12040 for CUDA 12.4
    std::string driver_version;   // "580.65.06" (/proc/driver/nvidia/version), "" when unknown
    std::vector<GpuFact> gpus;
    bool gpu_runner_built = false;  // build/cudalings-runner
    // Tools.
    std::string cmake_version;              // "3.25.1"; "" when there is no cmake
    std::string sanitizer, ncu, cuobjdump;  // paths, "" when absent
    // The operating system.
    bool memory_cgroups = false;
    // This build can make the seccomp filter of the processes that run a learner's code (it was
    // configured with libseccomp).
    bool seccomp_filter = true;
    std::string state_dir;
    std::string state_dir_error;  // "" when writable
    std::string libc_version;
    // The emulator (no GPU).
    std::vector<std::string> emulator_missing;  // parts of it that are not there
    // The build and the course.
    std::string build_root;  // the course the build was configured for ("" when unknown)
    std::string course_root;
    std::vector<std::string> unverified_files;  // lesson files without a verified course version
    std::vector<std::string> changed_headers;   // lesson files (not steps) the learner changed
};

struct DoctorContext {
    CoursePaths paths;  // the course may be unknown (doctor also runs outside a course)
    bool have_course = false;
    std::string nvcc;
};

DoctorFacts gather_facts(const DoctorContext& context);
std::vector<DoctorLine> diagnose(const DoctorFacts& facts);

std::string render_doctor(const std::vector<DoctorLine>& lines, bool color);
nlohmann::json doctor_json(const std::vector<DoctorLine>& lines);

// "12.4" for 12040.
std::string cuda_version_text(int version);

}  // namespace cudalings
