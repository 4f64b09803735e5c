#include "sanitize.h"

#include "setup.h"
#include "supervise.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <sstream>

namespace fs = std::filesystem;

namespace cudalings {

std::vector<std::string> sanitizer_command(const std::string& sanitizer, const std::string& tool,
                                           const std::vector<std::string>& program) {
    std::vector<std::string> cmd{sanitizer, "--tool",           tool, "--print-limit",
                                 "20",      "--error-exitcode", "86"};
    if (tool == "memcheck") {
        // Padding between allocations: a write one element past the end lands in the padding
        // and is reported, instead of silently hitting a neighbouring allocation.
        cmd.insert(cmd.end(), {"--padding", "256", "--leak-check", "no"});
    }
    if (tool == "racecheck") cmd.insert(cmd.end(), {"--racecheck-report", "analysis"});
    cmd.insert(cmd.end(), program.begin(), program.end());
    return cmd;
}

namespace {

bool same_file(const std::string& reported, const std::string& learner) {
    if (reported == learner) return true;
    std::error_code ec;
    if (fs::equivalent(reported, learner, ec)) return true;
    // Relative paths in line info: compare the trailing components.
    return !reported.empty() && learner.size() > reported.size() &&
           learner.compare(learner.size() - reported.size(), reported.size(), reported) == 0 &&
           learner[learner.size() - reported.size() - 1] == '/';
}

std::string trim(std::string s) {
    auto b = s.find_first_not_of(" \t");
    auto e = s.find_last_not_of(" \t\r");
    return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

}  // namespace

std::vector<SanitizerFinding> parse_sanitizer_output(std::string_view output,
                                                     const std::string& tool,
                                                     const std::string& learner_file) {
    static const std::regex location(R"( in (\S+):(\d+))");
    std::vector<SanitizerFinding> findings;
    std::istringstream lines{std::string(output)};
    std::string line;
    struct Block {
        std::string header;
        std::vector<std::string> body;
    };
    std::vector<Block> blocks;
    while (std::getline(lines, line)) {
        const std::string prefix = "========= ";
        if (line.rfind(prefix, 0) != 0) continue;
        std::string rest = line.substr(prefix.size());
        if (trim(rest).empty()) continue;
        bool indented = rest.rfind("    ", 0) == 0;
        if (!indented) {
            blocks.push_back({trim(rest), {}});
        } else if (!blocks.empty()) {
            blocks.back().body.push_back(trim(rest));
        }
    }
    for (const auto& b : blocks) {
        if (b.header.rfind("ERROR SUMMARY", 0) == 0 ||
            b.header.rfind("COMPUTE-SANITIZER", 0) == 0 ||
            b.header.rfind("Saved host backtrace", 0) == 0)
            continue;
        SanitizerFinding f;
        f.tool = tool;
        f.message = b.header;
        std::vector<std::string> all{b.header};
        all.insert(all.end(), b.body.begin(), b.body.end());
        bool mine = false;
        for (const auto& l : all) {
            for (std::sregex_iterator it(l.begin(), l.end(), location), end; it != end; ++it) {
                std::string file = (*it)[1];
                if (!same_file(file, learner_file)) continue;
                if (!mine) {
                    f.file = learner_file;
                    f.line = std::stoi((*it)[2]);
                    mine = true;
                }
            }
        }
        if (!mine) continue;
        for (const auto& l : b.body) {
            if (l.rfind("Saved host backtrace", 0) == 0) break;
            if (!f.detail.empty()) f.detail += "; ";
            f.detail += l;
        }
        findings.push_back(f);
    }
    return findings;
}

std::string find_sanitizer(const std::string& nvcc) {
    if (const char* env = std::getenv("CUDALINGS_SANITIZER")) return env;
    return find_cuda_tool(nvcc, "compute-sanitizer");
}

}  // namespace cudalings
