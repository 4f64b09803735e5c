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

// A code address as the learner's code sees it: the innermost frame in the learner's code (the
// line of the access), and the learner's functions it was inlined into, innermost first (a
// __forceinline__ helper's line, then the line that called it).
struct Frame {
    std::string function;  // "load_status" (no parameters), "" when unknown
    std::string site;      // "file.cu:66"
};
struct Symbol {
    std::string where;           // the innermost learner frame ("?" when none)
    std::vector<Frame> callers;  // the learner frames it is inlined into
};

std::string short_function(std::string f) {
    // "look_back(unsigned long long const*, unsigned int)" -> "look_back"; keep template args.
    int depth = 0;
    for (std::size_t i = 0; i < f.size(); ++i) {
        if (f.compare(i, 10, "operator()") == 0) {  // a lambda's or a functor's call operator
            i += 9;
            continue;
        }
        if (f[i] == '<') ++depth;
        if (f[i] == '>') --depth;
        if (f[i] == '(' && depth == 0 && i > 0) return f.substr(0, i);
    }
    return f == "??" ? "" : f;
}

Symbol symbolize(const void* pc) {
    Symbol sym;
    sym.where = "?";
    Dl_info info{};
    if (!pc || !dladdr(pc, &info) || !info.dli_fname) return sym;
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
    std::snprintf(cmd, sizeof cmd, "addr2line -i -f -C -e '%s' 0x%lx 2>/dev/null", exe.c_str(),
                  static_cast<unsigned long>(offset));
    FILE* f = ::popen(cmd, "r");
    if (!f) return sym;
    // Pairs of lines, innermost first: the function, then its file:line.
    std::vector<Frame> frames;
    char line[4096];
    std::string function;
    bool want_function = true;
    while (std::fgets(line, sizeof line, f)) {
        std::string s = line;
        while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
        if (want_function) {
            function = short_function(s);
            want_function = false;
            continue;
        }
        want_function = true;
        auto paren = s.find(" (discriminator");
        if (paren != std::string::npos) s.resize(paren);
        if (s.empty() || s[0] == '?') continue;
        frames.push_back({function, s});
    }
    ::pclose(f);
    if (frames.empty()) return sym;
    // The innermost learner frame; the learner frames right outside it are its callers (an
    // emulator or library frame in between ends the chain: the rewriter's launch lambda).
    std::size_t first = frames.size();
    for (std::size_t i = 0; i < frames.size(); ++i) {
        auto colon = frames[i].site.rfind(':');
        if (colon != std::string::npos && !emulator_frame(frames[i].site.substr(0, colon))) {
            first = i;
            break;
        }
    }
    if (first == frames.size()) {
        sym.where = frames[0].site;
        return sym;
    }
    sym.where = frames[first].site;
    // addr2line may name the innermost frame by the out-of-line function around it (a helper in
    // an anonymous namespace inlined into the launch's lambda): no name is better than that one.
    auto launcher = [](const std::string& f) {
        return f.rfind("operator()", 0) == 0 || f.find("lambda") != std::string::npos ||
               f.find("cudalings_emu::") != std::string::npos || f == "_FUN";
    };
    std::string callee = launcher(frames[first].function) ? "" : frames[first].function;
    for (std::size_t i = first + 1; i < frames.size() && sym.callers.size() < 3; ++i) {
        auto colon = frames[i].site.rfind(':');
        if (colon == std::string::npos || emulator_frame(frames[i].site.substr(0, colon))) break;
        // The launch's lambda (the rewriter's `[&](auto&... cudalings_a)`, at the <<<>>> line)
        // is where the kernel was entered from the host: no call of the learner's device code.
        if (launcher(frames[i].function)) break;
        sym.callers.push_back(frames[i]);
    }
    // The first caller's function name is the callee of the next: keep the helper's own name.
    if (!sym.callers.empty()) sym.callers.insert(sym.callers.begin(), Frame{callee, ""});
    return sym;
}

const Symbol& symbol_of(const void* pc) {
    static std::unordered_map<const void*, Symbol> cache;
    auto it = cache.find(pc);
    if (it != cache.end()) return it->second;
    return cache[pc] = symbolize(pc);
}

// Code addresses named since the last report: a report made elsewhere (the scheduler's stall
// reports) names its lines through where_pc, and report() adds the calls of an inlined helper
// whose line it names from these.
std::vector<const void*>& recent_pcs() {
    static std::vector<const void*> pcs;
    return pcs;
}

std::string chain_text(const Symbol& s) {
    if (s.callers.size() < 2) return "";
    // callers[0] holds the helper's own name; callers[1...] the frames it was inlined into.
    std::string text =
        s.where + (s.callers[0].function.empty() ? " is in a function"
                                                 : " is in " + s.callers[0].function + "()");
    for (std::size_t i = 1; i < s.callers.size(); ++i) {
        text += ", called at " + s.callers[i].site;
        if (!s.callers[i].function.empty()) text += " (in " + s.callers[i].function + "())";
    }
    return text;
}

}  // namespace

std::string where_pc(const void* pc) {
    const Symbol& s = symbol_of(pc);
    if (!s.callers.empty()) {
        auto& recent = recent_pcs();
        if (std::find(recent.begin(), recent.end(), pc) == recent.end() && recent.size() < 64)
            recent.push_back(pc);
    }
    return s.where;
}

std::string call_chain(const void* pc) { return chain_text(symbol_of(pc)); }

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
    // An inlined helper's line (load_status's load) says little about which call went wrong:
    // name the calls of the pcs behind this report's line, once each.
    std::vector<const void*> recent;
    recent.swap(recent_pcs());
    auto& list = pending();
    std::size_t pictures = 0;
    for (auto& e : list) {
        // One report per kind and line (the first occurrence's text), with a count. Before
        // anything else: a race can be reported hundreds of thousands of times in one launch.
        if (e.kind == d.kind && e.file == d.file && e.line == d.line &&
            ((d.kind != "metric" && d.kind != "access") || e.message == d.message)) {
            ++e.count;
            return;
        }
        pictures += e.kind == "access";
    }
    // Explain mode's pictures (16 per launch) never crowd out the findings: 64 at most.
    if (list.size() >= 200 || (d.kind == "access" && pictures >= 64)) return;
    // Findings only: explain mode's pictures and metrics (info) keep their detail as it is (a
    // picture's is JSON).
    if (d.line > 0 && d.severity != "info") {
        const std::string at = d.file + ":" + std::to_string(d.line);
        std::vector<std::string> chains;
        for (const void* pc : recent) {
            const Symbol& s = symbol_of(pc);
            std::string text = s.where == at ? chain_text(s) : "";
            if (!text.empty() && std::find(chains.begin(), chains.end(), text) == chains.end() &&
                d.detail.find(text) == std::string::npos)
                chains.push_back(text);
        }
        for (const auto& text : chains) d.detail += text + "\n";
    }
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
