#include "compile.h"

#include <algorithm>
#include <filesystem>
#include <regex>
#include <sstream>

#include "hash.h"

namespace cudalings {

std::vector<std::string> nvcc_command(const CompileRequest& r) {
    std::vector<std::string> cmd{
        r.nvcc, "-std=c++17", "-O3",
        // file:line in sanitizer reports and profiles
        "-lineinfo",
        // a shared object sharing the runner's CUDA runtime (or only the object file, or only
        // the front ends' and the device compile's output)
        r.made == CompileRequest::Makes::SharedObject ? "-shared"
        : r.made == CompileRequest::Makes::ObjectFile ? "-c"
                                                      : "-cuda",
        "-Xcompiler=-fPIC", "-cudart=shared",
        // CUB's NVTX ranges would make every file that includes CUB import dlopen (NVTX loads
        // a profiler's injection library), which the import screen rightly refuses in a step
        "-DCCCL_DISABLE_NVTX",
        std::string("-arch=") + (r.arch.empty() ? std::string(kCompileOnlyArch) : r.arch)};
    for (const auto& dir : r.include_dirs) cmd.push_back("-I" + dir);
    cmd.push_back("-o");
    cmd.push_back(r.output);
    cmd.push_back(r.source);
    for (const auto& lib : r.libraries) cmd.push_back("-l" + lib);
    return cmd;
}

std::string_view output_suffix(CompileRequest::Makes made) {
    switch (made) {
        case CompileRequest::Makes::SharedObject: return ".so";
        case CompileRequest::Makes::ObjectFile: return ".o";
        case CompileRequest::Makes::FrontEnds: return ".ii";
    }
    return ".so";
}

std::string compile_cache_key(const CompileRequest& r, std::string_view nvcc_identity,
                              const std::vector<std::string>& header_files) {
    Hasher h;
    CompileRequest flags_only = r;
    flags_only.output.clear();
    for (const auto& part : nvcc_command(flags_only)) h.add(part);
    h.add(nvcc_identity);
    h.add_file(r.source);
    for (const auto& header : header_files) h.add(header).add_file(header);
    for (const auto& header : headers_beside(r.source)) h.add(header).add_file(header);
    return h.hex();
}

std::vector<std::string> headers_beside(const std::string& source) {
    namespace fs = std::filesystem;
    std::vector<std::string> headers;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(fs::path(source).parent_path(), ec)) {
        const auto ext = entry.path().extension().string();
        if (ext == ".cuh" || ext == ".h" || ext == ".hpp") headers.push_back(entry.path().string());
    }
    std::sort(headers.begin(), headers.end());
    return headers;
}

std::vector<Diagnostic> parse_compiler_output(std::string_view output) {
    // nvcc's front end: path(12): error: text      host compiler: path:12:5: error: text
    static const std::regex nvcc_style(
        R"(^(.+?)\((\d+)\): (error|warning|fatal error|catastrophic error)(?: #[\w-]+)?: (.*)$)");
    static const std::regex gcc_style(
        R"(^(.+?):(\d+):(?:\d+:)? (error|warning|fatal error): (.*)$)");
    std::vector<Diagnostic> found;
    std::istringstream lines{std::string(output)};
    std::string line;
    while (std::getline(lines, line)) {
        std::smatch m;
        if (std::regex_match(line, m, nvcc_style) || std::regex_match(line, m, gcc_style)) {
            Diagnostic d;
            d.file = m[1];
            d.line = std::stoi(m[2]);
            d.severity = m[3];
            d.message = m[4];
            if (d.severity == "catastrophic error") d.severity = "fatal error";
            found.push_back(d);
        } else if (line.rfind("ptxas error", 0) == 0 || line.rfind("nvlink error", 0) == 0 ||
                   line.rfind("ptxas fatal", 0) == 0 || line.rfind("nvcc fatal", 0) == 0) {
            found.push_back({"", 0, "error", line});
        }
    }
    return found;
}

Diagnostic first_error(const std::vector<Diagnostic>& diagnostics) {
    for (const auto& d : diagnostics)
        if (d.severity != "warning") return d;
    return {};
}

}  // namespace cudalings
