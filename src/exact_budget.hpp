// Budgets as exact integers and mismatches as exact fractions, so that the
// solver never decides between candidates on rounding noise.
#pragma once

#include <cstdint>
#include <vector>

#include "smelt/config.hpp"
#include "smelt/solve.hpp"

namespace smelt::detail {

__extension__ typedef __int128 i128;  // FLOPs over a whole sequence can pass 2^63

// A non-negative fraction num / den with den > 0.
struct Fraction {
  i128 num = 0;
  i128 den = 1;
};

// Exact three-way comparison of two fractions, without overflow: compares
// integer parts, then the reciprocals of the remainders (a continued fraction).
int compare(Fraction a, Fraction b);

// One config's budgets, per context: FLOPs over a whole sequence of T tokens
// (per-token FLOPs x T, exact), the LM head's share of them, KV cache bytes for
// the sequence, and non-embedding parameters.
struct ExactBudgets {
  std::vector<i128> flops_non_embedding;  // one per context
  std::vector<i128> lm_head;              // one per context
  std::vector<i128> kv_bytes;             // one per context
  std::int64_t params_non_embedding = 0;
};

ExactBudgets exact_budgets(const ModelConfig& config, const std::vector<std::int64_t>& contexts);

// Which budgets the objective takes, and how.
struct Objective {
  bool flops = true;
  bool params = true;
  bool kv = true;
  bool flops_with_head = false;

  explicit Objective(const MatchOptions& options);
  // max over matched budgets and contexts of |candidate - baseline| / baseline
  Fraction score(const ExactBudgets& candidate, const ExactBudgets& baseline) const;
  // The same, over the KV cache alone (0 when it is not matched).
  Fraction kv_score(const ExactBudgets& candidate, const ExactBudgets& baseline) const;
};

double to_percent(i128 candidate, i128 baseline);

}  // namespace smelt::detail
