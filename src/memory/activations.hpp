// The activations one micro-batch leaves for the backward pass, per layer
// visit and outside the layers, under each convention, divided as the layout
// shards them (docs/memory.md, "Activations").
#pragma once

#include <cstdint>

#include "anatomy/saved_activations.hpp"
#include "memory/resolved_layout.hpp"
#include "smelt/config.hpp"
#include "smelt/memory.hpp"

namespace smelt::memory_detail {

// How the layout divides a term of one micro-batch: its tokens over cp (and
// over tp under sequence parallelism), heads and FFN widths over tp, expert
// widths over etp. Each method takes the term's elements for the whole
// micro-batch and its bytes per element, and returns the bytes one rank keeps.
struct Shard {
  std::int64_t tp = 1, cp = 1, etp = 1;
  bool sp = false;

  // Per-token values every tensor-parallel rank holds whole (norm inputs,
  // residuals, the router's scores): divided by cp, and by tp under sequence parallelism.
  std::int64_t replicated(std::int64_t elements, std::int64_t bytes) const;
  // Split over tp by head or by FFN width, and over cp by token.
  std::int64_t sharded(std::int64_t elements, std::int64_t bytes) const;
  // A routed expert's values: over cp by token, over etp by width.
  std::int64_t expert(std::int64_t elements, std::int64_t bytes) const;
  // By position alone (RoPE's angles, the mask's query rows): over cp.
  std::int64_t positional(std::int64_t elements, std::int64_t bytes) const;
  // A saved tensor of a layer's anatomy, divided as its spread says, times its count.
  std::int64_t of(const anatomy::Saved& saved) const;
};

struct ActivationInput {
  const ModelConfig& config;
  const ResolvedLayout& r;
  Shard shard;
};

// One visit of 0-based `layer`: terms "attention_norm", "attention", "ffn_norm", "ffn" (dense) or "moe".
MemoryPart smelt_visit(const ActivationInput& in, std::int64_t layer, Recompute recompute);
// Outside the layers: the embedding's token ids (first stage); the final norm,
// the head's input, the loss and the MTP modules (last stage).
MemoryPart smelt_outside(const ActivationInput& in, bool first, bool last);

// The backward pass's peak beyond the stage's held bytes (smelt convention, one rank): the stage's activations
// already filled in; `last` the run of its last visit.
MemoryPart smelt_transient(const ActivationInput& in, const StageMemory& stage, const VisitRun& last);
// Elements of the gradients a looped last layer holds in the backward until its earlier visit adds its own (its FFN
// or MoE, FFN norm and output projection): 0 where that layer's last visit, `last_visit`, is its first.
std::int64_t pending_gradient_elements(const ModelConfig& c, bool moe, std::int64_t last_visit);

MemoryPart korthikanti_visit(const ActivationInput& in, std::int64_t layer, Recompute recompute);
MemoryPart korthikanti_outside(const ActivationInput& in, bool first, bool last);

}  // namespace smelt::memory_detail
