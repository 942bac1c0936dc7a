// What the solver tests share: the error lines a solve raises, and a seeded
// random source for the property tests.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "smelt/error.hpp"
#include "smelt/solve.hpp"

namespace smelt::test {

// The lines of the config_error solve() raises; empty when it raises none.
inline std::vector<std::string> solve_errors(const ModelConfig& b, const LoopRecipe& r, const SearchSpace& s,
                                             const MatchOptions& o = {}) {
  try {
    (void)solve(b, r, s, o);
  } catch (const config_error& e) {
    return e.lines();
  }
  return {};
}

// The same for a Baseline's default recipe and options in the space `s`.
inline std::vector<std::string> space_errors(const ModelConfig& b, const SearchSpace& s) {
  return solve_errors(b, {}, s);
}

// A fixed-seed source: every run draws the same Baselines and spaces.
struct Random {
  std::mt19937_64 engine;
  explicit Random(std::uint64_t seed) : engine(seed) {}
  std::int64_t in(std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(engine);
  }
  bool coin() { return in(0, 1) == 1; }
};

}  // namespace smelt::test
