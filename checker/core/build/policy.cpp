#include "policy.h"

#include <cctype>
#include <filesystem>
#include <sstream>
#include <unordered_map>

namespace fs = std::filesystem;

namespace cudalings {
namespace {

// A line marker: # 12 "path" flags... (`flag`: 1 entering an included file, 2 back in the
// includer, 0 neither)
bool parse_marker(std::string_view line, std::string& path, int& lineno, int* flag = nullptr) {
    if (line.size() < 4 || line[0] != '#') return false;
    std::size_t i = 1;
    while (i < line.size() && line[i] == ' ') ++i;
    if (line.substr(i, 4) == "line") i += 4;
    while (i < line.size() && line[i] == ' ') ++i;
    std::size_t digits = i;
    while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]))) ++i;
    if (i == digits) return false;
    lineno = std::stoi(std::string(line.substr(digits, i - digits)));
    while (i < line.size() && line[i] == ' ') ++i;
    if (i >= line.size() || line[i] != '"') return false;
    auto end = line.find('"', i + 1);
    if (end == std::string_view::npos) return false;
    path = std::string(line.substr(i + 1, end - i - 1));
    if (flag) {
        *flag = 0;
        std::size_t f = end + 1;
        while (f < line.size() && line[f] == ' ') ++f;
        if (f < line.size() && (line[f] == '1' || line[f] == '2') &&
            (f + 1 == line.size() || line[f + 1] == ' '))
            *flag = line[f] - '0';
    }
    return true;
}

std::string normal(const std::string& path) {
    std::error_code ec;
    auto p = fs::weakly_canonical(fs::path(path), ec);
    return ec ? fs::path(path).lexically_normal().string() : p.string();
}

// Both already normal().
bool under(const std::string& p, const std::string& d) {
    return !d.empty() && p.size() > d.size() && p.compare(0, d.size(), d) == 0 &&
           (p[d.size()] == '/' || d.back() == '/');
}

std::vector<std::string> normal_all(const std::vector<std::string>& paths) {
    std::vector<std::string> out;
    for (const auto& p : paths) out.push_back(normal(p));
    return out;
}

// Which library a header path belongs to, if one of the screened ones.
std::string library_of(const std::string& path) {
    if (path.find("/cub/") != std::string::npos) return "cub";
    if (path.find("/thrust/") != std::string::npos) return "thrust";
    auto file = fs::path(path).filename().string();
    if (file.rfind("cublas", 0) == 0) return "cublas";
    return {};
}

bool forbidden(const std::vector<std::string>& list, const std::string& name) {
    for (const auto& l : list)
        if (l == name) return true;
    return false;
}

bool is_ident(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Identifiers in a line of code, with what follows each ("::" matters for namespaces).
// String and character literals are skipped.
template <typename F>
void for_each_identifier(std::string_view line, F&& f) {
    std::size_t i = 0;
    while (i < line.size()) {
        char c = line[i];
        if (c == '"' || c == '\'') {
            char quote = c;
            ++i;
            while (i < line.size() && line[i] != quote) i += line[i] == '\\' ? 2 : 1;
            ++i;
            continue;
        }
        if (is_ident(c) && !std::isdigit(static_cast<unsigned char>(c))) {
            std::size_t start = i;
            while (i < line.size() && is_ident(line[i])) ++i;
            std::size_t j = i;
            while (j < line.size() && line[j] == ' ') ++j;
            bool scope = line.substr(j, 2) == "::";
            f(line.substr(start, i - start), scope);
            continue;
        }
        ++i;
    }
}

}  // namespace

std::optional<PolicyViolation> screen_preprocessed(std::string_view text,
                                                   const PolicyRules& rules) {
    // Directories are resolved once, and each file once: a preprocessed file has thousands of
    // line markers for a few dozen files, and resolving a path asks the file system.
    const std::vector<std::string> screened_dirs = normal_all(rules.screened_dirs);
    const std::vector<std::string> forbidden_dirs = normal_all(rules.forbidden_dirs);
    const std::vector<std::string> allowed_dirs = normal_all(rules.allowed_dirs);
    std::unordered_map<std::string, bool> screened_file;  // path -> its text is screened
    std::istringstream lines{std::string(text)};
    std::string line, current;
    bool screen_current = false;
    int lineno = 0;
    // The files being included, outermost first: a header that an allowed library includes for
    // itself (CUB includes parts of Thrust) is part of that library, not the learner's use.
    std::vector<std::string> stack;
    auto inside_allowed_library = [&] {
        for (const auto& f : stack) {
            const std::string lib = library_of(f);
            if (!lib.empty() && !forbidden(rules.forbidden_libraries, lib)) return true;
        }
        return false;
    };
    while (std::getline(lines, line)) {
        std::string path;
        int marker_line = 0, flag = 0;
        if (parse_marker(line, path, marker_line, &flag)) {
            if (flag == 1) {
                stack.push_back(current);
            } else if (flag == 2) {
                while (!stack.empty() && stack.back() != path) stack.pop_back();
                if (!stack.empty()) stack.pop_back();
            }
            current = path;
            lineno = marker_line - 1;
            auto known = screened_file.find(path);
            if (known != screened_file.end()) {
                screen_current = known->second;
                continue;
            }
            std::string lib = library_of(path);
            if (!lib.empty() && forbidden(rules.forbidden_libraries, lib) &&
                !inside_allowed_library())
                return PolicyViolation{
                    "no-" + lib, "this step may not use " + lib + ": the file includes " + path};
            std::string resolved = normal(path);
            bool allowed = false;
            for (const auto& dir : allowed_dirs) allowed = allowed || under(resolved, dir);
            for (const auto& dir : forbidden_dirs)
                if (under(resolved, dir) && !allowed)
                    return PolicyViolation{"no-foreign-files",
                                           "the file includes " + path +
                                               ", which belongs to the course's solutions or the "
                                               "checker"};
            screen_current = false;
            for (const auto& dir : screened_dirs)
                screen_current = screen_current || under(resolved, dir);
            screened_file[path] = screen_current;
            continue;
        }
        ++lineno;
        if (!screen_current) continue;
        std::optional<PolicyViolation> found;
        for_each_identifier(line, [&](std::string_view id, bool scope) {
            if (found) return;
            auto where = [&] { return " (" + current + ":" + std::to_string(lineno) + ")"; };
            if ((id == "cub" || id == "thrust") && scope &&
                forbidden(rules.forbidden_libraries, std::string(id)))
                found = PolicyViolation{"no-" + std::string(id),
                                        "this step may not use " + std::string(id) + where()};
            else if (id.rfind("cublas", 0) == 0 && forbidden(rules.forbidden_libraries, "cublas"))
                found = PolicyViolation{"no-cublas", "this step may not use cuBLAS (" +
                                                         std::string(id) + ")" + where()};
            else if (id == "dlopen" || id == "dlsym" || id == "dlmopen" || id == "dlvsym")
                found = PolicyViolation{"no-dlopen", "a step may not load libraries itself (" +
                                                         std::string(id) + ")" + where()};
        });
        if (found) return found;
    }
    return std::nullopt;
}

std::optional<PolicyViolation> screen_missing_includes(std::string_view diagnostics,
                                                       const std::vector<std::string>& include_dirs,
                                                       const PolicyRules& rules) {
    // gcc's preprocessor: FILE:LINE:COL: fatal error: NAME: No such file or directory
    const std::string marker = ": fatal error: ";
    const std::string missing = ": No such file or directory";
    const std::vector<std::string> forbidden_dirs = normal_all(rules.forbidden_dirs);
    std::istringstream lines{std::string(diagnostics)};
    std::string line;
    while (std::getline(lines, line)) {
        auto at = line.find(marker);
        if (at == std::string::npos || line.size() < missing.size() ||
            line.compare(line.size() - missing.size(), missing.size(), missing) != 0)
            continue;
        std::string name =
            line.substr(at + marker.size(), line.size() - missing.size() - at - marker.size());
        std::string includer = line.substr(0, at);
        for (int i = 0; i < 2; ++i) includer = includer.substr(0, includer.rfind(':'));
        std::vector<fs::path> candidates;
        if (fs::path(name).is_absolute()) {
            candidates.push_back(name);
        } else {
            candidates.push_back(fs::path(includer).parent_path() / name);
            for (const auto& dir : include_dirs) candidates.push_back(fs::path(dir) / name);
        }
        for (const auto& candidate : candidates) {
            std::string resolved = normal(candidate.lexically_normal().string());
            for (const auto& dir : forbidden_dirs)
                if (under(resolved, dir))
                    return PolicyViolation{"no-foreign-files",
                                           "the file includes " + name +
                                               ", which belongs to the course's solutions or the "
                                               "checker"};
        }
    }
    return std::nullopt;
}

std::vector<std::string> preprocess_command(const std::string& nvcc, const std::string& source,
                                            const std::vector<std::string>& include_dirs,
                                            const std::string& output) {
    std::vector<std::string> cmd{nvcc, "-std=c++17", "-E", "-Xcompiler=-fPIC"};
    for (const auto& dir : include_dirs) cmd.push_back("-I" + dir);
    cmd.push_back("-o");
    cmd.push_back(output);
    cmd.push_back(source);
    return cmd;
}

}  // namespace cudalings
