// JSON text as every reader of the library takes it: bounded nesting, a
// bounded count of values, numbers a double holds, at most kMaxInputBytes
// (include/smelt/file_io.hpp). For readers outside the library (the Python
// bindings' own JSON files) that must refuse what the library refuses, with
// the same messages. In smelt::detail (include/smelt/detail/violations.hpp says why).
#pragma once

#include <cstddef>
#include <string_view>

namespace smelt::detail {

// Deepest nesting a reader accepts: smelt's own formats and Hugging Face
// configs need at most 5 levels.
inline constexpr std::size_t kMaxJsonDepth = 64;
// Most values (numbers, strings, arrays, ...) one input may hold: a parsed
// value takes 30 to 80 bytes, so 64 MiB of "[],[],..." would take 1.7 GB.
// The largest real inputs (law files with 16,000 bootstrap samples, 100,000
// runs) hold under a million.
inline constexpr std::size_t kMaxJsonValues = std::size_t{1} << 22;

// Parses `text` as the library's readers do and drops the result. Every
// failure is a config_error "SOURCE:LINE:COLUMN: ...": malformed JSON, nesting
// deeper than kMaxJsonDepth, a number beyond a double; "SOURCE: ..." for more
// than kMaxJsonValues values; text longer than kMaxInputBytes is refused unread.
void check_json_text(std::string_view text, std::string_view source);

}  // namespace smelt::detail
