// The field table of an option struct: one plain-data row per member (its
// name, what kind of value it holds, its bounds and a one-line doc with
// units), written once beside the struct. The library checks each row's bounds
// from it; the command line builds its options, help and parsing from it
// (flag = the name in kebab-case); the Python extension reads keywords by it
// (keyword = the name). A new option is one member and one row.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <string_view>
#include <type_traits>
#include <variant>

namespace smelt {

// What a field holds, as every reader spells it.
enum class OptionKind {
  integer,       // a whole number
  number,        // a real number
  boolean,       // true or false
  range,         // an integer range: "V" or "LO:HI" (Python: an int or a pair)
  ratio_range,   // a range of real ratios: "R" or "LO:HI" (Python: a number or a pair)
  word,          // one word of a fixed list ("proportional"), or a loop span's words
  integer_list,  // whole numbers
  number_list,   // real numbers
  word_list,     // words of a fixed list
};

std::string_view to_string(OptionKind kind);

inline constexpr double kUnbounded = std::numeric_limits<double>::infinity();

// One row. `member` points at the field; `lo` and `hi` bound the value (each
// item of a list, both ends of a range), inclusive, and are what validation
// checks; `doc` is one line with units, in which "{name}" stands for another
// field of the same struct, named as each reader spells it (a flag, a keyword).
template <class Options, class... Types>
struct OptionField {
  std::string_view name;
  OptionKind kind;
  std::variant<Types Options::*...> member;
  double lo = -kUnbounded;
  double hi = kUnbounded;
  std::string_view doc;
};

// Specialised beside each option struct: `owner` (the struct's name, as
// messages write "SearchSpace::align_hidden") and `fields` (a std::array of
// OptionField rows, in the order help and docs list them).
template <class Options>
struct OptionTable;

// The row named `name` of Options' table, or nullptr.
template <class Options>
constexpr const auto* find_field(std::string_view name) {
  for (const auto& row : OptionTable<Options>::fields)
    if (row.name == name) return &row;
  return static_cast<const std::remove_reference_t<decltype(OptionTable<Options>::fields[0])>*>(nullptr);
}

// Whether `value` lies within the row's bounds.
template <class Row, class T>
constexpr bool within_bounds(const Row& row, T value) {
  const auto v = static_cast<double>(value);
  return v >= row.lo && v <= row.hi;
}

}  // namespace smelt
