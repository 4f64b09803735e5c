// Problems of the machine (the toolkit, the host compiler, the driver, the GPU, permissions)
// rather than of the learner's code. A check that meets one ends with SETUP_ERROR: the reason
// names the problem, the operating system's own words and the fix, never the lesson's hint;
// `cudalings doctor` describes the same problems the same way.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "report.h"

namespace cudalings {

struct SetupProblem {
    std::string what;          // "nvcc 13.0 cannot build for this GPU (sm_70)"
    std::string fix;           // "install CUDA 12.x, the last toolkit for sm_70"
    std::string anchor;        // its section of docs/troubleshooting.md
    std::string line() const;  // "what: fix (see docs/troubleshooting.md#anchor)"
};

// The step's verdict becomes SETUP_ERROR with the problem as its reason (and no lesson hint).
void set_setup_error(StepReport& report, const SetupProblem& problem);

SetupProblem cannot_create_directory(const std::string& dir, int error_number);
// `what` cannot run `program` ("nvcc", "the runner"); `why` is the start error (strerror's text).
SetupProblem cannot_run(const std::string& what, const std::string& program,
                        const std::string& why);

// The nvcc the checker uses: CUDALINGS_NVCC, else the one the checker was built with (when it
// is still there), else "nvcc" on PATH.
std::string configured_nvcc();

// A failed build's output that is the toolchain's fault, not the file's: an unsupported host
// compiler, an architecture this nvcc cannot build for, a missing part of the toolkit, a full
// disk, the compiler killed for memory.
std::optional<SetupProblem> setup_problem_in_build_output(std::string_view output);

// The real architectures an nvcc builds for ("sm_75", "sm_80", ...), from
// `nvcc --list-gpu-code` (asked once per nvcc and process); empty when nvcc cannot say.
std::vector<std::string> nvcc_gpu_codes(const std::string& nvcc);
// "13.0" from `nvcc --version` (asked once per nvcc and process); empty when unknown.
std::string nvcc_release(const std::string& nvcc);
// A CUDA tool (compute-sanitizer, ncu, cuobjdump) beside `nvcc`, in the CUDA installation
// (also its nsight-compute* folders, /opt/nvidia/nsight-compute/*), or on PATH; "" when absent.
std::string find_cuda_tool(const std::string& nvcc, const std::string& name);

// The problem of a GPU (`arch`) that a toolkit (`release`, building for `codes`) cannot target.
SetupProblem architecture_problem(const std::string& arch, const std::string& release,
                                  const std::vector<std::string>& codes);
// A problem when `nvcc` cannot build for `arch` ("sm_70").
std::optional<SetupProblem> unsupported_architecture(const std::string& nvcc,
                                                     const std::string& arch);

}  // namespace cudalings
