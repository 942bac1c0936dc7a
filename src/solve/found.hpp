// What the searches keep: the best candidates found so far, in the solver's
// total order (objective, then tie-break), bounded by the number asked for.
#pragma once

#include <cstdint>
#include <vector>

#include "solve/exact_budget.hpp"
#include "solve/space.hpp"

namespace smelt::solve_detail {

using namespace smelt::detail;  // the helpers every module shares

struct Found {
  Score score;
  std::int64_t hidden = 0;
  std::int64_t experts = 0;
  Geometry geometry;
  std::int64_t expert_width = 0;  // Plan::widths: 0 unless SearchSpace::ffn = searched
};

// Whether two found candidates are head splits of one another: the same H, E
// and expert width (so the same FFN widths), attention width and KV width.
bool same_but_heads(const Found& a, const Found& b);

// Memory is bounded by `capacity`, never by the size of the space. The kept
// candidates are distinct (same_but_heads): a candidate whose split of the
// heads is kept already replaces it only when it is better.
class TopCandidates {
 public:
  TopCandidates(const Plan& plan, std::size_t capacity) : plan_(&plan), capacity_(capacity) {}

  bool less(const Found& a, const Found& b) const;
  void offer(const Found& f);
  bool full() const { return kept_.size() >= capacity_; }
  // Whether offering `f` now would keep it.
  bool admits(const Found& f) const { return !full() || less(f, kept_.back()); }
  // The largest mismatch of the worst kept candidate: a config whose largest
  // mismatch is above it cannot enter.
  const Fraction& threshold() const { return kept_.back().score.front(); }
  const std::vector<Found>& sorted() const { return kept_; }

 private:
  const Plan* plan_;
  std::size_t capacity_;
  std::vector<Found> kept_;  // sorted, best first
};

// Turns the kept candidates into the public result: budgets per context,
// mismatches, depth, and an explanation when the best misses the tolerance.
MatchResult build_result(const Plan& plan, const std::vector<Found>& found, const ExactBudgets& baseline,
                         std::int64_t evaluated);

}  // namespace smelt::solve_detail
