// A matched ablation grid, as in the SMELT paper: the Baseline re-matched
// unlooped, looped variants over loop spans x loop counts, and depth-to-width
// variants (Baselines of other depths at the same budgets). Every row is one
// smelt::solve call (top 1) against the original Baseline's budgets.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "smelt/config.hpp"
#include "smelt/error.hpp"
#include "smelt/option_fields.hpp"
#include "smelt/recipe.hpp"
#include "smelt/solve.hpp"

namespace smelt {

struct SweepOptions {
  // Fractions of the Baseline's layers to loop, in [0, 1], centred as in
  // LoopRecipe; 0 is the unlooped Baseline (one "baseline" row).
  std::vector<double> spans{0, 0.25, 0.5, 0.75, 1.0};
  // Passes through each span, in [1, LoopRecipe::max_loops]; one "loop" row per span above 0 and count.
  // Each of the three lists holds at most 64 values.
  std::vector<std::int64_t> loops{2, 3, 4};
  // Depth multipliers, > 0: one unlooped "depth" row of round(m x layers) layers each.
  std::vector<double> depths{0.5, 0.75, 1.25, 1.5};
};

// SweepOptions' fields (include/smelt/option_fields.hpp).
template <>
struct OptionTable<SweepOptions> {
  static constexpr std::string_view owner = "SweepOptions";
  using Field = OptionField<SweepOptions, std::vector<double>, std::vector<std::int64_t>>;
  static constexpr auto fields = std::to_array<Field>({
      {"spans", OptionKind::number_list, &SweepOptions::spans, 0, 1,
       "Fractions of the layers to loop (0.25 or 25%), centred; 0 is the unlooped Baseline"},
      {"loops", OptionKind::integer_list, &SweepOptions::loops, 1, LoopRecipe::max_loops,
       "Loop counts for each span above 0"},
      {"depths", OptionKind::number_list, &SweepOptions::depths, 0, kUnbounded,
       "Depth multipliers above 0, each an unlooped Baseline of that many times the layers"},
  });
};

enum class SweepKind { baseline, loop, depth };
std::string_view to_string(SweepKind v);

struct SweepRow {
  SweepKind kind = SweepKind::baseline;
  double span_fraction = 0;     // as asked; 0 for baseline and depth rows
  double depth_multiplier = 1;  // as asked for depth rows; 1 otherwise
  LoopRecipe recipe;            // the recipe of this row's solve call
  ModelConfig config;           // the best candidate (native config)
  Knobs knobs;
  std::string span = "none";  // 1-based looped layers "5-7", or "none"
  std::int64_t loops = 1;     // the loop count asked for (recipe.loops)
  std::int64_t executed_layers = 0;
  // Signed mismatches in percent; with several contexts, the one of largest
  // magnitude. Reported for all three budgets whether matched or not.
  double flops_mismatch_pct = 0;
  double params_mismatch_pct = 0;
  double kv_mismatch_pct = 0;
  double max_abs_mismatch_pct = 0;  // the solver's objective over the matched budgets
  bool within_tolerance = false;
  double depth_to_width = 0;  // executed layers / hidden size
  // Per-GPU bytes under MatchOptions::memory_layout and the change from the
  // Baseline's (Candidate::memory); absent where the layout cannot shard either.
  std::optional<std::int64_t> memory_bytes;
  std::optional<double> memory_mismatch_pct;
  // With MatchOptions::hardware: the predicted training seconds per token and
  // the change from the Baseline's (Candidate::training_time).
  std::optional<double> training_seconds_per_token;
  std::optional<double> training_time_mismatch_pct;
};

// Every violation of `options` for this Baseline, each naming
// SweepOptions::spans, loops or depths, the value and the rule; empty when the
// options are valid.
std::vector<Violation> sweep_violations(const ModelConfig& baseline, const SweepOptions& options);

// The rows in order: for each span (duplicates dropped) the baseline row (span
// 0) or one loop row per loop count, then one depth row per multiplier.
// options.top is ignored (each row is the best candidate). Throws config_error
// listing every violation at once: the sweep options' and, before any result
// is returned, every row's solver errors (marked with the rows they hit unless
// they hit all). A row outside the tolerance is returned, not thrown.
std::vector<SweepRow> sweep(const ModelConfig& baseline, const SweepOptions& options, const SearchSpace& space = {},
                            const MatchOptions& match = {});
// The same on a Baseline read as checked (read_checked_config): not validated again.
std::vector<SweepRow> sweep(const CheckedConfig& baseline, const SweepOptions& options, const SearchSpace& space = {},
                            const MatchOptions& match = {});

}  // namespace smelt
