// Checking an option struct's fields against the bounds of its table
// (include/smelt/option_fields.hpp), so that each bound is written once.
#pragma once

#include <cassert>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include <fmt/format.h>

#include "smelt/detail/violations.hpp"
#include "smelt/option_fields.hpp"

namespace smelt::detail {

// The row of Options' table named `name`; the name is the library's own, so a
// missing row is a bug.
template <class Options>
const auto& option_row(std::string_view name) {
  const auto* row = find_field<Options>(name);
  assert(row != nullptr);
  return *row;
}

// "SearchSpace::align_hidden".
template <class Options>
std::string option_name(std::string_view name) {
  return fmt::format("{}::{}", OptionTable<Options>::owner, name);
}

// A bound as an integer (an unbounded end is the type's own end).
inline std::int64_t integer_bound(double bound) {
  if (bound >= 9.2e18) return INT64_MAX;
  if (bound <= -9.2e18) return INT64_MIN;
  return static_cast<std::int64_t>(bound);
}

// Whether `value` lies within the row's bounds.
template <class Row>
bool within(const Row& row, double value) {
  return within_bounds(row, value);
}

// An integer field against its row: "must be positive" (lo = 1), "must be at
// least LO", "must be at most HI" (Violations::range).
template <class Options>
void check_integer(const Options& options, std::string_view name, Violations& errors) {
  const auto& row = option_row<Options>(name);
  const std::int64_t value = options.*std::get<std::int64_t Options::*>(row.member);
  const std::int64_t lo = integer_bound(row.lo), hi = integer_bound(row.hi);
  // The field's name only for a violation: memory() checks its layout once per solver candidate.
  if (value < lo || value > hi) errors.range(option_name<Options>(name), value, lo, hi);
}

}  // namespace smelt::detail
