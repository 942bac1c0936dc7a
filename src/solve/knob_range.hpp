// Checking, counting and listing the aligned values of one knob's range,
// shared by the resolvers of the search space (space.cpp, attention_space.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "smelt/detail/violations.hpp"
#include "smelt/solve.hpp"

namespace smelt::solve_detail {

using namespace smelt::detail;  // the helpers every module shares

// "V" for a pinned range, "LO:HI" otherwise.
std::string range_text(const KnobRange& r);

// Multiples of `align` in [lo, hi], lo >= 1: counted, not listed.
inline std::int64_t count_multiples(std::int64_t lo, std::int64_t hi, std::int64_t align) {
  return lo > hi ? 0 : hi / align - (lo - 1) / align;
}

std::vector<std::int64_t> list_multiples(std::int64_t lo, std::int64_t hi, std::int64_t align);

// Checks a knob's range against [1, max] and counts its multiples of `align`
// (0 with an error, or when the alignment is bad: reported with the alignment).
// Violations name `field`. Nothing is allocated: the space is sized first.
std::int64_t check_knob(const std::string& field, const KnobRange& r, std::int64_t max, std::int64_t align,
                        const std::string& align_field, Violations& errors);

}  // namespace smelt::solve_detail
