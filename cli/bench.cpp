// smelt-match bench CONFIG [--vs OTHER]: run the config's blocks on the CPU
// reference or CUDA, and set time and executed FLOPs beside the analytic count.
// Its other modes are subcommands of it (cli/bench_modes.hpp): bench step
// CONFIG, bench calibrate.
#include <algorithm>
#include <iostream>
#include <memory>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "bench_modes.hpp"
#include "commands.hpp"
#include "exit_codes.hpp"
#include "option_flags.hpp"
#include "smelt/bench.hpp"
#include "smelt/bench_report.hpp"
#include "smelt/config_io.hpp"
#include "smelt/detail/diff_pct.hpp"
#include "smelt/detail/excerpt.hpp"
#include "smelt/detail/violations.hpp"
#include "smelt/error.hpp"
#include "table.hpp"

namespace smelt::cli {
namespace {

struct BenchArgs {
  std::string config;
  std::string vs;
  bool json = false;
  std::unique_ptr<OptionFlags<BenchOptions>> options;
  CLI::App* command = nullptr;
  Run step, calibrate;  // the subcommands bench step and bench calibrate
};

// What was given to bench itself before one of its subcommands: it belongs after it (`bench --tokens 64 step X`
// once ran the step with the default tokens).
void refuse_given_before(const BenchArgs& args, const CLI::App& mode) {
  detail::Violations errors;
  if (!args.config.empty())
    errors.add(fmt::format("CONFIG = {}: give it after 'bench {}'", detail::one_line(args.config), mode.get_name()));
  for (const CLI::Option* option : args.command->get_options()) {
    if (option->count() == 0 || option->get_lnames().empty()) continue;
    const std::string flag = "--" + option->get_lnames().front();
    errors.add(mode.get_option_no_throw(flag) ? fmt::format("{}: give it after 'bench {}'", flag, mode.get_name())
                                              : fmt::format("{}: 'bench {}' has no such option (see 'bench {} --help')",
                                                            flag, mode.get_name(), mode.get_name()));
  }
  errors.throw_if_any();
}

// One row of the FLOP table: a count with its difference to the analytic one.
std::string with_pct(double flops, double analytic) {
  return fmt::format("{} ({:+.3f}%)", human(flops, Unit::flops), smelt::detail::diff_pct(flops, analytic));
}

// The FLOP table in aligned columns whether or not counters were read: a
// missing counter is "-" in its column, and why it is missing goes below.
std::string flop_table(const BenchResult& r) {
  std::vector<std::vector<std::string>> rows{{"FLOPs", "analytic", "accounted", "counters"}};
  std::vector<std::string> notes;
  for (const auto& [label, f] : {std::pair{"all products", &r.flops}, std::pair{"weight GEMMs", &r.gemm_flops}}) {
    rows.push_back({label, human(f->analytic, Unit::flops), with_pct(f->accounted, f->analytic),
                    f->counter ? with_pct(*f->counter, f->analytic) : "-"});
    if (!f->counter_note.empty() && std::find(notes.begin(), notes.end(), f->counter_note) == notes.end())
      notes.push_back(f->counter_note);
  }
  std::string out;
  const std::string cells = render_cells(rows, 1);
  for (std::size_t start = 0; start < cells.size();) {
    const std::size_t end = cells.find('\n', start) + 1;
    out += "  " + cells.substr(start, end - start);
    start = end;
  }
  for (const auto& note : notes) out += "  counters: " + note + "\n";
  return out;
}

std::string human_result(const BenchResult& r) {
  std::string out =
      fmt::format("{} on {} ({}): {} tokens, context {}, {} block visits{}\n", shown_name(r.model), r.backend, r.device,
                  r.tokens, r.context, r.layer_visits, r.moe_only ? ", MoE sublayer only" : "");
  out += fmt::format("  time per run {:.4g} ms, per token {:.4g} us, {}/s", r.seconds * 1e3, r.seconds_per_token * 1e6,
                     human(r.tflops * 1e12, Unit::flops));
  if (r.dense_tflops > 0)
    out += fmt::format(", {:.1f}% of the dense GEMM rate measured in this run ({}/s)", r.pct_of_dense,
                       human(r.dense_tflops * 1e12, Unit::flops));
  out += "\n";
  if (r.expert_gemm_tflops > 0)
    out += fmt::format("  expert GEMMs {}/s;", human(r.expert_gemm_tflops * 1e12, Unit::flops));
  out +=
      fmt::format("  expert GEMM path: {}; load imbalance (max/mean) {:.3f}\n", r.expert_gemm_path, r.load_imbalance);
  out += flop_table(r);
  out += fmt::format("  output vs reference: max relative error {:.3g} (tolerance {:.3g}): {}\n", r.max_rel_error,
                     r.tolerance, r.correct ? "correct" : "WRONG");
  return out;
}

int run(const BenchArgs& args) {
  for (const auto& [name, mode] : {std::pair{"step", &args.step}, std::pair{"calibrate", &args.calibrate}})
    if (const CLI::App* sub = args.command->get_subcommand(name); sub->parsed()) {
      refuse_given_before(args, *sub);
      return (*mode)();
    }
  const BenchOptions o =
      run_options(*args.options, {}, args.config, "CONFIG: required (or the subcommand step or calibrate)");
  std::vector<BenchResult> results;
  results.push_back(run_bench(read_config(args.config), o));
  if (!args.vs.empty()) results.push_back(run_bench(read_config(args.vs), o));
  std::string out;
  if (args.json) {
    out = bench_report_json(results);
  } else {
    for (const auto& r : results) out += human_result(r);
    if (results.size() == 2)
      out += fmt::format("{} vs {}: time ratio {:.4f}, analytic FLOP ratio {:.4f}\n", shown_name(results[1].model),
                         shown_name(results[0].model), results[1].seconds / results[0].seconds,
                         results[1].flops.analytic / results[0].flops.analytic);
  }
  std::cout << out;
  for (const auto& r : results)
    if (!r.correct) {
      std::cerr << fmt::format("smelt-match: {} output differs from the reference: {:.3g} > {:.3g}\n",
                               shown_name(r.model), r.max_rel_error, r.tolerance);
      return kInternal;
    }
  return kOk;
}

}  // namespace

BenchOptions run_options(const OptionFlags<BenchOptions>& flags, BenchOptions o, const std::string& config,
                         const char* missing) {
  detail::Violations errors;
  flags.apply(o, errors);
  if (config.empty()) errors.add(missing);
  // 0 means "the default" to the library; typed on the command line it is an error.
  if (flags.given("tokens") && o.tokens < 1) errors.add(fmt::format("--tokens = {}: must be positive", o.tokens));
  if (flags.given("context") && o.context < 1) errors.add(fmt::format("--context = {}: must be positive", o.context));
  errors.throw_if_any();
  return o;
}

Run add_bench(CLI::App& app) {
  auto a = std::make_shared<BenchArgs>();
  auto* sub = app.add_subcommand("bench",
                                 "Run a config's blocks on CPU or CUDA and compare executed FLOPs with the "
                                 "analytic count; bench step and bench calibrate measure a training step and the "
                                 "time model's CPU backend");
  a->command = sub;
  sub->add_option("CONFIG", a->config, "Model config: smelt native JSON or Hugging Face config.json");
  sub->add_option("--vs", a->vs, "A second config to compare with (time ratio beside the analytic FLOP ratio)");
  a->options = std::make_unique<OptionFlags<BenchOptions>>(sub);
  sub->add_flag("--json", a->json, "Print ordered JSON instead of text");
  a->step = add_bench_step(*sub);
  a->calibrate = add_bench_calibrate(*sub);
  return [a] { return run(*a); };
}

}  // namespace smelt::cli
