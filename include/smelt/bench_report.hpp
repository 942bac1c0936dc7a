// JSON for benchmark results (docs/json-schema.md): ordered keys,
// schema_version first, every FLOP count beside its differences.
#pragma once

#include <string>
#include <vector>

#include "smelt/bench.hpp"

namespace smelt {

// One result, or several with "comparison" ratios of each to the first.
std::string bench_report_json(const std::vector<BenchResult>& results);

namespace detail {

// How the report compares a FLOP count with the analytic one (the CLI's table
// too): the relative difference in percent of `value` against `reference`; 0
// when the reference is 0 (nothing to compare with). In smelt::detail
// (include/smelt/violations.hpp says why).
inline double diff_pct(double value, double reference) {
  return reference == 0 ? 0.0 : 100.0 * (value - reference) / reference;
}

}  // namespace detail

}  // namespace smelt
