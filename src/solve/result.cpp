// The kept candidates, and the public MatchResult built from them.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "smelt/count.hpp"
#include "solve/found.hpp"
#include "solve/memory_budget.hpp"
#include "solve/time_budget.hpp"
#include "util/mention.hpp"

namespace smelt::solve_detail {

using namespace smelt::detail;  // the helpers every module shares

bool TopCandidates::less(const Found& a, const Found& b) const {
  const int c = compare(a.score, b.score);
  if (c != 0) return c < 0;
  return tie_break_less(*plan_, a.hidden, a.experts, a.geometry, a.expert_width, b.hidden, b.experts, b.geometry,
                        b.expert_width);
}

namespace {

bool same_widths(const Geometry& x, const Geometry& y) {
  return x.heads * x.head_dim == y.heads * y.head_dim && x.kv_heads * x.head_dim == y.kv_heads * y.head_dim;
}

}  // namespace

bool same_but_heads(const Found& a, const Found& b) {
  return a.hidden == b.hidden && a.experts == b.experts && a.expert_width == b.expert_width &&
         same_widths(a.geometry, b.geometry);
}

// The worst kept candidate's score never rises: an offer replaces a kept one
// or the worst, or is refused. So the searches' pruning by threshold() stays
// exact: a config above it can neither enter nor improve on its kept split.
void TopCandidates::offer(const Found& f) {
  const auto split = std::find_if(kept_.begin(), kept_.end(), [&](const Found& k) { return same_but_heads(k, f); });
  if (split != kept_.end()) {
    if (!less(f, *split)) return;
    kept_.erase(split);
  } else if (full() && !less(f, kept_.back())) {
    return;
  }
  kept_.insert(
      std::upper_bound(kept_.begin(), kept_.end(), f, [&](const Found& a, const Found& b) { return less(a, b); }), f);
  if (kept_.size() > capacity_) kept_.pop_back();
}

namespace {

BudgetValue value(i128 candidate, i128 baseline, double per) {
  return {static_cast<double>(baseline) / per, static_cast<double>(candidate) / per, to_percent(candidate, baseline)};
}

// Every geometry of the plan with f's attention and KV widths, f's own first,
// then in the tie-break order. The widths alone decide which hidden sizes a
// geometry pairs with (hidden_span), so each is a candidate at f's H.
std::vector<HeadSplit> head_splits(const Plan& plan, const Found& f) {
  std::vector<Geometry> same;
  for (const Geometry& g : plan.geometries)
    if (same_widths(g, f.geometry) &&
        !(g.heads == f.geometry.heads && g.kv_heads == f.geometry.kv_heads && g.head_dim == f.geometry.head_dim))
      same.push_back(g);
  std::sort(same.begin(), same.end(), [&](const Geometry& a, const Geometry& b) {
    return tie_break_less(plan, f.hidden, f.experts, a, f.expert_width, f.hidden, f.experts, b, f.expert_width);
  });
  std::vector<HeadSplit> out{{f.geometry.heads, f.geometry.kv_heads, f.geometry.head_dim}};
  for (const Geometry& g : same) out.push_back({g.heads, g.kv_heads, g.head_dim});
  return out;
}

// The candidate's per-GPU memory beside the Baseline's, where the layout shards both.
void describe_memory(Candidate& c, const MemoryFigure& baseline, const MatchOptions& options) {
  const MemoryFigure m = memory_figure(c.config, options.memory_layout);
  if (!baseline.bytes) {
    c.memory_note = "the Baseline: " + baseline.error;
  } else if (!m.bytes) {
    c.memory_note = m.error;
  } else {
    const auto b = static_cast<double>(*baseline.bytes), x = static_cast<double>(*m.bytes);
    c.memory = BudgetValue{b, x, 100.0 * (x - b) / b};
  }
}

// The candidate's predicted training and decode time per token beside the Baseline's, where the layout shards both.
void describe_time(Candidate& c, const TimeFigure& baseline, const Plan& plan) {
  const TimeFigure t = time_figure(c.config, *plan.hardware, plan.options);
  if (!baseline.training) {
    c.time_note = "the Baseline: " + baseline.error;
  } else if (!t.training) {
    c.time_note = t.error;
  } else {
    const auto value = [](double b, double x) { return BudgetValue{b, x, 100.0 * (x - b) / b}; };
    c.training_time = value(*baseline.training, *t.training);
    c.decode_time = value(*baseline.decode, *t.decode);
  }
}

Candidate describe(const Plan& plan, const Found& f, const ExactBudgets& target) {
  Candidate c;
  c.config = make_candidate(plan, f.hidden, f.experts, f.geometry, f.expert_width);
  c.head_splits = head_splits(plan, f);
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
  c.max_abs_mismatch_pct = 100.0 * static_cast<double>(f.score.front().num) / static_cast<double>(f.score.front().den);
  const CostReport r = count(c.config);
  c.executed_layers = r.executed_layers;
  c.depth_to_width = static_cast<double>(r.executed_layers) / static_cast<double>(c.config.hidden_size);
  c.active_params = r.params.active;
  return c;
}

// Relative change of the FLOPs budget between two configs, in percent of the target.
double flops_step(const Plan& plan, const ModelConfig& from, const ModelConfig& to, const BudgetsAt& at) {
  const auto flops = [&](const ModelConfig& c) {
    const CostReport r = count(c, {.context_length = at.context});
    return plan.options.flops_with_head ? r.flops.forward : r.flops.forward_non_embedding();
  };
  return 100.0 * std::fabs(flops(to) - flops(from)) / at.flops.baseline;
}

// Why the best candidate misses the tolerance: one line per budget it misses
// (parameters once, the others per context), each with the step the space
// moves that budget in near the answer. What a wider space would reach is not
// guessed here: MatchResult::relaxations solves it (relax.cpp).
std::vector<Message> explain(const Plan& plan, const Candidate& best) {
  std::vector<Message> why;
  const auto push = [&](const std::string& marked) { why.push_back(resolve_mentions(marked)); };
  const double tol = plan.options.tolerance_pct;
  const Objective objective(plan.options);
  const auto& k = best.knobs;
  const Geometry g{k.heads, k.kv_heads, k.head_dim};
  const std::int64_t w = plan.space.ffn == FfnScaling::searched ? k.expert_width : 0;
  const bool mla = plan.baseline.attention.type == AttentionType::mla;
  const auto limiting = [&](double pct) {
    return std::fabs(std::fabs(pct) - best.max_abs_mismatch_pct) < 1e-9 ? " (the largest mismatch)" : "";
  };
  for (const auto& at : best.budgets) {
    const std::string where = plan.contexts.size() > 1 ? fmt::format(" at context {}", at.context) : "";
    if (objective.kv && std::fabs(at.kv.mismatch_pct) > tol) {
      if (mla) {
        push(
            fmt::format("kv_bytes_per_token{}: {:+.2f}% misses the {}% tolerance{}: an MLA Baseline keeps "
                        "its attention, so the KV cache grows with the executed layers; match without it "
                        "({}) or loop fewer layers",
                        where, at.kv.mismatch_pct, tol, limiting(at.kv.mismatch_pct),
                        mention("MatchOptions::match", "flops,params")));
      } else {
        const double step = 100.0 * at.kv.candidate * static_cast<double>(plan.space.align_head_dim) /
                            (static_cast<double>(k.head_dim) * at.kv.baseline);
        push(fmt::format(
            "kv_bytes_per_token{}: {:+.2f}% misses the {}% tolerance{}: KV cache moves in steps of {:.1f}% here "
            "(head_dim multiple of {} with {} KV head{})",
            where, at.kv.mismatch_pct, tol, limiting(at.kv.mismatch_pct), step, plan.space.align_head_dim, k.kv_heads,
            k.kv_heads == 1 ? "" : "s"));
      }
    }
    if (objective.flops && std::fabs(at.flops.mismatch_pct) > tol) {
      const ModelConfig here = make_candidate(plan, k.hidden, k.experts, g, w);
      const ModelConfig wider = make_candidate(plan, k.hidden + plan.space.align_hidden, k.experts, g, w);
      push(fmt::format(
          "flops_per_token{}: {:+.2f}% misses the {}% tolerance{}: FLOPs move in steps of about {:.1f}% per {} of "
          "hidden size here ({})",
          where, at.flops.mismatch_pct, tol, limiting(at.flops.mismatch_pct), flops_step(plan, here, wider, at),
          plan.space.align_hidden, mention("SearchSpace::align_hidden")));
    }
  }
  const BudgetValue& params = best.budgets.front().params;
  if (objective.params && std::fabs(params.mismatch_pct) > tol) {
    if (plan.baseline.is_moe()) {
      const ModelConfig more = make_candidate(plan, k.hidden, k.experts + plan.space.align_experts, g, w);
      const double step =
          100.0 * (static_cast<double>(count(more).params.non_embedding) - params.candidate) / params.baseline;
      push(fmt::format(
          "params_non_embedding: {:+.2f}% misses the {}% tolerance{}: parameters move in steps of {:.1f}% per {} "
          "experts at hidden size {}",
          params.mismatch_pct, tol, limiting(params.mismatch_pct), step, plan.space.align_experts, k.hidden));
    } else {
      push(
          fmt::format("params_non_embedding: {:+.2f}% misses the {}% tolerance{}: a dense Baseline has no "
                      "experts to buy parameters back with",
                      params.mismatch_pct, tol, limiting(params.mismatch_pct)));
    }
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
  const MemoryFigure base_memory = memory_figure(plan.baseline, plan.options.memory_layout);
  const TimeFigure base_time = plan.hardware ? time_figure(plan.baseline, *plan.hardware, plan.options) : TimeFigure{};
  for (const Found& f : found) {
    r.candidates.push_back(describe(plan, f, target));
    describe_memory(r.candidates.back(), base_memory, plan.options);
    if (plan.hardware) describe_time(r.candidates.back(), base_time, plan);
    if (r.candidates.size() > 1) r.candidates.back().config.name += fmt::format("-alt{}", r.candidates.size() - 1);
  }
  r.space_size = plan.space_size();
  r.evaluated = evaluated;
  // Exactly: the largest mismatch against the tolerance as a fraction (in
  // millionths of a percent, finer than any tolerance anyone types).
  const Fraction tolerance{static_cast<i128>(std::llround(plan.options.tolerance_pct * 1e6)), i128{100'000'000}};
  r.within_tolerance = !found.empty() && compare(found.front().score.front(), tolerance) <= 0;
  if (!r.within_tolerance && !r.candidates.empty()) r.why = explain(plan, r.candidates.front());
  return r;
}

}  // namespace smelt::solve_detail
