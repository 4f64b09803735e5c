// The verdict of a step, decided in one place from everything its check found: the cases, the
// timed problems, the sanitizer's findings, and what went wrong around them.
#pragma once

#include "report.h"

namespace cudalings {

// Sets r.verdict, r.reason, r.pattern and r.advice from the facts in r (cases, timings,
// timing_verdict/timing_error, findings, load_error, internal_error). Timings need copy_gbps set.
void conclude(StepReport& r);

// The problem's advice for a verdict. A key is a verdict name ("TIMEOUT"), or a verdict name with
// the words that must appear in the reason ("MEMORY_ERROR/out of bounds|Invalid __global__
// read"): a MEMORY_ERROR for a read past the end gets advice that a skipped barrier does not.
// A qualified key that matches wins over the plain one; none matching gives "".
std::string advice_for(const std::vector<std::pair<std::string, std::string>>& advice,
                       const std::string& verdict, const std::string& reason);

}  // namespace cudalings
