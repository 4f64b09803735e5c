#include "result.h"

#include <cmath>
#include <cstdio>

#include "emulate.h"
#include "text.h"

#ifndef CUDALINGS_VERSION
#define CUDALINGS_VERSION "unknown"
#endif

namespace cudalings::grading {
namespace {

void replace_all(std::string& text, const std::string& from, const std::string& to) {
    if (from.empty()) return;
    for (std::size_t at = text.find(from); at != std::string::npos;
         at = text.find(from, at + to.size()))
        text.replace(at, from.size(), to);
}

std::string points_text(double p) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", p);
    return buf;
}

}  // namespace

std::string tool_version() { return std::string("cudalings ") + CUDALINGS_VERSION; }

void rewrite_paths(StepReport& r, const std::string& from, const std::string& to) {
    for (std::string* text : {&r.file, &r.reason, &r.compiler_output, &r.sanitizer_note, &r.pattern,
                              &r.timing_error, &r.load_error, &r.internal_error})
        replace_all(*text, from, to);
    for (auto& t : r.timings) replace_all(t.note, from, to);
    for (auto& note : r.notes) replace_all(note, from, to);
    for (auto& d : r.diagnostics) {
        replace_all(d.file, from, to);
        replace_all(d.message, from, to);
    }
    for (auto& c : r.cases) {
        replace_all(c.reason, from, to);
        replace_all(c.detail, from, to);
    }
    for (auto& f : r.findings) {
        replace_all(f.file, from, to);
        replace_all(f.detail, from, to);
    }
}

nlohmann::json step_result(const StepReport& r, const StepInfo& step, const StepFile& file) {
    nlohmann::json j = to_json(r);
    const bool pass = r.verdict == Verdict::Pass;
    j["points"] = pass ? step.points : 0.0;
    j["max_points"] = step.points;
    j["visibility"] = step.visibility;
    j["submitted"] = file.status == StepFile::Status::Missing ? nlohmann::json(nullptr)
                                                              : nlohmann::json(file.relative);
    RenderOptions render;
    render.command = "cudalings";
    // The report as `check` prints it, seed included: a student can replay it in their own
    // copy; the seed tells nothing of the secret, nor of the next submission's (seeds.h).
    j["output"] = render_text(r, render);
    return j;
}

StepReport unchecked_step(const std::string& step_name, const StepInfo& step,
                          const StepFile& file) {
    StepReport r;
    r.step = step_name;
    r.title = step.title;
    r.file = file.relative;
    r.verdict =
        file.status == StepFile::Status::Refused ? Verdict::Rejected : Verdict::CompileError;
    r.reason = file.why;
    return r;
}

void add_totals(nlohmann::json& result) {
    double score = 0, max_score = 0;
    int passed = 0, failed = 0, skipped = 0;
    bool emulated = false;
    for (const auto& step : result.value("results", nlohmann::json::array())) {
        score += step.value("points", 0.0);
        max_score += step.value("max_points", 0.0);
        std::string verdict = step.value("verdict", "");
        (verdict == "PASS" ? passed : verdict == "SKIPPED" ? skipped : failed)++;
        emulated = emulated || step.value("gpu", "") == kEmulatedLabel;
    }
    result["score"] = score;
    result["max_score"] = max_score;
    result["passed"] = passed;
    result["failed"] = failed;
    result["skipped"] = skipped;
    result["emulated"] = emulated;
}

bool grading_failed(const nlohmann::json& result) {
    if (result.contains("error")) return true;
    for (const auto& step : result.value("results", nlohmann::json::array()))
        if (step.value("verdict", "") == "INTERNAL_ERROR") return true;
    return false;
}

std::string one_line(const nlohmann::json& result) {
    if (result.contains("error")) return "not graded: " + result["error"].get<std::string>();
    std::string line = points_text(result.value("score", 0.0)) + "/" +
                       points_text(result.value("max_score", 0.0)) + " points:";
    for (const auto& step : result.value("results", nlohmann::json::array())) {
        std::string name = step.value("step", "");
        line += " " + name.substr(name.find('/') + 1) + "=" + step.value("verdict", "");
    }
    if (result.value("emulated", false)) line += " (emulated)";
    return line;
}

void make_valid_utf8(nlohmann::json& value) {
    if (value.is_string()) {
        auto& text = value.get_ref<std::string&>();
        if (!is_valid_utf8(text)) text = valid_utf8(text);
    } else if (value.is_array()) {
        for (auto& item : value) make_valid_utf8(item);
    } else if (value.is_object()) {
        bool keys_valid = true;
        for (auto it = value.begin(); it != value.end(); ++it) {
            keys_valid = keys_valid && is_valid_utf8(it.key());
            make_valid_utf8(it.value());
        }
        if (!keys_valid) {
            nlohmann::json fixed = nlohmann::json::object();
            for (auto it = value.begin(); it != value.end(); ++it)
                fixed[valid_utf8(it.key())] = std::move(it.value());
            value = std::move(fixed);
        }
    }
}

std::string dump_json(const nlohmann::json& value, int indent, bool* repaired) {
    if (repaired) *repaired = false;
    try {
        return value.dump(indent);
    } catch (const nlohmann::json::type_error&) {
        if (repaired) *repaired = true;
        return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
    }
}

}  // namespace cudalings::grading
