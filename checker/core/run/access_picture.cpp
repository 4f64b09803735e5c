#include "access_picture.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "text.h"

namespace cudalings {
namespace {

constexpr int kAccessLanes = 32;

template <typename T>
std::vector<std::optional<T>> per_lane(const nlohmann::json& j, const char* key) {
    std::vector<std::optional<T>> out(kAccessLanes);
    const auto& v = j.at(key);
    if (!v.is_array() || v.size() != kAccessLanes)
        throw std::runtime_error(std::string("bad ") + key);
    for (int lane = 0; lane < kAccessLanes; ++lane)
        if (!v[lane].is_null()) out[lane] = v[lane].get<T>();
    return out;
}

template <typename T>
nlohmann::json lanes_json(const std::vector<std::optional<T>>& v) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& x : v) out.push_back(x ? nlohmann::json(*x) : nlohmann::json());
    return out;
}

std::string one_decimal(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return buf;
}

// A row of one character per lane: the tens or the ones of each lane's value ('.' inactive).
std::string digit_row(const std::vector<std::optional<unsigned>>& v, bool tens) {
    std::string row;
    for (const auto& x : v) row += x ? char('0' + (tens ? (*x / 10) % 10 : *x % 10)) : '.';
    return row;
}

// "step.cu:27" (the file's name without its folders: the text stays within 80 columns).
std::string where(const AccessPicture& p) {
    const auto slash = p.file.rfind('/');
    return (slash == std::string::npos ? p.file : p.file.substr(slash + 1)) + ":" +
           std::to_string(p.line);
}

std::string what(const AccessPicture& p) {
    return std::string(p.shared ? "shared " : "global ") + (p.store ? "store" : "load") + " of " +
           p.array + " (" + std::to_string(p.bytes) + " B per lane, " + std::to_string(p.active) +
           " lane" + (p.active == 1 ? "" : "s") + ")";
}

// Which request the picture is: "the worst warp of case 255×257: block (0,0,0), warp 3".
std::string which(const AccessPicture& p) {
    return "the worst warp of case " + case_size(p) + ": block (" + std::to_string(p.block[0]) +
           "," + std::to_string(p.block[1]) + "," + std::to_string(p.block[2]) + "), warp " +
           std::to_string(p.warp);
}

}  // namespace

std::string case_size(const AccessPicture& p) {
    return p.case_name.substr(0, p.case_name.find(", "));
}

nlohmann::json to_json(const AccessPicture& p) {
    nlohmann::json j{{"v", 1},
                     {"case", p.case_name},
                     {"file", p.file},
                     {"line", p.line},
                     {"message", p.message},
                     {"space", p.shared ? "shared" : "global"},
                     {"op", p.store ? "store" : "load"},
                     {"bytes", p.bytes},
                     {"array", p.array},
                     {"array_bytes", p.array_bytes},
                     {"block", p.block},
                     {"warp", p.warp},
                     {"active", p.active},
                     {"offsets", lanes_json(p.offsets)}};
    if (p.shared) {
        j["banks"] = lanes_json(p.banks);
        j["degree"] = p.degree;
        j["wavefronts"] = p.wavefronts;
        j["ideal_wavefronts"] = p.ideal_wavefronts;
    } else {
        j["sectors"] = p.sectors;
        j["lane_sector"] = lanes_json(p.lane_sector);
        j["lines"] = p.lines;
        j["ideal_sectors"] = p.ideal_sectors;
    }
    return j;
}

AccessPicture access_picture_from_json(const nlohmann::json& j) {
    if (j.value("v", 0) != 1) throw std::runtime_error("unknown access picture format");
    AccessPicture p;
    p.file = j.value("file", "");
    p.line = j.value("line", 0);
    p.message = j.value("message", "");
    p.case_name = j.value("case", "");
    p.shared = j.at("space").get<std::string>() == "shared";
    p.store = j.at("op").get<std::string>() == "store";
    p.bytes = j.at("bytes").get<unsigned>();
    p.array = j.at("array").get<std::string>();
    p.array_bytes = j.value("array_bytes", std::uint64_t{0});
    p.block = j.value("block", std::vector<unsigned>{0, 0, 0});
    if (p.block.size() != 3) throw std::runtime_error("bad block");
    p.warp = j.value("warp", 0u);
    p.active = j.at("active").get<unsigned>();
    p.offsets = per_lane<long long>(j, "offsets");
    if (p.shared) {
        p.banks = per_lane<unsigned>(j, "banks");
        p.degree = j.at("degree").get<unsigned>();
        p.wavefronts = j.at("wavefronts").get<unsigned>();
        p.ideal_wavefronts = j.at("ideal_wavefronts").get<unsigned>();
    } else {
        p.sectors = j.at("sectors").get<std::vector<long long>>();
        p.lane_sector = per_lane<unsigned>(j, "lane_sector");
        for (const auto& s : p.lane_sector)
            if (s && *s >= p.sectors.size()) throw std::runtime_error("bad lane_sector");
        p.lines = j.at("lines").get<unsigned>();
        p.ideal_sectors = j.at("ideal_sectors").get<unsigned>();
    }
    return p;
}

namespace {

// Sectors (global) or wavefronts (shared) beyond what the active lanes need.
unsigned excess(const AccessPicture& p) {
    const std::size_t cost = p.shared ? p.wavefronts : p.sectors.size();
    const std::size_t ideal = p.shared ? p.ideal_wavefronts : p.ideal_sectors;
    return cost > ideal ? unsigned(cost - ideal) : 0u;
}

bool same_access(const AccessPicture& a, const AccessPicture& b) {
    return a.file == b.file && a.line == b.line && a.shared == b.shared && a.store == b.store &&
           a.array == b.array && a.bytes == b.bytes;
}

// Adds `more` to `kept`, one picture per access (file, line, space, direction, array, width):
// the one with the most active lanes; among those, with `worst`, the one with the most excess
// sectors or wavefronts, else the first; in line order.
void keep_widest(std::vector<AccessPicture>& kept, std::vector<AccessPicture> more, bool worst) {
    for (auto& p : more) {
        auto same = std::find_if(kept.begin(), kept.end(),
                                 [&](const AccessPicture& k) { return same_access(k, p); });
        if (same == kept.end())
            kept.push_back(std::move(p));
        else if (p.active > same->active ||
                 (worst && p.active == same->active && excess(p) > excess(*same)))
            *same = std::move(p);
    }
    std::stable_sort(kept.begin(), kept.end(),
                     [](const auto& a, const auto& b) { return a.line < b.line; });
}

}  // namespace

std::vector<AccessPicture> access_pictures(const CaseResult& c) {
    std::vector<AccessPicture> out;
    for (const auto& f : c.emulator) {
        if (f.kind != "access") continue;
        try {
            nlohmann::json j = nlohmann::json::parse(f.detail);
            j["file"] = f.file;
            j["line"] = f.line;
            j["message"] = f.message;
            j["case"] = c.name;
            out.push_back(access_picture_from_json(j));
        } catch (const std::exception&) {
            // A picture of another format (a newer emulator): not drawn.
        }
    }
    // One picture per access: several launches (the passes of a reduction) each sent theirs.
    std::vector<AccessPicture> kept;
    keep_widest(kept, std::move(out), true);
    return kept;
}

const CaseResult* explained_case(const std::vector<CaseResult>& cases) {
    // The case whose every access line shows the most of a warp (a 2^14×4 matrix keeps 4 lanes
    // of a warp busy where a tile reads its rows, a 255×257 one all 32), the largest of those.
    const CaseResult* best = nullptr;
    unsigned best_lanes = 0;
    for (const auto& c : cases) {
        if (c.verdict != Verdict::Pass) continue;
        // Teaching output: the emulator's metrics (in the case's detail) or pictures. A case of
        // launches only (the largest sizes) has a detail but no metrics.
        const bool teaches = std::any_of(c.emulator.begin(), c.emulator.end(), [](const auto& f) {
            return f.kind == "metric" || f.kind == "access";
        });
        if (!teaches) continue;
        const auto pictures = access_pictures(c);
        unsigned lanes = pictures.empty() ? 0u : 32u;
        for (const auto& p : pictures) lanes = std::min(lanes, p.active);
        if (!best || lanes > best_lanes || (lanes == best_lanes && c.n >= best->n)) {
            best = &c;
            best_lanes = lanes;
        }
    }
    return best;
}

std::vector<AccessPicture> step_access_pictures(const std::vector<CaseResult>& cases) {
    // The largest case first: of the cases whose picture of an access has as many lanes, the
    // largest one's stays (a 1×33 matrix's whole warp is one row of a transposed column, a
    // picture of nothing the lesson means).
    std::vector<const CaseResult*> passed;
    for (const auto& c : cases)
        if (c.verdict == Verdict::Pass) passed.push_back(&c);
    std::stable_sort(passed.begin(), passed.end(),
                     [](const CaseResult* a, const CaseResult* b) { return a->n > b->n; });
    std::vector<AccessPicture> kept;
    for (const CaseResult* c : passed) keep_widest(kept, access_pictures(*c), false);
    return kept;
}

std::string access_verdict(const AccessPicture& p) {
    if (p.shared) {
        if (p.degree <= 1) return "no bank conflict";
        return std::to_string(p.degree) + "-way bank conflict (" + std::to_string(p.wavefronts) +
               " wavefronts where " + std::to_string(p.ideal_wavefronts) + " would do)";
    }
    const std::size_t n = p.sectors.size();
    const std::string sectors = std::to_string(n) + " sector" + (n == 1 ? "" : "s");
    if (n <= p.ideal_sectors) return sectors + " = coalesced";
    return sectors + " where " + std::to_string(p.ideal_sectors) + " would do (" +
           one_decimal(double(n) / std::max(1u, p.ideal_sectors)) + "x the traffic)";
}

std::string access_text(const AccessPicture& p, const std::string& indent) {
    std::ostringstream s;
    s << indent << where(p) << "  " << what(p) << "\n"
      << indent << "  " << access_verdict(p) << "\n";
    if (!p.case_name.empty()) s << indent << "  " << which(p) << "\n";
    std::vector<std::optional<unsigned>> lanes(kAccessLanes);
    for (int lane = 0; lane < kAccessLanes; ++lane) lanes[lane] = unsigned(lane);
    auto rows = [&](const char* label, const std::vector<std::optional<unsigned>>& v) {
        unsigned most = 0;
        for (const auto& x : v)
            if (x) most = std::max(most, *x);
        char head[16];
        std::snprintf(head, sizeof head, "  %-8s", label);
        if (most >= 10) {
            s << indent << head << digit_row(v, true) << "\n";
            std::snprintf(head, sizeof head, "  %-8s", "");
        }
        s << indent << head << digit_row(v, false) << "\n";
    };
    rows("lane", lanes);
    if (p.shared) {
        rows("bank", p.banks);
    } else {
        rows("sector", p.lane_sector);
        s << indent << "  sectors at byte";
        for (std::size_t i = 0; i < p.sectors.size() && i < 8; ++i)
            s << (i ? ", " : " ") << p.sectors[i];
        if (p.sectors.size() > 8) s << ", ...";
        s << " of " << p.array << "\n";
    }
    return s.str();
}

std::string access_svg(const AccessPicture& p) {
    // Lanes in a row of 32 on top, the sectors (or banks) they touched in a row below, a line
    // from each active lane to its target.
    const int left = 52, cell = 20, top = 26, box = 16, bottom = 118, width = left + 32 * cell + 16;
    const int height = bottom + box + 58;
    std::ostringstream s;
    const std::string at = where(p);
    s << "<svg class=\"access\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width
      << "\" height=\"" << height << "\" viewBox=\"0 0 " << width << " " << height
      << "\" role=\"img\" aria-label=\"" << markup_escape(at + " " + what(p)) << "\" data-file=\""
      << markup_escape(p.file) << "\" data-line=\"" << p.line << "\" data-space=\""
      << (p.shared ? "shared" : "global") << "\" data-active=\"" << p.active << "\"";
    if (p.shared)
        s << " data-degree=\"" << p.degree << "\"";
    else
        s << " data-sectors=\"" << p.sectors.size() << "\"";
    s << ">\n  <title>"
      << markup_escape(at + ": " + p.message + " (block (" + std::to_string(p.block[0]) + "," +
                       std::to_string(p.block[1]) + "," + std::to_string(p.block[2]) + "), warp " +
                       std::to_string(p.warp) +
                       (p.case_name.empty() ? "" : ", case " + p.case_name) + ")")
      << "</title>\n";
    s << "  <text x=\"0\" y=\"" << top + 12 << "\">lanes</text>\n";
    auto lane_x = [&](int lane) { return left + lane * cell; };
    for (int lane = 0; lane < kAccessLanes; ++lane) {
        const bool on = p.offsets[lane].has_value();
        s << "  <rect class=\"lane" << (on ? "" : " idle") << "\" x=\"" << lane_x(lane) << "\" y=\""
          << top << "\" width=\"" << box << "\" height=\"" << box << "\"><title>lane " << lane
          << (on ? ": byte " + std::to_string(*p.offsets[lane]) + " of " + markup_escape(p.array)
                 : std::string(": inactive"))
          << "</title></rect>\n";
        if (lane % 8 == 0)
            s << "  <text x=\"" << lane_x(lane) << "\" y=\"" << top - 6 << "\">" << lane
              << "</text>\n";
    }
    // The targets: the 32 banks, or the sectors touched (at most 32 drawn, evenly spaced).
    std::vector<int> target_x;
    std::vector<bool> hot;  // a conflicting bank, or a sector beyond the coalesced count
    std::vector<std::string> target_title;
    std::ostringstream targets;
    if (p.shared) {
        std::map<unsigned, std::set<long long>> words;  // bank -> distinct words
        for (int lane = 0; lane < kAccessLanes; ++lane)
            if (p.banks[lane] && p.offsets[lane])
                words[*p.banks[lane]].insert(*p.offsets[lane] / 4);
        for (unsigned b = 0; b < 32; ++b) {
            const std::size_t n = words.count(b) ? words[b].size() : 0;
            target_x.push_back(lane_x(int(b)));
            hot.push_back(n > 1);
            target_title.push_back("bank " + std::to_string(b) + ": " + std::to_string(n) +
                                   " word" + (n == 1 ? "" : "s"));
        }
        targets << "  <text x=\"0\" y=\"" << bottom + 12 << "\">banks</text>\n";
        // Bank numbers under every eighth bank, and each conflicting bank's count of words.
        for (unsigned b = 0; b < 32; ++b) {
            const std::size_t n = words.count(b) ? words[b].size() : 0;
            if (n > 1)
                targets << "  <text class=\"ways\" x=\"" << lane_x(int(b)) << "\" y=\""
                        << bottom - 6 << "\">" << n << "</text>\n";
            if (b % 8 == 0)
                targets << "  <text x=\"" << lane_x(int(b)) << "\" y=\"" << bottom + box + 12
                        << "\">" << b << "</text>\n";
        }
    } else {
        const std::size_t n = std::min<std::size_t>(p.sectors.size(), 32);
        const int span = 32 * cell;
        const int step = n ? std::max(cell, int(span / int(n))) : cell;
        for (std::size_t i = 0; i < n; ++i) {
            target_x.push_back(left + int(i) * step + (step - box) / 2);
            hot.push_back(p.sectors.size() > p.ideal_sectors);
            target_title.push_back("sector at byte " + std::to_string(p.sectors[i]) + " of " +
                                   p.array);
        }
        // The 128-byte lines: a band behind the sectors of each.
        std::size_t i = 0;
        while (i < n) {
            std::size_t j = i;
            auto line_of = [&](std::size_t k) {
                return p.sectors[k] >= 0 ? p.sectors[k] / 128 : (p.sectors[k] - 127) / 128;
            };
            while (j + 1 < n && line_of(j + 1) == line_of(i)) ++j;
            targets << "  <rect class=\"line128\" x=\"" << target_x[i] - 2 << "\" y=\""
                    << bottom - 3 << "\" width=\"" << target_x[j] - target_x[i] + box + 4
                    << "\" height=\"" << box + 6 << "\" rx=\"3\"/>\n";
            i = j + 1;
        }
        targets << "  <text x=\"0\" y=\"" << bottom + 12 << "\">sectors</text>\n";
    }
    s << targets.str();
    for (int lane = 0; lane < kAccessLanes; ++lane) {
        std::optional<unsigned> t = p.shared ? p.banks[lane] : p.lane_sector[lane];
        if (!p.offsets[lane] || !t || *t >= target_x.size()) continue;
        s << "  <line class=\"link" << (hot[*t] ? " hot" : "") << "\" x1=\""
          << lane_x(lane) + box / 2 << "\" y1=\"" << top + box << "\" x2=\""
          << target_x[*t] + box / 2 << "\" y2=\"" << bottom << "\"/>\n";
    }
    for (std::size_t t = 0; t < target_x.size(); ++t)
        s << "  <rect class=\"" << (p.shared ? "bank" : "sector") << (hot[t] ? " hot" : "")
          << "\" x=\"" << target_x[t] << "\" y=\"" << bottom << "\" width=\"" << box
          << "\" height=\"" << box << "\"><title>" << markup_escape(target_title[t])
          << "</title></rect>\n";
    s << "  <text class=\"caption\" x=\"0\" y=\"" << bottom + box + 30 << "\">"
      << markup_escape(at + "  " + what(p)) << "</text>\n"
      << "  <text class=\"caption verdict"
      << (hot.end() != std::find(hot.begin(), hot.end(), true) ? " hot" : "") << "\" x=\"0\" y=\""
      << bottom + box + 48 << "\">" << markup_escape(access_verdict(p)) << "</text>\n</svg>\n";
    return s.str();
}

}  // namespace cudalings
