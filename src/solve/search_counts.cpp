// What the search counts for one candidate: its budgets with memory and time at their targets, its memory
// and time once per visit of its (geometry, width), and whether it fits the limits and the layout.
#include "solve/search.hpp"

#include "config/validate_fields.hpp"
#include "solve/memory_budget.hpp"
#include "solve/time_budget.hpp"

namespace smelt::solve_detail {

using namespace smelt::detail;  // the helpers every module shares
namespace {

using i64 = Search::i64;

}  // namespace

Search::Components Search::counted(i64 h, i64 e, const Geometry& g, i64 w) {
  ++evaluated_;
  solve_detail::set_knobs(plan_, h, e, g, w, scratch_);
  solve_detail::ExactBudgets b;
  // Memory or time matched alone needs no FLOPs, parameters or KV cache: the rules count() checks first, and
  // count()'s error where a total passes 64 bits, raised as before by the largest expert count of each hidden
  // size, which every visited size counts (the totals do not fall as E rises).
  if (objective_.flops || objective_.params || objective_.kv || e == plan_.experts.back())
    b = solve_detail::exact_budgets(scratch_, plan_.contexts, plan_.kinds);
  else
    config_detail::validate_fields(scratch_);
  b.memory = target_memory_;
  b.time = target_time_;
  return objective_.components(b);
}

void Search::complete(Components& c, i64 h, i64 e, const Geometry& g, i64 w) {
  if (!objective_.memory && !objective_.time) return;
  solve_detail::set_knobs(plan_, h, e, g, w, scratch_);
  // A candidate the layout cannot shard is never offered (fits()); its memory component is the target's,
  // so that it prunes nothing (docs/solver.md section 5, "Memory per GPU").
  std::size_t i = c.size() - (objective_.memory ? 1U : 0U) - (objective_.time ? 1U : 0U);
  if (objective_.memory) c[i++] = memory_of(h, e, g, w).bytes.value_or(static_cast<i64>(target_memory_));
  if (objective_.time) c[i] = time_of(h, e, g, w).value_or(target_time_);
}

const solve_detail::MemoryFigure& Search::memory_of(i64 h, i64 e, const Geometry& g, i64 w) {
  Figures& f = figures(h, e);
  if (!f.memory) {
    solve_detail::set_knobs(plan_, h, e, g, w, scratch_);
    // The full report only where the cheap count cannot be sure (MemoryEvaluator::bytes()).
    if (const std::optional<i64> bytes = memory_eval_.bytes(scratch_))
      f.memory = MemoryFigure{bytes, {}};
    else
      f.memory = solve_detail::memory_figure(scratch_, plan_.options.memory_layout);
  }
  return *f.memory;
}

std::optional<i128> Search::time_of(i64 h, i64 e, const Geometry& g, i64 w) {
  Figures& f = figures(h, e);
  if (!f.time) {
    solve_detail::set_knobs(plan_, h, e, g, w, scratch_);
    f.time = time_eval_.attoseconds(scratch_);
  }
  return *f.time;
}

Search::Components Search::components(i64 h, i64 e, const Geometry& g, i64 w) {
  Components c = counted(h, e, g, w);
  complete(c, h, e, g, w);
  return c;
}

bool Search::fits(i64 h, i64 e, const Geometry& g, i64 w) {
  solve_detail::set_knobs(plan_, h, e, g, w, scratch_);
  over_limit_ = over_time_ = false;
  last_bytes_.reset();
  if (gate_ == Gate::shards) return solve_detail::shardable(scratch_, plan_.options.memory_layout);
  const MatchOptions& o = plan_.options;
  if (o.memory_limit.bytes > 0 || objective_.memory) {
    const solve_detail::MemoryFigure& m = memory_of(h, e, g, w);
    last_bytes_ = m.bytes;
    over_limit_ = m.bytes && o.memory_limit.bytes > 0 && *m.bytes > o.memory_limit.bytes;
    if (!solve_detail::fits(m, o)) {
      if (m.bytes && (!smallest_dropped_ || *m.bytes < *smallest_dropped_)) smallest_dropped_ = m.bytes;
      return false;
    }
  } else if (!solve_detail::shardable(scratch_, o.memory_layout)) {
    return false;
  }
  if (o.time_limit > 0) {
    const std::optional<i128> t = time_of(h, e, g, w);
    if (!t) return false;
    const i128 as = *t;
    if (as > time_ceiling_) {
      over_limit_ = over_time_ = true;
      if (!fastest_dropped_ || as < *fastest_dropped_) fastest_dropped_ = as;
      return false;
    }
  }
  return true;
}

}  // namespace smelt::solve_detail
