// Time per token in the solver: a candidate's predicted training and decode
// seconds per token (smelt::step_time) on MatchOptions::hardware under the
// memory layout, as a matched budget, a limit or a figure beside the
// Baseline's (docs/solver.md section 5, "Time per token").
#pragma once

#include <optional>
#include <string>

#include "smelt/config.hpp"
#include "smelt/hardware.hpp"
#include "smelt/solve.hpp"
#include "solve/fraction.hpp"
#include "time/step_time.hpp"

namespace smelt::solve_detail {

using namespace smelt::detail;  // the helpers every module shares

// Whether the search itself needs time: matched (Budget::time) or limited.
bool time_in_search(const MatchOptions& options);

// A config's predicted seconds per token, or why the layout cannot shard it
// (the config_error's lines joined by "; ").
struct TimeFigure {
  std::optional<double> training;  // seconds per token of a training step
  std::optional<double> decode;    // seconds per token of a decode step
  std::string error;
};
TimeFigure time_figure(const ModelConfig& config, const HardwareSpec& hardware, const MatchOptions& options);

// The training seconds per token alone, as attoseconds (the search's component and limit); none where the layout
// cannot shard the config.
std::optional<i128> training_attoseconds(const ModelConfig& config, const HardwareSpec& hardware,
                                         const MatchOptions& options);

// Seconds as a whole number of attoseconds: the exact integer the objective
// compares (a training step's time per token is above 1e-15 s on any device
// the specs describe, so nine significant digits or more survive).
i128 attoseconds(double seconds);

// The largest training attoseconds per token a candidate may take under
// MatchOptions::time_limit, given the Baseline's.
i128 time_ceiling(const MatchOptions& options, i128 baseline);

// training_attoseconds() for the candidates of one solve, the shape of their training step (the resolved layout,
// the schedule, each stage's kinds of visit) found once, from the first candidate the layout shards: the same
// figures by the same code (time_detail::training_shape()); the full path where the shape cannot be found.
class TimeEvaluator {
 public:
  TimeEvaluator(const HardwareSpec* hardware, const MatchOptions& options) : hardware_(hardware), options_(options) {}
  std::optional<i128> attoseconds(const ModelConfig& config);

 private:
  const HardwareSpec* hardware_;
  const MatchOptions& options_;
  bool unsupported_ = false;
  std::optional<time_detail::TrainingShape> shape_;
};

}  // namespace smelt::solve_detail
