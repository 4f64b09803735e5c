// Building the learner's single file with nvcc: the command, the cache key, and reading
// nvcc's diagnostics back into file:line form.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cudalings {

struct CompileRequest {
    std::string nvcc = "nvcc";
    std::string source;                     // the learner's .cu
    std::string output;                     // what `made` names, to write
    std::vector<std::string> include_dirs;  // lesson header, common headers
    std::string arch;  // "sm_90" for the GPU present; empty: a default that needs no GPU
    std::vector<std::string> libraries;  // linked in: "cublas" (a lesson's baselines)
    // What nvcc makes. With a GPU, a shared object the runner loads. Without one nothing loads
    // nvcc's build (the emulator builds its own), so nvcc runs only as far as its diagnostics
    // go: its host and device front ends and the device compile (`-cuda`, the host compiler's
    // own pass left out; the emulator's build of the file carries its imports to screen). A
    // file the emulator cannot build still gets an object file (`-c`): the imports of a step
    // that is not run are screened on it, as they were.
    enum class Makes { SharedObject, ObjectFile, FrontEnds };
    Makes made = Makes::SharedObject;
};

// The file name ending of what nvcc makes (".so", ".o", ".ii").
std::string_view output_suffix(CompileRequest::Makes made);

// The architecture when no GPU is present: compile-only, proves the file builds (and the
// emulator runs it). A modern one, so that what lessons may use on a current GPU builds
// (__reduce_add_sync needs sm_80, clusters sm_90): Hopper, the course's reference GPU.
inline constexpr std::string_view kCompileOnlyArch = "sm_90";

// nvcc, as an argv, making what the request asks for (CompileRequest::made).
std::vector<std::string> nvcc_command(const CompileRequest& request);

// The headers (.h, .cuh, .hpp) in the source file's own folder, sorted: a quoted #include
// finds them before any -I directory, so they belong in every cache key of that source.
std::vector<std::string> headers_beside(const std::string& source);

// Cache key: the command's flags, nvcc's identity, the source and every header it can see
// (`header_files`, and the headers beside the source).
std::string compile_cache_key(const CompileRequest& request, std::string_view nvcc_identity,
                              const std::vector<std::string>& header_files);

struct Diagnostic {
    std::string file;
    int line = 0;
    std::string severity;  // "error", "warning", "fatal error"
    std::string message;
};

// Every "file(line): error: message" (nvcc front end) and "file:line:col: error: message"
// (host compiler) in the output, in order.
std::vector<Diagnostic> parse_compiler_output(std::string_view output);

// The first error, else an empty Diagnostic.
Diagnostic first_error(const std::vector<Diagnostic>& diagnostics);

}  // namespace cudalings
