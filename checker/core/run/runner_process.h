// A runner child (cudalings-runner, or cudalings-runner-emu): started with a fresh key, its
// authenticated events read back. What the checker's pipeline (check.h) and the builder's
// listing of a lesson's entry points (builder.h) start a runner with.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "report.h"
#include "sandbox.h"
#include "supervise.h"

namespace cudalings {

// Starts the runner with a fresh key and returns its authenticated events. With a sandbox
// (sandbox.h), the runner runs inside it and sees what `view` names. With `until_done` and no
// sandbox, the call returns once the runner has said "done": a check's result is complete then,
// and the runner's exit (CUDA's teardown, ~0.1 s on the H200) goes on while the checker
// reports. A sandboxed run (grading) waits for the exit, as every run did before.
//
// With `stop_after`, the runner is stopped (its group killed; the result says cancelled) as soon
// as an authenticated event satisfies it: a check that ends at its first failing case.
ChildResult run_runner(const std::vector<std::string>& argv, ChildOptions options,
                       std::vector<nlohmann::json>& events, int* forged = nullptr,
                       const Sandbox* sandbox = nullptr, const SandboxView& view = {},
                       bool until_done = false,
                       const std::function<bool(const nlohmann::json&)>& stop_after = {});

// What one runner process of a check said (its events), folded into the check's report and its
// cases so far (by index; `total` listed, `next_case` the first not run); returns the case in
// progress when the process ended inside one (-1 otherwise), what it was doing then (`phase`:
// "loading", "loaded", "setup", "call", "sync", "timing") and whether it said "done".
int read_runner_events(const std::vector<nlohmann::json>& events, bool first_child,
                       StepReport& report, std::map<int, CaseResult>& cases, int& total,
                       int& next_case, std::string& phase, bool& done);

// A sentence about what ended a runner child early.
std::string describe_end(const ChildResult& child, double idle_seconds);

}  // namespace cudalings
