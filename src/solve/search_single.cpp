// The best expert count of one (H, geometry, width) where memory or time is the one matched budget
// (docs/solver.md section 7 (b‴)): the figure does not fall as E rises, so the best is one of the two
// indices around the target (closest_index()), placed by where the visit's last hidden sizes crossed it.
#include "solve/search.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "solve/closest_index.hpp"

namespace smelt::solve_detail {

using namespace smelt::detail;  // the helpers every module shares

std::pair<solve_detail::Found, Search::i64> Search::best_single_e(i64 h, const Geometry& g, i64 w, const Components& c0,
                                                                  const Components& c1, Ends ends,
                                                                  std::map<i64, Components>& seen) {
  const i64 n = static_cast<i64>(plan_.experts.size());
  const i128 t = goal_.front();
  seen.clear();
  if (ends.first) seen.emplace(0, c0);
  if (ends.last) seen.emplace(n - 1, c1);
  std::vector<std::pair<i64, i128>> known;
  for (const auto& [k, c] : seen) known.emplace_back(k, c.front());
  ClosestHints hints;
  // The crossing moves with H: extrapolated from the visit's last two hidden sizes, where the ends are far.
  if (cross_) hints.first = static_cast<i64>(std::floor(prev_cross_ ? 2 * *cross_ - *prev_cross_ : *cross_));
  if (!slopes_.empty()) hints.slope_value = slopes_.front().first, hints.slope_steps = slopes_.front().second;
  const auto value = [&](i64 k) {
    auto it = seen.find(k);
    if (it == seen.end()) it = seen.emplace(k, complete_at(h, g, w, k, c0, c1)).first;
    return it->second.front();
  };
  const Crossing c = closest_index(n, t, known, hints, value, [&](const Fraction& gap) {
    return top_.full() && compare(gap, top_.threshold()) > 0;
  });
  prev_cross_ = cross_;  // where the target was crossed, in fractions of an index
  cross_ = c.lo >= 0 && c.hi < n && c.lo < c.hi
               ? static_cast<double>(c.lo) + static_cast<double>(t - c.f_lo) / static_cast<double>(c.f_hi - c.f_lo)
               : static_cast<double>(std::max<i64>(c.lo, 0));
  const i64 k = std::max<i64>(c.best, 0);
  value(k);  // evaluated already, save where a sequence that fell left none
  remember_slopes(k, seen, std::vector<bool>(goal_.size(), false));
  return {{objective_.score(seen.at(k), goal_), h, plan_.experts[static_cast<std::size_t>(k)], g, w}, k};
}

}  // namespace smelt::solve_detail
