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
  const detail::Plan plan = detail::make_plan(baseline, recipe, space, options);
  const detail::Objective objective(options);
  const detail::ExactBudgets target = detail::search_target(baseline, plan);
  const bool limited = options.memory_limit.bytes > 0;
  const bool timed = objective.time || options.time_limit > 0;
  const detail::i128 ceiling = detail::time_ceiling(options, target.time);
  std::int64_t evaluated = 0;
  std::optional<std::int64_t> smallest;
  std::optional<detail::i128> fastest;
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
          const ModelConfig c = detail::make_candidate(plan, h, e, g, w);
          auto budgets = detail::exact_budgets(c, plan.contexts);
          if (objective.memory || limited) {
            const detail::MemoryFigure m = detail::memory_figure(c, options.memory_layout);
            if (!detail::fits(m, options)) {
              if (m.bytes && (!smallest || *m.bytes < *smallest)) smallest = m.bytes;
              continue;
            }
            budgets.memory = *m.bytes;
          }
          if (timed) {
            const std::optional<detail::i128> t = detail::training_attoseconds(c, *plan.hardware, options);
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
  if (top.sorted().empty()) detail::throw_none_fits(plan, smallest, fastest, target);
  return detail::with_relaxations(detail::build_result(plan, top.sorted(), target, evaluated), baseline, recipe, space,
                                  options,
                                  [](const CheckedConfig& b, const LoopRecipe& r, const SearchSpace& s,
                                     const MatchOptions& o) { return solve_brute_force(b, r, s, o); });
}

}  // namespace smelt
