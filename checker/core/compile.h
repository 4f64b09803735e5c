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
    std::string output;                     // the shared object (or object file) to write
    std::vector<std::string> include_dirs;  // lesson header, common headers
    std::string arch;  // "sm_90" for the GPU present; empty: a default that needs no GPU
    std::vector<std::string> libraries;  // linked in: "cublas" (a lesson's baselines)
    // Without a GPU nothing loads the build: an object file (`nvcc -c`) proves the file builds
    // and carries its imports, without the link.
    bool object_only = false;
};

// The architecture when no GPU is present: compile-only, proves the file builds (and the
// emulator runs it). A modern one, so that what lessons may use on a current GPU builds
// (__reduce_add_sync needs sm_80, clusters sm_90): Hopper, the course's reference GPU.
inline constexpr std::string_view kCompileOnlyArch = "sm_90";

// nvcc, as an argv, building a shared object the runner loads with dlopen (or, object_only, an
// object file).
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
