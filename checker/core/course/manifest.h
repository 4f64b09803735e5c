// The course manifest: course.json at the course root gives the lessons in order (and the
// libraries no step may use); each lesson's own part, checks/NN_topic/lesson.json, gives its
// steps in order (title, hint, the problem that checks it) and its library baselines.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudalings {

// A performance goal of a step, checked under emulation on the emulator's access pictures
// (goals.h says how): "goals": [{"metric": "bank-conflicts", "array": "tile", "says": "..."}].
struct PerformanceGoal {
    std::string metric;   // "bank-conflicts", "coalesced", "vector-width"
    std::string array;    // the array it is about (the allocation's or __shared__ variable's name)
    std::string op;       // "load", "store", or "" for both
    unsigned bytes = 16;  // vector-width: the bytes per lane it asks for
    std::string says;     // "no bank conflicts in the tile"
};

struct StepInfo {
    std::string id;     // "02_grid_stride_loop" (the file name without .cu)
    std::string title;  // "Grid-stride loop"
    std::string hint;
    bool timed = true;             // false: correctness only
    std::string problem;           // the problem of the lesson's checks (defaults to the lesson's)
    std::uint64_t timed_size = 0;  // > 0: the size of the step's timed cases ("2^24")
    std::vector<std::string>
        forbid;  // libraries this step may not use (course default less "allow")
    // "needs_gpu": true — the CPU emulator cannot run the step (it calls CUB, say): without a
    // GPU it is SKIPPED, and `list`, `hint`, `watch` and `check` pass over it instead of
    // waiting for it.
    bool needs_gpu = false;
    // "emulated": {"values_up_to": "2^18+3", "why": "..."} — the one values-only case of an
    // emulated check at most this size instead of kEmulatedLargeN (emulate.h), for a step whose
    // cases at that size cost the emulator seconds and teach nothing a smaller grid does not.
    // The report says so, with `why`. 0: the default.
    std::uint64_t emulated_values_up_to = 0;
    std::string emulated_values_why;
    // What the step is for, in performance, seen without a GPU (never part of its verdict).
    std::vector<PerformanceGoal> goals;
    // Grading (`cudalings grade`): what the step is worth when it passes, and when a student
    // sees its result on Gradescope: "visible", "hidden", "after_due_date", "after_published".
    double points = 1;
    std::string visibility = "visible";
};

// A library routine timed beside a lesson's steps (e.g. cub::DeviceReduce::Sum).
struct BaselineInfo {
    std::string problem;  // the problem it solves (its signature)
    std::string name;     // its name within the lesson's baselines
    std::string title;    // "cub::DeviceReduce::Sum"
};

struct LessonInfo {
    std::string id;       // "01_vector_add"
    std::string title;    // "Vector add"
    std::string problem;  // the default problem of its steps: "vector_add"
    std::vector<StepInfo> steps;
    std::vector<BaselineInfo> baselines;
    // `cudalings profile`: the metrics the lesson chooses ("profile": {"metrics": [...]}),
    // shown after every profile's summary; empty: the core's defaults (profile.h).
    std::vector<std::string> profile_metrics;
    // The lesson's row in the root README's course table ("summary": {"write": ..., "teaches":
    // ...}), which `cudalings dev update` writes: what the learner writes, what it teaches.
    std::string summary_write, summary_teaches;
};

struct Manifest {
    std::vector<LessonInfo> lessons;
};

// Throws std::runtime_error with a readable message on malformed input. In course.json a lesson
// is its id (its part is then read with `read_part`, given the id) or, for tests, the part itself.
Manifest parse_manifest(std::string_view course_json,
                        const std::function<std::string(const std::string&)>& read_part = {});
// course.json at `root`, with every lesson's part from root/checks/<id>/lesson.json.
Manifest load_manifest(const std::string& root);
// "2^24", "2^20+3", "1000" -> the number (0 when it is not one).
std::uint64_t parse_size(const std::string& text);

// A step's place in the course.
struct StepRef {
    std::size_t lesson = 0;
    std::size_t step = 0;
};

// What a user may type to name steps:
//   "01_vector_add/02_grid_stride_loop", "01/02", "1/2", "1.2", "vector_add/2",
//   "lessons/01_vector_add/02_grid_stride_loop.cu" (a path, also under solutions/),
//   or a lesson alone ("01", "02_reduce", "reduce"), which names all its steps.
// Returns nothing when the text names no step; `error` then says why.
std::optional<std::vector<StepRef>> resolve_steps(const Manifest& m, std::string_view text,
                                                  std::string* error);

std::string step_name(const Manifest& m, const StepRef& ref);  // "01_vector_add/02_grid..."

}  // namespace cudalings
