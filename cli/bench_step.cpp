// smelt-match bench step CONFIG [--vs OTHER] [--hardware H]: whole training steps (forward, backward, AdamW)
// measured on the CPU backend, beside the time model's prediction of the same step (docs/time.md, "The measured
// step").
#include <iostream>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "bench_modes.hpp"
#include "exit_codes.hpp"
#include "option_flags.hpp"
#include "smelt/bench_step.hpp"
#include "smelt/config_io.hpp"
#include "smelt/hardware.hpp"
#include "table.hpp"

namespace smelt::cli {
namespace {

// A step costs about three forwards: fewer runs by default than the blocks' benchmark's.
BenchOptions step_defaults() {
  BenchOptions o;
  o.warmup = 1;
  o.repetitions = 5;
  return o;
}

struct StepArgs {
  std::string config;
  std::string vs;
  bool json = false;
  std::string hardware;
  std::unique_ptr<OptionFlags<BenchOptions>> options;
};

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
    out += "  predicted: - (give --hardware NAME|FILE, e.g. the file of bench calibrate)\n";
  out +=
      fmt::format("  FLOPs per step: analytic {} (3 x forward), executed {} (attention backward recomputes scores)\n",
                  human(r.analytic_training_flops, Unit::flops), human(r.accounted_training_flops, Unit::flops));
  out += fmt::format("  loss {:.4f} -> {:.4f}", r.first_loss, r.last_loss);
  if (!r.expert_tokens.empty()) out += fmt::format("; load imbalance (max/mean) {:.3f}", r.load_imbalance);
  return out + "\n";
}

int run(const StepArgs& args) {
  const BenchOptions o = run_options(*args.options, step_defaults(), args.config, "CONFIG: required");
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

}  // namespace

Run add_bench_step(CLI::App& bench) {
  auto a = std::make_shared<StepArgs>();
  auto* sub = bench.add_subcommand("step",
                                   "Measure whole training steps of a config (forward, backward, AdamW; "
                                   "docs/time.md): seconds per token beside the time model's prediction");
  sub->add_option("CONFIG", a->config, "Model config: smelt native JSON or Hugging Face config.json");
  sub->add_option("--vs", a->vs, "A second config to compare with (measured and predicted training-time ratios)");
  // A step runs whole blocks: the sublayer alone is the blocks' benchmark's.
  a->options =
      std::make_unique<OptionFlags<BenchOptions>>(sub, std::vector<std::string_view>{"moe_only"}, step_defaults());
  sub->add_flag("--json", a->json, "Print ordered JSON instead of text");
  sub->add_option("--hardware", a->hardware,
                  "Predict the step on this device (a name, a spec file or the file of bench calibrate)");
  return [a] { return run(*a); };
}

}  // namespace smelt::cli
