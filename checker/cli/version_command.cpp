// `cudalings version` (also `cudalings --version`): the checker's version, the commit it was
// built from, and the toolkit it uses.
#include <nlohmann/json.hpp>

#include <iostream>

#include "../core/course/setup.h"
#include "../core/run/verdict.h"
#include "cli.h"

#ifndef CUDALINGS_VERSION
#define CUDALINGS_VERSION "unknown"
#endif
#ifndef CUDALINGS_GIT_COMMIT
#define CUDALINGS_GIT_COMMIT ""
#endif

namespace cudalings::cli {

int print_version(const Options& o) {
    const std::string nvcc = configured_nvcc();
    const std::string release = nvcc_release(nvcc);
    const std::string commit = CUDALINGS_GIT_COMMIT;
    if (o.json) {
        std::cout << versioned({{"version", CUDALINGS_VERSION},
                                {"commit", commit},
                                {"nvcc", nvcc},
                                {"cuda", release}})
                         .dump(2)
                  << "\n";
    } else {
        std::cout << "cudalings " << CUDALINGS_VERSION;
        if (!commit.empty()) std::cout << " (" << commit << ")";
        std::cout << "\nnvcc " << (release.empty() ? "not found" : release) << " (" << nvcc
                  << ")\n";
    }
    return exit_code::pass;
}

Command add_version_command(CLI::App& app, Options& o) {
    auto* version = app.add_subcommand("version", "the checker's version and its toolkit");
    return {version, [&o] { return print_version(o); }};
}

}  // namespace cudalings::cli
