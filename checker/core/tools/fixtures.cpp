#include "fixtures.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "hash.h"

namespace fs = std::filesystem;

namespace cudalings {
namespace {

const std::vector<std::string>& known_keys() {
    // clang-format off
    static const std::vector<std::string> keys{
        "expect", "step", "emulated", "emulated-detail", "emulated-advice", "reason",
        "reason-emulated", "flags", "needs", "timing", "setup", "in-process",
        "in-process-emulated", "in-process-timed", "timed", "base"};
    // clang-format on
    return keys;
}

bool starts_with(const std::string& s, const std::string& prefix) {
    return s.compare(0, prefix.size(), prefix) == 0;
}

// The lines of a text, each with its newline (the last one without, where the text ends
// without one).
std::vector<std::string> split_lines(const std::string& text) {
    std::vector<std::string> lines;
    std::size_t at = 0;
    while (at < text.size()) {
        const std::size_t nl = text.find('\n', at);
        const std::size_t end = nl == std::string::npos ? text.size() : nl + 1;
        lines.push_back(text.substr(at, end - at));
        at = end;
    }
    return lines;
}

std::string without_newline(const std::string& line) {
    return !line.empty() && line.back() == '\n' ? line.substr(0, line.size() - 1) : line;
}

bool is_base_line(const std::string& line) { return starts_with(line, "// base: "); }

// The first step of a lesson: its skeletons' numbered files, in order.
std::string first_step(const std::string& root, const std::string& lesson) {
    std::vector<std::string> steps;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(fs::path(root) / "lessons" / lesson, ec)) {
        const std::string name = e.path().filename().string();
        if (e.path().extension() == ".cu" && !name.empty() &&
            std::isdigit(static_cast<unsigned char>(name[0])))
            steps.push_back(name);
    }
    std::sort(steps.begin(), steps.end());
    return steps.empty() ? "" : lesson + "/" + steps.front();
}

// Where a path lies: its kind, lesson, and the course root above it ("" when none).
struct Place {
    FixtureKind kind = FixtureKind::fixture;
    std::string lesson;
    std::string root;
};

Place place_of(const std::string& path) {
    Place p;
    std::error_code ec;
    fs::path f = fs::absolute(fs::path(path), ec).lexically_normal();
    const fs::path dir = f.parent_path();
    auto name = [](const fs::path& x) { return x.filename().string(); };
    if ((name(dir) == "fixtures" || name(dir) == "corpus") &&
        name(dir.parent_path().parent_path()) == "checks") {
        p.kind = name(dir) == "fixtures" ? FixtureKind::fixture : FixtureKind::corpus;
        p.lesson = name(dir.parent_path());
        p.root = dir.parent_path().parent_path().parent_path().string();
    } else if (starts_with(name(dir), "hostile") && name(dir.parent_path()) == "grading" &&
               name(dir.parent_path().parent_path()) == "tests") {
        p.kind = FixtureKind::hostile;
        p.root = dir.parent_path().parent_path().parent_path().string();
    }
    return p;
}

struct Hunk {
    int old_start = 0, old_count = 0, new_start = 0, new_count = 0;
    std::string head;                 // the @@ line
    std::vector<std::string> before;  // context and removed lines, with their newlines
    std::vector<std::string> after;   // context and added lines
};

bool parse_range(const std::string& text, int& start, int& count) {
    static const std::regex range(R"((\d+)(?:,(\d+))?)");
    std::smatch m;
    if (!std::regex_match(text, m, range)) return false;
    start = std::stoi(m[1]);
    count = m[2].matched ? std::stoi(m[2]) : 1;
    return true;
}

// The hunks of a unified diff (after its --- and +++ lines).
bool parse_hunks(const std::vector<std::string>& lines, std::size_t from, std::vector<Hunk>& hunks,
                 std::string* why) {
    static const std::regex head(R"(^@@ -(\S+) \+(\S+) @@.*$)");
    std::size_t i = from;
    while (i < lines.size()) {
        const std::string line = without_newline(lines[i]);
        std::smatch m;
        Hunk h;
        h.head = line;
        const std::string name = "hunk " + std::to_string(hunks.size() + 1);
        if (!std::regex_match(line, m, head) || !parse_range(m[1], h.old_start, h.old_count) ||
            !parse_range(m[2], h.new_start, h.new_count)) {
            *why = "line " + std::to_string(i + 1) +
                   " of the patch is no hunk's \"@@ -a,b +c,d @@\"" + " line: \"" + line + "\"";
            return false;
        }
        ++i;
        int old_left = h.old_count, new_left = h.new_count;
        char last = 0;
        while (i < lines.size() && (old_left > 0 || new_left > 0 || starts_with(lines[i], "\\"))) {
            const std::string& l = lines[i];
            // An empty line is an empty context line whose leading space an editor took away.
            const char tag = l.empty() || l == "\n" ? ' ' : l[0];
            const std::string content = l.empty() || l == "\n" ? "\n" : l.substr(1);
            if (tag == '\\') {  // "\ No newline at end of file": the line before has none
                auto strip = [](std::vector<std::string>& v) {
                    if (!v.empty() && !v.back().empty() && v.back().back() == '\n')
                        v.back().pop_back();
                };
                if (last == ' ' || last == '-') strip(h.before);
                if (last == ' ' || last == '+') strip(h.after);
                ++i;
                continue;
            }
            if (tag == ' ' && old_left > 0 && new_left > 0) {
                h.before.push_back(content);
                h.after.push_back(content);
                --old_left;
                --new_left;
            } else if (tag == '-' && old_left > 0) {
                h.before.push_back(content);
                --old_left;
            } else if (tag == '+' && new_left > 0) {
                h.after.push_back(content);
                --new_left;
            } else {
                *why = name + " (" + h.head + "): line " + std::to_string(i + 1) +
                       " of the patch does not fit its counts: \"" + without_newline(l) + "\"";
                return false;
            }
            last = tag;
            ++i;
        }
        if (old_left > 0 || new_left > 0) {
            *why = name + " (" + h.head + ") ends before its counts say (" +
                   std::to_string(old_left) + " old and " + std::to_string(new_left) +
                   " new lines missing)";
            return false;
        }
        hunks.push_back(std::move(h));
    }
    return true;
}

bool matches_at(const std::vector<std::string>& base, const std::vector<std::string>& want,
                std::size_t at) {
    if (at + want.size() > base.size()) return false;
    for (std::size_t k = 0; k < want.size(); ++k)
        if (base[at + k] != want[k]) return false;
    return true;
}

std::string shown(const std::string& line) {
    std::string s = without_newline(line);
    if (s.size() > 100) s = s.substr(0, 100) + "...";
    return "\"" + s + "\"";
}

std::string range_text(int start, int count) {
    return count == 1 ? std::to_string(start) : std::to_string(start) + "," + std::to_string(count);
}

}  // namespace

const char* to_string(FixtureKind kind) {
    switch (kind) {
        case FixtureKind::fixture:
            return "fixture";
        case FixtureKind::corpus:
            return "corpus";
        case FixtureKind::hostile:
            return "hostile";
    }
    return "fixture";
}

const char* to_string(FixtureForm form) { return form == FixtureForm::patch ? "patch" : "whole"; }

bool parse_fixture_kind(const std::string& text, FixtureKind& kind) {
    for (auto k : {FixtureKind::fixture, FixtureKind::corpus, FixtureKind::hostile})
        if (text == to_string(k)) {
            kind = k;
            return true;
        }
    return false;
}

std::string fixture_course_root(const std::string& path) { return place_of(path).root; }

std::string file_body(const std::string& text, int* header_lines) {
    std::size_t at = 0;
    int n = 0;
    while (at < text.size() && text.compare(at, 2, "//") == 0) {
        const std::size_t nl = text.find('\n', at);
        at = nl == std::string::npos ? text.size() : nl + 1;
        ++n;
    }
    if (header_lines) *header_lines = n;
    return text.substr(at);
}

Fixture parse_fixture(const std::string& path, const std::string& text, const std::string& root) {
    Fixture f;
    f.path = path;
    f.text = text;
    f.name = fs::path(path).stem().string();
    const Place place = place_of(path);
    f.kind = place.kind;
    f.lesson = place.lesson;
    const std::string course = root.empty() ? place.root : root;
    std::error_code ec;
    const fs::path abs = fs::absolute(fs::path(path), ec).lexically_normal();
    const fs::path rel =
        course.empty()
            ? fs::path()
            : abs.lexically_relative(fs::absolute(fs::path(course), ec).lexically_normal());
    f.rel = !rel.empty() && !starts_with(rel.string(), "..") ? rel.generic_string() : path;
    f.body = file_body(text);
    f.header = text.substr(0, text.size() - f.body.size());
    f.form = starts_with(f.body, "--- ") ? FixtureForm::patch : FixtureForm::whole;

    static const std::regex key_line(R"(^// ([a-z][a-z-]*): (.*)$)");
    static const std::regex blank(R"(^//\s*$)");
    FixtureHeader& h = f.keys;
    bool prose = false;  // after the header's first blank `//` line
    for (const auto& raw : split_lines(f.header)) {
        const std::string line = without_newline(raw);
        if (std::regex_match(line, blank)) prose = true;
        std::smatch m;
        if (!std::regex_match(line, m, key_line)) continue;
        const std::string key = m[1], value = m[2];
        if (std::find(known_keys().begin(), known_keys().end(), key) == known_keys().end()) {
            if (!prose) h.unknown.push_back(key);
            continue;
        }
        h.keys.emplace_back(key, value);
        if (key == "expect") h.expect = value;
        if (key == "emulated") h.emulated = value;
        if (key == "emulated-detail") h.emulated_detail = value;
        if (key == "emulated-advice") h.emulated_advice = value;
        if (key == "reason") h.reason = value;
        if (key == "reason-emulated") h.reason_emulated = value;
        if (key == "step") h.step = value;
        if (key == "flags") h.flags_text = value;
        if (key == "needs") h.needs = value;
        if (key == "timing") h.timing = value;
        if (key == "setup") h.setup = value;
        if (key == "in-process") h.in_process = value;
        if (key == "in-process-emulated") h.in_process_emulated = value;
        if (key == "in-process-timed") h.in_process_timed = value;
        if (key == "timed") h.timed = value;
        if (key == "base") h.base = value;
    }
    std::istringstream words(h.flags_text);
    for (std::string w; words >> w;) h.flags.push_back(w);
    if (h.step.empty() && !f.lesson.empty() && !course.empty()) {
        // default: the first step of the lesson the file belongs to
        h.step = first_step(course, f.lesson);
        h.step_defaulted = !h.step.empty();
    }
    if (h.base.empty() && !h.step.empty()) h.base = "solutions/" + h.step;
    return f;
}

Fixture read_fixture(const std::string& path, const std::string& root) {
    bool ok = false;
    const std::string text = read_file(path, &ok);
    Fixture f = parse_fixture(path, ok ? text : "", root);
    if (!ok) f.error = "cannot read " + path;
    return f;
}

bool apply_patch(const std::string& base, const std::string& patch, const std::string& base_name,
                 int base_first_line, std::string* out, std::string* why) {
    const std::vector<std::string> lines = split_lines(patch);
    if (lines.size() < 2 || !starts_with(lines[0], "--- ") || !starts_with(lines[1], "+++ ")) {
        *why = "the patch does not start with its \"--- \" and \"+++ \" lines";
        return false;
    }
    std::vector<Hunk> hunks;
    if (!parse_hunks(lines, 2, hunks, why)) return false;
    const std::vector<std::string> old = split_lines(base);
    std::string result;
    std::size_t done = 0;  // base lines already copied or replaced
    long offset = 0;       // how far from where it said the hunk before was found
    for (std::size_t n = 0; n < hunks.size(); ++n) {
        const Hunk& h = hunks[n];
        const std::string name = "hunk " + std::to_string(n + 1) + " (" + h.head + ")";
        // Where it says it goes (a hunk that removes nothing names the line before it), moved
        // as far as the hunk before was.
        const long said = (h.old_count == 0 ? h.old_start : h.old_start - 1) + offset;
        long found = -1;
        const long last = static_cast<long>(old.size()) - static_cast<long>(h.before.size());
        for (long d = 0; found < 0; ++d) {
            const long lo = said - d, hi = said + d;
            if (lo < static_cast<long>(done) && hi > last) break;
            if (lo >= static_cast<long>(done) && lo <= last &&
                matches_at(old, h.before, static_cast<std::size_t>(lo)))
                found = lo;
            else if (d > 0 && hi >= static_cast<long>(done) && hi <= last &&
                     matches_at(old, h.before, static_cast<std::size_t>(hi)))
                found = hi;
        }
        if (found < 0) {
            // The first line that differs where the hunk says it goes.
            const long at = std::max<long>(said, static_cast<long>(done));
            std::string detail = "the base ends before it";
            for (std::size_t k = 0; k < h.before.size(); ++k) {
                const std::size_t i = static_cast<std::size_t>(at) + k;
                if (i >= old.size()) break;
                if (old[i] != h.before[k]) {
                    detail = "line " + std::to_string(base_first_line + static_cast<long>(i)) +
                             " of " + base_name + " differs: the patch has " + shown(h.before[k]) +
                             ", the base " + shown(old[i]);
                    break;
                }
            }
            *why = name + " does not apply (nowhere in the base, no fuzz): " + detail;
            return false;
        }
        for (std::size_t i = done; i < static_cast<std::size_t>(found); ++i) result += old[i];
        for (const auto& l : h.after) result += l;
        done = static_cast<std::size_t>(found) + h.before.size();
        offset += found - said;
    }
    for (std::size_t i = done; i < old.size(); ++i) result += old[i];
    *out = result;
    return true;
}

std::string unified_diff(const std::string& before, const std::string& after,
                         const std::string& from_label, const std::string& to_label) {
    const std::vector<std::string> a = split_lines(before), b = split_lines(after);
    // The common ends first, then the longest common subsequence of what lies between.
    std::size_t pre = 0;
    while (pre < a.size() && pre < b.size() && a[pre] == b[pre]) ++pre;
    std::size_t suf = 0;
    while (suf < a.size() - pre && suf < b.size() - pre &&
           a[a.size() - 1 - suf] == b[b.size() - 1 - suf])
        ++suf;
    const std::size_t n = a.size() - pre - suf, m = b.size() - pre - suf;
    std::vector<std::vector<int>> lcs(n + 1, std::vector<int>(m + 1, 0));
    for (std::size_t i = n; i-- > 0;)
        for (std::size_t j = m; j-- > 0;)
            lcs[i][j] = a[pre + i] == b[pre + j] ? lcs[i + 1][j + 1] + 1
                                                 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
    // The edit script: ' ' both, '-' a only, '+' b only; with each line's index in a and b.
    struct Op {
        char tag;
        std::size_t ai, bi;
    };
    std::vector<Op> ops;
    for (std::size_t k = 0; k < pre; ++k) ops.push_back({' ', k, k});
    std::size_t i = 0, j = 0;
    while (i < n || j < m) {
        if (i < n && j < m && a[pre + i] == b[pre + j]) {
            ops.push_back({' ', pre + i, pre + j});
            ++i, ++j;
        } else if (i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1])) {
            ops.push_back({'-', pre + i, pre + j});  // removals first, as diff -u shows them
            ++i;
        } else {
            ops.push_back({'+', pre + i, pre + j});
            ++j;
        }
    }
    for (std::size_t k = 0; k < suf; ++k)
        ops.push_back({' ', a.size() - suf + k, b.size() - suf + k});
    // Hunks: each change with 3 lines of context, joined where their contexts meet.
    const std::size_t context = 3;
    std::vector<std::pair<std::size_t, std::size_t>> spans;  // [first op, last op + 1)
    for (std::size_t k = 0; k < ops.size(); ++k) {
        if (ops[k].tag == ' ') continue;
        const std::size_t lo = k >= context ? k - context : 0;
        std::size_t end = k + 1;
        while (end < ops.size() && ops[end].tag != ' ') ++end;
        const std::size_t hi = std::min(ops.size(), end + context);
        if (!spans.empty() && lo <= spans.back().second)
            spans.back().second = hi;
        else
            spans.emplace_back(lo, hi);
        k = end - 1;
    }
    if (spans.empty()) return "";
    std::string out = "--- " + from_label + "\n+++ " + to_label + "\n";
    for (const auto& [lo, hi] : spans) {
        int old_count = 0, new_count = 0;
        for (std::size_t k = lo; k < hi; ++k) {
            if (ops[k].tag != '+') ++old_count;
            if (ops[k].tag != '-') ++new_count;
        }
        // diff -u's numbering: a range of no lines names the line before it.
        const int old_start = static_cast<int>(ops[lo].ai) + (old_count ? 1 : 0);
        const int new_start = static_cast<int>(ops[lo].bi) + (new_count ? 1 : 0);
        out += "@@ -" + range_text(old_start, old_count) + " +" + range_text(new_start, new_count) +
               " @@\n";
        for (std::size_t k = lo; k < hi; ++k) {
            const std::string& line = ops[k].tag == '+' ? b[ops[k].bi] : a[ops[k].ai];
            out += ops[k].tag;
            out += line;
            if (line.empty() || line.back() != '\n') out += "\n\\ No newline at end of file\n";
        }
    }
    return out;
}

bool materialise(const Fixture& fixture, const std::string& root, std::string* text,
                 std::string* why) {
    if (!fixture.error.empty()) {
        *why = fixture.error;
        return false;
    }
    if (fixture.form == FixtureForm::whole) {
        *text = fixture.text;
        return true;
    }
    const std::string& base = fixture.keys.base;
    if (base.empty()) {
        *why = "a patch needs a base: the header names no step and no \"base:\"";
        return false;
    }
    const std::string label = without_newline(split_lines(fixture.body).front()).substr(4);
    if (label.substr(0, label.find('\t')) != base) {
        *why = "the patch's \"--- " + label + "\" line does not name its base, " + base;
        return false;
    }
    const std::string course = root.empty() ? fixture_course_root(fixture.path) : root;
    bool ok = false;
    const std::string base_text = read_file((fs::path(course) / base).string(), &ok);
    if (!ok) {
        *why = "its base " + base + " cannot be read";
        return false;
    }
    int header_lines = 0;
    const std::string body = file_body(base_text, &header_lines);
    std::string patched, problem;
    if (!apply_patch(body, fixture.body, base, header_lines + 1, &patched, &problem)) {
        *why = "the patch no longer applies to " + base + ": " + problem;
        return false;
    }
    std::string header;
    for (const auto& line : split_lines(fixture.header))
        if (!is_base_line(line)) header += line;
    *text = header + patched;
    return true;
}

bool rediff_fixture(const std::string& fixture_path, const std::string& edited,
                    const std::string& root, const std::string& base_arg, std::string* text,
                    std::string* why) {
    const Fixture want = parse_fixture(fixture_path, edited, root);
    const std::string course = root.empty() ? fixture_course_root(fixture_path) : root;
    std::string base = base_arg;
    if (base.empty()) {
        // the edited file's `base:`, else the stored fixture's, else the step's solution
        for (const auto& [key, value] : want.keys.keys)
            if (key == "base") base = value;
        if (base.empty()) {
            const Fixture stored = read_fixture(fixture_path, root);
            if (stored.error.empty())
                for (const auto& [key, value] : stored.keys.keys)
                    if (key == "base") base = value;
        }
        if (base.empty()) base = want.keys.base;
    }
    if (base.empty()) {
        *why = "the fixture names no step (and no base was given)";
        return false;
    }
    bool ok = false;
    const std::string base_text = read_file((fs::path(course) / base).string(), &ok);
    if (!ok) {
        *why = "its base " + base + " cannot be read";
        return false;
    }
    std::string header;
    for (const auto& line : split_lines(want.header))
        if (!is_base_line(line)) header += line;
    const std::string expected = header + want.body;
    if (want.keys.step.empty() || base != "solutions/" + want.keys.step)
        header += "// base: " + base + "\n";
    std::string diff = unified_diff(file_body(base_text), want.body, base, want.rel);
    if (diff.empty()) diff = "--- " + base + "\n+++ " + want.rel + "\n";
    *text = header + diff;
    // What it stands for must be what was asked for.
    const Fixture made = parse_fixture(fixture_path, *text, root);
    std::string back, problem;
    if (made.form != FixtureForm::patch || !materialise(made, course, &back, &problem)) {
        *why = "the patch made does not apply: " + problem;
        return false;
    }
    if (back != expected) {
        *why = "the patch made does not give the file back (a bug of the differ)";
        return false;
    }
    return true;
}

std::vector<std::string> fixture_files(const std::string& root, FixtureKind kind,
                                       const std::string& lesson) {
    std::vector<fs::path> dirs;
    std::error_code ec;
    const fs::path r(root);
    auto wanted = [&](const fs::path& dir) {
        return lesson.empty() || dir.filename().string() == lesson;
    };
    if (kind == FixtureKind::fixture || kind == FixtureKind::corpus) {
        const char* sub = kind == FixtureKind::fixture ? "fixtures" : "corpus";
        for (const auto& e : fs::directory_iterator(r / "checks", ec))
            if (wanted(e.path()) && fs::is_directory(e.path() / sub))
                dirs.push_back(e.path() / sub);
    } else {
        for (const char* d : {"tests/grading/hostile", "tests/grading/hostile_split"})
            if (fs::is_directory(r / d)) dirs.push_back(r / d);
    }
    std::vector<std::string> files;
    for (const auto& dir : dirs)
        for (const auto& e : fs::directory_iterator(dir, ec))
            if (e.path().extension() == ".cu" && e.is_regular_file())
                files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    return files;
}

FixtureListing list_fixtures(const std::string& root, const std::vector<FixtureKind>& kinds,
                             const std::vector<std::string>& filters,
                             const std::string& write_dir) {
    FixtureListing listing;
    for (const auto kind : kinds)
        for (const auto& path : fixture_files(root, kind)) {
            ListedFixture entry{read_fixture(path, root), ""};
            const Fixture& f = entry.fixture;
            if (!filters.empty() &&
                std::none_of(filters.begin(), filters.end(), [&](const std::string& x) {
                    return f.rel.find(x) != std::string::npos;
                }))
                continue;
            std::string text, why;
            if (!materialise(f, root, &text, &why)) {
                listing.errors.emplace_back(f.rel, why);
                continue;
            }
            if (!write_dir.empty()) {
                const fs::path out = fs::path(write_dir) / f.rel;
                std::error_code ec;
                fs::create_directories(out.parent_path(), ec);
                std::ofstream file(out, std::ios::binary);
                file << text;
                if (!file.flush()) {
                    listing.errors.emplace_back(f.rel, "cannot write " + out.string());
                    continue;
                }
                entry.file = fs::absolute(out, ec).string();
            }
            listing.fixtures.push_back(std::move(entry));
        }
    return listing;
}

nlohmann::json to_json(const FixtureListing& listing) {
    nlohmann::json list = nlohmann::json::array(), errors = nlohmann::json::array();
    for (const auto& [f, file] : listing.fixtures) {
        const FixtureHeader& h = f.keys;
        nlohmann::json j{{"path", f.rel},
                         {"name", f.name},
                         {"lesson", f.lesson},
                         {"kind", to_string(f.kind)},
                         {"form", to_string(f.form)},
                         {"step", h.step},
                         {"base", f.form == FixtureForm::patch ? h.base : ""},
                         {"expect", h.expect},
                         {"emulated", h.emulated},
                         {"reason", h.reason},
                         {"reason_emulated", h.reason_emulated},
                         {"emulated_detail", h.emulated_detail},
                         {"emulated_advice", h.emulated_advice},
                         {"flags", h.flags},
                         {"needs", h.needs},
                         {"timing", h.timing},
                         {"setup", h.setup},
                         {"in_process", h.in_process},
                         {"in_process_emulated", h.in_process_emulated},
                         {"in_process_timed", h.in_process_timed},
                         {"timed", h.timed}};
        if (!file.empty()) j["file"] = file;
        list.push_back(std::move(j));
    }
    for (const auto& [path, message] : listing.errors)
        errors.push_back({{"path", path}, {"message", message}});
    return {{"fixtures", list}, {"errors", errors}};
}

}  // namespace cudalings
