// Memory as a budget: the bytes one GPU holds to train (or serve) a config
// under a parallel layout: weights, gradients, optimizer states and the
// activations kept for the backward pass, per pipeline stage and for the most
// loaded rank (docs/memory.md). A looped layer stores its weights once and
// keeps its activations once per visit.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "smelt/checked_config.hpp"
#include "smelt/config.hpp"
#include "smelt/option_fields.hpp"

namespace smelt {

// An element type; `automatic` is the convention's default (docs/memory.md).
enum class Dtype { automatic, fp32, bf16, fp16 };
std::string_view to_string(Dtype v);
Dtype parse_dtype(std::string_view s, std::string_view field);
std::int64_t bytes_of(Dtype v);  // 4, 2, 2 (automatic: 0)

// Which activations a layer visit recomputes in the backward pass instead of
// keeping: none, the attention core (scores, mask, softmax), or everything but
// the layer's input.
enum class Recompute { none, selective, full };
std::string_view to_string(Recompute v);
Recompute parse_recompute(std::string_view s, std::string_view field);

// How the bytes are counted. smelt: what the reference PyTorch model
// (python/smelt/torch) keeps, op by op; korthikanti: Korthikanti et al. 2022's
// 34sbh + 5as^2b per layer and its variants; megatron: Megatron-LM's
// theoretical memory report in its expert-parallel form (docs/memory.md).
enum class MemoryConvention { smelt, korthikanti, megatron };
std::string_view to_string(MemoryConvention v);
MemoryConvention parse_memory_convention(std::string_view s, std::string_view field);

// A device's memory: bytes, from a number with a unit ("141GiB", "80e9") or a
// named device (docs/memory.md's table); 0 is none.
struct DeviceMemory {
  std::int64_t bytes = 0;
  std::string name;  // the device named, or ""
  friend bool operator==(const DeviceMemory&, const DeviceMemory&) = default;
};
DeviceMemory parse_device_memory(std::string_view s, std::string_view field);

struct MemoryLayout {
  std::int64_t micro_batch = 1;
  std::int64_t seq = 0;  // tokens per sequence; 0: the config's context length
  std::int64_t tp = 1;
  std::int64_t pp = 1;
  std::vector<std::int64_t> pp_layers;  // stored layers per stage; empty: as even as possible
  std::int64_t vpp = 1;                 // virtual stages per pipeline rank (interleaving)
  std::int64_t ep = 1;
  std::int64_t etp = 1;
  std::int64_t cp = 1;
  std::int64_t dp = 1;
  std::int64_t microbatches = 0;  // per step and pipeline; 0: as many as keep the pipeline full
  bool sequence_parallel = false;
  std::int64_t zero = 0;
  bool distributed_optimizer = false;
  Recompute recompute = Recompute::none;
  std::int64_t recompute_layers = 0;  // layer visits recomputed per stage (full), 0: all
  MemoryConvention convention = MemoryConvention::smelt;
  Dtype param_dtype = Dtype::automatic;
  Dtype grad_dtype = Dtype::automatic;
  Dtype optimizer_dtype = Dtype::automatic;
  Dtype activation_dtype = Dtype::automatic;
  bool inference = false;
  std::int64_t batch = 1;    // inference: sequences served at once
  std::int64_t context = 0;  // inference: tokens cached per sequence; 0: the config's
  DeviceMemory device_memory;

  friend bool operator==(const MemoryLayout&, const MemoryLayout&) = default;
};

// MemoryLayout's fields (include/smelt/option_fields.hpp).
template <>
struct OptionTable<MemoryLayout> {
  static constexpr std::string_view owner = "MemoryLayout";
  using Field = OptionField<MemoryLayout, std::int64_t, std::vector<std::int64_t>, bool, Recompute, MemoryConvention,
                            Dtype, DeviceMemory>;
  static constexpr double kMaxRanks = 1 << 20;
  static constexpr auto fields = std::to_array<Field>({
      {"micro_batch", OptionKind::integer, &MemoryLayout::micro_batch, 1, 1 << 24, "Sequences per micro-batch"},
      {"seq", OptionKind::integer, &MemoryLayout::seq, 0, 1 << 30,
       "Tokens per sequence (default: the config's context length)"},
      {"tp", OptionKind::integer, &MemoryLayout::tp, 1, kMaxRanks, "Tensor-parallel size"},
      {"pp", OptionKind::integer, &MemoryLayout::pp, 1, kMaxRanks, "Pipeline-parallel size (stages)"},
      {"pp_layers", OptionKind::integer_list, &MemoryLayout::pp_layers, 0, 1 << 16,
       "Stored layers per pipeline stage, {pp} of them, summing to the layers (default: as even as possible)"},
      {"vpp", OptionKind::integer, &MemoryLayout::vpp, 1, 1 << 16, "Virtual stages per pipeline rank (interleaving)"},
      {"ep", OptionKind::integer, &MemoryLayout::ep, 1, kMaxRanks, "Expert-parallel size"},
      {"etp", OptionKind::integer, &MemoryLayout::etp, 1, kMaxRanks, "Expert tensor-parallel size"},
      {"cp", OptionKind::integer, &MemoryLayout::cp, 1, kMaxRanks, "Context-parallel size"},
      {"dp", OptionKind::integer, &MemoryLayout::dp, 1, kMaxRanks, "Data-parallel size"},
      {"microbatches", OptionKind::integer, &MemoryLayout::microbatches, 0, 1 << 24,
       "Micro-batches per step (default: enough to fill the pipeline)"},
      {"sequence_parallel", OptionKind::boolean, &MemoryLayout::sequence_parallel, 0, 1,
       "Shard norms, residuals and dropout over the tensor-parallel ranks"},
      {"zero", OptionKind::integer, &MemoryLayout::zero, 0, 3,
       "ZeRO stage: 1 shards optimizer states, 2 gradients too, 3 weights too, over {dp}"},
      {"distributed_optimizer", OptionKind::boolean, &MemoryLayout::distributed_optimizer, 0, 1,
       "Megatron's distributed optimizer: optimizer states sharded over the data-parallel group"},
      {"recompute", OptionKind::word, &MemoryLayout::recompute, 0, 0,
       "none, selective (the attention core) or full (whole layer visits)"},
      {"recompute_layers", OptionKind::integer, &MemoryLayout::recompute_layers, 0, 1 << 24,
       "Layer visits per stage that full recompute covers (default: all)"},
      {"convention", OptionKind::word, &MemoryLayout::convention, 0, 0,
       "smelt (the reference model, op by op), korthikanti (34sbh + 5as^2b per layer) or megatron (Megatron-LM's "
       "theoretical memory report)"},
      {"param_dtype", OptionKind::word, &MemoryLayout::param_dtype, 0, 0,
       "fp32, bf16 or fp16 (default: fp32 under smelt, bf16 otherwise)"},
      {"grad_dtype", OptionKind::word, &MemoryLayout::grad_dtype, 0, 0,
       "fp32, bf16 or fp16 (default: fp32, or the weights' under smelt)"},
      {"optimizer_dtype", OptionKind::word, &MemoryLayout::optimizer_dtype, 0, 0,
       "fp32, bf16 or fp16: Adam's moments, and its master weights where they differ from the weights' (default: "
       "fp32, or the weights' under smelt)"},
      {"activation_dtype", OptionKind::word, &MemoryLayout::activation_dtype, 0, 0,
       "fp32, bf16 or fp16 (default: the weights')"},
      {"inference", OptionKind::boolean, &MemoryLayout::inference, 0, 1,
       "Serving memory: the weights and the KV cache of {batch} x {context} tokens"},
      {"batch", OptionKind::integer, &MemoryLayout::batch, 1, 1 << 24, "Inference: sequences served at once"},
      {"context", OptionKind::integer, &MemoryLayout::context, 0, 1 << 30,
       "Inference: tokens cached per sequence (default: the config's context length)"},
      {"device_memory", OptionKind::word, &MemoryLayout::device_memory, 0, 0,
       "Capacity to compare with: bytes with a unit (141GiB) or a device (h100, h200, b200, a100-40, a100-80, "
       "mi300x)"},
  });
};

// A sum and the named terms it adds up, in bytes. Term names are the
// library's own words, string literals of static storage: a view of one is
// never left dangling, and a report's rows copy without allocating names.
struct MemoryTerm {
  std::string_view name;
  std::int64_t bytes = 0;
  friend bool operator==(const MemoryTerm&, const MemoryTerm&) = default;
};
struct MemoryPart {
  std::int64_t total = 0;
  std::vector<MemoryTerm> terms;
  // Adds to the term of that name, or appends it; `name` must be of static storage (a literal or a term's name).
  void add(std::string_view name, std::int64_t bytes);
  friend bool operator==(const MemoryPart&, const MemoryPart&) = default;
};

// Layer visits of one stage that keep the same activations for one micro-batch (the same kind: MoE or dense,
// attention kind, recompute mode), written once: the stored layers first_layer, first_layer + step, ...,
// last_layer (1-based), each on its visits first_visit..last_visit (1-based: a loop's later passes are 2, 3, ...),
// run pass by pass. In execution order its first visit is (first_layer, first_visit), its last (last_layer,
// last_visit). A stage's runs grow with the kinds of its layers, not with its visits: 4,096 layers looped 1,024
// times are one run of 4,194,304 visits.
struct VisitRun {
  std::int64_t first_layer = 0;
  std::int64_t last_layer = 0;
  std::int64_t step = 1;  // 1 for a single layer
  std::int64_t first_visit = 1;
  std::int64_t last_visit = 1;
  std::int64_t count = 0;  // visits: its layers x (last_visit - first_visit + 1)
  bool moe = false;
  LayerAttention attention = LayerAttention::full;
  Recompute recompute = Recompute::none;
  MemoryPart activations;  // one visit's terms: attention norm, attention, FFN norm, FFN or MoE
  friend bool operator==(const VisitRun&, const VisitRun&) = default;
};

// One pipeline rank.
struct StageMemory {
  std::int64_t stage = 0;            // 0-based pipeline rank
  std::vector<std::int64_t> layers;  // 1-based stored layers it holds
  std::int64_t in_flight = 0;        // micro-batches whose activations it holds at its peak
  std::int64_t activations_per_micro_batch = 0;
  MemoryPart weights;
  MemoryPart gradients;
  MemoryPart optimizer;
  MemoryPart activations;  // per micro-batch terms x in_flight, plus the stage's own (embedding, head, loss)
  MemoryPart kv_cache;     // inference only
  // The backward pass's largest temporaries beyond the above, at the point
  // where they peak (one term: loss_backward, attention_backward,
  // moe_backward or ffn_backward); smelt convention, one model-parallel rank.
  MemoryPart transient;
  std::int64_t layer_visits = 0;     // layer visits it runs per micro-batch (training)
  std::vector<VisitRun> visit_runs;  // those visits as runs, in order of their first visit (training)
  std::int64_t total = 0;
};

struct MemoryReport {
  std::string model;
  MemoryLayout layout;  // as given, with the defaults it resolved (seq, context, dtypes)
  std::vector<StageMemory> stages;
  std::size_t worst_stage = 0;           // the stage with the largest total
  std::int64_t total = 0;                // the worst stage's total: what the most loaded GPU holds
  double fraction_of_device = 0;         // total / layout.device_memory.bytes (0 without one)
  std::vector<std::string> assumptions;  // what the count takes as given (balanced routing, ...)
};

// Checks the layout against the config (every field, value and rule at once:
// config_error) and counts; overflow_error names the quantity that does not fit.
MemoryReport memory(const CheckedConfig& config, const MemoryLayout& layout);

}  // namespace smelt
