// What the checker's runner does differently when it is built for the emulator
// (cudalings-runner-emu): smaller cases, the emulator's findings attached to each case, and
// specs that cannot be emulated reported as unsupported. Included by checker/runner/main.cpp
// only when CUDALINGS_EMULATOR is defined.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "../core/cases.h"
#include "cudalings_emu/emulator.h"
#include "harness.h"

#ifndef CUDALINGS_EMU_GPU_ONLY_SPECS
#define CUDALINGS_EMU_GPU_ONLY_SPECS ""
#endif

namespace cudalings_emu_runner {

inline std::uint64_t& max_n() {
    static std::uint64_t n = 0;
    return n;
}

// Cases above max_n are dropped, except the first of them, which runs at max_n: the edge
// cases stay, the big sizes become one mid-sized case.
inline void cap(std::vector<harness::CaseDef>& cases) {
    std::uint64_t limit = max_n();
    if (!limit) return;
    std::vector<harness::CaseDef> kept;
    bool replaced = false;
    for (auto c : cases) {
        if (c.n <= limit) {
            kept.push_back(c);
        } else if (!replaced) {
            replaced = true;
            bool present = false;
            for (const auto& k : cases) present = present || k.n == limit;
            if (present) continue;
            auto comma = c.name.find(',');
            c.n = limit;
            c.name = "n=" + cudalings::format_size(limit) +
                     (comma == std::string::npos ? std::string() : c.name.substr(comma));
            kept.push_back(c);
        }
    }
    cases = kept;
}

// The emulator's findings during a case: an error (race, out of bounds, deadlock, ...) makes
// the case a memory error; the text (file:line of the learner's code) becomes its detail.
inline void attach(nlohmann::json& result) {
    auto found = cudalings_emu::take_diagnostics();
    std::vector<cudalings_emu::Diagnostic> shown;
    const cudalings_emu::Diagnostic* first_error = nullptr;
    bool explain = cudalings_emu::get_options().explain;
    for (const auto& d : found) {
        if (d.severity == "error" || d.severity == "warning" || (explain && d.kind == "metric"))
            shown.push_back(d);
    }
    for (const auto& d : shown)
        if (d.severity == "error") {
            first_error = &d;
            break;
        }
    if (shown.empty()) return;
    std::string text = cudalings_emu::format(shown);
    while (!text.empty() && text.back() == '\n') text.pop_back();
    std::string status = result.value("status", "");
    if (first_error && (status == "pass" || status == "wrong")) {
        result["status"] = "memory";
        result["reason"] = "emulator: " + first_error->kind;
        result["detail"] = text;
    } else {
        std::string detail = result.value("detail", "");
        result["detail"] = detail.empty() ? text : detail + "\n" + text;
    }
    nlohmann::json list = nlohmann::json::array();
    for (const auto& d : shown)
        list.push_back({{"kind", d.kind}, {"severity", d.severity}, {"file", d.file},
                        {"line", d.line}, {"message", d.message}, {"detail", d.detail},
                        {"count", d.count}});
    result["emulator"] = list;
}

inline std::string unsupported_message(const std::string& spec) {
    std::string gpu_only = CUDALINGS_EMU_GPU_ONLY_SPECS;
    return "the checks of `" + spec + "` need a GPU: its spec is not built for the emulator" +
           (gpu_only.empty() ? std::string() : " (gpu-only specs: " + gpu_only + ")");
}

}  // namespace cudalings_emu_runner
