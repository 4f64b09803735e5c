// `cudalings report [--out FILE]`: writes an HTML page with your progress and, for every lesson
// with timed steps, its staircase (see checker/core/html_report.h); prints where it is.
#include <nlohmann/json.hpp>

#include <filesystem>
#include <iostream>

#include "../core/history.h"
#include "../core/html_report.h"
#include "../core/verdict.h"
#include "cli.h"

namespace cudalings::cli {
namespace {

int run_report(const Options& o, const std::string& out_arg) {
    CoursePaths paths;
    Manifest m;
    if (!open_course(o, paths, m)) return exit_code::usage;
    Progress progress(paths.state_dir + "/progress.json");
    const auto model =
        report_model(m, progress, load_results(paths.state_dir), load_staircases(paths.state_dir),
                     load_explained(paths.state_dir));
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
    auto* report = app.add_subcommand(
        "report", "write an HTML page: your progress and each lesson's staircase (SVG)");
    auto out = std::make_shared<std::string>();
    report->add_option("-o,--out", *out, "the file to write (default: .cudalings/report.html)");
    return {report, [&o, out] { return run_report(o, *out); }};
}

}  // namespace cudalings::cli
