// JSON for benchmark results (docs/json-schema.md): ordered keys,
// schema_version first, every FLOP count beside its differences.
#pragma once

#include <string>
#include <vector>

#include "smelt/bench.hpp"

namespace smelt {

// One result, or several with "comparison" ratios of each to the first.
std::string bench_report_json(const std::vector<BenchResult>& results);

}  // namespace smelt
