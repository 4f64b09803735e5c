#include "generated.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "course.h"
#include "hash.h"
#include "supervise.h"
#include "text.h"

namespace fs = std::filesystem;

namespace cudalings {
namespace {

constexpr const char* kStoredKind = "cudalings results, trimmed by `cudalings dev update`";
constexpr const char* kRecordScript = "cmake/CudalingsPristineRecord.cmake";
constexpr const char* kRecord = "cmake/pristine-lessons.sha256";

std::string decimals(double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

// A Markdown table cell: the text with its pipes escaped.
std::string markdown_cell(const std::string& text) {
    std::string out;
    for (char c : text) {
        if (c == '|') out += '\\';
        out += c;
    }
    return out;
}

// `text` in lines of at most `width` columns, broken at spaces (a longer word stands alone).
std::string wrapped(const std::string& text, std::size_t width = 100) {
    std::string out, line, word;
    std::istringstream words(text);
    while (words >> word) {
        if (!line.empty() && display_width(line) + 1 + display_width(word) > width) {
            out += line + "\n";
            line.clear();
        }
        line += (line.empty() ? "" : " ") + word;
    }
    return out + line + (line.empty() ? "" : "\n");
}

std::vector<std::string> comma_list(const std::string& text) {
    std::vector<std::string> out;
    std::stringstream s(text);
    std::string item;
    while (std::getline(s, item, ','))
        if (!item.empty()) out.push_back(item);
    return out;
}

}  // namespace

// ---- regions -------------------------------------------------------------------------------

std::string Region::attribute(const std::string& key) const {
    for (const auto& [k, v] : attributes)
        if (k == key) return v;
    return {};
}

void Region::set(const std::string& key, const std::string& value) {
    for (auto& [k, v] : attributes)
        if (k == key) {
            v = value;
            return;
        }
    attributes.emplace_back(key, value);
}

bool find_regions(const std::string& text, std::vector<Region>& regions, std::string& error) {
    regions.clear();
    static const std::regex open_line(R"(^<!-- cudalings:([a-z-]+)((?: [a-z_]+="[^"]*")*) -->$)");
    static const std::regex close_line(R"(^<!-- /cudalings:([a-z-]+) -->$)");
    static const std::regex attribute(R"re( ([a-z_]+)="([^"]*)")re");
    std::size_t at = 0;
    int line_number = 0;
    bool inside = false;
    Region current;
    while (at < text.size()) {
        const std::size_t eol = text.find('\n', at);
        const std::size_t next = eol == std::string::npos ? text.size() : eol + 1;
        const std::string line =
            text.substr(at, (eol == std::string::npos ? text.size() : eol) - at);
        ++line_number;
        const auto where = "line " + std::to_string(line_number) + ": ";
        std::smatch m;
        if (line.rfind("<!-- cudalings:", 0) == 0) {
            if (!std::regex_match(line, m, open_line)) {
                error = where + "a malformed region marker (<!-- cudalings:KIND key=\"value\" -->)";
                return false;
            }
            if (inside) {
                error =
                    where + "a region inside the region of line " + std::to_string(current.line);
                return false;
            }
            current = Region{};
            current.kind = m[1];
            const std::string attrs = m[2];
            for (auto it = std::sregex_iterator(attrs.begin(), attrs.end(), attribute);
                 it != std::sregex_iterator(); ++it)
                current.attributes.emplace_back((*it)[1], (*it)[2]);
            current.line = line_number;
            current.begin = at;
            current.body_begin = next;
            inside = true;
        } else if (line.rfind("<!-- /cudalings:", 0) == 0) {
            if (!std::regex_match(line, m, close_line)) {
                error = where + "a malformed end of region (<!-- /cudalings:KIND -->)";
                return false;
            }
            if (!inside || m[1] != current.kind) {
                error = where + "ends a " + m[1].str() + " region that is not open";
                return false;
            }
            current.body_end = at;
            current.end = next;
            regions.push_back(current);
            inside = false;
        }
        at = next;
    }
    if (inside) {
        error = "line " + std::to_string(current.line) + ": the " + current.kind +
                " region has no end (<!-- /cudalings:" + current.kind + " -->)";
        return false;
    }
    return true;
}

std::string opening_marker(const Region& r) {
    std::string s = "<!-- cudalings:" + r.kind;
    for (const auto& [k, v] : r.attributes) s += " " + k + "=\"" + v + "\"";
    return s + " -->";
}

// ---- results -------------------------------------------------------------------------------

const Staircase* StoredResults::find(const std::string& lesson) const {
    for (const auto& s : staircases)
        if (s.lesson == lesson) return &s;
    return nullptr;
}

nlohmann::json to_json(const StoredResults& s) {
    nlohmann::json stairs = nlohmann::json::array();
    for (const auto& st : s.staircases) {
        nlohmann::json rows = nlohmann::json::array();
        for (const auto& r : st.rows) {
            nlohmann::json cells = nlohmann::json::array();
            for (const auto& c : r.cells) {
                nlohmann::json cell{{"column", c.column},
                                    {"median_us", c.median_us},
                                    {"bytes", c.bytes},
                                    {"n", c.n},
                                    {"size", c.size}};
                if (c.fp32_ops > 0) cell["fp32_ops"] = c.fp32_ops;
                cells.push_back(cell);
            }
            nlohmann::json row{{"label", r.label}, {"problem", r.problem}, {"cells", cells}};
            if (r.title != r.label) row["title"] = r.title;
            if (r.baseline) row["baseline"] = true;
            rows.push_back(row);
        }
        nlohmann::json stair{{"lesson", st.lesson}, {"copy_gbps", st.copy_gbps}, {"rows", rows}};
        if (st.fp32_gflops > 0) stair["fp32_gflops"] = st.fp32_gflops;
        stairs.push_back(stair);
    }
    return {{"format_version", 1},
            {"kind", kStoredKind},
            {"run", to_json(s.run)},
            {"staircases", stairs}};
}

std::string stored_text(const StoredResults& s) {
    const nlohmann::json j = to_json(s);
    std::string out = "{\n";
    for (const char* key : {"format_version", "kind", "run"})
        out += "  \"" + std::string(key) + "\": " + j[key].dump() + ",\n";
    out += "  \"staircases\": [";
    const auto& stairs = j["staircases"];
    for (std::size_t i = 0; i < stairs.size(); ++i) {
        out += std::string(i ? "," : "") + "\n    {\"lesson\": " + stairs[i]["lesson"].dump() +
               ", \"copy_gbps\": " + stairs[i]["copy_gbps"].dump() +
               (stairs[i].contains("fp32_gflops")
                    ? ", \"fp32_gflops\": " + stairs[i]["fp32_gflops"].dump()
                    : "") +
               ", \"rows\": [";
        const auto& rows = stairs[i]["rows"];
        for (std::size_t k = 0; k < rows.size(); ++k)
            out += std::string(k ? "," : "") + "\n      " + rows[k].dump();
        out += "\n    ]}";
    }
    return out + "\n  ]\n}\n";
}

bool read_results(const nlohmann::json& j, const std::string& date, StoredResults& out,
                  bool& was_stored, std::string& error) {
    out = StoredResults{};
    if (!j.is_object() || !j.contains("staircases") || !j["staircases"].is_array()) {
        error = "not a results file (`cudalings --json check --all --solutions`, or a stored one)";
        return false;
    }
    was_stored = j.value("kind", "") == kStoredKind;
    if (j.contains("run")) out.run = run_record_from_json(j["run"]);
    if (!was_stored) {
        // check's output: the run record (older outputs have none), and what the results say.
        std::set<std::string> gpus;
        bool all_solutions = j.contains("results") && !j["results"].empty();
        for (const auto& r : j.value("results", nlohmann::json::array())) {
            const std::string gpu = r.value("gpu", "");
            if (!gpu.empty()) gpus.insert(gpu);
            const std::string step = r.value("step", "");
            const std::string lesson = step.substr(0, step.find('/'));
            if (r.value("file", "").find("solutions/" + lesson + "/") == std::string::npos)
                all_solutions = false;
        }
        if (gpus.size() > 1) {
            error = "the results come from several GPUs";
            return false;
        }
        if (out.run.gpu.empty() && !gpus.empty()) out.run.gpu = *gpus.begin();
        out.run.solutions = all_solutions;
        if (out.run.date.empty()) out.run.date = date;
    }
    for (const auto& s : j["staircases"]) out.staircases.push_back(staircase_from_json(s));
    if (out.run.copy_gbps <= 0 && !out.staircases.empty())
        out.run.copy_gbps = out.staircases.front().copy_gbps;
    static const std::regex day(R"(^\d\d\d\d-\d\d-\d\d$)");
    if (out.run.date.empty())
        error = "the file has no run record with its date: give the run's day (--date YYYY-MM-DD)";
    else if (!std::regex_match(out.run.date, day))
        error = "the run's date \"" + out.run.date + "\" is not YYYY-MM-DD";
    else if (out.run.gpu.empty() || out.run.gpu.rfind("none", 0) == 0)
        error = "the results do not come from a GPU (\"" + out.run.gpu + "\")";
    else if (!out.run.solutions)
        error = "the results are not of the reference solutions (check --all --solutions)";
    else if (out.staircases.empty())
        error = "the file has no staircase (a run with timing, every step of a lesson)";
    return error.empty();
}

bool load_results(const std::string& path, const std::string& date, StoredResults& out,
                  bool& was_stored, std::string& error) {
    bool ok = false;
    const std::string text = read_file(path, &ok);
    if (!ok) {
        error = "cannot read " + path;
        return false;
    }
    const auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded()) {
        error = path + " is not JSON";
        return false;
    }
    if (!read_results(j, date, out, was_stored, error)) {
        error = path + ": " + error;
        return false;
    }
    return true;
}

std::string results_name(const RunRecord& run) {
    std::string gpu = run.gpu;
    if (gpu.rfind("NVIDIA ", 0) == 0) gpu = gpu.substr(7);
    std::string slug;
    for (char c : gpu) {
        if (std::isalnum(static_cast<unsigned char>(c)))
            slug += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        else if (!slug.empty() && slug.back() != '-')
            slug += '-';
    }
    if (!slug.empty() && slug.back() == '-') slug.pop_back();
    return slug + "-" + run.date;
}

// ---- rendering -----------------------------------------------------------------------------

namespace {

// The figures a staircase region shows in each cell, from its attributes.
struct FigureChoice {
    std::vector<std::string> names;  // "time", "copy", "fp32", "previous", "against", in order
    std::string against;             // the row "against" compares with
};

struct FigureText {
    const char* name;
    const char* heading;  // its column heading when the table has one timed column
    const char* meaning;
};
constexpr FigureText kFigures[] = {
    {"time", "µs", "the median time"},
    {"copy", "% of copy", "the bytes the row must move over its time, as a share of the copy rate"},
    {"fp32", "% of FP32",
     "the FP32 operations the row must do over its time, as a share of the FP32 rate measured in "
     "the run"},
    {"previous", "× previous",
     "its rate over the rate of the previous row that moves the same bytes at the same size (– "
     "where none does)"},
    {"against", "% of ", "that row's time over this row's (– for a row of another problem)"},
};

const FigureText* figure_text(const std::string& name) {
    for (const auto& f : kFigures)
        if (name == f.name) return &f;
    return nullptr;
}

bool choose_figures(const Region& region, FigureChoice& f, std::string& error) {
    f.names = comma_list(region.attribute("figures"));
    if (f.names.empty()) f.names = {"time", "copy", "previous"};
    f.against = region.attribute("against");
    for (const auto& n : f.names)
        if (!figure_text(n)) {
            error = "figures=\"" + region.attribute("figures") + "\": \"" + n +
                    "\" is not time, copy, fp32, previous or against";
            return false;
        }
    const bool uses_against = std::find(f.names.begin(), f.names.end(), "against") != f.names.end();
    if (uses_against == f.against.empty()) {
        error = "figures with \"against\" need against=\"ROW\", and against=\"ROW\" needs it";
        return false;
    }
    return true;
}

std::string figure_heading(const FigureChoice& f, const std::string& name) {
    return name == "against" ? "% of " + f.against : figure_text(name)->heading;
}

// The two paragraphs above the table: the run, then what each figure means.
std::string staircase_preamble(const FigureChoice& f, const Staircase& st, const RunRecord& run,
                               const std::string& results, const std::string& link,
                               bool one_column) {
    std::string run_line = "Checker run on an " + run.gpu + ", " + run.date;
    if (!run.commit.empty()) run_line += ", commit " + run.commit;
    if (!run.cuda.empty()) run_line += ", CUDA " + run.cuda;
    run_line +=
        ": the reference solutions (`cudalings --json check --all --solutions`, stored "
        "in [" +
        results + "](" + link +
        ")); the copy rate measured in the run: " + decimals(st.copy_gbps, 0) + " GB/s" +
        (st.fp32_gflops > 0 ? ", the FP32 rate " + decimals(st.fp32_gflops / 1000, 1) + " TFLOP/s"
                            : "") +
        ".";
    std::string legend;
    for (const auto& n : f.names) {
        const std::string meaning = figure_text(n)->meaning;
        const std::string heading = figure_heading(f, n);
        if (one_column)
            legend += (legend.empty() ? "" : " ") + heading + ": " + meaning + ".";
        else
            legend += (legend.empty() ? "Each cell: " : "; ") +
                      (n == "time" ? meaning : heading + ", " + meaning);
    }
    return "\n" +
           wrapped(
               "<!-- generated by `cudalings dev update` from the results file named above: "
               "edit that, or the marker's attributes, never the text (dev check fails) -->") +
           "\n" + wrapped(run_line) + "\n" + wrapped(legend + (one_column ? "" : ".")) + "\n";
}

// The staircase as a Markdown table: one column per figure when the problem has one timed
// column, else one per timed column with the figures in each cell; a size column only when a
// column's size changes from row to row.
class StaircaseTable {
  public:
    StaircaseTable(const FigureChoice& f, const Staircase& st)
        : f_(f), j_(to_json(st)) {  // with the figures the checker derives
        for (const auto& r : st.rows)
            for (const auto& c : r.cells) {
                if (std::find(columns_.begin(), columns_.end(), c.column) == columns_.end())
                    columns_.push_back(c.column);
                sizes_[c.column].insert(c.size);
            }
        for (const auto& r : j_["rows"])
            if (r["label"] == f.against) against_ = &r;
        size_column_ = std::any_of(sizes_.begin(), sizes_.end(),
                                   [](const auto& kv) { return kv.second.size() > 1; });
    }
    bool one_column() const { return columns_.size() == 1; }
    bool has_against() const { return f_.against.empty() || against_; }

    std::string markdown() const {
        std::string head = "| step |", rule = "| --- |";
        for (const auto& h : one_column() ? headings() : columns_) {
            head += " " + markdown_cell(h) + " |";
            rule += " ---: |";
        }
        if (size_column_) head += " size |", rule += " --- |";
        std::string out = head + "\n" + rule + "\n";
        for (const auto& r : j_["rows"]) out += row(r);
        return out;
    }

  private:
    std::vector<std::string> headings() const {
        std::vector<std::string> h;
        for (const auto& n : f_.names) h.push_back(figure_heading(f_, n));
        return h;
    }

    // `problem`: the row's. "against" compares only rows of the same problem (a tile sort is no
    // full sort, sorting pairs is not sorting keys): "–" for the others.
    std::string figure(const std::string& name, const nlohmann::json& cell,
                       const std::string& problem) const {
        const double us = cell["median_us"].get<double>();
        if (name == "time") return decimals(us, 1);
        if (name == "copy") return decimals(cell["percent_of_copy"].get<double>(), 1) + "%";
        if (name == "fp32")
            return cell.contains("percent_of_fp32")
                       ? decimals(cell["percent_of_fp32"].get<double>(), 1) + "%"
                       : "–";
        if (name == "previous")
            return cell["vs_previous"].is_null()
                       ? "–"
                       : decimals(cell["vs_previous"].get<double>(), 2) + "×";
        if ((*against_).value("problem", "") != problem) return "–";
        for (const auto& c : (*against_)["cells"])
            if (c["column"] == cell["column"] && us > 0)
                return decimals(100 * c["median_us"].get<double>() / us, 1) + "%";
        return "–";
    }

    std::string row(const nlohmann::json& r) const {
        const std::string label = r["label"];
        const std::string problem = r.value("problem", "");
        std::string out =
            "| " + (r["baseline"].get<bool>() ? markdown_cell(r["title"].get<std::string>())
                                              : "`" + label + "`");
        std::vector<std::string> row_sizes;
        for (const auto& col : columns_) {
            const nlohmann::json* cell = nullptr;
            for (const auto& c : r["cells"])
                if (c["column"] == col) cell = &c;
            if (cell &&
                std::find(row_sizes.begin(), row_sizes.end(), (*cell)["size"]) == row_sizes.end())
                row_sizes.push_back((*cell)["size"]);
            if (one_column()) {
                for (const auto& n : f_.names)
                    out += " | " + (cell ? figure(n, *cell, problem) : "–");
                continue;
            }
            std::string text;
            for (const auto& n : f_.names)
                if (cell)
                    text += (text.empty() ? "" : ", ") + figure(n, *cell, problem) +
                            (n == "time" ? " µs" : "");
            out += " | " + (cell ? text : "–");
        }
        if (size_column_) {
            std::string text;
            for (const auto& z : row_sizes) text += (text.empty() ? "" : ", ") + z;
            out += " | " + markdown_cell(text);
        }
        return out + " |\n";
    }

    const FigureChoice& f_;
    nlohmann::json j_;
    std::vector<std::string> columns_;
    std::map<std::string, std::set<std::string>> sizes_;
    const nlohmann::json* against_ = nullptr;
    bool size_column_ = false;
};

}  // namespace

bool render_staircase_region(const Region& region, const Staircase& st, const RunRecord& run,
                             const std::string& results, const std::string& link, std::string& body,
                             std::string& error) {
    FigureChoice f;
    if (!choose_figures(region, f, error)) return false;
    const StaircaseTable table(f, st);
    if (!table.has_against()) {
        error = "against=\"" + f.against + "\" is no row of the staircase of " + st.lesson;
        return false;
    }
    body =
        staircase_preamble(f, st, run, results, link, table.one_column()) + table.markdown() + "\n";
    return true;
}

std::string render_course_table(const Manifest& m) {
    std::ostringstream s;
    s << "\n"
      << wrapped(
             "<!-- generated by `cudalings dev update` from course.json and each lesson's "
             "checks/NN_topic/lesson.json (\"summary\"): edit those, never the table -->")
      << "\n";
    s << "| lesson | what you write | what it teaches |\n| --- | --- | --- |\n";
    std::size_t steps = 0;
    for (const auto& l : m.lessons) {
        steps += l.steps.size();
        s << "| [" << l.id << "](lessons/" << l.id << "/README.md) | "
          << markdown_cell(l.summary_write.empty() ? l.title : l.summary_write) << " | "
          << markdown_cell(l.summary_teaches) << " |\n";
    }
    s << "\n" << m.lessons.size() << " lessons, " << steps << " steps.\n\n";
    return s.str();
}

// ---- update and check ----------------------------------------------------------------------

namespace {

struct Document {
    std::string rel;   // course-relative path
    std::string text;  // as read
    std::vector<Region> regions;
    std::string lesson;  // the lesson a README belongs to ("" for the root README)
};

bool read_document(const std::string& root, const std::string& rel, const std::string& lesson,
                   Document& d, std::string& error) {
    d.rel = rel;
    d.lesson = lesson;
    bool ok = false;
    d.text = read_file((fs::path(root) / rel).string(), &ok);
    if (!ok) {
        d.text.clear();  // no file: nothing generated in it
        return true;
    }
    if (!find_regions(d.text, d.regions, error)) {
        error = rel + ": " + error;
        return false;
    }
    return true;
}

// The stored files named by regions, each read once.
class ResultsCache {
  public:
    explicit ResultsCache(std::string root) : root_(std::move(root)) {}
    const StoredResults* get(const std::string& rel, std::string& error) {
        auto it = files_.find(rel);
        if (it == files_.end()) {
            StoredResults r;
            bool stored = false;
            std::string why;
            const bool ok =
                load_results((fs::path(root_) / rel).string(), "", r, stored, why) && stored;
            if (ok)
                it = files_.emplace(rel, r).first;
            else
                errors_[rel] = why.empty() ? rel +
                                                 " is not a stored results file (`cudalings dev "
                                                 "update --results FILE` writes one)"
                                           : why;
        }
        if (it != files_.end()) return &it->second;
        error = errors_[rel];
        return nullptr;
    }
    void put(const std::string& rel, const StoredResults& r) { files_[rel] = r; }

  private:
    std::string root_;
    std::map<std::string, StoredResults> files_;
    std::map<std::string, std::string> errors_;
};

// The body a region should have. False, with `error`, when it cannot be made.
bool expected_body(const Document& d, const Region& r, const Manifest& m, ResultsCache& cache,
                   std::string& body, std::string& error) {
    if (r.kind == "course-table") {
        if (!d.lesson.empty()) {
            error = "a course-table region belongs in the root README";
            return false;
        }
        body = render_course_table(m);
        return true;
    }
    if (r.kind != "staircase") {
        error = "\"" + r.kind + "\" is not a kind of region (staircase, course-table)";
        return false;
    }
    if (d.lesson.empty()) {
        error = "a staircase region belongs in a lesson's README";
        return false;
    }
    const std::string results = r.attribute("results");
    if (results.empty()) {
        error =
            "the staircase region names no results file: `cudalings dev update --results "
            "FILE` fills it";
        return false;
    }
    if (fs::path(results).is_absolute() ||
        fs::path(results).lexically_normal().generic_string().rfind("..", 0) == 0) {
        error = "results=\"" + results + "\" lies outside the course";
        return false;
    }
    const StoredResults* stored = cache.get(results, error);
    if (!stored) return false;
    const Staircase* st = stored->find(d.lesson);
    if (!st) {
        error = results + " has no staircase of " + d.lesson;
        return false;
    }
    if (r.attribute("gpu") != stored->run.gpu) {
        error = "the region names the GPU \"" + r.attribute("gpu") + "\" but " + results +
                " comes from \"" + stored->run.gpu + "\"";
        return false;
    }
    const std::string link =
        fs::path(results).lexically_relative(fs::path(d.rel).parent_path()).generic_string();
    return render_staircase_region(r, *st, stored->run, results, link, body, error);
}

std::vector<Document> course_documents(const std::string& root, const Manifest& m,
                                       std::vector<std::string>& errors) {
    std::vector<Document> docs;
    Document d;
    std::string error;
    if (read_document(root, "README.md", "", d, error))
        docs.push_back(d);
    else
        errors.push_back(error);
    for (const auto& l : m.lessons) {
        if (read_document(root, "lessons/" + l.id + "/README.md", l.id, d, error))
            docs.push_back(d);
        else
            errors.push_back(error);
    }
    return docs;
}

std::string region_name(const Region& r) {
    return r.kind + " region of line " + std::to_string(r.line);
}

// The results `o.results` names, and the course-relative path regions will name them by: a
// stored file where it is, a check's output trimmed into `files` (docs/results/ by default).
bool take_results(const std::string& root, const UpdateOptions& o, StoredResults& fresh,
                  std::string& rel, std::vector<std::pair<std::string, std::string>>& files,
                  std::string& error) {
    bool was_stored = false;
    if (!load_results(o.results, o.date, fresh, was_stored, error)) return false;
    std::error_code ec;
    const fs::path course = fs::weakly_canonical(root, ec);
    const fs::path target = was_stored ? fs::weakly_canonical(o.results, ec)
                            : o.store.empty()
                                ? course / "docs" / "results" / (results_name(fresh.run) + ".json")
                                : fs::weakly_canonical(fs::absolute(o.store), ec);
    rel = target.lexically_relative(course).generic_string();
    if (rel.empty() || rel.rfind("..", 0) == 0) {
        error = (was_stored ? "the stored results " + o.results : "--store " + target.string()) +
                " lies outside the course: regions name their file inside it";
        return false;
    }
    if (!was_stored) files.emplace_back(rel, stored_text(fresh));
    return true;
}

// Points the staircase regions of a lesson in `fresh` at it: those that name its GPU model (or
// none yet), so that a lesson may show several GPUs side by side. Where none does, every
// region of the lesson is replaced with --other-gpu, and refused without.
void retarget(Document& d, const StoredResults& fresh, const std::string& rel, bool other_gpu,
              std::vector<std::string>& errors) {
    if (rel.empty() || !fresh.find(d.lesson)) return;
    auto same_gpu = [&](const Region& r) {
        return r.kind == "staircase" &&
               (r.attribute("gpu").empty() || r.attribute("gpu") == fresh.run.gpu);
    };
    const bool any_same = std::any_of(d.regions.begin(), d.regions.end(), same_gpu);
    for (auto& r : d.regions) {
        if (r.kind != "staircase" || (any_same && !same_gpu(r))) continue;
        if (!any_same && !other_gpu) {
            errors.push_back(d.rel + ": the " + region_name(r) + " names the GPU \"" +
                             r.attribute("gpu") + "\", the results come from \"" + fresh.run.gpu +
                             "\": --other-gpu replaces it, or a region with gpu=\"" +
                             fresh.run.gpu + "\" beside it shows both");
            continue;
        }
        r.set("gpu", fresh.run.gpu);
        r.set("results", rel);
    }
}

// `d`'s text with every region generated again (a staircase region without results is left).
std::string regenerate(const Document& d, const Manifest& m, ResultsCache& cache,
                       std::vector<std::string>& notes, std::vector<std::string>& errors) {
    std::string text;
    std::size_t at = 0;
    for (const auto& r : d.regions) {
        if (r.kind == "staircase" && r.attribute("results").empty()) {
            notes.push_back(d.rel + ": the " + region_name(r) +
                            " waits for results of its lesson (--results FILE)");
            continue;  // left as it is (dev check says so too)
        }
        std::string body, error;
        if (!expected_body(d, r, m, cache, body, error)) {
            errors.push_back(d.rel + ": the " + region_name(r) + ": " + error);
            continue;
        }
        text += d.text.substr(at, r.begin - at) + opening_marker(r) + "\n" + body +
                d.text.substr(r.body_end, r.end - r.body_end);
        at = r.end;
    }
    return text + d.text.substr(at);
}

bool has_record_script(const std::string& root) {
    std::error_code ec;
    return fs::exists(fs::path(root) / kRecordScript, ec);
}

// The pristine record's script (CMake's SHA-256: the one definition of the record) in `mode`:
// "write" rewrites the record, "check" fails when it does not match lessons/.
ChildResult run_record_script(const std::string& root, const std::string& cmake, const char* mode) {
    ChildOptions co;
    co.wall_seconds = 120;
    return run_supervised(
        {cmake, "-DROOT=" + root, "-DRECORD=" + (fs::path(root) / kRecord).string(),
         std::string("-DMODE=") + mode, "-P", (fs::path(root) / kRecordScript).string()},
        co);
}

// Writes the pristine record; false, with `error`, when the script fails.
bool write_pristine_record(const std::string& root, const std::string& cmake, UpdateOutcome& out,
                           std::string& error) {
    if (!has_record_script(root)) {
        out.notes.push_back(std::string("no ") + kRecordScript + ": no pristine record to write");
        return true;
    }
    if (cmake.empty()) {
        out.notes.push_back("cmake not found: the pristine record was not written");
        return true;
    }
    const std::string record = (fs::path(root) / kRecord).string();
    bool had = false;
    const std::string before = read_file(record, &had);
    const auto r = run_record_script(root, cmake, "write");
    if (!r.exited_ok()) {
        error = "writing the pristine record failed: " + r.start_error + r.err.head;
        return false;
    }
    if (read_file(record) != before || !had) out.written.push_back(kRecord);
    return true;
}

}  // namespace

UpdateOutcome dev_update(const std::string& root, const Manifest& m, const UpdateOptions& o) {
    UpdateOutcome out;
    std::vector<std::string> errors;
    std::vector<std::pair<std::string, std::string>> files;  // (course-relative path, contents)
    ResultsCache cache(root);
    StoredResults fresh;
    std::string fresh_rel;
    if (!o.results.empty()) {
        if (!take_results(root, o, fresh, fresh_rel, files, out.error)) return out;
        cache.put(fresh_rel, fresh);
    }
    auto docs = course_documents(root, m, errors);
    bool has_course_table = false;
    for (auto& d : docs) {
        for (const auto& r : d.regions)
            has_course_table |= r.kind == "course-table" && d.lesson.empty();
        retarget(d, fresh, fresh_rel, o.other_gpu, errors);
        const std::string text = regenerate(d, m, cache, out.notes, errors);
        if (text != d.text) files.emplace_back(d.rel, text);
    }
    if (!has_course_table)
        out.notes.push_back(
            "README.md has no course table region (<!-- cudalings:course-table "
            "--> ... <!-- /cudalings:course-table -->)");
    for (const auto& st : fresh.staircases) {
        bool shown = false;
        for (const auto& d : docs)
            for (const auto& r : d.regions) shown |= d.lesson == st.lesson && r.kind == "staircase";
        if (!shown)
            out.notes.push_back("lessons/" + st.lesson +
                                "/README.md has no staircase region: its staircase is stored, "
                                "not shown");
    }
    if (!errors.empty()) {
        for (const auto& e : errors) out.error += (out.error.empty() ? "" : "\n") + e;
        return out;
    }
    for (const auto& [rel, contents] : files) {
        const fs::path path = fs::path(root) / rel;
        if (!make_dirs(path.parent_path().string()) ||
            !write_file_atomic(path.string(), contents)) {
            out.error = "cannot write " + path.string();
            return out;
        }
        out.written.push_back(rel);
    }
    write_pristine_record(root, o.cmake, out, out.error);
    return out;
}

std::vector<std::pair<std::string, std::string>> stale_generated(const std::string& root,
                                                                 const Manifest& m,
                                                                 const std::string& cmake) {
    std::vector<std::pair<std::string, std::string>> found;
    std::vector<std::string> errors;
    auto docs = course_documents(root, m, errors);
    for (const auto& e : errors)
        found.emplace_back(e.substr(0, e.find(':')), e.substr(e.find(':') + 2));
    ResultsCache cache(root);
    for (const auto& d : docs)
        for (const auto& r : d.regions) {
            std::string body, error;
            if (!expected_body(d, r, m, cache, body, error)) {
                found.emplace_back(d.rel, "the " + region_name(r) + ": " + error);
            } else if (d.text.substr(r.body_begin, r.body_end - r.body_begin) != body) {
                const std::string source = r.kind == "staircase"
                                               ? r.attribute("results")
                                               : "course.json and the lessons' summaries";
                found.emplace_back(d.rel, "the " + region_name(r) +
                                              " differs from what `cudalings dev update` makes "
                                              "of " +
                                              source +
                                              " (a hand edit, or a source changed since): run "
                                              "`./cudalings dev update`");
            }
        }
    // The record, where the course has one: its script's check mode.
    if (!cmake.empty() && has_record_script(root) &&
        !run_record_script(root, cmake, "check").exited_ok())
        found.emplace_back(kRecord,
                           "does not match the files under lessons/ (a lesson file was added or "
                           "changed since): run `./cudalings dev update`");
    return found;
}

}  // namespace cudalings
