// `bench step CONFIG`: a whole training step of a config (forward, backward,
// AdamW update) measured on a backend at the config's true widths, beside the
// time model's prediction for the same step (docs/time.md, "The measured
// step"). The CPU backend runs it now (float32, one core, OpenBLAS).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "smelt/bench.hpp"
#include "smelt/config.hpp"
#include "smelt/hardware.hpp"

namespace smelt {

// Seconds per token of one step, under the keys `count --time` uses.
struct StepSeconds {
  double forward_seconds_per_token = 0;
  double training_seconds_per_token = 0;
  double decode_seconds_per_token = 0;  // one new token for each of the `sequences`, each holding `context` tokens
};

struct StepResult {
  std::string model;
  std::string backend;  // "cpu"
  std::string device;
  std::string blas;  // the products' library and kernels
  std::int64_t tokens = 0;
  std::int64_t context = 0;
  std::int64_t sequences = 0;  // tokens / context: the step's micro-batch
  std::int64_t layer_visits = 0;
  std::int64_t parameters = 0;  // every trained parameter (embedding, head, norms included)
  StepSeconds measured;         // medians of the timed runs
  double forward_seconds = 0;   // median of one forward (what the backward needs kept)
  double training_seconds = 0;  // median of one forward + backward + optimizer update
  double decode_seconds = 0;    // median of one decode step
  // The time model's figures for the same steps (micro-batch `sequences` of `context` tokens, decode batch
  // `sequences` at context `context`, float32 throughout, no parallelism) on `hardware`; absent without one.
  std::optional<StepSeconds> predicted;
  std::string hardware;
  // FLOPs of one step. analytic: count()'s convention, 3 x the forward (the
  // layers at the exact causal sums, and the LM head); accounted: as executed,
  // where the attention's backward recomputes its scores (2.5 x its forward).
  double analytic_training_flops = 0;
  double accounted_forward_flops = 0;
  double accounted_training_flops = 0;
  double training_tflops = 0;               // accounted / measured training seconds / 1e12
  double first_loss = 0;                    // cross-entropy of the first step: about ln(vocab) at these random weights
  double last_loss = 0;                     // of the last timed step
  std::vector<std::int64_t> expert_tokens;  // tokens per expert of the first MoE visit
  double load_imbalance = 0;                // max / mean of expert_tokens
};

// Checks the options (config_error naming each: MLA, multi-token prediction,
// BenchOptions::moe_only, a backend other than the CPU, the CPU's time and
// memory bounds without BenchOptions::force) and runs BenchOptions::warmup
// untimed and BenchOptions::repetitions timed steps, each a forward alone and a
// whole step. With `hardware`, the prediction too.
StepResult run_step(const ModelConfig& config, const BenchOptions& options, const HardwareSpec* hardware = nullptr);

// JSON kind "bench_step" (docs/json-schema.md): one result, or several with the
// measured and predicted training-time ratios of each to the first.
std::string bench_step_report_json(const std::vector<StepResult>& results);

}  // namespace smelt
