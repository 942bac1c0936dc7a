// The kept candidates, and the public MatchResult built from them.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "smelt/cost.hpp"
#include "solve_found.hpp"

namespace smelt::detail {

bool TopCandidates::less(const Found& a, const Found& b) const {
  const int c = compare(a.score, b.score);
  if (c != 0) return c < 0;
  return tie_break_less(*plan_, a.hidden, a.experts, a.geometry, b.hidden, b.experts, b.geometry);
}

void TopCandidates::offer(const Found& f) {
  if (full() && !less(f, kept_.back())) return;
  kept_.insert(
      std::upper_bound(kept_.begin(), kept_.end(), f, [&](const Found& a, const Found& b) { return less(a, b); }), f);
  if (kept_.size() > capacity_) kept_.pop_back();
}

namespace {

BudgetValue value(i128 candidate, i128 baseline, double per) {
  return {static_cast<double>(baseline) / per, static_cast<double>(candidate) / per, to_percent(candidate, baseline)};
}

Candidate describe(const Plan& plan, const Found& f, const ExactBudgets& target) {
  Candidate c;
  c.config = make_candidate(plan, f.hidden, f.experts, f.geometry);
  if (c.config.name.empty() || c.config.name == plan.baseline.name)
    c.config.name = plan.baseline.name.empty() ? "smelt" : plan.baseline.name + "-smelt";
  c.knobs = knobs_of(c.config);
  const ExactBudgets b = exact_budgets(c.config, plan.contexts);
  for (std::size_t i = 0; i < plan.contexts.size(); ++i) {
    BudgetsAt at;
    at.context = plan.contexts[i];
    const double t = static_cast<double>(at.context);
    at.flops_non_embedding = value(b.flops_non_embedding[i], target.flops_non_embedding[i], t);
    at.flops_with_head =
        value(b.flops_non_embedding[i] + b.lm_head[i], target.flops_non_embedding[i] + target.lm_head[i], t);
    at.flops = plan.options.flops_with_head ? at.flops_with_head : at.flops_non_embedding;
    at.params = value(b.params_non_embedding, target.params_non_embedding, 1.0);
    at.kv = value(b.kv_bytes[i], target.kv_bytes[i], t);
    c.budgets.push_back(at);
  }
  c.max_abs_mismatch_pct = 100.0 * static_cast<double>(f.score.num) / static_cast<double>(f.score.den);
  const CostReport r = count(c.config);
  c.executed_layers = r.executed_layers;
  c.depth_to_width = static_cast<double>(r.executed_layers) / static_cast<double>(c.config.hidden_size);
  c.active_params = r.params.active;
  return c;
}

// Why the best candidate misses the tolerance, one line per budget it misses.
std::vector<std::string> explain(const Plan& plan, const Candidate& best) {
  std::vector<std::string> why;
  const double tol = plan.options.tolerance_pct;
  const Objective objective(plan.options);
  const auto& k = best.knobs;
  for (const auto& at : best.budgets) {
    const std::string where = plan.contexts.size() > 1 ? fmt::format(" at context {}", at.context) : "";
    if (objective.kv && std::fabs(at.kv.mismatch_pct) > tol) {
      const double step = 100.0 * at.kv.candidate * static_cast<double>(plan.space.align_head_dim) /
                          (static_cast<double>(k.head_dim) * at.kv.baseline);
      why.push_back(fmt::format(
          "kv_bytes_per_token{}: {:+.2f}% misses the {}% tolerance: KV cache moves in steps of {:.1f}% here "
          "(head_dim multiple of {} with {} KV heads); allow other --kv-heads or --head-dim values",
          where, at.kv.mismatch_pct, tol, step, plan.space.align_head_dim, k.kv_heads));
    }
    if (objective.params && std::fabs(at.params.mismatch_pct) > tol && plan.baseline.is_moe()) {
      const ModelConfig more =
          make_candidate(plan, k.hidden, k.experts + plan.space.align_experts, {k.heads, k.kv_heads, k.head_dim});
      const double step =
          100.0 * (static_cast<double>(count(more).params.non_embedding) - at.params.candidate) / at.params.baseline;
      why.push_back(fmt::format(
          "params_non_embedding{}: {:+.2f}% misses the {}% tolerance: parameters move in steps of {:.1f}% per {} "
          "experts at hidden size {}",
          where, at.params.mismatch_pct, tol, step, plan.space.align_experts, k.hidden));
    } else if (objective.params && std::fabs(at.params.mismatch_pct) > tol) {
      why.push_back(
          fmt::format("params_non_embedding{}: {:+.2f}% misses the {}% tolerance: a dense Baseline has no "
                      "experts to buy parameters back with",
                      where, at.params.mismatch_pct, tol));
    }
    if (objective.flops && std::fabs(at.flops.mismatch_pct) > tol)
      why.push_back(fmt::format(
          "flops_per_token{}: {:+.2f}% misses the {}% tolerance: hidden sizes move in steps of {} (--align-hidden); "
          "the closest in the space is {}",
          where, at.flops.mismatch_pct, tol, plan.space.align_hidden, k.hidden));
  }
  return why;
}

}  // namespace

MatchResult build_result(const Plan& plan, const std::vector<Found>& found, const ExactBudgets& target,
                         std::int64_t evaluated) {
  MatchResult r;
  r.baseline = plan.baseline;
  r.loop = plan.loop;
  r.space = plan.space;
  r.options = plan.options;
  if (r.options.contexts.empty()) r.options.contexts = plan.contexts;
  const CostReport base = count(plan.baseline);
  r.baseline_executed_layers = base.executed_layers;
  r.baseline_active_params = base.params.active;
  for (const Found& f : found) r.candidates.push_back(describe(plan, f, target));
  r.space_size = plan.space_size();
  r.evaluated = evaluated;
  r.within_tolerance = !r.candidates.empty() && r.candidates.front().max_abs_mismatch_pct <= plan.options.tolerance_pct;
  if (!r.within_tolerance && !r.candidates.empty()) r.why = explain(plan, r.candidates.front());
  return r;
}

}  // namespace smelt::detail
