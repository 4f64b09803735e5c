// Text for terminals: widths as a terminal shows them (UTF-8, wide and combining characters),
// padding by that width, progress bars, colour and terminal decisions from the environment,
// "did you mean" suggestions, and escaping for HTML and XML.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace cudalings {

// Columns `text` takes on a terminal: UTF-8 decoded, East Asian wide characters count 2,
// combining marks and zero-width characters 0, ANSI colour sequences 0.
std::size_t display_width(std::string_view text);
// The local time now, formatted by strftime's `format` ("%Y-%m-%d %H:%M").
std::string local_time_now(const char* format);
// `text` followed (pad_right) or preceded (pad_left) by spaces up to `width` columns.
std::string pad_right(std::string_view text, std::size_t width);
std::string pad_left(std::string_view text, std::size_t width);

// "[########------------]" with `width` cells; `unicode` uses block characters.
std::string progress_bar(std::size_t done, std::size_t total, std::size_t width, bool unicode);

// Whether output to `fd` gets colour: never with NO_COLOR (non-empty), TERM=dumb or the
// --no-color flag; always with FORCE_COLOR (non-empty, not "0"); otherwise on a terminal.
bool color_wanted(int fd, bool no_color_flag);
// Whether `fd` is a terminal that understands cursor movement (not TERM=dumb): progress
// lines that rewrite themselves are only drawn there.
bool live_terminal(int fd);
// Whether the terminal can show UTF-8 (the locale's character set says so).
bool unicode_terminal();

// The candidates closest to `typed` (edit distance at most about a third of its length), best
// first, at most `limit` of them.
std::vector<std::string> closest(std::string_view typed, const std::vector<std::string>& candidates,
                                 std::size_t limit = 3);
// " (did you mean `a` or `b`?)" or "".
std::string did_you_mean(std::string_view typed, const std::vector<std::string>& candidates);

// `text` with & < > " ' as character references: safe in HTML and XML text and attributes.
std::string markup_escape(std::string_view text);

// `text` as valid UTF-8: every byte that does not begin a well-formed sequence (a Latin-1 byte,
// an overlong form, a surrogate, a sequence cut short) becomes U+FFFD, the replacement
// character. Valid text comes back unchanged. For everything a child writes before it can
// reach a JSON document (nlohmann's dump refuses invalid UTF-8).
std::string valid_utf8(std::string_view text);
bool is_valid_utf8(std::string_view text);

}  // namespace cudalings
