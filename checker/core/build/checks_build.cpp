#include "checks_build.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
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

// <32 hex digits>.so
bool hex_entry(const std::string& name, std::size_t from) {
    if (name.size() != from + 32 + 3 || name.compare(from + 32, 3, ".so") != 0) return false;
    for (std::size_t i = from; i < from + 32; ++i)
        if (!std::isxdigit(static_cast<unsigned char>(name[i]))) return false;
    return true;
}

}  // namespace

std::string checks_cache_tag(const std::string& source, bool emulated, bool baselines) {
    std::string lesson = fs::path(source).parent_path().filename().string();
    for (char& c : lesson)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
    return lesson + (emulated ? "-emu" : baselines ? "-gpu-baselines" : "-gpu");
}

int prune_checks_cache(const std::string& dir, const std::string& tag, const std::string& keep,
                       double unused_seconds) {
    int removed = 0;
    std::error_code ec;
    const auto now = fs::file_time_type::clock::now();
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        const std::string name = entry.path().filename().string();
        const bool ours = name.size() > tag.size() + 1 && name.compare(0, tag.size(), tag) == 0 &&
                          name[tag.size()] == '-' && hex_entry(name, tag.size() + 1);
        if ((!ours && !hex_entry(name, 0)) || entry.path().string() == keep) continue;
        std::error_code time_error;
        const auto used = fs::last_write_time(entry.path(), time_error);
        if (time_error || std::chrono::duration<double>(now - used).count() < unused_seconds)
            continue;
        std::error_code remove_error;
        if (fs::remove(entry.path(), remove_error)) ++removed;
    }
    return removed;
}

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
    const std::string tag = checks_cache_tag(source, emulated, baselines);
    result.object = dir + "/" + tag + "-" + key.hex() + ".so";
    if (::access(result.object.c_str(), R_OK) == 0) {
        result.cached = true;
        // Used now: the entry's time is its last use, which keeps it from being pruned.
        std::error_code ec;
        fs::last_write_time(result.object, fs::file_time_type::clock::now(), ec);
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
    if (!result.error.empty())
        result.object.clear();
    else
        prune_checks_cache(dir, tag, result.object, t.unused_seconds);
    return result;
}

}  // namespace cudalings
