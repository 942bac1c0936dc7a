// The training step's time alone, for callers that need no report (the
// solver, once per candidate): what step_time() puts in
// TimeReport::training_seconds_per_token, without the decode step, the
// report or a copy of the config.
#pragma once

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "memory/resolved_layout.hpp"
#include "smelt/config.hpp"
#include "smelt/detail/violations.hpp"
#include "smelt/hardware.hpp"
#include "smelt/memory.hpp"
#include "smelt/schedule.hpp"
#include "smelt/time.hpp"
#include "time/ops.hpp"

namespace smelt::time_detail {

// The options' violations, as step_time() reports them: the solver checks them whether or not it predicts a time.
void check_options(const TimeOptions& options, detail::Violations& errors);

// Throws config_error as step_time() does (the options' and the layout's violations at once).
double training_seconds_per_token(const ModelConfig& config, const MemoryLayout& layout, const HardwareSpec& hardware,
                                  const TimeOptions& options);

// What the training step's time takes from the layout and the layers alone: the resolved layout, the schedule and
// each stage's kinds of visit, the same for every config with these layers, loop, MoE layers and attention pattern
// that the layout shards (every candidate of one solve). Throws config_error as training_seconds_per_token() does.
struct TrainingShape {
  memory_detail::ResolvedLayout r;
  LayerSchedule schedule;
  std::vector<std::vector<VisitKind>> kinds;  // each stage's
  // The layers by kind (MoE or dense, attention kind: 3 x moe + attention), for the weight elements without a
  // pass over the layers per config: each kind's first layer (-1 for none) and layers, every layer's visits, and
  // each stage's kinds in the order they first appear there, each with its layers.
  std::array<std::int64_t, 6> first_layer{-1, -1, -1, -1, -1, -1};
  std::array<std::int64_t, 6> layers{};
  std::int64_t visits = 0;
  std::vector<std::vector<std::pair<std::size_t, std::int64_t>>> stage_layers;
};
TrainingShape training_shape(const ModelConfig& config, const MemoryLayout& layout, const TimeOptions& options);

// training_seconds_per_token() of a config of that shape which the layout shards (check_shards()): the same
// double, by the same code, without finding the shape again.
double training_seconds_per_token(const ModelConfig& config, const TrainingShape& shape, const HardwareSpec& hardware,
                                  const TimeOptions& options);

}  // namespace smelt::time_detail
