// Comma-separated list options and the numbers in them. CLI11 splits a list
// (delimiter(',')) into items; smelt-match reads each item itself, so that every
// bad one is reported at once with the rule it breaks (CLI11's own conversion
// stops at the first).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "smelt/parse_number.hpp"

namespace smelt::cli {

// The items of a list option, trimmed of spaces and tabs; a list given as
// "none" or as one blank item lists nothing. (CLI11 drops an empty item
// between two commas: "1e20,,1e21" lists two.)
std::vector<std::string> list_items(const std::vector<std::string>& given);

// The whole of `text` as a number of type T (smelt/parse_number.hpp).
using smelt::detail::parse_number;

}  // namespace smelt::cli
