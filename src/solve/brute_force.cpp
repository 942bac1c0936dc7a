// solve_brute_force(): counts every candidate of the space. The reference the
// tests hold solve() to, and the baseline of its benchmark.
#include "solve/found.hpp"
#include "solve/memory_budget.hpp"
#include "solve/relax.hpp"
#include "solve/time_budget.hpp"

namespace smelt {

MatchResult solve_brute_force(const ModelConfig& baseline, const LoopRecipe& recipe, const SearchSpace& space,
                              const MatchOptions& options) {
  return solve_brute_force(CheckedConfig(baseline), recipe, space, options);
}

MatchResult solve_brute_force(const CheckedConfig& baseline, const LoopRecipe& recipe, const SearchSpace& space,
                              const MatchOptions& options) {
  const solve_detail::Plan plan = solve_detail::make_plan(baseline, recipe, space, options);
  const solve_detail::Objective objective(options);
  const solve_detail::ExactBudgets target = solve_detail::search_target(baseline, plan);
  const bool limited = options.memory_limit.bytes > 0;
  const bool timed = objective.time || options.time_limit > 0;
  const solve_detail::i128 ceiling = solve_detail::time_ceiling(options, target.time);
  std::int64_t evaluated = 0;
  std::optional<std::int64_t> smallest;
  std::optional<solve_detail::i128> fastest;
  solve_detail::TopCandidates top(plan, static_cast<std::size_t>(options.top));
  for (const solve_detail::Geometry& g : plan.geometries) {
    const solve_detail::IndexSpan span = solve_detail::hidden_span(plan, g);
    for (const std::int64_t w : plan.widths)
      for (std::size_t ih = span.lo; ih < span.hi; ++ih) {
        const std::int64_t h = plan.hidden[ih];
        // One candidate per (H, geometry, width): its best expert count.
        solve_detail::TopCandidates best_e(plan, 1);
        for (const std::int64_t e : plan.experts) {
          ++evaluated;
          const ModelConfig c = solve_detail::make_candidate(plan, h, e, g, w);
          auto budgets = solve_detail::exact_budgets(c, plan.contexts);
          if (objective.memory || limited) {
            const solve_detail::MemoryFigure m = solve_detail::memory_figure(c, options.memory_layout);
            if (!solve_detail::fits(m, options)) {
              if (m.bytes && (!smallest || *m.bytes < *smallest)) smallest = m.bytes;
              continue;
            }
            budgets.memory = *m.bytes;
          }
          if (timed) {
            const std::optional<solve_detail::i128> t = solve_detail::training_attoseconds(c, *plan.hardware, options);
            if (!t) continue;  // the layout cannot shard it
            budgets.time = *t;
            if (options.time_limit > 0 && budgets.time > ceiling) {
              if (!fastest || budgets.time < *fastest) fastest = budgets.time;
              continue;
            }
          }
          best_e.offer({objective.score(budgets, target), h, e, g, w});
        }
        if (best_e.sorted().empty()) continue;  // no expert count of this (H, geometry, width) fits
        top.offer(best_e.sorted().front());
      }
  }
  if (top.sorted().empty()) solve_detail::throw_none_fits(plan, smallest, fastest, target);
  return solve_detail::with_relaxations(solve_detail::build_result(plan, top.sorted(), target, evaluated), baseline,
                                        recipe, space, options,
                                        [](const CheckedConfig& b, const LoopRecipe& r, const SearchSpace& s,
                                           const MatchOptions& o) { return solve_brute_force(b, r, s, o); });
}

}  // namespace smelt
