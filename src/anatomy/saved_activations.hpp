// What one visit of a layer keeps for its backward pass, tensor by tensor, as
// the reference PyTorch model (python/smelt/torch) saves it and
// torch.autograd.graph.saved_tensors_hooks sees it (docs/memory.md,
// "Activations, op by op"): each saved tensor's elements for one micro-batch,
// its bytes per element and how a layout divides it. The memory model folds
// the list into its terms (src/memory/activations_smelt.cpp); the solver's
// memory figure sums it (src/solve/memory_eval.cpp).
#pragma once

#include <cstdint>

#include "anatomy/layer_anatomy.hpp"
#include "smelt/config.hpp"
#include "smelt/memory.hpp"

namespace smelt::anatomy {

// How a layout divides a saved tensor of one micro-batch (memory_detail::Shard's methods): a per-token value
// every tensor-parallel rank holds whole (over cp, and over tp under sequence parallelism); one split by head or
// FFN width over tp (and over cp by token); a routed expert's (over cp by token, over etp by width); one by
// position alone (over cp).
enum class Spread { replicated, sharded, expert, positional };

// The memory report's term a saved tensor is counted in: the whole visit's input under full recompute, or one
// of its sublayers.
enum class Group { layer_input, attention_norm, attention, ffn_norm, ffn, moe };
const char* name(Group group);

struct Saved {
  Group group = Group::attention;
  const char* name = "";
  std::int64_t elements = 0;  // for the whole micro-batch
  std::int64_t bytes = 0;     // per element
  Spread spread = Spread::replicated;
  std::int64_t count = 1;  // identical tensors, each divided on its own (one per shared expert)
};

// The micro-batch: b sequences of s tokens, e bytes per activation element.
struct MicroBatch {
  std::int64_t b = 1, s = 1, e = 4;
};

// A norm over `rows` rows of `width` outside the layers (the final norm, an MTP module's), its tensors in group
// `layer_input`'s place: RMSNorm's or LayerNorm's as a layer's own norms keep them.
List<Saved, 4> saved_norm(const ModelConfig& c, std::int64_t rows, std::int64_t width, std::int64_t e);

// One visit of a MoE (`moe`) or dense layer of `c` under `recompute`, in the order the reference model saves.
List<Saved, 64> saved_activations(const ModelConfig& c, bool moe, Recompute recompute, const MicroBatch& mb);

}  // namespace smelt::anatomy
