// The ops of one GPU's step (docs/time.md, "The ops"): shapes, FLOPs and
// bytes, before any time is put on them (roofline.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "memory/resolved_layout.hpp"
#include "smelt/config.hpp"
#include "smelt/schedule.hpp"
#include "smelt/time.hpp"

namespace smelt::time_detail {

struct OpContext {
  const ModelConfig& c;
  const memory_detail::ResolvedLayout& r;
  const TimeOptions& o;
  const LayerSchedule& schedule;  // the config's
  std::int64_t tokens = 0;        // rows one GPU's GEMMs see: a micro-batch's tokens over cp, or the decode batch
  bool decode = false;
  std::int64_t context = 0;  // decode: tokens each sequence has cached
};

// A GEMM of (m x k) by (k x n): 2mnk FLOPs; it reads its input and weights and writes its output.
Op gemm(std::string_view name, std::int64_t m, std::int64_t n, std::int64_t k, double act_bytes, double weight_bytes);

// One kind of layer visit on a stage: MoE or dense, attention kind, whether
// the layout recomputes it and whether truncated backprop leaves it
// forward-only; its first visit and how many visits it has. A visit's ops
// depend on its layer only through these.
struct VisitKind {
  bool moe = false;
  LayerAttention attention = LayerAttention::full;
  bool recomputed = false;
  bool no_grad = false;
  std::int64_t layer = 0;  // its first visit: 0-based stored layer
  std::int64_t visit = 0;  // and 0-based pass
  std::int64_t visits = 0;

  // The same ops, run as often: all but the first visit.
  bool same_ops(const VisitKind& o) const noexcept {
    return moe == o.moe && attention == o.attention && recomputed == o.recomputed && no_grad == o.no_grad &&
           visits == o.visits;
  }
};

// The kinds of visit of one micro-batch (or one decode step) on the stage
// holding `layers` (0-based stored layers, in order), in the order the kinds
// first occur: from the stage's runs of visits (memory/visit_runs.hpp), so
// its cost grows with its layers and kinds, not with its visits.
std::vector<VisitKind> visit_kinds(const OpContext& x, const std::vector<std::int64_t>& layers);

// The forward ops of one micro-batch (or one decode step) on a stage: each
// kind of visit's ops once, in the order of `kinds`, each row's `times` the
// visits of that kind; then the embedding before them on the first stage and
// the head, loss and MTP modules after them on the last.
std::vector<Op> forward_ops(const OpContext& x, const std::vector<VisitKind>& kinds, bool first, bool last);

// The backward of `forward` (reversed): each GEMM's input and weight gradients,
// the attention core's backward, each elementwise op's, each collective's
// mirror; the ops the layout recomputes (Op::recomputed) run forward again first.
std::vector<Op> backward_ops(const std::vector<Op>& forward);

}  // namespace smelt::time_detail
