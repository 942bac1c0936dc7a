// The time report as text: the three steps per token, what binds them, their largest terms.
#pragma once

#include <string>

#include "smelt/time.hpp"

namespace smelt::cli {

std::string time_text(const TimeReport& report);

// "1.25 ms", "61.9 us", "3.2 ns": three significant digits.
std::string seconds_text(double s);

}  // namespace smelt::cli
