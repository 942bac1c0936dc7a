// The declared search space, resolved into explicit knob values, and the
// construction of a candidate config from one choice of knobs.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "smelt/hardware.hpp"
#include "smelt/solve.hpp"
#include "solve/attention_space.hpp"
#include "solve/exact_budget.hpp"

namespace smelt::solve_detail {

using namespace smelt::detail;  // the helpers every module shares

struct Plan {
  ModelConfig baseline;
  LoopConfig loop;          // the recipe's; with keep, the Baseline's first span (for the report)
  bool keep_loops = false;  // LoopSpan::keep: every candidate keeps the Baseline's spans
  std::int64_t depth = 0;
  std::vector<std::int64_t> hidden;   // ascending
  std::vector<std::int64_t> experts;  // ascending, an arithmetic progression; {0} for dense
  std::vector<Geometry> geometries;   // attention only
  std::vector<std::int64_t> widths;   // routed expert widths, ascending (ffn = searched); {0} otherwise
  std::vector<std::int64_t> contexts;
  SearchSpace space;
  MatchOptions options;
  LayerKinds kinds;                      // the same for every candidate: they differ in widths and counts only
  std::optional<HardwareSpec> hardware;  // MatchOptions::hardware's spec, read once; none without one

  // Candidates: each geometry's hidden sizes (hidden_span) x expert counts x widths.
  std::int64_t space_size() const;
};

// Indices [lo, hi) into Plan::hidden: the hidden sizes a geometry may be
// paired with (attention_space.hpp).
inline IndexSpan hidden_span(const Plan& plan, const Geometry& g) {
  return hidden_span(plan.baseline, plan.space, plan.hidden, g);
}

// Validates every option (all violations at once, config_error) and resolves
// the domains.
Plan make_plan(const CheckedConfig& baseline, const LoopRecipe& recipe, const SearchSpace& space,
               const MatchOptions& options);

// The Baseline with the recipe's loop and these knobs; FFN widths follow
// `space.ffn` (`width` is the routed expert width with ffn = searched, else 0).
ModelConfig make_candidate(const Plan& plan, std::int64_t hidden, std::int64_t experts, const Geometry& g,
                           std::int64_t width);
// The knobs alone, on `c`, a candidate of this plan (make_candidate's result):
// what differs between two candidates, so that the search can reuse one config
// instead of copying the Baseline's names and lists for every count.
void set_knobs(const Plan& plan, std::int64_t hidden, std::int64_t experts, const Geometry& g, std::int64_t width,
               ModelConfig& c);

// Tie-break after the objective: narrower H, then more experts, then the
// smallest change to attention geometry (query heads, then KV heads, then
// head_dim), then smaller values (the expert width last), so that the order
// is total.
bool tie_break_less(const Plan& plan, std::int64_t h1, std::int64_t e1, const Geometry& g1, std::int64_t w1,
                    std::int64_t h2, std::int64_t e2, const Geometry& g2, std::int64_t w2);

}  // namespace smelt::solve_detail
