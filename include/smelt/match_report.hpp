// JSON for solver results (docs/json-schema.md): ordered keys, schema_version
// first (kMatchReportSchemaVersion, include/smelt/schema_version.hpp), the best
// config in native form so it feeds straight back into count.
#pragma once

#include <string>

#include "smelt/schema_version.hpp"
#include "smelt/solve.hpp"

namespace smelt {

std::string match_report_json(const MatchResult& result);

}  // namespace smelt
