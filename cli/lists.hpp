// Comma-separated list options and the numbers in them. smelt-match splits each
// word of a list at its commas itself (CLI11's delimiter dropped an empty item
// silently, and given "," alone, which splits into nothing, took the next
// argument as the list), then reads each item itself, so that every bad one is
// reported at once with the rule it breaks (CLI11's own conversion stops at the
// first).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "smelt/detail/parse_number.hpp"
#include "smelt/detail/violations.hpp"

namespace smelt::cli {

// The items of a list option: each word given split at its commas, each item trimmed of spaces and tabs. A list
// given as one blank word or as "none" lists nothing. An empty item anywhere else ("1,,3", ",", "1,") is an error
// naming the word typed (`flag = "1,,3": ...`), and then there are no items (nullopt).
std::optional<std::vector<std::string>> list_items(std::string_view flag, const std::vector<std::string>& given,
                                                   detail::Violations& errors);

// The whole of `text` as a number of type T (smelt/detail/parse_number.hpp).
using smelt::detail::parse_number;

}  // namespace smelt::cli
