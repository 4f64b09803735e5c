// `cudalings report [--out FILE] [--from RESULTS]`: writes an HTML page with your progress and,
// for every lesson with timed steps, its staircase (see checker/core/report/html_report.h); prints
// where it is. With --from, the page of a stored run instead (docs/results/*.json, or what
// `check --json` printed): every lesson's staircase and roofline from it, no progress.
#include <nlohmann/json.hpp>

#include <filesystem>
#include <iostream>

#include "../core/report/generated.h"
#include "../core/report/history.h"
#include "../core/report/html_report.h"
#include "../core/run/verdict.h"
#include "cli.h"
#include "tools.h"

namespace cudalings::cli {
namespace {

int run_report(const Options& o, const std::string& out_arg, const std::string& from) {
    CoursePaths paths;
    Manifest m;
    if (!open_course(o, paths, m)) return exit_code::usage;
    ReportModel model;
    if (from.empty()) {
        Progress progress(paths.state_dir + "/progress.json");
        model = report_model(m, progress, load_results(paths.state_dir),
                             load_staircases(paths.state_dir), load_explained(paths.state_dir));
    } else {
        StoredResults stored;
        bool was_stored = false;
        std::string error;
        if (!load_results(from, "", stored, was_stored, error) && stored.staircases.empty()) {
            std::cerr << "cudalings: " << error << "\n";
            return exit_code::usage;
        }
        std::vector<nlohmann::json> staircases;
        for (const auto& st : stored.staircases) staircases.push_back(to_json(st));
        model = report_model_from_run(m, staircases, stored.run.gpu,
                                      stored.run.date.empty() ? "an unknown day" : stored.run.date);
    }
    const std::string out =
        std::filesystem::absolute(out_arg.empty() ? paths.state_dir + "/report.html" : out_arg)
            .string();
    make_dirs(std::filesystem::path(out).parent_path().string());
    if (!write_file_atomic(out, render_html_report(model))) {
        std::cerr << "cudalings: cannot write " << out << "\n";
        return exit_code::fail;
    }
    if (o.json)
        std::cout << versioned({{"file", out},
                                {"charts", model.charts.size()},
                                {"access_pictures", model.access_picture_count()}})
                         .dump(2)
                  << "\n";
    else
        std::cout << "Wrote " << out << " (open it in a browser)\n";
    return exit_code::pass;
}

}  // namespace

Command add_report_command(CLI::App& app, Options& o) {
    auto* report = app.add_subcommand("report", tool_summary("report"));
    auto out = std::make_shared<std::string>();
    auto from = std::make_shared<std::string>();
    report->add_option("-o,--out", *out, "the file to write (default: .cudalings/report.html)");
    report
        ->add_option("--from", *from,
                     "a stored run instead of your progress: a results file (docs/results/*.json, "
                     "or what `check --all --solutions --json` printed on a GPU), its staircases "
                     "and rooflines")
        ->check(CLI::ExistingFile);
    return {report, [&o, out, from] { return run_report(o, *out, *from); }};
}

}  // namespace cudalings::cli
