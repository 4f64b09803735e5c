// `cudalings dev check`: the course's own consistency, before anything runs — for whoever writes
// lessons (and CI). Every rule names the file to fix.
//   files      every step of the manifest has a skeleton (lessons/) and a solution (solutions/),
//              and no step file lies there that the manifest does not list
//   hints      every step has a hint
//   gpu        a step whose solution the emulator cannot build (CUB, inline PTX) says
//              "needs_gpu": true, so that a learner without a GPU is not held up by it
//   problems   every step's problem exists in its lesson's checks
//   baselines  every baseline names a problem of the lesson and is registered by its baselines
//   fixtures   every fixture, corpus submission (checks/*/corpus) and hostile grading
//              submission has a valid header (fixtures.h: verdicts, an existing step, known
//              keys), and every patch still applies to its base
//   links      lesson READMEs link only to files inside the course
//   profile    every metric a lesson chooses for `cudalings profile` is one the course explains
//              (profile.h's catalogue), none twice, none of the summary's
//   generated  every generated region of the READMEs (the course table, the lessons' staircases)
//              is what `cudalings dev update` makes of its sources (generated.h): a hand edit, or
//              a source changed without the update, is a finding that names the command
//   coverage   (`dev check --coverage`, checker/core/tools/coverage.h) every step's solution, run
//              through the emulator's race-checked cases, runs every line of its device code,
//              two blocks in a launch and every loop twice in one thread; lines marked
//              `// dev: not covered (why)` are exempt and listed
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "manifest.h"

namespace cudalings {

struct DevFinding {
    std::string rule;  // "files", "hints", "gpu", "problems", "baselines", "fixtures", "links",
                       // "profile", "summary", "generated"
    std::string file;  // what to fix, relative to the course root
    std::string message;
};

// What a lesson's built checks register: problem names, and (problem, baseline) pairs. The CLI
// asks the runner; tests can answer directly. An empty `error` means the lesson's checks built.
struct ChecksContents {
    std::vector<std::string> problems;
    std::vector<std::pair<std::string, std::string>> baselines;
    std::string error;
};
using ChecksLister = std::function<ChecksContents(const LessonInfo&)>;

// Every finding in the course at `root` (manifest already read from it). With `cmake` (a CMake
// program) the pristine record is checked too (generated.h's stale_generated).
std::vector<DevFinding> dev_check(const std::string& root, const Manifest& manifest,
                                  const ChecksLister& list_checks, const std::string& cmake = "");

}  // namespace cudalings
