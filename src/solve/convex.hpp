// The rightmost minimiser of a convex sequence, by binary search: the search over expert counts
// (docs/solver.md section 7 (b)) and the estimates that place its counts.
#pragma once

#include <cstdint>

#include "solve/fraction.hpp"

namespace smelt::solve_detail {

using namespace smelt::detail;  // the helpers every module shares

// Rightmost minimiser over first .. last of a convex sequence f (exact
// fractions): the last k whose step from k - 1 does not increase it, found by
// binary search (more experts win ties).
template <class F>
std::int64_t rightmost_minimiser(std::int64_t first, std::int64_t last, const F& f) {
  std::int64_t lo = first, hi = last;
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo + 1) / 2;
    if (compare(f(mid), f(mid - 1)) <= 0)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}
template <class F>
std::int64_t rightmost_minimiser(std::int64_t n, const F& f) {
  return rightmost_minimiser(0, n - 1, f);
}

}  // namespace smelt::solve_detail
