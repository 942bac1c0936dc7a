// solve(): the exact optimum of the declared space without enumerating it.
//
// For fixed hidden size and attention geometry, every budget is affine in the
// expert count E (experts and router scale with E; attention and KV do not),
// so the objective max_i |budget_i(E) - target_i| / target_i is convex in E
// and its best grid point is found by binary search on the sign of its
// differences. The KV cache depends on the attention geometry alone, so
// geometries are visited in order of their KV mismatch and the search stops
// once that mismatch alone exceeds the worst candidate kept. Every budget is
// non-decreasing in H (and in E), so within a geometry only an interval of
// hidden sizes can still beat the worst candidate kept, found by binary
// search. docs/solver.md proves the three steps exact; tests compare against
// brute force.
#include <algorithm>
#include <limits>

#include "solve/found.hpp"

namespace smelt {
namespace {

using detail::ExactBudgets;
using detail::Fraction;
using detail::Geometry;
using detail::i128;
using i64 = std::int64_t;

constexpr i128 kMaxI64 = std::numeric_limits<i64>::max();

}  // namespace

MatchResult solve(const ModelConfig& baseline, const LoopRecipe& recipe, const SearchSpace& space,
                  const MatchOptions& options) {
  const detail::Plan plan = detail::make_plan(baseline, recipe, space, options);
  const detail::Objective objective(options);
  const ExactBudgets target = detail::exact_budgets(baseline, plan.contexts);
  const std::vector<i128> goal = objective.components(target);
  // One candidate config, its knobs set before each count: copying the
  // Baseline (names, lists) per count cost as much as counting it.
  ModelConfig scratch =
      detail::make_candidate(plan, plan.hidden.front(), plan.experts.front(), plan.geometries.front());
  i64 evaluated = 0;
  const auto components = [&](i64 h, i64 e, const Geometry& g) {
    ++evaluated;
    detail::set_knobs(plan, h, e, g, scratch);
    return objective.components(detail::exact_budgets(scratch, plan.contexts, plan.kinds));
  };

  // KV mismatch of each geometry: independent of H, E and the FFN widths, so
  // counted from the geometry's cached elements alone.
  struct Ranked {
    Fraction kv;
    Geometry geometry;
  };
  const std::vector<i128> kv_per_element = detail::kv_bytes_per_element(scratch, plan.contexts, plan.kinds);
  const auto& attention = plan.baseline.attention;
  std::vector<Ranked> ranked;
  ranked.reserve(plan.geometries.size());
  std::vector<i128> kv(plan.contexts.size());
  for (const Geometry& g : plan.geometries) {
    const i128 elements = attention.type == AttentionType::mla
                              ? i128{attention.mla.kv_lora_rank} + attention.mla.qk_rope_head_dim
                              : 2 * i128{g.kv_heads} * g.head_dim;
    for (std::size_t i = 0; i < kv.size(); ++i) {
      kv[i] = elements * kv_per_element[i];
      // Past 64 bits count() refuses the config: counted in full for its error.
      if (kv[i] > kMaxI64) (void)components(plan.hidden.front(), plan.experts.front(), g);
    }
    ranked.push_back({objective.kv_score(kv, target), g});
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const Ranked& a, const Ranked& b) { return detail::compare(a.kv, b.kv) < 0; });

  detail::TopCandidates top(plan, static_cast<std::size_t>(options.top));
  const i64 n = static_cast<i64>(plan.experts.size());
  // Budgets are non-decreasing in H and E (docs/solver.md section 7 (d)). So
  // every candidate at a hidden size whose components at the largest E fall
  // short of a target by more than theta, or whose components at the smallest
  // E exceed one by more than theta, has a largest mismatch above theta.
  const auto short_of = [&](const std::vector<i128>& at_most_e, const Fraction& theta) {
    for (std::size_t i = 0; i < goal.size(); ++i)
      if (at_most_e[i] < goal[i] && detail::compare(detail::gap(at_most_e[i], goal[i]), theta) > 0) return true;
    return false;
  };
  const auto over = [&](const std::vector<i128>& at_least_e, const Fraction& theta) {
    for (std::size_t i = 0; i < goal.size(); ++i)
      if (at_least_e[i] > goal[i] && detail::compare(detail::gap(at_least_e[i], goal[i]), theta) > 0) return true;
    return false;
  };
  for (const Ranked& r : ranked) {
    // Every candidate with this geometry has a largest mismatch of at least its
    // KV mismatch; the ranking makes every later geometry worse still.
    if (top.full() && detail::compare(r.kv, top.threshold()) > 0) break;
    const Geometry& g = r.geometry;
    const detail::IndexSpan span = detail::hidden_span(plan, g);
    std::size_t ih = span.lo;
    if (top.full()) {
      // The first hidden size that does not fall short at the largest E:
      // falling short holds for a prefix of the ascending hidden sizes.
      std::size_t hi = span.hi;
      while (ih < hi) {
        const std::size_t mid = ih + (hi - ih) / 2;
        if (short_of(components(plan.hidden[mid], plan.experts.back(), g), top.threshold()))
          ih = mid + 1;
        else
          hi = mid;
      }
    }
    for (; ih < span.hi; ++ih) {
      const i64 h = plan.hidden[ih];
      const std::vector<i128> c0 = components(h, plan.experts.front(), g);
      if (top.full() && over(c0, top.threshold())) break;  // and every wider H with it
      const std::vector<i128> c1 = n > 1 ? components(h, plan.experts.back(), g) : c0;
      // The threshold may have fallen since the binary search.
      if (top.full() && short_of(c1, top.threshold())) continue;
      // Each component is affine in the expert index k: c0 + k * step.
      std::vector<i128> step(c0.size(), 0);
      bool affine = true;
      for (std::size_t i = 0; i < c0.size() && n > 1; ++i) {
        affine = affine && (c1[i] - c0[i]) % (n - 1) == 0;
        step[i] = (c1[i] - c0[i]) / (n - 1);
      }
      if (!affine) {  // never expected: then count every E rather than trust a line
        detail::TopCandidates best_e(plan, 1);
        for (const i64 e : plan.experts) best_e.offer({objective.score(components(h, e, g), goal), h, e, g});
        top.offer(best_e.sorted().front());
        continue;
      }
      const auto at = [&](i64 k) {
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
      detail::Score best = objective.score(at(lo), goal);
      i64 best_k = lo;
      if (lo > 0 && detail::compare(moving_max(lo - 1), moving_max(lo)) == 0) {
        detail::Score left = objective.score(at(lo - 1), goal);
        if (detail::compare(left, best) < 0) best = std::move(left), best_k = lo - 1;
      }
      top.offer({std::move(best), h, plan.experts[static_cast<std::size_t>(best_k)], g});
    }
  }
  return detail::build_result(plan, top.sorted(), target, evaluated);
}

}  // namespace smelt
