// What free text may reach an exported file, and how (docs/export.md, "Text
// in exported files"). The only free text a ModelConfig carries is its name;
// every other word an export writes comes from smelt's own tables or is a
// number. A name is escaped, never dropped: it is written as an ASCII JSON
// string literal, so a newline, a NUL, a quote or a byte a line reader splits
// on (U+2028, U+0085) stays inside one line. A name that is not UTF-8 is
// refused: it is not text, and JSON cannot carry it.
#pragma once

#include <string>
#include <string_view>

#include "smelt/config.hpp"

namespace smelt::export_detail {

// Throws config_error "name: must be UTF-8 text" (its bytes are not echoed).
void require_utf8_name(const ModelConfig& config);

// `text` as a JSON string literal in printable ASCII: quotes, backslashes,
// control characters and every non-ASCII character escaped ("a\nb" -> "\"a\\nb\"").
// `text` must be UTF-8.
std::string ascii_literal(std::string_view text);

}  // namespace smelt::export_detail
