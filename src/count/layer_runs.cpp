// layer_runs(): the layers of a count grouped by cost and cut into arithmetic runs.
#include "smelt/layer_runs.hpp"

#include <cstddef>

#include "count/arithmetic_runs.hpp"

namespace smelt {

bool same_cost(const LayerCost& a, const LayerCost& b) noexcept {
  LayerCost renumbered = b;
  renumbered.layer = a.layer;
  return a == renumbered;
}

std::vector<LayerRun> layer_runs(const ModelConfig& config, const CostReport& cost) {
  const std::vector<LayerCost>& layers = cost.layers;
  const auto n = static_cast<std::int64_t>(layers.size());
  const auto at = [](std::int64_t i) { return static_cast<std::size_t>(i); };

  // group[i]: which distinct cost layer i has; firsts[g]: the first layer of group g.
  // count() copies one cost per kind of layer, so there are a handful of groups.
  std::vector<std::size_t> group(at(n));
  std::vector<std::int64_t> firsts;
  for (std::int64_t i = 0; i < n; ++i) {
    std::size_t g = firsts.size();
    if (i > 0 && same_cost(layers[at(i)], layers[at(i - 1)])) {
      g = group[at(i - 1)];
    } else {
      for (std::size_t k = 0; k < firsts.size(); ++k)
        if (same_cost(layers[at(i)], layers[at(firsts[k])])) {
          g = k;
          break;
        }
      if (g == firsts.size()) firsts.push_back(i);
    }
    group[at(i)] = g;
  }

  std::vector<LayerRun> runs;
  for (const count_detail::IndexRun& r :
       count_detail::arithmetic_runs(group, firsts.size(), count_detail::layer_periods(config, n)))
    runs.push_back({r.first + 1, r.last + 1, r.step, layers[at(r.first)]});
  return runs;
}

}  // namespace smelt
