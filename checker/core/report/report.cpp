#include "report.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <sstream>

#include "access_picture.h"
#include "cases.h"
#include "text.h"

namespace cudalings {
namespace {

const char* colour_of(Verdict v) {
    switch (v) {
        case Verdict::Pass:
            return "\033[1;32m";
        case Verdict::Skipped:
        case Verdict::Suspect:
            return "\033[1;33m";
        default:
            return "\033[1;31m";
    }
}

std::string paint(const RenderOptions& o, const char* code, const std::string& text) {
    return o.color ? std::string(code) + text + "\033[0m" : text;
}

std::string fixed(double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

std::string format_rate(double gbps) {
    return gbps >= 1000 ? fixed(gbps / 1000, 2) + " TB/s" : fixed(gbps, 1) + " GB/s";
}

std::string format_flops(double gflops) {
    return gflops >= 1000 ? fixed(gflops / 1000, 2) + " TFLOP/s" : fixed(gflops, 1) + " GFLOP/s";
}

void render_case(std::ostringstream& s, const CaseResult& c, const RenderOptions& o) {
    s << "  " << paint(o, colour_of(c.verdict), "x") << " " << c.name << ": " << name(c.verdict);
    if (!c.reason.empty()) s << " (" << c.reason << ")";
    if (c.wrong > 0)
        s << ", " << c.wrong << " of " << (c.checked ? c.checked : c.n) << " output"
          << ((c.checked ? c.checked : c.n) == 1 ? "" : "s") << " wrong";
    s << "\n";
    if (!c.detail.empty()) {
        // Multi-line details (the emulator's reports) stay indented under their case.
        std::istringstream lines(c.detail);
        std::string line;
        while (std::getline(lines, line))
            if (!line.empty()) s << "      " << line << "\n";
    }
    std::size_t shown = 0;
    for (const auto& m : c.first)
        if (shown++ < 3 || o.verbose)
            s << "      index " << m.index << ": got " << m.got << ", expected " << m.expected
              << "\n";
}

}  // namespace

std::string format_time_us(double us) {
    if (us >= 10000) return fixed(us / 1000, 2) + " ms";
    return fixed(us, 1) + " µs";
}

std::string format_seed(std::uint64_t seed) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%016" PRIx64, seed);
    return buf;
}

std::string checked_now() { return local_time_now("%Y-%m-%d %H:%M"); }

std::string unchanged_since(const std::string& checked_at) {
    // "HH:MM" on the day it was checked, the whole "YYYY-MM-DD HH:MM" on any other
    if (checked_at.size() == 16 && checked_at.compare(0, 10, checked_now(), 0, 10) == 0)
        return checked_at.substr(11);
    return checked_at.empty() ? "the last check" : checked_at;
}

std::string render_text(const StepReport& r, const RenderOptions& o) {
    std::ostringstream s;
    s << paint(o, "\033[1m", r.step) << (r.title.empty() ? "" : " — " + r.title) << "\n";
    if (r.unchanged)
        s << "  unchanged since " << unchanged_since(r.checked_at)
          << ": the last check's report, not re-run (--rerun runs it)\n";
    if (r.verdict == Verdict::CompileError) {
        s << "  compile  " << paint(o, colour_of(r.verdict), "failed") << "\n";
        Diagnostic first = first_error(r.diagnostics);
        if (!first.message.empty()) {
            std::size_t errors = 0;
            for (auto& d : r.diagnostics) errors += d.severity != "warning";
            // Unindented, as compilers print it: editors' problem matchers (.vscode/tasks.json)
            // and terminals that link file:line find it.
            s << (first.file.empty() ? r.file : first.file);
            if (first.line > 0) s << ":" << first.line;
            s << ": " << first.severity << ": " << first.message << "\n";
            if (errors > 1) s << "  (the first of " << errors << " errors; nvcc said:)\n";
        }
        std::istringstream lines(r.compiler_output);
        std::string line;
        int shown = 0;
        while (std::getline(lines, line) && shown < 25) {
            s << "    | " << line << "\n";
            ++shown;
        }
        if (std::getline(lines, line)) s << "    | ...\n";
    } else if (r.verdict == Verdict::Rejected) {
        s << "  screen   " << paint(o, colour_of(r.verdict), "rejected")
          << ": the policy screen read the preprocessed file\n";
    } else if (!r.diagnostics.empty() || r.compile_seconds > 0 || r.compile_cached) {
        s << "  compile  ok "
          << (r.compile_cached ? "(cached)" : "(" + fixed(r.compile_seconds, 1) + " s)");
        std::size_t warnings = r.diagnostics.size();
        if (warnings) s << ", " << warnings << " warning" << (warnings == 1 ? "" : "s");
        s << "\n";
        for (std::size_t i = 0; i < r.diagnostics.size() && i < 3; ++i) {
            const auto& d = r.diagnostics[i];
            s << d.file << ":" << d.line << ": " << d.severity << ": " << d.message << "\n";
        }
    }
    if (!r.gpu.empty()) s << "  gpu      " << r.gpu << "\n";
    if (!r.cases.empty()) {
        std::size_t ok = 0, run = 0;
        for (const auto& c : r.cases) {
            ok += c.verdict == Verdict::Pass;
            run += c.verdict != Verdict::Skipped;
        }
        s << "  cases    " << ok << "/" << r.cases.size() << " correct";
        if (run < r.cases.size()) s << " (" << r.cases.size() - run << " not run)";
        s << "   seed " << format_seed(r.seed) << "\n";
        int detailed = 0;
        for (const auto& c : r.cases) {
            if (c.verdict == Verdict::Pass && !o.verbose) continue;
            if (c.verdict == Verdict::Skipped && !o.verbose) continue;
            if (detailed++ < 2 || o.verbose) {
                render_case(s, c, o);
            } else {
                s << "  x " << c.name << ": " << name(c.verdict)
                  << (c.reason.empty() ? "" : " (" + c.reason + ")") << "\n";
            }
        }
        for (const auto& c : r.cases) {
            if (c.verdict != Verdict::Pass && !c.tolerance.empty()) {
                s << "  tolerance: " << c.tolerance << "\n";
                break;
            }
        }
        // --explain: the emulator's teaching metrics ride on each case's detail; without -v
        // they are shown once per step, for the largest case that passed (the most typical).
        // The access pictures (one warp per access line) follow.
        const CaseResult* explained = explained_case(r.cases);
        if (explained && !o.verbose) {
            s << "  explain  (" << explained->name << ")\n";
            std::istringstream lines(explained->detail);
            std::string line;
            while (std::getline(lines, line))
                if (!line.empty()) s << "      " << line << "\n";
        }
        const auto pictures = step_access_pictures(r.cases);
        if (!pictures.empty())
            s << "  access   one warp per access line: the sector or bank each lane touched\n";
        for (const auto& p : pictures) s << access_text(p, "      ");
    }
    // Performance goals, seen on the emulator: beside the verdict, never part of it. One that
    // could not be measured is said only of a step that passed (a failing one has no pictures).
    for (const auto& g : r.goals) {
        if (!g.measured && r.verdict != Verdict::Pass) continue;
        // A missed goal's evidence is the point ("— line 56 ..."); a met one's an aside.
        const bool missed = g.measured && !g.met;
        const std::string status = !g.measured ? "not measured" : g.met ? "met" : "not met";
        s << "  goal     "
          << (g.measured ? paint(o, g.met ? colour_of(Verdict::Pass) : "\033[33m", status) : status)
          << ": " << g.says;
        if (!g.evidence.empty()) s << (missed ? " — " + g.evidence : " (" + g.evidence + ")");
        s << "\n";
    }
    if (!r.pattern.empty()) s << "  pattern: " << r.pattern << "\n";
    for (std::size_t i = 0; i < r.findings.size() && (i < 5 || o.verbose); ++i) {
        const auto& f = r.findings[i];
        s << "  " << paint(o, colour_of(Verdict::MemoryError), "x") << " " << f.tool << ": "
          << f.file << ":" << f.line << ": " << f.message << "\n";
        if (!f.detail.empty()) s << "      " << f.detail << "\n";
    }
    if (r.findings.size() > 5 && !o.verbose)
        s << "  (" << r.findings.size() - 5 << " more findings: -v shows all)\n";
    if (!r.sanitizer_note.empty()) s << "  sanitizer: " << r.sanitizer_note << "\n";
    for (const auto& t : r.timings) {
        std::string size = t.size.rfind("n=", 0) == 0 ? "n = " + t.size.substr(2) : t.size;
        s << "  time     " << (t.column.empty() ? "" : t.column + ", ") << size << ": "
          << format_time_us(t.learner.median_us) << " ±" << fixed(100 * t.learner.spread(), 1)
          << "%  " << format_rate(t.gbps(t.learner));
        if (t.copy_gbps > 0)
            s << "  " << fixed(t.percent_of_copy(t.learner), 1) << "% of copy bandwidth ("
              << format_rate(t.copy_gbps) << ")";
        s << "\n";
        if (t.reference.present) {
            s << "  ref      " << format_time_us(t.reference.median_us) << " ±"
              << fixed(100 * t.reference.spread(), 1) << "%  " << format_rate(t.gbps(t.reference))
              << "  -> yours runs at " << fixed(t.speed_vs_reference(), 2)
              << "x the reference's speed\n";
        }
        if (t.fp32_ops > 0) {
            // A compute-bound problem: its FLOP rate, against the GPU's measured FP32 rate.
            s << "  compute  " << format_flops(t.gflops(t.learner));
            if (t.fp32_gflops > 0)
                s << "  " << fixed(t.percent_of_fp32(t.learner), 1) << "% of the FP32 rate ("
                  << format_flops(t.fp32_gflops) << ")";
            s << "; " << fixed(t.intensity(), 1) << " FLOP per byte moved\n";
        }
        if (t.copy_gbps > 0)
            s << "  floor    " << format_time_us(t.floor_us()) << " (" << fixed(t.bytes / 1e9, 2)
              << " GB at the copy rate)\n";
        if (!t.note.empty()) s << "  note: " << t.note << "\n";
    }
    for (const auto& note : r.notes) s << "  note: " << note << "\n";
    bool failed = r.verdict != Verdict::Pass && r.verdict != Verdict::Skipped;
    if (failed && !r.advice.empty()) s << "  advice: " << r.advice << "\n";
    if (failed && r.verdict != Verdict::Rejected && !r.hint.empty())
        s << "  hint: " << r.hint << "\n";
    s << paint(o, colour_of(r.verdict), std::string(name(r.verdict)));
    if (!r.reason.empty()) s << "  " << r.reason;
    s << "\n";
    if (failed && r.verdict != Verdict::CompileError && r.verdict != Verdict::InternalError &&
        !r.cases.empty())
        s << "  reproduce: " << o.command << " check " << r.step << " --seed "
          << format_seed(r.seed) << "\n";
    return s.str();
}

std::string step_counter(std::size_t index, std::size_t total) {
    const std::string n = std::to_string(index + 1), of = std::to_string(total);
    return "[" + std::string(of.size() - std::min(of.size(), n.size()), ' ') + n + "/" + of + "]";
}

std::string render_step_line(const StepReport& r, std::size_t index, std::size_t total,
                             const RenderOptions& o) {
    std::ostringstream s;
    s << step_counter(index, total) << " " << pad_right(r.step, 44) << " "
      << paint(o, colour_of(r.verdict), pad_right(name(r.verdict), 13));
    if (!r.timings.empty()) {
        const TimingResult& t = r.timings.front();  // the first timed problem
        s << " " << pad_left(format_time_us(t.learner.median_us), 9);
        if (t.fp32_ops > 0 && t.fp32_gflops > 0)
            s << "  " << fixed(t.percent_of_fp32(t.learner), 1) << "% of FP32";
        else if (t.copy_gbps > 0)
            s << "  " << fixed(t.percent_of_copy(t.learner), 1) << "% of copy";
        if (r.timings.size() > 1)
            s << " (" << t.column << "; +" << r.timings.size() - 1 << " more)";
    } else if (!r.reason.empty() && r.verdict != Verdict::Pass) {
        s << " " << r.reason.substr(0, 70);
    } else if (r.verdict == Verdict::Pass && !r.gpu.empty() && r.gpu.rfind("none", 0) == 0) {
        s << " (emulated: not timed)";
    }
    if (r.unchanged) s << " (unchanged since " << unchanged_since(r.checked_at) << ")";
    s << "\n";
    return s.str();
}

namespace {

// A staircase cell's derived figures. Speed-ups compare rates (bytes per second) of cells that
// measure the same thing: the same column, size and bytes moved. The first such cell is the base
// (1.00x, no previous); a cell with none before it has no ratios.
struct CellFigures {
    double gbps = 0, percent_of_copy = 0, vs_first = 0, vs_previous = 0;
    double gflops = 0, percent_of_fp32 = 0;  // a compute-bound cell's
    bool has_first = false, has_previous = false;
};

std::vector<std::vector<CellFigures>> stair_figures(const Staircase& st) {
    std::vector<std::vector<CellFigures>> out;
    struct Seen {
        std::string key;
        double first, previous;
    };
    std::vector<Seen> seen;
    for (const auto& row : st.rows) {
        std::vector<CellFigures> figures;
        for (const auto& c : row.cells) {
            CellFigures f;
            f.gbps = c.median_us > 0 ? c.bytes / c.median_us / 1e3 : 0;
            f.percent_of_copy = st.copy_gbps > 0 ? 100 * f.gbps / st.copy_gbps : 0;
            f.gflops = c.median_us > 0 ? c.fp32_ops / c.median_us / 1e3 : 0;
            f.percent_of_fp32 = st.fp32_gflops > 0 ? 100 * f.gflops / st.fp32_gflops : 0;
            const std::string key = c.column + "|" + c.size + "|" + format_number(c.bytes, 12);
            auto it = std::find_if(seen.begin(), seen.end(), [&](auto& s) { return s.key == key; });
            if (it == seen.end()) {
                seen.push_back({key, f.gbps, f.gbps});
                f.has_first = true;
                f.vs_first = 1;
            } else {
                f.has_first = f.has_previous = true;
                f.vs_first = it->first > 0 ? f.gbps / it->first : 0;
                f.vs_previous = it->previous > 0 ? f.gbps / it->previous : 0;
                it->previous = f.gbps;
            }
            figures.push_back(f);
        }
        out.push_back(figures);
    }
    return out;
}

std::vector<std::string> columns_of(const Staircase& st) {
    std::vector<std::string> columns;
    for (const auto& row : st.rows)
        for (const auto& c : row.cells)
            if (std::find(columns.begin(), columns.end(), c.column) == columns.end())
                columns.push_back(c.column);
    return columns;
}

}  // namespace

std::string render_staircase(const Staircase& st, const RenderOptions& o) {
    std::ostringstream s;
    s << paint(o, "\033[1m", st.lesson + " staircase") << " (median of each; ratios compare rows "
      << "that move the same bytes at the same size)\n";
    const auto columns = columns_of(st);
    const auto figures = stair_figures(st);
    // Columns by display width (text.h): "µs" is two bytes and one column, labels need not be
    // ASCII.
    std::size_t width = 4;
    for (const auto& r : st.rows) width = std::max(width, display_width(r.label));
    auto pad = [&](const std::string& text) { return pad_right(text, width + 2); };
    const bool compute = st.fp32_gflops > 0 &&
                         std::any_of(st.rows.begin(), st.rows.end(), [](const StaircaseRow& r) {
                             return std::any_of(r.cells.begin(), r.cells.end(),
                                                [](const auto& c) { return c.fp32_ops > 0; });
                         });
    if (columns.size() <= 1) {
        s << "  " << pad("step") << "      time      rate  % copy" << (compute ? "  % fp32" : "")
          << "  vs first  vs prev  size\n";
        for (std::size_t i = 0; i < st.rows.size(); ++i) {
            const auto& r = st.rows[i];
            for (std::size_t k = 0; k < r.cells.size(); ++k) {
                const auto& c = r.cells[k];
                const auto& f = figures[i][k];
                char line[160];
                std::snprintf(line, sizeof line, "  %5.1f%%", f.percent_of_copy);
                s << "  " << pad(r.label) << pad_left(format_time_us(c.median_us), 10) << "  "
                  << pad_left(format_rate(f.gbps), 8) << line;
                if (compute) {
                    std::snprintf(line, sizeof line, "  %5.1f%%", f.percent_of_fp32);
                    s << (c.fp32_ops > 0 ? std::string(line) : "        -");
                }
                if (f.has_previous)
                    std::snprintf(line, sizeof line, "  %7.2fx  %6.2fx", f.vs_first, f.vs_previous);
                else
                    std::snprintf(line, sizeof line, "  %8s  %7s", f.has_first ? "1.00x" : "-",
                                  "-");
                s << line << "  " << c.size << "\n";
            }
        }
        return s.str();
    }
    // One column per timed problem: time and % of the copy rate in each (of the FP32 rate where
    // the problem counts its FP32 work).
    s << "  " << pad("step");
    for (const auto& col : columns) s << "  " << pad_left(col, 18);
    s << "\n";
    for (std::size_t i = 0; i < st.rows.size(); ++i) {
        const auto& r = st.rows[i];
        s << "  " << pad(r.label);
        for (const auto& col : columns) {
            std::string cell = "-";
            for (std::size_t k = 0; k < r.cells.size(); ++k)
                if (r.cells[k].column == col)
                    cell = format_time_us(r.cells[k].median_us) + " " +
                           (r.cells[k].fp32_ops > 0 && st.fp32_gflops > 0
                                ? fixed(figures[i][k].percent_of_fp32, 0) + "% fp32"
                                : fixed(figures[i][k].percent_of_copy, 0) + "%");
            s << "  " << pad_left(cell, 18);
        }
        s << "\n";
    }
    return s.str();
}

nlohmann::json to_json(const Staircase& st) {
    nlohmann::json rows = nlohmann::json::array();
    const auto figures = stair_figures(st);
    for (std::size_t i = 0; i < st.rows.size(); ++i) {
        const auto& r = st.rows[i];
        nlohmann::json cells = nlohmann::json::array();
        for (std::size_t k = 0; k < r.cells.size(); ++k) {
            const auto& c = r.cells[k];
            const auto& f = figures[i][k];
            nlohmann::json cell{{"column", c.column}, {"median_us", c.median_us},
                                {"gbps", f.gbps},     {"percent_of_copy", f.percent_of_copy},
                                {"n", c.n},           {"size", c.size},
                                {"bytes", c.bytes}};
            if (c.fp32_ops > 0) {
                cell["fp32_ops"] = c.fp32_ops;
                cell["gflops"] = f.gflops;
                cell["intensity"] = c.bytes > 0 ? c.fp32_ops / c.bytes : 0;
                if (st.fp32_gflops > 0) cell["percent_of_fp32"] = f.percent_of_fp32;
            }
            cell["vs_first"] = f.has_first ? nlohmann::json(f.vs_first) : nlohmann::json();
            cell["vs_previous"] = f.has_previous ? nlohmann::json(f.vs_previous) : nlohmann::json();
            cells.push_back(cell);
        }
        rows.push_back({{"label", r.label},
                        {"title", r.title},
                        {"problem", r.problem},
                        {"baseline", r.baseline},
                        {"cells", cells}});
    }
    nlohmann::json out{{"lesson", st.lesson}, {"copy_gbps", st.copy_gbps}, {"rows", rows}};
    if (st.fp32_gflops > 0) out["fp32_gflops"] = st.fp32_gflops;
    return out;
}

Staircase staircase_from_json(const nlohmann::json& j) {
    Staircase st;
    st.lesson = j.value("lesson", "");
    st.copy_gbps = j.value("copy_gbps", 0.0);
    st.fp32_gflops = j.value("fp32_gflops", 0.0);
    for (const auto& jr : j.value("rows", nlohmann::json::array())) {
        StaircaseRow row;
        row.label = jr.value("label", "");
        row.title = jr.value("title", row.label);
        row.problem = jr.value("problem", "");
        row.baseline = jr.value("baseline", false);
        for (const auto& jc : jr.value("cells", nlohmann::json::array()))
            row.cells.push_back({jc.value("column", ""), jc.value("median_us", 0.0),
                                 jc.value("bytes", 0.0), jc.value("n", std::uint64_t{0}),
                                 jc.value("size", ""), jc.value("fp32_ops", 0.0)});
        st.rows.push_back(row);
    }
    return st;
}

nlohmann::json to_json(const StepReport& r) {
    using nlohmann::json;
    json j;
    j["step"] = r.step;
    j["title"] = r.title;
    j["file"] = r.file;
    j["verdict"] = std::string(name(r.verdict));
    j["reason"] = r.reason;
    j["seed"] = format_seed(r.seed);
    j["gpu"] = r.gpu;
    j["seconds"] = r.seconds;
    if (!r.fingerprint.empty()) j["fingerprint"] = r.fingerprint;
    if (!r.checked_at.empty()) j["checked_at"] = r.checked_at;
    if (r.unchanged) j["unchanged"] = true;
    if (r.stopped_early) j["stopped_early"] = true;
    double warmup = 0, sampling = 0, untimed = 0;
    int rounds = 0;
    for (const auto& t : r.timings) {
        warmup += t.warmup_ms;
        sampling += t.sampling_ms;
        untimed += t.untimed_ms;
        rounds += t.warmup_rounds;
    }
    j["profile_ms"] = {{"runner_startup", r.runner_startup_ms},
                       {"cases", r.cases_ms},
                       {"timing", r.timing_ms},
                       {"runner", r.runner_ms},
                       {"runner_exit", r.runner_exit_ms},
                       {"timing_warmup", warmup},
                       {"timing_warmup_rounds", rounds},
                       {"timing_sampling", sampling},
                       {"timing_untimed", untimed}};
    j["compile"] = {{"cached", r.compile_cached},
                    {"seconds", r.compile_seconds},
                    {"output", r.compiler_output}};
    j["compile"]["diagnostics"] = json::array();
    for (const auto& d : r.diagnostics)
        j["compile"]["diagnostics"].push_back(
            {{"file", d.file}, {"line", d.line}, {"severity", d.severity}, {"message", d.message}});
    j["problem"] = r.problem;
    j["cases"] = r.cases;
    j["pattern"] = r.pattern;
    j["sanitizer"] = {{"note", r.sanitizer_note}, {"findings", json::array()}};
    for (const auto& f : r.findings)
        j["sanitizer"]["findings"].push_back({{"tool", f.tool},
                                              {"message", f.message},
                                              {"file", f.file},
                                              {"line", f.line},
                                              {"detail", f.detail}});
    j["hint"] = r.hint;
    j["timings"] = json::array();
    for (const auto& t : r.timings) {
        json jt = t;
        jt["learner"]["gbps"] = t.gbps(t.learner);
        jt["learner"]["percent_of_copy"] = t.percent_of_copy(t.learner);
        if (t.reference.present) {
            jt["reference"]["gbps"] = t.gbps(t.reference);
            jt["reference"]["percent_of_copy"] = t.percent_of_copy(t.reference);
            jt["speed_vs_reference"] = t.speed_vs_reference();
        }
        jt["floor_us"] = t.floor_us();
        if (t.fp32_ops > 0) {
            jt["intensity"] = t.intensity();
            jt["learner"]["gflops"] = t.gflops(t.learner);
            if (t.fp32_gflops > 0) jt["learner"]["percent_of_fp32"] = t.percent_of_fp32(t.learner);
            if (t.reference.present) {
                jt["reference"]["gflops"] = t.gflops(t.reference);
                if (t.fp32_gflops > 0)
                    jt["reference"]["percent_of_fp32"] = t.percent_of_fp32(t.reference);
            }
        }
        j["timings"].push_back(jt);
    }
    // The first timed problem, as before several existed (scripts read "timing").
    j["timing"] = r.timings.empty() ? json() : j["timings"][0];
    j["notes"] = r.notes;
    j["advice"] = r.advice;
    if (!r.goals.empty()) {
        j["goals"] = json::array();
        for (const auto& g : r.goals) j["goals"].push_back(to_json(g));
    }
    // --explain: the access pictures the text shows (docs/emulator.md).
    json pictures = json::array();
    for (const auto& p : step_access_pictures(r.cases)) pictures.push_back(to_json(p));
    if (!pictures.empty()) j["access"] = {{"pictures", pictures}};
    return j;
}

StepReport step_report_from_json(const nlohmann::json& j) {
    StepReport r;
    r.step = j.value("step", "");
    r.title = j.value("title", "");
    r.file = j.value("file", "");
    parse_verdict(j.value("verdict", "INTERNAL_ERROR"), r.verdict);
    r.reason = j.value("reason", "");
    r.seed = std::stoull(j.value("seed", "0"), nullptr, 16);
    r.gpu = j.value("gpu", "");
    r.problem = j.value("problem", "");
    r.cases = j.value("cases", std::vector<CaseResult>{});
    r.timings = j.value("timings", std::vector<TimingResult>{});
    r.notes = j.value("notes", std::vector<std::string>{});
    for (const auto& g : j.value("goals", nlohmann::json::array()))
        r.goals.push_back(goal_result_from_json(g));
    r.advice = j.value("advice", "");
    r.pattern = j.value("pattern", "");
    r.hint = j.value("hint", "");
    r.seconds = j.value("seconds", 0.0);
    r.fingerprint = j.value("fingerprint", "");
    r.checked_at = j.value("checked_at", "");
    r.unchanged = j.value("unchanged", false);
    r.stopped_early = j.value("stopped_early", false);
    if (const auto c = j.find("compile"); c != j.end() && c->is_object()) {
        r.compile_cached = c->value("cached", false);
        r.compile_seconds = c->value("seconds", 0.0);
        r.compiler_output = c->value("output", "");
        for (const auto& d : c->value("diagnostics", nlohmann::json::array()))
            r.diagnostics.push_back({d.value("file", ""), d.value("line", 0),
                                     d.value("severity", ""), d.value("message", "")});
    }
    if (const auto s = j.find("sanitizer"); s != j.end() && s->is_object()) {
        r.sanitizer_note = s->value("note", "");
        for (const auto& f : s->value("findings", nlohmann::json::array())) {
            SanitizerFinding finding;
            finding.tool = f.value("tool", "");
            finding.message = f.value("message", "");
            finding.file = f.value("file", "");
            finding.line = f.value("line", 0);
            finding.detail = f.value("detail", "");
            r.findings.push_back(finding);
        }
    }
    return r;
}

nlohmann::json to_json(const RunRecord& r) {
    return {{"gpu", r.gpu},   {"date", r.date},           {"commit", r.commit},
            {"cuda", r.cuda}, {"copy_gbps", r.copy_gbps}, {"solutions", r.solutions}};
}

RunRecord run_record_from_json(const nlohmann::json& j) {
    RunRecord r;
    r.gpu = j.value("gpu", "");
    r.date = j.value("date", "");
    r.commit = j.value("commit", "");
    r.cuda = j.value("cuda", "");
    r.copy_gbps = j.value("copy_gbps", 0.0);
    r.solutions = j.value("solutions", false);
    return r;
}

}  // namespace cudalings
