// count(): assembles per-layer costs over the LayerSchedule.
#include "smelt/count.hpp"

#include <optional>

#include <fmt/format.h>

#include "config/validate_fields.hpp"
#include "count/count_impl.hpp"
#include "count/layer_cost.hpp"
#include "smelt/detail/bounds.hpp"
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
  loop_extras += o.loop_extras;
  lm_head += o.lm_head;
  mtp += o.mtp;
  return *this;
}

FlopTerms FlopTerms::scaled(double k) const noexcept {
  FlopTerms r = *this;
  for (double* v : {&r.attention_qkv, &r.attention_out, &r.attention_scores, &r.attention_values, &r.router, &r.experts,
                    &r.shared_experts, &r.dense_ffn, &r.elementwise, &r.loop_extras, &r.lm_head, &r.mtp})
    *v *= k;
  return r;
}

namespace count_detail {

using detail::add;
using detail::mul;

namespace {

// One span's extras: what they store, and their matmul FLOPs a token on one pass.
LoopExtras span_extras(const ModelConfig& c, const LoopConfig& l) {
  const std::int64_t h = c.hidden_size;
  LoopExtras one;
  if (l.exit_gate) one.params = h + 1, one.matmul_flops_per_token = 2 * h;  // Linear(H -> 1) and its bias
  if (l.injection == Injection::linear) {                                   // Linear(2H -> H) before every pass
    const std::int64_t weights = mul(2 * h, h, "loop parameters");
    one.params = add(one.params, add(weights, l.injection_bias ? h : 0, "loop parameters"), "loop parameters");
    one.matmul_flops_per_token = add(one.matmul_flops_per_token, mul(2, weights, "loop FLOPs"), "loop FLOPs");
  }
  if (l.lora_rank > 0) {  // per-visit LoRA: rank x (in + out) a target and a layer, on every pass its own
    std::int64_t sides = 0;
    for (const LoraTarget t : l.lora_targets) {
      const ProjectionShape p = projection_shape(c, t);
      sides = add(sides, add(p.in, p.out, "LoRA parameters"), "LoRA parameters");
    }
    const std::int64_t pass = mul(mul(l.lora_rank, sides, "LoRA parameters"), l.last - l.first + 1, "LoRA parameters");
    one.params = add(one.params, mul(pass, l.count, "LoRA parameters"), "loop parameters");
    one.matmul_flops_per_token = add(one.matmul_flops_per_token, mul(2, pass, "LoRA FLOPs"), "loop FLOPs");
  }
  return one;
}

}  // namespace

LoopExtras loop_extras(const ModelConfig& c) {
  LoopExtras out;  // checked: each term fits, but a sum over thousands of spans of a wide model may not
  for (const LoopConfig& l : c.loops) {
    if (l.first == 0) continue;
    const LoopExtras one = span_extras(c, l);
    out.params = add(out.params, one.params, "loop parameters");
    out.matmul_flops_per_token =
        add(out.matmul_flops_per_token, mul(one.matmul_flops_per_token, l.count, "loop FLOPs"), "loop FLOPs");
  }
  return out;
}

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

// What each span adds beside its layers (docs/counting.md, "Loop forms"): an
// exit gate H -> 1 with its bias, stored once and run on every pass (2 H
// FLOPs a token a pass); the final norm after every pass but the last (whose
// norm is the model's own), elementwise work only.
void count_loop_extras(const ModelConfig& c, const CountOptions& o, CostReport& r) {
  const LoopExtras extras = loop_extras(c);
  r.params.terms.loop_extras = extras.params;
  r.flops.terms.loop_extras = static_cast<double>(extras.matmul_flops_per_token);
  for (const LoopConfig& l : c.loops)
    if (l.first > 0 && l.norm_each_pass && o.elementwise)
      r.flops.terms.elementwise += 4.0 * static_cast<double>(c.hidden_size) * static_cast<double>(l.count - 1);
}

// Truncated backprop (backprop_passes > 0, Huginn's mean_backprop_depth): the
// passes before the last backprop_passes run forward only, so training skips
// their backward, 2 x their forward: the span's layers and its per-pass extras.
double untrained_pass_flops(const ModelConfig& c, const CostReport& r) {
  double out = 0;
  for (const LoopConfig& l : c.loops) {
    if (!l.active() || l.backprop_passes == 0) continue;
    double pass = 0;
    for (std::int64_t i = l.first - 1; i < l.last; ++i)
      pass += r.layers[static_cast<std::size_t>(i)].flops_per_visit.forward();
    pass += static_cast<double>(span_extras(c, l).matmul_flops_per_token);
    out += static_cast<double>(l.count - l.backprop_passes) * pass;
  }
  return out;
}

}  // namespace

std::int64_t kv_tokens_over_passes(const ModelConfig& c, const LayerBlock& block, std::int64_t held) {
  const LoopConfig* span = block.passes > 1 ? c.loop_of(block.first) : nullptr;
  if (span == nullptr || span->kv_policy == KvPolicy::per_visit) return mul(held, block.passes, "KV cache tokens");
  if (span->kv_policy == KvPolicy::shared) return held;  // later visits read the first visit's slot
  std::int64_t out = 0;  // active: as Mixture-of-Recursions keeps top-k = max(1, int(capacity x tokens))
  for (const double keep : span->kv_keep)
    out = add(out, std::max<std::int64_t>(1, static_cast<std::int64_t>(keep * static_cast<double>(held))),
              "KV cache tokens");
  return out;
}

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
          mul(l.kv_elements_per_visit, kv_tokens_over_passes(c, block, l.kv_tokens_held), "KV cache elements");
      kv_elements = add(kv_elements, held, "KV cache elements");
      kv_bytes = add(kv_bytes, mul(held, c.kv_cache_bytes, "KV cache bytes"), "KV cache bytes");
    }
  r.executed_layers = plan.executed_layers();

  const std::int64_t final_norm = c.norm == NormType::layernorm ? 2 * h : h;
  count_loop_extras(c, o, r);
  auto& p = r.params;
  p.terms.norms = add(p.terms.norms, final_norm, "norm parameters");
  p.terms.embedding = mul(c.vocab_size, h, "embedding parameters");
  p.terms.lm_head = c.tie_embeddings ? 0 : p.terms.embedding;
  p.embedding = p.terms.embedding;
  p.lm_head = p.terms.lm_head;
  p.total = 0;
  for (const std::int64_t term : {p.terms.embedding, p.terms.lm_head, p.terms.attention, p.terms.norms, p.terms.router,
                                  p.terms.experts, p.terms.shared_experts, p.terms.dense_ffn, p.terms.loop_extras})
    p.total = add(p.total, term, "total parameters");
  p.non_embedding = p.total - p.embedding - p.lm_head;
  p.active_non_embedding = add(add(active, final_norm, "active parameters"), p.terms.loop_extras, "active parameters");
  p.active = add(add(p.active_non_embedding, p.embedding, "active parameters"), p.lm_head, "active parameters");

  r.flops.terms.lm_head = 2.0 * static_cast<double>(h) * static_cast<double>(c.vocab_size);
  if (o.elementwise) r.flops.terms.elementwise += 4.0 * static_cast<double>(h);  // final norm
  count_mtp(c, o, context, r);
  r.flops.forward = r.flops.terms.forward();
  r.flops.training = 3.0 * (r.flops.forward + r.flops.terms.mtp) - 2.0 * untrained_pass_flops(c, r);

  r.kv.bytes_at_context = kv_bytes;
  r.kv.bytes_per_token = static_cast<double>(kv_bytes) / static_cast<double>(context);
  r.kv.elements_per_token = static_cast<double>(kv_elements) / static_cast<double>(context);
  return r;
}

}  // namespace count_detail

CostReport count(const ModelConfig& c, const CountOptions& o) {
  config_detail::validate_fields(c);
  if (o.context_length < 0 || o.context_length > detail::kMaxContext)
    throw config_error(
        fmt::format("context_length = {}: must be between 1 and {} tokens", o.context_length, detail::kMaxContext));
  try {
    return count_detail::count_unchecked(c, o);
  } catch (const detail::overflow& e) {
    throw overflow_error(count_detail::overflow_message(c, e.quantity()));
  }
}

}  // namespace smelt
