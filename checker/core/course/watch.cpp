#include "watch.h"

#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "hash.h"

namespace cudalings {
namespace {

using Clock = std::chrono::steady_clock;

std::string fingerprint(const std::string& file) {
    bool ok = false;
    const std::string text = read_file(file, &ok);
    return ok ? Hasher().add(text).hex() : std::string("missing");
}

}  // namespace

FileWatcher::FileWatcher(bool use_inotify) {
    if (use_inotify) inotify_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
}

FileWatcher::~FileWatcher() {
    if (inotify_ >= 0) ::close(inotify_);
}

void FileWatcher::watch(const std::string& file) {
    file_ = file;
    name_ = std::filesystem::path(file).filename().string();
    baseline_ = fingerprint(file);
    if (inotify_ < 0) return;
    if (watch_ >= 0) ::inotify_rm_watch(inotify_, watch_);
    const std::string dir = std::filesystem::path(file).parent_path().string();
    watch_ = ::inotify_add_watch(inotify_, dir.empty() ? "." : dir.c_str(),
                                 IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_MODIFY);
}

bool FileWatcher::changed() {
    const std::string now = fingerprint(file_);
    if (now == baseline_) return false;
    baseline_ = now;
    return true;
}

FileWatcher::Event FileWatcher::wait(int input_fd, double timeout_seconds) {
    const auto start = Clock::now();
    if (changed()) return Event::Changed;
    while (true) {
        const double waited = std::chrono::duration<double>(Clock::now() - start).count();
        if (timeout_seconds >= 0 && waited >= timeout_seconds) return Event::Timeout;
        // A second at most between looks at the file itself (file systems without inotify).
        int slice = 1000;
        if (timeout_seconds >= 0)
            slice = std::min(slice, static_cast<int>(1000 * (timeout_seconds - waited)) + 1);
        pollfd fds[2];
        nfds_t n = 0;
        if (inotify_ >= 0) fds[n++] = {inotify_, POLLIN, 0};
        if (input_fd >= 0) fds[n++] = {input_fd, POLLIN, 0};
        const int ready = ::poll(fds, n, slice);
        if (ready > 0) {
            for (nfds_t i = 0; i < n; ++i) {
                if (!(fds[i].revents & (POLLIN | POLLHUP))) continue;
                if (fds[i].fd == input_fd) return Event::Input;
                // Drain the events; only those about our file matter.
                bool ours = false;
                alignas(inotify_event) char buffer[8192];
                ssize_t got;
                while ((got = ::read(inotify_, buffer, sizeof buffer)) > 0) {
                    for (char* p = buffer; p < buffer + got;) {
                        auto* e = reinterpret_cast<inotify_event*>(p);
                        if (e->len && name_ == e->name) ours = true;
                        p += sizeof(inotify_event) + e->len;
                    }
                }
                if (ours) {
                    // Editors write in several steps: let the last one land.
                    ::usleep(30 * 1000);
                    if (changed()) return Event::Changed;
                }
            }
        }
        if (changed()) return Event::Changed;  // the once-a-second look
    }
}

}  // namespace cudalings
