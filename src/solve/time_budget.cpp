#include "solve/time_budget.hpp"

#include <algorithm>
#include <cmath>

#include "smelt/checked_config.hpp"
#include "smelt/error.hpp"
#include "smelt/time.hpp"
#include "solve/relax.hpp"
#include "time/step_time.hpp"

namespace smelt::detail {

bool time_in_search(const MatchOptions& o) {
  return o.time_limit > 0 || std::find(o.match.begin(), o.match.end(), Budget::time) != o.match.end();
}

TimeFigure time_figure(const ModelConfig& config, const HardwareSpec& hardware, const MatchOptions& o) {
  try {
    // A candidate of a checked Baseline, or the Baseline itself: valid configs, not validated again.
    const TimeReport r = step_time(checked_as_read(config), o.memory_layout, hardware, o.time_options);
    return {r.training_seconds_per_token, r.decode_seconds_per_token, {}};
  } catch (const config_error& e) {
    return {std::nullopt, std::nullopt, joined(e)};
  }
}

std::optional<i128> training_attoseconds(const ModelConfig& config, const HardwareSpec& hardware,
                                         const MatchOptions& o) {
  try {
    return attoseconds(time_detail::training_seconds_per_token(config, o.memory_layout, hardware, o.time_options));
  } catch (const config_error&) {
    return std::nullopt;
  }
}

i128 attoseconds(double seconds) { return static_cast<i128>(std::round(seconds * 1e18)); }

i128 time_ceiling(const MatchOptions& o, i128 baseline) {
  return static_cast<i128>(std::floor(o.time_limit * static_cast<double>(baseline)));
}

}  // namespace smelt::detail
