#include "solve/memory_budget.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "memory/resolved_layout.hpp"
#include "smelt/checked_config.hpp"
#include "smelt/error.hpp"
#include "smelt/time.hpp"
#include "solve/relax.hpp"
#include "solve/time_budget.hpp"
#include "time/step_time.hpp"

namespace smelt::solve_detail {

using namespace smelt::detail;  // the helpers every module shares

bool memory_in_search(const MatchOptions& o) {
  return o.memory_limit.bytes > 0 || std::find(o.match.begin(), o.match.end(), Budget::memory) != o.match.end();
}

MemoryFigure memory_figure(const ModelConfig& config, const MemoryLayout& layout) {
  try {
    // A candidate of a checked Baseline, or the Baseline itself: valid configs, not validated again.
    return {memory(checked_as_read(config), layout).total, {}};
  } catch (const config_error& e) {
    return {std::nullopt, joined(e)};
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

ExactBudgets search_target(const CheckedConfig& baseline, const Plan& plan) {
  ExactBudgets b = exact_budgets(baseline, plan.contexts);
  if (memory_in_search(plan.options)) b.memory = memory(baseline, plan.options.memory_layout).total;
  if (time_in_search(plan.options))
    b.time = attoseconds(time_detail::training_seconds_per_token(baseline, plan.options.memory_layout, *plan.hardware,
                                                                 plan.options.time_options));
  return b;
}

void throw_none_fits(const Plan& plan, const std::optional<std::int64_t>& smallest, const std::optional<i128>& fastest,
                     const ExactBudgets& target) {
  const DeviceMemory& limit = plan.options.memory_limit;
  const std::string value = limit.name.empty() ? fmt::format("{} B", limit.bytes) : limit.name;
  if (smallest)
    throw config_error(
        Violation{"MatchOptions::memory_limit", value,
                  fmt::format("no candidate of the space fits in {} bytes per GPU: the smallest needs {} bytes",
                              limit.bytes, *smallest)});
  if (fastest)
    throw config_error(Violation{
        "MatchOptions::time_limit", fmt::format("{}", plan.options.time_limit),
        fmt::format("no candidate of the space trains within {} x the Baseline's time per token on {}: the fastest "
                    "takes {:.4f} x",
                    plan.options.time_limit, plan.hardware->name,
                    static_cast<double>(*fastest) / static_cast<double>(target.time))});
  const bool memory_limited = limit.bytes > 0;
  throw config_error(Violation{memory_limited ? "MatchOptions::memory_limit" : "MatchOptions::time_limit",
                               memory_limited ? value : fmt::format("{}", plan.options.time_limit),
                               "the memory layout shards no candidate of the space: each breaks a rule of its tp, ep "
                               "or etp (the heads, KV heads, FFN widths or experts they must divide)"});
}

bool all_fit(const Plan& plan, const std::vector<Found>& found, const ExactBudgets& target) {
  const i128 ceiling = time_ceiling(plan.options, target.time);
  for (const Found& f : found) {
    const ModelConfig c = make_candidate(plan, f.hidden, f.experts, f.geometry, f.expert_width);
    if (!fits(memory_figure(c, plan.options.memory_layout), plan.options)) return false;
    if (plan.options.time_limit > 0) {
      const std::optional<i128> t = training_attoseconds(c, *plan.hardware, plan.options);
      if (!t || *t > ceiling) return false;
    }
  }
  return true;
}

bool ep_divides(const MatchOptions& o, std::int64_t experts) {
  return experts == 0 || experts % o.memory_layout.ep == 0;
}

}  // namespace smelt::solve_detail
