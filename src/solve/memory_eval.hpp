// Per-GPU memory of the solver's candidates without building their reports: what depends only on the layout and
// the candidates' shared structure (the resolved layout, the stage's kinds of layer visits, the layer kinds) is
// found once per solve, and each candidate costs the arithmetic of its knobs alone (docs/solver.md section 7,
// "Memory counted by kind").
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "memory/resolved_layout.hpp"
#include "smelt/config.hpp"
#include "smelt/memory.hpp"
#include "solve/exact_budget.hpp"

namespace smelt::solve_detail {

using namespace smelt::detail;  // the helpers every module shares

class MemoryEvaluator {
 public:
  explicit MemoryEvaluator(const MemoryLayout& layout) : layout_(layout) {}

  // memory(config, layout).total, exactly, for a candidate of one solve (the same layers, loops, MoE layers and
  // attention pattern as every other one passed here); nullopt where this path cannot be sure of it: a layout it
  // does not cover (another convention, inference, a pipeline, MLA, MTP modules), one that cannot shard the
  // config, a figure that could leave 64-bit integers. Then the full report decides (memory_figure()).
  std::optional<std::int64_t> bytes(const ModelConfig& config);

 private:
  // Found from the first candidate the layout shards; false where the layout is not covered.
  bool prepare(const ModelConfig& config);
  std::int64_t count(const ModelConfig& config) const;

  // Visits of one kind: the activations they keep depend on the layer only through these.
  struct VisitKind {
    bool moe = false;
    Recompute recompute = Recompute::none;
    std::int64_t visits = 0;
  };

  MemoryLayout layout_;
  enum class State { unprepared, ready, unsupported } state_ = State::unprepared;
  std::optional<memory_detail::ResolvedLayout> resolved_;
  LayerKinds layer_kinds_;
  std::int64_t moe_layers_ = 0;
  std::int64_t dense_layers_ = 0;
  std::array<VisitKind, 6> kinds_{};  // by (MoE, recompute mode)
  bool have_last_ = false;            // the stage has a visit, whose last one is:
  VisitKind last_;                    // its kind,
  std::int64_t last_visit_ = 0;       // and its visit number (1-based) of its layer
};

}  // namespace smelt::solve_detail
