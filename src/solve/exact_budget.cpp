#include "solve/exact_budget.hpp"

#include <algorithm>
#include <array>
#include <limits>

#include "config/validate_fields.hpp"
#include "count/count_impl.hpp"
#include "count/layer_cost.hpp"
#include "smelt/count.hpp"
#include "smelt/detail/bounds.hpp"
#include "util/checked.hpp"

namespace smelt::solve_detail {

using namespace smelt::detail;  // the helpers every module shares

namespace {

// count()'s budgets, read off its per-layer report: the reference the
// specialised count below must equal, and the path that raises count()'s own
// errors when a total leaves 64-bit integers.
ExactBudgets budgets_from_report(const ModelConfig& config, const std::vector<std::int64_t>& contexts) {
  ExactBudgets out;
  for (const std::int64_t context : contexts) {
    const CostReport r = count(config, {.context_length = context});
    i128 flops = 0;
    for (const auto& l : r.layers)
      flops += static_cast<i128>(l.visits) * (static_cast<i128>(context) * l.matmul_flops_per_visit +
                                              static_cast<i128>(l.score_flops_per_pair) * l.attended_pairs);
    flops += static_cast<i128>(context) * count_detail::loop_extras(config).matmul_flops_per_token;
    out.flops_non_embedding.push_back(flops);
    out.lm_head.push_back(static_cast<i128>(context) * 2 * config.hidden_size * config.vocab_size);
    out.kv_bytes.push_back(r.kv.bytes_at_context);
    out.params_non_embedding = r.params.non_embedding;
  }
  return out;
}

}  // namespace

LayerKinds layer_kinds(const ModelConfig& c) {
  LayerKinds out;
  for (std::int64_t i = 0; i < c.num_layers; ++i) {
    const bool moe = c.is_moe_layer(i);
    const LayerAttention attention = c.attention_at(i);
    const std::int64_t visits = c.visits(i);
    LayerKind& k =
        out.kinds[static_cast<std::size_t>((moe ? 6 : 0) + 2 * static_cast<int>(attention) + (visits > 1 ? 1 : 0))];
    if (k.first_layer < 0) k = {i, 0, 0, moe, attention};
    k.layers += 1;
    k.visits += visits;
  }
  return out;
}

ExactBudgets exact_budgets(const ModelConfig& config, const std::vector<std::int64_t>& contexts) {
  return exact_budgets(config, contexts, layer_kinds(config));
}

ExactBudgets exact_budgets(const ModelConfig& config, const std::vector<std::int64_t>& contexts,
                           const LayerKinds& layers) {
  const ModelConfig& c = config;
  config_detail::validate_fields(c);  // as count() does first
  const i128 h = c.hidden_size;
  const i128 final_norm = c.norm == NormType::layernorm ? 2 * h : h;
  const i128 embedding = static_cast<i128>(c.vocab_size) * h * (c.tie_embeddings ? 1 : 2);
  ExactBudgets out;
  out.flops_non_embedding.reserve(contexts.size());
  out.lm_head.reserve(contexts.size());
  out.kv_bytes.reserve(contexts.size());
  try {
    for (const std::int64_t context : contexts) {
      if (context < 1 || context > kMaxContext) return budgets_from_report(c, contexts);  // count()'s error
      if (std::any_of(c.loops.begin(), c.loops.end(),
                      [](const LoopConfig& l) { return l.kv_policy != KvPolicy::per_visit; }))
        return budgets_from_report(c, contexts);  // a span that caches less than a slot per visit
      const count_detail::LoopExtras extras = count_detail::loop_extras(c);
      i128 flops = static_cast<i128>(context) * extras.matmul_flops_per_token;
      i128 kv = 0;
      i128 params = final_norm + extras.params;
      for (const LayerKind& k : layers.kinds) {
        if (k.first_layer < 0) continue;
        const LayerCost l =
            count_detail::layer_cost(c, k.first_layer, k.moe, k.attention, context, {.context_length = context});
        flops += k.visits * (static_cast<i128>(context) * l.matmul_flops_per_visit +
                             static_cast<i128>(l.score_flops_per_pair) * l.attended_pairs);
        kv += k.visits * l.kv_elements_per_visit * l.kv_tokens_held * c.kv_cache_bytes;
        params += k.layers * l.params.total();
      }
      // count() checks every partial sum of these non-negative totals against
      // 64-bit integers (and the MTP modules' parameters); where one could
      // pass, its own path raises its own error.
      i128 mtp = 0;
      if (c.mtp_modules > 0) {
        const std::int64_t last = c.num_layers - 1;
        const LayerCost b = count_detail::layer_cost(c, last, c.is_moe_layer(last), LayerAttention::full, context, {});
        mtp = c.mtp_modules * (4 * h * h + 6 * h + b.params.total());
      }
      if (params + embedding > kMaxI64 || kv > kMaxI64 || mtp > kMaxI64) return budgets_from_report(c, contexts);
      out.flops_non_embedding.push_back(flops);
      out.lm_head.push_back(static_cast<i128>(context) * 2 * c.hidden_size * c.vocab_size);
      out.kv_bytes.push_back(kv);
      out.params_non_embedding = static_cast<std::int64_t>(params);
    }
  } catch (const overflow&) {
    return budgets_from_report(c, contexts);
  }
  return out;
}

std::vector<i128> kv_bytes_per_element(const ModelConfig& config, const std::vector<std::int64_t>& contexts,
                                       const LayerKinds& layers) {
  std::vector<i128> out;
  out.reserve(contexts.size());
  for (const std::int64_t context : contexts) {
    i128 per_element = 0;
    for (const LayerKind& k : layers.kinds)
      if (k.first_layer >= 0)
        per_element += k.visits * count_detail::tokens_held(config.attention, k.attention, context);
    out.push_back(per_element * config.kv_cache_bytes);
  }
  return out;
}

ExactBudgets exact_budgets_reference(const ModelConfig& config, const std::vector<std::int64_t>& contexts) {
  return budgets_from_report(config, contexts);
}

Objective::Objective(const MatchOptions& o)
    : flops(false), params(false), kv(false), memory(false), time(false), flops_with_head(o.flops_with_head) {
  for (const Budget b : o.match) {
    flops |= b == Budget::flops;
    params |= b == Budget::params;
    kv |= b == Budget::kv;
    memory |= b == Budget::memory;
    time |= b == Budget::time;
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
  if (memory) out.push_back(b.memory);
  if (time) out.push_back(b.time);
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

Fraction Objective::kv_score(const std::vector<i128>& kv_bytes, const ExactBudgets& b) const {
  Fraction worst{0, 1};
  if (kv)
    for (std::size_t i = 0; i < kv_bytes.size(); ++i)
      if (const Fraction f = gap(kv_bytes[i], b.kv_bytes[i]); compare(f, worst) > 0) worst = f;
  return worst;
}

double to_percent(i128 candidate, i128 baseline) {
  return 100.0 * static_cast<double>(candidate - baseline) / static_cast<double>(baseline);
}

}  // namespace smelt::solve_detail
