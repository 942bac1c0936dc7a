// solve(): the exact optimum of the declared space without enumerating it.
//
// For fixed hidden size and attention geometry, every budget is affine in the
// expert count E (experts and router scale with E; attention and KV do not),
// so the objective max_i |budget_i(E) - target_i| / target_i is convex in E
// and its best grid point is found by binary search on the sign of its
// differences. The KV cache depends on the attention geometry alone, so
// geometries are visited in order of their KV mismatch and the search stops
// once that mismatch alone exceeds the worst candidate kept. docs/solver.md
// proves both steps exact; tests compare against brute force.
#include <algorithm>

#include "solve/found.hpp"
#include "solve/relax.hpp"

namespace smelt {
namespace {

using detail::ExactBudgets;
using detail::Fraction;
using detail::Geometry;
using detail::i128;
using i64 = std::int64_t;

}  // namespace

MatchResult solve(const ModelConfig& baseline, const LoopRecipe& recipe, const SearchSpace& space,
                  const MatchOptions& options) {
  const detail::Plan plan = detail::make_plan(baseline, recipe, space, options);
  const detail::Objective objective(options);
  const ExactBudgets target = detail::exact_budgets(baseline, plan.contexts);
  i64 evaluated = 0;
  const auto budgets = [&](i64 h, i64 e, const Geometry& g) {
    ++evaluated;
    return detail::exact_budgets(detail::make_candidate(plan, h, e, g), plan.contexts, plan.kinds);
  };

  // KV mismatch of each geometry: independent of H and E.
  struct Ranked {
    Fraction kv;
    Geometry geometry;
    ExactBudgets at_front;  // budgets at the smallest H and E, reused below
  };
  std::vector<Ranked> ranked;
  ranked.reserve(plan.geometries.size());
  for (const Geometry& g : plan.geometries) {
    ExactBudgets b = budgets(plan.hidden.front(), plan.experts.front(), g);
    ranked.push_back({objective.kv_score(b, target), g, std::move(b)});
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const Ranked& a, const Ranked& b) { return detail::compare(a.kv, b.kv) < 0; });

  const std::vector<i128> goal = objective.components(target);
  detail::TopCandidates top(plan, static_cast<std::size_t>(options.top));
  const i64 n = static_cast<i64>(plan.experts.size());
  for (const Ranked& r : ranked) {
    // Every candidate with this geometry has a largest mismatch of at least its
    // KV mismatch; the ranking makes every later geometry worse still.
    if (top.full() && detail::compare(r.kv, top.threshold()) > 0) break;
    const detail::IndexSpan span = detail::hidden_span(plan, r.geometry);
    for (std::size_t ih = span.lo; ih < span.hi; ++ih) {
      const i64 h = plan.hidden[ih];
      const ExactBudgets first = ih == 0 ? r.at_front : budgets(h, plan.experts.front(), r.geometry);
      const ExactBudgets last = n > 1 ? budgets(h, plan.experts.back(), r.geometry) : first;
      const std::vector<i128> c0 = objective.components(first);
      const std::vector<i128> c1 = objective.components(last);
      // Each component is affine in the expert index k: c0 + k * step.
      std::vector<i128> step(c0.size(), 0);
      bool affine = true;
      for (std::size_t i = 0; i < c0.size() && n > 1; ++i) {
        affine = affine && (c1[i] - c0[i]) % (n - 1) == 0;
        step[i] = (c1[i] - c0[i]) / (n - 1);
      }
      if (!affine) {  // never expected: then count every E rather than trust a line
        detail::TopCandidates best_e(plan, 1);
        for (const i64 e : plan.experts)
          best_e.offer({objective.score(budgets(h, e, r.geometry), target), h, e, r.geometry});
        top.offer(best_e.sorted().front());
        continue;
      }
      const auto components = [&](i64 k) {
        std::vector<i128> c = c0;
        for (std::size_t i = 0; i < c.size(); ++i) c[i] += k * step[i];
        return c;
      };
      // The largest mismatch among the components that move with E. Those that
      // do not are the same for every k and cannot change the order of two k.
      // Component by component, with no list built: the binary search calls it
      // twice a step for every (geometry, H).
      const auto moving_max = [&](i64 k) {
        Fraction worst{0, 1};
        for (std::size_t i = 0; i < c0.size(); ++i)
          if (step[i] != 0)
            if (const Fraction f = detail::gap(c0[i] + k * step[i], goal[i]); detail::compare(f, worst) > 0) worst = f;
        return worst;
      };
      // Rightmost minimiser of a convex sequence: the last k whose step from
      // k - 1 does not increase it (more experts win ties).
      i64 lo = 0;
      i64 hi = n - 1;
      while (lo < hi) {
        const i64 mid = lo + (hi - lo + 1) / 2;
        if (detail::compare(moving_max(mid), moving_max(mid - 1)) <= 0)
          lo = mid;
        else
          hi = mid - 1;
      }
      // A convex sequence of maxima of non-constant |affine| terms is minimal
      // at one k or at two neighbours; between two, the full score decides.
      detail::Score best = objective.score(components(lo), goal);
      i64 best_k = lo;
      if (lo > 0 && detail::compare(moving_max(lo - 1), moving_max(lo)) == 0) {
        detail::Score left = objective.score(components(lo - 1), goal);
        if (detail::compare(left, best) < 0) best = std::move(left), best_k = lo - 1;
      }
      top.offer({std::move(best), h, plan.experts[static_cast<std::size_t>(best_k)], r.geometry});
    }
  }
  return detail::with_relaxations(detail::build_result(plan, top.sorted(), target, evaluated), baseline, recipe, space,
                                  options, solve);
}

}  // namespace smelt
