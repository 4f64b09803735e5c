// The course manifest (course.json at the course root): lessons and steps in order, with a
// title and a hint per step. One file serves the whole course.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudalings {

struct StepInfo {
    std::string id;     // "02_grid_stride_loop" (the file name without .cu)
    std::string title;  // "Grid-stride loop"
    std::string hint;
    bool timed = true;  // false: correctness only
    std::string spec;   // the runner's spec for this step (defaults to the lesson's)
    std::vector<std::string>
        forbid;  // libraries this step may not use (course default less "allow")
    // Grading (`cudalings grade`): what the step is worth when it passes, and when a student
    // sees its result on Gradescope: "visible", "hidden", "after_due_date", "after_published".
    double points = 1;
    std::string visibility = "visible";
};

// A library routine timed beside a lesson's steps (e.g. cub::DeviceReduce::Sum).
struct BaselineInfo {
    std::string spec;   // the runner spec that provides it
    std::string name;   // its name within that spec
    std::string title;  // "cub::DeviceReduce::Sum"
};

struct LessonInfo {
    std::string id;     // "01_vector_add"
    std::string title;  // "Vector add"
    std::string spec;   // the runner's spec for this lesson: "vector_add"
    std::vector<StepInfo> steps;
    std::vector<BaselineInfo> baselines;
};

struct Manifest {
    std::vector<LessonInfo> lessons;
};

// Throws std::runtime_error with a readable message on malformed input.
Manifest parse_manifest(std::string_view json_text);
Manifest load_manifest(const std::string& path);

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
