// Sparsity S as the SMELT paper defines it (Section 3.1, Eq. 1), the S of its
// scaling law L(F, S, D) (docs/counting.md, "Sparsity"):
//   S = 1 - N_act^eq / N,   N_act^eq = (F / F0) N0,
// with F and N the model's forward non-embedding FLOPs per token and
// non-embedding parameters (the budgets the solver matches), and (F0, N0) those
// of a reference that activates everything it stores. The reference is either
// the model itself with every routed expert active (N0 = N, so S = 1 - F / F0;
// a dense model has S = 0) or another config (a dense control, say).
#pragma once

#include <cstdint>
#include <string>

#include "smelt/config.hpp"
#include "smelt/count.hpp"

namespace smelt {

struct Sparsity {
  double value = 0;            // S; below 0 when the model activates more per stored parameter than the reference
  double flops = 0;            // F
  std::int64_t params = 0;     // N
  double reference_flops = 0;  // F0
  std::int64_t reference_params = 0;  // N0
  // "" when the reference is the model with every expert active, else the
  // reference config's name.
  std::string reference;
};

// The config with every routed expert active (moe.top_k = moe.num_experts);
// a config without routed experts unchanged.
ModelConfig every_expert_active(const ModelConfig& config);

// S against the model with every expert active, counted with `options`.
Sparsity sparsity(const ModelConfig& config, const CostReport& cost, const CountOptions& options = {});
// S against a counted reference (count both at one context).
Sparsity sparsity(const CostReport& cost, const CostReport& reference);

}  // namespace smelt
