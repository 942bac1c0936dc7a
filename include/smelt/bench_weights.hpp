// The random weights and inputs of a benchmark run, which every backend builds
// the same way from a seed, so that their outputs can be compared.
#pragma once

#include <cstdint>
#include <vector>

#include "smelt/bench_plan.hpp"

namespace smelt {

// Random weights of one layer, row-major float32, drawn uniformly from
// [-1/sqrt(fan_in), 1/sqrt(fan_in)] by a generator seeded from (seed, layer),
// so every backend builds identical weights. Shapes, with H hidden, q = heads x
// head_dim, kv = kv_heads x head_dim, F the FFN width:
struct LayerWeights {
  std::vector<float> wq, wk, wv;  // [H x q], [H x kv], [H x kv] (empty when moe_only)
  std::vector<float> wo;          // [q x H]
  std::vector<float> router;      // [H x E] (MoE layers)
  // One entry per routed expert, then one per shared expert; a dense layer
  // has a single FFN in `dense`. gate/up are [H x F] (gate empty for plain
  // FFNs), down is [F x H].
  struct Ffn {
    std::vector<float> gate, up, down;
  };
  std::vector<Ffn> experts;
  std::vector<Ffn> shared;
  std::vector<float> shared_gate;  // [H] when the config has a shared-expert gate
  Ffn dense;
};
LayerWeights make_layer_weights(const LayerPlan& plan, std::int64_t layer, std::uint64_t seed);
// The input activations [tokens x H], uniform in [-1, 1].
std::vector<float> make_input(const LayerPlan& plan, std::uint64_t seed);

}  // namespace smelt
