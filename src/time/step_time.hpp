// The training step's time alone, for callers that need no report (the
// solver, once per candidate): what step_time() puts in
// TimeReport::training_seconds_per_token, without the decode step, the
// report or a copy of the config.
#pragma once

#include "smelt/config.hpp"
#include "smelt/hardware.hpp"
#include "smelt/memory.hpp"
#include "smelt/time.hpp"
#include "smelt/violations.hpp"

namespace smelt::time_detail {

// The options' violations, as step_time() reports them: the solver checks them whether or not it predicts a time.
void check_options(const TimeOptions& options, detail::Violations& errors);

// Throws config_error as step_time() does (the options' and the layout's violations at once).
double training_seconds_per_token(const ModelConfig& config, const MemoryLayout& layout, const HardwareSpec& hardware,
                                  const TimeOptions& options);

}  // namespace smelt::time_detail
