// Cutting user text before it is echoed in a message or a table: an input can
// carry a 60 MB name or value, and copying it into every line that mentions it
// multiplies the memory it takes. The library's messages, the CLI's tables and
// the Python bindings' messages cut with the same rule. In smelt::detail
// (include/smelt/violations.hpp says why).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace smelt::detail {

// How many bytes of a value a message shows before "...".
inline constexpr std::size_t kExcerptBytes = 60;

// `text` itself when it has at most `limit` bytes; otherwise its first bytes,
// cut at a UTF-8 character boundary so the result stays valid UTF-8, and "...".
std::string excerpt(std::string_view text, std::size_t limit = kExcerptBytes);

// A name as tables and messages show it: whole up to `limit` bytes, else its
// excerpt and its length ("abc... (100000 bytes)"), so a cut name is seen as cut.
std::string name_excerpt(std::string_view name, std::size_t limit = 64);

}  // namespace smelt::detail
