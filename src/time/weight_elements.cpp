#include "time/weight_elements.hpp"

#include <algorithm>

#include "smelt/detail/bounds.hpp"

namespace smelt::time_detail {
using i64 = std::int64_t;

WeightElements weight_elements(const memory_detail::ModelState& state, const memory_detail::ResolvedLayout& r) {
  WeightElements out;
  for (const MemoryTerm& t : state.weights.terms)
    (t.name == "experts" ? out.experts : out.dense) +=
        static_cast<double>(t.bytes) / static_cast<double>(r.param_bytes);
  return out;
}

std::optional<KindElements> kind_elements(const ModelConfig& c, const TrainingShape& shape) {
  if (c.mtp_modules > 0) return std::nullopt;
  for (const LoopConfig& l : c.loops)
    if (l.norm_each_pass || l.exit_gate || l.norm_after || l.injection != Injection::none || l.lora_rank > 0 ||
        l.backprop_passes > 0 || l.kv_policy != KvPolicy::per_visit)
      return std::nullopt;
  const i64 seq = shape.r.layout.seq;
  KindElements out;
  // Bounds on what count() sums and checks: every parameter and KV total, and their products with the element
  // sizes, stay far below 2^63 (2^56 here), so neither it nor the sums below can overflow.
  __extension__ typedef __int128 i128;
  if (seq < 1 || seq > detail::kMaxContext) return std::nullopt;
  i128 params = 2 * i128{c.vocab_size} * c.hidden_size + 4 * i128{c.hidden_size};
  for (std::size_t k = 0; k < shape.layers.size(); ++k) {
    if (shape.layers[k] == 0) continue;
    const i64 i = shape.first_layer[k];
    try {
      out.params[k] = count_detail::layer_cost(c, i, c.is_moe_layer(i), c.attention_at(i), seq, {false, seq}).params;
    } catch (const detail::overflow&) {
      return std::nullopt;  // count() raises its own error
    }
    const ParamTerms& p = out.params[k];
    params += shape.layers[k] * (i128{p.attention} + p.norms + p.router + p.experts + p.shared_experts + p.dense_ffn);
  }
  const i128 kv = i128{shape.visits} *
                  (2 * i128{c.attention.num_kv_heads} * c.attention.head_dim + c.attention.mla.kv_lora_rank +
                   c.attention.mla.qk_rope_head_dim) *
                  (seq + 1) * (c.kv_cache_bytes + 1);
  out.stage_layers = &shape.stage_layers;
  constexpr i128 kFar = i128{1} << 56;
  if (params * 16 > kFar || kv > kFar) return std::nullopt;
  return out;
}

void count_layer_kinds(const ModelConfig& c, TrainingShape& shape) {
  for (i64 i = 0; i < c.num_layers; ++i) {
    const std::size_t k = KindElements::key(c, i);
    if (shape.first_layer[k] < 0) shape.first_layer[k] = i;
    shape.layers[k] += 1;
    shape.visits += c.visits(i);
  }
  for (const std::vector<i64>& layers : shape.r.stage_layers) {
    std::vector<std::pair<std::size_t, i64>>& kinds = shape.stage_layers.emplace_back();
    for (const i64 i : layers) {
      const std::size_t k = KindElements::key(c, i);
      const auto seen = std::find_if(kinds.begin(), kinds.end(), [&](const auto& p) { return p.first == k; });
      if (seen == kinds.end())
        kinds.emplace_back(k, 1);
      else
        seen->second += 1;
    }
  }
}

}  // namespace smelt::time_detail
