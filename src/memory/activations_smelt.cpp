// The smelt convention: the bytes of the unique storages the reference
// PyTorch model (python/smelt/torch) saves for its backward pass, op by op,
// as torch.autograd.graph.saved_tensors_hooks sees them (docs/memory.md,
// "Activations, op by op"). Symbols: b sequences of s tokens, N = b s tokens,
// h hidden, e the activation dtype's bytes; parameters are weights, never
// counted here.
#include "memory/activations.hpp"

#include "util/checked.hpp"

namespace smelt::memory_detail {
namespace {

using detail::add;
using detail::mul;

constexpr std::int64_t kIndexBytes = 8;  // int64 token ids, expert choices, sort orders
constexpr std::int64_t kStatBytes = 4;   // float32 norm statistics and upcast inputs

std::int64_t mul3(std::int64_t a, std::int64_t b, std::int64_t c) {
  return mul(mul(a, b, "activation elements"), c, "activation elements");
}

struct Ctx {
  const ActivationInput& in;
  const ModelConfig& c;
  std::int64_t b, s, n, h, e;
  explicit Ctx(const ActivationInput& i)
      : in(i),
        c(i.config),
        b(i.r.layout.micro_batch),
        s(i.r.layout.seq),
        n(mul(i.r.layout.micro_batch, i.r.layout.seq, "tokens")),
        h(i.config.hidden_size),
        e(i.r.activation_bytes) {}
  const Shard& shard() const { return in.shard; }
};

// A norm over `rows` rows of `width`: RMSNorm keeps its input, 1/rms per row and
// (with float32 activations) the normalized values the weight multiplies; in
// 16 bits it normalises a float32 copy of its input and keeps the 16-bit
// normalized values instead. LayerNorm keeps its input and its mean and 1/std
// per row, in the activations' dtype (as PyTorch's CPU kernel does). `split` divides each term as the layout shards the
// rows.
template <class Split>
void add_norm(MemoryPart& p, const Ctx& x, std::int64_t rows, std::int64_t width, Split split) {
  const std::int64_t elements = mul(rows, width, "activation elements");
  if (x.c.norm == NormType::layernorm) {
    p.add("norm_input", split(elements, x.e));
    p.add("norm_statistics", split(mul(rows, 2, "activation elements"), x.e));
  } else if (x.e == 4) {
    p.add("norm_input", split(elements, x.e));
    p.add("norm_statistics", split(rows, x.e));
    p.add("normalized", split(elements, x.e));
  } else {
    p.add("norm_input", split(elements, kStatBytes));
    p.add("norm_statistics", split(rows, kStatBytes));
    p.add("normalized", split(elements, x.e));
  }
}

// One FFN of `width` on `rows` rows: SwiGLU keeps the gate and up products,
// the SiLU output and their product; a plain FFN the up product and the GELU output.
template <class Split>
void add_ffn(MemoryPart& p, const char* name, const Ctx& x, std::int64_t rows, std::int64_t width, Split split) {
  const std::int64_t tensors = x.c.ffn.type == FfnType::gated ? 4 : 2;
  p.add(name, split(mul3(rows, width, tensors), x.e));
}

MemoryPart attention_gqa(const Ctx& x, LayerAttention kind, Recompute recompute) {
  const auto& a = x.c.attention;
  const Shard& sh = x.shard();
  const auto sharded = [&](std::int64_t el, std::int64_t by) { return sh.sharded(el, by); };
  MemoryPart p;
  (void)kind;
  p.add("input", sh.replicated(mul(x.n, x.h, "activation elements"), x.e));  // the norm's output, read by Q, K, V
  const std::int64_t q = mul(a.num_heads, a.head_dim, "activation elements");
  const std::int64_t kv = mul(a.num_kv_heads, a.head_dim, "activation elements");
  if (a.qk_norm == QkNorm::full) {
    add_norm(p, x, x.n, q, sharded);
    add_norm(p, x, x.n, kv, sharded);
  } else if (a.qk_norm == QkNorm::per_head) {
    add_norm(p, x, mul(x.n, a.num_heads, "activation elements"), a.head_dim, sharded);
    add_norm(p, x, mul(x.n, a.num_kv_heads, "activation elements"), a.head_dim, sharded);
  }
  // RoPE's cos and sin of the s positions x head_dim / 2, once for the queries and once for the keys.
  if (a.head_dim / 2 > 0) p.add("rope", sh.positional(mul3(4, x.s, a.head_dim / 2), x.e));
  const std::int64_t heads_tokens = mul(x.n, q, "activation elements");  // b x heads x s x head_dim
  p.add("query", sh.sharded(heads_tokens, x.e));
  p.add("keys_repeated", sh.sharded(heads_tokens, x.e));  // K repeated to every query head
  p.add("values_repeated", sh.sharded(heads_tokens, x.e));
  if (recompute != Recompute::selective) {
    p.add("mask", sh.positional(mul(x.s, x.s, "activation elements"), 1));
    const std::int64_t keys = a.sinks ? x.s + 1 : x.s;  // the sink logit joins each row of the softmax
    p.add("probabilities", sh.sharded(mul3(mul(x.b, a.num_heads, "activation elements"), x.s, keys), x.e));
  }
  p.add("output", sh.sharded(heads_tokens, x.e));  // the heads' concatenation, read by the output projection
  return p;
}

MemoryPart attention_mla(const Ctx& x, Recompute recompute) {
  const auto& a = x.c.attention;
  const auto& m = a.mla;
  const Shard& sh = x.shard();
  const auto replicated = [&](std::int64_t el, std::int64_t by) { return sh.replicated(el, by); };
  MemoryPart p;
  p.add("input", sh.replicated(mul(x.n, x.h, "activation elements"), x.e));
  const std::int64_t qk_dim = m.qk_nope_head_dim + m.qk_rope_head_dim;
  if (m.q_lora_rank > 0) {
    add_norm(p, x, x.n, m.q_lora_rank, replicated);  // the query latent, normed
    p.add("query_latent", sh.replicated(mul(x.n, m.q_lora_rank, "activation elements"), x.e));
  }
  // The key-value latent, normed: it is the first r_kv of the r_kv + d_rope columns kv_a_proj writes, so a
  // float32 RMSNorm (and a LayerNorm) keeps that whole output, a 16-bit RMSNorm a float32 copy of the latent.
  MemoryPart latent_norm;
  add_norm(latent_norm, x, x.n, m.kv_lora_rank, replicated);
  const std::int64_t kv_a = mul(x.n, m.kv_lora_rank + m.qk_rope_head_dim, "activation elements");
  if (x.c.norm == NormType::layernorm || x.e == 4) {
    const std::int64_t whole = sh.replicated(kv_a, x.e);
    for (MemoryTerm& t : latent_norm.terms)
      if (t.name == "norm_input") {
        latent_norm.total += whole - t.bytes;
        t.bytes = whole;
      }
  }
  for (const MemoryTerm& t : latent_norm.terms) p.add(t.name, t.bytes);
  p.add("kv_latent", sh.replicated(mul(x.n, m.kv_lora_rank, "activation elements"), x.e));
  if (m.qk_rope_head_dim / 2 > 0) p.add("rope", sh.positional(mul3(4, x.s, m.qk_rope_head_dim / 2), x.e));
  const std::int64_t heads = mul(x.n, a.num_heads, "activation elements");
  p.add("query", sh.sharded(mul(heads, qk_dim, "activation elements"), x.e));
  p.add("keys", sh.sharded(mul(heads, qk_dim, "activation elements"), x.e));
  // The values are a view of kv_b_proj's output: the attention product keeps them alone, or (one sequence, or
  // one token) the whole output they are a view of; so does a checkpointed attention core (selective), whose
  // kept input is that view.
  const std::int64_t value_width =
      x.b > 1 && x.s > 1 && recompute != Recompute::selective ? m.v_head_dim : m.qk_nope_head_dim + m.v_head_dim;
  p.add("values", sh.sharded(mul(heads, value_width, "activation elements"), x.e));
  if (recompute != Recompute::selective) {
    p.add("mask", sh.positional(mul(x.s, x.s, "activation elements"), 1));
    const std::int64_t keys = a.sinks ? x.s + 1 : x.s;
    p.add("probabilities", sh.sharded(mul3(mul(x.b, a.num_heads, "activation elements"), x.s, keys), x.e));
  }
  p.add("output", sh.sharded(mul(heads, m.v_head_dim, "activation elements"), x.e));
  return p;
}

MemoryPart moe(const Ctx& x) {
  const auto& m = x.c.moe;
  const Shard& sh = x.shard();
  const auto sharded = [&](std::int64_t el, std::int64_t by) { return sh.sharded(el, by); };
  const auto expert = [&](std::int64_t el, std::int64_t by) { return sh.expert(el, by); };
  MemoryPart p;
  p.add("input", sh.replicated(mul(x.n, x.h, "activation elements"), x.e));  // read by router, experts' gather, shared
  const std::int64_t slots = mul(x.n, m.top_k, "activation elements");       // (token, chosen expert) pairs
  const bool llama4 = m.router_score == RouterScore::sigmoid && !m.router_bias;
  // The router: its scores over every expert (softmax, or sigmoid in DeepSeek's form), the chosen experts, and
  // the weights with their sum when renormalised; Llama 4's form keeps only the sigmoid of the chosen logits.
  if (llama4) {
    p.add("router_weights", sh.replicated(slots, x.e));
  } else {
    p.add("router_scores", sh.replicated(mul(x.n, m.num_experts, "activation elements"), x.e));
    p.add("router_weights", sh.replicated(add(slots, x.n, "activation elements"), x.e));
  }
  p.add("router_choices", sh.replicated(slots, kIndexBytes));
  // Dispatch: the sort order and each slot's token (int64), the gathered tokens, each slot's weight.
  p.add("dispatch_indices", sh.replicated(mul(slots, 2, "activation elements"), kIndexBytes));
  p.add("dispatched_tokens", sh.expert(mul(slots, x.h, "activation elements"), x.e));
  p.add("slot_weights", sh.replicated(slots, x.e));
  add_ffn(p, "expert_intermediate", x, slots, m.expert_width, expert);
  // The experts' outputs, concatenated, and weighted (index_add keeps its source); Llama 4 weighs the inputs
  // instead: the weighted tokens, then the concatenated outputs.
  p.add(llama4 ? "weighted_tokens" : "expert_outputs", sh.expert(mul(slots, x.h, "activation elements"), x.e));
  p.add(llama4 ? "expert_outputs" : "weighted_outputs", sh.expert(mul(slots, x.h, "activation elements"), x.e));
  for (std::int64_t i = 0; i < m.num_shared_experts; ++i)
    add_ffn(p, "shared_intermediate", x, x.n, m.shared_width, sharded);
  if (m.shared_gate) {
    p.add("shared_gate", sh.replicated(x.n, x.e));
    p.add("shared_output", sh.replicated(mul(x.n, x.h, "activation elements"), x.e));
  }
  return p;
}

MemoryPart dense_ffn(const Ctx& x) {
  const Shard& sh = x.shard();
  MemoryPart p;
  p.add("input", sh.replicated(mul(x.n, x.h, "activation elements"), x.e));
  add_ffn(p, "intermediate", x, x.n, x.c.ffn.dense_width,
          [&](std::int64_t el, std::int64_t by) { return sh.sharded(el, by); });
  return p;
}

// `part`'s terms folded into one term named `name` of `into`.
void fold(MemoryPart& into, const char* name, const MemoryPart& part) { into.add(name, part.total); }

// The layer visit: its two norms over the residual stream, attention, then the FFN or MoE.
MemoryPart visit_parts(const Ctx& x, std::int64_t layer, Recompute recompute) {
  const Shard& sh = x.shard();
  const auto replicated = [&](std::int64_t el, std::int64_t by) { return sh.replicated(el, by); };
  MemoryPart out;
  if (recompute == Recompute::full) {  // torch.utils.checkpoint keeps the visit's input alone
    out.add("layer_input", sh.replicated(mul(x.n, x.h, "activation elements"), x.e));
    return out;
  }
  MemoryPart norm;
  add_norm(norm, x, x.n, x.h, replicated);
  fold(out, "attention_norm", norm);
  fold(out, "attention",
       x.c.attention.type == AttentionType::mla ? attention_mla(x, recompute)
                                                : attention_gqa(x, x.c.attention_at(layer), recompute));
  fold(out, "ffn_norm", norm);
  fold(out, x.c.is_moe_layer(layer) ? "moe" : "ffn", x.c.is_moe_layer(layer) ? moe(x) : dense_ffn(x));
  return out;
}

// The head and the loss on `rows` positions: the final norm, the head's input,
// log-softmax over the vocabulary, the targets (int64) and the loss's weight total.
void add_head_and_loss(MemoryPart& p, const Ctx& x) {
  const Shard& sh = x.shard();
  const auto replicated = [&](std::int64_t el, std::int64_t by) { return sh.replicated(el, by); };
  MemoryPart norm;
  add_norm(norm, x, x.n, x.h, replicated);
  p.add("final_norm", norm.total);
  p.add("head_input", sh.replicated(mul(x.n, x.h, "activation elements"), x.e));
  p.add("log_probabilities", sh.sharded(mul(x.n, x.c.vocab_size, "activation elements"), x.e));
  // The targets are the tokens shifted by one: a copy of b > 1 rows of s > 1 of them, else a view of the tokens.
  if (x.b > 1 && x.s > 1) p.add("targets", sh.replicated(x.n, kIndexBytes));
  p.add("loss_weight", x.e);
}

}  // namespace

MemoryPart smelt_visit(const ActivationInput& in, std::int64_t layer, Recompute recompute) {
  return visit_parts(Ctx(in), layer, recompute);
}

MemoryPart smelt_outside(const ActivationInput& in, bool first, bool last) {
  const Ctx x(in);
  MemoryPart p;
  // The embedding keeps the token ids' whole storage: b x (s + mtp_modules + 1) int64, of which it reads s.
  if (first) p.add("token_ids", x.shard().positional(mul(x.b, x.s + x.c.mtp_modules + 1, "tokens"), kIndexBytes));
  if (!last) return p;
  add_head_and_loss(p, x);
  for (std::int64_t k = 0; k < x.c.mtp_modules; ++k) {
    // Each MTP module: its two input norms (the first reads h^0, which the final norm keeps already), the
    // embedding's output, the projection's 2h input, one full-attention layer, then a head and a loss of its own.
    MemoryPart mtp;
    const Shard& sh = x.shard();
    const auto replicated = [&](std::int64_t el, std::int64_t by) { return sh.replicated(el, by); };
    MemoryPart norm;
    add_norm(norm, x, x.n, x.h, replicated);
    // The hidden norm's input is h^(k-1), which the final norm (or the previous module's) keeps already; a
    // 16-bit RMSNorm keeps a float32 copy of its own.
    std::int64_t shared_input = 0;
    if (x.c.norm == NormType::layernorm || x.e == 4)
      for (const MemoryTerm& t : norm.terms)
        if (t.name == "norm_input") shared_input = t.bytes;
    mtp.add("norms", 2 * norm.total - shared_input);
    mtp.add("projection_input", sh.replicated(mul3(x.n, x.h, 2), x.e));
    const MemoryPart layer = visit_parts(x, x.c.num_layers - 1, Recompute::none);
    mtp.add("layer", layer.total);
    add_head_and_loss(mtp, x);
    p.add("mtp", mtp.total);
  }
  return p;
}

}  // namespace smelt::memory_detail
