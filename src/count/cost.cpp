// count(): assembles per-layer costs over the LayerSchedule.
#include "smelt/count.hpp"

#include <optional>

#include <fmt/format.h>

#include "config/validate_fields.hpp"
#include "count/count_impl.hpp"
#include "count/layer_cost.hpp"
#include "smelt/bounds.hpp"
#include "smelt/error.hpp"
#include "smelt/schedule.hpp"
#include "util/checked.hpp"

namespace smelt {

FlopTerms& FlopTerms::operator+=(const FlopTerms& o) noexcept {
  attention_qkv += o.attention_qkv;
  attention_out += o.attention_out;
  attention_scores += o.attention_scores;
  attention_values += o.attention_values;
  router += o.router;
  experts += o.experts;
  shared_experts += o.shared_experts;
  dense_ffn += o.dense_ffn;
  elementwise += o.elementwise;
  lm_head += o.lm_head;
  mtp += o.mtp;
  return *this;
}

FlopTerms FlopTerms::scaled(double k) const noexcept {
  FlopTerms r = *this;
  for (double* v : {&r.attention_qkv, &r.attention_out, &r.attention_scores, &r.attention_values, &r.router, &r.experts,
                    &r.shared_experts, &r.dense_ffn, &r.elementwise, &r.lm_head, &r.mtp})
    *v *= k;
  return r;
}

namespace detail {
namespace {

void add_params(ParamTerms& to, const ParamTerms& p) {
  to.attention = add(to.attention, p.attention, "attention parameters");
  to.norms = add(to.norms, p.norms, "norm parameters");
  to.router = add(to.router, p.router, "router parameters");
  to.experts = add(to.experts, p.experts, "routed expert parameters");
  to.shared_experts = add(to.shared_experts, p.shared_experts, "shared expert parameters");
  to.dense_ffn = add(to.dense_ffn, p.dense_ffn, "FFN parameters");
}

// One multi-token-prediction module (DeepSeek-V3): two input norms, the 2H -> H
// projection, one layer shaped like the last layer, and its own final norm; the
// embedding and output head are shared with the main model.
void count_mtp(const ModelConfig& c, const CountOptions& o, std::int64_t context, CostReport& r) {
  if (c.mtp_modules == 0) return;
  const std::int64_t h = c.hidden_size;
  const LayerCost block =
      layer_cost(c, c.num_layers - 1, c.is_moe_layer(c.num_layers - 1), LayerAttention::full, context, o);
  const std::int64_t proj = mul(2 * h, h, "MTP projection parameters");
  const std::int64_t norms = (c.norm == NormType::layernorm ? 2 : 1) * 3 * h;
  const std::int64_t one = add(add(proj, norms, "MTP parameters"), block.params.total(), "MTP parameters");
  r.params.mtp = mul(c.mtp_modules, one, "MTP parameters");
  const double flops = 2.0 * static_cast<double>(proj) + block.flops_per_visit.forward() +
                       2.0 * static_cast<double>(h) * static_cast<double>(c.vocab_size);
  r.flops.terms.mtp = static_cast<double>(c.mtp_modules) * flops;
}

}  // namespace

CostReport count_unchecked(const ModelConfig& c, const CountOptions& o) {
  const std::int64_t context = o.context_length > 0 ? o.context_length : c.context_length;
  const std::int64_t h = c.hidden_size;
  CostReport r;
  r.model = c.name;
  r.context_length = context;

  // A layer's cost depends only on its kind (MoE or dense, attention kind,
  // looped or not), so each kind is counted once and copied.
  std::optional<LayerCost> kinds[2][3][2];
  r.layers.reserve(static_cast<std::size_t>(c.num_layers));
  for (std::int64_t i = 0; i < c.num_layers; ++i) {
    const bool moe = c.is_moe_layer(i);
    const LayerAttention kind = c.attention_at(i);
    const std::int64_t visits = c.visits(i);
    auto& cached = kinds[moe ? 1 : 0][static_cast<int>(kind)][visits > 1 ? 1 : 0];
    if (!cached) cached = layer_cost(c, i, moe, kind, context, o);
    r.layers.push_back(*cached);
    r.layers.back().layer = i + 1;
    r.layers.back().visits = visits;
  }

  std::int64_t active = 0;
  std::int64_t kv_bytes = 0;
  std::int64_t kv_elements = 0;
  for (const auto& l : r.layers) {
    add_params(r.params.terms, l.params);
    active = add(active, l.active_params, "active parameters");
  }
  // Each layer once, times its visits: the FLOP terms are whole numbers held
  // exactly in doubles, so k x term is the sum of k visits.
  const LayerSchedule plan = schedule(c);
  for (const LayerBlock& block : plan.blocks)
    for (std::int64_t i = block.first; i <= block.last; ++i) {
      const auto& l = r.layers[static_cast<std::size_t>(i)];
      const std::int64_t k = block.passes;
      r.flops.terms += k == 1 ? l.flops_per_visit : l.flops_per_visit.scaled(static_cast<double>(k));
      const std::int64_t held =
          mul(mul(l.kv_elements_per_visit, l.kv_tokens_held, "KV cache elements"), k, "KV cache elements");
      kv_elements = add(kv_elements, held, "KV cache elements");
      kv_bytes = add(kv_bytes, mul(held, c.kv_cache_bytes, "KV cache bytes"), "KV cache bytes");
    }
  r.executed_layers = plan.executed_layers();

  const std::int64_t final_norm = c.norm == NormType::layernorm ? 2 * h : h;
  auto& p = r.params;
  p.terms.norms = add(p.terms.norms, final_norm, "norm parameters");
  p.terms.embedding = mul(c.vocab_size, h, "embedding parameters");
  p.terms.lm_head = c.tie_embeddings ? 0 : p.terms.embedding;
  p.embedding = p.terms.embedding;
  p.lm_head = p.terms.lm_head;
  p.total = 0;
  for (const std::int64_t term : {p.terms.embedding, p.terms.lm_head, p.terms.attention, p.terms.norms, p.terms.router,
                                  p.terms.experts, p.terms.shared_experts, p.terms.dense_ffn})
    p.total = add(p.total, term, "total parameters");
  p.non_embedding = p.total - p.embedding - p.lm_head;
  p.active_non_embedding = add(active, final_norm, "active parameters");
  p.active = add(add(p.active_non_embedding, p.embedding, "active parameters"), p.lm_head, "active parameters");

  r.flops.terms.lm_head = 2.0 * static_cast<double>(h) * static_cast<double>(c.vocab_size);
  if (o.elementwise) r.flops.terms.elementwise += 4.0 * static_cast<double>(h);  // final norm
  count_mtp(c, o, context, r);
  r.flops.forward = r.flops.terms.forward();
  r.flops.training = 3.0 * (r.flops.forward + r.flops.terms.mtp);

  r.kv.bytes_at_context = kv_bytes;
  r.kv.bytes_per_token = static_cast<double>(kv_bytes) / static_cast<double>(context);
  r.kv.elements_per_token = static_cast<double>(kv_elements) / static_cast<double>(context);
  return r;
}

}  // namespace detail

CostReport count(const ModelConfig& c, const CountOptions& o) {
  detail::validate_fields(c);
  if (o.context_length < 0 || o.context_length > detail::kMaxContext)
    throw config_error(
        fmt::format("context_length = {}: must be between 1 and {} tokens", o.context_length, detail::kMaxContext));
  try {
    return detail::count_unchecked(c, o);
  } catch (const detail::overflow& e) {
    throw overflow_error(detail::overflow_message(c, e.quantity()));
  }
}

}  // namespace smelt
