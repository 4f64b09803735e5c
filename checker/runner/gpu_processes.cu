#include "gpu_processes.h"

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <unistd.h>

namespace runner {
namespace {

// NVML's C interface, as far as it is used here (nvml.h, API version 12 and on: the _v3 query
// takes this four-field record).
using Device = void*;
struct ProcessInfo {
    unsigned int pid;
    unsigned long long used_gpu_memory;
    unsigned int gpu_instance_id;
    unsigned int compute_instance_id;
};
using InitFn = int (*)();
using ByPciFn = int (*)(const char*, Device*);
using ProcessesFn = int (*)(Device, unsigned int*, ProcessInfo*);
constexpr int kSuccess = 0, kInsufficientSize = 7;

struct Nvml {
    ProcessesFn processes = nullptr;
    Device device = nullptr;
    bool usable = false;
};

const Nvml& nvml() {
    static const Nvml n = [] {
        Nvml out;
        void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!lib) return out;
        auto init = reinterpret_cast<InitFn>(dlsym(lib, "nvmlInit_v2"));
        auto by_pci = reinterpret_cast<ByPciFn>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
        out.processes =
            reinterpret_cast<ProcessesFn>(dlsym(lib, "nvmlDeviceGetComputeRunningProcesses_v3"));
        int device = 0;
        char bus[32] = {};
        if (!init || !by_pci || !out.processes || init() != kSuccess ||
            cudaGetDevice(&device) != cudaSuccess ||
            cudaDeviceGetPCIBusId(bus, sizeof bus, device) != cudaSuccess ||
            by_pci(bus, &out.device) != kSuccess)
            return out;
        out.usable = true;
        return out;
    }();
    return n;
}

}  // namespace

int compute_processes_on_gpu() {
    const Nvml& n = nvml();
    if (!n.usable) return -1;
    ProcessInfo infos[64];
    unsigned int count = 64;
    const int r = n.processes(n.device, &count, infos);
    if (r == kInsufficientSize) return static_cast<int>(count);
    if (r != kSuccess) return -1;
    // This process has a context: a list without any process at all hides them (a container).
    return count == 0 ? -1 : static_cast<int>(count);
}

}  // namespace runner
