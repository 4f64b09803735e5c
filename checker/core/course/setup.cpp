#include "setup.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <regex>
#include <sstream>

#include "supervise.h"

namespace cudalings {
namespace {

// One answer per nvcc and question, for the life of the process.
std::string ask_nvcc(const std::string& nvcc, const std::string& flag) {
    static std::mutex mutex;
    static std::map<std::string, std::string> answers;
    std::lock_guard<std::mutex> lock(mutex);
    const std::string key = nvcc + '\n' + flag;
    auto found = answers.find(key);
    if (found != answers.end()) return found->second;
    ChildOptions o;
    o.wall_seconds = 30;
    auto child = run_supervised({nvcc, flag}, o);
    std::string answer = child.exited_ok() ? child.out.head : std::string();
    answers[key] = answer;
    return answer;
}

int arch_number(const std::string& arch) {
    auto digits = arch.find_first_of("0123456789");
    if (digits == std::string::npos) return 0;
    return std::atoi(arch.c_str() + digits);
}

}  // namespace

std::string configured_nvcc() {
#ifndef CUDALINGS_DEFAULT_NVCC
#define CUDALINGS_DEFAULT_NVCC "nvcc"
#endif
    if (const char* env = std::getenv("CUDALINGS_NVCC"); env && *env) return env;
    const std::string built_with = CUDALINGS_DEFAULT_NVCC;
    if (::access(built_with.c_str(), X_OK) == 0) return built_with;
    return "nvcc";
}

std::string SetupProblem::line() const {
    std::string text = what;
    if (!fix.empty()) text += ": " + fix;
    if (!anchor.empty()) text += " (see docs/troubleshooting.md#" + anchor + ")";
    return text;
}

void set_setup_error(StepReport& report, const SetupProblem& problem) {
    report.verdict = Verdict::SetupError;
    report.reason = problem.line();
    report.hint.clear();  // the lesson's hint is about the learner's code, not the machine
}

SetupProblem cannot_create_directory(const std::string& dir, int error_number) {
    return {"cannot create " + dir + " (" + std::strerror(error_number) + ")",
            "give yourself write access to it, or keep progress and caches elsewhere with "
            "--state-dir DIR (or CUDALINGS_STATE_DIR)",
            "state-dir"};
}

SetupProblem cannot_run(const std::string& what, const std::string& program,
                        const std::string& why) {
    if (what == "nvcc")
        return {"cannot run nvcc (" + program + ": " + why + ")",
                "install the CUDA Toolkit, put its bin/ on PATH, or name nvcc with CUDALINGS_NVCC",
                "nvcc"};
    return {"cannot run " + what + " (" + program + ": " + why + ")",
            "rebuild the checker: ./cudalings builds what is missing", "checker-build"};
}

std::optional<SetupProblem> setup_problem_in_build_output(std::string_view output) {
    const std::string text(output);
    std::smatch m;
    static const std::regex host_version(
        R"(unsupported (GNU|clang|Microsoft Visual Studio) version)");
    if (std::regex_search(text, m, host_version))
        return SetupProblem{"nvcc refuses this host compiler (" + m.str(0) + ")",
                            "install a host compiler this toolkit supports and name it, e.g. "
                            "export NVCC_PREPEND_FLAGS='-ccbin g++-12'",
                            "host-compiler"};
    static const std::regex arch(
        R"((Unsupported gpu architecture '[^']*'|Value '[^']*' is not defined for option 'gpu-name'))");
    if (std::regex_search(text, m, arch))
        return SetupProblem{"this nvcc cannot build for the GPU (" + m.str(0) + ")",
                            "use a CUDA Toolkit that supports this GPU (./cudalings doctor)",
                            "architecture"};
    static const std::regex no_host(
        R"((Could not set up the environment|Cannot find compiler|Failed to preprocess host compiler properties|cc1plus: not found|No such file or directory: '(cc|c\+\+|g\+\+|gcc)'))");
    if (std::regex_search(text, m, no_host))
        return SetupProblem{"nvcc cannot use a host compiler (" + m.str(0) + ")",
                            "install g++ (e.g. sudo apt install g++) or name one with "
                            "NVCC_PREPEND_FLAGS='-ccbin /path/to/g++'",
                            "host-compiler"};
    static const std::regex toolkit(
        R"((cicc|ptxas|fatbinary|nvlink|cudafe\+\+)(: not found|: No such file)|cannot find -lcudart)");
    if (std::regex_search(text, m, toolkit))
        return SetupProblem{"the CUDA Toolkit is incomplete (" + m.str(0) + ")",
                            "reinstall the CUDA Toolkit (its compiler package)", "nvcc"};
    static const std::regex disk(R"(No space left on device|Disk quota exceeded)");
    if (std::regex_search(text, m, disk))
        return SetupProblem{"the disk is full (" + m.str(0) + ")",
                            "free some space (the build cache is in .cudalings/ and build/)",
                            "disk"};
    static const std::regex killed(
        R"(Killed signal terminated program|internal compiler error: Killed)");
    if (std::regex_search(text, m, killed))
        return SetupProblem{
            "the compiler was killed, most likely for lack of memory (" + m.str(0) + ")",
            "close other programs or add swap, then check again", "memory"};
    return std::nullopt;
}

std::vector<std::string> nvcc_gpu_codes(const std::string& nvcc) {
    std::vector<std::string> codes;
    std::istringstream words(ask_nvcc(nvcc, "--list-gpu-code"));
    std::string word;
    while (words >> word)
        if (word.rfind("sm_", 0) == 0) codes.push_back(word);
    return codes;
}

std::string nvcc_release(const std::string& nvcc) {
    static const std::regex release(R"(release ([0-9]+\.[0-9]+))");
    const std::string text = ask_nvcc(nvcc, "--version");
    std::smatch m;
    return std::regex_search(text, m, release) ? m.str(1) : std::string();
}

std::string find_cuda_tool(const std::string& nvcc, const std::string& name) {
    namespace fs = std::filesystem;
    std::vector<fs::path> candidates;
    const fs::path bin = fs::path(find_program(nvcc)).parent_path();
    std::vector<fs::path> roots;
    if (!bin.empty()) roots.push_back(bin.parent_path());
    roots.push_back("/usr/local/cuda");
    for (const auto& root : roots) {
        candidates.push_back(root / "bin" / name);
        candidates.push_back(root / name / name);  // compute-sanitizer/compute-sanitizer
    }
    // Nsight Compute's own folders, newest (last in name order) first.
    std::vector<fs::path> nsight;
    std::error_code ec;
    for (const auto& base : {roots.front(), fs::path("/opt/nvidia/nsight-compute")})
        for (const auto& e : fs::directory_iterator(base, ec))
            if (e.path().filename().string().rfind("nsight-compute", 0) == 0 ||
                base == "/opt/nvidia/nsight-compute")
                nsight.push_back(e.path() / name);
    std::sort(nsight.rbegin(), nsight.rend());
    candidates.insert(candidates.end(), nsight.begin(), nsight.end());
    for (const auto& c : candidates)
        if (::access(c.c_str(), X_OK) == 0) return c.string();
    return find_program(name);
}

std::optional<SetupProblem> unsupported_architecture(const std::string& nvcc,
                                                     const std::string& arch) {
    if (arch.empty()) return std::nullopt;
    const auto codes = nvcc_gpu_codes(nvcc);
    if (codes.empty()) return std::nullopt;  // this nvcc does not say: let it try
    for (const auto& c : codes)
        if (c == arch) return std::nullopt;
    return architecture_problem(arch, nvcc_release(nvcc), codes);
}

SetupProblem architecture_problem(const std::string& arch, const std::string& release,
                                  const std::vector<std::string>& codes) {
    SetupProblem p;
    p.anchor = "architecture";
    p.what = "nvcc" + (release.empty() ? std::string() : " " + release) +
             " cannot build for this GPU (" + arch + ")";
    if (codes.empty()) {
        p.fix = "use a CUDA Toolkit that supports " + arch;
        return p;
    }
    p.what.pop_back();
    p.what += "; it builds for " + codes.front() + " to " + codes.back() + ")";
    const int want = arch_number(arch), oldest = arch_number(codes.front());
    if (want < oldest && want >= 50 && want < 75 && arch_number(release) >= 13)
        p.fix =
            "CUDA 13 dropped GPUs before sm_75: install CUDA 12.x (it builds for sm_50 to "
            "sm_90 and newer) and point the checker at it with CUDALINGS_NVCC";
    else if (want < oldest)
        p.fix = "install an older CUDA Toolkit that still supports " + arch +
                " and point the checker at it with CUDALINGS_NVCC";
    else
        p.fix = "this GPU is newer than the toolkit: install a newer CUDA Toolkit";
    return p;
}

}  // namespace cudalings
