// `cudalings doctor`: is this machine ready for the course? One line per part (nvcc, the host
// compiler, the driver, the GPU and its architecture, CMake, the CUDA tools, cgroups, the state
// directory, the emulator, the build, the lesson files), each ok, warning or error with its fix.
// Exit code 0 when nothing is an error, 1 otherwise. Works outside a course too.
#include <nlohmann/json.hpp>

#include <filesystem>
#include <iostream>

#include "../core/course/setup.h"
#include "../core/run/verdict.h"
#include "../core/tools/doctor.h"
#include "cli.h"
#include "tools.h"

namespace cudalings::cli {
namespace {

int run_doctor(const Options& o) {
    DoctorContext context;
    // The course, when there is one (doctor is also for "why does nothing work").
    std::error_code ec;
    const bool findable = !o.root.empty() || std::getenv("CUDALINGS_ROOT") ||
                          std::getenv("CUDALINGS_DEFAULT_ROOT") ||
                          find_course_root(std::filesystem::current_path(ec).string());
    Manifest manifest;
    context.have_course = findable && open_course(o, context.paths, manifest);
    if (!context.have_course) context.paths.tool_dir = tool_dir();
    context.nvcc = configured_nvcc();
    if (!o.json) std::cerr << "cudalings doctor: looking at this machine (a few seconds)...\n";
    const auto lines = diagnose(gather_facts(context));
    bool errors = false;
    for (const auto& l : lines) errors = errors || l.health == Health::Error;
    if (o.json)
        std::cout << versioned(doctor_json(lines)).dump(2) << "\n";
    else
        std::cout << render_doctor(lines, use_color(o));
    return errors ? exit_code::fail : exit_code::pass;
}

}  // namespace

Command add_doctor_command(CLI::App& app, Options& o) {
    auto* doctor = app.add_subcommand("doctor", tool_summary("doctor"));
    return {doctor, [&o] { return run_doctor(o); }};
}

}  // namespace cudalings::cli
