// expect: CRASH
// in-process: CRASH
// in-process-emulated: WRONG
// reason: out of turn
//
// Searches its whole process, at every call, for anything that would let it speak for the
// judge, and forges with what it finds; it computes nothing and launches nothing.
//  1. Every open descriptor (/proc/self/fd): what it is (pipe, socket and its type, file, memfd)
//     and what it names.
//  2. Every readable mapping (/proc/self/maps), read with process_vm_readv on itself or, where
//     that is refused, pread of /proc/self/mem, page by page where a read fails, so that nothing
//     faults; left alone: [vvar], [vsyscall], this file's own object, mappings without access
//     (the emulator's device memory), of device files, or over 256 MiB. It looks for the
//     runner's result lines ({"event":", "verdict":", "t_ms":) and the names of its key, counter
//     and descriptor. The wire (wire.h) has no magic: its socket is told by its type.
//  3. On every SOCK_SEQPACKET socket, two messages laid out exactly as wire::Message (5,024
//     bytes, one write each): Returning, then Returned with every status 0, a working context
//     and plausible times, as the learner's process says of a call that went well. Then on every
//     socket and pipe, whole lines, a runner's "case: PASS" for 16 indices and "done".
//
// Through the judge split the process is the learner's: descriptors 0 to 3, the last its one
// socket (to its judge); process_vm_readv refused by the filter, /proc/self/mem read; no hit in
// its memory. Its forged Returning and Returned carry no number of the judge's exchange (each
// Call has one, which the real answers repeat): the judge ends the process at the first, CRASH,
// "out of turn". (Before the exchanges were numbered, the judge took the forged Returned as the
// call's, read the outputs itself, unwritten: WRONG; and the real Returned then answered the
// next call, one behind, its outputs read before it was made.) In the runner's own process
// (--in-process) descriptor 3 is the result channel, a pipe, and the heap holds the runner's
// earlier lines and their tags, but nothing names the key: the forged lines carry no tag, the
// checker ignores them, the outputs are unwritten: WRONG under the emulator (2 cores,
// 2026-12-07; forge_with_the_key.cu finds the key by the program's symbol table, and passes
// there). On a GPU the same writes land on the CUDA driver's own descriptors in that process
// too, and every case is CRASH, cudaErrorOperatingSystem (H100, 2026-12-07).
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "vector_add.cuh"

namespace {

// wire::Message (checker/learner/wire.h), byte for byte; `call` is kit::remote::CallMessage.
struct Message {
    std::uint32_t kind = 0, loan = 0;
    std::uint64_t bytes = 0, address = 0;
    std::int32_t status = 0, sync_status = 0, last_status = 0, context_ok = 1;
    double ms = 0, on_stream_us = 0, whole_device_us = 0;
    std::uint32_t flags = 0, payload = 0;
    char text[512] = {};
    alignas(16) unsigned char call[4432] = {};
};
static_assert(sizeof(Message) == 5024, "wire::Message is 5,024 bytes");
constexpr std::uint32_t kReturned = 4, kReturning = 9;

// What would mark the runner's result channel in memory: its lines (their heads are the first
// bytes a freed string loses, their tails are not) and the names of its key, counter, descriptor.
const char* const kNeedles[] = {"{\"event\":\"", "\"verdict\":\"",   "\"t_ms\":",
                                "channel_key",   "channel_sequence", "channel_fd"};
constexpr int kCount = sizeof kNeedles / sizeof kNeedles[0];

// Everything this file writes lives here, so that none of it is found as a hit.
constexpr std::size_t kChunk = 1 << 20, kPage = 4096, kOverlap = 64;
char buffer[kChunk + kOverlap], log_text[16384], lines[4096];
std::size_t logged = 0;

void say(const char* format, ...) {
    va_list args;
    va_start(args, format);
    const int n = std::vsnprintf(log_text + logged, sizeof log_text - logged, format, args);
    va_end(args);
    if (n > 0) logged = std::min(sizeof log_text - 1, logged + static_cast<std::size_t>(n));
}

bool ours(std::uintptr_t p) {  // the three buffers above
    const auto in = [p](const char* a, std::size_t n) { return p - std::uintptr_t(a) < n; };
    return in(buffer, sizeof buffer) || in(log_text, sizeof log_text) || in(lines, sizeof lines);
}

struct Channel {
    int fd, type;  // type: SOCK_STREAM, SOCK_SEQPACKET...; 0 for a pipe
};

// 1. Every descriptor: what it is, and the sockets and pipes among them.
std::vector<Channel> descriptors() {
    std::vector<Channel> found;
    DIR* dir = ::opendir("/proc/self/fd");
    if (!dir) return found;
    const int listing = ::dirfd(dir);
    while (dirent* e = ::readdir(dir)) {
        const int fd = std::atoi(e->d_name);
        struct stat st {};
        if (e->d_name[0] == '.' || fd == listing || ::fstat(fd, &st) != 0) continue;
        char name[256] = "?";
        const std::string link = std::string("/proc/self/fd/") + e->d_name;
        const ssize_t n = ::readlink(link.c_str(), name, sizeof name - 1);
        name[n > 0 ? n : 1] = '\0';
        int type = -1;
        if (S_ISSOCK(st.st_mode)) {
            socklen_t length = sizeof type;
            ::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &length);
        }
        const char* what = S_ISFIFO(st.st_mode)                    ? "pipe"
                           : type == SOCK_SEQPACKET                ? "socket (seqpacket)"
                           : type == SOCK_STREAM                   ? "socket (stream)"
                           : S_ISSOCK(st.st_mode)                  ? "socket (other)"
                           : std::strncmp(name, "/memfd:", 7) == 0 ? "memfd"
                           : S_ISREG(st.st_mode)                   ? "file"
                                                                   : "other";
        say("fd %d: %s, %s\n", fd, what, name);
        if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))
            found.push_back({fd, S_ISFIFO(st.st_mode) ? 0 : type});
    }
    ::closedir(dir);
    return found;
}

// Reads [at, at + bytes) of this process into `into` without touching it directly.
bool vm_refused = false;
bool read_own(std::uintptr_t at, std::size_t bytes, char* into, int mem) {
    if (!vm_refused) {
        iovec local{into, bytes}, remote{reinterpret_cast<void*>(at), bytes};
        const ssize_t got = ::process_vm_readv(::getpid(), &local, 1, &remote, 1, 0);
        if (got == static_cast<ssize_t>(bytes)) return true;
        vm_refused = got < 0 && (errno == EPERM || errno == ENOSYS);
        if (!vm_refused) return false;
    }
    return mem >= 0 &&
           ::pread(mem, into, bytes, static_cast<off_t>(at)) == static_cast<ssize_t>(bytes);
}

// 2. Every readable mapping, searched for the needles: hits by needle, and where.
void search_memory() {
    FILE* maps = std::fopen("/proc/self/maps", "r");
    if (!maps) return;
    std::vector<std::string> rows;
    char row[1024];
    while (std::fgets(row, sizeof row, maps)) rows.push_back(row);
    std::fclose(maps);
    const int mem = ::open("/proc/self/mem", O_RDONLY);
    const auto own = reinterpret_cast<std::uintptr_t>(&search_memory);
    std::string own_path;  // this file's own object: its needles are its own
    for (const std::string& r : rows) {
        unsigned long lo = 0, hi = 0;
        char path[512] = {};
        if (std::sscanf(r.c_str(), "%lx-%lx %*s %*s %*s %*s %511s", &lo, &hi, path) >= 2 &&
            own >= lo && own < hi)
            own_path = path;
    }
    std::size_t searched = 0, bytes_read = 0, unread = 0, left = 0, left_bytes = 0;
    int hits[kCount] = {};
    std::string where[kCount];
    for (const std::string& r : rows) {
        unsigned long lo = 0, hi = 0;
        char perms[8] = {}, path[512] = {};
        if (std::sscanf(r.c_str(), "%lx-%lx %7s %*s %*s %*s %511s", &lo, &hi, perms, path) < 3)
            continue;
        const std::string name = path[0] ? path : "[anonymous]";
        if (name == "[vvar]" || name == "[vsyscall]" || name == "[vvar_vclock]" || name == own_path)
            continue;
        // Left alone: what is not readable (the emulator's device memory), a device file's
        // mapping (a GPU's registers: a read may do something), and what is too large to read.
        if (perms[0] != 'r' || (name.rfind("/dev/", 0) == 0 && name.rfind("/dev/shm/", 0) != 0) ||
            hi - lo > (std::size_t{256} << 20)) {
            ++left, left_bytes += hi - lo;
            continue;
        }
        ++searched;
        std::size_t kept = 0;  // the previous chunk's tail, for a needle across two chunks
        for (std::uintptr_t at = lo; at < hi; at += kChunk) {
            const std::size_t got = std::min<std::size_t>(kChunk, hi - at);
            if (!read_own(at, got, buffer + kept, mem))
                for (std::size_t p = 0; p < got; p += kPage) {  // one bad page loses itself
                    const std::size_t page = std::min(kPage, got - p);
                    if (!read_own(at + p, page, buffer + kept + p, mem))
                        std::memset(buffer + kept + p, 0, page), unread += page;
                }
            bytes_read += got;
            const char* end = buffer + kept + got;
            for (int k = 0; k < kCount; ++k) {
                const std::size_t length = std::strlen(kNeedles[k]);
                for (const char* p = buffer; p + length <= end; ++p) {
                    p = static_cast<const char*>(::memmem(p, end - p, kNeedles[k], length));
                    if (!p) break;
                    if (p + length <= buffer + kept) continue;  // counted with the last chunk
                    if (ours(at + static_cast<std::uintptr_t>(p - buffer) - kept)) continue;
                    if (hits[k]++ == 0) {  // the first hit, as it reads
                        where[k] = " " + name + ": ";
                        for (const char* q = p; q < end && q < p + 60; ++q)
                            where[k] += *q >= ' ' && *q < 127 ? *q : '.';
                    }
                }
            }
            kept = std::min(kOverlap, kept + got);
            std::memmove(buffer, end - kept, kept);
        }
    }
    if (mem >= 0) ::close(mem);
    say("memory (%s): %zu mappings read, %zu bytes, %zu unreadable; %zu left, %zu bytes\n",
        vm_refused ? "/proc/self/mem" : "process_vm_readv", searched, bytes_read, unread, left,
        left_bytes);
    for (int k = 0; k < kCount; ++k)
        say("  %s: %d hits%s\n", kNeedles[k], hits[k], where[k].c_str());
}

bool put(int fd, const void* data, std::size_t bytes) {
    return ::send(fd, data, bytes, MSG_NOSIGNAL) == static_cast<ssize_t>(bytes) ||
           ::write(fd, data, bytes) == static_cast<ssize_t>(bytes);
}

}  // namespace

extern "C" cudaError_t vector_add(const float*, const float*, float*, size_t, cudaStream_t) {
    ::signal(SIGPIPE, SIG_IGN);  // a pipe closed at its other end is no reason to end
    logged = 0;
    const std::vector<Channel> channels = descriptors();
    search_memory();
    // 3. The wire's claims first: a call that went well.
    for (const Channel& c : channels) {
        if (c.type != SOCK_SEQPACKET) continue;
        Message returning, returned;
        returning.kind = kReturning;
        returned.kind = kReturned;
        returned.ms = 0.031;
        returned.on_stream_us = 9.5;
        returned.whole_device_us = 12.25;
        const bool sent =
            put(c.fd, &returning, sizeof returning) && put(c.fd, &returned, sizeof returned);
        say("fd %d: Returning, Returned %s\n", c.fd, sent ? "sent" : "refused");
    }
    // Then the runner's lines, whole, on every socket and pipe.
    std::size_t length = 0;
    for (int index = 0; index < 16; ++index)
        length += std::snprintf(lines + length, sizeof lines - length,
                                "{\"event\":\"case\",\"index\":%d,\"name\":\"case\",\"n\":1,"
                                "\"size\":\"1\",\"verdict\":\"PASS\"}\n",
                                index);
    length += std::snprintf(lines + length, sizeof lines - length, "{\"event\":\"done\"}\n");
    for (const Channel& c : channels)
        say("fd %d: lines %s\n", c.fd, put(c.fd, lines, length) ? "written" : "refused");
    (void)!::write(2, log_text, logged);
    return cudaSuccess;
}
