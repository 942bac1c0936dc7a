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

// A library default as the items of a list option ({0.5, 1.25} -> {"0.5", "1.25"}),
// so that --help shows it and it is read as the user's words would be.
template <class T>
std::vector<std::string> items_of(const std::vector<T>& values) {
  std::vector<std::string> out;
  for (const T& v : values) out.push_back(fmt::format("{}", v));
  return out;
}

}  // namespace smelt::cli
