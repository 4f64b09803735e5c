// `cudalings grade`: many submission folders (copies of the course) in one batch.
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>

#include "../core/report.h"
#include "../core/verdict.h"
#include "cli.h"

namespace fs = std::filesystem;

namespace cudalings::cli {
namespace {

int cmd_grade(const Options& o, const std::vector<std::string>& submissions,
              const std::string& out_dir, int repeat) {
    CoursePaths course;
    Manifest m;
    if (!open_course(o, course, m)) return exit_code::usage;
    std::vector<StepRef> steps;
    Progress none(course.state_dir + "/unused-progress.json");
    Options select = o;
    if (o.step.empty()) select.all = true;
    if (!select_steps(select, m, none, steps)) return exit_code::usage;
    if (!make_dirs(out_dir)) {
        std::cerr << "cudalings: cannot create " << out_dir << "\n";
        return exit_code::usage;
    }
    CheckOptions options;
    if (!check_options(o, options)) return exit_code::usage;
    int failed_total = 0, passed_total = 0, skipped_total = 0;
    nlohmann::json summary = nlohmann::json::array();
    std::size_t total = submissions.size() * static_cast<std::size_t>(repeat), done = 0;
    for (int round = 0; round < repeat; ++round) {
        for (const auto& dir : submissions) {
            ++done;
            std::string name = fs::path(dir).lexically_normal().filename().string();
            if (name.empty() || name == ".")
                name = fs::path(dir).lexically_normal().parent_path().filename().string();
            nlohmann::json result{{"submission", fs::absolute(dir).string()}, {"round", round + 1}};
            int passed = 0, failed = 0, skipped = 0;
            auto start = std::chrono::steady_clock::now();
            try {
                CoursePaths paths = course;
                paths.root = fs::absolute(dir).string();
                // A submission is a copy of the course: its step files under lessons/.
                if (!fs::is_directory(paths.root + "/lessons"))
                    throw std::runtime_error(paths.root + " has no lessons/ folder");
                paths.include_root = course.root;  // the contract comes from the instructor's copy
                CheckOptions mine = options;
                if (o.seed.empty()) mine.seed = fresh_seed();  // fresh inputs per submission
                Checker checker(paths, m, mine);
                nlohmann::json results = nlohmann::json::array();
                for (const auto& ref : steps) {
                    StepReport r = checker.check(ref, false);
                    (r.verdict == Verdict::Pass      ? passed
                     : r.verdict == Verdict::Skipped ? skipped
                                                     : failed)++;
                    results.push_back(to_json(r));
                }
                result["results"] = results;
            } catch (const std::exception& e) {
                result["internal_error"] = e.what();
                ++failed;
            }
            double seconds =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            result["passed"] = passed;
            result["failed"] = failed;
            result["skipped"] = skipped;
            result["seconds"] = seconds;
            std::string file = out_dir + "/" + name +
                               (repeat > 1 ? ".round" + std::to_string(round + 1) : "") + ".json";
            if (!write_file_atomic(file, result.dump(2) + "\n"))
                std::cerr << "cudalings: cannot write " << file << "\n";
            std::vector<std::string> verdicts;
            for (const auto& r : result.value("results", nlohmann::json::array()))
                verdicts.push_back(r["step"].get<std::string>() + "=" +
                                   r["verdict"].get<std::string>());
            summary.push_back({{"submission", name},
                               {"round", round + 1},
                               {"passed", passed},
                               {"failed", failed},
                               {"skipped", skipped},
                               {"file", file},
                               {"verdicts", verdicts}});
            std::cerr << "[" << done << "/" << total << "] " << name << ": " << passed
                      << " passed, " << failed << " failed, " << skipped << " skipped ("
                      << static_cast<int>(seconds * 10) / 10.0 << " s)";
            for (const auto& v : verdicts) std::cerr << "  " << v;
            std::cerr << "\n";
            passed_total += passed;
            failed_total += failed;
            skipped_total += skipped;
        }
    }
    write_file_atomic(out_dir + "/summary.json", summary.dump(2) + "\n");
    std::cout << passed_total << " passed, " << failed_total << " failed, " << skipped_total
              << " skipped\n";
    return exit_code_for(passed_total, failed_total, skipped_total);
}

}  // namespace

Command add_grade_command(CLI::App& app, Options& o) {
    struct GradeArgs {
        std::vector<std::string> submissions;
        std::string out = "grading-results";
        int repeat = 1;
    };
    auto args = std::make_shared<GradeArgs>();
    auto* grade =
        app.add_subcommand("grade", "check many submission folders (course copies) in one batch");
    grade
        ->add_option("submissions", args->submissions,
                     "submission folders (each a copy of the course)")
        ->required();
    grade->add_option("--step", o.step, "a step or lesson to check (default: every step)");
    grade->add_option("--out", args->out, "where the result files go (one JSON per submission)");
    grade->add_option("--repeat", args->repeat, "check the whole batch this many times")
        ->check(CLI::PositiveNumber);
    grade->add_option("--seed", o.seed, "the same inputs for every submission");
    grade->add_flag("--no-time", o.no_time, "correctness only");
    grade->add_flag("--sanitize", o.sanitize, "also run compute-sanitizer");
    grade->add_option("--compile-timeout", o.compile_timeout, "seconds nvcc may take");
    grade->add_option("--case-timeout", o.case_timeout,
                      "seconds without progress before a TIMEOUT");
    return {grade, [&o, args] { return cmd_grade(o, args->submissions, args->out, args->repeat); }};
}

}  // namespace cudalings::cli
