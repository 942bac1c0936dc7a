// The index of a non-decreasing integer sequence closest to a target, in few evaluations: the search over the
// expert count where memory or time is the one matched budget (docs/solver.md section 7 (b‴)).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "solve/exact_budget.hpp"
#include "solve/fraction.hpp"

namespace smelt::solve_detail {

// What places the evaluations (any placement gives the same answer, only their number changes).
struct ClosestHints {
  std::optional<std::int64_t> first;  // where to evaluate first (where the crossing is predicted)
  i128 slope_value = 0;               // the sequence's rise over slope_steps indices (0: unknown)
  i128 slope_steps = 0;
};

// Where the sequence crossed the target: lo the last evaluated index at most it (-1: none), hi the first
// above it (n: none), with their values.
struct Crossing {
  std::int64_t lo = -1;
  std::int64_t hi = 0;
  i128 f_lo = 0;
  i128 f_hi = 0;
  std::int64_t best = 0;  // the answer
};

// The index k of 0 .. n - 1 whose |f(k) - t| is smallest, the largest on ties, for a non-decreasing f:
// the last index at most t or the last of the plateau of the first above it (equal values tie, and the larger
// index wins). `value(k)` evaluates f at k; `known` holds the indices evaluated already, with their values.
// Secant steps between the two sides, bisecting after two that do not halve the bracket; extrapolation with
// the hints' slope (or the last two evaluations') where one side is known; O(log n) evaluations at worst.
// `cannot_enter(gap)` (gap = |f - t| / t): true when an index this far off is of no use, so that the plateau
// above the target is not walked for it; the answer is then still the best, or no better than that gap.
template <class Value, class CannotEnter>
Crossing closest_index(std::int64_t n, i128 t, const std::vector<std::pair<std::int64_t, i128>>& known,
                       const ClosestHints& hints, Value&& value, CannotEnter&& cannot_enter) {
  using i64 = std::int64_t;
  const auto floor_div = [](i128 a, i128 b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0); };
  Crossing c{-1, n, 0, 0, 0};
  i64 last_k = -1, prev_k = -1;  // the last two evaluations, for a slope where both lie on one side
  i128 last_f = 0, prev_f = 0;
  const auto note = [&](i64 k, i128 f) {
    if (f <= t) {
      if (k > c.lo) c.lo = k, c.f_lo = f;
    } else if (k < c.hi) {
      c.hi = k, c.f_hi = f;
    }
  };
  const auto eval = [&](i64 k) {
    const i128 f = value(k);
    note(k, f);
    prev_k = last_k, prev_f = last_f;
    last_k = k, last_f = f;
    return f;
  };
  for (const auto& [k, f] : known) note(k, f);
  if (hints.first) {
    const i64 k = std::clamp<i64>(*hints.first, 0, n - 1);
    if (k > c.lo && k < c.hi) eval(k);
  } else if (c.lo < 0 && c.hi == n) {
    eval(n - 1);
  }
  int stalls = 0;  // secant steps in a row that did not halve the bracket: the third one bisects
  i64 reach = 1;   // one-sided steps go at least this far, doubling after two: a short extrapolation gallops
  int one_sided = 0;
  while (c.lo + 1 < c.hi) {
    i128 k;
    if (c.lo >= 0 && c.hi < n) {  // a bracket: the secant's last index at most the target
      const i64 width = c.hi - c.lo;
      k = stalls == 2 ? c.lo + width / 2 : c.lo + floor_div((t - c.f_lo) * width, c.f_hi - c.f_lo);
      eval(static_cast<i64>(std::clamp<i128>(k, c.lo + 1, c.hi - 1)));
      stalls = stalls < 2 && 2 * (c.hi - c.lo) > width ? stalls + 1 : 0;
      continue;
    }
    // One side known: extrapolated with the slope of the last two evaluations, or the hints', or the far end.
    std::pair<i128, i128> s{hints.slope_value, hints.slope_steps};
    if (s.second < 0) s = {-s.first, -s.second};
    if (prev_k >= 0 && (last_f - prev_f) * (last_k - prev_k) > 0)
      s = last_k > prev_k ? std::pair<i128, i128>{last_f - prev_f, last_k - prev_k}
                          : std::pair<i128, i128>{prev_f - last_f, prev_k - last_k};
    const bool slope = s.first > 0 && s.second > 0;
    if (c.lo >= 0)
      k = std::max<i128>(slope ? c.lo + floor_div((t - c.f_lo) * s.second, s.first) : n - 1, c.lo + reach);
    else
      k = std::min<i128>(slope ? c.hi - floor_div((c.f_hi - t) * s.second + s.first - 1, s.first) : 0, c.hi - reach);
    if (++one_sided >= 2) reach *= 2;
    eval(static_cast<i64>(std::clamp<i128>(k, c.lo + 1, c.hi - 1)));
  }
  if (c.lo > c.hi) {  // a sequence that fell: no crossing; the largest index at most t, as evaluated
    c.best = c.lo;
    return c;
  }
  c.best = c.lo;
  if (c.hi < n && (c.lo < 0 || compare(gap(c.f_hi, t), gap(c.f_lo, t)) <= 0)) {
    c.best = c.hi;
    // Equal values tie and the larger index wins: the last of hi's plateau, galloping then bisecting.
    if (!cannot_enter(gap(c.f_hi, t))) {
      i64 a = c.hi, b = n, step = 1;  // a on the plateau, b beyond it (n: not yet known)
      while (a + step < n) {
        if (value(a + step) != c.f_hi) {
          b = a + step;
          break;
        }
        a += step, step *= 2;
      }
      while (b - a > 1) {
        const i64 mid = a + (b - a) / 2;
        (value(mid) == c.f_hi ? a : b) = mid;
      }
      c.best = a;
    }
  }
  return c;
}

}  // namespace smelt::solve_detail
