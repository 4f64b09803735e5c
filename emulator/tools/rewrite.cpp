// The source rewriter: the few CUDA constructs that are not C++ become calls into the emulator.
//
//   k<<<grid, block, shmem, stream>>>(args)
//     -> ::cudalings_emu::Launch(__FILE__, __LINE__, "k", grid, block, shmem, stream)
//            .go([&](auto&... a) { k(a...); }, args)
//   extern __shared__ T s[];        (in a function)   -> T* const s = <dynamic shared memory>;
//   extern __shared__ T s[];        (namespace scope) -> static DynamicShared<T> s{"s"};
//   __shared__ T x[N];              (in a function)   -> a reference to the running block's copy:
//       using cudalings_shared_t_x = T[N]; static SharedKey k;
//       cudalings_shared_t_x& x = shared_ref<cudalings_shared_t_x>(&k, "x");
//   __shared__ T x[N];              (namespace scope) -> static SharedGlobal<T[N]> x{"x"};
//
// Line structure is kept (a rewritten launch that spanned lines is padded with newlines), and
// the output starts with #line so the compiler, and every diagnostic, name the learner's file.
#include "rewrite.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace cudalings_emu_tools {
namespace {

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Marks every byte of `src` that is code (not comment, string, char literal or preprocessor line).
std::vector<bool> code_mask(const std::string& s) {
    std::vector<bool> code(s.size(), true);
    std::size_t i = 0;
    bool line_start = true;
    while (i < s.size()) {
        char c = s[i];
        if (line_start) {
            std::size_t j = i;
            while (j < s.size() && (s[j] == ' ' || s[j] == '\t')) ++j;
            if (j < s.size() && s[j] == '#') {
                // a preprocessor line, with continuations
                while (j < s.size() && s[j] != '\n') {
                    if (s[j] == '\\' && j + 1 < s.size() && s[j + 1] == '\n') ++j;
                    ++j;
                }
                for (std::size_t k = i; k < j; ++k) code[k] = false;
                i = j;
                continue;
            }
            line_start = false;
        }
        if (c == '\n') {
            line_start = true;
            ++i;
            continue;
        }
        if (c == '/' && i + 1 < s.size() && s[i + 1] == '/') {
            while (i < s.size() && s[i] != '\n') code[i++] = false;
            continue;
        }
        if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') {
            std::size_t j = s.find("*/", i + 2);
            j = j == std::string::npos ? s.size() : j + 2;
            for (std::size_t k = i; k < j; ++k) code[k] = false;
            i = j;
            continue;
        }
        if (c == 'R' && i + 1 < s.size() && s[i + 1] == '"' && (i == 0 || !ident_char(s[i - 1]))) {
            std::size_t open = s.find('(', i + 2);
            if (open != std::string::npos) {
                std::string delim = ")" + s.substr(i + 2, open - i - 2) + "\"";
                std::size_t j = s.find(delim, open);
                j = j == std::string::npos ? s.size() : j + delim.size();
                for (std::size_t k = i; k < j; ++k) code[k] = false;
                i = j;
                continue;
            }
        }
        if (c == '"' ||
            (c == '\'' &&
             !(i > 0 && std::isxdigit(static_cast<unsigned char>(s[i - 1])) && i + 1 < s.size() &&
               std::isxdigit(static_cast<unsigned char>(s[i + 1]))))) {
            std::size_t j = i + 1;
            while (j < s.size() && s[j] != c && s[j] != '\n') {
                if (s[j] == '\\') ++j;
                ++j;
            }
            j = std::min(s.size(), j + 1);
            for (std::size_t k = i; k < j; ++k) code[k] = false;
            i = j;
            continue;
        }
        ++i;
    }
    return code;
}

struct Edit {
    std::size_t begin, end;
    std::string text;
};

std::size_t count_newlines(const std::string& s, std::size_t b, std::size_t e) {
    std::size_t n = 0;
    for (std::size_t i = b; i < e; ++i) n += s[i] == '\n';
    return n;
}

std::string trim(const std::string& s) {
    std::size_t b = 0, e = s.size();
    while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
    return s.substr(b, e - b);
}

class Rewriter {
  public:
    Rewriter(const std::string& s) : s_(s), code_(code_mask(s)) {}

    bool run(std::string* error) {
        std::vector<int> kinds;  // brace stack: 0 scope (namespace/class), 1 code, 2 other
        std::size_t statement = 0;
        for (std::size_t i = 0; i < s_.size(); ++i) {
            if (!code_[i]) continue;
            char c = s_[i];
            if (c == '{') {
                std::string prefix = text_of(statement, i);
                kinds.push_back(brace_kind(prefix, kinds.empty() ? 0 : kinds.back()));
                statement = i + 1;
            } else if (c == '}') {
                if (!kinds.empty()) kinds.pop_back();
                statement = i + 1;
            } else if (c == ';') {
                statement = i + 1;
            } else if (c == '<' && s_.compare(i, 3, "<<<") == 0 && code_[i + 1] && code_[i + 2]) {
                std::size_t next = 0;
                if (!launch(i, &next, error)) return false;
                i = next - 1;
            } else if (c == '_' && s_.compare(i, 10, "__shared__") == 0 &&
                       (i == 0 || !ident_char(s_[i - 1])) &&
                       (i + 10 >= s_.size() || !ident_char(s_[i + 10]))) {
                bool in_code = !kinds.empty() && kinds.back() == 1;
                std::size_t next = 0;
                if (!shared(statement, i, in_code, &next, error)) return false;
                i = next - 1;
                statement = next;
            }
        }
        return true;
    }

    std::string apply() const {
        std::string out;
        std::size_t at = 0;
        for (const auto& e : edits_) {
            out.append(s_, at, e.begin - at);
            out += e.text;
            at = e.end;
        }
        out.append(s_, at, std::string::npos);
        return out;
    }

  private:
    // The code text of [b, e) with comments and preprocessor lines blanked.
    std::string text_of(std::size_t b, std::size_t e) const {
        std::string t;
        for (std::size_t i = b; i < e && i < s_.size(); ++i) t += code_[i] ? s_[i] : ' ';
        return t;
    }

    static bool has_word(const std::string& t, const char* w) {
        std::string word = w;
        for (std::size_t p = t.find(word); p != std::string::npos; p = t.find(word, p + 1)) {
            bool left = p == 0 || !ident_char(t[p - 1]);
            bool right = p + word.size() >= t.size() || !ident_char(t[p + word.size()]);
            if (left && right) return true;
        }
        return false;
    }

    static int brace_kind(const std::string& prefix, int parent) {
        std::string t = trim(prefix);
        bool paren = t.find(')') != std::string::npos;
        bool scope_word = has_word(t, "namespace") || has_word(t, "struct") ||
                          has_word(t, "class") || has_word(t, "union") || has_word(t, "enum") ||
                          (has_word(t, "extern") && t.find('"') != std::string::npos);
        if (scope_word && !paren) return 0;
        if (scope_word && has_word(t, "extern") && !paren) return 0;
        if (paren) return 1;
        auto ends_with = [&](const char* w) {
            std::string word = w;
            return t.size() >= word.size() &&
                   t.compare(t.size() - word.size(), word.size(), word) == 0 &&
                   (t.size() == word.size() || !ident_char(t[t.size() - word.size() - 1]));
        };
        if (ends_with("else") || ends_with("do") || ends_with("try") || ends_with("]") ||
            ends_with("mutable") || ends_with("noexcept"))
            return 1;
        if (t.empty()) return parent == 1 ? 1 : parent;  // a bare block
        return parent == 1 ? 2 : parent;                 // an initialiser list
    }

    std::size_t skip_space(std::size_t i) const {
        while (i < s_.size() && (!code_[i] || std::isspace(static_cast<unsigned char>(s_[i])))) ++i;
        return i;
    }

    // Position just past the bracket that closes the one at `open`.
    std::size_t match(std::size_t open) const {
        int depth = 0;
        for (std::size_t i = open; i < s_.size(); ++i) {
            if (!code_[i]) continue;
            char c = s_[i];
            if (c == '(' || c == '[' || c == '{') ++depth;
            if (c == ')' || c == ']' || c == '}') {
                if (--depth == 0) return i + 1;
            }
        }
        return std::string::npos;
    }

    bool launch(std::size_t at, std::size_t* next, std::string* error) {
        // The callee: scan back over `ns::name<targs>`.
        std::size_t b = at;
        auto back_space = [&](std::size_t p) {
            while (p > 0 && (!code_[p - 1] || std::isspace(static_cast<unsigned char>(s_[p - 1]))))
                --p;
            return p;
        };
        b = back_space(b);
        while (true) {
            if (b > 0 && s_[b - 1] == '>') {
                int depth = 0;
                std::size_t p = b;
                while (p > 0) {
                    --p;
                    if (!code_[p]) continue;
                    if (s_[p] == '>')
                        ++depth;
                    else if (s_[p] == '<' && --depth == 0)
                        break;
                }
                b = back_space(p);
            }
            std::size_t e = b;
            while (b > 0 && ident_char(s_[b - 1])) --b;
            if (b == e) break;
            std::size_t p = back_space(b);
            if (p >= 2 && s_[p - 1] == ':' && s_[p - 2] == ':') {
                b = back_space(p - 2);
                if (b == 0 || !(ident_char(s_[b - 1]) || s_[b - 1] == '>')) {
                    b = p - 2;  // a leading ::
                    break;
                }
                continue;
            }
            break;
        }
        std::string callee = trim(text_of(b, at));
        if (callee.empty()) {
            *error = "line " + std::to_string(line_of(at)) + ": cannot find the kernel before <<<";
            return false;
        }
        // The configuration up to >>> at bracket depth 0.
        std::size_t cfg_begin = at + 3, i = cfg_begin;
        int depth = 0;
        for (; i + 2 < s_.size(); ++i) {
            if (!code_[i]) continue;
            char c = s_[i];
            if (c == '(' || c == '[' || c == '{')
                ++depth;
            else if (c == ')' || c == ']' || c == '}')
                --depth;
            else if (depth == 0 && s_.compare(i, 3, ">>>") == 0)
                break;
        }
        if (i + 2 >= s_.size()) {
            *error = "line " + std::to_string(line_of(at)) + ": <<< without >>>";
            return false;
        }
        std::string cfg = text_of(cfg_begin, i);
        std::size_t open = skip_space(i + 3);
        if (open >= s_.size() || s_[open] != '(') {
            *error = "line " + std::to_string(line_of(at)) + ": expected ( after >>>";
            return false;
        }
        std::size_t close = match(open);
        if (close == std::string::npos) {
            *error = "line " + std::to_string(line_of(at)) + ": unbalanced ( after >>>";
            return false;
        }
        std::string args = text_of(open + 1, close - 1);
        std::string text = "::cudalings_emu::Launch(__FILE__, __LINE__, \"" + escape(callee) +
                           "\", " + flatten(cfg) + ").go([&](auto&... cudalings_a) { " + callee +
                           "(cudalings_a...); }" + (trim(args).empty() ? "" : ", " + args) + ")";
        std::size_t had = count_newlines(s_, b, close), has = count_newlines(text, 0, text.size());
        for (std::size_t k = has; k < had; ++k) text += "\n";
        edits_.push_back({b, close, text});
        *next = close;
        return true;
    }

    // A __shared__ declaration whose statement began at `statement`.
    bool shared(std::size_t statement, std::size_t at, bool in_code, std::size_t* next,
                std::string* error) {
        statement = std::min(skip_space(statement), at);
        std::size_t end = at;
        int depth = 0;
        for (; end < s_.size(); ++end) {
            if (!code_[end]) continue;
            char c = s_[end];
            if (c == '(' || c == '[' || c == '{')
                ++depth;
            else if (c == ')' || c == ']' || c == '}')
                --depth;
            else if (c == ';' && depth == 0)
                break;
        }
        if (end >= s_.size()) {
            *error = "line " + std::to_string(line_of(at)) + ": __shared__ declaration without ;";
            return false;
        }
        std::string decl = text_of(statement, end);
        bool is_extern = has_word(decl, "extern");
        // Tokens without the storage words, attributes and alignment specifiers.
        std::string rest = remove_words(decl, {"extern", "__shared__", "static"});
        rest = remove_attributes(rest);
        rest = remove_calls(rest, {"__align__", "alignas", "__attribute__"});
        rest = trim(rest);
        // The declarators after the type: "x[4]", "*p", "tile[32][33]".
        std::vector<Declarator> declarators;
        std::string base;
        if (!split_declaration(rest, &base, &declarators)) {
            *error =
                "line " + std::to_string(line_of(at)) + ": cannot read this __shared__ declaration";
            return false;
        }
        std::string text;
        if (is_extern) {
            const Declarator& d = declarators.front();
            const std::string type = base + d.prefix;
            text = in_code ? type + "* const " + d.name + " = reinterpret_cast<" + type +
                                 "*>(::cudalings_emu::dynamic_shared_named(\"" + d.name +
                                 "\", sizeof(" + type + ")));"
                           : "static ::cudalings_emu::DynamicShared<" + type + "> " + d.name +
                                 "{\"" + d.name + "\"};";
        } else {
            for (const Declarator& d : declarators) {
                const std::string type = "cudalings_shared_t_" + d.name;
                text += "using " + type + " = " + base + " " + d.prefix + d.suffix + "; ";
                if (in_code) {
                    // A reference to the running block's copy (shared_slot), per declaration.
                    text += "static ::cudalings_emu::SharedKey cudalings_shared_k_" + d.name +
                            "; " + type + "& " + d.name + " = ::cudalings_emu::shared_ref<" + type +
                            ">(&cudalings_shared_k_" + d.name + ", \"" + d.name + "\"); ";
                } else {
                    text += "static ::cudalings_emu::SharedGlobal<" + type + "> " + d.name + "{\"" +
                            d.name + "\"}; ";
                }
            }
        }
        std::size_t had = count_newlines(s_, statement, end + 1),
                    has = count_newlines(text, 0, text.size());
        for (std::size_t k = has; k < had; ++k) text += "\n";
        edits_.push_back({statement, end + 1, text});
        *next = end + 1;
        return true;
    }

    struct Declarator {
        std::string prefix;  // "*", "* const", "" (before the name)
        std::string name;
        std::string suffix;  // "[32][33]" (after the name)
    };

    // "float x[4], *p" -> base "float", declarators {"", x, "[4]"} and {"*", p, ""}.
    static bool split_declaration(const std::string& rest, std::string* base,
                                  std::vector<Declarator>* out) {
        std::size_t first_end = top_level(rest, ",=[");
        std::size_t name_end = first_end;
        while (name_end > 0 && std::isspace(static_cast<unsigned char>(rest[name_end - 1])))
            --name_end;
        std::size_t name_begin = name_end;
        while (name_begin > 0 && ident_char(rest[name_begin - 1])) --name_begin;
        if (name_begin == name_end) return false;
        // The base type ends before the first declarator's * and & signs.
        std::size_t base_end = name_begin;
        while (base_end > 0 && (rest[base_end - 1] == '*' || rest[base_end - 1] == '&' ||
                                std::isspace(static_cast<unsigned char>(rest[base_end - 1]))))
            --base_end;
        *base = trim(rest.substr(0, base_end));
        if (base->empty()) return false;
        std::size_t from = base_end;
        while (from < rest.size()) {
            std::size_t comma = top_level(rest, ",", from);
            std::string d = rest.substr(from, comma - from);
            std::size_t stop = top_level(d, "=[");
            std::size_t e = stop;
            while (e > 0 && std::isspace(static_cast<unsigned char>(d[e - 1]))) --e;
            std::size_t b = e;
            while (b > 0 && ident_char(d[b - 1])) --b;
            if (e == b) return false;
            Declarator dec;
            dec.prefix = trim(d.substr(0, b));
            dec.name = d.substr(b, e - b);
            const std::size_t init = top_level(d, "=");
            if (stop < init) dec.suffix = trim(d.substr(stop, init - stop));
            out->push_back(dec);
            from = comma + 1;
        }
        return !out->empty();
    }

    // [[maybe_unused]] and other standard attributes.
    static std::string remove_attributes(std::string t) {
        for (std::size_t p = t.find("[["); p != std::string::npos; p = t.find("[[")) {
            std::size_t e = t.find("]]", p);
            if (e == std::string::npos) break;
            t.replace(p, e + 2 - p, std::string(e + 2 - p, ' '));
        }
        return t;
    }

    static std::size_t find_word(const std::string& t, const std::string& w) {
        for (std::size_t p = t.find(w); p != std::string::npos; p = t.find(w, p + 1)) {
            bool left = p == 0 || !ident_char(t[p - 1]);
            bool right = p + w.size() >= t.size() || !ident_char(t[p + w.size()]);
            if (left && right) return p;
        }
        return std::string::npos;
    }

    static std::string remove_words(std::string t, std::initializer_list<const char*> words) {
        for (const char* w : words)
            for (std::size_t p = find_word(t, w); p != std::string::npos; p = find_word(t, w))
                t.replace(p, std::string(w).size(), std::string(std::string(w).size(), ' '));
        return t;
    }

    static std::string remove_calls(std::string t, std::initializer_list<const char*> names) {
        for (const char* n : names) {
            for (std::size_t p = find_word(t, n); p != std::string::npos; p = find_word(t, n)) {
                std::size_t q = p + std::string(n).size();
                while (q < t.size() && std::isspace(static_cast<unsigned char>(t[q]))) ++q;
                if (q >= t.size() || t[q] != '(') {
                    t.replace(p, std::string(n).size(), std::string(std::string(n).size(), ' '));
                    continue;
                }
                int depth = 0;
                std::size_t e = q;
                for (; e < t.size(); ++e) {
                    if (t[e] == '(') ++depth;
                    if (t[e] == ')' && --depth == 0) break;
                }
                t.replace(p, e + 1 - p, std::string(e + 1 - p, ' '));
            }
        }
        return t;
    }

    // Position of the first of `stops` at bracket depth 0 (or the end).
    static std::size_t top_level(const std::string& t, const char* stops, std::size_t from = 0) {
        int depth = 0;
        for (std::size_t i = from; i < t.size(); ++i) {
            char c = t[i];
            if (depth == 0 && std::string(stops).find(c) != std::string::npos) return i;
            if (c == '(' || c == '[' || c == '{' || c == '<') ++depth;
            if (c == ')' || c == ']' || c == '}' || c == '>') --depth;
        }
        return t.size();
    }

    static std::string flatten(const std::string& t) {
        std::string o = t;
        for (char& c : o)
            if (c == '\n') c = ' ';
        return o;
    }
    static std::string escape(const std::string& t) {
        std::string o;
        for (char c : t) {
            if (c == '"' || c == '\\') o += '\\';
            o += c == '\n' ? ' ' : c;
        }
        return o;
    }
    std::size_t line_of(std::size_t at) const { return 1 + count_newlines(s_, 0, at); }

    const std::string& s_;
    std::vector<bool> code_;
    std::vector<Edit> edits_;
};

}  // namespace

bool rewrite(const std::string& source, const std::string& path, std::string* out,
             std::string* error) {
    Rewriter r(source);
    if (!r.run(error)) return false;
    std::string escaped;
    for (char c : path) {
        if (c == '"' || c == '\\') escaped += '\\';
        escaped += c;
    }
    *out = "#line 1 \"" + escaped + "\"\n" + r.apply();
    return true;
}

}  // namespace cudalings_emu_tools
