#include "text.h"

#include <unistd.h>

#include <langinfo.h>
#include <locale.h>
#include <algorithm>
#include <clocale>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <cwchar>

namespace cudalings {

std::string local_time_now(const char* format) {
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    char text[64];
    return std::string(text, std::strftime(text, sizeof text, format, &local));
}
namespace {

// The next code point of UTF-8 `s` at `i` (advanced past it); U+FFFD for a malformed byte.
char32_t next_code_point(std::string_view s, std::size_t& i) {
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char b = byte(i);
    int extra = b < 0x80 ? 0 : (b >> 5) == 6 ? 1 : (b >> 4) == 14 ? 2 : (b >> 3) == 30 ? 3 : -1;
    if (extra < 0 || i + static_cast<std::size_t>(extra) >= s.size() + (extra == 0 ? 1 : 0)) {
        ++i;
        return 0xFFFD;
    }
    char32_t c = extra == 0 ? b : extra == 1 ? (b & 0x1F) : extra == 2 ? (b & 0x0F) : (b & 0x07);
    for (int k = 1; k <= extra; ++k) {
        if ((byte(i + static_cast<std::size_t>(k)) & 0xC0) != 0x80) {
            ++i;
            return 0xFFFD;
        }
        c = (c << 6) | (byte(i + static_cast<std::size_t>(k)) & 0x3F);
    }
    i += static_cast<std::size_t>(extra) + 1;
    return c;
}

// The C library's wcwidth() under a UTF-8 locale (glibc keeps its tables current with
// Unicode); without such a locale, a small table of the common wide and zero-width ranges.
int code_point_width(char32_t c) {
    static locale_t utf8 = [] {
        for (const char* name : {"C.UTF-8", "C.utf8", "en_US.UTF-8"})
            if (locale_t l = newlocale(LC_CTYPE_MASK, name, static_cast<locale_t>(nullptr)))
                return l;
        return static_cast<locale_t>(nullptr);
    }();
    if (utf8) {
        locale_t previous = uselocale(utf8);
        int w = ::wcwidth(static_cast<wchar_t>(c));
        uselocale(previous);
        return w < 0 ? 1 : w;
    }
    if (c == 0x200B || (c >= 0x0300 && c <= 0x036F) || (c >= 0xFE00 && c <= 0xFE0F)) return 0;
    const bool wide = (c >= 0x1100 && c <= 0x115F) || (c >= 0x2E80 && c <= 0xA4CF) ||
                      (c >= 0xAC00 && c <= 0xD7A3) || (c >= 0xF900 && c <= 0xFAFF) ||
                      (c >= 0xFE30 && c <= 0xFE4F) || (c >= 0xFF00 && c <= 0xFF60) ||
                      (c >= 0xFFE0 && c <= 0xFFE6) || (c >= 0x1F300 && c <= 0x1FAFF) ||
                      (c >= 0x20000 && c <= 0x3FFFD);
    return wide ? 2 : 1;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t above = row[j];
            const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                              std::tolower(static_cast<unsigned char>(b[j - 1]));
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
            diagonal = above;
        }
    }
    return row[b.size()];
}

bool env_set(const char* name) {
    const char* v = std::getenv(name);
    return v && *v;
}

}  // namespace

std::size_t display_width(std::string_view text) {
    std::size_t width = 0;
    for (std::size_t i = 0; i < text.size();) {
        if (text[i] == '\033' && i + 1 < text.size() && text[i + 1] == '[') {
            i += 2;  // a colour sequence: ESC [ parameters final-byte
            while (i < text.size() && !(text[i] >= 0x40 && text[i] <= 0x7E)) ++i;
            ++i;
            continue;
        }
        width += static_cast<std::size_t>(code_point_width(next_code_point(text, i)));
    }
    return width;
}

std::string pad_right(std::string_view text, std::size_t width) {
    const std::size_t w = display_width(text);
    return std::string(text) + std::string(w < width ? width - w : 0, ' ');
}

std::string pad_left(std::string_view text, std::size_t width) {
    const std::size_t w = display_width(text);
    return std::string(w < width ? width - w : 0, ' ') + std::string(text);
}

std::string progress_bar(std::size_t done, std::size_t total, std::size_t width, bool unicode) {
    const std::size_t filled = total ? std::min(width, (done * width + total / 2) / total) : 0;
    std::string bar = unicode ? "▕" : "[";
    for (std::size_t i = 0; i < width; ++i)
        bar += i < filled ? (unicode ? "█" : "#") : (unicode ? "░" : "-");
    bar += unicode ? "▏" : "]";
    return bar;
}

bool color_wanted(int fd, bool no_color_flag) {
    if (no_color_flag || env_set("NO_COLOR")) return false;
    if (const char* force = std::getenv("FORCE_COLOR"); force && *force && std::strcmp(force, "0"))
        return true;
    return live_terminal(fd);
}

bool live_terminal(int fd) {
    const char* term = std::getenv("TERM");
    if (term && std::strcmp(term, "dumb") == 0) return false;
    return ::isatty(fd);
}

bool unicode_terminal() {
    for (const char* name : {"LC_ALL", "LC_CTYPE", "LANG"}) {
        const char* v = std::getenv(name);
        if (!v || !*v) continue;
        std::string value(v);
        std::transform(value.begin(), value.end(), value.begin(), ::tolower);
        return value.find("utf-8") != std::string::npos || value.find("utf8") != std::string::npos;
    }
    return false;
}

std::vector<std::string> closest(std::string_view typed, const std::vector<std::string>& candidates,
                                 std::size_t limit) {
    std::vector<std::pair<std::size_t, std::string>> scored;
    const std::size_t allowed = std::max<std::size_t>(2, typed.size() / 3);
    for (const auto& c : candidates) {
        std::size_t d = edit_distance(typed, c);
        // A candidate that starts with what was typed is close too ("grid" -> "grid_stride").
        if (typed.size() >= 3 && c.size() > typed.size() &&
            edit_distance(typed, c.substr(0, typed.size())) == 0)
            d = std::min(d, std::size_t{1});
        if (d <= allowed) scored.emplace_back(d, c);
    }
    std::stable_sort(scored.begin(), scored.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::string> out;
    for (const auto& [d, c] : scored) {
        if (std::find(out.begin(), out.end(), c) != out.end()) continue;
        out.push_back(c);
        if (out.size() == limit) break;
    }
    return out;
}

std::string did_you_mean(std::string_view typed, const std::vector<std::string>& candidates) {
    const auto best = closest(typed, candidates);
    if (best.empty()) return {};
    std::string text = " (did you mean `" + best[0] + "`";
    for (std::size_t i = 1; i < best.size(); ++i)
        text += (i + 1 == best.size() ? " or `" : ", `") + best[i] + "`";
    return text + "?)";
}

std::string markup_escape(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            case '\'':
                out += "&#39;";
                break;
            default:
                out += c;
        }
    }
    return out;
}

namespace {

// The length of the well-formed UTF-8 sequence at `i` (RFC 3629, table 3-7 of the Unicode
// standard: no overlong forms, no surrogates, nothing past U+10FFFF); 0 when there is none.
std::size_t sequence_at(std::string_view s, std::size_t i) {
    const auto at = [&](std::size_t k) {
        return k < s.size() ? static_cast<unsigned char>(s[k]) : 0u;
    };
    const unsigned b = at(i);
    const auto cont = [&](std::size_t k, unsigned lo = 0x80, unsigned hi = 0xBF) {
        const unsigned c = at(i + k);
        return i + k < s.size() && c >= lo && c <= hi;
    };
    if (b < 0x80) return 1;
    if (b >= 0xC2 && b <= 0xDF) return cont(1) ? 2 : 0;
    if (b == 0xE0) return cont(1, 0xA0) && cont(2) ? 3 : 0;
    if ((b >= 0xE1 && b <= 0xEC) || b == 0xEE || b == 0xEF) return cont(1) && cont(2) ? 3 : 0;
    if (b == 0xED) return cont(1, 0x80, 0x9F) && cont(2) ? 3 : 0;
    if (b == 0xF0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
    if (b >= 0xF1 && b <= 0xF3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
    if (b == 0xF4) return cont(1, 0x80, 0x8F) && cont(2) && cont(3) ? 4 : 0;
    return 0;
}

}  // namespace

bool is_valid_utf8(std::string_view text) {
    for (std::size_t i = 0; i < text.size();) {
        const std::size_t n = sequence_at(text, i);
        if (n == 0) return false;
        i += n;
    }
    return true;
}

std::string valid_utf8(std::string_view text) {
    if (is_valid_utf8(text)) return std::string(text);
    std::string out;
    out.reserve(text.size() + 16);
    for (std::size_t i = 0; i < text.size();) {
        const std::size_t n = sequence_at(text, i);
        if (n == 0) {
            out += "\xEF\xBF\xBD";  // U+FFFD
            ++i;
        } else {
            out.append(text, i, n);
            i += n;
        }
    }
    return out;
}

}  // namespace cudalings
