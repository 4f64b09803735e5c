// `cudalings sass STEP`: what the compiler made of a step, for the GPU that is present (or the
// checker's default architecture without one): the machine code (SASS, from cuobjdump) when
// the toolkit has cuobjdump, else the PTX nvcc generates (which every toolkit can print).
// `--ptx` asks for PTX anyway; `--solution` shows the reference's.
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <iostream>

#include "../core/build/compile.h"
#include "../core/course/hash.h"
#include "../core/course/setup.h"
#include "../core/run/supervise.h"
#include "../core/run/verdict.h"
#include "cli.h"
#include "tools.h"

namespace fs = std::filesystem;

namespace cudalings::cli {
namespace {

struct SassArgs {
    bool ptx = false;
    bool solution = false;
};

int run_sass(const Options& o, const SassArgs& a) {
    CoursePaths paths;
    Manifest m;
    StepRef ref;
    if (!open_one_step(o, "sass", paths, m, ref)) return exit_code::usage;
    const auto& lesson = m.lessons[ref.lesson];
    const auto& step = lesson.steps[ref.step];
    CheckOptions options;
    options.emulate = true;  // no runner start is needed to learn the architecture
    Checker checker(paths, m, options);
    const GpuInfo& gpu = checker.gpu();
    const std::string arch = gpu.present ? gpu.arch : std::string(kCompileOnlyArch);
    const std::string nvcc = configured_nvcc();
    if (auto problem = unsupported_architecture(nvcc, arch)) {
        std::cerr << "cudalings: " << problem->line() << "\n";
        return exit_code::fail;
    }
    const std::string cuobjdump = a.ptx ? std::string() : find_cuda_tool(nvcc, "cuobjdump");
    const bool sass = !cuobjdump.empty();
    const std::string source = paths.step_file(lesson, step, a.solution);
    const std::string dir = paths.state_dir + "/sass";
    if (!make_dirs(dir)) {
        std::cerr << "cudalings: cannot create " << dir << "\n";
        return exit_code::fail;
    }
    const std::string out = dir + "/" + Hasher().add(source).hex() + (sass ? ".cubin" : ".ptx");
    std::vector<std::string> cmd{nvcc,
                                 "-std=c++17",
                                 "-O3",
                                 "-lineinfo",
                                 sass ? "-cubin" : "-ptx",
                                 sass ? "-arch=" + arch : "-arch=compute_" + arch.substr(3)};
    for (const auto& d : {paths.lesson_dir(lesson), paths.common_dir()}) cmd.push_back("-I" + d);
    cmd.insert(cmd.end(), {"-o", out, source});
    ChildOptions limits;
    limits.wall_seconds = o.compile_timeout;
    auto build = run_supervised(cmd, limits);
    if (!build.exited_ok()) {
        std::cerr << build.err.head << build.out.head;
        std::cerr << "cudalings: " << source << " does not build (`cudalings check` shows why)\n";
        return exit_code::fail;
    }
    std::string text;
    if (sass) {
        limits.output_cap = 16 << 20;
        auto dump = run_supervised({cuobjdump, "-sass", out}, limits);
        text = dump.out.head;
    } else {
        bool ok = false;
        text = read_file(out, &ok);
    }
    std::error_code ec;
    fs::remove(out, ec);
    if (o.json) {
        std::cout << versioned({{"step", step_name(m, ref)},
                                {"file", source},
                                {"arch", arch},
                                {"kind", sass ? "sass" : "ptx"},
                                {"text", text}})
                         .dump(2)
                  << "\n";
        return exit_code::pass;
    }
    std::cout << "// " << source << " for " << arch << ": "
              << (sass    ? "SASS (cuobjdump -sass)"
                  : a.ptx ? "PTX"
                          : "PTX (cuobjdump is not installed: see `cudalings doctor`)")
              << "\n"
              << text;
    return exit_code::pass;
}

}  // namespace

Command add_sass_command(CLI::App& app, Options& o) {
    auto* sass = app.add_subcommand("sass", tool_summary("sass"));
    auto args = std::make_shared<SassArgs>();
    sass->add_option("step", o.step, "the step (default: the one you are on)");
    sass->add_flag("--ptx", args->ptx, "PTX instead of SASS");
    sass->add_flag("--solution", args->solution, "the reference solution's, not yours");
    return {sass, [&o, args] { return run_sass(o, *args); }};
}

}  // namespace cudalings::cli
