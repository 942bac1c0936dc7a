// The memory report as JSON (docs/json-schema.md, kind "memory"): what
// `smelt-match memory --json` prints and smelt.memory() returns.
#pragma once

#include <string>

#include "smelt/memory.hpp"

namespace smelt {

std::string memory_report_json(const MemoryReport& report);

}  // namespace smelt
