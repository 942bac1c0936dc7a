// The word forms of an enum, in one table per enum: JSON, CSV and the CLI read
// and write the same words, and a bad word is answered with the list of good
// ones. Every enum's to_string/parse pair is these two templates over its
// table, so no module spells a switch ladder of its own.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "smelt/detail/excerpt.hpp"
#include "smelt/error.hpp"

namespace smelt::detail {

// The value and its word, in the order messages list them.
template <typename E, std::size_t N>
using EnumNames = std::array<std::pair<E, std::string_view>, N>;

// The word of `value`; "?" for a value outside the table (a cast integer).
template <typename E, std::size_t N>
constexpr std::string_view name_of(const EnumNames<E, N>& names, E value) {
  for (const auto& [v, n] : names)
    if (v == value) return n;
  return "?";
}

// The value spelled `text`, or nullopt: a check that costs no exception.
template <typename E, std::size_t N>
constexpr std::optional<E> find_of(const EnumNames<E, N>& names, std::string_view text) {
  for (const auto& [v, n] : names)
    if (n == text) return v;
  return std::nullopt;
}

// The value spelled `text`; otherwise a config_error whose one violation reads
// `FIELD = "TEXT": must be one of a, b, c` (the text cut to an excerpt).
template <typename E, std::size_t N>
E parse_of(const EnumNames<E, N>& names, std::string_view text, std::string_view field) {
  if (const auto value = find_of(names, text)) return *value;
  std::string known;
  for (const auto& [v, n] : names) {
    known += known.empty() ? "" : ", ";
    known += n;
  }
  throw config_error(Violation(std::string(field), fmt::format("\"{}\"", excerpt(text)), "must be one of " + known));
}

}  // namespace smelt::detail
