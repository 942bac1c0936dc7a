// The solver's search (docs/solver.md section 7): the geometries in order of their KV mismatch, each
// (geometry, width)'s interval of hidden sizes (search.cpp), the best expert count of each (H, geometry, width)
// (search_over_e.cpp), and the figures counted for a candidate: its budgets, its memory and time once per visit,
// the limits (search_counts.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "smelt/config.hpp"
#include "solve/exact_budget.hpp"
#include "solve/found.hpp"
#include "solve/fraction.hpp"
#include "solve/memory_budget.hpp"
#include "solve/memory_eval.hpp"
#include "solve/space.hpp"
#include "solve/time_budget.hpp"

namespace smelt::solve_detail {

using namespace smelt::detail;  // the helpers every module shares

class Search {
 public:
  using i64 = std::int64_t;
  using Components = std::vector<i128>;

  // What every offer must pass: nothing; that the memory layout shards it; or that, sharded, it fits the
  // memory and time limits (and, matched, memory is counted for it).
  enum class Gate { none, shards, limits };

  Search(const Plan& plan, const ExactBudgets& target, Gate gate);

  // Visits the geometries in order of their KV mismatch until none can enter.
  void run(const ExactBudgets& target);

  // The geometries in order of their KV mismatch, each with it. The KV cache
  // depends on neither H, E nor the FFN widths: it is counted from the
  // geometry's cached elements alone.
  struct Ranked {
    Fraction kv;
    Geometry geometry;
  };
  std::vector<Ranked> rank(const ExactBudgets& target);

  // Offers the best candidate of every (H, g, w) that can still enter the top
  // list. Budgets are non-decreasing in H and E (docs/solver.md section 7
  // (d)): a hidden size whose components at the largest E fall short of a
  // target by more than the threshold, or whose components at the smallest E
  // exceed one by more than it, holds no candidate that can enter, and those
  // sizes are a prefix and a suffix of the ascending list.
  void visit(const Geometry& g, i64 w);

  bool done(const Fraction& kv) const { return top_.full() && solve_detail::compare(kv, top_.threshold()) > 0; }
  const std::vector<solve_detail::Found>& sorted() const { return top_.sorted(); }
  i64 evaluated() const { return evaluated_; }
  i64 dropped() const { return dropped_; }
  i64 dropped_for_time() const { return dropped_for_time_; }
  // The smallest memory and time of a dropped candidate, for the error when none fits.
  const std::optional<i64>& smallest_dropped() const { return smallest_dropped_; }
  const std::optional<i128>& fastest_dropped() const { return fastest_dropped_; }

 private:
  // The candidate's components, memory and time at their targets: there they prune nothing (short_of() and
  // over() see no gap), so a test these pass on the counted budgets alone holds for the complete components.
  Components counted(i64 h, i64 e, const Geometry& g, i64 w);

  // Counts the candidate's memory and time, where matched, into `c` as counted() left it.
  void complete(Components& c, i64 h, i64 e, const Geometry& g, i64 w);

  // Whether the components at the smallest and the largest expert count hold memory and time already.
  struct Ends {
    bool first = true;
    bool last = true;
  };

  // A candidate's memory and time, each counted once per visit of its (g, w): the search, the limits and the
  // closest fitting expert count ask for the same candidates again.
  struct Figures {
    std::optional<solve_detail::MemoryFigure> memory;
    std::optional<std::optional<i128>> time;
  };
  // One (g, w) per visit: figures_ is cleared at each, and keyed by (H, E).
  Figures& figures(i64 h, i64 e) { return figures_[{h, e}]; }
  const solve_detail::MemoryFigure& memory_of(i64 h, i64 e, const Geometry& g, i64 w);
  std::optional<i128> time_of(i64 h, i64 e, const Geometry& g, i64 w);

  Components components(i64 h, i64 e, const Geometry& g, i64 w);

  // Whether every candidate of one (H, g, w) has a largest mismatch above the threshold by the components
  // that are lines in the expert index k alone, from their values at the smallest (c0) and largest (c1)
  // expert count (the others, memory and time, may be at their targets): each line's mismatch at every k is
  // a lower bound on that candidate's largest, and their largest is convex in k, so smallest at its
  // rightmost minimiser.
  bool lines_beyond_threshold(const Components& c0, const Components& c1) const;

  // Whether the candidate fits the memory and time limits and the layout can shard it; remembers the
  // smallest memory and time of those that do not.
  bool fits(i64 h, i64 e, const Geometry& g, i64 w);

  // Offers `f`, or under a memory or time limit the closest candidate of its (H, g, w)
  // that fits: memory and time do not fall as the expert count k rises, and below
  // the best k the objective only worsens as k falls, so that is the largest
  // fitting k below it (`score_at` scores an index of Plan::experts).
  // Returns whether even the fewest experts exceed a limit: memory and time do
  // not fall as H rises either, so then no wider H of this (g, w) fits.
  template <class ScoreAt>
  bool offer(solve_detail::Found f, i64 best_k, ScoreAt score_at);

  bool short_of(const Components& at_largest_e) const;
  bool over(const Components& at_smallest_e) const;

  // The best expert count of one (H, g, w), from its components at the
  // smallest (c0) and the largest (c1) expert count, offered to the top list;
  // true where the fewest experts exceed the memory limit (offer()).
  bool offer_best_e(i64 h, const Geometry& g, i64 w, const Components& c0, const Components& c1, Ends ends);

  // Whether component i is memory or time (Objective::components puts them last, in that order).
  bool non_affine(std::size_t i) const {
    const std::size_t tail = (objective_.memory ? 1U : 0U) + (objective_.time ? 1U : 0U);
    return i + tail >= goal_.size();
  }

  // The complete components (memory and time counted) at expert index j of one (H, g, w), the lines' counts at
  // the ends reused there so that no config is counted twice.
  Components complete_at(i64 h, const Geometry& g, i64 w, i64 j, const Components& c0, const Components& c1);

  // The best expert index of one (H, g, w) where some component is not a line
  // in k. Every component is non-decreasing in k (docs/solver.md section 7
  // (b′)), so a component that is not a line lies, at every k between two
  // counted indices a < k < b, in [c_a, c_b], and its mismatch there is at least
  // the distance from the target to that interval: one bound for the whole gap
  // (a, b). Below the lowest counted index it is at most c_a (a bound where the
  // target is above c_a, none otherwise), above the highest at least c_b. The
  // lines' largest mismatch is convex in k, so over a gap it is smallest at its
  // overall minimiser clamped into the gap. Counts a point of the gap with the
  // smallest bound until no gap can beat the best counted (more experts win
  // ties, as in TopCandidates): exact, and a few counts where the lines, the
  // bounds and the chords agree. `ends` says whether c0 and c1 hold memory and
  // time already; where they do not, the ends are counted only if the search
  // asks for them.
  // Returns the best candidate, scored, and its expert index; `seen` holds every index it counted.
  std::pair<solve_detail::Found, i64> best_counted_e(i64 h, const Geometry& g, i64 w, const Components& c0,
                                                     const Components& c1, Ends ends, const std::vector<i128>& step,
                                                     const std::vector<bool>& line, std::map<i64, Components>& seen);

  // best_counted_e() where memory or time is the one matched budget (goal_ holds one component, not a line):
  // the figure does not fall as k rises, so the best is the last index at most the target or the first above
  // it (the last of its plateau: more experts win ties), found by secant steps that bisect when they stall
  // (docs/solver.md section 7 (b‴)). The same candidate as best_counted_e() where it can enter the list.
  std::pair<solve_detail::Found, i64> best_single_e(i64 h, const Geometry& g, i64 w, const Components& c0,
                                                    const Components& c1, Ends ends, std::map<i64, Components>& seen);

  // After a search over E: where its best lies and each component's slope there (between the best and the
  // counted index next to it), for the next hidden size of the visit to start from (count_point()).
  void remember_slopes(i64 k, const std::map<i64, Components>& seen, const std::vector<bool>& line);

  // Where to count in the gap between the indices a and b (-1 and n where nothing is counted below or above):
  // the k whose estimated largest mismatch is smallest, each component that is not a line taken on its chord
  // from a to b (memory and time are close to affine in k). An end that is not counted is extrapolated with the
  // slopes the visit's previous hidden size left; without them it is counted itself. Any k of the gap keeps the
  // search exact, since its bound covers the whole gap; this one finds the best in a few counts where the chords
  // are close (the lines' minimiser alone, for memory or time matched alone, walked the gap one expert count at
  // a time).
  template <class LineMax>
  i64 count_point(i64 a, i64 b, const std::map<i64, Components>& seen, const std::vector<bool>& line,
                  const LineMax& line_max) const;

  const solve_detail::Plan& plan_;
  const solve_detail::Objective objective_;
  const Components goal_;
  ModelConfig scratch_;
  solve_detail::TopCandidates top_;
  MemoryEvaluator memory_eval_;  // memory without the report, where it can be sure
  TimeEvaluator time_eval_;      // time with the shape of the step found once
  i128 target_memory_;
  i128 target_time_;
  i128 time_ceiling_;  // the largest training attoseconds per token under the time limit
  Gate gate_;
  bool checked_;  // gate_ is not none
  struct HashHE {
    std::size_t operator()(const std::pair<i64, i64>& k) const noexcept {
      return std::hash<std::uint64_t>{}(static_cast<std::uint64_t>(k.first) * 0x9E3779B97F4A7C15ULL ^
                                        static_cast<std::uint64_t>(k.second));
    }
  };
  std::unordered_map<std::pair<i64, i64>, Figures, HashHE> figures_;  // of the (g, w) visited, by (H, E)
  i64 evaluated_ = 0;
  i64 dropped_ = 0;
  i64 dropped_for_time_ = 0;
  std::optional<i64> smallest_dropped_;
  std::optional<i128> fastest_dropped_;
  bool over_limit_ = false;        // the last fits(): over a limit (not refused by the layout)
  bool over_time_ = false;         // the last fits(): over the time limit
  std::optional<i64> last_bytes_;  // the last fits(): the memory counted, if it was
  // Where the search over E of the visit's previous hidden size ended: its best index, and each component's
  // slope there (per index, as a fraction) for those that are not lines; where the next one starts counting.
  std::optional<i64> seed_k_;
  std::optional<i64> prev_seed_k_;  // and the one before it
  std::vector<std::pair<i128, i64>> slopes_;
  // best_single_e(): where the visit's last two hidden sizes crossed the target, in fractions of an index.
  std::optional<double> cross_;
  std::optional<double> prev_cross_;
};

}  // namespace smelt::solve_detail
