// `cudalings reset STEP` (or a lesson file: `reset 01_vector_add/vector_add.cuh`): puts the
// course's version of the file back (from build/pristine), after keeping yours in
// .cudalings/backups/, and forgets that the step passed.
#include <nlohmann/json.hpp>

#include <filesystem>
#include <iostream>

#include "../core/course/pristine.h"
#include "../core/run/verdict.h"
#include "cli.h"

namespace fs = std::filesystem;

namespace cudalings::cli {
namespace {

// lessons/<path> named by `text`: a step, or a lesson file given by its path (from the current
// folder or the course root, with or without "lessons/"). "" when it names neither.
std::string lesson_path_for(const Options& o, const CoursePaths& paths, const Manifest& m,
                            const Progress& progress, std::string& step, std::string& error) {
    std::error_code ec;
    for (const fs::path& candidate : {fs::absolute(o.step, ec), fs::path(paths.root) / o.step,
                                      fs::path(paths.root) / "lessons" / o.step}) {
        if (!fs::is_regular_file(candidate, ec)) continue;
        const fs::path rel = fs::relative(fs::weakly_canonical(candidate, ec),
                                          fs::weakly_canonical(paths.root + "/lessons", ec), ec);
        if (!rel.empty() && *rel.begin() != "..") return rel.generic_string();
    }
    std::vector<StepRef> steps;
    if (!select_steps(o, paths, m, progress, steps)) return {};
    if (steps.size() != 1) {
        error = "reset takes one step or one lesson file, not a whole lesson";
        return {};
    }
    const auto& lesson = m.lessons[steps[0].lesson];
    step = step_name(m, steps[0]);
    return lesson.id + "/" + lesson.steps[steps[0].step].id + ".cu";
}

int run_reset(const Options& o) {
    CoursePaths paths;
    Manifest m;
    if (!open_course(o, paths, m)) return exit_code::usage;
    const std::string pristine = pristine_or_explain(paths);
    if (pristine.empty()) return exit_code::fail;
    Progress progress(paths.state_dir + "/progress.json");
    std::string step, error;
    const std::string path = lesson_path_for(o, paths, m, progress, step, error);
    if (path.empty()) {
        if (!error.empty()) std::cerr << "cudalings: " << error << "\n";
        return exit_code::usage;
    }
    std::string backup;
    if (!restore_lesson_file(paths.root, pristine, path, paths.state_dir + "/backups", backup,
                             error)) {
        std::cerr << "cudalings: " << error << "\n";
        return exit_code::fail;
    }
    if (!step.empty()) {
        progress.clear(step);
        progress.save();
    }
    if (o.json) {
        std::cout << versioned({{"restored", "lessons/" + path}, {"backup", backup}}).dump(2)
                  << "\n";
    } else {
        std::cout << "Restored lessons/" << path << " as the course ships it.\n";
        if (!backup.empty()) std::cout << "Your version is kept in " << backup << "\n";
    }
    return exit_code::pass;
}

}  // namespace

Command add_reset_command(CLI::App& app, Options& o) {
    auto* reset = app.add_subcommand(
        "reset",
        "put a step's file (or a lesson header) back as the course ships it; yours is "
        "kept in .cudalings/backups/");
    reset->add_option("step", o.step, "the step (01/2, 02_grid_stride_loop, a path) or a file")
        ->required();
    return {reset, [&o] { return run_reset(o); }};
}

}  // namespace cudalings::cli
