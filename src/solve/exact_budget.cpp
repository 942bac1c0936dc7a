#include "solve/exact_budget.hpp"

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

Fraction gap(i128 candidate, i128 target) {
  return {candidate > target ? candidate - target : target - candidate, target > 0 ? target : 1};
}

int compare(const Score& a, const Score& b) {
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i)
    if (const int c = compare(a[i], b[i]); c != 0) return c;
  return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
}

std::vector<i128> Objective::components(const ExactBudgets& b) const {
  std::vector<i128> out;
  for (std::size_t i = 0; i < b.kv_bytes.size(); ++i) {
    if (flops) out.push_back(flops_with_head ? b.flops_non_embedding[i] + b.lm_head[i] : b.flops_non_embedding[i]);
    if (kv) out.push_back(b.kv_bytes[i]);
  }
  if (params) out.push_back(b.params_non_embedding);
  return out;
}

Score Objective::score(const std::vector<i128>& candidate, const std::vector<i128>& target) const {
  Score s;
  s.reserve(candidate.size());
  for (std::size_t i = 0; i < candidate.size(); ++i) s.push_back(gap(candidate[i], target[i]));
  std::sort(s.begin(), s.end(), [](const Fraction& x, const Fraction& y) { return compare(x, y) > 0; });
  return s;
}

Fraction Objective::kv_score(const ExactBudgets& c, const ExactBudgets& b) const {
  Fraction worst{0, 1};
  if (kv)
    for (std::size_t i = 0; i < c.kv_bytes.size(); ++i)
      if (const Fraction f = gap(c.kv_bytes[i], b.kv_bytes[i]); compare(f, worst) > 0) worst = f;
  return worst;
}

double to_percent(i128 candidate, i128 baseline) {
  return 100.0 * static_cast<double>(candidate - baseline) / static_cast<double>(baseline);
}

}  // namespace smelt::detail
