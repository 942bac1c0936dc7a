// smelt-match derive BASELINE: the looped config that matches the Baseline's
// budgets, with the best alternatives and, when it misses the tolerance, why.
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "flag_names.hpp"
#include "out_file.hpp"
#include "smelt/config_io.hpp"
#include "smelt/detail/excerpt.hpp"
#include "smelt/detail/violations.hpp"
#include "smelt/file_io.hpp"
#include "smelt/match_report.hpp"
#include "smelt/solve.hpp"
#include "solver_options.hpp"
#include "table.hpp"
#include "time_text.hpp"

namespace smelt::cli {
namespace {

struct DeriveArgs {
  std::string baseline;
  std::unique_ptr<SolverFlags> solver;
  bool json = false;
  OutFile out;
};

std::string geometry(const Knobs& k) {
  return k.kv_heads == 0 ? fmt::format("{}/MLA", k.heads) : fmt::format("{}/{}/{}", k.heads, k.kv_heads, k.head_dim);
}

// The options that apply a relaxation, its fields already flags: "--align-head-dim 4",
// "drop --heads". Freeing the query heads of a space given --keep-heads is
// dropping that flag: adding --free-heads to it would be a contradiction.
std::string applied_by(const Relaxation& x) {
  std::string out;
  for (const FieldChange& c : x.changes) {
    out += out.empty() ? "" : ", ";
    if (c.field == "--free-heads" && c.value == "true")
      out += "drop --keep-heads";
    else
      out += c.value == "default" ? "drop " + c.field : c.value == "true" ? c.field : c.field + " " + c.value;
  }
  return out;
}

// Each relaxation solved alone, best first: what its best reaches, or why its space was refused.
std::string relaxation_lines(const MatchResult& r) {
  if (r.relaxations.empty()) return "";
  std::vector<std::vector<std::string>> rows;
  for (const Relaxation& x : r.relaxations) {
    if (!x.solved) {
      rows.push_back({"  " + applied_by(x), "refused: " + x.error});
      continue;
    }
    const Knobs& k = x.knobs;
    rows.push_back(
        {"  " + applied_by(x), fmt::format("reaches {:.3f}%", x.max_abs_mismatch_pct),
         x.within_tolerance ? "within" : "outside",
         fmt::format("H {}, {} experts, {}, expert width {}", k.hidden, k.experts, geometry(k), k.expert_width)});
  }
  return "\nrelaxations, each solved alone (best first)\n" + render_cells(rows, 4);
}

// The other splits of the derived config's attention and KV widths, when it has any (docs/solver.md section 6).
std::string splits_line(const Candidate& c) {
  if (c.head_splits.size() < 2) return "";
  std::string list;
  for (const HeadSplit& h : c.head_splits)
    list += (list.empty() ? "" : ", ") + geometry({.heads = h.heads, .kv_heads = h.kv_heads, .head_dim = h.head_dim});
  return fmt::format("{} head splits of the same widths (attention width {}, KV width {}): {}\n", c.head_splits.size(),
                     c.knobs.heads * c.knobs.head_dim, c.knobs.kv_heads * c.knobs.head_dim, list);
}

std::string human_report(const MatchResult& r) {
  const Candidate& best = r.candidates.front();
  std::string out = fmt::format("{} -> {}: ", shown_name(r.baseline.name), shown_name(best.config.name));
  out += r.loop.active() ? fmt::format("layers {} looped x{}, residual scale {:.4g}\n", format_span(r.loop),
                                       r.loop.count, r.loop.residual_scale)
                         : "no loop\n";
  std::vector<std::vector<std::string>> rows;
  const bool many = best.budgets.size() > 1;
  for (const auto& at : best.budgets) {
    const std::string ctx = many ? fmt::format(" @{}", at.context) : "";
    const std::string flops = r.options.flops_with_head ? "FLOPs/token (with head)" : "FLOPs/token (non-embedding)";
    rows.push_back({flops + ctx, human(at.flops.baseline, Unit::flops), human(at.flops.candidate, Unit::flops),
                    signed_pct(at.flops.mismatch_pct)});
    if (&at == &best.budgets.front())
      rows.push_back({"params non-embedding", human(at.params.baseline, Unit::count),
                      human(at.params.candidate, Unit::count), signed_pct(at.params.mismatch_pct)});
    rows.push_back({"KV cache bytes/token" + ctx, human(at.kv.baseline, Unit::bytes),
                    human(at.kv.candidate, Unit::bytes), signed_pct(at.kv.mismatch_pct)});
  }
  const Knobs base = knobs_of(r.baseline);
  rows.push_back({"hidden size", std::to_string(base.hidden), std::to_string(best.knobs.hidden), ""});
  rows.push_back({"routed experts", std::to_string(base.experts), std::to_string(best.knobs.experts), ""});
  rows.push_back({"heads/KV heads/head_dim", geometry(base), geometry(best.knobs), ""});
  rows.push_back({"expert width", std::to_string(base.expert_width), std::to_string(best.knobs.expert_width), ""});
  rows.push_back(
      {"layers executed", std::to_string(r.baseline_executed_layers), std::to_string(best.executed_layers), ""});
  rows.push_back({"depth-to-width (layers/H)",
                  fmt::format("{:.5f}", static_cast<double>(r.baseline_executed_layers) /
                                            static_cast<double>(r.baseline.hidden_size)),
                  fmt::format("{:.5f}", best.depth_to_width), ""});
  rows.push_back({"active params", human(static_cast<double>(r.baseline_active_params), Unit::count),
                  human(static_cast<double>(best.active_params), Unit::count), ""});
  if (best.memory)
    rows.push_back({"memory per GPU (layout)", human(best.memory->baseline, Unit::bytes),
                    human(best.memory->candidate, Unit::bytes), signed_pct(best.memory->mismatch_pct)});
  const auto time_row = [&](const char* label, const std::optional<BudgetValue>& v) {
    if (v)
      rows.push_back({fmt::format("{} ({})", label, r.options.hardware), seconds_text(v->baseline),
                      seconds_text(v->candidate), signed_pct(v->mismatch_pct)});
  };
  time_row("training time/token", best.training_time);
  time_row("decode time/token", best.decode_time);
  rows.insert(rows.begin(), {"", "baseline", "derived", "mismatch"});
  out += render_cells(rows, 1);
  out += splits_line(best);
  out += fmt::format("max |mismatch| {:.3f}% over {}: {} the {}% tolerance ({} configs counted of {} in the space)\n",
                     best.max_abs_mismatch_pct, r.options.match.size() == 3 ? "flops, params, kv" : match_list(r),
                     r.within_tolerance ? "within" : "OUTSIDE", r.options.tolerance_pct, r.evaluated, r.space_size);
  if (!best.memory) out += "memory per GPU: not shown: " + best.memory_note + "\n";
  if (!best.time_note.empty()) out += "time per token: not shown: " + best.time_note + "\n";
  if (r.options.time_limit > 0)
    out += fmt::format(
        "time limit {}x the Baseline's training time per token on {}: {} candidate{} dropped (each replaced by the "
        "closest that fits)\n",
        r.options.time_limit, r.options.hardware, r.dropped_for_time, r.dropped_for_time == 1 ? "" : "s");
  if (r.options.memory_limit.bytes > 0)
    out += fmt::format(
        "memory limit {} per GPU: {} candidate{} dropped, over it or not sharded by the layout (each replaced by the "
        "closest that fits)\n",
        human(static_cast<double>(r.options.memory_limit.bytes), Unit::bytes), r.dropped_for_memory,
        r.dropped_for_memory == 1 ? "" : "s");
  for (const auto& line : r.why) out += "  why: " + line.text + "\n";
  out += relaxation_lines(r);
  if (r.candidates.size() > 1) {
    // The expert width has a column only where it was searched: otherwise it follows H.
    const bool width = r.space.ffn == FfnScaling::searched;
    out += fmt::format(
        "\nalternatives, distinct (splits: head splits of the same widths)\n{:>3}  {:>6}  {:>7}  {:>13}  {:>6}  "
        "{:>9}  {:>9}  {:>9}  {:>8}{}\n",
        "#", "H", "experts", "heads/kv/hd", "splits", "FLOPs", "params", "KV", "max", width ? "  expert width" : "");
    for (std::size_t i = 1; i < r.candidates.size(); ++i) {
      const Candidate& c = r.candidates[i];
      const BudgetsAt& at = c.budgets.front();
      out +=
          fmt::format("{:>3}  {:>6}  {:>7}  {:>13}  {:>6}  {:>9}  {:>9}  {:>9}  {:>7.3f}%{}\n", i + 1, c.knobs.hidden,
                      c.knobs.experts, geometry(c.knobs), c.head_splits.size(), signed_pct(at.flops.mismatch_pct),
                      signed_pct(at.params.mismatch_pct), signed_pct(at.kv.mismatch_pct), c.max_abs_mismatch_pct,
                      width ? fmt::format("  {:>12}", c.knobs.expert_width) : "");
    }
  }
  return out;
}

int run_derive(const DeriveArgs& args) {
  detail::Violations errors;
  args.out.check(errors);
  errors.throw_if_any();
  const SolverSetup setup = args.solver->setup();
  const CheckedConfig baseline = read_checked_config(args.baseline);
  MatchResult result = solve(baseline, setup.recipe, setup.space, setup.options);
  // The library says which field to change; the user changes a flag (looked up, flag_names.hpp).
  for (auto& line : result.why) line = Message{shown(line), {}};
  for (auto& x : result.relaxations) {
    for (auto& c : x.changes) c.field = flag_of_field(c.field);
    std::string error;
    for (const Violation& v : x.violations) error += (error.empty() ? "" : "; ") + shown(v);
    if (!x.violations.empty()) x.error = std::move(error);
  }
  const std::string text = args.json ? match_report_json(result) : human_report(result);
  if (args.out.given()) write_text_file(args.out.path, to_json(result.candidates.front().config));
  std::cout << text;
  if (args.out.given()) {
    // On standard error, after the report: --json keeps standard output pure JSON.
    std::cout.flush();
    std::cerr << fmt::format("smelt-match: wrote the derived config '{}' to {}\n",
                             shown_name(result.candidates.front().config.name), detail::one_line(args.out.path));
  }
  if (!result.within_tolerance) {
    std::cerr << fmt::format("smelt-match: no candidate within {}% (best {:.3f}%)\n", result.options.tolerance_pct,
                             result.candidates.front().max_abs_mismatch_pct);
    for (const auto& line : result.why) std::cerr << "  " << line.text << '\n';
    return kInfeasible;
  }
  return kOk;
}

}  // namespace

Run add_derive(CLI::App& app) {
  auto args = std::make_shared<DeriveArgs>();
  auto* sub =
      app.add_subcommand("derive", "Derive the looped config that matches a Baseline's FLOPs, parameters and KV cache");
  sub->add_option("BASELINE", args->baseline, "Baseline config: smelt native JSON or Hugging Face config.json")
      ->required();
  args->solver = std::make_unique<SolverFlags>(sub, true);
  sub->add_flag("--json", args->json, "Print ordered JSON instead of a table");
  add_out_file(sub, args->out, "Write the best config as native JSON to FILE (even when outside the tolerance)");
  return [args] { return run_derive(*args); };
}

}  // namespace smelt::cli
