#include "goals.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <stdexcept>

namespace cudalings {
namespace {

// The text of a line of the learner's file, trimmed and capped ("" when it cannot be read).
std::string line_text(const std::string& file, int line) {
    std::ifstream in(file);
    std::string text;
    for (int n = 1; n <= line && std::getline(in, text); ++n)
        if (n == line) {
            const auto begin = text.find_first_not_of(" \t");
            if (begin == std::string::npos) return "";
            text = text.substr(begin);
            const auto comment = text.find("//");
            if (comment != std::string::npos) text = text.substr(0, comment);
            while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.pop_back();
            if (text.size() > 60) text = text.substr(0, 57) + "...";
            return text;
        }
    return "";
}

std::string line_of(const AccessPicture& p) {
    const std::string text = line_text(p.file, p.line);
    return "line " + std::to_string(p.line) + (text.empty() ? "" : " `" + text + "`");
}

std::string worst_warp_of(const AccessPicture& p) {
    const std::string size = case_size(p);
    return size.empty() ? "" : " (the worst warp of case " + size + ")";
}

bool about(const PerformanceGoal& g, const AccessPicture& p) {
    if (p.array != g.array) return false;
    if (!g.op.empty() && p.store != (g.op == "store")) return false;
    return g.metric == "bank-conflicts" ? p.shared : !p.shared;
}

// Sectors a coalesced request may touch: what its bytes need, and one more per 128 bytes (a row
// of an odd width starts mid-sector).
std::size_t sector_allowance(const AccessPicture& p) {
    return p.ideal_sectors + (p.ideal_sectors + 3) / 4;
}

}  // namespace

std::vector<GoalResult> evaluate_goals(const std::vector<PerformanceGoal>& goals,
                                       const std::vector<AccessPicture>& pictures) {
    std::vector<GoalResult> out;
    for (const auto& g : goals) {
        GoalResult r;
        r.says = g.says;
        std::vector<const AccessPicture*> seen;
        for (const auto& p : pictures)
            if (about(g, p)) seen.push_back(&p);
        const std::string kind = g.metric == "bank-conflicts" ? "shared" : "global";
        const std::string access =
            kind + " " + (g.op.empty() ? "access to" : g.op + " of") + " `" + g.array + "`";
        if (seen.empty()) {
            r.evidence = "no " + access + " was seen in a case that passed";
            out.push_back(r);
            continue;
        }
        r.measured = true;
        r.met = true;
        if (g.metric == "bank-conflicts") {
            const AccessPicture* worst = nullptr;
            for (const auto* p : seen)
                if (p->active >= 2 && (!worst || p->degree > worst->degree)) worst = p;
            if (worst && worst->degree > 1) {
                r.met = false;
                r.evidence = line_of(*worst) + ": " + std::to_string(worst->degree) +
                             "-way bank conflict" + worst_warp_of(*worst);
            }
        } else if (g.metric == "coalesced") {
            const AccessPicture* worst = nullptr;
            double worst_ratio = 0;
            for (const auto* p : seen) {
                if (p->active < 8 || p->sectors.size() <= sector_allowance(*p)) continue;
                const double ratio = double(p->sectors.size()) / std::max(1u, p->ideal_sectors);
                if (!worst || ratio > worst_ratio) {
                    worst = p;
                    worst_ratio = ratio;
                }
            }
            if (worst) {
                r.met = false;
                r.evidence = line_of(*worst) + ": " + std::to_string(worst->sectors.size()) +
                             " sectors where " + std::to_string(worst->ideal_sectors) +
                             " would do" + worst_warp_of(*worst);
            }
        } else {  // vector-width
            const AccessPicture* widest = nullptr;
            for (const auto* p : seen)
                if (!widest || p->bytes > widest->bytes) widest = p;
            if (widest->bytes < g.bytes) {
                r.met = false;
                r.evidence = "the widest " + access + " moves " + std::to_string(widest->bytes) +
                             " B per lane (" + line_of(*widest) + "), not " +
                             std::to_string(g.bytes);
            } else {
                r.evidence = "line " + std::to_string(widest->line) + ": " +
                             std::to_string(widest->bytes) + " B per lane";
            }
        }
        out.push_back(r);
    }
    return out;
}

nlohmann::json to_json(const GoalResult& g) {
    return {{"says", g.says}, {"measured", g.measured}, {"met", g.met}, {"evidence", g.evidence}};
}

GoalResult goal_result_from_json(const nlohmann::json& j) {
    GoalResult g;
    g.says = j.value("says", "");
    g.measured = j.value("measured", false);
    g.met = j.value("met", false);
    g.evidence = j.value("evidence", "");
    return g;
}

}  // namespace cudalings
