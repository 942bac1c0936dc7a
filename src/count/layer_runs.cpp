// layer_runs(): the layers of a count grouped by cost and cut into arithmetic runs.
#include "smelt/layer_runs.hpp"

#include <algorithm>
#include <cstddef>
#include <numeric>

namespace smelt {
namespace {

// 1 and the periods of the layer sequence: the attention pattern repeats every
// pattern.size() layers, MoE layers chosen by rule every moe.every layers, and
// both together every lcm of the two. Steps of n or more hold single layers.
std::vector<std::int64_t> candidate_steps(const ModelConfig& c, std::int64_t n) {
  std::vector<std::int64_t> steps{1};
  const auto pattern = static_cast<std::int64_t>(c.attention.pattern.size());
  const std::int64_t every = c.is_moe() && c.moe.layers.empty() ? c.moe.every : 1;
  for (const std::int64_t s : {pattern, every})
    if (s > 1 && s < n) steps.push_back(s);
  if (pattern > 1 && every > 1 && pattern < n && every < n) {
    const std::int64_t both = std::lcm(pattern, every);  // below n^2, at most 2^32
    if (both < n) steps.push_back(both);
  }
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  return steps;
}

}  // namespace

bool same_cost(const LayerCost& a, const LayerCost& b) noexcept {
  LayerCost renumbered = b;
  renumbered.layer = a.layer;
  return a == renumbered;
}

std::vector<LayerRun> layer_runs(const ModelConfig& config, const CostReport& cost) {
  const std::vector<LayerCost>& layers = cost.layers;
  const auto n = static_cast<std::int64_t>(layers.size());
  const auto at = [](std::int64_t i) { return static_cast<std::size_t>(i); };

  // group[i]: which distinct cost layer i has; members[g]: its layers, in order.
  // count() copies one cost per kind of layer, so there are a handful of groups.
  std::vector<std::size_t> group(at(n));
  std::vector<std::vector<std::int64_t>> members;
  for (std::int64_t i = 0; i < n; ++i) {
    std::size_t g = members.size();
    if (i > 0 && same_cost(layers[at(i)], layers[at(i - 1)])) {
      g = group[at(i - 1)];
    } else {
      for (std::size_t k = 0; k < members.size(); ++k)
        if (same_cost(layers[at(i)], layers[at(members[k].front())])) {
          g = k;
          break;
        }
      if (g == members.size()) members.emplace_back();
    }
    group[at(i)] = g;
    members[g].push_back(i);
  }

  // With one step s a group's runs are its maximal chains i, i + s, ...: one
  // starts at each member whose layer s before lies outside the group.
  const std::vector<std::int64_t> steps = candidate_steps(config, n);
  std::vector<LayerRun> runs;
  for (std::size_t g = 0; g < members.size(); ++g) {
    const auto starts_at = [&](std::int64_t i, std::int64_t s) { return i < s || group[at(i - s)] != g; };
    std::int64_t step = 1;
    auto fewest = static_cast<std::int64_t>(members[g].size()) + 1;
    for (const std::int64_t s : steps) {
      const auto starts =
          std::count_if(members[g].begin(), members[g].end(), [&](std::int64_t i) { return starts_at(i, s); });
      if (starts < fewest) {
        fewest = starts;
        step = s;
      }
    }
    for (const std::int64_t i : members[g]) {
      if (!starts_at(i, step)) continue;
      std::int64_t last = i;
      while (last + step < n && group[at(last + step)] == g) last += step;
      runs.push_back({i + 1, last + 1, last == i ? 1 : step, layers[at(i)]});
    }
  }
  std::sort(runs.begin(), runs.end(), [](const LayerRun& a, const LayerRun& b) { return a.first < b.first; });
  return runs;
}

}  // namespace smelt
