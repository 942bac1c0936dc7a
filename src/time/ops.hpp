// The ops of one GPU's step (docs/time.md, "The ops"): shapes, FLOPs and
// bytes, before any time is put on them (roofline.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "memory/resolved_layout.hpp"
#include "smelt/config.hpp"
#include "smelt/time.hpp"

namespace smelt::time_detail {

struct OpContext {
  const ModelConfig& c;
  const memory_detail::ResolvedLayout& r;
  const TimeOptions& o;
  std::int64_t tokens = 0;  // rows one GPU's GEMMs see: a micro-batch's tokens over cp, or the decode batch
  bool decode = false;
  std::int64_t context = 0;  // decode: tokens each sequence has cached
};

// A GEMM of (m x k) by (k x n): 2mnk FLOPs; it reads its input and weights and writes its output.
Op gemm(std::string_view name, std::int64_t m, std::int64_t n, std::int64_t k, double act_bytes, double weight_bytes);

// The forward ops of one micro-batch (or one decode step) on the stage holding
// `layers` (0-based stored layers): each kind of visit's ops once, in the order
// the kinds first occur, each row's `times` the visits of that kind; then
// the embedding before them on the first stage and the head, loss and MTP
// modules after them on the last.
std::vector<Op> forward_ops(const OpContext& x, const std::vector<std::int64_t>& layers, bool first, bool last);

// The backward of `forward` (reversed): each GEMM's input and weight gradients,
// the attention core's backward, each elementwise op's, each collective's
// mirror; the ops the layout recomputes (Op::recomputed) run forward again first.
std::vector<Op> backward_ops(const std::vector<Op>& forward);

}  // namespace smelt::time_detail
