// smelt-match sweep BASELINE: the matched ablation grid (loop spans x loop
// counts, and depth-to-width variants), one solve per row, as a table, JSON or
// CSV. Rows outside the tolerance are marked, not errors.
#include <algorithm>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "lists.hpp"
#include "smelt/config_io.hpp"
#include "smelt/detail/violations.hpp"
#include "smelt/error.hpp"
#include "smelt/sweep.hpp"
#include "smelt/sweep_report.hpp"
#include "solver_options.hpp"
#include "table.hpp"

namespace smelt::cli {
namespace {

struct SweepArgs {
  std::string baseline;
  std::unique_ptr<SolverFlags> solver;
  std::unique_ptr<OptionFlags<SweepOptions>> lists;  // "none" (or "") lists nothing
  bool json = false;
  bool csv = false;
};

// heads/KV heads/head_dim, or heads/MLA (whose attention the solver keeps).
std::string geometry(const ModelConfig& c) {
  const AttentionConfig& a = c.attention;
  return a.type == AttentionType::mla ? fmt::format("{}/MLA", a.num_heads)
                                      : fmt::format("{}/{}/{}", a.num_heads, a.num_kv_heads, a.head_dim);
}

std::string table(const ModelConfig& b, const std::vector<SweepRow>& rows, const MatchOptions& m) {
  const auto contexts = m.contexts.empty() ? std::vector<std::int64_t>{b.context_length} : m.contexts;
  std::vector<std::string_view> budgets;
  for (const Budget x : m.match) budgets.push_back(to_string(x));
  std::string out = fmt::format("{}: {} layers, H {}, {} experts, heads/kv/hd {}; matched on {} at context {}\n",
                                shown_name(b.name), b.num_layers, b.hidden_size, b.moe.num_experts, geometry(b),
                                fmt::join(budgets, ", "), fmt::join(contexts, ", "));
  std::vector<std::vector<std::string>> cells{{"kind", "variant", "span", "loops", "depth", "executed", "H", "experts",
                                               "heads/kv/hd", "FLOPs", "params", "KV", "max", "within", "depth/width",
                                               "memory"}};
  // With --hardware, the predicted training time per token's change from the Baseline's.
  const bool timed = !m.hardware.empty();
  if (timed) cells.front().push_back("time");
  std::size_t within = 0;
  for (const SweepRow& r : rows) {
    within += r.within_tolerance ? 1 : 0;
    const std::string variant = r.kind == SweepKind::depth  ? fmt::format("{:g}x", r.depth_multiplier)
                                : r.kind == SweepKind::loop ? fmt::format("{:g}%", 100 * r.span_fraction)
                                                            : "-";
    const Knobs& k = r.knobs;
    cells.push_back(
        {std::string(to_string(r.kind)), variant, r.span, std::to_string(r.loops), std::to_string(r.config.num_layers),
         std::to_string(r.executed_layers), std::to_string(k.hidden), std::to_string(k.experts), geometry(r.config),
         signed_pct(r.flops_mismatch_pct), signed_pct(r.params_mismatch_pct), signed_pct(r.kv_mismatch_pct),
         fmt::format("{:.3f}%", r.max_abs_mismatch_pct), r.within_tolerance ? "yes" : "no",
         fmt::format("{:.5f}", r.depth_to_width), r.memory_mismatch_pct ? signed_pct(*r.memory_mismatch_pct) : "-"});
    if (timed) cells.back().push_back(r.training_time_mismatch_pct ? signed_pct(*r.training_time_mismatch_pct) : "-");
  }
  out += render_cells(cells, 3);  // the first three columns are names, the rest numbers
  out += fmt::format("{} of {} rows within the {}% tolerance\n", within, rows.size(), m.tolerance_pct);
  return out;
}

int run_sweep(const SweepArgs& args) {
  detail::Violations errors;
  if (args.json && args.csv) errors.add("--json, --csv: choose one output format");
  SweepOptions options;
  args.lists->apply(options, errors);
  SolverSetup setup;
  bool setup_ok = true;
  try {
    setup = args.solver->setup();
  } catch (const config_error& e) {
    setup_ok = false;
    errors.merge(e);
  }
  const CheckedConfig baseline = read_checked_config(args.baseline);
  for (Violation& v : sweep_violations(baseline, options)) errors.add(std::move(v));
  setup.options.top = 1;
  if (!errors.empty() && setup_ok) {
    // The solver options parsed: list what the solver says of them too (the
    // unlooped Baseline's space), so that every error shows at once.
    try {
      LoopRecipe unlooped;
      unlooped.span = LoopSpan::of_fraction(0);
      unlooped.loops = 1;
      (void)solve(baseline, unlooped, setup.space, setup.options);
    } catch (const config_error& e) {
      errors.merge(e);
    }
  }
  errors.throw_if_any();

  const std::vector<SweepRow> rows = sweep(baseline, options, setup.space, setup.options);
  std::cout << (args.json  ? sweep_report_json(baseline, rows, setup.options)
                : args.csv ? sweep_report_csv(rows)
                           : table(baseline, rows, setup.options));
  return kOk;
}

}  // namespace

Run add_sweep(CLI::App& app) {
  auto args = std::make_shared<SweepArgs>();
  auto* sub = app.add_subcommand(
      "sweep", "Matched ablation grid: loop spans x loop counts and depth-to-width variants, one solve per row");
  sub->add_option("BASELINE", args->baseline, "Baseline config: smelt native JSON or Hugging Face config.json")
      ->required();
  args->solver = std::make_unique<SolverFlags>(sub, false, std::vector<std::string_view>{"relaxations"});
  sub->get_option("--top")->group("");  // each row is the best candidate
  args->lists = std::make_unique<OptionFlags<SweepOptions>>(sub);
  sub->add_flag("--json", args->json, "Print ordered JSON instead of a table");
  sub->add_flag("--csv", args->csv, "Print CSV (a header line, then one line per row) instead of a table");
  return [args] { return run_sweep(*args); };
}

}  // namespace smelt::cli
