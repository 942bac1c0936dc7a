// How bench reports compare a FLOP count with the analytic one.
#pragma once

namespace smelt::detail {

// Relative difference in percent of `value` against `reference`; 0 when the
// reference is 0 (nothing to compare with).
inline double diff_pct(double value, double reference) {
  return reference == 0 ? 0.0 : 100.0 * (value - reference) / reference;
}

}  // namespace smelt::detail
