// solve(): the exact optimum of the declared space without enumerating it.
//
// For fixed hidden size, attention geometry and expert width, every budget is
// affine in the expert count E (experts and router scale with E; attention
// and KV do not), so the objective max_i |budget_i(E) - target_i| / target_i
// is convex in E and its best grid point is found by binary search on the
// sign of its differences. The KV cache depends on the attention geometry
// alone, so geometries are visited in order of their KV mismatch and the
// search stops once that mismatch alone exceeds the worst candidate kept.
// Every budget is non-decreasing in H (and in E), so within a geometry and
// width only an interval of hidden sizes can still beat the worst candidate
// kept, found by binary search. Per-GPU memory and time per token are not
// affine in E but do not fall as E rises: matched, the best E is found by
// counting only the expert counts whose bounds can still beat the best one
// counted, each where the chords between the counts put the best; and they are
// counted last, for the hidden sizes the other budgets leave room in (a count
// of memory or time costs some twenty of the others). docs/solver.md section 7
// proves the steps exact; tests compare against brute force.

#include <optional>

#include "solve/found.hpp"
#include "solve/memory_budget.hpp"
#include "solve/relax.hpp"
#include "solve/search.hpp"
#include "solve/time_budget.hpp"

namespace smelt {

MatchResult solve(const ModelConfig& baseline, const LoopRecipe& recipe, const SearchSpace& space,
                  const MatchOptions& options) {
  return solve(CheckedConfig(baseline), recipe, space, options);
}

MatchResult solve(const CheckedConfig& baseline, const LoopRecipe& recipe, const SearchSpace& space,
                  const MatchOptions& options) {
  const solve_detail::Plan plan = solve_detail::make_plan(baseline, recipe, space, options);
  const solve_detail::ExactBudgets target = solve_detail::search_target(baseline, plan);
  // Under limits alone (memory, time), the search over what the layout shards first: when every candidate it
  // keeps fits, they are the best that fit too, and the limits were checked for them alone (docs/solver.md
  // section 5, "Memory per GPU").
  using solve_detail::Search;
  using Gate = Search::Gate;
  const solve_detail::Objective objective(plan.options);
  const bool limited = plan.options.memory_limit.bytes > 0 || plan.options.time_limit > 0;
  std::optional<Search> search(
      std::in_place, plan, target,
      objective.memory ? Gate::limits : (limited || objective.time ? Gate::shards : Gate::none));
  search->run(target);
  if (limited && !objective.memory && !solve_detail::all_fit(plan, search->sorted(), target)) {
    search.emplace(plan, target, Gate::limits);
    search->run(target);
  }
  if (search->sorted().empty())
    solve_detail::throw_none_fits(plan, search->smallest_dropped(), search->fastest_dropped(), target);
  MatchResult result = solve_detail::build_result(plan, search->sorted(), target, search->evaluated());
  result.dropped_for_memory = search->dropped();
  result.dropped_for_time = search->dropped_for_time();
  return solve_detail::with_relaxations(std::move(result), baseline, recipe, space, options,
                                        [](const CheckedConfig& b, const LoopRecipe& r, const SearchSpace& s,
                                           const MatchOptions& o) { return solve(b, r, s, o); });
}

}  // namespace smelt
