// What the learner's checks found, kept in the state directory for `cudalings report`: the last
// report of every step (results/<lesson>/<step>.json) and the last staircase of every lesson
// (staircases/<lesson>.json), both in their --json form, and the access pictures of the last
// check of every step that had them (explained/<lesson>/<step>.json: {"step", "access"}, the
// report's "access"), which a later check without --explain leaves in place; and the step the
// learner is on (current-step.json: {"step"}), which `watch` and a `check` of one step set.
#pragma once

#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "report.h"

namespace cudalings {

// False when the state directory cannot be written (the check itself is unaffected).
bool record_result(const std::string& state_dir, const StepReport& report);
bool record_staircase(const std::string& state_dir, const Staircase& staircase);
// Nothing to do (true) when the report has no access pictures.
bool record_explained(const std::string& state_dir, const StepReport& report);

// The step `watch` or the last `check` of one step was on ("" when none was recorded).
bool record_current_step(const std::string& state_dir, const std::string& step);
std::string load_current_step(const std::string& state_dir);

// The last report of one step ("01_vector_add/03_float4"), when one was kept and reads back.
std::optional<nlohmann::json> load_result(const std::string& state_dir, const std::string& step);
// Step name -> its last report; lesson id -> its last staircase.
std::map<std::string, nlohmann::json> load_results(const std::string& state_dir);
std::map<std::string, nlohmann::json> load_staircases(const std::string& state_dir);
std::map<std::string, nlohmann::json> load_explained(const std::string& state_dir);

}  // namespace cudalings
