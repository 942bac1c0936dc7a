// What a benchmark backend sees: the plan of blocks to run, the random weights
// and inputs every backend builds the same way from a seed, and the interface
// a backend implements. The CPU reference backend is part of the library; the
// CUDA backend lives in smelt::kernels and is registered by the program that
// links it, so the library never sees a CUDA header.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "smelt/bench.hpp"
#include "smelt/config.hpp"

namespace smelt {

// The blocks one benchmark run executes, in order, and their analytic cost.
struct LayerPlan {
  ModelConfig config;                // validated; MLA is refused
  std::int64_t tokens = 0;           // rows of the activation matrix
  std::int64_t context = 0;          // causal attention runs within each sequence of this length
  std::int64_t sequences = 0;        // tokens / context
  bool moe_only = false;             // blocks are the FFN/MoE sublayer alone
  std::vector<std::int64_t> visits;  // 0-based layer of each executed block (loops repeat layers)
  double analytic_flops = 0;         // count(): per-token terms x tokens + exact causal score sums
  double analytic_gemm_flops = 0;    // the weight-matrix terms alone (no scores, no values)
  // Host bytes of activations the CPU reference holds at its peak: a float64
  // run's working set beside the previous run's output and expert choices and
  // the float32 input (an upper bound from the shapes; docs/bench.md).
  std::int64_t activation_bytes = 0;
};

// Checks the options against the config and builds the plan; config_error
// names the option and the rule.
LayerPlan make_layer_plan(const ModelConfig& config, const BenchOptions& options);

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
ReferenceRun reference_forward(const LayerPlan& plan, const std::vector<float>& input, std::uint64_t seed,
                               bool balanced, bool float64);
// The same with the weights already built (weights[layer] for every 0-based
// layer, from make_layer_weights), so timed runs exclude drawing them; with
// `replay`, the MoE visits use its expert choices instead of routing (the
// mixing weights are still the renormalised scores of this run).
ReferenceRun reference_forward(const LayerPlan& plan, const std::vector<float>& input,
                               const std::vector<LayerWeights>& weights, bool balanced, bool float64,
                               const Routing* replay = nullptr);

class BenchBackend {
 public:
  virtual ~BenchBackend() = default;
  virtual std::string name() const = 0;
  // Why this backend cannot run here, or nullopt when it can.
  virtual std::optional<std::string> unavailable() const = 0;
  virtual BenchResult run(const LayerPlan& plan, const BenchOptions& options) = 0;
};

// The Eigen reference backend ("cpu"): float32 runs timed with a steady
// clock (median), checked against one float64 run.
std::shared_ptr<BenchBackend> make_cpu_backend();

// Makes a backend available to run_bench (the CUDA backend registers itself
// through smelt::kernels::register_cuda_backend()).
// A backend registered under the name of one already there replaces it.
void register_bench_backend(std::shared_ptr<BenchBackend> backend);

}  // namespace smelt
