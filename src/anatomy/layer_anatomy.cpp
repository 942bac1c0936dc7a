// One stored layer's tensors, products and attention core (docs/anatomy.md),
// in the reference model's names and order (python/smelt/torch/_reference.py's
// Block: attn_norm, attn, ffn_norm, ffn, then a sandwich's two post-norms).
#include "anatomy/layer_anatomy.hpp"

#include <algorithm>

#include "util/checked.hpp"
#include "util/enum_names.hpp"

namespace smelt::anatomy {
namespace {

using i64 = std::int64_t;
using detail::add;
using detail::mul;

// Each term's word, and the quantity an overflow of its sums is reported as.
constexpr detail::EnumNames<Term, 6> kTermNames{{{Term::attention, "attention"},
                                                 {Term::norms, "norms"},
                                                 {Term::router, "router"},
                                                 {Term::experts, "experts"},
                                                 {Term::shared_experts, "shared_experts"},
                                                 {Term::dense_ffn, "dense_ffn"}}};
constexpr detail::EnumNames<Term, 6> kTermQuantities{{{Term::attention, "attention parameters"},
                                                      {Term::norms, "norm parameters"},
                                                      {Term::router, "router parameters"},
                                                      {Term::experts, "routed expert parameters"},
                                                      {Term::shared_experts, "shared expert parameters"},
                                                      {Term::dense_ffn, "FFN parameters"}}};
// Each op's word (the FLOP term and the time model's op), and the quantity its overflow is reported as.
constexpr detail::EnumNames<Op, 6> kOpNames{{{Op::attention_qkv, "attention_qkv"},
                                             {Op::attention_out, "attention_out"},
                                             {Op::router, "router"},
                                             {Op::experts, "experts"},
                                             {Op::shared_experts, "shared_experts"},
                                             {Op::dense_ffn, "dense_ffn"}}};
constexpr detail::EnumNames<Op, 6> kOpQuantities{{{Op::attention_qkv, "attention FLOPs"},
                                                  {Op::attention_out, "attention FLOPs"},
                                                  {Op::router, "router FLOPs"},
                                                  {Op::experts, "expert FLOPs"},
                                                  {Op::shared_experts, "shared FLOPs"},
                                                  {Op::dense_ffn, "FFN FLOPs"}}};

// The literals above, as the checked helpers take them.
const char* params_name(Term t) { return detail::name_of(kTermQuantities, t).data(); }
const char* flops_name(Op op) { return detail::name_of(kOpQuantities, op).data(); }

Dim whole(i64 elements) { return {.heads = 1, .per_head = elements}; }
Dim by(i64 heads, i64 per_head, Split split) { return {.heads = heads, .per_head = per_head, .split = split}; }

struct Builder {
  const ModelConfig& c;
  LayerSums& out;
  LayerAnatomy* lists = nullptr;  // where the tensors and products go; null: the sums alone

  i64 h() const { return c.hidden_size; }
  void tensor(Term term, const char* name, i64 elements, i64 instances = 1, bool trainable = true) {
    if (lists)
      lists->tensors.push_back(
          {.term = term, .name = name, .elements = elements, .instances = instances, .trainable = trainable});
    const char* what = params_name(term);
    i64& sum = out.param_sums[static_cast<std::size_t>(term)];
    const i64 all = mul(elements, instances, what);
    sum = add(sum, all, what);
    if (trainable)
      out.trainable_tensors += instances;
    else
      out.frozen_params = add(out.frozen_params, all, "parameters");
  }
  void product(Op op, Dim n, Dim k, i64 times = 1, Dim fused = {.heads = 0}) {
    const Product p{.op = op, .n = n, .k = k, .n_fused = fused, .times = times};
    if (lists) lists->products.push_back(p);
    const char* what = flops_name(op);
    i64& sum = out.mac_sums[static_cast<std::size_t>(op)];
    sum = add(sum, p.macs(what), what);
  }
  // A norm of `width`: RMSNorm's weight, LayerNorm's weight and bias.
  void norm(Term term, const char* weight, const char* bias, i64 width) {
    tensor(term, weight, width);
    if (c.norm == NormType::layernorm) tensor(term, bias, width);
  }
  // A Linear(in, out): its weight, and its bias where it has one.
  void linear(Term term, const char* weight, const char* bias_name, i64 in, i64 out_width, bool bias,
              i64 instances = 1) {
    tensor(term, weight, mul(in, out_width, params_name(term)), instances);
    if (bias) tensor(term, bias_name, out_width, instances);
  }

  // gpt-oss's per-head sink logits: a parameter of the attention module itself, which torch lists before its
  // submodules' (named_parameters' order).
  void sinks() {
    if (c.attention.sinks) tensor(Term::attention, "attn.sinks", c.attention.num_heads);
  }

  void gqa() {
    const auto& a = c.attention;
    const i64 q = mul(a.num_heads, a.head_dim, "query width");
    const i64 kv = mul(a.num_kv_heads, a.head_dim, "key/value width");
    const bool qk_bias = a.qkv_bias || a.qk_bias;
    sinks();
    linear(Term::attention, "attn.q_proj.weight", "attn.q_proj.bias", h(), q, qk_bias);
    linear(Term::attention, "attn.k_proj.weight", "attn.k_proj.bias", h(), kv, qk_bias);
    linear(Term::attention, "attn.v_proj.weight", "attn.v_proj.bias", h(), kv, a.qkv_bias);
    linear(Term::attention, "attn.o_proj.weight", "attn.o_proj.bias", q, h(), a.out_bias);
    if (a.qk_norm != QkNorm::none) {
      const bool per_head = a.qk_norm == QkNorm::per_head;
      norm(Term::attention, "attn.q_norm.weight", "attn.q_norm.bias", per_head ? a.head_dim : q);
      norm(Term::attention, "attn.k_norm.weight", "attn.k_norm.bias", per_head ? a.head_dim : kv);
      out.core.normed = q + kv;
    }
    // Q, K and V as one GEMM: the query heads over tp, the KV heads over tp (replicated where tp exceeds them).
    product(Op::attention_qkv, by(a.num_heads, a.head_dim, Split::tp), whole(h()), 1,
            by(a.num_kv_heads, mul(2, a.head_dim, "key/value width"), Split::kv_heads));
    out.core.qk = out.core.v = by(a.num_heads, a.head_dim, Split::tp);
    out.core.kv = by(a.num_kv_heads, mul(2, a.head_dim, "KV cache elements"), Split::kv_heads);
    product(Op::attention_out, whole(h()), out.core.v);
  }

  void mla() {
    const auto& a = c.attention;
    const auto& m = a.mla;
    const i64 qk_head = m.qk_nope_head_dim + m.qk_rope_head_dim;
    const Dim q = by(a.num_heads, qk_head, Split::tp);
    sinks();
    // Queries: direct, or down to q_lora_rank, normed, then up.
    if (m.q_lora_rank > 0) {
      linear(Term::attention, "attn.q_a_proj.weight", "", h(), m.q_lora_rank, false);
      norm(Term::attention, "attn.q_a_layernorm.weight", "attn.q_a_layernorm.bias", m.q_lora_rank);
      linear(Term::attention, "attn.q_b_proj.weight", "", m.q_lora_rank, q.whole("query width"), false);
      product(Op::attention_qkv, whole(m.q_lora_rank), whole(h()));
      product(Op::attention_qkv, q, whole(m.q_lora_rank));
      out.core.normed += m.q_lora_rank;
    } else {
      linear(Term::attention, "attn.q_proj.weight", "", h(), q.whole("query width"), false);
      product(Op::attention_qkv, q, whole(h()));
    }
    // Keys and values: down to the latent plus the shared rope key, normed, then up.
    const i64 kv_a = m.kv_lora_rank + m.qk_rope_head_dim;
    const Dim kv_b = by(a.num_heads, m.qk_nope_head_dim + m.v_head_dim, Split::tp);
    linear(Term::attention, "attn.kv_a_proj_with_mqa.weight", "", h(), kv_a, false);
    norm(Term::attention, "attn.kv_a_layernorm.weight", "attn.kv_a_layernorm.bias", m.kv_lora_rank);
    linear(Term::attention, "attn.kv_b_proj.weight", "", m.kv_lora_rank, kv_b.whole("MLA widths"), false);
    product(Op::attention_qkv, whole(kv_a), whole(h()));
    product(Op::attention_qkv, kv_b, whole(m.kv_lora_rank));
    out.core.normed += m.kv_lora_rank;
    out.core.qk = q;
    out.core.v = by(a.num_heads, m.v_head_dim, Split::tp);
    out.core.kv = whole(kv_a);
    linear(Term::attention, "attn.o_proj.weight", "attn.o_proj.bias", out.core.v.whole("value width"), h(), a.out_bias);
    product(Op::attention_out, whole(h()), out.core.v);
  }

  // `instances` FFNs of `width` columns (gate and up, then down); their products run as one FFN of
  // `run_width` columns (the shared experts together), `times` per token, the width split as `columns` says.
  void ffn(Term term, Op op, const char* const (&names)[6], i64 width, i64 instances, i64 run_width, Split columns,
           i64 times) {
    const bool gated = c.ffn.type == FfnType::gated, bias = c.ffn.bias;
    if (gated) linear(term, names[0], names[1], h(), width, bias, instances);
    linear(term, names[2], names[3], h(), width, bias, instances);
    linear(term, names[4], names[5], width, h(), bias, instances);
    // Gate and up as one GEMM, then down.
    product(op, by(run_width, gated ? 2 : 1, columns), whole(h()), times);
    product(op, whole(h()), by(run_width, 1, columns), times);
  }

  void moe() {
    const auto& m = c.moe;
    // The router's bias: gpt-oss's on the logits (trained) or DeepSeek's correction bias (never stepped).
    linear(Term::router, "ffn.router.weight", "", h(), m.num_experts, false);
    if (m.router_bias) {
      const bool correction = m.router_form == RouterForm::deepseek;
      tensor(Term::router, correction ? "ffn.router.e_score_correction_bias" : "ffn.router.bias", m.num_experts, 1,
             !correction);
    }
    product(Op::router, whole(m.num_experts), whole(h()));
    static constexpr const char* experts[6] = {"ffn.experts.*.gate_proj.weight", "ffn.experts.*.gate_proj.bias",
                                               "ffn.experts.*.up_proj.weight",   "ffn.experts.*.up_proj.bias",
                                               "ffn.experts.*.down_proj.weight", "ffn.experts.*.down_proj.bias"};
    ffn(Term::experts, Op::experts, experts, m.expert_width, m.num_experts, m.expert_width, Split::etp, m.top_k);
    if (m.num_shared_experts > 0) {
      static constexpr const char* shared[6] = {"ffn.shared.*.gate_proj.weight", "ffn.shared.*.gate_proj.bias",
                                                "ffn.shared.*.up_proj.weight",   "ffn.shared.*.up_proj.bias",
                                                "ffn.shared.*.down_proj.weight", "ffn.shared.*.down_proj.bias"};
      // The shared experts run as one FFN of their widths together.
      ffn(Term::shared_experts, Op::shared_experts, shared, m.shared_width, m.num_shared_experts,
          mul(m.num_shared_experts, m.shared_width, "shared expert parameters"), Split::tp, 1);
    }
    if (m.shared_gate) {
      tensor(Term::shared_experts, "ffn.shared_gate.weight", h());
      product(Op::shared_experts, whole(1), whole(h()));
    }
  }

  void dense() {
    static constexpr const char* names[6] = {"ffn.gate_proj.weight", "ffn.gate_proj.bias",   "ffn.up_proj.weight",
                                             "ffn.up_proj.bias",     "ffn.down_proj.weight", "ffn.down_proj.bias"};
    ffn(Term::dense_ffn, Op::dense_ffn, names, c.ffn.dense_width, 1, c.ffn.dense_width, Split::tp, 1);
  }
};

// Flattened: the builder's small steps inlined (the solver builds millions of anatomies).
[[gnu::flatten]] void build(Builder& b, bool moe) {
  const ModelConfig& c = b.c;
  b.out.moe = moe;
  b.out.sublayer_norms = c.norm_placement == NormPlacement::pre ? 2 : 4;
  b.norm(Term::norms, "attn_norm.weight", "attn_norm.bias", c.hidden_size);
  if (c.attention.type == AttentionType::mla)
    b.mla();
  else
    b.gqa();
  b.norm(Term::norms, "ffn_norm.weight", "ffn_norm.bias", c.hidden_size);
  if (moe)
    b.moe();
  else
    b.dense();
  if (b.out.sublayer_norms == 4) {
    b.norm(Term::norms, "attn_post_norm.weight", "attn_post_norm.bias", c.hidden_size);
    b.norm(Term::norms, "ffn_post_norm.weight", "ffn_post_norm.bias", c.hidden_size);
  }
}

}  // namespace

const char* name(Op op) { return detail::name_of(kOpNames, op).data(); }
const char* name(Term term) { return detail::name_of(kTermNames, term).data(); }

i64 Dim::on_rank(i64 tp, i64 etp) const {
  switch (split) {
    case Split::none:
      return heads * per_head;
    case Split::tp:
      return heads / tp * per_head;
    case Split::kv_heads:
      return heads / std::min(tp, heads) * per_head;
    case Split::etp:
      return heads / etp * per_head;
  }
  return heads * per_head;
}

i64 Product::n_on_rank(i64 tp, i64 etp) const {
  return n.on_rank(tp, etp) + (n_fused.heads > 0 ? n_fused.on_rank(tp, etp) : 0);
}

LayerAnatomy layer_anatomy(const ModelConfig& c, bool moe) {
  LayerAnatomy out;
  Builder b{c, out.sums, &out};
  build(b, moe);
  return out;
}

LayerSums layer_sums(const ModelConfig& c, bool moe) {
  LayerSums out;
  Builder b{c, out};
  build(b, moe);
  return out;
}

}  // namespace smelt::anatomy
