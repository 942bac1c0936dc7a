// Cutting user text before it is echoed in a message or a table: an input can
// carry a 60 MB name or value, and copying it into every line that mentions it
// multiplies the memory it takes. The library's messages, the CLI's tables and
// the Python bindings' messages cut with the same rule. In smelt::detail
// (include/smelt/detail/violations.hpp says why).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace smelt::detail {

// How many bytes of a value a message shows before "...".
inline constexpr std::size_t kExcerptBytes = 60;

// `text` kept on one line, for human output (a table, a report's header, a
// message): every byte below 0x20 and 0x7f written as \xNN, and the line
// separators U+0085, U+2028 and U+2029 (Python's splitlines() breaks on them)
// as \uNNNN, so that a name cannot start a line of its own or reach the
// terminal as an escape sequence. Other text, backslashes included, is kept.
std::string one_line(std::string_view text);

// `text` itself when it has at most `limit` bytes; otherwise its first bytes,
// cut at a UTF-8 character boundary so the result stays valid UTF-8, and "...".
std::string excerpt(std::string_view text, std::size_t limit = kExcerptBytes);

// A name as tables and messages show it: one_line(), whole up to `limit` bytes,
// else its excerpt and the name's length ("abc... (100000 bytes)"), so a cut
// name is seen as cut.
std::string name_excerpt(std::string_view name, std::size_t limit = 64);

}  // namespace smelt::detail
