// expect: SUSPECT
// in-process: PASS
// timed: only
// reason: far below what the checker's own clock saw
//
// Claims half the time it took. The sum is right; what is forged is the time. Through the judge
// split the learner's process times each call with its own events and tells the judge in a
// Returned message, whose layout is in the course's public source (checker/learner/wire.h).
// While this file is being loaded, a constructor puts itself between that process and its
// socket (descriptor 3): it keeps the judge's end, gives the process a socketpair of its own in
// its place, and two threads carry every message across, descriptors included, halving the two
// times in each Returned on the way out. The judge must notice from its own clock: the round
// trip it timed is the call's real time plus a cost it measured before any of this code existed.
//
// Only timed on a GPU (untimed there is nothing to forge: the sum is right, PASS; emulated
// checks are never timed). In the runner's own process there is no such socket (descriptor 3
// is not a SOCK_SEQPACKET socket): no proxy, an honest PASS.
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <thread>

#include "vector_add.cuh"

namespace {

// wire::Message: kind at offset 0 (Returned = 4), the learner's events' times as doubles at 48
// (on the stream) and 56 (to after the device's synchronisation).
constexpr std::uint32_t kReturned = 4;
constexpr std::size_t kOnStream = 48, kWholeDevice = 56;

// One message from `from` to `to`, with the descriptors that came with it; Returned's times
// halved when `halve`. False when either end is gone.
bool carry(int from, int to, bool halve) {
    static thread_local char data[1 << 17];
    alignas(cmsghdr) char control[CMSG_SPACE(8 * sizeof(int))];
    iovec io{data, sizeof data};
    msghdr m{};
    m.msg_iov = &io;
    m.msg_iovlen = 1;
    m.msg_control = control;
    m.msg_controllen = sizeof control;
    const ssize_t got = ::recvmsg(from, &m, 0);
    if (got <= 0) return false;
    if (halve && static_cast<std::size_t>(got) >= kWholeDevice + sizeof(double)) {
        std::uint32_t kind;
        std::memcpy(&kind, data, sizeof kind);
        if (kind == kReturned)
            for (std::size_t at : {kOnStream, kWholeDevice}) {
                double t;
                std::memcpy(&t, data + at, sizeof t);
                t *= 0.5;
                std::memcpy(data + at, &t, sizeof t);
            }
    }
    io.iov_len = static_cast<std::size_t>(got);
    if (m.msg_controllen == 0) m.msg_control = nullptr;
    return ::sendmsg(to, &m, 0) == got;
}

__attribute__((constructor)) void stand_between() {
    int type = 0;
    socklen_t length = sizeof type;
    if (::getsockopt(3, SOL_SOCKET, SO_TYPE, &type, &length) != 0 || type != SOCK_SEQPACKET) return;
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET, 0, pair) != 0) return;
    const int judge = ::dup(3);
    if (judge < 0 || ::dup2(pair[0], 3) != 3) return;
    ::close(pair[0]);
    const int mine = pair[1];
    std::thread([judge, mine] {
        while (carry(judge, mine, false)) {
        }
    }).detach();
    std::thread([judge, mine] {
        while (carry(mine, judge, true)) {
        }
    }).detach();
}

}  // namespace

__global__ void add(const float* a, const float* b, float* c, size_t n) {
    size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

extern "C" cudaError_t vector_add(const float* a, const float* b, float* c, size_t n,
                                  cudaStream_t stream) {
    add<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(a, b, c, n);
    return cudaGetLastError();
}
