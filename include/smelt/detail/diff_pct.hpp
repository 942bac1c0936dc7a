// How the bench report compares a FLOP count with the analytic one (the CLI's
// table too). Not API: shared by the library and the CLI
// (include/smelt/detail/violations.hpp says why it is public).
#pragma once

namespace smelt::detail {

// The relative difference in percent of `value` against `reference`; 0 when the reference is 0 (nothing to
// compare with).
inline double diff_pct(double value, double reference) {
  return reference == 0 ? 0.0 : 100.0 * (value - reference) / reference;
}

}  // namespace smelt::detail
