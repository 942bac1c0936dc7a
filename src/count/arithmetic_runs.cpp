// arithmetic_runs(): positions grouped by kind, cut into arithmetic runs with the step that gives the fewest.
#include "count/arithmetic_runs.hpp"

#include <algorithm>
#include <numeric>

namespace smelt::count_detail {

std::vector<std::int64_t> layer_periods(const ModelConfig& c, std::int64_t n) {
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

std::vector<IndexRun> arithmetic_runs(const std::vector<std::size_t>& group, std::size_t groups,
                                      const std::vector<std::int64_t>& steps) {
  const auto n = static_cast<std::int64_t>(group.size());
  const auto at = [](std::int64_t i) { return static_cast<std::size_t>(i); };
  std::vector<std::vector<std::int64_t>> members(groups);
  for (std::int64_t i = 0; i < n; ++i) members[group[at(i)]].push_back(i);

  // With one step s a group's runs are its maximal chains i, i + s, ...: one
  // starts at each member whose position s before lies outside the group.
  std::vector<IndexRun> runs;
  for (std::size_t g = 0; g < groups; ++g) {
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
      runs.push_back({i, last, last == i ? 1 : step, g});
    }
  }
  std::sort(runs.begin(), runs.end(), [](const IndexRun& a, const IndexRun& b) { return a.first < b.first; });
  return runs;
}

}  // namespace smelt::count_detail
