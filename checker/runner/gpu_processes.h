// How many processes hold a compute context on this process's GPU, as NVML counts them (the
// driver's management library, opened at run time: a machine without the driver still runs the
// checker). The judge split times the reference only while no process of the learner's is on
// the GPU (runner/timing.h): the count there must be the judge's own processes'.
#pragma once

namespace runner {

// The number of processes with a compute context on the current CUDA device, or -1 where NVML
// cannot say (no library, no permission, a container that hides other processes: a list that
// leaves out this process itself is taken as one that cannot be trusted).
int compute_processes_on_gpu();

}  // namespace runner
