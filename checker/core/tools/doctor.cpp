#include "doctor.h"

#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "emulate.h"
#include "hash.h"
#include "pristine.h"
#include "profile.h"
#include "seccomp_filter.h"
#include "setup.h"
#include "supervise.h"

namespace fs = std::filesystem;

namespace cudalings {
namespace {

// ------------------------------------------------------------------ the driver, through libcuda
// The driver API's C entry points, loaded at run time: the checker itself links no CUDA, and a
// machine without a driver simply has no libcuda. CUDALINGS_LIBCUDA names another library (the
// tests use a fake one to play an old driver or an old GPU).
using CuInit = int (*)(unsigned);
using CuDriverGetVersion = int (*)(int*);
using CuDeviceGetCount = int (*)(int*);
using CuDeviceGet = int (*)(int*, int);
using CuDeviceGetName = int (*)(char*, int, int);
using CuDeviceGetAttribute = int (*)(int*, int, int);
using CuGetErrorString = int (*)(int, const char**);
constexpr int kComputeCapabilityMajor = 75;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
constexpr int kComputeCapabilityMinor = 76;

void probe_driver(DoctorFacts& f) {
    const char* override_path = std::getenv("CUDALINGS_LIBCUDA");
    const char* library = override_path && *override_path ? override_path : "libcuda.so.1";
    void* handle = ::dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char* why = ::dlerror();
        f.driver_error = std::string("no NVIDIA driver: ") + library + " cannot be loaded" +
                         (why ? std::string(" (") + why + ")" : std::string());
        return;
    }
    auto sym = [&](const char* name) { return ::dlsym(handle, name); };
    auto init = reinterpret_cast<CuInit>(sym("cuInit"));
    auto version = reinterpret_cast<CuDriverGetVersion>(sym("cuDriverGetVersion"));
    auto count = reinterpret_cast<CuDeviceGetCount>(sym("cuDeviceGetCount"));
    auto get = reinterpret_cast<CuDeviceGet>(sym("cuDeviceGet"));
    auto name = reinterpret_cast<CuDeviceGetName>(sym("cuDeviceGetName"));
    auto attribute = reinterpret_cast<CuDeviceGetAttribute>(sym("cuDeviceGetAttribute"));
    auto error_string = reinterpret_cast<CuGetErrorString>(sym("cuGetErrorString"));
    if (!init || !version || !count || !get || !name || !attribute) {
        f.driver_error = std::string(library) + " lacks the driver API's functions";
        return;
    }
    f.driver_loaded = true;
    version(&f.driver_cuda_version);
    const int status = init(0);
    if (status != 0) {
        const char* text = nullptr;
        if (error_string) error_string(status, &text);
        f.driver_error = "the driver does not start (cuInit: " +
                         std::string(text ? text : "error " + std::to_string(status)) + ")";
        return;
    }
    int n = 0;
    count(&n);
    for (int i = 0; i < n; ++i) {
        int device = 0, major = 0, minor = 0;
        if (get(&device, i) != 0) continue;
        char text[256] = {};
        name(text, sizeof text - 1, device);
        attribute(&major, kComputeCapabilityMajor, device);
        attribute(&minor, kComputeCapabilityMinor, device);
        f.gpus.push_back({text, "sm_" + std::to_string(major * 10 + minor)});
    }
    // The handle stays open: unloading a driver library mid-process is asking for trouble.
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

std::string run_for_output(const std::vector<std::string>& argv, bool* ok = nullptr) {
    ChildOptions o;
    o.wall_seconds = 60;
    auto child = run_supervised(argv, o);
    if (ok) *ok = child.exited_ok();
    return child.out.head + child.err.head;
}

// Builds a tiny CUDA file with nvcc: proves that nvcc and the host compiler work together.
void probe_host_build(DoctorFacts& f, const std::string& state_dir) {
    const std::string dir =
        (f.state_dir_error.empty() ? state_dir : fs::temp_directory_path().string()) + "/doctor-" +
        std::to_string(::getpid());
    if (!make_dirs(dir)) return;
    const std::string source = dir + "/probe.cu";
    std::ofstream(source) << "__global__ void probe(int* p) { p[threadIdx.x] = 1; }\n"
                             "int main() { return 0; }\n";
    bool ok = false;
    f.host_build_output =
        run_for_output({f.nvcc, "-std=c++17", "-c", "-o", dir + "/probe.o", source}, &ok);
    f.host_build_ran = true;
    f.host_build_ok = ok;
    std::error_code ec;
    fs::remove_all(dir, ec);
}

std::string cmake_cache_value(const std::string& cache, const std::string& key) {
    std::ifstream in(cache);
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(key + ":", 0) == 0) return line.substr(line.find('=') + 1);
    return {};
}

std::string writable_error(const std::string& dir) {
    if (!make_dirs(dir)) return "cannot create " + dir + " (" + std::strerror(errno) + ")";
    const std::string probe = dir + "/.doctor-" + std::to_string(::getpid());
    std::ofstream out(probe);
    out << "ok\n";
    out.flush();
    if (!out) return "cannot write in " + dir + " (" + std::strerror(errno) + ")";
    out.close();
    std::error_code ec;
    fs::remove(probe, ec);
    return {};
}

int version_number(const std::string& text) {  // "13.0" -> 13000, "12.4" -> 12040
    int major = 0, minor = 0;
    if (std::sscanf(text.c_str(), "%d.%d", &major, &minor) < 1) return 0;
    return major * 1000 + minor * 10;
}

bool version_below(const std::string& have, int major, int minor) {
    int a = 0, b = 0;
    if (std::sscanf(have.c_str(), "%d.%d", &a, &b) < 2) return false;
    return a < major || (a == major && b < minor);
}

}  // namespace

std::string cuda_version_text(int version) {
    return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

DoctorFacts gather_facts(const DoctorContext& c) {
    DoctorFacts f;
    f.nvcc = c.nvcc;
    f.state_dir = c.paths.state_dir;
    f.course_root = c.paths.root;
    f.libc_version = gnu_get_libc_version();
    // The state directory first: the host build probe works in it.
    if (c.have_course) f.state_dir_error = writable_error(f.state_dir);
    // nvcc and the host compiler.
    bool ok = false;
    const std::string version = run_for_output({f.nvcc, "--version"}, &ok);
    f.nvcc_runs = ok;
    if (!ok) {
        const std::string where = find_program(f.nvcc);
        f.nvcc_error = where.empty() || ::access(where.c_str(), X_OK) != 0
                           ? "not found (" + f.nvcc + ")"
                           : first_line(version);
    } else {
        f.nvcc_release = nvcc_release(f.nvcc);
        f.gpu_codes = nvcc_gpu_codes(f.nvcc);
        probe_host_build(f, f.state_dir);
    }
    f.host_compiler = host_compiler();
    f.host_compiler_version = first_line(run_for_output({f.host_compiler, "--version"}));
    // The driver and the GPUs.
    probe_driver(f);
    std::ifstream proc("/proc/driver/nvidia/version");
    std::string line;
    static const std::regex kernel_module(R"(Kernel Module(?: for [a-z0-9_]+)?\s+([0-9.]+))");
    std::smatch m;
    if (std::getline(proc, line) && std::regex_search(line, m, kernel_module))
        f.driver_version = m[1];
    f.gpu_runner_built = ::access(c.paths.runner().c_str(), X_OK) == 0;
    // CMake and the CUDA tools.
    static const std::regex cmake_version(R"(cmake version ([0-9]+\.[0-9]+(\.[0-9]+)?))");
    const std::string cmake = run_for_output({"cmake", "--version"});
    if (std::regex_search(cmake, m, cmake_version)) f.cmake_version = m[1];
    f.sanitizer = find_cuda_tool(f.nvcc, "compute-sanitizer");
    f.ncu = find_ncu(f.nvcc);  // the lookup `cudalings profile` uses
    f.cuobjdump = find_cuda_tool(f.nvcc, "cuobjdump");
    f.memory_cgroups = memory_cgroups_available();
    f.seccomp_filter = seccomp::available();
    // The emulator's parts.
    const std::string& tools = c.paths.tool_dir;
    for (const auto& part : {tools + "/cudalings-runner-emu", tools + "/cudalings-emu-rewrite"})
        if (::access(part.c_str(), X_OK) != 0) f.emulator_missing.push_back(part);
    const std::string header = emulator_include_dir(tools) + "/cudalings_emu/cuda_emu.h";
    if (::access(header.c_str(), R_OK) != 0) f.emulator_missing.push_back(header);
    if (find_program(f.host_compiler).empty()) f.emulator_missing.push_back(f.host_compiler);
    // The build and the course's files.
    f.build_root = cmake_cache_value(tools + "/CMakeCache.txt", "CMAKE_HOME_DIRECTORY");
    if (c.have_course) {
        const std::string pristine = pristine_root(tools);
        if (!pristine.empty()) {
            f.unverified_files = unverified_lesson_files(pristine);
            for (const auto& changed : changed_lesson_files(c.paths.root, pristine))
                if (!changed.is_step) f.changed_headers.push_back(changed.path);
        }
    }
    return f;
}

std::vector<DoctorLine> diagnose(const DoctorFacts& f) {
    std::vector<DoctorLine> out;
    auto add = [&](std::string topic, Health h, std::string text, std::string fix = {},
                   std::string anchor = {}) {
        out.push_back({std::move(topic), h, std::move(text), std::move(fix), std::move(anchor)});
    };
    // nvcc
    if (!f.nvcc_runs) {
        const auto p = cannot_run("nvcc", f.nvcc, f.nvcc_error);
        add("nvcc", Health::Error, "nvcc " + f.nvcc_error, p.fix, p.anchor);
    } else {
        add("nvcc", Health::Ok,
            "nvcc " + (f.nvcc_release.empty() ? std::string("(version unknown)") : f.nvcc_release) +
                " (" + f.nvcc + ")");
    }
    // the host compiler, as nvcc sees it
    if (f.host_build_ran && !f.host_build_ok) {
        auto p = setup_problem_in_build_output(f.host_build_output);
        add("host compiler", Health::Error,
            p ? p->what : "nvcc cannot build a tiny CUDA file: " + first_line(f.host_build_output),
            p ? p->fix : "see the message; ./cudalings check shows the full output",
            p ? p->anchor : "host-compiler");
    } else if (f.host_build_ran) {
        add("host compiler", Health::Ok, f.host_compiler_version + ": nvcc builds with it");
    } else if (!f.host_compiler_version.empty()) {
        add("host compiler", Health::Ok, f.host_compiler_version);
    }
    // the driver, its CUDA version against the toolkit's, and the GPUs
    const int toolkit = version_number(f.nvcc_release);
    if (!f.driver_loaded || (!f.driver_error.empty() && f.gpus.empty())) {
        add("gpu", Health::Warning,
            f.driver_error.empty() ? std::string("no NVIDIA GPU") : f.driver_error,
            "checks run on the CPU emulator: correctness only (no timing, no compute-sanitizer, "
            "no GPU scheduling); install an NVIDIA driver where there is a GPU",
            "no-gpu");
    } else {
        const std::string driver =
            "driver " + (f.driver_version.empty() ? std::string() : f.driver_version + ", ") +
            "CUDA " + cuda_version_text(f.driver_cuda_version);
        if (toolkit > 0 && f.driver_cuda_version > 0 && f.driver_cuda_version < toolkit) {
            const bool same_major = f.driver_cuda_version / 1000 == toolkit / 1000;
            add("driver", same_major ? Health::Warning : Health::Error,
                driver + " is older than the toolkit (CUDA " + f.nvcc_release + ")",
                same_major ? "programs run through CUDA's minor-version compatibility; updating "
                             "the driver is still the safe choice"
                           : "programs built with this toolkit cannot start "
                             "(cudaErrorInsufficientDriver): update the NVIDIA driver to one "
                             "for CUDA " +
                                 f.nvcc_release + " or newer, or install CUDA Toolkit " +
                                 cuda_version_text(f.driver_cuda_version),
                "driver");
        } else {
            add("driver", Health::Ok, driver);
        }
        if (f.gpus.empty())
            add("gpu", Health::Warning, "the driver sees no GPU",
                "check nvidia-smi and CUDA_VISIBLE_DEVICES; meanwhile checks run on the CPU "
                "emulator",
                "no-gpu");
        for (const auto& g : f.gpus) {
            const bool supported =
                f.gpu_codes.empty() ||
                std::find(f.gpu_codes.begin(), f.gpu_codes.end(), g.arch) != f.gpu_codes.end();
            if (supported) {
                add("gpu", Health::Ok, g.name + " (" + g.arch + ")");
                continue;
            }
            // The same words as a check's SETUP_ERROR (setup.h).
            const auto p = architecture_problem(g.arch, f.nvcc_release, f.gpu_codes);
            add("gpu", Health::Error, g.name + ": " + p.what, p.fix, p.anchor);
        }
        if (!f.gpus.empty() && !f.gpu_runner_built)
            add("runner", Health::Error, "the GPU runner (cudalings-runner) is not built",
                "run ./cudalings once: it builds what is missing", "checker-build");
    }
    // CMake
    if (f.cmake_version.empty())
        add("cmake", Health::Error, "no cmake on PATH", "install CMake 3.22 or newer", "cmake");
    else if (version_below(f.cmake_version, 3, 22))
        add("cmake", Health::Error, "CMake " + f.cmake_version + " is too old",
            "install CMake 3.22 or newer (Debian/Ubuntu backports, or pip install cmake)", "cmake");
    else if (version_below(f.cmake_version, 3, 25))
        add("cmake", Health::Warning,
            "CMake " + f.cmake_version + ": enough for ./cudalings, not for the test workflow",
            "`cmake --workflow --preset default` needs CMake 3.25", "cmake");
    else
        add("cmake", Health::Ok, "CMake " + f.cmake_version);
    // Tools for --sanitize, profile and sass
    if (f.sanitizer.empty())
        add("compute-sanitizer", Health::Warning, "compute-sanitizer not found",
            "`check --sanitize` cannot run: install the toolkit's sanitizer package "
            "(e.g. cuda-sanitizer-13-0) or set CUDALINGS_SANITIZER",
            "tools");
    else
        add("compute-sanitizer", Health::Ok, f.sanitizer);
    if (f.ncu.empty())
        add("ncu", Health::Warning, "Nsight Compute (ncu) not found",
            "`cudalings profile` (ncu --clock-control none) needs it: install Nsight Compute "
            "(e.g. cuda-nsight-compute-13-0) or set CUDALINGS_NCU",
            "tools");
    else
        add("ncu", Health::Ok, f.ncu);
    if (f.cuobjdump.empty())
        add("cuobjdump", Health::Warning, "cuobjdump not found",
            "`cudalings sass` shows PTX instead of SASS: install the toolkit's cuobjdump package "
            "(e.g. cuda-cuobjdump-13-0)",
            "tools");
    else
        add("cuobjdump", Health::Ok, f.cuobjdump);
    // The operating system
    if (f.memory_cgroups)
        add("cgroups", Health::Ok, "a memory cgroup limits each run of your code");
    else
        add("cgroups", Health::Warning,
            "no writable memory cgroup: a step's host memory is not limited",
            "nothing to do for learning; for grading, run under systemd-run --user --scope -p "
            "Delegate=yes or as a user with a delegated cgroup",
            "cgroups");
    if (f.seccomp_filter)
        add("seccomp", Health::Ok,
            "a seccomp filter confines each run of your code (no signals to the checker)");
    else
        add("seccomp", Health::Warning,
            "this checker was built without libseccomp: your code runs without its seccomp "
            "filter (it could signal the checker)",
            "install libseccomp-dev (Debian/Ubuntu) and run ./cudalings again: it rebuilds the "
            "checker with the filter",
            "seccomp");
    if (!f.state_dir.empty()) {
        if (f.state_dir_error.empty())
            add("state", Health::Ok, "progress and caches in " + f.state_dir);
        else
            add("state", Health::Error, f.state_dir_error,
                cannot_create_directory(f.state_dir, EACCES).fix, "state-dir");
    }
    if (f.emulator_missing.empty()) {
        add("emulator", Health::Ok, "the CPU emulator is built");
    } else {
        std::string missing;
        for (const auto& m : f.emulator_missing) missing += (missing.empty() ? "" : ", ") + m;
        add("emulator", Health::Error, "the CPU emulator is incomplete: " + missing + " missing",
            "run ./cudalings once (it builds the emulator); the emulator needs g++ (CUDALINGS_CXX)",
            "checker-build");
    }
    if (!f.build_root.empty() && !f.course_root.empty() &&
        fs::weakly_canonical(f.build_root) != fs::weakly_canonical(f.course_root))
        add("build", Health::Warning, "the checker was built for " + f.build_root,
            "./cudalings from this course builds its own (or the folder moved: ./cudalings "
            "configures again)",
            "moved");
    for (const auto& file : f.unverified_files)
        add("lessons", Health::Warning,
            "lessons/" + file + ": the course's version could not be found (no record or git)",
            "the checker builds references with your copy of it; a fresh clone restores it",
            "lesson-files");
    for (const auto& file : f.changed_headers)
        add("lessons", Health::Warning, "lessons/" + file + " differs from the course's version",
            "only your own steps see your copy; `./cudalings reset " + file + "` restores it",
            "lesson-files");
    return out;
}

std::string render_doctor(const std::vector<DoctorLine>& lines, bool color) {
    std::ostringstream s;
    int errors = 0, warnings = 0;
    for (const auto& l : lines) {
        const char* tag = l.health == Health::Ok        ? "ok  "
                          : l.health == Health::Warning ? "warn"
                                                        : "FAIL";
        const char* paint = l.health == Health::Ok        ? "\033[32m"
                            : l.health == Health::Warning ? "\033[33m"
                                                          : "\033[1;31m";
        errors += l.health == Health::Error;
        warnings += l.health == Health::Warning;
        s << (color ? paint : "") << tag << (color ? "\033[0m" : "") << "  " << l.topic;
        s << std::string(l.topic.size() < 18 ? 18 - l.topic.size() : 1, ' ') << l.text << "\n";
        if (l.health != Health::Ok && !l.fix.empty())
            s << "      " << std::string(18, ' ') << "fix: " << l.fix << "\n";
        if (l.health != Health::Ok && !l.anchor.empty())
            s << "      " << std::string(18, ' ') << "see: docs/troubleshooting.md#" << l.anchor
              << "\n";
    }
    s << "\n"
      << errors << " error" << (errors == 1 ? "" : "s") << ", " << warnings << " warning"
      << (warnings == 1 ? "" : "s") << "\n";
    return s.str();
}

nlohmann::json doctor_json(const std::vector<DoctorLine>& lines) {
    nlohmann::json checks = nlohmann::json::array();
    int errors = 0, warnings = 0;
    for (const auto& l : lines) {
        errors += l.health == Health::Error;
        warnings += l.health == Health::Warning;
        checks.push_back({{"topic", l.topic},
                          {"status", l.health == Health::Ok        ? "ok"
                                     : l.health == Health::Warning ? "warning"
                                                                   : "error"},
                          {"text", l.text},
                          {"fix", l.fix},
                          {"see", l.anchor.empty() ? "" : "docs/troubleshooting.md#" + l.anchor}});
    }
    return {{"checks", checks}, {"errors", errors}, {"warnings", warnings}};
}

}  // namespace cudalings
