// smelt-match bench CONFIG [--vs OTHER]: run the config's blocks on the CPU
// reference or CUDA, and set time and executed FLOPs beside the analytic count;
// smelt-match bench --calibrate [--out FILE]: measure the CPU backend for the
// time model.
#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "flag_names.hpp"
#include "option_flags.hpp"
#include "out_file.hpp"
#include "smelt/bench.hpp"
#include "smelt/bench_calibrate.hpp"
#include "smelt/bench_report.hpp"
#include "smelt/bench_step.hpp"
#include "smelt/config_io.hpp"
#include "smelt/detail/diff_pct.hpp"
#include "smelt/detail/excerpt.hpp"
#include "smelt/detail/violations.hpp"
#include "smelt/error.hpp"
#include "smelt/file_io.hpp"
#include "smelt/hardware.hpp"
#include "table.hpp"

namespace smelt::cli {
namespace {

// bench --calibrate's repetitions: each takes about 2 s on the full grid.
constexpr std::int64_t kMaxCalibrateRepetitions = 20;

struct BenchArgs {
  std::string config;
  std::string vs;
  bool json = false;
  bool calibrate = false;
  bool quick = false;
  bool step = false;
  std::string hardware;
  OutFile out;
  std::unique_ptr<OptionFlags<BenchOptions>> options;
};

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

// bench --calibrate: the CPU backend measured (docs/time.md, "Calibration"), as JSON kind "calibration" to --out
// (written whole or not at all) or standard output, with a summary on standard error.
int run_calibrate(const BenchArgs& args) {
  detail::Violations errors;
  if (args.step) errors.add("--step, --calibrate: choose one");
  BenchOptions o;
  args.options->apply(o, errors);
  if (o.backend == BenchBackendKind::cuda)
    errors.add("--backend = cuda: bench --calibrate measures the cpu backend (the CUDA calibration is not built yet)");
  if (!args.config.empty() || !args.vs.empty())
    errors.add(fmt::format("--calibrate, CONFIG = {}: go alone: a calibration measures the backend, not a config",
                           args.config.empty() ? args.vs : args.config));
  // What does not apply to a calibration is refused by name, not ignored.
  for (const char* row : {"tokens", "context", "moe_only", "balanced", "warmup", "force", "seed"})
    if (args.options->given(row))
      errors.add(fmt::format("{}: does not apply to --calibrate (it measures the backend on its own grid of shapes)",
                             flag_of_field(fmt::format("BenchOptions::{}", row))));
  if (!args.hardware.empty())
    errors.add(fmt::format("--hardware = {}: does not apply to --calibrate (it predicts a measured step, with --step)",
                           args.hardware));
  // Each repetition of the full grid takes about 2 s (CalibrateOptions::repetitions).
  if (args.options->given("repetitions") && !(o.repetitions >= 1 && o.repetitions <= kMaxCalibrateRepetitions))
    errors.add(fmt::format("--repetitions = {}: must be in [1, {}] with --calibrate", o.repetitions,
                           kMaxCalibrateRepetitions));
  args.out.check(errors);
  errors.throw_if_any();
  CalibrateOptions c;
  c.quick = args.quick;
  c.repetitions = std::clamp<std::int64_t>(o.repetitions, 1, kMaxCalibrateRepetitions);
  const Calibration cal = calibrate_cpu(c);
  const std::string json = calibration_json(cal);
  if (args.out.given())
    write_text_file(args.out.path, json);
  else
    std::cout << json;
  const GemmTable& t = cal.gemm;
  std::cerr << fmt::format(
      "calibrated {}: {} GEMM shapes, {}/s at best ({}/s at 64 x 64 x 64), bandwidth {:.3g} GB/s, op overhead "
      "{:.3g} us{}\n",
      cal.device, t.flops_per_second.size(), human(cal.hardware.peak_flops_fp32, Unit::flops),
      human(t.rate(64, 64, 64), Unit::flops), cal.memory_bandwidth / 1e9, cal.op_overhead * 1e6,
      args.out.given() ? fmt::format("; written to {0} (use it as --hardware {0})", detail::one_line(args.out.path))
                       : "");
  return kOk;
}

std::string human_step(const StepResult& r) {
  std::string out = fmt::format(
      "{} training step on {} ({}, {}): {} tokens ({} x {}), {} block visits, {} parameters\n", shown_name(r.model),
      r.backend, r.device, r.blas, r.tokens, r.sequences, r.context, r.layer_visits, r.parameters);
  out += fmt::format(
      "  measured: forward {:.4g} us/token, training step {:.4g} us/token ({:.4g} ms), {}/s; decode {:.4g} us/token\n",
      r.measured.forward_seconds_per_token * 1e6, r.measured.training_seconds_per_token * 1e6, r.training_seconds * 1e3,
      human(r.training_tflops * 1e12, Unit::flops), r.measured.decode_seconds_per_token * 1e6);
  if (r.predicted) {
    const auto pct = [](double predicted, double measured) { return 100 * (predicted / measured - 1); };
    const StepSeconds &p = *r.predicted, &m = r.measured;
    out += fmt::format(
        "  predicted on {}: forward {:.4g} us/token ({:+.1f}%), training step {:.4g} us/token ({:+.1f}%); decode "
        "{:.4g} us/token ({:+.1f}%)\n",
        shown_name(r.hardware), p.forward_seconds_per_token * 1e6,
        pct(p.forward_seconds_per_token, m.forward_seconds_per_token), p.training_seconds_per_token * 1e6,
        pct(p.training_seconds_per_token, m.training_seconds_per_token), p.decode_seconds_per_token * 1e6,
        pct(p.decode_seconds_per_token, m.decode_seconds_per_token));
  } else
    out += "  predicted: - (give --hardware NAME|FILE, e.g. the file of bench --calibrate)\n";
  out +=
      fmt::format("  FLOPs per step: analytic {} (3 x forward), executed {} (attention backward recomputes scores)\n",
                  human(r.analytic_training_flops, Unit::flops), human(r.accounted_training_flops, Unit::flops));
  out += fmt::format("  loss {:.4f} -> {:.4f}", r.first_loss, r.last_loss);
  if (!r.expert_tokens.empty()) out += fmt::format("; load imbalance (max/mean) {:.3f}", r.load_imbalance);
  return out + "\n";
}

// bench CONFIG --step [--vs OTHER] [--hardware H]: whole training steps, measured beside the time model.
int run_step(const BenchArgs& args, BenchOptions o) {
  // A step costs about three forwards: fewer runs by default than the block benchmark's.
  if (!args.options->given("warmup")) o.warmup = 1;
  if (!args.options->given("repetitions")) o.repetitions = 5;
  std::optional<HardwareSpec> hw;
  if (!args.hardware.empty()) hw = hardware_spec(args.hardware);
  std::vector<StepResult> results;
  results.push_back(smelt::run_step(read_config(args.config), o, hw ? &*hw : nullptr));
  if (!args.vs.empty()) results.push_back(smelt::run_step(read_config(args.vs), o, hw ? &*hw : nullptr));
  if (args.json) {
    std::cout << bench_step_report_json(results);
    return kOk;
  }
  std::string out;
  for (const auto& r : results) out += human_step(r);
  if (results.size() == 2) {
    const auto& [a, b] = std::pair{results[0], results[1]};
    out += fmt::format("{} vs {}: measured training-time ratio {:.4f}", shown_name(b.model), shown_name(a.model),
                       b.measured.training_seconds_per_token / a.measured.training_seconds_per_token);
    if (a.predicted && b.predicted)
      out += fmt::format(", predicted {:.4f}",
                         b.predicted->training_seconds_per_token / a.predicted->training_seconds_per_token);
    out += fmt::format(", analytic FLOP ratio {:.4f}\n", b.analytic_training_flops / a.analytic_training_flops);
  }
  std::cout << out;
  return kOk;
}

int run(const BenchArgs& args) {
  if (args.calibrate) return run_calibrate(args);
  detail::Violations errors;
  BenchOptions o;
  args.options->apply(o, errors);
  if (args.config.empty()) errors.add("CONFIG: required (or --calibrate)");
  // 0 means "the default" to the library; typed on the command line it is an error.
  if (args.options->given("tokens") && o.tokens < 1)
    errors.add(fmt::format("--tokens = {}: must be positive", o.tokens));
  if (args.options->given("context") && o.context < 1)
    errors.add(fmt::format("--context = {}: must be positive", o.context));
  if (args.step && args.calibrate) errors.add("--step, --calibrate: choose one");
  if (!args.hardware.empty() && !args.step)
    errors.add(fmt::format("--hardware = {}: predicts a measured step: give --step too", args.hardware));
  if (args.quick) errors.add("--quick: applies to --calibrate only");
  if (args.out.given())
    errors.add(
        fmt::format("--out = {}: writes a calibration: give --calibrate too (bench CONFIG prints its report "
                    "to standard output)",
                    detail::one_line(args.out.path)));
  errors.throw_if_any();
  if (args.step) return run_step(args, o);
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

Run add_bench(CLI::App& app) {
  auto a = std::make_shared<BenchArgs>();
  auto* sub = app.add_subcommand("bench",
                                 "Run a config's blocks on CPU or CUDA and compare executed FLOPs with the "
                                 "analytic count");
  sub->add_option("CONFIG", a->config, "Model config: smelt native JSON or Hugging Face config.json");
  sub->add_option("--vs", a->vs, "A second config to compare with (time ratio beside the analytic FLOP ratio)");
  a->options = std::make_unique<OptionFlags<BenchOptions>>(sub);
  sub->add_flag("--json", a->json, "Print ordered JSON instead of text");
  sub->add_flag("--calibrate", a->calibrate,
                "Measure the CPU backend for the time model instead (GEMM rates over a grid of shapes, bandwidth, "
                "op overhead): JSON kind calibration, usable as --hardware FILE (docs/time.md)");
  sub->add_flag("--quick", a->quick, "With --calibrate: a 2 x 2 x 2 grid of small shapes (a check, not a calibration)");
  sub->add_flag("--step", a->step,
                "Measure whole training steps instead (forward, backward, AdamW; docs/time.md): seconds per token "
                "beside the time model's prediction");
  sub->add_option("--hardware", a->hardware,
                  "With --step: predict the step on this device (a name, a spec file or a bench --calibrate file)");
  add_out_file(sub, a->out, "With --calibrate: write the calibration to FILE (whole or not at all)");
  return [a] { return run(*a); };
}

}  // namespace smelt::cli
