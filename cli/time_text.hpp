// The time report as text: the three steps per token, what binds them, their largest terms.
#pragma once

#include <string>

#include "smelt/time.hpp"

namespace smelt::cli {

std::string time_text(const TimeReport& report);

}  // namespace smelt::cli
