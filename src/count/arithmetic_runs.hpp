// Positions of a sequence (stored layers), each in one of a few groups, cut
// into arithmetic runs of one group: count's layer runs (layer_runs.cpp) and
// the memory and time models' runs of a stage's layer visits share the cut.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "smelt/config.hpp"

namespace smelt::count_detail {

// Positions first, first + step, ..., last (0-based) of one group.
struct IndexRun {
  std::int64_t first = 0;
  std::int64_t last = 0;
  std::int64_t step = 1;  // 1 for a single position
  std::size_t group = 0;
};

// 1 and the periods of the config's layer sequence below n: the attention
// pattern repeats every pattern.size() layers, MoE layers chosen by rule every
// moe.every layers, and both together every lcm of the two. Periods hold for
// any stretch of the layers, so they serve a stage's layers as well as the model's.
std::vector<std::int64_t> layer_periods(const ModelConfig& config, std::int64_t n);

// Every position of `group` (position i in group[i], groups below `groups`)
// in exactly one run, the runs in order of their first position. Each group
// is cut with one step: the step of `steps` that gives it the fewest runs (a
// tie to the smaller); its runs are its maximal chains i, i + step, ....
// Time: positions x (groups + steps).
std::vector<IndexRun> arithmetic_runs(const std::vector<std::size_t>& group, std::size_t groups,
                                      const std::vector<std::int64_t>& steps);

}  // namespace smelt::count_detail
