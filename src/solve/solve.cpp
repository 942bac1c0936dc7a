// solve(): the exact optimum of the declared space without enumerating it.
//
// For fixed hidden size, attention geometry and expert width, every budget is
// affine in the expert count E (experts and router scale with E; attention
// and KV do not), so the objective max_i |budget_i(E) - target_i| / target_i
// is convex in E and its best grid point is found by binary search on the
// sign of its differences. The KV cache depends on the attention geometry
// alone, so geometries are visited in order of their KV mismatch and the
// search stops once that mismatch alone exceeds the worst candidate kept.
// Every budget is non-decreasing in H (and in E), so within a geometry and
// width only an interval of hidden sizes can still beat the worst candidate
// kept, found by binary search. Per-GPU memory and time per token are not
// affine in E but do not fall as E rises: matched, the best E is found by
// counting only the expert counts whose bounds can still beat the best one
// counted, each where the chords between the counts put the best; and they are
// counted last, for the hidden sizes the other budgets leave room in (a count
// of memory or time costs some twenty of the others). docs/solver.md section 7
// proves the steps exact; tests compare against brute force.
#include <algorithm>
#include <limits>
#include <map>
#include <optional>

#include "solve/found.hpp"
#include "solve/memory_budget.hpp"
#include "solve/relax.hpp"
#include "solve/time_budget.hpp"

namespace smelt {
namespace {

using detail::ExactBudgets;
using detail::Fraction;
using detail::Geometry;
using detail::i128;
using i64 = std::int64_t;
using Components = std::vector<i128>;

constexpr i128 kMaxI64 = std::numeric_limits<i64>::max();

// Rightmost minimiser over first .. last of a convex sequence f (exact
// fractions): the last k whose step from k - 1 does not increase it, found by
// binary search (more experts win ties).
template <class F>
i64 rightmost_minimiser(i64 first, i64 last, const F& f) {
  i64 lo = first, hi = last;
  while (lo < hi) {
    const i64 mid = lo + (hi - lo + 1) / 2;
    if (detail::compare(f(mid), f(mid - 1)) <= 0)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}
template <class F>
i64 rightmost_minimiser(i64 n, const F& f) {
  return rightmost_minimiser(0, n - 1, f);
}

class Search {
 public:
  // What every offer must pass: nothing; that the memory layout shards it; or that, sharded, it fits the
  // memory and time limits (and, matched, memory is counted for it).
  enum class Gate { none, shards, limits };

  Search(const detail::Plan& plan, const ExactBudgets& target, Gate gate)
      : plan_(plan),
        objective_(plan.options),
        goal_(objective_.components(target)),
        // One candidate config, its knobs set before each count: copying the
        // Baseline (names, lists) per count cost as much as counting it.
        scratch_(detail::make_candidate(plan, plan.hidden.front(), plan.experts.front(), plan.geometries.front(),
                                        plan.widths.front())),
        top_(plan, static_cast<std::size_t>(plan.options.top)),
        target_memory_(target.memory),
        target_time_(target.time),
        time_ceiling_(detail::time_ceiling(plan.options, target.time)),
        gate_(gate),
        checked_(gate != Gate::none) {}

  // Visits the geometries in order of their KV mismatch until none can enter.
  void run(const ExactBudgets& target) {
    for (const Ranked& r : rank(target)) {
      // Every candidate with this geometry has a largest mismatch of at least its
      // KV mismatch; the ranking makes every later geometry worse still.
      if (done(r.kv)) break;
      // Each expert width in turn: it moves no KV cache, so it shares the
      // geometry's place in the ranking.
      for (const i64 w : plan_.widths) visit(r.geometry, w);
    }
  }

  // The geometries in order of their KV mismatch, each with it. The KV cache
  // depends on neither H, E nor the FFN widths: it is counted from the
  // geometry's cached elements alone.
  struct Ranked {
    Fraction kv;
    Geometry geometry;
  };
  std::vector<Ranked> rank(const ExactBudgets& target) {
    const std::vector<i128> per_element = detail::kv_bytes_per_element(scratch_, plan_.contexts, plan_.kinds);
    const auto& a = plan_.baseline.attention;
    std::vector<Ranked> ranked;
    ranked.reserve(plan_.geometries.size());
    std::vector<i128> kv(plan_.contexts.size());
    for (const Geometry& g : plan_.geometries) {
      const i128 elements = a.type == AttentionType::mla ? i128{a.mla.kv_lora_rank} + a.mla.qk_rope_head_dim
                                                         : 2 * i128{g.kv_heads} * g.head_dim;
      for (std::size_t i = 0; i < kv.size(); ++i) {
        kv[i] = elements * per_element[i];
        // Past 64 bits count() refuses the config: counted in full for its error.
        if (kv[i] > kMaxI64) (void)components(plan_.hidden.front(), plan_.experts.front(), g, plan_.widths.front());
      }
      ranked.push_back({objective_.kv_score(kv, target), g});
    }
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const Ranked& x, const Ranked& y) { return detail::compare(x.kv, y.kv) < 0; });
    return ranked;
  }

  // Offers the best candidate of every (H, g, w) that can still enter the top
  // list. Budgets are non-decreasing in H and E (docs/solver.md section 7
  // (d)): a hidden size whose components at the largest E fall short of a
  // target by more than the threshold, or whose components at the smallest E
  // exceed one by more than it, holds no candidate that can enter, and those
  // sizes are a prefix and a suffix of the ascending list.
  void visit(const Geometry& g, i64 w) {
    figures_.clear();
    seed_k_.reset();
    prev_seed_k_.reset();
    slopes_.clear();
    const detail::IndexSpan span = detail::hidden_span(plan_, g);
    std::size_t ih = span.lo;
    // The binary search's probes that did not fall short lie where the visit
    // passes: their counts at the largest E are reused there, so that no
    // config is counted twice (MatchResult::evaluated stays within the space).
    std::vector<std::pair<std::size_t, Components>> probed;  // at most log2 of the hidden sizes
    const i64 e_min = plan_.experts.front(), e_max = plan_.experts.back();
    // The probes count memory and time only where nothing else is matched: otherwise the counted budgets
    // alone (memory and time at their targets) find where the visit starts, and memory and time are counted
    // for the hidden sizes visited, where the lines leave a candidate that can enter.
    const bool probe_complete = !objective_.flops && !objective_.params && !objective_.kv;
    if (top_.full()) {  // the first hidden size that does not fall short at the largest E
      std::size_t hi = span.hi;
      while (ih < hi) {
        const std::size_t mid = ih + (hi - ih) / 2;
        Components c = counted(plan_.hidden[mid], e_max, g, w);
        if (probe_complete) complete(c, plan_.hidden[mid], e_max, g, w);
        if (short_of(c)) {
          ih = mid + 1;
        } else {
          hi = mid;
          probed.emplace_back(mid, std::move(c));
        }
      }
    }
    const bool one_e = plan_.experts.size() == 1;
    for (; ih < span.hi; ++ih) {
      const i64 h = plan_.hidden[ih];
      const auto probe = std::find_if(probed.begin(), probed.end(), [&](const auto& p) { return p.first == ih; });
      const bool reuse = probe != probed.end();
      Components c0 = one_e && reuse ? probe->second : counted(h, e_min, g, w);
      if (top_.full() && over(c0)) break;  // and every wider H with it
      Components c1 = one_e ? c0 : (reuse ? probe->second : counted(h, e_max, g, w));
      if (top_.full() && short_of(c1)) continue;  // the threshold fell since the binary search
      // Memory and time counted only where the counted budgets leave a candidate that can enter: at the
      // largest E first, since a short size (skipped) is commoner than an over one (which ends the visit).
      Ends ends{true, true};
      if (objective_.memory || objective_.time) {
        if (top_.full() && lines_beyond_threshold(c0, c1)) continue;
        if (one_e) {
          if (!(reuse && probe_complete)) complete(c1, h, e_max, g, w);
          c0 = c1;
          if (top_.full() && short_of(c1)) continue;
          if (top_.full() && over(c0)) break;
        } else {
          // Memory and time at the ends are counted only where the search over E asks for them (section 7 (b'')).
          ends = {false, reuse && probe_complete};
        }
      }
      if (offer_best_e(h, g, w, c0, c1, ends)) break;  // over at the fewest experts: so is every wider H
    }
  }

  bool done(const Fraction& kv) const { return top_.full() && detail::compare(kv, top_.threshold()) > 0; }
  const std::vector<detail::Found>& sorted() const { return top_.sorted(); }
  i64 evaluated() const { return evaluated_; }
  i64 dropped() const { return dropped_; }
  i64 dropped_for_time() const { return dropped_for_time_; }
  // The smallest memory and time of a dropped candidate, for the error when none fits.
  const std::optional<i64>& smallest_dropped() const { return smallest_dropped_; }
  const std::optional<i128>& fastest_dropped() const { return fastest_dropped_; }

 private:
  // The candidate's components, memory and time at their targets: there they prune nothing (short_of() and
  // over() see no gap), so a test these pass on the counted budgets alone holds for the complete components.
  Components counted(i64 h, i64 e, const Geometry& g, i64 w) {
    ++evaluated_;
    detail::set_knobs(plan_, h, e, g, w, scratch_);
    detail::ExactBudgets b = detail::exact_budgets(scratch_, plan_.contexts, plan_.kinds);
    b.memory = target_memory_;
    b.time = target_time_;
    return objective_.components(b);
  }

  // Counts the candidate's memory and time, where matched, into `c` as counted() left it.
  void complete(Components& c, i64 h, i64 e, const Geometry& g, i64 w) {
    if (!objective_.memory && !objective_.time) return;
    detail::set_knobs(plan_, h, e, g, w, scratch_);
    // A candidate the layout cannot shard is never offered (fits()); its memory component is the target's,
    // so that it prunes nothing (docs/solver.md section 5, "Memory per GPU").
    std::size_t i = c.size() - (objective_.memory ? 1U : 0U) - (objective_.time ? 1U : 0U);
    if (objective_.memory) c[i++] = memory_of(h, e, g, w).bytes.value_or(static_cast<i64>(target_memory_));
    if (objective_.time) c[i] = time_of(h, e, g, w).value_or(target_time_);
  }

  // Whether the components at the smallest and the largest expert count hold memory and time already.
  struct Ends {
    bool first = true;
    bool last = true;
  };

  // A candidate's memory and time, each counted once per visit of its (g, w): the search, the limits and the
  // closest fitting expert count ask for the same candidates again.
  struct Figures {
    std::optional<detail::MemoryFigure> memory;
    std::optional<std::optional<i128>> time;
  };
  Figures& figures(i64 h, i64 e, const Geometry& g, i64 w) {
    return figures_[{h, e, g.heads, g.kv_heads, g.head_dim, w}];
  }
  const detail::MemoryFigure& memory_of(i64 h, i64 e, const Geometry& g, i64 w) {
    Figures& f = figures(h, e, g, w);
    if (!f.memory) {
      detail::set_knobs(plan_, h, e, g, w, scratch_);
      f.memory = detail::memory_figure(scratch_, plan_.options.memory_layout);
    }
    return *f.memory;
  }
  std::optional<i128> time_of(i64 h, i64 e, const Geometry& g, i64 w) {
    Figures& f = figures(h, e, g, w);
    if (!f.time) {
      detail::set_knobs(plan_, h, e, g, w, scratch_);
      f.time = detail::training_attoseconds(scratch_, *plan_.hardware, plan_.options);
    }
    return *f.time;
  }

  Components components(i64 h, i64 e, const Geometry& g, i64 w) {
    Components c = counted(h, e, g, w);
    complete(c, h, e, g, w);
    return c;
  }

  // Whether every candidate of one (H, g, w) has a largest mismatch above the threshold by the components
  // that are lines in the expert index k alone, from their values at the smallest (c0) and largest (c1)
  // expert count (the others, memory and time, may be at their targets): each line's mismatch at every k is
  // a lower bound on that candidate's largest, and their largest is convex in k, so smallest at its
  // rightmost minimiser.
  bool lines_beyond_threshold(const Components& c0, const Components& c1) const {
    const i64 n = static_cast<i64>(plan_.experts.size());
    std::vector<i128> step(c0.size(), 0);
    for (std::size_t i = 0; i < c0.size() && n > 1; ++i) {
      if (non_affine(i)) continue;
      if ((c1[i] - c0[i]) % (n - 1) != 0) return false;  // not a line: no bound (section 7 (b))
      step[i] = (c1[i] - c0[i]) / (n - 1);
    }
    const auto line_max = [&](i64 k) {
      Fraction worst{0, 1};
      for (std::size_t i = 0; i < c0.size(); ++i)
        if (!non_affine(i))
          if (const Fraction f = detail::gap(c0[i] + k * step[i], goal_[i]); detail::compare(f, worst) > 0) worst = f;
      return worst;
    };
    return detail::compare(line_max(rightmost_minimiser(n, line_max)), top_.threshold()) > 0;
  }

  // Whether the candidate fits the memory and time limits and the layout can shard it; remembers the
  // smallest memory and time of those that do not.
  bool fits(i64 h, i64 e, const Geometry& g, i64 w) {
    detail::set_knobs(plan_, h, e, g, w, scratch_);
    over_limit_ = over_time_ = false;
    last_bytes_.reset();
    if (gate_ == Gate::shards) return detail::shardable(scratch_, plan_.options.memory_layout);
    const MatchOptions& o = plan_.options;
    if (o.memory_limit.bytes > 0 || objective_.memory) {
      const detail::MemoryFigure& m = memory_of(h, e, g, w);
      last_bytes_ = m.bytes;
      over_limit_ = m.bytes && o.memory_limit.bytes > 0 && *m.bytes > o.memory_limit.bytes;
      if (!detail::fits(m, o)) {
        if (m.bytes && (!smallest_dropped_ || *m.bytes < *smallest_dropped_)) smallest_dropped_ = m.bytes;
        return false;
      }
    } else if (!detail::shardable(scratch_, o.memory_layout)) {
      return false;
    }
    if (o.time_limit > 0) {
      const std::optional<i128> t = time_of(h, e, g, w);
      if (!t) return false;
      const i128 as = *t;
      if (as > time_ceiling_) {
        over_limit_ = over_time_ = true;
        if (!fastest_dropped_ || as < *fastest_dropped_) fastest_dropped_ = as;
        return false;
      }
    }
    return true;
  }

  // Offers `f`, or under a memory or time limit the closest candidate of its (H, g, w)
  // that fits: memory and time do not fall as the expert count k rises, and below
  // the best k the objective only worsens as k falls, so that is the largest
  // fitting k below it (`score_at` scores an index of Plan::experts).
  // Returns whether even the fewest experts exceed a limit: memory and time do
  // not fall as H rises either, so then no wider H of this (g, w) fits.
  template <class ScoreAt>
  bool offer(detail::Found f, i64 best_k, ScoreAt score_at) {
    if (!checked_) {
      top_.offer(f);
      return false;
    }
    if (!top_.admits(f)) return false;
    if (fits(f.hidden, f.experts, f.geometry, f.expert_width)) {
      top_.offer(f);
      return false;
    }
    ++(over_time_ ? dropped_for_time_ : dropped_);
    const std::optional<i64> over_at_best = last_bytes_;
    if (best_k == 0 || !fits(f.hidden, plan_.experts.front(), f.geometry, f.expert_width)) return over_limit_;
    const auto fits_at = [&](i64 k) {
      return fits(f.hidden, plan_.experts[static_cast<std::size_t>(k)], f.geometry, f.expert_width);
    };
    i64 lo = 0, hi = best_k - 1;  // experts[lo] fits; experts[hi + 1] does not
    // Memory is close to affine in k: the line through the fewest experts and best_k guesses the last k that
    // fits, and two counts there (it fits, the next does not) settle it where the guess is right. The
    // bisection after it is exact whatever the guess.
    if (plan_.options.memory_limit.bytes > 0 && over_at_best && last_bytes_ && *over_at_best > *last_bytes_) {
      const i128 room = i128{plan_.options.memory_limit.bytes} - *last_bytes_;
      const i64 guess = std::clamp(static_cast<i64>(room * best_k / (i128{*over_at_best} - *last_bytes_)), lo, hi);
      if (guess > lo) {
        if (fits_at(guess))
          lo = guess;
        else
          hi = guess - 1;
      }
      if (lo == guess && guess < hi) {
        if (fits_at(guess + 1))
          lo = guess + 1;
        else
          hi = guess;
      }
    }
    while (lo < hi) {
      const i64 mid = lo + (hi - lo + 1) / 2;
      if (fits_at(mid))
        lo = mid;
      else
        hi = mid - 1;
    }
    f.experts = plan_.experts[static_cast<std::size_t>(lo)];
    f.score = score_at(lo);
    if (top_.admits(f)) top_.offer(f);
    return false;
  }

  bool short_of(const Components& at_largest_e) const {
    const Fraction& theta = top_.threshold();
    for (std::size_t i = 0; i < goal_.size(); ++i)
      if (at_largest_e[i] < goal_[i] && detail::compare(detail::gap(at_largest_e[i], goal_[i]), theta) > 0) return true;
    return false;
  }
  bool over(const Components& at_smallest_e) const {
    const Fraction& theta = top_.threshold();
    for (std::size_t i = 0; i < goal_.size(); ++i)
      if (at_smallest_e[i] > goal_[i] && detail::compare(detail::gap(at_smallest_e[i], goal_[i]), theta) > 0)
        return true;
    return false;
  }

  // The best expert count of one (H, g, w), from its components at the
  // smallest (c0) and the largest (c1) expert count, offered to the top list;
  // true where the fewest experts exceed the memory limit (offer()).
  bool offer_best_e(i64 h, const Geometry& g, i64 w, const Components& c0, const Components& c1, Ends ends) {
    const i64 n = static_cast<i64>(plan_.experts.size());
    // Each component is affine in the expert index k: c0 + k * step. Memory and
    // time are not (the most loaded pipeline stage can change with E, sharded
    // optimizer state rounds up, GEMM efficiency follows the rows per expert).
    std::vector<i128> step(c0.size(), 0);
    std::vector<bool> line(c0.size(), true);
    bool affine = true;
    for (std::size_t i = 0; i < c0.size() && n > 1; ++i) {
      line[i] = !non_affine(i) && (c1[i] - c0[i]) % (n - 1) == 0;
      affine = affine && line[i];
      step[i] = (c1[i] - c0[i]) / (n - 1);
    }
    if (!affine) {
      std::map<i64, Components> seen;
      auto [best, k] = best_counted_e(h, g, w, c0, c1, ends, step, line, seen);
      // The fewest experts over a target by more than the threshold: so is every wider H (section 7 (d)).
      if (const auto first = seen.find(0); top_.full() && first != seen.end() && over(first->second)) return true;
      return offer(std::move(best), k, [&](i64 j) {
        if (const auto it = seen.find(j); it != seen.end()) return objective_.score(it->second, goal_);
        seen.emplace(j, complete_at(h, g, w, j, c0, c1));  // counted now
        return objective_.score(seen.at(j), goal_);
      });
    }
    const auto at = [&](i64 k) {
      Components c = c0;
      for (std::size_t i = 0; i < c.size(); ++i) c[i] += k * step[i];
      return c;
    };
    // The largest mismatch among the components that move with E. Those that
    // do not are the same for every k and cannot change the order of two k.
    // Component by component, with no list built: the binary search calls it
    // twice a step for every (H, g, w).
    const auto moving_max = [&](i64 k) {
      Fraction worst{0, 1};
      for (std::size_t i = 0; i < c0.size(); ++i)
        if (step[i] != 0)
          if (const Fraction f = detail::gap(c0[i] + k * step[i], goal_[i]); detail::compare(f, worst) > 0) worst = f;
      return worst;
    };
    const i64 lo = rightmost_minimiser(n, moving_max);
    // A convex sequence of maxima of non-constant |affine| terms is minimal
    // at one k or at two neighbours; between two, the full score decides.
    detail::Score best = objective_.score(at(lo), goal_);
    i64 best_k = lo;
    if (lo > 0 && detail::compare(moving_max(lo - 1), moving_max(lo)) == 0) {
      detail::Score left = objective_.score(at(lo - 1), goal_);
      if (detail::compare(left, best) < 0) best = std::move(left), best_k = lo - 1;
    }
    return offer({std::move(best), h, plan_.experts[static_cast<std::size_t>(best_k)], g, w}, best_k,
                 [&](i64 k) { return objective_.score(at(k), goal_); });
  }

  // Whether component i is memory or time (Objective::components puts them last, in that order).
  bool non_affine(std::size_t i) const {
    const std::size_t tail = (objective_.memory ? 1U : 0U) + (objective_.time ? 1U : 0U);
    return i + tail >= goal_.size();
  }

  // The complete components (memory and time counted) at expert index j of one (H, g, w), the lines' counts at
  // the ends reused there so that no config is counted twice.
  Components complete_at(i64 h, const Geometry& g, i64 w, i64 j, const Components& c0, const Components& c1) {
    const i64 n = static_cast<i64>(plan_.experts.size());
    const i64 e = plan_.experts[static_cast<std::size_t>(j)];
    if (j != 0 && j != n - 1) return components(h, e, g, w);
    Components c = j == 0 ? c0 : c1;
    complete(c, h, e, g, w);
    return c;
  }

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
  std::pair<detail::Found, i64> best_counted_e(i64 h, const Geometry& g, i64 w, const Components& c0,
                                               const Components& c1, Ends ends, const std::vector<i128>& step,
                                               const std::vector<bool>& line, std::map<i64, Components>& seen) {
    const i64 n = static_cast<i64>(plan_.experts.size());
    const auto line_max = [&](i64 k) {
      Fraction worst{0, 1};
      for (std::size_t i = 0; i < goal_.size(); ++i)
        if (line[i] && step[i] != 0)
          if (const Fraction f = detail::gap(c0[i] + k * step[i], goal_[i]); detail::compare(f, worst) > 0) worst = f;
      return worst;
    };
    const i64 line_best = rightmost_minimiser(n, line_max);
    // The lines E does not move: the same mismatch at every k, a lower bound on each one's largest.
    Fraction fixed{0, 1};
    for (std::size_t i = 0; i < goal_.size(); ++i)
      if (line[i] && step[i] == 0)
        if (const Fraction f = detail::gap(c0[i], goal_[i]); detail::compare(f, fixed) > 0) fixed = f;
    const auto less = [](const Fraction& x, const Fraction& y) { return detail::compare(x, y) < 0; };
    seen.clear();
    if (ends.first) seen.emplace(0, c0);
    if (ends.last) seen.emplace(n - 1, c1);
    detail::TopCandidates best(plan_, 1);
    const auto offer_k = [&](i64 k, const Components& c) {
      best.offer({objective_.score(c, goal_), h, plan_.experts[static_cast<std::size_t>(k)], g, w});
    };
    for (const auto& [k, c] : seen) offer_k(k, c);
    for (;;) {
      // The gaps between the counted indices, and below the lowest and above the highest (a = -1, b = n).
      std::optional<Fraction> lowest;
      i64 gap_a = 0, gap_b = 0;
      auto a = seen.end();
      for (auto b = seen.begin();; ++b) {
        const i64 ka = a == seen.end() ? -1 : a->first, kb = b == seen.end() ? n : b->first;
        if (kb > ka + 1) {
          Fraction bound = line_max(std::clamp(line_best, ka + 1, kb - 1));
          for (std::size_t i = 0; i < goal_.size(); ++i) {
            if (line[i]) continue;
            const Fraction f = a != seen.end() && goal_[i] < a->second[i]   ? detail::gap(a->second[i], goal_[i])
                               : b != seen.end() && goal_[i] > b->second[i] ? detail::gap(b->second[i], goal_[i])
                                                                            : Fraction{0, 1};
            if (detail::compare(f, bound) > 0) bound = f;
          }
          if (!lowest || detail::compare(bound, *lowest) < 0) lowest = bound, gap_a = ka, gap_b = kb;
        }
        if (b == seen.end()) break;
        a = b;
      }
      if (!lowest) break;
      if (!best.sorted().empty() && detail::compare(*lowest, best.sorted().front().score.front()) > 0) break;
      // Nor where no candidate left can enter the top list: then the best counted is this (H, g, w)'s best or
      // cannot enter either, as the best cannot.
      if (top_.full() && detail::compare(std::max(*lowest, fixed, less), top_.threshold()) > 0) break;
      const i64 next = count_point(gap_a, gap_b, seen, line, line_max);
      const Components c = complete_at(h, g, w, next, c0, c1);
      offer_k(next, c);
      seen.emplace(next, c);
    }
    const detail::Found& found = best.sorted().front();
    const auto k = std::lower_bound(plan_.experts.begin(), plan_.experts.end(), found.experts) - plan_.experts.begin();
    remember_slopes(static_cast<i64>(k), seen, line);
    return {found, static_cast<i64>(k)};
  }

  // After a search over E: where its best lies and each component's slope there (between the best and the
  // counted index next to it), for the next hidden size of the visit to start from (count_point()).
  void remember_slopes(i64 k, const std::map<i64, Components>& seen, const std::vector<bool>& line) {
    prev_seed_k_ = seed_k_;
    seed_k_ = k;
    const auto at = seen.find(k);
    auto next = std::next(at);
    if (next == seen.end()) {
      if (at == seen.begin()) return;
      next = std::prev(at);
    }
    slopes_.assign(goal_.size(), {0, 0});
    for (std::size_t i = 0; i < goal_.size(); ++i)
      if (!line[i]) slopes_[i] = {next->second[i] - at->second[i], next->first - at->first};
  }

  // Where to count in the gap between the indices a and b (-1 and n where nothing is counted below or above):
  // the k whose estimated largest mismatch is smallest, each component that is not a line taken on its chord
  // from a to b (memory and time are close to affine in k). An end that is not counted is extrapolated with the
  // slopes the visit's previous hidden size left; without them it is counted itself. Any k of the gap keeps the
  // search exact, since its bound covers the whole gap; this one finds the best in a few counts where the chords
  // are close (the lines' minimiser alone, for memory or time matched alone, walked the gap one expert count at
  // a time).
  template <class LineMax>
  i64 count_point(i64 a, i64 b, const std::map<i64, Components>& seen, const std::vector<bool>& line,
                  const LineMax& line_max) const {
    const i64 n = static_cast<i64>(plan_.experts.size());
    const bool have_a = a >= 0, have_b = b < n;
    // The best index moves as H grows (down, where memory or time rises with H): where the last two hidden sizes'
    // bests say it is now.
    const std::optional<i64> guess =
        seed_k_ ? std::optional<i64>(std::clamp(2 * *seed_k_ - prev_seed_k_.value_or(*seed_k_), i64{0}, n - 1))
                : std::nullopt;
    if (!have_a && !have_b) return guess.value_or(n - 1);
    if (!have_a || !have_b) {
      if (guess && *guess > a && *guess < b) return *guess;
      if (slopes_.empty()) return have_a ? n - 1 : 0;
    }
    // Each end's values: counted, or extrapolated from the other with the remembered slopes.
    const auto values = [&](i64 at, i64 from) {
      if (const auto it = seen.find(at); it != seen.end()) return it->second;
      Components c = seen.at(from);
      for (std::size_t i = 0; i < c.size(); ++i)
        if (!line[i] && slopes_[i].second != 0) c[i] += slopes_[i].first * (at - from) / slopes_[i].second;
      return c;
    };
    const Components va = values(a, have_a ? a : b), vb = values(b, have_b ? b : a);
    const i128 span = b - a;
    const auto estimate = [&](i64 k) {
      Fraction worst = line_max(k);
      for (std::size_t i = 0; i < goal_.size(); ++i) {
        if (line[i]) continue;
        // The chord at k times span, against the target times span: |chord - t| / t, exactly.
        const i128 chord = va[i] * span + (vb[i] - va[i]) * (k - a);
        const i128 target = goal_[i] * span;
        const Fraction f{chord > target ? chord - target : target - chord, goal_[i] > 0 ? target : span};
        if (detail::compare(f, worst) > 0) worst = f;
      }
      return worst;
    };
    return rightmost_minimiser(a + 1, b - 1, estimate);
  }

  const detail::Plan& plan_;
  const detail::Objective objective_;
  const Components goal_;
  ModelConfig scratch_;
  detail::TopCandidates top_;
  i128 target_memory_;
  i128 target_time_;
  i128 time_ceiling_;  // the largest training attoseconds per token under the time limit
  Gate gate_;
  bool checked_;                                                         // gate_ is not none
  std::map<std::tuple<i64, i64, i64, i64, i64, i64>, Figures> figures_;  // of the (g, w) visited
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
};

}  // namespace

MatchResult solve(const ModelConfig& baseline, const LoopRecipe& recipe, const SearchSpace& space,
                  const MatchOptions& options) {
  return solve(CheckedConfig(baseline), recipe, space, options);
}

MatchResult solve(const CheckedConfig& baseline, const LoopRecipe& recipe, const SearchSpace& space,
                  const MatchOptions& options) {
  const detail::Plan plan = detail::make_plan(baseline, recipe, space, options);
  const ExactBudgets target = detail::search_target(baseline, plan);
  // Under limits alone (memory, time), the search over what the layout shards first: when every candidate it
  // keeps fits, they are the best that fit too, and the limits were checked for them alone (docs/solver.md
  // section 5, "Memory per GPU").
  using Gate = Search::Gate;
  const detail::Objective objective(plan.options);
  const bool limited = plan.options.memory_limit.bytes > 0 || plan.options.time_limit > 0;
  std::optional<Search> search(
      std::in_place, plan, target,
      objective.memory ? Gate::limits : (limited || objective.time ? Gate::shards : Gate::none));
  search->run(target);
  if (limited && !objective.memory && !detail::all_fit(plan, search->sorted(), target)) {
    search.emplace(plan, target, Gate::limits);
    search->run(target);
  }
  if (search->sorted().empty())
    detail::throw_none_fits(plan, search->smallest_dropped(), search->fastest_dropped(), target);
  MatchResult result = detail::build_result(plan, search->sorted(), target, search->evaluated());
  result.dropped_for_memory = search->dropped();
  result.dropped_for_time = search->dropped_for_time();
  return detail::with_relaxations(std::move(result), baseline, recipe, space, options,
                                  [](const CheckedConfig& b, const LoopRecipe& r, const SearchSpace& s,
                                     const MatchOptions& o) { return solve(b, r, s, o); });
}

}  // namespace smelt
