#include "checks_build.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "compile.h"
#include "course.h"
#include "hash.h"
#include "supervise.h"

namespace fs = std::filesystem;

namespace cudalings {

std::vector<std::string> headers_in(const std::vector<std::string>& dirs) {
    std::vector<std::string> headers;
    std::error_code ec;
    for (const auto& dir : dirs) {
        for (const auto& entry : fs::directory_iterator(dir, ec)) {
            const auto ext = entry.path().extension().string();
            if (ext == ".cuh" || ext == ".h" || ext == ".hpp")
                headers.push_back(entry.path().string());
        }
    }
    std::sort(headers.begin(), headers.end());
    return headers;
}

namespace {

std::string writable_dir(const std::vector<std::string>& candidates) {
    for (const auto& dir : candidates)
        if (make_dirs(dir) && ::access(dir.c_str(), W_OK) == 0) return dir;
    return {};
}

}  // namespace

ChecksBuild build_checks(const ChecksToolchain& t, const std::string& source,
                         const std::vector<std::string>& include_dirs, bool emulated,
                         bool baselines) {
    ChecksBuild result;
    std::vector<std::string> dirs{t.kit_dir};
    dirs.insert(dirs.end(), include_dirs.begin(), include_dirs.end());
    // Every command of the build, its flags standing for themselves in the cache key.
    std::vector<std::vector<std::string>> commands;
    CompileRequest gpu;
    EmulatedBuild emu = t.emulator;
    Hasher key;
    key.add(emulated ? "checks-emulated-v1" : "checks-gpu-v1").add(t.runner_identity);
    if (emulated) {
        emu.source = source;
        emu.include_dirs = dirs;
        emu.instrument = false;  // the checker's own code: no hooks, no lockstep
        key.add(emulated_cache_key(emu, headers_in(dirs)));
    } else {
        gpu.nvcc = t.nvcc;
        gpu.source = source;
        gpu.include_dirs = dirs;
        gpu.arch = t.arch;
        if (baselines) gpu.libraries = {"cublas"};
        key.add(compile_cache_key(
            gpu, file_identity(find_program(t.nvcc).empty() ? t.nvcc : find_program(t.nvcc)),
            headers_in(dirs)));
    }
    const std::string dir = writable_dir(t.cache_dirs);
    if (dir.empty()) {
        result.error = "no writable directory for the lesson's checks (tried " +
                       (t.cache_dirs.empty() ? std::string("none") : t.cache_dirs.front()) + ")";
        return result;
    }
    result.object = dir + "/" + key.hex() + ".so";
    if (::access(result.object.c_str(), R_OK) == 0) {
        result.cached = true;
        return result;
    }
    const std::string temporary = result.object + ".tmp." + std::to_string(::getpid());
    if (emulated) {
        emu.rewritten = temporary + ".cpp";
        emu.object = temporary + ".o";
        emu.output = temporary;
        commands = emulated_build_commands(emu);
    } else {
        gpu.output = temporary;
        commands = {nvcc_command(gpu)};
    }
    for (const auto& cmd : commands) {
        ChildOptions o;
        o.wall_seconds = t.seconds;
        o.output_cap = 64 * 1024;
        const auto child = run_supervised(cmd, o);
        if (!child.exited_ok()) {
            const std::string output = child.err.head + child.out.head;
            const Diagnostic first = first_error(parse_compiler_output(output));
            result.error =
                "the lesson's checks (" + fs::path(source).filename().string() + ") do not build" +
                (emulated ? " for the emulator: " : ": ") +
                (!child.started    ? child.start_error
                 : child.timed_out ? std::string("the build did not finish in time")
                 : first.message.empty()
                     ? output.substr(0, 600)
                     : first.file + ":" + std::to_string(first.line) + ": " + first.message);
            break;
        }
    }
    std::error_code ec;
    if (result.error.empty()) fs::rename(temporary, result.object, ec);
    if (ec) result.error = "cannot store the lesson's checks: " + ec.message();
    for (const auto& f : {temporary, temporary + ".cpp", temporary + ".o"}) fs::remove(f, ec);
    if (!result.error.empty()) result.object.clear();
    return result;
}

}  // namespace cudalings
