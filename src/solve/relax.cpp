#include "solve/relax.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "smelt/error.hpp"

namespace smelt::solve_detail {

using namespace smelt::detail;  // the helpers every module shares
namespace {

using i64 = std::int64_t;

// One relaxation to try: the changed fields, and the space and recipe they give.
struct Trial {
  std::vector<FieldChange> changes;
  SearchSpace space;
  LoopRecipe recipe;
};

// A finer alignment: half the current one, rounded down (8 -> 4, 3 -> 1).
i64 finer(i64 align) { return align / 2; }

// The single relaxations of the declared space and recipe, in the fixed order
// that breaks ties between equal mismatches (docs/solver.md section 8). Those
// that do not apply (an alignment already 1, a knob the Baseline lacks, a
// range that is already the default) are left out.
std::vector<Trial> trials(const ModelConfig& b, const LoopRecipe& recipe, const SearchSpace& space,
                          const LoopConfig& loop) {
  std::vector<Trial> out;
  const auto add = [&](std::vector<FieldChange> changes, auto change) {
    Trial t{std::move(changes), space, recipe};
    change(t.space, t.recipe);
    out.push_back(std::move(t));
  };
  const bool gqa = b.attention.type == AttentionType::gqa;
  const bool searched = space.ffn == FfnScaling::searched;
  const auto align = [&](const char* field, i64 SearchSpace::*member, bool applies) {
    if (!applies || space.*member < 2) return;
    const i64 a = finer(space.*member);
    add({{field, fmt::format("{}", a)}}, [&](SearchSpace& s, LoopRecipe&) { s.*member = a; });
  };
  align("SearchSpace::align_hidden", &SearchSpace::align_hidden, true);
  align("SearchSpace::align_experts", &SearchSpace::align_experts, b.is_moe());
  align("SearchSpace::align_head_dim", &SearchSpace::align_head_dim, gqa);
  align("SearchSpace::align_ffn", &SearchSpace::align_ffn, searched);
  if (gqa) {
    // A wider head_dim range: a pinned or ranged head_dim goes back to the
    // default domain; the default domain reaches down to half the smallest size.
    if (space.head_dim)
      add({{"SearchSpace::head_dim", "default"}}, [](SearchSpace& s, LoopRecipe&) { s.head_dim.reset(); });
    else if (space.min_head_dim > 1) {
      const i64 m = space.min_head_dim / 2;
      add({{"SearchSpace::min_head_dim", fmt::format("{}", m)}},
          [&](SearchSpace& s, LoopRecipe&) { s.min_head_dim = m; });
    }
    if (space.kv_heads)
      add({{"SearchSpace::kv_heads", "default"}}, [](SearchSpace& s, LoopRecipe&) { s.kv_heads.reset(); });
    // Free query heads: drop a pinned `heads`, or set free_heads back to true
    // (the two are never given together: that is a contradiction).
    if (space.heads || !space.free_heads) {
      std::vector<FieldChange> changes;
      if (space.heads) changes.push_back({"SearchSpace::heads", "default"});
      if (!space.free_heads) changes.push_back({"SearchSpace::free_heads", "true"});
      add(std::move(changes), [](SearchSpace& s, LoopRecipe&) { s.heads.reset(), s.free_heads = true; });
    }
    const RatioRange wider{space.attention_ratio.lo / 2, space.attention_ratio.hi * 2};
    add({{"SearchSpace::attention_ratio", fmt::format("{}:{}", wider.lo, wider.hi)}},
        [&](SearchSpace& s, LoopRecipe&) { s.attention_ratio = wider; });
  }
  if (b.is_moe() && !searched)
    add({{"SearchSpace::ffn", "searched"}}, [](SearchSpace& s, LoopRecipe&) { s.ffn = FfnScaling::searched; });
  // Another loop span: the named ones and a quarter and three quarters of the
  // layers, less those that loop the same layers as the declared span.
  const i64 depth = recipe.depth.value_or(b.num_layers);
  for (const LoopSpan& span : std::array{LoopSpan::middle_half(), LoopSpan::full(), LoopSpan::of_fraction(0.25),
                                         LoopSpan::of_fraction(0.75)}) {
    if (span == recipe.span) continue;
    LoopRecipe other = recipe;
    other.span = span;
    try {
      if (resolve_loop(other, depth) == loop) continue;
    } catch (const config_error&) {
      // Kept: the relaxed solve reports the reason.
    }
    add({{"LoopRecipe::span", to_string(span)}}, [&](SearchSpace&, LoopRecipe& r) { r.span = span; });
  }
  return out;
}

}  // namespace

std::string joined(const config_error& e) {
  std::string out;
  for (const std::string& line : e.lines()) out += (out.empty() ? "" : "; ") + line;
  return out;
}

MatchResult with_relaxations(MatchResult result, const CheckedConfig& baseline, const LoopRecipe& recipe,
                             const SearchSpace& space, const MatchOptions& options, Solver solver) {
  if (result.within_tolerance || !options.relaxations || result.candidates.empty()) return result;
  MatchOptions once = options;
  once.top = 1;
  once.relaxations = false;
  for (Trial& t : trials(baseline, recipe, space, result.loop)) {
    Relaxation r;
    r.changes = std::move(t.changes);
    try {
      const MatchResult relaxed = solver(baseline, t.recipe, t.space, once);
      r.solved = true;
      r.max_abs_mismatch_pct = relaxed.candidates.front().max_abs_mismatch_pct;
      r.within_tolerance = relaxed.within_tolerance;
      r.knobs = relaxed.candidates.front().knobs;
    } catch (const config_error& e) {
      r.error = joined(e);
      r.violations = e.violations();
    }
    result.relaxations.push_back(std::move(r));
  }
  // Best first; equal mismatches keep the fixed order of trials(); refused last.
  std::stable_sort(result.relaxations.begin(), result.relaxations.end(), [](const Relaxation& a, const Relaxation& b) {
    if (a.solved != b.solved) return a.solved;
    return a.solved && a.max_abs_mismatch_pct < b.max_abs_mismatch_pct;
  });
  return result;
}

}  // namespace smelt::solve_detail
