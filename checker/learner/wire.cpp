#include "wire.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

namespace cudalings::wire {

bool send(int socket, const Message& m, const int* fds, int count) {
    return send_bytes(socket, &m, sizeof m, fds, count);
}

bool receive(int socket, Message& m, std::vector<int>* fds) {
    return receive_bytes(socket, &m, sizeof m, fds);
}

bool send_bytes(int socket, const void* data, std::size_t bytes, const int* fds, int count) {
    if (count < 0 || count > 8) return false;
    iovec iov{const_cast<void*>(data), bytes};
    msghdr h{};
    h.msg_iov = &iov;
    h.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 8)] = {};
    if (count > 0) {
        h.msg_control = control;
        h.msg_controllen = CMSG_SPACE(sizeof(int) * count);
        cmsghdr* c = CMSG_FIRSTHDR(&h);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * count);
        std::memcpy(CMSG_DATA(c), fds, sizeof(int) * count);
    }
    ssize_t sent;
    do sent = ::sendmsg(socket, &h, MSG_NOSIGNAL);
    while (sent < 0 && errno == EINTR);
    return sent == static_cast<ssize_t>(bytes);
}

bool receive_bytes(int socket, void* data, std::size_t bytes, std::vector<int>* fds) {
    iovec iov{data, bytes};
    msghdr h{};
    h.msg_iov = &iov;
    h.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 8)] = {};
    h.msg_control = control;
    h.msg_controllen = sizeof control;
    ssize_t got;
    do got = ::recvmsg(socket, &h, MSG_CMSG_CLOEXEC);
    while (got < 0 && errno == EINTR);
    for (cmsghdr* c = CMSG_FIRSTHDR(&h); c; c = CMSG_NXTHDR(&h, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        const std::size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (std::size_t i = 0; i < n; ++i) {
            int fd;
            std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
            if (fds)
                fds->push_back(fd);
            else
                ::close(fd);
        }
    }
    // A short or truncated message is not one: a learner cannot make the judge read half of it.
    return got == static_cast<ssize_t>(bytes) && !(h.msg_flags & (MSG_TRUNC | MSG_CTRUNC));
}

namespace {
constexpr std::size_t kPiece = 32 * 1024;
}

bool send_with(int socket, Message m, const std::string& payload, const int* fds, int count) {
    if (payload.size() > kMaxPayload) return false;
    m.payload = static_cast<std::uint32_t>(payload.size());
    if (!send(socket, m, fds, count)) return false;
    for (std::size_t at = 0; at < payload.size(); at += kPiece)
        if (!send_bytes(socket, payload.data() + at, std::min(kPiece, payload.size() - at), nullptr,
                        0))
            return false;
    return true;
}

bool receive_with(int socket, Message& m, std::string& payload, std::vector<int>* fds) {
    payload.clear();
    if (!receive(socket, m, fds)) return false;
    if (m.payload > kMaxPayload) return false;
    payload.resize(m.payload);
    for (std::size_t at = 0; at < payload.size(); at += kPiece)
        if (!receive_bytes(socket, &payload[at], std::min(kPiece, payload.size() - at), nullptr))
            return false;
    return true;
}

void wait_readable(int socket, double seconds) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    pollfd p{socket, POLLIN, 0};
    do {
        if (::poll(&p, 1, 0) != 0) return;  // readable, hung up, or an error: the read says
    } while (std::chrono::steady_clock::now() < until);
}

void set_text(Message& m, const std::string& text) {
    std::snprintf(m.text, sizeof m.text, "%s", text.c_str());
}

}  // namespace cudalings::wire
