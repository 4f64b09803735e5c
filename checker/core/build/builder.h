// What a check builds before anything runs: the learner's step with nvcc (and the policy screen
// on what nvcc compiled), the same file for the CPU emulator, the step's reference solution, and
// the lesson's checks and call shims, each cached. It runs compilers and the runner's listing of
// a lesson's entry points, never a learner's code. The pipeline (run/check.h) asks; this builds.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "checks_build.h"
#include "compile.h"
#include "course.h"
#include "emulate.h"
#include "manifest.h"
#include "report.h"
#include "setup.h"

namespace cudalings {

class Sandbox;  // sandbox.h

struct GpuInfo {
    bool present = false;
    std::string name;  // "NVIDIA H200"
    std::string arch;  // "sm_90"
    std::string uuid;
    int sms = 0;
    std::string error;  // why there is no GPU, when there is none
};

// The part of a check's options (check.h, CheckOptions) that decides how things are built.
struct BuildOptions {
    std::string nvcc;              // empty: the build's nvcc, else "nvcc" on PATH
    double compile_seconds = 120;  // CPU seconds per compiler process
    bool use_cache = true;
    std::shared_ptr<const Sandbox> sandbox;   // every build of a learner's file runs in it
    std::vector<std::string> forbidden_dirs;  // more folders no step may include (grading)
    bool coverage = false;  // `dev check --coverage`: the emulator's build counts basic blocks
};

// The learner's file built for the emulator, or why not.
struct EmulatedObject {
    std::string path;     // the built file, when there is one
    std::string key;      // its cache key
    std::string skipped;  // the emulator's limit: why it cannot run this file
    std::optional<SetupProblem> setup;
    std::string internal;
};

// nvcc's identity in a cache key: where it lives on PATH.
std::string which(const std::string& program);

class Builder {
  public:
    // `gpu`: this machine's GPU (the architecture to build for; none: a build for the emulator's
    // front ends only). `progress`: a line for the learner as each build starts.
    Builder(CoursePaths paths, BuildOptions options, std::function<const GpuInfo&()> gpu,
            std::function<void(const std::string&)> progress);

    std::string nvcc() const;
    // The learner's file as nvcc builds it (its cache key names the build).
    CompileRequest compile_request(const LessonInfo& lesson, const std::string& source);
    // nvcc's build of `source` (screened), into the cache: the object's path in `object`. The
    // verdict of a file that does not build goes into `report`. `while_building` is called once
    // nvcc starts (not on a cache hit), with the object's path.
    bool compile(const LessonInfo& lesson, const StepInfo& step, const std::string& source,
                 bool solution_file, StepReport& report, std::string& object,
                 const std::function<void(const std::string&)>& while_building = {});
    // The step's reference solution, built on demand (empty when it cannot be built).
    std::string reference(const LessonInfo& lesson, const StepInfo& step);

    // The emulator's build of a file (`source` empty: the tools and folders only).
    EmulatedBuild emulated_build(std::vector<std::string> include_dirs,
                                 const std::string& source) const;
    // The learner's file (already accepted by nvcc) built for the emulator, or cached; `cancel`
    // (optional) stops it at once.
    EmulatedObject emulated_object(const LessonInfo& lesson, const std::string& file,
                                   const std::atomic<bool>* cancel = nullptr);
    // The imports of the emulator's build: false (the verdict in `report`) when it loads
    // libraries itself.
    bool screen_emulated_imports(const EmulatedObject& built, StepReport& report);

    // The lesson's checks plugin (or its baselines), built when first needed; empty on failure,
    // with `error` saying why.
    std::string lesson_checks(const LessonInfo& lesson, bool emulated, bool baselines,
                              std::string* error);
    // The judge split's call shims of a lesson (kit/shim.h), built beside its checks `checks`
    // (for the GPU, or for the emulator: `emulated`; once, then cached): the path, or "" with
    // `error`.
    std::string lesson_shims(const LessonInfo& lesson, const std::string& checks, bool emulated,
                             std::string* error);
    ChecksToolchain toolchain(bool emulated);

    std::string emulated_runner() const;

  private:
    const GpuInfo& gpu() const { return gpu_(); }
    void say(const std::string& what) const {
        if (progress_) progress_(what);
    }

    CoursePaths paths_;
    BuildOptions options_;
    std::function<const GpuInfo&()> gpu_;
    std::function<void(const std::string&)> progress_;
};

}  // namespace cudalings
