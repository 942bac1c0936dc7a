// solve_brute_force(): counts every candidate of the space. The reference the
// tests hold solve() to, and the baseline of its benchmark.
#include "solve/found.hpp"
#include "solve/relax.hpp"

namespace smelt {

MatchResult solve_brute_force(const ModelConfig& baseline, const LoopRecipe& recipe, const SearchSpace& space,
                              const MatchOptions& options) {
  return solve_brute_force(CheckedConfig(baseline), recipe, space, options);
}

MatchResult solve_brute_force(const CheckedConfig& baseline, const LoopRecipe& recipe, const SearchSpace& space,
                              const MatchOptions& options) {
  const detail::Plan plan = detail::make_plan(baseline, recipe, space, options);
  const detail::Objective objective(options);
  const detail::ExactBudgets target = detail::exact_budgets(baseline, plan.contexts);
  std::int64_t evaluated = 0;
  detail::TopCandidates top(plan, static_cast<std::size_t>(options.top));
  for (const detail::Geometry& g : plan.geometries) {
    const detail::IndexSpan span = detail::hidden_span(plan, g);
    for (const std::int64_t w : plan.widths)
      for (std::size_t ih = span.lo; ih < span.hi; ++ih) {
        const std::int64_t h = plan.hidden[ih];
        // One candidate per (H, geometry, width): its best expert count.
        detail::TopCandidates best_e(plan, 1);
        for (const std::int64_t e : plan.experts) {
          ++evaluated;
          const auto budgets = detail::exact_budgets(detail::make_candidate(plan, h, e, g, w), plan.contexts);
          best_e.offer({objective.score(budgets, target), h, e, g, w});
        }
        top.offer(best_e.sorted().front());
      }
  }
  return detail::with_relaxations(detail::build_result(plan, top.sorted(), target, evaluated), baseline, recipe, space,
                                  options,
                                  [](const CheckedConfig& b, const LoopRecipe& r, const SearchSpace& s,
                                     const MatchOptions& o) { return solve_brute_force(b, r, s, o); });
}

}  // namespace smelt
