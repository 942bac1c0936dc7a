// A visit's saved tensors (docs/memory.md, "Activations, op by op"). Symbols:
// b sequences of s tokens, N = b s tokens, h hidden, e the activation dtype's
// bytes; parameters are weights, never saved here.
#include "anatomy/saved_activations.hpp"

#include "util/checked.hpp"
#include "util/enum_names.hpp"

namespace smelt::anatomy {
namespace {

using i64 = std::int64_t;
using detail::add;
using detail::mul;

constexpr i64 kIndexBytes = 8;  // int64 token ids, expert choices, sort orders
constexpr i64 kStatBytes = 4;   // float32 norm statistics and upcast inputs

i64 mul3(i64 a, i64 b, i64 c) { return mul(mul(a, b, "activation elements"), c, "activation elements"); }

struct SavedBuilder {
  const ModelConfig& c;
  i64 b, s, n, h, e;
  List<Saved, 64>& out;
  Group group = Group::attention;

  void save(const char* name, i64 elements, i64 bytes, Spread spread, i64 count = 1) {
    out.push_back(
        {.group = group, .name = name, .elements = elements, .bytes = bytes, .spread = spread, .count = count});
  }

  // A norm over `rows` rows of `width`: RMSNorm keeps its input, 1/rms per row and (with float32 activations) the
  // normalized values the weight multiplies; in 16 bits it normalises a float32 copy of its input and keeps the
  // 16-bit normalized values instead. LayerNorm keeps its input and its mean and 1/std per row, in the
  // activations' dtype (as PyTorch's CPU kernel does). `input` replaces the input's elements where the norm reads
  // a view of a wider tensor (MLA's latent).
  void norm(i64 rows, i64 width, Spread spread, i64 input = 0) {
    const i64 elements = mul(rows, width, "activation elements");
    if (c.norm == NormType::layernorm) {
      save("norm_input", input > 0 ? input : elements, e, spread);
      save("norm_statistics", mul(rows, 2, "activation elements"), e, spread);
    } else if (e == 4) {
      save("norm_input", input > 0 ? input : elements, e, spread);
      save("norm_statistics", rows, e, spread);
      save("normalized", elements, e, spread);
    } else {
      save("norm_input", elements, kStatBytes, spread);
      save("norm_statistics", rows, kStatBytes, spread);
      save("normalized", elements, e, spread);
    }
  }

  // One FFN of `width` on `rows` rows: SwiGLU keeps the gate and up products, the SiLU output and their product;
  // a plain FFN the up product and the GELU output.
  // An FFN's intermediates, rows x width each: gated, the gate, its activation, up and their product (4); plain,
  // up and its activation (2); gpt-oss's clamped SwiGLU (moe.clamped_swiglu, the routed experts), the gate and up
  // before their clamps, up + 1, the clamped gate, its sigmoid, the product of the first three and the whole (7).
  void ffn(const char* name, i64 rows, i64 width, Spread spread, i64 count = 1, bool clamped = false) {
    save(name, mul3(rows, width, clamped ? 7 : c.ffn.type == FfnType::gated ? 4 : 2), e, spread, count);
  }

  void attention_gqa(Recompute recompute) {
    const auto& a = c.attention;
    save("input", mul(n, h, "activation elements"), e, Spread::replicated);  // the norm's output, read by Q, K, V
    const i64 q = mul(a.num_heads, a.head_dim, "activation elements");
    const i64 kv = mul(a.num_kv_heads, a.head_dim, "activation elements");
    if (a.qk_norm == QkNorm::full) {
      norm(n, q, Spread::sharded);
      norm(n, kv, Spread::sharded);
    } else if (a.qk_norm == QkNorm::per_head) {
      norm(mul(n, a.num_heads, "activation elements"), a.head_dim, Spread::sharded);
      norm(mul(n, a.num_kv_heads, "activation elements"), a.head_dim, Spread::sharded);
    }
    // RoPE's cos and sin of the s positions x head_dim / 2, once for the queries and once for the keys.
    if (a.head_dim / 2 > 0) save("rope", mul3(4, s, a.head_dim / 2), e, Spread::positional);
    const i64 heads_tokens = mul(n, q, "activation elements");  // b x heads x s x head_dim
    save("query", heads_tokens, e, Spread::sharded);
    save("keys_repeated", heads_tokens, e, Spread::sharded);  // K repeated to every query head
    save("values_repeated", heads_tokens, e, Spread::sharded);
    if (recompute != Recompute::selective) {
      save("mask", mul(s, s, "activation elements"), 1, Spread::positional);
      const i64 keys = a.sinks ? s + 1 : s;  // the sink logit joins each row of the softmax
      save("probabilities", mul3(mul(b, a.num_heads, "activation elements"), s, keys), e, Spread::sharded);
    }
    save("output", heads_tokens, e, Spread::sharded);  // the heads' concatenation, read by the output projection
  }

  void attention_mla(Recompute recompute) {
    const auto& a = c.attention;
    const auto& m = a.mla;
    save("input", mul(n, h, "activation elements"), e, Spread::replicated);
    const i64 qk_dim = m.qk_nope_head_dim + m.qk_rope_head_dim;
    if (m.q_lora_rank > 0) {
      norm(n, m.q_lora_rank, Spread::replicated);  // the query latent, normed
      save("query_latent", mul(n, m.q_lora_rank, "activation elements"), e, Spread::replicated);
    }
    // The key-value latent, normed: it is the first r_kv of the r_kv + d_rope columns kv_a_proj writes, so a
    // float32 RMSNorm (and a LayerNorm) keeps that whole output, a 16-bit RMSNorm a float32 copy of the latent.
    norm(n, m.kv_lora_rank, Spread::replicated, mul(n, m.kv_lora_rank + m.qk_rope_head_dim, "activation elements"));
    save("kv_latent", mul(n, m.kv_lora_rank, "activation elements"), e, Spread::replicated);
    if (m.qk_rope_head_dim / 2 > 0) save("rope", mul3(4, s, m.qk_rope_head_dim / 2), e, Spread::positional);
    const i64 heads = mul(n, a.num_heads, "activation elements");
    save("query", mul(heads, qk_dim, "activation elements"), e, Spread::sharded);
    save("keys", mul(heads, qk_dim, "activation elements"), e, Spread::sharded);
    // The values are a view of kv_b_proj's output: the attention product keeps them alone, or (one sequence, or
    // one token) the whole output they are a view of; so does a checkpointed attention core (selective), whose
    // kept input is that view.
    const i64 value_width =
        b > 1 && s > 1 && recompute != Recompute::selective ? m.v_head_dim : m.qk_nope_head_dim + m.v_head_dim;
    save("values", mul(heads, value_width, "activation elements"), e, Spread::sharded);
    if (recompute != Recompute::selective) {
      save("mask", mul(s, s, "activation elements"), 1, Spread::positional);
      const i64 keys = a.sinks ? s + 1 : s;
      save("probabilities", mul3(mul(b, a.num_heads, "activation elements"), s, keys), e, Spread::sharded);
    }
    save("output", mul(heads, m.v_head_dim, "activation elements"), e, Spread::sharded);
  }

  void moe() {
    const auto& m = c.moe;
    save("input", mul(n, h, "activation elements"), e, Spread::replicated);  // read by router, gather, shared
    const i64 slots = mul(n, m.top_k, "activation elements");                // (token, chosen expert) pairs
    const bool llama4 = m.router_form == RouterForm::llama4;
    // The router: its scores over every expert (softmax, or sigmoid in DeepSeek's form), the chosen experts, and,
    // when renormalised (moe.renormalize), the chosen weights and their sum, which the division keeps (unnormalised,
    // the weights are picked from the scores and nothing keeps them); Llama 4's form keeps only the sigmoid of the
    // chosen logits.
    if (llama4) {
      save("router_weights", slots, e, Spread::replicated);
    } else {
      save("router_scores", mul(n, m.num_experts, "activation elements"), e, Spread::replicated);
      if (m.renormalize) save("router_weights", add(slots, n, "activation elements"), e, Spread::replicated);
    }
    save("router_choices", slots, kIndexBytes, Spread::replicated);
    // Dispatch: the sort order and each slot's token (int64), the gathered tokens, each slot's weight.
    save("dispatch_indices", mul(slots, 2, "activation elements"), kIndexBytes, Spread::replicated);
    save("dispatched_tokens", mul(slots, h, "activation elements"), e, Spread::expert);
    save("slot_weights", slots, e, Spread::replicated);
    ffn("expert_intermediate", slots, m.expert_width, Spread::expert, 1, m.clamped_swiglu.has_value());
    // The experts' outputs, concatenated, and weighted (index_add keeps its source); Llama 4 weighs the inputs
    // instead: the weighted tokens, then the concatenated outputs.
    save(llama4 ? "weighted_tokens" : "expert_outputs", mul(slots, h, "activation elements"), e, Spread::expert);
    save(llama4 ? "expert_outputs" : "weighted_outputs", mul(slots, h, "activation elements"), e, Spread::expert);
    if (m.num_shared_experts > 0) ffn("shared_intermediate", n, m.shared_width, Spread::sharded, m.num_shared_experts);
    if (m.shared_gate) {
      save("shared_gate", n, e, Spread::replicated);
      save("shared_output", mul(n, h, "activation elements"), e, Spread::replicated);
    }
  }

  void dense_ffn() {
    save("input", mul(n, h, "activation elements"), e, Spread::replicated);
    ffn("intermediate", n, c.ffn.dense_width, Spread::sharded);
  }
};

}  // namespace

const char* name(Group group) {
  static constexpr detail::EnumNames<Group, 6> names{{{Group::layer_input, "layer_input"},
                                                      {Group::attention_norm, "attention_norm"},
                                                      {Group::attention, "attention"},
                                                      {Group::ffn_norm, "ffn_norm"},
                                                      {Group::ffn, "ffn"},
                                                      {Group::moe, "moe"}}};
  return detail::name_of(names, group).data();
}

List<Saved, 4> saved_norm(const ModelConfig& c, i64 rows, i64 width, i64 e) {
  List<Saved, 64> all;
  SavedBuilder x{c, 1, rows, rows, c.hidden_size, e, all};
  x.norm(rows, width, Spread::replicated);
  List<Saved, 4> out;
  for (const Saved& saved : all) out.push_back(saved);
  return out;
}

// Flattened, as layer_anatomy.cpp's build(): the solver's memory figure makes one per kind of visit.
[[gnu::flatten]] List<Saved, 64> saved_activations(const ModelConfig& c, bool moe, Recompute recompute,
                                                   const MicroBatch& mb) {
  List<Saved, 64> out;
  SavedBuilder x{c, mb.b, mb.s, mul(mb.b, mb.s, "tokens"), c.hidden_size, mb.e, out};
  if (recompute == Recompute::full) {  // torch.utils.checkpoint keeps the visit's input alone
    x.group = Group::layer_input;
    x.save("layer_input", mul(x.n, x.h, "activation elements"), x.e, Spread::replicated);
    return out;
  }
  // Its two norms over the residual stream, attention, then the FFN or MoE.
  x.group = Group::attention_norm;
  x.norm(x.n, x.h, Spread::replicated);
  x.group = Group::attention;
  if (c.attention.type == AttentionType::mla)
    x.attention_mla(recompute);
  else
    x.attention_gqa(recompute);
  x.group = Group::ffn_norm;
  x.norm(x.n, x.h, Spread::replicated);
  if (moe) {
    x.group = Group::moe;
    x.moe();
  } else {
    x.group = Group::ffn;
    x.dense_ffn();
  }
  return out;
}

}  // namespace smelt::anatomy
