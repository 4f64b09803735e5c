// Waiting for a file to change, for `cudalings watch`: inotify on the file's folder (editors
// often write a new file and rename it over the old one, so the folder is watched, not the
// file), and a check of the file's size, time and contents every second as well, for file
// systems where inotify says nothing (a Windows drive under WSL2, network shares). A change
// counts only when the contents differ from the last ones seen.
#pragma once

#include <string>

namespace cudalings {

class FileWatcher {
  public:
    // `use_inotify` false: only the once-a-second look (what a file system without inotify
    // events gets; also for tests).
    explicit FileWatcher(bool use_inotify = true);
    ~FileWatcher();
    FileWatcher(const FileWatcher&) = delete;
    FileWatcher& operator=(const FileWatcher&) = delete;

    // Watch `file` from now on (its current contents are the baseline).
    void watch(const std::string& file);
    // Forget the baseline: the next wait() reports the file as changed at once.
    void touch() { baseline_.clear(); }

    enum class Event { Changed, Input, Timeout };
    // Until the file's contents change, `input_fd` (>= 0) becomes readable, or `timeout_seconds`
    // pass (< 0: no limit).
    Event wait(int input_fd, double timeout_seconds);

    bool using_inotify() const { return inotify_ >= 0; }
    const std::string& file() const { return file_; }

  private:
    bool changed();  // the contents differ from the baseline (which then moves on)
    int inotify_ = -1;
    int watch_ = -1;
    std::string file_, name_;
    std::string baseline_;
};

}  // namespace cudalings
