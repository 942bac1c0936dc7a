// The smelt convention: the bytes of the unique storages the reference
// PyTorch model (python/smelt/torch) saves for its backward pass, op by op,
// as torch.autograd.graph.saved_tensors_hooks sees them (docs/memory.md,
// "Activations, op by op"). A layer visit's saved tensors are its anatomy's
// (src/anatomy/saved_activations.cpp); this file divides them as the layout
// shards them and adds what lies outside the layers. Symbols: b sequences of
// s tokens, N = b s tokens, h hidden, e the activation dtype's bytes.
#include "memory/activations.hpp"

#include "util/checked.hpp"

namespace smelt::memory_detail {
namespace {

using detail::mul;

constexpr std::int64_t kIndexBytes = 8;  // int64 token ids and targets

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

// A visit of a MoE (`moe`) or dense layer: its saved tensors, each term one group (attention_norm, attention,
// ffn_norm, then moe or ffn; layer_input alone under full recompute).
MemoryPart visit_part(const Ctx& x, bool moe, Recompute recompute) {
  MemoryPart out;
  for (const anatomy::Saved& saved : anatomy::saved_activations(x.c, moe, recompute, {x.b, x.s, x.e}))
    out.add(anatomy::name(saved.group), x.shard().of(saved));
  return out;
}

// A norm over the residual stream outside the layers: its bytes, and those of its input alone where it keeps the
// input itself (LayerNorm, or RMSNorm in float32), which the norm before it may keep already.
struct NormBytes {
  std::int64_t total = 0, input = 0;
};
NormBytes residual_norm(const Ctx& x) {
  NormBytes out;
  for (const anatomy::Saved& saved : anatomy::saved_norm(x.c, x.n, x.h, x.e)) {
    const std::int64_t bytes = x.shard().of(saved);
    out.total = detail::add(out.total, bytes, "memory bytes");
    if (std::string_view(saved.name) == "norm_input" && (x.c.norm == NormType::layernorm || x.e == 4))
      out.input = bytes;
  }
  return out;
}

// The head and the loss on `rows` positions: the final norm, the head's input,
// log-softmax over the vocabulary, the targets (int64) and the loss's weight total.
void add_head_and_loss(MemoryPart& p, const Ctx& x) {
  const Shard& sh = x.shard();
  p.add("final_norm", residual_norm(x).total);
  p.add("head_input", sh.replicated(mul(x.n, x.h, "activation elements"), x.e));
  p.add("log_probabilities", sh.sharded(mul(x.n, x.c.vocab_size, "activation elements"), x.e));
  // The targets are the tokens shifted by one: a copy of b > 1 rows of s > 1 of them, else a view of the tokens.
  if (x.b > 1 && x.s > 1) p.add("targets", sh.replicated(x.n, kIndexBytes));
  p.add("loss_weight", x.e);
}

}  // namespace

MemoryPart smelt_visit(const ActivationInput& in, std::int64_t layer, Recompute recompute) {
  return visit_part(Ctx(in), in.config.is_moe_layer(layer), recompute);
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
    // The hidden norm's input is h^(k-1), which the final norm (or the previous module's) keeps already; a
    // 16-bit RMSNorm keeps a float32 copy of its own.
    MemoryPart mtp;
    const NormBytes norm = residual_norm(x);
    mtp.add("norms", 2 * norm.total - norm.input);
    mtp.add("projection_input",
            x.shard().replicated(mul(mul(x.n, x.h, "activation elements"), 2, "activation elements"), x.e));
    mtp.add("layer", visit_part(x, x.c.is_moe_layer(x.c.num_layers - 1), Recompute::none).total);
    add_head_and_loss(mtp, x);
    p.add("mtp", mtp.total);
  }
  return p;
}

}  // namespace smelt::memory_detail
