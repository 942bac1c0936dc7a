// closest_index(): the index of a non-decreasing sequence closest to a target, the largest on ties, against
// hand-worked sequences and brute force over random step sequences with plateaus, ties, wrong hints and
// indices known in advance (docs/solver.md section 7 (b‴)).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "solve/closest_index.hpp"

using namespace smelt;
using solve_detail::ClosestHints;
using solve_detail::i128;

namespace {

struct ClosestRun {
  std::int64_t best;
  std::size_t evaluated;  // distinct indices
};

ClosestRun closest_run(const std::vector<std::int64_t>& f, std::int64_t t, ClosestHints hints = {},
                       const std::vector<std::int64_t>& known = {}, bool cannot_enter = false) {
  std::set<std::int64_t> seen;
  std::vector<std::pair<std::int64_t, i128>> given;
  for (const std::int64_t k : known) given.emplace_back(k, f[static_cast<std::size_t>(k)]);
  const auto value = [&](std::int64_t k) {
    REQUIRE(k >= 0);
    REQUIRE(k < static_cast<std::int64_t>(f.size()));
    seen.insert(k);
    return i128{f[static_cast<std::size_t>(k)]};
  };
  const solve_detail::Crossing c =
      solve_detail::closest_index(static_cast<std::int64_t>(f.size()), t, given, hints, value,
                                  [&](const solve_detail::Fraction&) { return cannot_enter; });
  return {c.best, seen.size()};
}

// Brute force: the smallest |f - t|, the largest index on ties.
std::int64_t closest_brute(const std::vector<std::int64_t>& f, std::int64_t t) {
  std::int64_t best = 0;
  for (std::int64_t k = 0; k < static_cast<std::int64_t>(f.size()); ++k) {
    const std::int64_t d = std::llabs(f[static_cast<std::size_t>(k)] - t);
    if (d <= std::llabs(f[static_cast<std::size_t>(best)] - t)) best = k;
  }
  return best;
}

}  // namespace

TEST_CASE("closest_index: the nearest value, the last of a plateau, the larger index on a tie", "[solve][closest]") {
  // |f - t| for t = 24: 14, 4, 4, 4, 6: the plateau at 20 below, its last index.
  const std::vector<std::int64_t> below{10, 20, 20, 20, 30};
  CHECK(closest_run(below, 24).best == 3);
  // t = 25: 15, 5, 5, 5, 5: every index but the first ties; the largest wins, the one above.
  CHECK(closest_run(below, 25).best == 4);
  // t = 26: 16, 6, 4, 4, 4, 14: the plateau at 30 above the target, its last index, found by walking it.
  const std::vector<std::int64_t> above{10, 20, 30, 30, 30, 40};
  CHECK(closest_run(above, 26).best == 4);
  // t = 25: 15, 5, 5, 5, 5, 15: the tie between 20 below and the plateau at 30 goes to its last index.
  CHECK(closest_run(above, 25).best == 4);
  // Where an index that far off is of no use, the plateau is not walked: its first index, as good.
  CHECK(closest_run(above, 26, {}, {}, true).best == 2);
  // Every value below the target: the last index; every one above: the first.
  CHECK(closest_run(above, 100).best == 5);
  CHECK(closest_run(above, 1).best == 0);
  // A plateau above the target that reaches the end: its last index.
  CHECK(closest_run({1, 5, 9, 9, 9, 9, 9}, 8).best == 6);
}

TEST_CASE("closest_index: an affine sequence and a good hint take two or three evaluations", "[solve][closest]") {
  std::vector<std::int64_t> f;
  for (std::int64_t k = 0; k < 1000; ++k) f.push_back(1000 + 37 * k);
  // t = 20,000 lies between k = 513 (1,000 + 37 x 513 = 19,981, 19 below) and k = 514 (20,018, 18 above).
  CHECK(1000 + 37 * 513 == 19981);
  const ClosestHints off_by_three{.first = 510, .slope_value = 37, .slope_steps = 1};
  const ClosestHints right{.first = 513, .slope_value = 37, .slope_steps = 1};
  // 510 (19,870: 130 below, 130 / 37 = 3.5 indices), then the slope's 513, then 514 above it.
  const ClosestRun r = closest_run(f, 20000, off_by_three, {}, true);
  CHECK(r.best == 514);
  CHECK(r.evaluated == 3);
  CHECK(closest_run(f, 20000, right, {}, true).evaluated == 2);
  // Where 514 could still enter the list, 515 is evaluated too: a plateau at 20,018 would tie and win.
  CHECK(closest_run(f, 20000, off_by_three).evaluated == 4);
  CHECK(closest_run(f, 20000, right).evaluated == 3);
}

TEST_CASE("closest_index equals brute force on 20,000 random step sequences", "[solve][closest]") {
  std::mt19937_64 rng(20261207);
  const auto uniform = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  std::size_t worst = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    const std::int64_t n = uniform(1, trial % 10 == 0 ? 2000 : 60);
    std::vector<std::int64_t> f;
    std::int64_t v = uniform(0, 100);
    for (std::int64_t k = 0; k < n; ++k) {
      f.push_back(v);
      // Flat steps (plateaus) one time in three, else a rise near a slope, now and then a jump.
      const std::int64_t r = uniform(0, 8);
      v += r < 3 ? 0 : (r < 8 ? uniform(5, 9) : uniform(10, 400));
    }
    // Targets on values, midway between two (ties), inside and outside the range.
    const std::size_t i = static_cast<std::size_t>(uniform(0, n - 1)), j = std::min(f.size() - 1, i + 1);
    const std::int64_t choice = uniform(0, 4);
    const std::int64_t t = choice == 0   ? f[i]
                           : choice == 1 ? (f[i] + f[j]) / 2
                           : choice == 2 ? f[i] + uniform(-20, 20)
                           : choice == 3 ? f.front() - uniform(0, 50)
                                         : f.back() + uniform(0, 50);
    if (t <= 0) continue;
    ClosestHints hints;
    if (uniform(0, 3) > 0) hints.first = uniform(-5, n + 5);
    if (uniform(0, 2) > 0) hints.slope_value = uniform(-10, 50), hints.slope_steps = uniform(-3, 3);
    std::vector<std::int64_t> known;
    if (uniform(0, 2) == 0) known.push_back(0);
    if (uniform(0, 2) == 0) known.push_back(n - 1);
    INFO("trial " << trial << ", n " << n << ", t " << t);
    const ClosestRun r = closest_run(f, t, hints, known);
    REQUIRE(r.best == closest_brute(f, t));
    // At worst about three evaluations per halving, and the plateau's walk: logarithmic in n.
    const std::size_t bound = 6 * static_cast<std::size_t>(std::ceil(std::log2(static_cast<double>(n) + 1))) + 6;
    REQUIRE(r.evaluated <= bound);
    worst = std::max(worst, r.evaluated);
  }
  CHECK(worst > 10);  // the bound is met with room, not by sequences too easy to need it
}
