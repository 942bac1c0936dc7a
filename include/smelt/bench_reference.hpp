// The block every benchmark backend computes, and its CPU reference, against
// which every backend's output is checked (docs/bench.md).
#pragma once

#include <cstdint>
#include <vector>

#include "smelt/bench_plan.hpp"
#include "smelt/bench_weights.hpp"

namespace smelt {

// The block every backend computes (docs/bench.md), with no norms, so that the
// FLOPs executed are exactly the counting contract's:
//   attention: Q = xWq, K = xWk, V = xWv; per head (query head h reads KV head
//   h / (heads / kv_heads)) softmax(Q K^T / sqrt(head_dim)) over the causal
//   (sliding, chunked) keys of its own sequence, times V; a = (heads) Wo;
//   x <- x + s a, with s the loop's residual scale on looped layers, else 1.
//   FFN / MoE: router logits xWr, softmax (or sigmoid) scores, top-k (lower
//   index wins ties; balanced mode assigns token t the experts (t k + j) mod E),
//   weights = chosen scores / their sum; each expert y = (silu(xWg) * xWu) Wd
//   (plain FFNs: gelu_tanh(xWu) Wd); shared experts add their output, times
//   sigmoid(x . g) with a shared gate; x <- x + s (sum).
// The reference runs it in float32 (or float64) on the CPU and accounts 2 m n k
// FLOPs for every product it performs, with the routed token counts.

// The experts each MoE visit chose, [visit][token x top_k + j] over the MoE
// visits in order. A check in another precision replays the choices of the
// run it checks, so that a near tie rounded the other way (one token sent to
// a different expert) does not read as a numerical error.
struct Routing {
  std::vector<std::vector<std::int64_t>> experts;
};
struct ReferenceRun {
  std::vector<double> output;               // [tokens x H]
  double accounted_flops = 0;               // every product
  double accounted_gemm_flops = 0;          // weight products only
  std::vector<std::int64_t> expert_tokens;  // tokens per expert, first MoE visit
  Routing routing;                          // the choices made (or replayed)
};

// The arithmetic the reference computes in: float32 (what backends are timed
// in) or float64 (the check of a float32 run).
enum class Precision { float32, float64 };

struct ReferenceOptions {
  bool balanced = false;  // route round-robin, as BenchOptions::balanced
  Precision precision = Precision::float32;
};

ReferenceRun reference_forward(const LayerPlan& plan, const std::vector<float>& input, std::uint64_t seed,
                               const ReferenceOptions& options = {});
// The same with the weights already built (weights[layer] for every 0-based
// layer, from make_layer_weights), so timed runs exclude drawing them; with
// `replay`, the MoE visits use its expert choices instead of routing (the
// mixing weights are still the renormalised scores of this run).
ReferenceRun reference_forward(const LayerPlan& plan, const std::vector<float>& input,
                               const std::vector<LayerWeights>& weights, const ReferenceOptions& options = {},
                               const Routing* replay = nullptr);

}  // namespace smelt
