// expect: PASS
//
// Tries to change what the sandbox's file system looks like: mount (a tmpfs over its own /tmp),
// umount2, chroot, pivot_root, and the new mount API (open_tree, fsopen, move_mount,
// mount_setattr). The seccomp filter refuses each (EPERM): PASS; one that works computes a - b
// (WRONG).
//
// It tries only when its PID is tiny (one of the first processes of a fresh PID namespace).
#include <errno.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "vector_add.cuh"

namespace {

std::string misses;  // "call: returned r, errno e (expected E)" for each call that was not refused

// A call the sandbox's seccomp filter refuses: it must fail with `expected`.
void refused(const char* call, long rc, int expected = EPERM) {
    const int error = rc < 0 ? errno : 0;
    if (rc >= 0 || error != expected)
        misses += std::string(call) + ": returned " + std::to_string(rc) + ", errno " +
                  std::to_string(error) + " (expected " + std::to_string(expected) + ")\n";
}

// The filter is in force in this process (seccomp mode 2).
bool filtered() {
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);)
        if (line.rfind("Seccomp:", 0) == 0) return line.find('2') != std::string::npos;
    return false;
}

void probe() {
    refused("mount", ::mount("none", "/tmp", "tmpfs", 0, nullptr));
    refused("umount2", ::umount2("/tmp", MNT_DETACH));
    refused("chroot", ::chroot("/tmp"));
    refused("pivot_root", ::syscall(SYS_pivot_root, "/tmp", "/tmp"));
    refused("open_tree", ::syscall(SYS_open_tree, AT_FDCWD, "/tmp", 0));
    refused("fsopen", ::syscall(SYS_fsopen, "tmpfs", 0));
    refused("move_mount", ::syscall(SYS_move_mount, -1, "", AT_FDCWD, "/tmp", 0));
    refused("mount_setattr", ::syscall(SYS_mount_setattr, AT_FDCWD, "/tmp", 0, nullptr, 0));
}

// True when every call was refused as it should be (what is not is said on stderr).
bool all_refused() {
    if (!filtered()) misses += "no seccomp filter in force\n";
    probe();
    if (!misses.empty()) (void)!::write(2, misses.data(), misses.size());
    return misses.empty();
}

}  // namespace

__global__ void add(const float* a, const float* b, float* c, size_t n, float sign) {
    size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + sign * b[i];
}

extern "C" cudaError_t vector_add(const float* a, const float* b, float* c, size_t n,
                                  cudaStream_t stream) {
    static bool once = false, ok = true;
    if (!once && ::getpid() < 100) {  // only as one of the first processes of a PID namespace
        once = true;
        ok = all_refused();
    }
    add<<<static_cast<unsigned int>((n + 255) / 256), 256, 0, stream>>>(a, b, c, n,
                                                                        ok ? 1.0f : -1.0f);
    return cudaGetLastError();
}
