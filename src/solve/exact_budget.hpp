// Budgets as exact integers and mismatches as exact fractions, so that the
// solver never decides between candidates on rounding noise.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include "smelt/config.hpp"
#include "smelt/solve.hpp"
#include "solve/fraction.hpp"

namespace smelt::solve_detail {

using namespace smelt::detail;  // the helpers every module shares

// The largest int64, as the exact integers' type: a total above it falls back to count(), which names the overflow.
inline constexpr i128 kMaxI64 = std::numeric_limits<std::int64_t>::max();

// One config's budgets, per context: FLOPs over a whole sequence of T tokens
// (per-token FLOPs x T, exact), the LM head's share of them, KV cache bytes for
// the sequence, and non-embedding parameters.
struct ExactBudgets {
  std::vector<i128> flops_non_embedding;  // one per context
  std::vector<i128> lm_head;              // one per context
  std::vector<i128> kv_bytes;             // one per context
  std::int64_t params_non_embedding = 0;
  i128 memory = 0;  // per-GPU bytes (memory_budget.hpp), set only where Objective::memory
  i128 time = 0;    // training attoseconds per token (time_budget.hpp), set only where Objective::time
};

// Layers with the same cost: MoE or dense, attention kind, visits (1 or the
// loop's count). count() builds one LayerCost per kind and copies it per layer.
struct LayerKind {
  std::int64_t first_layer = -1;  // a layer of this kind (0-based), -1 if none
  i128 layers = 0;                // layers of this kind
  i128 visits = 0;                // executed visits summed over them
  bool moe = false;
  LayerAttention attention = LayerAttention::full;
};
struct LayerKinds {
  std::array<LayerKind, 2 * 3 * 2> kinds{};  // by (MoE, attention kind, looped)
};
// One pass over the layers; the same for every config with this depth, loop,
// MoE layers and attention pattern (every candidate of one solve).
LayerKinds layer_kinds(const ModelConfig& config);

// Counted per layer kind (MoE or dense, attention kind, looped or not), each
// kind's cost times its layers and visits, with no per-layer report; equal to
// exact_budgets_reference(), which reads count()'s report, and raising
// count()'s errors (it falls back to it where a total could overflow).
ExactBudgets exact_budgets(const ModelConfig& config, const std::vector<std::int64_t>& contexts);
// With the kinds already known: `layers` must be layer_kinds(config).
ExactBudgets exact_budgets(const ModelConfig& config, const std::vector<std::int64_t>& contexts,
                           const LayerKinds& layers);
// KV cache bytes of a sequence at each context per element one visit caches:
// the sum over the layer kinds of visits x tokens held x kv_cache_bytes.
// exact_budgets()'s kv_bytes are this times kv_elements_per_visit (2 x KV
// heads x head_dim for GQA, kv_lora_rank + qk_rope_head_dim for MLA): the
// attention geometry enters the KV cache through that factor alone, and H,
// the experts and the FFN widths not at all (docs/counting.md section 7).
std::vector<i128> kv_bytes_per_element(const ModelConfig& config, const std::vector<std::int64_t>& contexts,
                                       const LayerKinds& layers);
ExactBudgets exact_budgets_reference(const ModelConfig& config, const std::vector<std::int64_t>& contexts);

// The objective's value: the relative mismatches of every matched budget at
// every context, sorted from the largest. Scores compare lexicographically
// (leximax): first the largest mismatch, then the next largest, and so on, so
// a budget no candidate can move does not hide how well the others match.
using Score = std::vector<Fraction>;
int compare(const Score& a, const Score& b);

// Which budgets the objective takes, and how.
struct Objective {
  bool flops = true;
  bool params = true;
  bool kv = true;
  bool memory = false;
  bool time = false;
  bool flops_with_head = false;

  explicit Objective(const MatchOptions& options);
  // The matched budgets as one flat list, one entry per (budget, context).
  std::vector<i128> components(const ExactBudgets& budgets) const;
  // Sorted relative mismatches of `candidate` components against `target` ones.
  Score score(const std::vector<i128>& candidate, const std::vector<i128>& target) const;
  Score score(const ExactBudgets& candidate, const ExactBudgets& target) const {
    return score(components(candidate), components(target));
  }
  // The largest mismatch of the KV cache alone (0 when it is not matched): a
  // lower bound on the first entry of the score of any config with this KV.
  Fraction kv_score(const ExactBudgets& candidate, const ExactBudgets& target) const;
  // The same from the candidate's KV bytes alone, one per context.
  Fraction kv_score(const std::vector<i128>& kv_bytes, const ExactBudgets& target) const;
};

Fraction gap(i128 candidate, i128 target);

double to_percent(i128 candidate, i128 baseline);

}  // namespace smelt::solve_detail
