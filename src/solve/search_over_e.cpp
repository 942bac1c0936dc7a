// The best expert count of one (H, geometry, width): by binary search where every budget is a line in the
// expert index, by bounds over the gaps between counted indices where memory or time is matched (docs/solver.md
// section 7 (b), (b′), (b′′)), and the offer of it under the limits.
#include "solve/search.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include "solve/convex.hpp"

namespace smelt::solve_detail {

using namespace smelt::detail;  // the helpers every module shares
namespace {

using i64 = Search::i64;

}  // namespace

template <class ScoreAt>
bool Search::offer(solve_detail::Found f, i64 best_k, ScoreAt score_at) {
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

bool Search::offer_best_e(i64 h, const Geometry& g, i64 w, const Components& c0, const Components& c1, Ends ends) {
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
    auto [best, k] = goal_.size() == 1 ? best_single_e(h, g, w, c0, c1, ends, seen)
                                       : best_counted_e(h, g, w, c0, c1, ends, step, line, seen);
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
        if (const Fraction f = solve_detail::gap(c0[i] + k * step[i], goal_[i]); solve_detail::compare(f, worst) > 0)
          worst = f;
    return worst;
  };
  const i64 lo = rightmost_minimiser(n, moving_max);
  // A convex sequence of maxima of non-constant |affine| terms is minimal
  // at one k or at two neighbours; between two, the full score decides.
  solve_detail::Score best = objective_.score(at(lo), goal_);
  i64 best_k = lo;
  if (lo > 0 && solve_detail::compare(moving_max(lo - 1), moving_max(lo)) == 0) {
    solve_detail::Score left = objective_.score(at(lo - 1), goal_);
    if (solve_detail::compare(left, best) < 0) best = std::move(left), best_k = lo - 1;
  }
  return offer({std::move(best), h, plan_.experts[static_cast<std::size_t>(best_k)], g, w}, best_k,
               [&](i64 k) { return objective_.score(at(k), goal_); });
}

Search::Components Search::complete_at(i64 h, const Geometry& g, i64 w, i64 j, const Components& c0,
                                       const Components& c1) {
  const i64 n = static_cast<i64>(plan_.experts.size());
  const i64 e = plan_.experts[static_cast<std::size_t>(j)];
  if (j != 0 && j != n - 1) return components(h, e, g, w);
  Components c = j == 0 ? c0 : c1;
  complete(c, h, e, g, w);
  return c;
}

std::pair<solve_detail::Found, i64> Search::best_counted_e(i64 h, const Geometry& g, i64 w, const Components& c0,
                                                           const Components& c1, Ends ends,
                                                           const std::vector<i128>& step, const std::vector<bool>& line,
                                                           std::map<i64, Components>& seen) {
  const i64 n = static_cast<i64>(plan_.experts.size());
  const auto line_max = [&](i64 k) {
    Fraction worst{0, 1};
    for (std::size_t i = 0; i < goal_.size(); ++i)
      if (line[i] && step[i] != 0)
        if (const Fraction f = solve_detail::gap(c0[i] + k * step[i], goal_[i]); solve_detail::compare(f, worst) > 0)
          worst = f;
    return worst;
  };
  const i64 line_best = rightmost_minimiser(n, line_max);
  // The lines E does not move: the same mismatch at every k, a lower bound on each one's largest.
  Fraction fixed{0, 1};
  for (std::size_t i = 0; i < goal_.size(); ++i)
    if (line[i] && step[i] == 0)
      if (const Fraction f = solve_detail::gap(c0[i], goal_[i]); solve_detail::compare(f, fixed) > 0) fixed = f;
  const auto less = [](const Fraction& x, const Fraction& y) { return solve_detail::compare(x, y) < 0; };
  seen.clear();
  if (ends.first) seen.emplace(0, c0);
  if (ends.last) seen.emplace(n - 1, c1);
  solve_detail::TopCandidates best(plan_, 1);
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
          const Fraction f = a != seen.end() && goal_[i] < a->second[i]   ? solve_detail::gap(a->second[i], goal_[i])
                             : b != seen.end() && goal_[i] > b->second[i] ? solve_detail::gap(b->second[i], goal_[i])
                                                                          : Fraction{0, 1};
          if (solve_detail::compare(f, bound) > 0) bound = f;
        }
        if (!lowest || solve_detail::compare(bound, *lowest) < 0) lowest = bound, gap_a = ka, gap_b = kb;
      }
      if (b == seen.end()) break;
      a = b;
    }
    if (!lowest) break;
    if (!best.sorted().empty() && solve_detail::compare(*lowest, best.sorted().front().score.front()) > 0) break;
    // Nor where no candidate left can enter the top list: then the best counted is this (H, g, w)'s best or
    // cannot enter either, as the best cannot.
    if (top_.full() && solve_detail::compare(std::max(*lowest, fixed, less), top_.threshold()) > 0) break;
    const i64 next = count_point(gap_a, gap_b, seen, line, line_max);
    const Components c = complete_at(h, g, w, next, c0, c1);
    offer_k(next, c);
    seen.emplace(next, c);
  }
  const solve_detail::Found& found = best.sorted().front();
  const auto k = std::lower_bound(plan_.experts.begin(), plan_.experts.end(), found.experts) - plan_.experts.begin();
  remember_slopes(static_cast<i64>(k), seen, line);
  return {found, static_cast<i64>(k)};
}

void Search::remember_slopes(i64 k, const std::map<i64, Components>& seen, const std::vector<bool>& line) {
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

template <class LineMax>
i64 Search::count_point(i64 a, i64 b, const std::map<i64, Components>& seen, const std::vector<bool>& line,
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
      if (solve_detail::compare(f, worst) > 0) worst = f;
    }
    return worst;
  };
  return rightmost_minimiser(a + 1, b - 1, estimate);
}

}  // namespace smelt::solve_detail
