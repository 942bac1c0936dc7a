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

#include "solve_found.hpp"

namespace smelt {
namespace {

using detail::ExactBudgets;
using detail::Fraction;
using detail::Geometry;
using detail::i128;
using i64 = std::int64_t;

// Budgets at the k-th expert count, from the two ends of the progression.
class AffineInExperts {
 public:
  AffineInExperts(const ExactBudgets& first, const ExactBudgets& last, i64 steps) : first_(first), steps_(steps) {
    exact_ = true;
    const auto slope = [&](i128 a, i128 b) {
      if (steps == 0) return i128{0};
      if ((b - a) % steps != 0) exact_ = false;
      return (b - a) / steps;
    };
    step_ = first;
    for (std::size_t i = 0; i < first.kv_bytes.size(); ++i) {
      step_.flops_non_embedding[i] = slope(first.flops_non_embedding[i], last.flops_non_embedding[i]);
      step_.lm_head[i] = slope(first.lm_head[i], last.lm_head[i]);
      step_.kv_bytes[i] = slope(first.kv_bytes[i], last.kv_bytes[i]);
    }
    step_.params_non_embedding = static_cast<i64>(slope(first.params_non_embedding, last.params_non_embedding));
  }

  // False would mean a budget is not affine in E: the search then counts every E.
  bool exact() const { return exact_; }

  ExactBudgets at(i64 k) const {
    ExactBudgets b = first_;
    for (std::size_t i = 0; i < b.kv_bytes.size(); ++i) {
      b.flops_non_embedding[i] += k * step_.flops_non_embedding[i];
      b.lm_head[i] += k * step_.lm_head[i];
      b.kv_bytes[i] += k * step_.kv_bytes[i];
    }
    b.params_non_embedding += k * step_.params_non_embedding;
    return b;
  }

 private:
  ExactBudgets first_;
  ExactBudgets step_;
  i64 steps_;
  bool exact_ = true;
};

}  // namespace

MatchResult solve(const ModelConfig& baseline, const LoopRecipe& recipe, const SearchSpace& space,
                  const MatchOptions& options) {
  const detail::Plan plan = detail::make_plan(baseline, recipe, space, options);
  const detail::Objective objective(options);
  const ExactBudgets target = detail::exact_budgets(baseline, plan.contexts);
  i64 evaluated = 0;
  const auto budgets = [&](i64 h, i64 e, const Geometry& g) {
    ++evaluated;
    return detail::exact_budgets(detail::make_candidate(plan, h, e, g), plan.contexts);
  };

  // KV mismatch of each geometry: independent of H and E.
  struct Ranked {
    Fraction kv;
    Geometry geometry;
  };
  std::vector<Ranked> ranked;
  ranked.reserve(plan.geometries.size());
  for (const Geometry& g : plan.geometries)
    ranked.push_back({objective.kv_score(budgets(plan.hidden.front(), plan.experts.front(), g), target), g});
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const Ranked& a, const Ranked& b) { return detail::compare(a.kv, b.kv) < 0; });

  detail::TopCandidates top(plan, static_cast<std::size_t>(options.top));
  const i64 n = static_cast<i64>(plan.experts.size());
  for (const Ranked& r : ranked) {
    // Every candidate with this geometry scores at least its KV mismatch.
    if (top.full() && detail::compare(r.kv, top.threshold()) > 0) break;
    for (const i64 h : plan.hidden) {
      const ExactBudgets first = budgets(h, plan.experts.front(), r.geometry);
      const ExactBudgets last = n > 1 ? budgets(h, plan.experts.back(), r.geometry) : first;
      const AffineInExperts line(first, last, n - 1);
      const auto score = [&](i64 k) {
        return objective.score(
            line.exact() ? line.at(k) : budgets(h, plan.experts[static_cast<std::size_t>(k)], r.geometry), target);
      };
      // Rightmost minimiser of a convex sequence: the last k whose step down
      // from k - 1 does not increase the objective (more experts win ties).
      i64 lo = 0;
      i64 hi = n - 1;
      while (lo < hi) {
        const i64 mid = lo + (hi - lo + 1) / 2;
        if (detail::compare(score(mid), score(mid - 1)) <= 0)
          lo = mid;
        else
          hi = mid - 1;
      }
      top.offer({score(lo), h, plan.experts[static_cast<std::size_t>(lo)], r.geometry});
    }
  }
  return detail::build_result(plan, top.sorted(), target, evaluated);
}

}  // namespace smelt
