#include "task.h"

#include <chrono>
#include <filesystem>

#include "hash.h"
#include "sandbox.h"
#include "result.h"
#include "submission.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace cudalings::grading {
namespace {

bool contains_path(const std::string& dir, const std::string& path) {
    auto rel = fs::path(path).lexically_relative(dir);
    return !rel.empty() && *rel.begin() != "..";
}

}  // namespace

json grade_submission(const GradeContext& context, const std::string& submission,
                      const std::string& name, int round) {
    const auto start = std::chrono::steady_clock::now();
    json result{
        {"format", kResultFormat},
        {"version", kFormatVersion},
        {"tool", tool_version()},
        {"submission", submission},
        {"name", name},
        {"round", round},
        {"course", {{"root", context.course.root}, {"fingerprint", context.course_fingerprint}}},
        {"sandbox", context.sandbox.empty() ? json(nullptr) : json(context.sandbox)},
        {"seed", {{"mode", context.seeds.mode_name()}}},
        {"results", json::array()}};
    if (context.seeds.mode == SeedSource::Mode::Secret)
        result["seed"]["fingerprint"] = context.seeds.fingerprint;
    auto finish = [&]() {
        add_totals(result);
        make_valid_utf8(result);  // a path, a compiler's or a program's bytes: written anyway
        result["seconds"] =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        return result;
    };

    // The folder itself first: a link, or a folder of the grader's, is graded as nothing.
    const std::string refused = refuse_submission_folder(
        submission, {{context.course.root, "the course being graded"},
                     {context.out_dir, "the grader's output folder"},
                     {context.work_dir, "the grader's work folder"},
                     {context.course.state_dir, "the grader's state folder"}});
    std::vector<StepFile> files;
    for (const auto& ref : context.steps) {
        const LessonInfo& lesson = context.manifest.lessons.at(ref.lesson);
        if (!refused.empty()) {
            StepFile file;
            file.status = StepFile::Status::Refused;
            file.why = refused;
            files.push_back(file);
            continue;
        }
        files.push_back(locate_step_file(submission, lesson, lesson.steps.at(ref.step)));
    }
    PrivateDir copy(context.work_dir);
    if (!copy.ok()) {
        result["error"] = "cannot create a graded copy in " + context.work_dir;
        return finish();
    }
    const std::string staged = copy.path() + "/course";
    std::string error;
    if (!stage_course(context.course.root, staged, context.manifest, context.steps, files, error)) {
        result["error"] = error;
        return finish();
    }

    CoursePaths paths = context.course;
    paths.root = staged;
    paths.include_root.clear();  // the graded copy holds the instructor's headers,
    // the instructor's lessons' checks judge it, and their solutions are the timing baseline
    paths.checks_root = context.course.root;
    paths.solutions_root = context.course.root;
    CheckOptions options = context.options;
    // Nothing of the instructor's course or of the submission's own folder may be included:
    // the graded copy has all a step may use.
    const std::string& theirs = context.course.root;
    for (const auto& dir : {theirs, theirs + "/solutions", theirs + "/checker", submission})
        if (!contains_path(dir, staged)) options.forbidden_dirs.push_back(dir);
    const std::uint64_t fresh = fresh_seed();  // fresh mode: one seed per submission

    for (std::size_t i = 0; i < context.steps.size(); ++i) {
        const StepRef& ref = context.steps[i];
        const StepInfo& step = context.manifest.lessons.at(ref.lesson).steps.at(ref.step);
        const std::string step_id = step_name(context.manifest, ref);
        StepReport report;
        if (files[i].status != StepFile::Status::Found) {
            report = unchecked_step(step_id, step, files[i]);
        } else {
            CheckOptions mine = options;
            if (context.seeds.mode == SeedSource::Mode::Given) {
                mine.seed = context.seeds.given;
            } else if (context.seeds.mode == SeedSource::Mode::Secret) {
                bool ok = false;
                std::string bytes = read_file(
                    paths.step_file(context.manifest.lessons.at(ref.lesson), step, false), &ok);
                mine.seed = derived_seed(context.seeds.key, step_id, round, bytes);
            } else {
                mine.seed = fresh;
            }
            Checker checker(paths, context.manifest, mine);
            report = checker.check(ref, false);
            // The graded copy's paths become the submission's: its file as submitted, the
            // rest relative (lessons/...).
            rewrite_paths(report,
                          paths.step_file(context.manifest.lessons.at(ref.lesson), step, false),
                          files[i].relative);
            rewrite_paths(report, staged + "/", "");
            report.file = files[i].relative;
        }
        result["results"].push_back(step_result(report, step, files[i]));
    }
    return finish();
}

}  // namespace cudalings::grading
