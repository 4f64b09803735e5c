// .vscode/tasks.json's problem matcher, applied to the checker's real output for a step with a
// compile error: it must find the learner's file, the line and nvcc's message (VS Code's
// matcher regexps are JavaScript regexps; these use nothing std::regex's ECMAScript lacks).
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <nlohmann/json.hpp>

#include <regex>
#include <sstream>

#include "flow_support.h"

using Catch::Matchers::ContainsSubstring;

TEST_CASE("the VS Code problem matcher catches the checker's compile errors", "[editor][cli]") {
    const auto tasks = nlohmann::json::parse(
        flow::read(std::string(CUDALINGS_SOURCE_DIR) + "/.vscode/tasks.json"));
    std::string pattern;
    for (const auto& t : tasks["tasks"])
        if (t["label"] == "cudalings: check this file")
            pattern = t["problemMatcher"]["pattern"]["regexp"];
    REQUIRE_FALSE(pattern.empty());
    const std::regex matcher(pattern);

    const std::string root = flow::course_copy();
    const std::string file = root + "/lessons/01_vector_add/01_one_thread_per_element.cu";
    flow::write(file,
                "#include \"vector_add.cuh\"\n"
                "\n"
                "__global__ void add(const float* a, const float* b, float* c, size_t n) {\n"
                "    size_t i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                "    if (i < n) c[i] = a[i] + b[i] + missing_value;\n"
                "}\n"
                "extern \"C\" cudaError_t vector_add(const float* a, const float* b, float* c,\n"
                "                                    size_t n, cudaStream_t stream) {\n"
                "    add<<<(n + 255) / 256, 256, 0, stream>>>(a, b, c, n);\n"
                "    return cudaGetLastError();\n"
                "}\n");
    // What the task runs: `cudalings check ${file}` from the course folder.
    auto r = flow::cudalings({"check", file}, {}, root);
    CHECK(r.code == 1);
    std::istringstream lines(r.out);
    std::string line;
    std::vector<std::smatch> hits;
    std::vector<std::string> kept;
    while (std::getline(lines, line)) kept.push_back(line);
    int found = 0;
    for (const auto& l : kept) {
        std::smatch m;
        if (!std::regex_match(l, m, matcher)) continue;
        ++found;
        INFO(l);
        CHECK(m[1] == file);  // the learner's file, as an absolute path
        CHECK(m[2] == "5");
        CHECK(m[3] == "error");
        CHECK_THAT(m[4].str(), ContainsSubstring("missing_value"));
    }
    INFO(r.out);
    CHECK(found == 1);  // the first error, once (nvcc's own lines stay quoted below it)
}
