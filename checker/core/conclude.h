// The verdict of a step, decided in one place from everything its check found: the cases, the
// timed problems, the sanitizer's findings, and what went wrong around them.
#pragma once

#include "report.h"

namespace cudalings {

// Sets r.verdict, r.reason, r.pattern and r.advice from the facts in r (cases, timings,
// timing_verdict/timing_error, findings, load_error, internal_error). Timings need copy_gbps set.
void conclude(StepReport& r);

}  // namespace cudalings
