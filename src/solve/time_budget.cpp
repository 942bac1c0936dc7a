#include "solve/time_budget.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "memory/resolved_layout.hpp"
#include "smelt/checked_config.hpp"
#include "smelt/error.hpp"
#include "smelt/time.hpp"
#include "solve/relax.hpp"
#include "time/step_time.hpp"

namespace smelt::solve_detail {

using namespace smelt::detail;  // the helpers every module shares

bool time_in_search(const MatchOptions& o) {
  return o.time_limit > 0 || std::find(o.match.begin(), o.match.end(), Budget::time) != o.match.end();
}

// A time that is not a finite number (overflow_error, time/roofline.cpp) is the spec's or the sizes' fault, not a
// layout that cannot shard the config: it is raised, never taken for "no figure" (a candidate without one would
// keep the target's time and match it exactly).
TimeFigure time_figure(const ModelConfig& config, const HardwareSpec& hardware, const MatchOptions& o) {
  try {
    // A candidate of a checked Baseline, or the Baseline itself: valid configs, not validated again.
    const TimeReport r = step_time(checked_as_read(config), o.memory_layout, hardware, o.time_options);
    return {r.training_seconds_per_token, r.decode_seconds_per_token, {}};
  } catch (const overflow_error&) {
    throw;
  } catch (const config_error& e) {
    return {std::nullopt, std::nullopt, joined(e)};
  }
}

std::optional<i128> training_attoseconds(const ModelConfig& config, const HardwareSpec& hardware,
                                         const MatchOptions& o) {
  double seconds = 0;
  try {
    seconds = time_detail::training_seconds_per_token(config, o.memory_layout, hardware, o.time_options);
  } catch (const overflow_error&) {
    throw;
  } catch (const config_error&) {
    return std::nullopt;
  }
  return attoseconds(seconds);
}

std::optional<i128> TimeEvaluator::attoseconds(const ModelConfig& config) {
  if (unsupported_) return training_attoseconds(config, *hardware_, options_);
  {
    Violations errors;
    memory_detail::check_shards(config, options_.memory_layout, errors);
    if (!errors.empty()) return std::nullopt;  // as training_attoseconds(): the layout cannot shard it
  }
  if (!shape_) {
    try {
      shape_ = time_detail::training_shape(config, options_.memory_layout, options_.time_options);
    } catch (const config_error&) {
      unsupported_ = true;  // the full path raises or refuses it, as before
      return training_attoseconds(config, *hardware_, options_);
    }
  }
  double seconds = 0;
  try {
    seconds = time_detail::training_seconds_per_token(config, *shape_, *hardware_, options_.time_options);
  } catch (const overflow_error&) {
    throw;
  } catch (const config_error&) {
    return std::nullopt;
  }
  return solve_detail::attoseconds(seconds);
}

// NaN and infinity compare false with everything, and their cast to an integer is undefined: once, every NaN time
// became the same integer, so a candidate matched a NaN target to 0.000%.
i128 attoseconds(double seconds) {
  constexpr double kMaxSeconds = 1e20;  // 1e38 attoseconds: within 128-bit integers (1.7e38)
  if (!(seconds > 0 && seconds < kMaxSeconds))
    throw overflow_error(
        Violation("training seconds per token", fmt::format("{}", seconds),
                  fmt::format("must be a positive number below {} to compare in attoseconds", kMaxSeconds)));
  return static_cast<i128>(std::round(seconds * 1e18));
}

i128 time_ceiling(const MatchOptions& o, i128 baseline) {
  const double ceiling = std::floor(o.time_limit * static_cast<double>(baseline));
  // attoseconds() keeps every time below 1e38, within 128 bits: a larger ceiling admits them all.
  return static_cast<i128>(std::min(ceiling, 1e38));
}

}  // namespace smelt::solve_detail
