// Diagnostics: collected (duplicates merged), named by the learner's file and line, and
// rendered for a learner. Code addresses are turned into file:line with addr2line (the learner's
// file is built with -gdwarf-4 and a #line directive naming the original file).
#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>
#include <unordered_map>

#include "internal.h"

namespace cudalings_emu {

std::string hex(std::uint64_t v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

namespace {

std::vector<Diagnostic>& pending() {
    static std::vector<Diagnostic> list;
    return list;
}

bool emulator_frame(const std::string& file) {
    return file.find("cudalings_emu/") != std::string::npos || file.rfind("/usr/", 0) == 0 ||
           file.find("/include/c++/") != std::string::npos;
}

std::string symbolize(const void* pc) {
    Dl_info info{};
    if (!pc || !dladdr(pc, &info) || !info.dli_fname) return "?";
    auto addr = reinterpret_cast<std::uintptr_t>(pc) - 1;  // inside the call instruction
    // Shared objects and PIE executables: addresses relative to the load base.
    std::uintptr_t offset = addr - reinterpret_cast<std::uintptr_t>(info.dli_fbase);
    std::string exe = info.dli_fname;
    if (exe.empty() || exe.find('/') == std::string::npos) {
        char path[4096];
        ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
        if (n > 0) {
            path[n] = 0;
            exe = path;
        }
    }
    char cmd[4400];
    std::snprintf(cmd, sizeof cmd, "addr2line -i -e '%s' 0x%lx 2>/dev/null", exe.c_str(),
                  static_cast<unsigned long>(offset));
    FILE* f = ::popen(cmd, "r");
    if (!f) return "?";
    char line[4096];
    std::string best, first;
    while (std::fgets(line, sizeof line, f)) {
        std::string s = line;
        while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
        auto paren = s.find(" (discriminator");
        if (paren != std::string::npos) s.resize(paren);
        if (s.empty() || s[0] == '?') continue;
        if (first.empty()) first = s;
        auto colon = s.rfind(':');
        if (best.empty() && colon != std::string::npos && !emulator_frame(s.substr(0, colon)))
            best = s;
    }
    ::pclose(f);
    if (!best.empty()) return best;
    return first.empty() ? "?" : first;
}

}  // namespace

std::string where_pc(const void* pc) {
    static std::unordered_map<const void*, std::string> cache;
    auto it = cache.find(pc);
    if (it != cache.end()) return it->second;
    return cache[pc] = symbolize(pc);
}

std::string thread_name(const Thread& t) {
    std::ostringstream s;
    s << "thread (" << t.tid.x;
    if (rt().block_dim.y > 1 || rt().block_dim.z > 1) s << "," << t.tid.y;
    if (rt().block_dim.z > 1) s << "," << t.tid.z;
    s << ")";
    return s.str();
}

std::string block_name(uint3 b) {
    std::ostringstream s;
    s << "(" << b.x;
    if (rt().grid_dim.y > 1 || rt().grid_dim.z > 1) s << "," << b.y;
    if (rt().grid_dim.z > 1) s << "," << b.z;
    s << ")";
    return s.str();
}

std::string site(const char* file, int line) {
    return std::string(file ? file : "?") + ":" + std::to_string(line);
}

void report(Diagnostic d) {
    auto& list = pending();
    std::size_t pictures = 0;
    for (auto& e : list) {
        // One report per kind and line (the first occurrence's text), with a count.
        if (e.kind == d.kind && e.file == d.file && e.line == d.line &&
            ((d.kind != "metric" && d.kind != "access") || e.message == d.message)) {
            ++e.count;
            return;
        }
        pictures += e.kind == "access";
    }
    // Explain mode's pictures (16 per launch) never crowd out the findings: 64 at most.
    if (list.size() >= 200 || (d.kind == "access" && pictures >= 64)) return;
    list.push_back(std::move(d));
}

std::size_t pending_count() { return pending().size(); }

bool keep_pending_since(std::size_t from, const std::string& kind) {
    auto& list = pending();
    if (from > list.size()) from = list.size();
    auto end = std::remove_if(list.begin() + std::ptrdiff_t(from), list.end(),
                              [&](const Diagnostic& d) { return d.kind != kind; });
    list.erase(end, list.end());
    return list.size() > from;
}

std::vector<Diagnostic> take_diagnostics() {
    std::vector<Diagnostic> out;
    out.swap(pending());
    return out;
}

std::string format(const std::vector<Diagnostic>& diagnostics) {
    std::ostringstream s;
    for (const auto& d : diagnostics) {
        s << (d.file.empty() ? "?" : d.file);
        if (d.line > 0) s << ":" << d.line;
        s << ": " << d.severity << ": " << d.message;
        if (d.count > 1) s << " [" << d.count << " times]";
        s << "\n";
        std::istringstream lines(d.detail);
        std::string line;
        while (std::getline(lines, line))
            if (!line.empty()) s << "    " << line << "\n";
    }
    return s.str();
}

}  // namespace cudalings_emu
