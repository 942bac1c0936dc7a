// The attention part of the search space (docs/solver.md section 4): for a GQA
// Baseline, shape rules instead of per-factor boxes. Query heads free, KV heads
// any divisor of them, head_dim in [min_head_dim, max_head_dim], and the
// attention width (query heads x head_dim) within a ratio of H. An MLA
// Baseline keeps its attention (one geometry).
#pragma once

#include <cstdint>
#include <vector>

#include "smelt/detail/violations.hpp"
#include "smelt/solve.hpp"
#include "solve/fraction.hpp"

namespace smelt::solve_detail {

using namespace smelt::detail;  // the helpers every module shares

// An attention geometry: query heads, KV heads and head size, all a
// candidate's KV cache depends on.
struct Geometry {
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;
  std::int64_t head_dim = 0;
};

// The attention-width rule in force: width / H in [lo, hi], compared exactly.
// The user's ratios are rounded to 9 decimals (0.7 is 7/10); the default range
// widens to hold the Baseline's own width ratio. Meaningful once
// SearchSpace::attention_ratio passed its checks (resolve_attention): then
// both ends are positive and their terms below 2^50.
struct WidthRule {
  Fraction lo, hi;
};
WidthRule width_rule(const ModelConfig& b, const SearchSpace& space);

// The hidden sizes [lo, hi] a width may be paired with under the rule (empty
// when hi < lo); each end clamped to [0, 2^24 + 1].
struct HiddenBounds {
  std::int64_t lo = 0;
  std::int64_t hi = 0;
};
HiddenBounds hidden_bounds(const WidthRule& rule, std::int64_t width);

// The resolved ranges, and the number of (q, kv, d) triples whose width fits
// the rule for some real H in [h_min, h_max]: an upper bound on the geometries
// listed (alignment gaps in H can still empty a triple's span).
struct Attention {
  bool gqa = false;
  KnobRange heads, kv_heads, head_dim;  // head_dim.lo raised to min_head_dim
  WidthRule rule;
  std::int64_t h_min = 0, h_max = 0;
  std::int64_t geometries = 1;
};

// Checks max_head_dim and attention_ratio, then resolves the domains. h_min
// and h_max are the smallest and largest listed hidden sizes (0 when the
// hidden domain is bad: then only the knobs' own ranges are checked). Counting
// stops above `limit` geometries, with a violation: the space is too large.
Attention resolve_attention(const ModelConfig& b, const SearchSpace& space, std::int64_t h_min, std::int64_t h_max,
                            std::int64_t limit, Violations& errors);

// Every counted triple with at least one size of `hidden` (ascending) in its
// span, sorted by query heads, then KV heads, then head_dim. Adds a violation
// naming the constraints when none is left.
std::vector<Geometry> list_attention(const ModelConfig& b, const SearchSpace& space, const Attention& a,
                                     const std::vector<std::int64_t>& hidden, Violations& errors);

// Indices [lo, hi) into `hidden` (ascending): the hidden sizes a geometry may
// be paired with under the width rule (docs/solver.md); all of them for an
// MLA Baseline, whose attention is kept.
struct IndexSpan {
  std::size_t lo = 0;
  std::size_t hi = 0;
};
IndexSpan hidden_span(const ModelConfig& baseline, const SearchSpace& space, const std::vector<std::int64_t>& hidden,
                      const Geometry& g);

}  // namespace smelt::solve_detail
