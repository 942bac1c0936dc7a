// Per-layer counting: the formulas of docs/counting.md over the layer's anatomy
// (src/anatomy: its tensors and products). All integer products are checked.
// The weight-matrix FLOPs are computed once, as exact integers; their FlopTerms
// doubles are conversions of those integers (exact below 2^53, so for every
// realistic model).
#include "count/layer_cost.hpp"

#include <algorithm>

#include "anatomy/layer_anatomy.hpp"
#include "util/checked.hpp"

namespace smelt::count_detail {

using detail::add;
using detail::mul;
namespace {

using i64 = std::int64_t;

// Elementwise work per FFN: the activation (4 FLOPs an element) and, for gated
// FFNs, the product with the up projection (1 more).
double ffn_elementwise(const ModelConfig& c, i64 f) {
  return static_cast<double>(f) * (c.ffn.type == FfnType::gated ? 5.0 : 4.0);
}

double dbl(i64 v) { return static_cast<double>(v); }

}  // namespace

i64 attended_pairs(const AttentionConfig& a, LayerAttention kind, i64 t) {
  const auto triangle = [](i64 n) { return mul(n, n + 1, "attended token pairs") / 2; };
  switch (kind) {
    case LayerAttention::full:
      return triangle(t);
    case LayerAttention::sliding:
      if (t <= a.window) return triangle(t);
      return add(triangle(a.window), mul(t - a.window, a.window, "attended token pairs"), "attended token pairs");
    case LayerAttention::chunked:
      return add(mul(t / a.chunk, triangle(a.chunk), "attended token pairs"), triangle(t % a.chunk),
                 "attended token pairs");
  }
  return 0;
}

i64 tokens_held(const AttentionConfig& a, LayerAttention kind, i64 t) {
  switch (kind) {
    case LayerAttention::full:
      return t;
    case LayerAttention::sliding:
      return std::min(a.window, t);
    case LayerAttention::chunked:
      return std::min(a.chunk, t);
  }
  return t;
}

LayerCost layer_cost(const ModelConfig& c, i64 layer, bool moe, LayerAttention kind, i64 context,
                     const CountOptions& options) {
  using anatomy::Op;
  using anatomy::Term;
  const i64 h = c.hidden_size;
  LayerCost out;
  out.layer = layer + 1;
  out.moe = moe;
  out.attention = kind;

  const anatomy::LayerSums a = anatomy::layer_sums(c, moe);
  const i64 qk_width = a.core.qk.whole("query width"), v_width = a.core.v.whole("value width");
  const i64 kv_elements = a.core.kv.whole("KV cache elements");
  const i64 pairs = attended_pairs(c.attention, kind, context);
  const double attended = static_cast<double>(pairs) / static_cast<double>(context);
  auto& f = out.flops_per_visit;
  f.attention_scores = 2.0 * static_cast<double>(qk_width) * attended;
  f.attention_values = 2.0 * static_cast<double>(v_width) * attended;
  auto& p = out.params;
  p.attention = a.params(Term::attention);
  p.norms = a.params(Term::norms);
  p.router = a.params(Term::router);
  p.experts = a.params(Term::experts);
  p.shared_experts = a.params(Term::shared_experts);
  p.dense_ffn = a.params(Term::dense_ffn);
  out.attended_pairs = pairs;
  out.score_flops_per_pair = mul(2, add(qk_width, v_width, "score width"), "score FLOPs");
  out.kv_elements_per_visit = kv_elements;
  out.kv_tokens_held = tokens_held(c.attention, kind, context);
  const i64 kv_bytes =
      mul(mul(kv_elements, out.kv_tokens_held, "KV cache elements"), c.kv_cache_bytes, "KV cache bytes");
  out.kv_bytes_per_visit = static_cast<double>(kv_bytes) / static_cast<double>(context);

  double elementwise = 4.0 * static_cast<double>(a.sublayer_norms * h + a.core.normed)  // norms
                       + 2.0 * static_cast<double>(h)                                   // residual adds
                       + 5.0 * static_cast<double>(c.attention.num_heads) * attended;   // softmax
  if (c.visits(layer) > 1) elementwise += 2.0 * static_cast<double>(h);                 // residual scale

  // Weight-matrix FLOPs of one visit, per token: 2 x the multiply-accumulates.
  const auto flops = [&](Op op, const char* what) { return mul(2, a.macs(op), what); };
  const i64 qkv = flops(Op::attention_qkv, "attention FLOPs"), o = flops(Op::attention_out, "attention FLOPs");
  const i64 router = flops(Op::router, "router FLOPs"), experts = flops(Op::experts, "expert FLOPs");
  const i64 shared = flops(Op::shared_experts, "shared FLOPs"), dense = flops(Op::dense_ffn, "FFN FLOPs");
  i64 active_ffn = 0;
  if (moe) {
    const auto& m = c.moe;
    active_ffn =
        add(add(p.router, mul(m.top_k, p.experts / m.num_experts, "active expert parameters"), "active parameters"),
            p.shared_experts, "active parameters");
    elementwise += 5.0 * static_cast<double>(m.num_experts)  // router softmax or sigmoid
                   + static_cast<double>(m.top_k) * ffn_elementwise(c, m.expert_width) +
                   static_cast<double>(m.num_shared_experts) * ffn_elementwise(c, m.shared_width) +
                   2.0 * static_cast<double>(h) * static_cast<double>(m.top_k + m.num_shared_experts);  // combine
  } else {
    active_ffn = p.dense_ffn;
    elementwise += ffn_elementwise(c, c.ffn.dense_width);
  }
  if (options.elementwise) f.elementwise = elementwise;
  f.attention_qkv = dbl(qkv);
  f.attention_out = dbl(o);
  f.router = dbl(router);
  f.experts = dbl(experts);
  f.shared_experts = dbl(shared);
  f.dense_ffn = dbl(dense);
  const i64 attention = add(qkv, o, "attention FLOPs");
  out.matmul_flops_per_visit =
      add(attention, add(add(router, experts, "FLOPs"), add(shared, dense, "FLOPs"), "FLOPs"), "FLOPs");
  out.active_params = add(add(p.attention, p.norms, "active parameters"), active_ffn, "active parameters");
  return out;
}

}  // namespace smelt::count_detail
