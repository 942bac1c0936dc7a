// sweep(): one solve call per row of the grid, every error gathered first.
#include "smelt/sweep.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "smelt/count.hpp"
#include "smelt/detail/bounds.hpp"
#include "smelt/detail/violations.hpp"
#include "smelt/error.hpp"
#include "util/mention.hpp"
#include "util/option_bounds.hpp"

namespace smelt {
namespace {

using i64 = std::int64_t;
constexpr i64 kMaxDepth = detail::kMaxLayers;         // as LoopRecipe::depth (smelt/detail/bounds.hpp)
constexpr i64 kMaxListed = detail::kMaxListedValues;  // values in each of SweepOptions' lists

template <class T>
std::vector<T> unique_in_order(const std::vector<T>& values) {
  std::vector<T> out;
  for (const T& v : values)
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  return out;
}

// The depth a multiplier gives, or 0 when it gives none in [1, kMaxDepth].
i64 scaled_depth(double multiplier, i64 layers) {
  const double d = multiplier * static_cast<double>(layers);
  if (!(d >= 0.5 && d < static_cast<double>(kMaxDepth) + 0.5)) return 0;
  return static_cast<i64>(std::llround(d));
}

// The signed mismatch of largest magnitude over the contexts.
template <class Member>
double worst(const Candidate& c, Member member) {
  double out = 0;
  for (const BudgetsAt& at : c.budgets) {
    const double v = (at.*member).mismatch_pct;
    if (std::fabs(v) > std::fabs(out)) out = v;
  }
  return out;
}

SweepRow make_row(SweepKind kind, LoopRecipe recipe, const MatchResult& r) {
  const Candidate& best = r.candidates.front();
  SweepRow row;
  row.kind = kind;
  row.recipe = std::move(recipe);
  row.config = best.config;
  row.knobs = best.knobs;
  row.span = best.config.looped() ? format_span(best.config.loops.front()) : "none";
  row.loops = row.recipe.loops;
  row.executed_layers = best.executed_layers;
  row.flops_mismatch_pct = worst(best, &BudgetsAt::flops);
  row.params_mismatch_pct = worst(best, &BudgetsAt::params);
  row.kv_mismatch_pct = worst(best, &BudgetsAt::kv);
  row.max_abs_mismatch_pct = best.max_abs_mismatch_pct;
  row.within_tolerance = r.within_tolerance;
  row.depth_to_width = best.depth_to_width;
  if (best.memory) {
    row.memory_bytes = static_cast<std::int64_t>(best.memory->candidate);
    row.memory_mismatch_pct = best.memory->mismatch_pct;
  }
  if (best.training_time) {
    row.training_seconds_per_token = best.training_time->candidate;
    row.training_time_mismatch_pct = best.training_time->mismatch_pct;
  }
  return row;
}

std::string row_label(const SweepRow& row) {
  switch (row.kind) {
    case SweepKind::baseline:
      return "baseline";
    case SweepKind::loop:
      return fmt::format("span {} x{}", row.span_fraction, row.recipe.loops);
    case SweepKind::depth:
      return fmt::format("depth {}x", row.depth_multiplier);
  }
  return "?";
}

}  // namespace

std::vector<Violation> sweep_violations(const ModelConfig& baseline, const SweepOptions& o) {
  detail::Violations errors;
  // Each value is at least one solve (spans x loops of them): bound the lists first.
  for (const auto& [field, size] :
       {std::pair{"SweepOptions::spans", o.spans.size()}, std::pair{"SweepOptions::loops", o.loops.size()},
        std::pair{"SweepOptions::depths", o.depths.size()}})
    if (static_cast<i64>(size) > kMaxListed)
      errors.add(field, "", fmt::format("{} values listed: at most {}", size, kMaxListed));
  const auto& spans = detail::option_row<SweepOptions>("spans");
  for (const double f : o.spans)
    if (!detail::within(spans, f))
      errors.add("SweepOptions::spans", fmt::format("{}", f),
                 "must be a fraction of the layers in [0, 1] (0% to 100%)");
  const auto& loops = detail::option_row<SweepOptions>("loops");
  for (const i64 n : o.loops)
    if (static_cast<double>(n) < loops.lo)
      errors.add("SweepOptions::loops", fmt::format("{}", n), fmt::format("must be at least {}", loops.lo));
    else if (static_cast<double>(n) > loops.hi)
      errors.add("SweepOptions::loops", fmt::format("{}", n), fmt::format("must be at most {}", loops.hi));
  const bool loop_rows = std::any_of(o.spans.begin(), o.spans.end(), [](double f) { return f > 0; });
  if (loop_rows && o.loops.empty())
    errors.add("SweepOptions::loops", "[]", "must list at least one loop count for the spans above 0");
  const i64 layers = baseline.num_layers;
  for (const double m : o.depths) {
    if (!(std::isfinite(m) && m > detail::option_row<SweepOptions>("depths").lo)) {
      errors.add("SweepOptions::depths", fmt::format("{}", m), "must be a depth multiplier > 0");
      continue;
    }
    const i64 depth = scaled_depth(m, layers);
    if (depth == 0)
      errors.add("SweepOptions::depths", fmt::format("{}", m),
                 fmt::format("gives {} x {} layers, which must round to between 1 and {}", m, layers, kMaxDepth));
    else if (depth != layers && !baseline.moe.layers.empty())
      errors.add("SweepOptions::depths", fmt::format("{}", m),
                 fmt::format("the Baseline lists its MoE layers explicitly, so its depth cannot change (use {})",
                             detail::mention("SweepOptions::depths", "[]")));
  }
  if (o.spans.empty() && o.depths.empty())
    errors.add("SweepOptions::spans, SweepOptions::depths", "", "both empty, so the sweep has no rows");
  return errors.take();
}

std::vector<SweepRow> sweep(const ModelConfig& baseline, const SweepOptions& options, const SearchSpace& space,
                            const MatchOptions& match) {
  return sweep(CheckedConfig(baseline), options, space, match);
}

// Every row's solve takes the Baseline as checked: it is validated once, not once a row.
std::vector<SweepRow> sweep(const CheckedConfig& checked, const SweepOptions& options, const SearchSpace& space,
                            const MatchOptions& match) {
  const ModelConfig& baseline = checked.get();
  if (auto errors = sweep_violations(baseline, options); !errors.empty()) throw config_error(std::move(errors));

  std::vector<SweepRow> plan;  // kind, fractions and recipe of every row
  for (const double f : unique_in_order(options.spans)) {
    SweepRow row;
    row.span_fraction = f;
    row.recipe.span = LoopSpan::of_fraction(f);
    if (f == 0) {  // the Baseline row: a looped Baseline keeps its own spans (several, with their extras)
      row.recipe.loops = 1;
      if (baseline.looped()) row.recipe.span = LoopSpan::keep();
      plan.push_back(row);
      continue;
    }
    row.kind = SweepKind::loop;
    for (const i64 n : unique_in_order(options.loops)) {
      row.recipe.loops = n;
      plan.push_back(row);
    }
  }
  for (const double m : unique_in_order(options.depths)) {
    SweepRow row;
    row.kind = SweepKind::depth;
    row.depth_multiplier = m;
    row.recipe.span = LoopSpan::of_fraction(0);
    row.recipe.loops = 1;
    row.recipe.depth = scaled_depth(m, baseline.num_layers);
    plan.push_back(row);
  }

  MatchOptions top1 = match;
  top1.top = 1;
  top1.relaxations = false;  // a sweep row carries no relaxations (docs/solver.md section 8)
  std::vector<SweepRow> rows;
  // Each distinct solver violation, with the rows it hit.
  std::vector<std::pair<Violation, std::vector<std::string>>> failures;
  for (const SweepRow& p : plan) {
    try {
      SweepRow row = make_row(p.kind, p.recipe, solve(checked, p.recipe, space, top1));
      row.span_fraction = p.span_fraction;
      row.depth_multiplier = p.depth_multiplier;
      rows.push_back(std::move(row));
    } catch (const config_error& e) {
      for (const Violation& v : e.violations()) {
        auto it = std::find_if(failures.begin(), failures.end(), [&](const auto& f) { return f.first == v; });
        if (it == failures.end()) it = failures.insert(failures.end(), {v, {}});
        it->second.push_back(row_label(p));
      }
    }
  }
  if (failures.empty()) return rows;
  detail::Violations errors;
  for (auto& [violation, hit] : failures) {
    if (hit.size() != plan.size()) violation.rule += fmt::format(" (sweep rows: {})", fmt::join(hit, ", "));
    errors.add(std::move(violation));
  }
  errors.throw_if_any();
  return rows;
}

}  // namespace smelt
