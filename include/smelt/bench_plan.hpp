// The plan of one benchmark run: the blocks it executes, in order, and their
// analytic cost. Every backend runs the same plan (bench_backend.hpp).
#pragma once

#include <cstdint>
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

}  // namespace smelt
