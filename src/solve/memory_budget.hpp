// Per-GPU memory in the solver: a candidate's smelt::memory total under
// MatchOptions::memory_layout, as a matched budget, a limit or a figure beside
// the Baseline's (docs/solver.md section 5, "Memory per GPU").
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "smelt/config.hpp"
#include "smelt/solve.hpp"
#include "solve/exact_budget.hpp"
#include "solve/found.hpp"
#include "solve/space.hpp"

namespace smelt::solve_detail {

using namespace smelt::detail;  // the helpers every module shares

// Whether the search itself needs memory: matched (Budget::memory) or limited.
bool memory_in_search(const MatchOptions& options);

// A config's per-GPU bytes under the layout, or why the layout cannot shard
// it (the config_error's lines joined by "; ").
struct MemoryFigure {
  std::optional<std::int64_t> bytes;
  std::string error;
};
MemoryFigure memory_figure(const ModelConfig& config, const MemoryLayout& layout);

// Whether the layout's tp, ep and etp divide the config's heads, KV heads,
// widths and experts: memory() would refuse it otherwise. No memory is counted.
bool shardable(const ModelConfig& config, const MemoryLayout& layout);

// Whether the figure is within the limit (no limit: always).
bool fits(const MemoryFigure& figure, const MatchOptions& options);

// The Baseline's budgets, with its memory under the layout and its training
// time per token on the hardware where the search needs them (then the layout
// must hold for the Baseline: config_error naming MemoryLayout's fields
// otherwise).
ExactBudgets search_target(const CheckedConfig& baseline, const Plan& plan);

// Under a memory or time limit that no candidate of the space meets:
// config_error naming MatchOptions::memory_limit with the smallest memory of
// the space, or MatchOptions::time_limit with the fastest time (every (H,
// geometry, width) is tried at its fewest experts before one is kept), or
// saying the layout could shard none.
[[noreturn]] void throw_none_fits(const Plan& plan, const std::optional<std::int64_t>& smallest,
                                  const std::optional<i128>& fastest, const ExactBudgets& target);

// Whether every found candidate fits the limits and the layout shards it.
bool all_fit(const Plan& plan, const std::vector<Found>& found, const ExactBudgets& target);

// Expert counts the layout's expert parallelism can split: those that ep divides.
bool ep_divides(const MatchOptions& options, std::int64_t experts);

}  // namespace smelt::solve_detail
