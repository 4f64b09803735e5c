// A stand-in for the NVIDIA driver's libcuda.so.1, for `cudalings doctor`'s tests: it plays a
// driver and GPUs described by the environment, so that conditions this machine does not have
// (an old driver, an old GPU) are tested through the real code path (CUDALINGS_LIBCUDA).
//
//   FAKE_CUDA_DRIVER_VERSION  what cuDriverGetVersion says (default 13000: CUDA 13.0)
//   FAKE_CUDA_GPUS            "NAME:MAJOR.MINOR,..." (default: no GPU)
//   FAKE_CUDA_INIT_ERROR      a non-zero cuInit result (e.g. 100: no device)
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Gpu {
    std::string name;
    int major = 0, minor = 0;
};

std::vector<Gpu> gpus() {
    std::vector<Gpu> out;
    const char* text = std::getenv("FAKE_CUDA_GPUS");
    std::string all = text ? text : "";
    std::size_t start = 0;
    while (start < all.size()) {
        std::size_t end = all.find(',', start);
        if (end == std::string::npos) end = all.size();
        const std::string one = all.substr(start, end - start);
        const auto colon = one.rfind(':');
        if (colon != std::string::npos) {
            Gpu g;
            g.name = one.substr(0, colon);
            std::sscanf(one.c_str() + colon + 1, "%d.%d", &g.major, &g.minor);
            out.push_back(g);
        }
        start = end + 1;
    }
    return out;
}

}  // namespace

extern "C" {

int cuInit(unsigned) {
    const char* e = std::getenv("FAKE_CUDA_INIT_ERROR");
    return e ? std::atoi(e) : 0;
}

int cuDriverGetVersion(int* version) {
    const char* v = std::getenv("FAKE_CUDA_DRIVER_VERSION");
    *version = v ? std::atoi(v) : 13000;
    return 0;
}

int cuDeviceGetCount(int* count) {
    *count = static_cast<int>(gpus().size());
    return 0;
}

int cuDeviceGet(int* device, int ordinal) {
    *device = ordinal;
    return 0;
}

int cuDeviceGetName(char* name, int length, int device) {
    const auto all = gpus();
    if (device < 0 || device >= static_cast<int>(all.size())) return 101;
    std::strncpy(name, all[static_cast<std::size_t>(device)].name.c_str(),
                 static_cast<std::size_t>(length));
    return 0;
}

int cuDeviceGetAttribute(int* value, int attribute, int device) {
    const auto all = gpus();
    if (device < 0 || device >= static_cast<int>(all.size())) return 101;
    const auto& g = all[static_cast<std::size_t>(device)];
    *value = attribute == 75 ? g.major : attribute == 76 ? g.minor : 0;
    return 0;
}

int cuGetErrorString(int, const char** text) {
    *text = "fake driver error";
    return 0;
}

}  // extern "C"
