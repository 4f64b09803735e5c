#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "compile.h"

using namespace cudalings;

namespace {
bool has(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}
}  // namespace

TEST_CASE("nvcc command builds a shared object for the GPU present", "[compile]") {
    CompileRequest r;
    r.nvcc = "/usr/local/cuda/bin/nvcc";
    r.source = "lessons/01_vector_add/01_one_thread_per_element.cu";
    r.output = "/tmp/out.so";
    r.include_dirs = {"lessons/01_vector_add", "lessons/common"};
    r.arch = "sm_90";
    auto cmd = nvcc_command(r);
    REQUIRE(cmd.front() == r.nvcc);
    CHECK(cmd.back() == r.source);
    CHECK(has(cmd, "-arch=sm_90"));
    CHECK(has(cmd, "-shared"));
    CHECK(has(cmd, "-cudart=shared"));  // one CUDA runtime shared with the runner
    CHECK(has(cmd, "-lineinfo"));
    CHECK(has(cmd, "-std=c++17"));
    CHECK(has(cmd, "-Ilessons/01_vector_add"));
    auto out = std::find(cmd.begin(), cmd.end(), "-o");
    REQUIRE(out != cmd.end());
    CHECK(*(out + 1) == "/tmp/out.so");
}

TEST_CASE("without a GPU the command still names an architecture", "[compile]") {
    CompileRequest r;
    r.source = "x.cu";
    r.output = "x.so";
    CHECK(has(nvcc_command(r), "-arch=" + std::string(kCompileOnlyArch)));
}

// Without a GPU nothing loads nvcc's build (the emulator builds its own): nvcc's front ends and
// device compile only, or an object file (no link) for a file the emulator cannot build.
TEST_CASE("without a GPU nvcc makes no shared object", "[compile]") {
    CompileRequest r;
    r.source = "x.cu";
    r.output = "x.ii";
    r.made = CompileRequest::Makes::FrontEnds;
    const auto front = nvcc_command(r);
    CHECK(has(front, "-cuda"));
    CHECK_FALSE(has(front, "-c"));
    CHECK_FALSE(has(front, "-shared"));
    CHECK(output_suffix(r.made) == ".ii");
    CompileRequest object = r;
    object.made = CompileRequest::Makes::ObjectFile;
    CHECK(has(nvcc_command(object), "-c"));
    CHECK_FALSE(has(nvcc_command(object), "-shared"));
    CHECK(output_suffix(object.made) == ".o");
    CompileRequest shared = r;
    shared.made = CompileRequest::Makes::SharedObject;
    CHECK(has(nvcc_command(shared), "-shared"));
    CHECK(output_suffix(shared.made) == ".so");
    CHECK(compile_cache_key(r, "nvcc", {}) != compile_cache_key(object, "nvcc", {}));
    CHECK(compile_cache_key(object, "nvcc", {}) != compile_cache_key(shared, "nvcc", {}));
}

TEST_CASE("the cache key changes with content, flags and compiler, not with the output path",
          "[compile]") {
    std::string src = "/tmp/cudalings_test_cache_key.cu";
    { std::ofstream(src) << "// one\n"; }
    CompileRequest r;
    r.source = src;
    r.output = "/tmp/a.so";
    r.arch = "sm_90";
    auto key = compile_cache_key(r, "nvcc 13.0", {});
    CompileRequest moved = r;
    moved.output = "/tmp/b.so";
    CHECK(compile_cache_key(moved, "nvcc 13.0", {}) == key);
    CompileRequest other_arch = r;
    other_arch.arch = "sm_80";
    CHECK(compile_cache_key(other_arch, "nvcc 13.0", {}) != key);
    CHECK(compile_cache_key(r, "nvcc 12.9", {}) != key);
    { std::ofstream(src) << "// two\n"; }
    CHECK(compile_cache_key(r, "nvcc 13.0", {}) != key);
    std::remove(src.c_str());
}

TEST_CASE("nvcc and host-compiler diagnostics are read back as file:line", "[compile]") {
    std::string output =
        "lessons/01_vector_add/01_one_thread_per_element.cu(23): error: identifier \"i\" is "
        "undefined\n"
        "        c[i] = a[i] + b[i];\n"
        "          ^\n"
        "lessons/01_vector_add/01_one_thread_per_element.cu(12): warning #177-D: variable \"x\" "
        "was declared but never referenced\n"
        "/tmp/x.cu:7:3: error: expected ';' before '}' token\n"
        "ptxas error   : Entry function uses too much shared data\n"
        "1 error detected in the compilation of \"x.cu\".\n";
    auto d = parse_compiler_output(output);
    REQUIRE(d.size() == 4);
    CHECK(d[0].file == "lessons/01_vector_add/01_one_thread_per_element.cu");
    CHECK(d[0].line == 23);
    CHECK(d[0].severity == "error");
    CHECK(d[0].message == "identifier \"i\" is undefined");
    CHECK(d[1].severity == "warning");
    CHECK(d[2].file == "/tmp/x.cu");
    CHECK(d[2].line == 7);
    CHECK(d[3].message.find("ptxas error") == 0);
    CHECK(first_error(d).line == 23);
    CHECK(first_error({d[1]}).message.empty());
}

#include "hash.h"

TEST_CASE("result lines are authenticated by a keyed tag", "[hash]") {
    unsigned char key[16], other[16];
    random_key(key);
    random_key(other);
    std::string line = R"({"event":"case","status":"pass"})";
    auto tag = line_tag(key, 3, line);
    CHECK(tag.size() == 16);
    CHECK(line_tag(key, 3, line) == tag);
    CHECK(line_tag(key, 4, line) != tag);  // a replayed line at another position fails
    CHECK(line_tag(other, 3, line) != tag);
    CHECK(line_tag(key, 3, line + " ") != tag);
    unsigned char back[16];
    REQUIRE(key_from_hex(key_to_hex(key), back));
    CHECK(std::equal(key, key + 16, back));
    CHECK_FALSE(key_from_hex("xyz", back));
    // SipHash-2-4 reference vector: key 00..0f, empty message -> 0x726fdb47dd0e0e31
    unsigned char k[16];
    for (int i = 0; i < 16; ++i) k[i] = static_cast<unsigned char>(i);
    CHECK(siphash24(k, "") == 0x726fdb47dd0e0e31ull);
}

#include "policy.h"

// A header an allowed library includes for itself (CUB includes parts of Thrust) is that
// library's business; the same header included by the learner's file is not.
TEST_CASE("the policy screen attributes a library's own includes to it", "[policy]") {
    cudalings::PolicyRules rules;
    rules.forbidden_libraries = {"thrust", "cublas"};  // cub allowed
    const std::string through_cub =
        "# 1 \"step.cu\"\n"
        "# 1 \"/cuda/include/cccl/cub/device/device_scan.cuh\" 1 3\n"
        "# 1 \"/cuda/include/cccl/thrust/iterator/discard_iterator.h\" 1 3\n"
        "int discard;\n"
        "# 2 \"/cuda/include/cccl/cub/device/device_scan.cuh\" 2 3\n"
        "# 2 \"step.cu\" 2\n"
        "int x;\n";
    CHECK_FALSE(cudalings::screen_preprocessed(through_cub, rules).has_value());
    const std::string direct = through_cub +
                               "# 1 \"/cuda/include/cccl/thrust/device_vector.h\" 1 3\n"
                               "int v;\n"
                               "# 3 \"step.cu\" 2\n";
    auto v = cudalings::screen_preprocessed(direct, rules);
    REQUIRE(v.has_value());
    CHECK(v->rule == "no-thrust");
    rules.forbidden_libraries = {"cub", "thrust", "cublas"};
    auto cub = cudalings::screen_preprocessed(through_cub, rules);
    REQUIRE(cub.has_value());
    CHECK(cub->rule == "no-cub");
}

#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "checks_build.h"

TEST_CASE("the checks cache keeps about one entry per lesson and kind", "[compile]") {
    namespace fs = std::filesystem;
    CHECK(checks_cache_tag("/course/checks/01_vector_add/checks.cu", true, false) ==
          "01_vector_add-emu");
    CHECK(checks_cache_tag("/course/checks/01_vector_add/checks.cu", false, false) ==
          "01_vector_add-gpu");
    CHECK(checks_cache_tag("/course/checks/10_gemm/baselines.cu", false, true) ==
          "10_gemm-gpu-baselines");

    const fs::path dir =
        fs::temp_directory_path() / ("cudalings_checks_cache_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    const std::string hex_a(32, 'a'), hex_b(32, 'b'), hex_c(32, 'c');
    const auto make = [&](const std::string& name, int minutes_unused) {
        std::ofstream(dir / name) << "so";
        fs::last_write_time(
            dir / name, fs::file_time_type::clock::now() - std::chrono::minutes(minutes_unused));
    };
    make("01_vector_add-emu-" + hex_a + ".so", 30);            // older, same lesson and kind
    make("01_vector_add-emu-" + hex_b + ".so", 1);             // used a minute ago: kept
    make("01_vector_add-emu-" + hex_c + ".so", 0);             // the one just built
    make("01_vector_add-gpu-" + hex_a + ".so", 30);            // another kind
    make("01_vector_add-gpu-baselines-" + hex_a + ".so", 30);  // another kind
    make("02_reduce-emu-" + hex_a + ".so", 30);                // another lesson
    make(hex_a + ".so", 30);                                   // from before entries had tags
    make(hex_b + ".so.tmp.123", 30);                           // not an entry
    const std::string keep = (dir / ("01_vector_add-emu-" + hex_c + ".so")).string();
    CHECK(prune_checks_cache(dir.string(), "01_vector_add-emu", keep, 600) == 2);
    std::vector<std::string> left;
    for (const auto& e : fs::directory_iterator(dir)) left.push_back(e.path().filename().string());
    std::sort(left.begin(), left.end());
    CHECK(left == std::vector<std::string>{
                      "01_vector_add-emu-" + hex_b + ".so", "01_vector_add-emu-" + hex_c + ".so",
                      "01_vector_add-gpu-" + hex_a + ".so",
                      "01_vector_add-gpu-baselines-" + hex_a + ".so",
                      "02_reduce-emu-" + hex_a + ".so", hex_b + ".so.tmp.123"});
    // Once unused long enough, the newer one goes too, and the one kept stays.
    CHECK(prune_checks_cache(dir.string(), "01_vector_add-emu", keep, 30) == 1);
    CHECK(fs::exists(keep));
    fs::remove_all(dir);
}
