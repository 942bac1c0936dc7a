// The time report as JSON (docs/json-schema.md, kind "time").
#pragma once

#include <string>

#include "smelt/time.hpp"

namespace smelt {

std::string time_report_json(const TimeReport& report);

}  // namespace smelt
