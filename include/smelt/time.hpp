// step_time(): a roofline of one training step and one decode step of a
// (looped) config under a parallel layout on a device (docs/time.md). Every op
// of the step with its shape, FLOPs and bytes, from the same shapes count()
// counts (the forward GEMMs and attention of a step sum to count()'s FLOPs
// exactly); each op's time the larger of its compute and memory time plus a
// fixed overhead; collectives by an alpha-beta model on the layout's links.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "smelt/checked_config.hpp"
#include "smelt/hardware.hpp"
#include "smelt/memory.hpp"
#include "smelt/option_fields.hpp"

namespace smelt {

struct TimeOptions {
  double imbalance = 1;             // routed tokens of the most loaded expert over the mean (at least 1)
  std::int64_t decode_batch = 0;    // sequences decoded together; 0: the layout's batch
  std::int64_t decode_context = 0;  // tokens each holds in its cache; 0: the layout's context
  friend bool operator==(const TimeOptions&, const TimeOptions&) = default;
};

template <>
struct OptionTable<TimeOptions> {
  static constexpr std::string_view owner = "TimeOptions";
  using Field = OptionField<TimeOptions, std::int64_t, double>;
  static constexpr auto fields = std::to_array<Field>({
      {"imbalance", OptionKind::number, &TimeOptions::imbalance, 1, 1e6,
       "Routed tokens of the most loaded expert over the mean (1: balanced routing)"},
      {"decode_batch", OptionKind::integer, &TimeOptions::decode_batch, 0, 1 << 24,
       "Sequences decoded together (default: the layout's batch)"},
      {"decode_context", OptionKind::integer, &TimeOptions::decode_context, 0, 1 << 30,
       "Tokens each decoded sequence holds in its cache (default: the layout's context)"},
  });
};

enum class OpKind { gemm, grouped_gemm, attention, elementwise, collective, bubble };
std::string_view to_string(OpKind v);

// What sets an op's time: its FLOPs, its bytes, its link, or its fixed cost.
enum class Bound { compute, memory, communication, overhead };
std::string_view to_string(Bound v);

// One op of one GPU's step. GEMMs multiply (m x k) by (k x n); a grouped GEMM
// is `groups` of them (the experts one GPU holds, m the most loaded's tokens).
struct Op {
  std::string_view name;  // the counted term it belongs to ("attention_qkv", "experts", "tp_all_reduce", ...)
  OpKind kind = OpKind::gemm;
  std::int64_t layer = 0;  // 1-based stored layer; 0 outside the layers
  std::int64_t visit = 0;  // 1-based visit of that layer
  bool backward = false;
  std::int64_t m = 0, n = 0, k = 0, groups = 0;
  double flops = 0;
  double bytes = 0;    // moved to or from device memory, or over the link for a collective
  double seconds = 0;  // predicted, once
  Bound bound = Bound::compute;
  // How often the step runs it: the visits of its layer kind on the stage (the
  // row stands for all of them; layer and visit name the first) x the micro-batches.
  std::int64_t times = 1;
  bool recomputed = false;  // a forward op the backward runs again first (the layout's recompute)
  bool no_grad = false;     // a forward op of a pass truncated backprop skips: no backward
};

// One step of one GPU: its ops (one row per kind of layer visit, with how
// often the step runs it), and their sums.
struct StepTime {
  std::vector<Op> ops;
  double tokens = 0;                          // tokens the whole job processes in the step
  double seconds = 0;                         // the step's wall time: the ops' seconds x times
  double flops = 0;                           // one GPU's FLOPs in the step (recomputation included)
  double seconds_by_bound[4] = {0, 0, 0, 0};  // indexed by Bound
  double seconds_per_token() const { return seconds / tokens; }
};

struct TimeReport {
  std::string model;
  HardwareSpec hardware;
  MemoryLayout layout;  // resolved, as memory() resolves it
  TimeOptions options;
  StepTime forward;   // the training step's forward alone
  StepTime training;  // forward, backward, gradient reduction and optimizer update
  StepTime decode;    // one new token for every sequence of the decode batch
  double forward_seconds_per_token = 0;
  double training_seconds_per_token = 0;
  double decode_seconds_per_token = 0;
  double model_flops_utilization = 0;  // count()'s training FLOPs per token x tokens / (GPUs x peak x seconds)
  std::vector<std::string> assumptions;
};

// Checks the layout against the config as memory() does (config_error naming
// every field, value and rule) and the options against their table.
TimeReport step_time(const CheckedConfig& config, const MemoryLayout& layout, const HardwareSpec& hardware,
                     const TimeOptions& options = {});

}  // namespace smelt
