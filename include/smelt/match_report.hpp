// JSON for solver results (docs/json-schema.md): ordered keys, schema_version
// first, the best config in native form so it feeds straight back into count.
#pragma once

#include <string>

#include "smelt/solve.hpp"

namespace smelt {

// Match reports are at schema_version 3 (2: relaxations, max_head_dim,
// attention_ratio; 3: distinct candidates with their head splits); the other
// reports stay at kReportSchemaVersion.
inline constexpr int kMatchReportSchemaVersion = 3;

std::string match_report_json(const MatchResult& result);

}  // namespace smelt
