#include "sandbox.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>

#include "seccomp_filter.h"

namespace fs = std::filesystem;

namespace cudalings {
namespace {

// The first line a sandboxed child writes to stderr, before its program starts (the init,
// checker/sandbox_init, writes it): a result whose stderr does not begin with it never got past
// bwrap's set-up. Nothing the program does can write before it.
constexpr std::string_view kStarted = "[cudalings sandbox]\n";
// Where the init is inside: in the sandbox's own root, which bwrap makes and nothing else uses.
constexpr const char* kInitInside = "/cudalings-sandbox-init";

// Directories of the operating system every sandbox sees read-only. On a merged-/usr system
// /bin, /lib... are symbolic links into /usr and are recreated as such.
constexpr const char* kSystemDirs[] = {"/usr",   "/bin",   "/sbin",  "/lib",
                                       "/lib64", "/lib32", "/libx32"};
// The few files of /etc that programs need to start: the dynamic loader's cache and
// configuration, and the alternatives system (/usr/bin/c++ -> /etc/alternatives/c++).
constexpr const char* kEtcFiles[] = {"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
                                     "/etc/alternatives"};
// Variables passed through from the checker's environment; every other one (tokens, the
// grader's secret seed) stays outside.
constexpr const char* kPassedVariables[] = {"PATH",
                                            "LD_LIBRARY_PATH",
                                            "CUDA_VISIBLE_DEVICES",
                                            "CUDA_DEVICE_ORDER",
                                            "CUDA_MODULE_LOADING",
                                            "LANG",
                                            "LC_ALL",
                                            "TZ",
                                            "CUDALINGS_EMU_LOCKSTEP"};

bool under_dir(const std::string& path, const std::string& dir) {
    return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
           path[dir.size()] == '/';
}

bool in_system_dirs(const std::string& path) {
    std::error_code ec;
    std::string real = fs::weakly_canonical(path, ec).string();
    if (ec) real = path;
    return under_dir(real, "/usr");
}

bool exists(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0;
}

void add(std::vector<std::string>& cmd, std::initializer_list<std::string> words) {
    cmd.insert(cmd.end(), words);
}

std::vector<std::string> split(const std::string& text, char separator) {
    std::vector<std::string> parts;
    std::string part;
    for (char c : text) {
        if (c == separator) {
            if (!part.empty()) parts.push_back(part);
            part.clear();
        } else {
            part += c;
        }
    }
    if (!part.empty()) parts.push_back(part);
    return parts;
}

// The GPU's device nodes: /dev/nvidia0..., nvidiactl, nvidia-uvm(-tools), nvidia-modeset, and
// the MIG capability nodes.
std::vector<std::string> gpu_device_nodes() {
    std::vector<std::string> nodes;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/dev", ec)) {
        std::string name = e.path().filename().string();
        if (name.rfind("nvidia", 0) == 0) nodes.push_back(e.path().string());
    }
    std::sort(nodes.begin(), nodes.end());
    return nodes;
}

// A new anonymous file holding `bytes`, rewound: what bwrap reads its --args or --seccomp from
// (each run its own, so that no two bwraps share a file offset). -1 when it cannot be made.
int memory_file(const char* name, const std::string& bytes) {
    int fd = ::memfd_create(name, MFD_CLOEXEC);
    if (fd < 0) return -1;
    std::size_t done = 0;
    while (done < bytes.size()) {
        ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n <= 0) {
            ::close(fd);
            return -1;
        }
        done += static_cast<std::size_t>(n);
    }
    if (::lseek(fd, 0, SEEK_SET) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

std::string read_all(int fd) {
    std::string bytes;
    char buffer[4096];
    ssize_t n;
    while ((n = ::read(fd, buffer, sizeof buffer)) > 0)
        bytes.append(buffer, static_cast<std::size_t>(n));
    return bytes;
}

bool executable_file(const std::string& path) {
    struct stat st {};
    return !path.empty() && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
           ::access(path.c_str(), X_OK) == 0;
}

}  // namespace

Sandbox::Sandbox(SandboxSettings settings) : settings_(std::move(settings)) {
    if (settings_.init.empty()) settings_.init = find_sandbox_init("");
    int fd = seccomp::export_bpf(seccomp::Policy{}, &filter_error_);
    if (fd >= 0) {
        filter_ = read_all(fd);
        ::close(fd);
        if (filter_.empty()) filter_error_ = "the seccomp filter came out empty";
    }
}

std::vector<std::string> Sandbox::command(const std::vector<std::string>& argv,
                                          const SandboxView& view,
                                          const std::map<std::string, std::string>& env,
                                          int filter_descriptor) const {
    std::vector<std::string> cmd{settings_.bwrap};
    // Namespaces: the child's own users (it is "nobody", without capabilities, and may not make
    // further user namespaces), processes, IPC, network (loopback only), host name and cgroups.
    add(cmd, {"--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-net", "--unshare-uts",
              "--unshare-cgroup-try", "--disable-userns", "--uid", "65534", "--gid", "65534",
              "--hostname", "cudalings", "--die-with-parent", "--new-session"});
    // PID 1 is our init (no bwrap process inside), every process is under the filter.
    add(cmd, {"--as-pid-1", "--seccomp", std::to_string(filter_descriptor)});
    for (const char* dir : kSystemDirs) {
        struct stat st {};
        if (::lstat(dir, &st) != 0) continue;
        if (S_ISLNK(st.st_mode)) {
            std::error_code ec;
            add(cmd, {"--symlink", fs::read_symlink(dir, ec).string(), dir});
        } else if (S_ISDIR(st.st_mode)) {
            add(cmd, {"--ro-bind", dir, dir});
        }
    }
    for (const char* file : kEtcFiles) add(cmd, {"--ro-bind-try", file, file});
    add(cmd, {"--proc", "/proc"});
    const std::string scratch = std::to_string(settings_.scratch_bytes);
    if (view.devices || view.gpu) {
        // The standard minimal /dev (null, zero, random, tty...), with a /dev/shm of the
        // scratch space's size.
        add(cmd, {"--dev", "/dev", "--size", scratch, "--tmpfs", "/dev/shm"});
    } else {
        // Builds get /dev/null alone: no endless file (/dev/zero, /dev/urandom) to #include.
        add(cmd, {"--tmpfs", "/dev", "--dev-bind", "/dev/null", "/dev/null", "--symlink",
                  "/proc/self/fd", "/dev/fd"});
    }
    if (view.gpu) {
        // The GPU's nodes, and /sys, where the CUDA driver reads the machine's topology.
        for (const auto& node : gpu_device_nodes()) add(cmd, {"--dev-bind-try", node, node});
        add(cmd, {"--ro-bind", "/sys", "/sys"});
    }
    add(cmd, {"--size", scratch, "--tmpfs", "/tmp"});
    // Parents before children, so that a path bound inside another keeps its own mount; all of
    // them after /tmp, which they may lie under.
    std::vector<std::string> read_only = view.read_only;
    // Libraries the loader is told about (the CUDA driver may live outside /usr).
    if (const char* paths = std::getenv("LD_LIBRARY_PATH"))
        for (const auto& dir : split(paths, ':'))
            if (dir[0] == '/') read_only.push_back(dir);
    std::sort(read_only.begin(), read_only.end());
    read_only.erase(std::unique(read_only.begin(), read_only.end()), read_only.end());
    for (const auto& path : read_only)
        if (!path.empty() && path[0] == '/' && !in_system_dirs(path))
            add(cmd, {"--ro-bind-try", path, path});
    for (const auto& dir : view.writable) add(cmd, {"--bind", dir, dir});
    // The init, at a place of its own: its folder on the host (a build folder) is nothing the
    // program needs to see.
    add(cmd, {"--ro-bind", settings_.init, kInitInside});
    // The sandbox's own root and /dev are tmpfs that bwrap filled in: read-only from here on,
    // so that the scratch space (and the writable folders) are the only places to write.
    add(cmd, {"--remount-ro", "/dev", "--remount-ro", "/"});
    add(cmd, {"--chdir", "/tmp", "--clearenv"});
    for (const char* name : kPassedVariables)
        if (const char* value = std::getenv(name)) add(cmd, {"--setenv", name, value});
    for (const auto& [name, value] : env) add(cmd, {"--setenv", name, value});
    add(cmd, {"--setenv", "HOME", "/tmp", "--setenv", "TMPDIR", "/tmp"});
    // The init, which writes the marker line and starts the program as PID 2.
    add(cmd, {"--", kInitInside});
    cmd.insert(cmd.end(), argv.begin(), argv.end());
    return cmd;
}

std::string Sandbox::description() const {
    ChildOptions o;
    o.wall_seconds = 10;
    auto r = run_supervised({settings_.bwrap, "--version"}, o);
    std::string version = r.out.head.substr(0, r.out.head.find('\n'));
    return (version.empty() ? std::string("bubblewrap") : version) + " (" + settings_.bwrap +
           "), seccomp filter";
}

std::string find_bwrap(const std::string& option) {
    std::string wanted = option;
    if (wanted.empty())
        if (const char* env = std::getenv("CUDALINGS_BWRAP")) wanted = env;
    if (wanted.empty()) wanted = "bwrap";
    std::string found = find_program(wanted);
    if (found.empty() || ::access(found.c_str(), X_OK) != 0) return {};
    std::error_code ec;
    return fs::absolute(found, ec).string();
}

std::string find_sandbox_init(const std::string& option) {
    constexpr const char* kName = "cudalings-sandbox-init";
    if (!option.empty()) return executable_file(option) ? fs::absolute(option).string() : "";
    if (const char* env = std::getenv("CUDALINGS_SANDBOX_INIT"); env && *env)
        return executable_file(env) ? fs::absolute(env).string() : "";
    std::error_code ec;
    fs::path self = fs::read_symlink("/proc/self/exe", ec);
    if (!ec && executable_file((self.parent_path() / kName).string()))
        return (self.parent_path() / kName).string();
#ifdef CUDALINGS_SANDBOX_INIT_DEFAULT
    if (executable_file(CUDALINGS_SANDBOX_INIT_DEFAULT)) return CUDALINGS_SANDBOX_INIT_DEFAULT;
#endif
    return {};
}

std::shared_ptr<const Sandbox> open_sandbox(const SandboxSettings& settings, std::string& why) {
    SandboxSettings s = settings;
    s.bwrap = find_bwrap(settings.bwrap);
    if (s.bwrap.empty()) {
        const char* env = std::getenv("CUDALINGS_BWRAP");
        why = !settings.bwrap.empty() ? "no bwrap executable at " + settings.bwrap
              : env && *env ? std::string("no bwrap executable at ") + env + " (CUDALINGS_BWRAP)"
                            : std::string(
                                  "bubblewrap (bwrap) is not installed: not on PATH, "
                                  "and CUDALINGS_BWRAP is not set");
        return nullptr;
    }
    s.init = find_sandbox_init(settings.init);
    if (s.init.empty()) {
        const char* env = std::getenv("CUDALINGS_SANDBOX_INIT");
        why = !settings.init.empty() ? "no cudalings-sandbox-init executable at " + settings.init
              : env && *env ? std::string("no cudalings-sandbox-init executable at ") + env +
                                  " (CUDALINGS_SANDBOX_INIT)"
                            : std::string(
                                  "cudalings-sandbox-init (built with cudalings) is not beside "
                                  "this program: rebuild the checker");
        return nullptr;
    }
    auto sandbox = std::make_shared<Sandbox>(s);
    if (sandbox->filter().empty()) {
        why = "the sandbox's seccomp filter cannot be made: " + sandbox->filter_error();
        return nullptr;
    }
    ChildOptions o;
    o.wall_seconds = 30;
    SandboxView view;
    view.gpu = ::access("/dev/nvidiactl", F_OK) == 0;  // the GPU's nodes must bind too
    // Inside, it must be alone (PID 2, after the init) and under the filter (mode 2).
    auto r = run_contained(sandbox.get(),
                           {"/bin/sh", "-c",
                            "test $$ -le 3 || exit 10; grep -q '^Seccomp:[[:space:]]*2$' "
                            "/proc/self/status || exit 11"},
                           o, view);
    if (r.started && r.exit_code == 11) {
        why = s.bwrap + " started the sandbox without its seccomp filter in force";
        return nullptr;
    }
    if (!r.started || !r.exited_ok()) {
        std::string detail = r.start_error.empty() ? r.err.head : r.start_error;
        while (!detail.empty() && (detail.back() == '\n' || detail.back() == ' '))
            detail.pop_back();
        why = s.bwrap + " cannot make a sandbox here" +
              (detail.empty() ? std::string() : ": " + detail) +
              " (unprivileged user namespaces may be disabled: see the instructor guide)";
        return nullptr;
    }
    return sandbox;
}

ChildResult run_contained(const Sandbox* sandbox, const std::vector<std::string>& argv,
                          ChildOptions options, const SandboxView& view) {
    if (!sandbox) return run_supervised(argv, options);
    ChildResult r;
    if (sandbox->filter().empty()) {
        r.start_error = "the sandbox has no seccomp filter: " + sandbox->filter_error();
        return r;
    }
    const auto env = options.env;
    options.env.clear();  // set inside, after --clearenv
    // bwrap starts with nothing of the grader's: an empty environment, and its options (they
    // name the grader's folders) read from a descriptor. bwrap takes the command itself ("--"
    // and what follows: the init and the program) on its command line only; the program's own
    // words are no secret inside, where the init and the program are started with them.
    // Its two descriptors come after any the caller gives the program (those pass through
    // bwrap and the init to it).
    int filter_target = Sandbox::kFilterDescriptor;
    for (const auto& d : options.descriptors) filter_target = std::max(filter_target, d.target + 1);
    const int args_target = filter_target + 1;
    const auto words = sandbox->command(argv, view, env, filter_target);
    const auto command = std::find(words.begin() + 1, words.end(), "--");
    std::string args;
    for (auto word = words.begin() + 1; word != command; ++word) args.append(*word).push_back('\0');
    const int args_fd = memory_file("cudalings-bwrap-args", args);
    const int filter_fd = memory_file("cudalings-seccomp", sandbox->filter());
    if (args_fd < 0 || filter_fd < 0) {
        r.start_error = std::string("cannot pass the sandbox its arguments: ") + strerror(errno);
        if (args_fd >= 0) ::close(args_fd);
        if (filter_fd >= 0) ::close(filter_fd);
        return r;
    }
    options.clear_environment = true;
    options.descriptors.push_back({args_fd, args_target});
    options.descriptors.push_back({filter_fd, filter_target});
    std::vector<std::string> bwrap{words[0], "--args", std::to_string(args_target)};
    bwrap.insert(bwrap.end(), command, words.end());
    r = run_supervised(bwrap, options);
    ::close(args_fd);
    ::close(filter_fd);
    if (!r.started) return r;
    if (r.err.head.compare(0, kStarted.size(), kStarted) == 0) {
        r.err.head.erase(0, kStarted.size());
    } else if (!r.timed_out && !r.cancelled) {
        // bwrap itself failed ("bwrap: Can't find source path ..."): nothing of the program ran.
        std::string message = r.err.head.substr(0, r.err.head.find('\n'));
        r.started = false;
        r.start_error = "the sandbox did not start" + (message.empty() ? "" : ": " + message);
        return r;
    }
    // bwrap exits with 128 + n when its program died of signal n, as a shell does.
    if (!r.timed_out && !r.cancelled && r.signal == 0 && r.exit_code > 128 &&
        r.exit_code <= 128 + 64) {
        r.signal = r.exit_code - 128;
        r.exit_code = -1;
    }
    return r;
}

SandboxView runner_view(const std::vector<std::string>& argv, bool gpu) {
    SandboxView view;
    view.gpu = gpu;
    view.devices = true;
    for (const auto& arg : argv)
        if (!arg.empty() && arg[0] == '/' && exists(arg)) view.read_only.push_back(arg);
    if (!argv.empty()) {
        std::error_code ec;
        for (const auto& e : fs::directory_iterator(fs::path(argv[0]).parent_path(), ec)) {
            std::string name = e.path().filename().string();
            if (name.rfind("lib", 0) == 0 && e.path().extension() == ".so")
                view.read_only.push_back(e.path().string());
        }
    }
    return view;
}

std::string install_root(const std::string& program) {
    std::string found = find_program(program);
    if (found.empty()) return {};
    std::error_code ec;
    fs::path real = fs::canonical(found, ec);
    if (ec || in_system_dirs(real.string())) return {};
    // <root>/bin/<program>
    return real.parent_path().parent_path().string();
}

PrivateDir::PrivateDir(const std::string& parent) {
    std::string pattern = parent + "/work-XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (::mkdtemp(buffer.data())) path_ = buffer.data();
}

PrivateDir::~PrivateDir() {
    if (path_.empty()) return;
    std::error_code ec;
    fs::remove_all(path_, ec);
}

}  // namespace cudalings
