// Relaxations, computed: when the best candidate misses the tolerance, each
// single relaxation of the declared space or recipe is solved again and its
// best largest mismatch reported (docs/solver.md section 8).
#pragma once

#include <string>

#include "smelt/error.hpp"
#include "smelt/solve.hpp"

namespace smelt::solve_detail {

using namespace smelt::detail;  // the helpers every module shares

using Solver = MatchResult (*)(const CheckedConfig&, const LoopRecipe&, const SearchSpace&, const MatchOptions&);

// `result` with MatchResult::relaxations filled when it misses the tolerance and
// options.relaxations is set; each relaxed space is solved by `solver` (top = 1,
// relaxations off), so solve() and solve_brute_force() report the same list.
MatchResult with_relaxations(MatchResult result, const CheckedConfig& baseline, const LoopRecipe& recipe,
                             const SearchSpace& space, const MatchOptions& options, Solver solver);

// A config_error's lines joined by "; ": a refused relaxation's error, or why
// the layout cannot shard a candidate (memory_figure, time_figure).
std::string joined(const config_error& e);

}  // namespace smelt::solve_detail
