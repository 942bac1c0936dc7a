#include "exact_budget.hpp"

#include <algorithm>

#include "smelt/cost.hpp"

namespace smelt::detail {

int compare(Fraction a, Fraction b) {
  int sign = 1;  // each step to the reciprocals of the remainders reverses the order
  for (;;) {
    const i128 qa = a.num / a.den;
    const i128 qb = b.num / b.den;
    if (qa != qb) return qa < qb ? -sign : sign;
    const i128 ra = a.num % a.den;
    const i128 rb = b.num % b.den;
    if (ra == 0 || rb == 0) return ra == rb ? 0 : (ra == 0 ? -sign : sign);
    // ra/a.den < rb/b.den  <=>  a.den/ra > b.den/rb
    a = {a.den, ra};
    b = {b.den, rb};
    sign = -sign;
  }
}

ExactBudgets exact_budgets(const ModelConfig& config, const std::vector<std::int64_t>& contexts) {
  ExactBudgets out;
  for (const std::int64_t context : contexts) {
    const CostReport r = count(config, {.context_length = context});
    i128 flops = 0;
    for (const auto& l : r.layers)
      flops += static_cast<i128>(l.visits) * (static_cast<i128>(context) * l.matmul_flops_per_visit +
                                              static_cast<i128>(l.score_flops_per_pair) * l.attended_pairs);
    out.flops_non_embedding.push_back(flops);
    out.lm_head.push_back(static_cast<i128>(context) * 2 * config.hidden_size * config.vocab_size);
    out.kv_bytes.push_back(r.kv.bytes_at_context);
    out.params_non_embedding = r.params.non_embedding;
  }
  return out;
}

Objective::Objective(const MatchOptions& o)
    : flops(false), params(false), kv(false), flops_with_head(o.flops_with_head) {
  for (const Budget b : o.match) {
    flops |= b == Budget::flops;
    params |= b == Budget::params;
    kv |= b == Budget::kv;
  }
}

namespace {
Fraction gap(i128 candidate, i128 baseline) {
  return {candidate > baseline ? candidate - baseline : baseline - candidate, baseline > 0 ? baseline : 1};
}
void take_max(Fraction& best, Fraction f) {
  if (compare(f, best) > 0) best = f;
}
}  // namespace

Fraction Objective::score(const ExactBudgets& c, const ExactBudgets& b) const {
  Fraction worst{0, 1};
  for (std::size_t i = 0; i < c.kv_bytes.size(); ++i) {
    if (flops)
      take_max(worst, flops_with_head
                          ? gap(c.flops_non_embedding[i] + c.lm_head[i], b.flops_non_embedding[i] + b.lm_head[i])
                          : gap(c.flops_non_embedding[i], b.flops_non_embedding[i]));
    if (kv) take_max(worst, gap(c.kv_bytes[i], b.kv_bytes[i]));
  }
  if (params) take_max(worst, gap(c.params_non_embedding, b.params_non_embedding));
  return worst;
}

Fraction Objective::kv_score(const ExactBudgets& c, const ExactBudgets& b) const {
  Fraction worst{0, 1};
  if (kv)
    for (std::size_t i = 0; i < c.kv_bytes.size(); ++i) take_max(worst, gap(c.kv_bytes[i], b.kv_bytes[i]));
  return worst;
}

double to_percent(i128 candidate, i128 baseline) {
  return 100.0 * static_cast<double>(candidate - baseline) / static_cast<double>(baseline);
}

}  // namespace smelt::detail
