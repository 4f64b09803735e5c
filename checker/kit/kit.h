// The lesson kit: everything a lesson's checks (checks/NN_topic/checks.cu) include. See
// docs/adding-a-lesson.md for the path from nothing to a new lesson.
//   case.h     cases: shapes, distributions, named parameters, labels, size ladders
//   sample.h   counter-based input values (recomputable anywhere)
//   data.h     inputs, outputs, workspaces: guarded, poisoned, registered with their problem
//   judge.h    compares on the device (expected values streamed), outcomes, helpers
//   problem.h  problems and baselines, and how they register
#pragma once

#include "case.h"
#include "data.h"
#include "device.h"
#include "judge.h"
#include "launch.h"
#include "problem.h"
#include "sample.h"
