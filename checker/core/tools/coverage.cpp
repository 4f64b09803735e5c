#include "coverage.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "hash.h"
#include "supervise.h"

namespace fs = std::filesystem;

namespace cudalings {
namespace {

// The text with comments, string and character literals blanked (newlines kept).
std::string code_only(const std::string& text) {
    std::string out = text;
    enum { Code, Line, Block, String, Char } state = Code;
    for (std::size_t i = 0; i < out.size(); ++i) {
        const char c = text[i], next = i + 1 < text.size() ? text[i + 1] : '\0';
        switch (state) {
            case Code:
                if (c == '/' && next == '/')
                    state = Line;
                else if (c == '/' && next == '*')
                    state = Block;
                else if (c == '"')
                    state = String;
                else if (c == '\'')
                    state = Char;
                else
                    continue;
                out[i] = ' ';
                break;
            case Line:
                if (c == '\n')
                    state = Code;
                else
                    out[i] = ' ';
                break;
            case Block:
                if (c == '*' && next == '/') {
                    out[i] = out[i + 1] = ' ';
                    ++i;
                    state = Code;
                } else if (c != '\n') {
                    out[i] = ' ';
                }
                break;
            case String:
            case Char:
                if (c == '\\' && i + 1 < text.size()) {
                    out[i] = ' ';
                    if (next != '\n') out[i + 1] = ' ';
                    ++i;
                } else {
                    if (c == (state == String ? '"' : '\'')) state = Code;
                    if (c != '\n') out[i] = ' ';
                }
                break;
        }
    }
    return out;
}

bool word_at(const std::string& s, std::size_t i, const char* word) {
    const std::size_t n = std::char_traits<char>::length(word);
    if (s.compare(i, n, word) != 0) return false;
    auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    return (i == 0 || !ident(s[i - 1])) && (i + n >= s.size() || !ident(s[i + n]));
}

std::size_t skip_space(const std::string& s, std::size_t i) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    return i;
}

// The index just past the bracket that closes the one at `open`.
std::size_t matching(const std::string& s, std::size_t open) {
    const char o = s[open], c = o == '(' ? ')' : o == '{' ? '}' : ']';
    int depth = 0;
    for (std::size_t i = open; i < s.size(); ++i) {
        if (s[i] == o) ++depth;
        if (s[i] == c && --depth == 0) return i + 1;
    }
    return s.size();
}

// The end (just past it) of the statement that starts at `i`: a braced block, or up to the `;`
// outside brackets (an `if` with a braced body and no `else` ends with that body).
std::size_t statement_end(const std::string& s, std::size_t i) {
    i = skip_space(s, i);
    if (i < s.size() && s[i] == '{') return matching(s, i);
    int depth = 0;
    for (; i < s.size(); ++i) {
        if (s[i] == '(' || s[i] == '[') ++depth;
        if (s[i] == ')' || s[i] == ']') --depth;
        if (depth == 0 && s[i] == '{') {
            std::size_t end = matching(s, i);
            std::size_t after = skip_space(s, end);
            if (!word_at(s, after, "else")) return end;
            i = after + 3;
            continue;
        }
        if (depth == 0 && s[i] == ';') return i + 1;
    }
    return s.size();
}

}  // namespace

std::vector<SourceLoop> find_loops(const std::string& text) {
    const std::string s = code_only(text);
    std::vector<int> line_of(s.size() + 1, 1);
    for (std::size_t i = 0, line = 1; i < s.size(); ++i) {
        line_of[i] = static_cast<int>(line);
        if (s[i] == '\n') ++line;
    }
    line_of[s.size()] = s.empty() ? 1 : line_of[s.size() - 1];
    struct Extent {
        std::size_t keyword, begin, end;  // where its keyword is; its body's characters
        int header;
    };
    std::vector<Extent> loops;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const bool is_do = word_at(s, i, "do");
        if (!is_do && !word_at(s, i, "for") && !word_at(s, i, "while")) continue;
        std::size_t body = 0;
        if (is_do) {
            body = skip_space(s, i + 2);
        } else {
            std::size_t open = skip_space(s, i + (s[i] == 'f' ? 3 : 5));
            if (open >= s.size() || s[open] != '(') continue;
            body = skip_space(s, matching(s, open));
            // The `while (...);` that ends a do-loop has no body of its own.
            if (body < s.size() && s[body] == ';') continue;
        }
        loops.push_back({i, body, statement_end(s, body), line_of[i]});
    }
    std::vector<SourceLoop> out;
    for (const auto& loop : loops) {
        std::set<int> own;
        for (std::size_t i = loop.begin; i < loop.end && i < s.size(); ++i) {
            if (std::isspace(static_cast<unsigned char>(s[i])) || s[i] == '{' || s[i] == '}')
                continue;
            // Inside a loop within this one, its header included (an inner loop's condition runs
            // again with each of its rounds, which says nothing of this loop's).
            bool inner = false;
            for (const auto& other : loops)
                inner = inner || (&other != &loop && other.keyword >= loop.begin &&
                                  other.end <= loop.end && i >= other.keyword && i < other.end);
            if (!inner) own.insert(line_of[i]);
        }
        // A loop on one line is judged by that line (its blocks run with each round too).
        if (own.size() > 1) own.erase(loop.header);
        out.push_back({loop.header, std::vector<int>(own.begin(), own.end())});
    }
    return out;
}

namespace {

struct Counts {
    unsigned long long runs = 0;
    unsigned most_in_thread = 0;
};

// A tool's whole standard output, or "" with `error`.
std::string tool_output(const std::vector<std::string>& argv, std::string& error) {
    ChildOptions o;
    o.wall_seconds = 120;
    o.output_cap = std::size_t{256} << 20;
    const ChildResult r = run_supervised(argv, o);
    if (!r.exited_ok()) {
        error = argv[0] + " failed" +
                (r.started ? ": " + r.err.head.substr(0, 300) : " to start: " + r.start_error);
        return "";
    }
    return r.out.head;
}

std::string hex(unsigned long long v) {
    std::ostringstream s;
    s << "0x" << std::hex << v;
    return s.str();
}

// "12", "12-14", "12, 20-21": a sorted list of lines as ranges.
std::string ranges(const std::vector<int>& lines) {
    std::string out;
    for (std::size_t i = 0; i < lines.size();) {
        std::size_t j = i;
        while (j + 1 < lines.size() && lines[j + 1] == lines[j] + 1) ++j;
        if (!out.empty()) out += ", ";
        out += std::to_string(lines[i]);
        if (j > i) out += "-" + std::to_string(lines[j]);
        i = j + 1;
    }
    return out;
}

}  // namespace

CoverageVerdict judge_coverage(const std::string& counts_dir, const std::string& source) {
    CoverageVerdict v;
    // The counts, merged over the runner processes: (module, offset) -> counts.
    std::map<std::string, std::map<unsigned long long, Counts>> counted;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(counts_dir, ec)) {
        if (e.path().extension() != ".cov") continue;
        std::ifstream in(e.path());
        std::string line;
        while (std::getline(in, line)) {
            if (line.rfind("launch-blocks ", 0) == 0) {
                v.most_blocks = std::max(v.most_blocks, std::stoull(line.substr(14)));
                continue;
            }
            std::istringstream fields(line);
            std::string module, offset;
            unsigned long long runs = 0;
            unsigned most = 0, blocks = 0;
            if (!std::getline(fields, module, '\t') || !std::getline(fields, offset, '\t') ||
                !(fields >> runs >> most >> blocks))
                continue;
            Counts& c = counted[module][std::stoull(offset, nullptr, 16)];
            c.runs += runs;
            c.most_in_thread = std::max(c.most_in_thread, most);
        }
    }
    if (counted.empty()) {
        v.error = "the hazard cases ran no checked kernel (no counts in " + counts_dir + ")";
        return v;
    }
    const std::string wanted = fs::weakly_canonical(source, ec).string();
    // Per line of the source: whether it has device code, and its best counts.
    std::map<int, Counts> lines;
    for (const auto& [module, points] : counted) {
        // Every call of the hook: the address after it (what the hook saw) and its function.
        const std::string dump =
            tool_output({"objdump", "-d", "--no-show-raw-insn", module}, v.error);
        if (!v.error.empty()) return v;
        static const std::regex function(R"(^([0-9a-f]+) <(.*)>:$)");
        static const std::regex instruction(R"(^\s+([0-9a-f]+):\s)");
        std::vector<std::pair<unsigned long long, std::string>> calls;  // return address, function
        std::string current;
        bool after_call = false;
        std::istringstream text(dump);
        std::string line;
        std::smatch m;
        while (std::getline(text, line)) {
            if (std::regex_match(line, m, function)) {
                current = m[2];
                after_call = false;
                continue;
            }
            if (!std::regex_search(line, m, instruction)) continue;
            if (after_call) calls.push_back({std::stoull(m[1], nullptr, 16), current});
            after_call = line.find("call") != std::string::npos &&
                         line.find("<__sanitizer_cov_trace_pc") != std::string::npos;
        }
        // Device code: the functions of which some block ran inside a kernel.
        std::set<std::string> device;
        for (const auto& [address, fn] : calls)
            if (points.count(address)) device.insert(fn);
        std::vector<unsigned long long> addresses;
        for (const auto& [address, fn] : calls)
            if (device.count(fn)) addresses.push_back(address);
        // Their lines: the innermost frame of the call (the address before the return address).
        for (std::size_t first = 0; first < addresses.size(); first += 1000) {
            std::vector<std::string> argv{"addr2line", "-e", module, "-a", "-i"};
            const std::size_t last = std::min(addresses.size(), first + 1000);
            for (std::size_t i = first; i < last; ++i) argv.push_back(hex(addresses[i] - 1));
            const std::string out = tool_output(argv, v.error);
            if (!v.error.empty()) return v;
            std::istringstream groups(out);
            std::size_t index = first - 1;
            bool innermost = false;
            while (std::getline(groups, line)) {
                if (line.rfind("0x", 0) == 0) {
                    ++index;
                    innermost = true;
                    continue;
                }
                if (!innermost || index >= last) continue;
                innermost = false;
                line = line.substr(0, line.find(" (discriminator"));
                const auto colon = line.rfind(':');
                if (colon == std::string::npos) continue;
                const int number = std::atoi(line.c_str() + colon + 1);
                if (number <= 0 ||
                    fs::weakly_canonical(line.substr(0, colon), ec).string() != wanted)
                    continue;
                Counts& best = lines[number];
                auto it = points.find(addresses[index]);
                if (it == points.end()) continue;
                best.runs += it->second.runs;
                best.most_in_thread = std::max(best.most_in_thread, it->second.most_in_thread);
            }
        }
    }
    bool read = false;
    const std::string text = read_file(source, &read);
    if (!read) {
        v.error = "cannot read " + source;
        return v;
    }
    std::vector<std::string> source_lines;
    {
        std::istringstream in(text);
        std::string line;
        while (std::getline(in, line)) source_lines.push_back(line);
    }
    static const std::regex marker(R"(dev:\s*not covered\s*(\((.*)\))?)");
    // The mark is on the line, or in the comment lines right above it (past `#pragma`s).
    static const std::regex comment_or_pragma(R"(^\s*(//|#\s*pragma))");
    auto exemption = [&](int line) -> std::optional<std::string> {
        for (int at = line; at >= 1 && at <= int(source_lines.size()); --at) {
            std::smatch m;
            if (std::regex_search(source_lines[at - 1], m, marker))
                return m[2].matched ? m[2].str() : std::string("no reason given");
            if (at > 1 && !std::regex_search(source_lines[at - 2], comment_or_pragma)) break;
        }
        return std::nullopt;
    };
    // A launch (`<<<`) runs the kernel from a lambda the rewriter makes at its line: host code.
    // A line of braces alone holds no statement, only the compiler's own blocks (a function's
    // clean-up for an exception, which never comes).
    {
        const std::string code = code_only(text);
        std::istringstream in(code);
        std::string line;
        for (int number = 1; std::getline(in, line); ++number) {
            const bool statement = std::any_of(line.begin(), line.end(), [](char c) {
                return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
            });
            if (!statement) lines.erase(number);
        }
        // Every line of a launch's statement (`kernel<T>\n<<<grid, block>>>(args);`).
        for (std::size_t at = code.find("<<<"); at != std::string::npos;
             at = code.find("<<<", at + 3)) {
            std::size_t begin = code.find_last_of(";{}", at);
            begin = begin == std::string::npos ? 0 : begin + 1;
            const std::size_t end = std::min(code.size(), code.find(';', at));
            const int first = 1 + int(std::count(code.begin(), code.begin() + begin, '\n'));
            const int last = 1 + int(std::count(code.begin(), code.begin() + end, '\n'));
            for (int number = first; number <= last; ++number) lines.erase(number);
        }
    }
    std::vector<int> never_run;
    for (const auto& [line, c] : lines) {
        if (auto why = exemption(line)) {
            v.exempt.push_back("line " + std::to_string(line) + ": " + *why);
            continue;
        }
        ++v.device_lines;
        if (c.runs > 0)
            ++v.lines_run;
        else
            never_run.push_back(line);
    }
    if (!never_run.empty())
        v.problems.push_back(
            std::string(never_run.size() == 1 ? "line " : "lines ") + ranges(never_run) +
            " of device code never ran in the hazard cases (a race there would go unseen): add "
            "a case that runs " +
            (never_run.size() == 1 ? "it" : "them") +
            ", or mark the line `// dev: not covered (why)`");
    if (v.most_blocks < 2)
        v.problems.push_back(
            "no launch of the hazard cases has two CUDA blocks or more (a race between blocks "
            "would go unseen)");
    for (const auto& loop : find_loops(text)) {
        unsigned most = 0;
        bool device = false;
        for (int line : loop.own_lines) {
            auto it = lines.find(line);
            if (it == lines.end()) continue;
            device = true;
            most = std::max(most, it->second.most_in_thread);
        }
        if (!device) continue;
        if (auto why = exemption(loop.header)) {
            const std::string entry = "line " + std::to_string(loop.header) + ": " + *why;
            if (std::find(v.exempt.begin(), v.exempt.end(), entry) == v.exempt.end())
                v.exempt.push_back(entry);
            continue;
        }
        if (most >= 2) continue;
        // A body that never ran at all is already named above.
        bool ran = most > 0;
        if (ran)
            v.problems.push_back(
                "the loop at line " + std::to_string(loop.header) +
                " never ran its body twice in one CUDA thread in the hazard cases (a race "
                "between its rounds would go unseen): add a case where a thread loops twice, or "
                "mark the loop's line `// dev: not covered (why)`");
    }
    return v;
}

}  // namespace cudalings
