// A step's performance goals under emulation (#28 point 5): what a GPU's timing would show,
// read from the emulator's access pictures, so a learner without a GPU sees whether a
// performance step did what it is for. A goal names an array (the name the emulator gives the
// allocation or the __shared__ variable), never a line: the learner's lines move.
//
// lesson.json, on a step:
//   "goals": [{"metric": "bank-conflicts", "array": "tile",
//              "says": "no bank conflicts in the tile"}]
// metric: "bank-conflicts" (every shared access to the array: one word per bank and request),
//         "coalesced" (every global access to it with 8 or more lanes: at most one sector per
//         128 bytes beyond what its bytes need, which allows a row that starts mid-sector),
//         "vector-width" (some global access to it moves "bytes" per lane, 16 by default);
// "op": "load" or "store" narrows it to one direction.
// A goal never changes a verdict or what is done: it is reported beside them.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "access_picture.h"
#include "manifest.h"  // PerformanceGoal

namespace cudalings {

struct GoalResult {
    std::string says;
    bool measured = false;  // an access the goal is about was seen
    bool met = false;
    std::string evidence;  // "line 47 `tile[x][y] = ...`: 2-way bank conflict (...)"
};

// The goals against a step's pictures (step_access_pictures of the cases that passed); the
// evidence quotes the picture's line from its file where it can be read.
std::vector<GoalResult> evaluate_goals(const std::vector<PerformanceGoal>& goals,
                                       const std::vector<AccessPicture>& pictures);

nlohmann::json to_json(const GoalResult& g);
GoalResult goal_result_from_json(const nlohmann::json& j);

}  // namespace cudalings
