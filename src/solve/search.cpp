// The search's visit: the geometries in order of their KV mismatch, and within each (geometry, width) the
// hidden sizes that can still beat the worst candidate kept (docs/solver.md section 7 (c), (d)).
#include "solve/search.hpp"

#include <algorithm>
#include <limits>

#include "solve/convex.hpp"
#include "solve/time_budget.hpp"

namespace smelt::solve_detail {

using namespace smelt::detail;  // the helpers every module shares
namespace {

using i64 = Search::i64;

}  // namespace

Search::Search(const solve_detail::Plan& plan, const ExactBudgets& target, Gate gate)
    : plan_(plan),
      objective_(plan.options),
      goal_(objective_.components(target)),
      // One candidate config, its knobs set before each count: copying the
      // Baseline (names, lists) per count cost as much as counting it.
      scratch_(solve_detail::make_candidate(plan, plan.hidden.front(), plan.experts.front(), plan.geometries.front(),
                                            plan.widths.front())),
      top_(plan, static_cast<std::size_t>(plan.options.top)),
      memory_eval_(plan.options.memory_layout),
      time_eval_(plan.hardware ? &*plan.hardware : nullptr, plan.options),
      target_memory_(target.memory),
      target_time_(target.time),
      time_ceiling_(solve_detail::time_ceiling(plan.options, target.time)),
      gate_(gate),
      checked_(gate != Gate::none) {}

void Search::run(const ExactBudgets& target) {
  for (const Ranked& r : rank(target)) {
    // Every candidate with this geometry has a largest mismatch of at least its
    // KV mismatch; the ranking makes every later geometry worse still.
    if (done(r.kv)) break;
    // Each expert width in turn: it moves no KV cache, so it shares the
    // geometry's place in the ranking.
    for (const i64 w : plan_.widths) visit(r.geometry, w);
  }
}

std::vector<Search::Ranked> Search::rank(const ExactBudgets& target) {
  const std::vector<i128> per_element = solve_detail::kv_bytes_per_element(scratch_, plan_.contexts, plan_.kinds);
  const auto& a = plan_.baseline.attention;
  std::vector<Ranked> ranked;
  ranked.reserve(plan_.geometries.size());
  std::vector<i128> kv(plan_.contexts.size());
  for (const Geometry& g : plan_.geometries) {
    const i128 elements = a.type == AttentionType::mla ? i128{a.mla.kv_lora_rank} + a.mla.qk_rope_head_dim
                                                       : 2 * i128{g.kv_heads} * g.head_dim;
    for (std::size_t i = 0; i < kv.size(); ++i) {
      kv[i] = elements * per_element[i];
      // Past 64 bits count() refuses the config: counted in full for its error.
      if (kv[i] > kMaxI64) (void)components(plan_.hidden.front(), plan_.experts.front(), g, plan_.widths.front());
    }
    ranked.push_back({objective_.kv_score(kv, target), g});
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const Ranked& x, const Ranked& y) { return solve_detail::compare(x.kv, y.kv) < 0; });
  return ranked;
}

void Search::visit(const Geometry& g, i64 w) {
  figures_.clear();
  seed_k_.reset();
  prev_seed_k_.reset();
  slopes_.clear();
  cross_.reset();
  prev_cross_.reset();
  const solve_detail::IndexSpan span = solve_detail::hidden_span(plan_, g);
  std::size_t ih = span.lo;
  // The binary search's probes that did not fall short lie where the visit
  // passes: their counts at the largest E are reused there, so that no
  // config is counted twice (MatchResult::evaluated stays within the space).
  std::vector<std::pair<std::size_t, Components>> probed;  // at most log2 of the hidden sizes
  const i64 e_min = plan_.experts.front(), e_max = plan_.experts.back();
  // The probes count memory and time only where nothing else is matched: otherwise the counted budgets
  // alone (memory and time at their targets) find where the visit starts, and memory and time are counted
  // for the hidden sizes visited, where the lines leave a candidate that can enter.
  const bool probe_complete = !objective_.flops && !objective_.params && !objective_.kv;
  if (top_.full()) {  // the first hidden size that does not fall short at the largest E
    std::size_t hi = span.hi;
    while (ih < hi) {
      const std::size_t mid = ih + (hi - ih) / 2;
      Components c = counted(plan_.hidden[mid], e_max, g, w);
      if (probe_complete) complete(c, plan_.hidden[mid], e_max, g, w);
      if (short_of(c)) {
        ih = mid + 1;
      } else {
        hi = mid;
        probed.emplace_back(mid, std::move(c));
      }
    }
  }
  const bool one_e = plan_.experts.size() == 1;
  for (; ih < span.hi; ++ih) {
    const i64 h = plan_.hidden[ih];
    const auto probe = std::find_if(probed.begin(), probed.end(), [&](const auto& p) { return p.first == ih; });
    const bool reuse = probe != probed.end();
    Components c0 = one_e && reuse ? probe->second : counted(h, e_min, g, w);
    if (top_.full() && over(c0)) break;  // and every wider H with it
    Components c1 = one_e ? c0 : (reuse ? probe->second : counted(h, e_max, g, w));
    if (top_.full() && short_of(c1)) continue;  // the threshold fell since the binary search
    // Memory and time counted only where the counted budgets leave a candidate that can enter: at the
    // largest E first, since a short size (skipped) is commoner than an over one (which ends the visit).
    Ends ends{true, true};
    if (objective_.memory || objective_.time) {
      if (top_.full() && lines_beyond_threshold(c0, c1)) continue;
      if (one_e) {
        if (!(reuse && probe_complete)) complete(c1, h, e_max, g, w);
        c0 = c1;
        if (top_.full() && short_of(c1)) continue;
        if (top_.full() && over(c0)) break;
      } else {
        // Memory and time at the ends are counted only where the search over E asks for them (section 7 (b'')).
        ends = {false, reuse && probe_complete};
      }
    }
    if (offer_best_e(h, g, w, c0, c1, ends)) break;  // over at the fewest experts: so is every wider H
  }
}

bool Search::lines_beyond_threshold(const Components& c0, const Components& c1) const {
  const i64 n = static_cast<i64>(plan_.experts.size());
  std::vector<i128> step(c0.size(), 0);
  for (std::size_t i = 0; i < c0.size() && n > 1; ++i) {
    if (non_affine(i)) continue;
    if ((c1[i] - c0[i]) % (n - 1) != 0) return false;  // not a line: no bound (section 7 (b))
    step[i] = (c1[i] - c0[i]) / (n - 1);
  }
  const auto line_max = [&](i64 k) {
    Fraction worst{0, 1};
    for (std::size_t i = 0; i < c0.size(); ++i)
      if (!non_affine(i))
        if (const Fraction f = solve_detail::gap(c0[i] + k * step[i], goal_[i]); solve_detail::compare(f, worst) > 0)
          worst = f;
    return worst;
  };
  return solve_detail::compare(line_max(rightmost_minimiser(n, line_max)), top_.threshold()) > 0;
}

bool Search::short_of(const Components& at_largest_e) const {
  const Fraction& theta = top_.threshold();
  for (std::size_t i = 0; i < goal_.size(); ++i)
    if (at_largest_e[i] < goal_[i] && solve_detail::compare(solve_detail::gap(at_largest_e[i], goal_[i]), theta) > 0)
      return true;
  return false;
}

bool Search::over(const Components& at_smallest_e) const {
  const Fraction& theta = top_.threshold();
  for (std::size_t i = 0; i < goal_.size(); ++i)
    if (at_smallest_e[i] > goal_[i] && solve_detail::compare(solve_detail::gap(at_smallest_e[i], goal_[i]), theta) > 0)
      return true;
  return false;
}

}  // namespace smelt::solve_detail
