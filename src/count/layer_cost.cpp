// Per-layer counting: the formulas of docs/counting.md, one function per
// sublayer. All integer products are checked. The weight-matrix FLOPs are
// computed once, as exact integers; their FlopTerms doubles are conversions of
// those integers (exact below 2^53, so for every realistic model).
#include "count/layer_cost.hpp"

#include <algorithm>

#include "util/checked.hpp"

namespace smelt::detail {
namespace {

using i64 = std::int64_t;

i64 norm_params(const ModelConfig& c, i64 width) {
  return c.norm == NormType::layernorm ? mul(2, width, "norm parameters") : width;
}

// Matrix parameters of one FFN of intermediate width f.
i64 ffn_matmul(const ModelConfig& c, i64 f) {
  return mul(c.ffn.type == FfnType::gated ? 3 : 2, mul(c.hidden_size, f, "FFN parameters"), "FFN parameters");
}

i64 ffn_bias(const ModelConfig& c, i64 f) {
  if (!c.ffn.bias) return 0;
  return (c.ffn.type == FfnType::gated ? 2 * f : f) + c.hidden_size;
}

// Elementwise work per FFN: the activation (4 FLOPs an element) and, for gated
// FFNs, the product with the up projection (1 more).
double ffn_elementwise(const ModelConfig& c, i64 f) {
  return static_cast<double>(f) * (c.ffn.type == FfnType::gated ? 5.0 : 4.0);
}

double dbl(i64 v) { return static_cast<double>(v); }

// Weight-matrix FLOPs of one visit, per token: 2 x the multiply-accumulates.
struct MatmulFlops {
  i64 qkv = 0, out = 0, router = 0, experts = 0, shared = 0, dense = 0;

  i64 total() const {
    const i64 attention = add(qkv, out, "attention FLOPs");
    return add(attention, add(add(router, experts, "FLOPs"), add(shared, dense, "FLOPs"), "FLOPs"), "FLOPs");
  }
};

struct Attention {
  i64 qkv_matmul = 0;  // weights multiplied per token before the scores
  i64 out_matmul = 0;
  i64 params = 0;       // everything stored: matrices, biases, norms, sinks
  i64 qk_width = 0;     // heads x query/key head dim
  i64 v_width = 0;      // heads x value head dim
  i64 kv_elements = 0;  // cached per token
  i64 normed = 0;       // elements passed through q/k/latent norms
};

Attention gqa_attention(const ModelConfig& c) {
  const auto& a = c.attention;
  const i64 h = c.hidden_size;
  const i64 q = mul(a.num_heads, a.head_dim, "query width");
  const i64 kv = mul(a.num_kv_heads, a.head_dim, "key/value width");
  Attention r;
  r.qkv_matmul = mul(h, add(q, mul(2, kv, "key/value width"), "QKV width"), "QKV parameters");
  r.out_matmul = mul(q, h, "output projection parameters");
  r.qk_width = q;
  r.v_width = q;
  r.kv_elements = mul(2, kv, "KV cache elements");
  i64 extra = 0;
  if (a.qkv_bias) extra += q + 2 * kv;
  if (a.qk_bias) extra += q + kv;
  if (a.out_bias) extra += h;
  if (a.qk_norm == QkNorm::per_head) r.normed = q + kv, extra += norm_params(c, 2 * a.head_dim);
  if (a.qk_norm == QkNorm::full) r.normed = q + kv, extra += norm_params(c, q + kv);
  if (a.sinks) extra += a.num_heads;
  r.params = add(add(r.qkv_matmul, r.out_matmul, "attention parameters"), extra, "attention parameters");
  return r;
}

Attention mla_attention(const ModelConfig& c) {
  const auto& a = c.attention;
  const auto& m = a.mla;
  const i64 h = c.hidden_size;
  const i64 qk_head = m.qk_nope_head_dim + m.qk_rope_head_dim;
  const i64 q_width = mul(a.num_heads, qk_head, "query width");
  Attention r;
  i64 norms = 0;
  // Queries: direct, or down to q_lora_rank, normed, then up.
  i64 q = 0;
  if (m.q_lora_rank > 0) {
    q = add(mul(h, m.q_lora_rank, "MLA query parameters"), mul(m.q_lora_rank, q_width, "MLA query parameters"),
            "MLA query parameters");
    norms += norm_params(c, m.q_lora_rank);
    r.normed += m.q_lora_rank;
  } else {
    q = mul(h, q_width, "MLA query parameters");
  }
  // Keys and values: down to the latent plus the shared rope key, normed, then up.
  const i64 kv_down = mul(h, m.kv_lora_rank + m.qk_rope_head_dim, "MLA key/value parameters");
  const i64 kv_up = mul(m.kv_lora_rank, mul(a.num_heads, m.qk_nope_head_dim + m.v_head_dim, "MLA widths"),
                        "MLA key/value parameters");
  norms += norm_params(c, m.kv_lora_rank);
  r.normed += m.kv_lora_rank;
  r.qkv_matmul = add(q, add(kv_down, kv_up, "MLA parameters"), "MLA parameters");
  r.v_width = mul(a.num_heads, m.v_head_dim, "value width");
  r.out_matmul = mul(r.v_width, h, "output projection parameters");
  r.qk_width = q_width;
  r.kv_elements = m.kv_lora_rank + m.qk_rope_head_dim;
  i64 extra = norms + (a.out_bias ? h : 0) + (a.sinks ? a.num_heads : 0);
  r.params = add(add(r.qkv_matmul, r.out_matmul, "attention parameters"), extra, "attention parameters");
  return r;
}

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
  const i64 h = c.hidden_size;
  LayerCost out;
  out.layer = layer + 1;
  out.moe = moe;
  out.attention = kind;

  const Attention att = c.attention.type == AttentionType::mla ? mla_attention(c) : gqa_attention(c);
  const i64 pairs = attended_pairs(c.attention, kind, context);
  const double attended = static_cast<double>(pairs) / static_cast<double>(context);
  MatmulFlops matmul;
  matmul.qkv = mul(2, att.qkv_matmul, "attention FLOPs");
  matmul.out = mul(2, att.out_matmul, "attention FLOPs");
  auto& f = out.flops_per_visit;
  f.attention_scores = 2.0 * static_cast<double>(att.qk_width) * attended;
  f.attention_values = 2.0 * static_cast<double>(att.v_width) * attended;
  out.params.attention = att.params;
  const i64 norms = c.norm_placement == NormPlacement::pre ? 2 : 4;  // sandwich: one more on each sublayer
  out.params.norms = norm_params(c, norms * h);
  out.attended_pairs = pairs;
  out.score_flops_per_pair = mul(2, add(att.qk_width, att.v_width, "score width"), "score FLOPs");
  out.kv_elements_per_visit = att.kv_elements;
  out.kv_tokens_held = tokens_held(c.attention, kind, context);
  const i64 kv_bytes =
      mul(mul(att.kv_elements, out.kv_tokens_held, "KV cache elements"), c.kv_cache_bytes, "KV cache bytes");
  out.kv_bytes_per_visit = static_cast<double>(kv_bytes) / static_cast<double>(context);

  double elementwise = 4.0 * static_cast<double>(norms * h + att.normed)               // norms
                       + 2.0 * static_cast<double>(h)                                  // residual adds
                       + 5.0 * static_cast<double>(c.attention.num_heads) * attended;  // softmax
  if (c.visits(layer) > 1) elementwise += 2.0 * static_cast<double>(h);                // residual scale

  i64 active_ffn = 0;
  if (moe) {
    const auto& m = c.moe;
    const i64 expert = add(ffn_matmul(c, m.expert_width), ffn_bias(c, m.expert_width), "expert parameters");
    const i64 shared_one =
        m.num_shared_experts > 0 ? add(ffn_matmul(c, m.shared_width), ffn_bias(c, m.shared_width), "shared expert") : 0;
    out.params.router =
        add(mul(h, m.num_experts, "router parameters"), m.router_bias ? m.num_experts : 0, "router parameters");
    out.params.experts = mul(m.num_experts, expert, "routed expert parameters");
    out.params.shared_experts = add(mul(m.num_shared_experts, shared_one, "shared expert parameters"),
                                    m.shared_gate ? h : 0, "shared expert parameters");
    active_ffn = add(add(out.params.router, mul(m.top_k, expert, "active expert parameters"), "active parameters"),
                     out.params.shared_experts, "active parameters");
    matmul.router = mul(2, mul(h, m.num_experts, "router FLOPs"), "router FLOPs");
    matmul.experts = mul(2, mul(m.top_k, ffn_matmul(c, m.expert_width), "expert FLOPs"), "expert FLOPs");
    const i64 shared = m.num_shared_experts > 0 ? ffn_matmul(c, m.shared_width) : 0;
    matmul.shared =
        mul(2, add(mul(m.num_shared_experts, shared, "shared FLOPs"), m.shared_gate ? h : 0, "shared FLOPs"),
            "shared FLOPs");
    elementwise += 5.0 * static_cast<double>(m.num_experts)  // router softmax or sigmoid
                   + static_cast<double>(m.top_k) * ffn_elementwise(c, m.expert_width) +
                   static_cast<double>(m.num_shared_experts) * ffn_elementwise(c, m.shared_width) +
                   2.0 * static_cast<double>(h) * static_cast<double>(m.top_k + m.num_shared_experts);  // combine
  } else {
    out.params.dense_ffn = add(ffn_matmul(c, c.ffn.dense_width), ffn_bias(c, c.ffn.dense_width), "FFN parameters");
    active_ffn = out.params.dense_ffn;
    matmul.dense = mul(2, ffn_matmul(c, c.ffn.dense_width), "FFN FLOPs");
    elementwise += ffn_elementwise(c, c.ffn.dense_width);
  }
  if (options.elementwise) f.elementwise = elementwise;
  f.attention_qkv = dbl(matmul.qkv);
  f.attention_out = dbl(matmul.out);
  f.router = dbl(matmul.router);
  f.experts = dbl(matmul.experts);
  f.shared_experts = dbl(matmul.shared);
  f.dense_ffn = dbl(matmul.dense);
  out.matmul_flops_per_visit = matmul.total();
  out.active_params =
      add(add(out.params.attention, out.params.norms, "active parameters"), active_ffn, "active parameters");
  return out;
}

}  // namespace smelt::detail
