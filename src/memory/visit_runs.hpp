// The layer visits of one pipeline stage, run-length: a stage of a span
// looped 1,024 times runs its layers 1,024 times over, and the memory and
// time models need each kind of visit once, with how many visits it has, not
// the visits one by one. Found from the schedule's blocks by arithmetic, so a
// stage costs its layers and the blocks it meets, whatever the loop counts
// and the other stages.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "smelt/config.hpp"
#include "smelt/schedule.hpp"

namespace smelt::memory_detail {

// Visits of one stage of the same kind (MoE or dense, attention kind) and
// flags: the stored layers first, first + step, ..., last (0-based), each on
// the passes first_pass..last_pass (0-based) of their block, pass by pass. In
// execution order its first visit is (first, first_pass), its last (last, last_pass).
struct StageVisitRun {
  std::int64_t first = 0;
  std::int64_t last = 0;
  std::int64_t step = 1;
  std::int64_t first_pass = 0;
  std::int64_t last_pass = 0;
  std::int64_t first_ordinal = 0;  // 0-based: where its first visit lies among the stage's visits
  std::int64_t last_ordinal = 0;   // and its last
  bool moe = false;
  LayerAttention attention = LayerAttention::full;
  bool recomputed = false;  // among the stage's first StageVisitOptions::recomputed visits
  bool no_grad = false;     // a pass truncated backprop runs forward only

  std::int64_t layers() const noexcept { return (last - first) / step + 1; }
  std::int64_t visits() const noexcept { return layers() * (last_pass - first_pass + 1); }
};

struct StageVisitOptions {
  static constexpr std::int64_t kAll = std::numeric_limits<std::int64_t>::max();
  // The stage's first visits that full recompute covers (kAll: every one, 0: none).
  std::int64_t recomputed = 0;
  // Mark no_grad the passes of a span before its last backprop_passes.
  bool truncated_backprop = false;
};

// The visits of the stage holding stored layers lo..hi (0-based, inclusive):
// every one in exactly one run, the runs in order of their first visit. A
// block's layers are cut into runs as count's layer runs are (one step per
// kind: 1 or a period of the layer sequence), so the runs grow with the kinds
// of layers, the blocks the stage meets and the boundaries of the flags, not
// with its visits. Time: the stage's layers x (kinds + periods), plus log(blocks).
std::vector<StageVisitRun> stage_visit_runs(const ModelConfig& config, const LayerSchedule& schedule, std::int64_t lo,
                                            std::int64_t hi, const StageVisitOptions& options);

// The visits of the stage holding stored layers lo..hi (a sum over the blocks it meets; at most 2^26).
std::int64_t stage_visits(const LayerSchedule& schedule, std::int64_t lo, std::int64_t hi);

}  // namespace smelt::memory_detail
