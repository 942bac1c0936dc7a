#include "solve/memory_budget.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "memory/resolved_layout.hpp"
#include "smelt/checked_config.hpp"
#include "smelt/error.hpp"

namespace smelt::detail {

bool memory_in_search(const MatchOptions& o) {
  return o.memory_limit.bytes > 0 || std::find(o.match.begin(), o.match.end(), Budget::memory) != o.match.end();
}

MemoryFigure memory_figure(const ModelConfig& config, const MemoryLayout& layout) {
  try {
    // A candidate of a checked Baseline, or the Baseline itself: valid configs, not validated again.
    return {memory(checked_as_read(config), layout).total, {}};
  } catch (const config_error& e) {
    std::string joined;
    for (const Violation& v : e.violations()) joined += (joined.empty() ? "" : "; ") + v.text();
    return {std::nullopt, joined.empty() ? std::string(e.what()) : joined};
  }
}

bool shardable(const ModelConfig& config, const MemoryLayout& layout) {
  Violations errors;
  memory_detail::check_shards(config, layout, errors);
  return errors.empty();
}

bool fits(const MemoryFigure& figure, const MatchOptions& o) {
  if (!figure.bytes) return false;
  return o.memory_limit.bytes == 0 || *figure.bytes <= o.memory_limit.bytes;
}

ExactBudgets memory_target(const CheckedConfig& baseline, const Plan& plan) {
  ExactBudgets b = exact_budgets(baseline, plan.contexts);
  if (memory_in_search(plan.options)) b.memory = memory(baseline, plan.options.memory_layout).total;
  return b;
}

void throw_none_fits(const Plan& plan, const std::optional<std::int64_t>& smallest) {
  const DeviceMemory& limit = plan.options.memory_limit;
  const std::string value = limit.name.empty() ? fmt::format("{} B", limit.bytes) : limit.name;
  if (smallest)
    throw config_error(
        Violation{"MatchOptions::memory_limit", value,
                  fmt::format("no candidate of the space fits in {} bytes per GPU: the smallest needs {} bytes",
                              limit.bytes, *smallest)});
  throw config_error(Violation{"MatchOptions::memory_limit", value,
                               "the memory layout shards no candidate of the space: each breaks a rule of its tp, ep "
                               "or etp (the heads, KV heads, FFN widths or experts they must divide)"});
}

bool all_fit(const Plan& plan, const std::vector<Found>& found) {
  for (const Found& f : found)
    if (!fits(memory_figure(make_candidate(plan, f.hidden, f.experts, f.geometry, f.expert_width),
                            plan.options.memory_layout),
              plan.options))
      return false;
  return true;
}

bool ep_divides(const MatchOptions& o, std::int64_t experts) {
  return experts == 0 || experts % o.memory_layout.ep == 0;
}

}  // namespace smelt::detail
