// smelt-match count CONFIG... : parameters, FLOPs and KV cache of each config.
#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "option_flags.hpp"
#include "smelt/calibration.hpp"
#include "smelt/config_io.hpp"
#include "smelt/convention.hpp"
#include "smelt/count.hpp"
#include "smelt/count_report.hpp"
#include "smelt/detail/bounds.hpp"
#include "smelt/detail/violations.hpp"
#include "smelt/error.hpp"
#include "smelt/hardware.hpp"
#include "smelt/layer_runs.hpp"
#include "smelt/time.hpp"
#include "smelt/time_report.hpp"
#include "table.hpp"
#include "time_text.hpp"

namespace smelt::cli {
namespace {

struct CountArgs {
  std::vector<std::string> configs;
  bool json = false;
  std::int64_t context = 0;
  bool context_given = false;
  std::string convention = "smelt";
  bool elementwise = false;
  bool layers = false;
  std::string sparsity_reference;
  bool runs_csv = false;
  bool every_layer = false;
  bool time = false;
  std::string hardware;
  std::string calibration;  // with --time: bench --calibrate's file
  std::unique_ptr<OptionFlags<MemoryLayout>> layout;
  std::unique_ptr<OptionFlags<TimeOptions>> time_options;
};

std::vector<Row> summary_rows(const std::vector<CountedModel>& models, Convention convention) {
  const auto column = [&](auto get) {
    std::vector<double> v;
    for (const auto& m : models) v.push_back(static_cast<double>(get(m)));
    return v;
  };
  std::vector<Row> rows{
      {"layers executed", column([](const CountedModel& m) { return m.cost.executed_layers; }), Unit::tokens},
      {"params total", column([](const CountedModel& m) { return m.cost.params.total; })},
      {"params non-embedding", column([](const CountedModel& m) { return m.cost.params.non_embedding; })},
      {"params active", column([](const CountedModel& m) { return m.cost.params.active; })},
      {"params active non-embedding", column([](const CountedModel& m) { return m.cost.params.active_non_embedding; })},
  };
  if (convention == Convention::megatron) {
    const auto mf = [](const CountedModel& m) { return megatron_flops(m.config, m.cost.context_length); };
    rows.push_back({"megatron self-attention", column([&](auto& m) { return mf(m).self_attention / 3; }), Unit::flops});
    rows.push_back({"megatron dense MLP", column([&](auto& m) { return mf(m).dense_mlp / 3; }), Unit::flops});
    rows.push_back({"megatron routed experts", column([&](auto& m) { return mf(m).routed_experts / 3; }), Unit::flops});
    rows.push_back({"megatron shared experts", column([&](auto& m) { return mf(m).shared_experts / 3; }), Unit::flops});
    rows.push_back({"megatron logits", column([&](auto& m) { return mf(m).logits / 3; }), Unit::flops});
    rows.push_back({"megatron forward FLOPs/token", column([&](auto& m) { return mf(m).forward(); }), Unit::flops});
    rows.push_back({"megatron training FLOPs/token", column([&](auto& m) { return mf(m).training(); }), Unit::flops});
  } else if (convention == Convention::torchtitan) {
    const auto tf = [](const CountedModel& m) { return torchtitan_flops(m.config, m.cost.context_length); };
    rows.push_back({"torchtitan params", column([&](auto& m) { return tf(m).params; })});
    rows.push_back({"torchtitan 6 x params", column([&](auto& m) { return tf(m).parameters; }), Unit::flops});
    rows.push_back({"torchtitan attention", column([&](auto& m) { return tf(m).attention; }), Unit::flops});
    rows.push_back({"torchtitan forward FLOPs/token", column([&](auto& m) { return tf(m).forward(); }), Unit::flops});
    rows.push_back({"torchtitan training FLOPs/token", column([&](auto& m) { return tf(m).training(); }), Unit::flops});
  } else if (convention == Convention::flop_counter) {
    const auto fc = [](const CountedModel& m) { return flop_counter_flops(m.config, m.cost.context_length); };
    const auto term = [&](const char* label, auto get) {
      rows.push_back({label, column([&](const CountedModel& m) { return get(fc(m).per_token); }), Unit::flops});
    };
    term("flop-counter projections", [](const FlopTerms& t) { return t.attention_qkv + t.attention_out; });
    term("flop-counter attention T x T", [](const FlopTerms& t) { return t.attention_scores + t.attention_values; });
    term("flop-counter router", [](const FlopTerms& t) { return t.router; });
    term("flop-counter experts (top-k)", [](const FlopTerms& t) { return t.experts; });
    term("flop-counter shared experts", [](const FlopTerms& t) { return t.shared_experts; });
    term("flop-counter dense FFN", [](const FlopTerms& t) { return t.dense_ffn; });
    if (std::any_of(models.begin(), models.end(),
                    [&](const CountedModel& m) { return fc(m).per_token.loop_extras > 0; }))
      term("flop-counter loop extras", [](const FlopTerms& t) { return t.loop_extras; });
    term("flop-counter LM head", [](const FlopTerms& t) { return t.lm_head; });
    rows.push_back(
        {"flop-counter forward FLOPs/token", column([&](auto& m) { return fc(m).forward_per_token(); }), Unit::flops});
    rows.push_back({"flop-counter forward FLOPs/sequence",
                    column([&](auto& m) { return fc(m).forward_per_sequence(); }), Unit::flops});
  } else {
    const auto terms = [&](const char* label, auto get) {
      rows.push_back({label, column([&](const CountedModel& m) { return get(m.cost.flops.terms); }), Unit::flops});
    };
    terms("attention projections", [](const FlopTerms& t) { return t.attention_qkv + t.attention_out; });
    terms("attention scores + values", [](const FlopTerms& t) { return t.attention_scores + t.attention_values; });
    terms("router", [](const FlopTerms& t) { return t.router; });
    terms("routed experts (top-k)", [](const FlopTerms& t) { return t.experts; });
    terms("shared experts", [](const FlopTerms& t) { return t.shared_experts; });
    terms("dense FFN", [](const FlopTerms& t) { return t.dense_ffn; });
    const auto any = [&](double FlopTerms::*field) {
      return std::any_of(models.begin(), models.end(),
                         [&](const CountedModel& m) { return m.cost.flops.terms.*field > 0; });
    };
    if (any(&FlopTerms::elementwise)) terms("elementwise", [](const FlopTerms& t) { return t.elementwise; });
    if (any(&FlopTerms::loop_extras))
      terms("loop extras (gates, adapters, LoRA)", [](const FlopTerms& t) { return t.loop_extras; });
    terms("LM head", [](const FlopTerms& t) { return t.lm_head; });
    if (any(&FlopTerms::mtp)) terms("MTP modules (training)", [](const FlopTerms& t) { return t.mtp; });
    rows.push_back(
        {"forward FLOPs/token", column([](const CountedModel& m) { return m.cost.flops.forward; }), Unit::flops});
    rows.push_back({"forward non-embedding",
                    column([](const CountedModel& m) { return m.cost.flops.forward_non_embedding(); }), Unit::flops});
    rows.push_back(
        {"training FLOPs/token", column([](const CountedModel& m) { return m.cost.flops.training; }), Unit::flops});
  }
  rows.push_back(
      {"KV cache bytes/token", column([](const CountedModel& m) { return m.cost.kv.bytes_per_token; }), Unit::bytes});
  rows.push_back({"context length", column([](const CountedModel& m) { return m.cost.context_length; }), Unit::tokens});
  rows.push_back({"sparsity S", column([](const CountedModel& m) { return 100 * m.sparsity.value; }), Unit::percent});
  return rows;
}

// One line per layer, or per run of layers that cost the same (what
// "layer_runs" holds in the JSON): "4-9" for consecutive layers, "1-65535/2"
// for every second one; the costs are those of each layer of the run.
std::string layer_table(const CountedModel& m, bool every_layer) {
  std::vector<std::pair<std::string, const LayerCost*>> rows;
  std::vector<LayerRun> runs;
  if (every_layer) {
    for (const auto& l : m.cost.layers) rows.emplace_back(fmt::format("{}", l.layer), &l);
  } else {
    runs = layer_runs(m.config, m.cost);
    for (const LayerRun& run : runs) {
      std::string layers = fmt::format("{}", run.first);
      if (run.last > run.first) layers += fmt::format("-{}", run.last);
      if (run.step > 1) layers += fmt::format("/{}", run.step);
      rows.emplace_back(std::move(layers), &run.cost);
    }
  }
  std::size_t width = 5;
  for (const auto& row : rows) width = std::max(width, row.first.size());
  std::string out =
      fmt::format("{:>{}}  {:<5}  {:<7}  {:>6}  {:>12}  {:>14}  {:>12}\n", every_layer ? "layer" : "layers", width,
                  "kind", "attn", "visits", "params", "FLOPs/visit", "KV B/visit");
  for (const auto& [layers, l] : rows)
    out += fmt::format("{:>{}}  {:<5}  {:<7}  {:>6}  {:>12}  {:>14}  {:>12}\n", layers, width, l->moe ? "moe" : "dense",
                       to_string(l->attention), l->visits, human(static_cast<double>(l->params.total()), Unit::count),
                       human(l->flops_per_visit.forward(), Unit::flops), human(l->kv_bytes_per_visit, Unit::bytes));
  return out;
}

int run_count(const CountArgs& args) {
  const Convention convention = parse_convention(args.convention, "--convention");
  if (args.context_given && (args.context < 1 || args.context > smelt::detail::kMaxContext))
    throw config_error(
        fmt::format("--context = {}: must be between 1 and {} tokens", args.context, smelt::detail::kMaxContext));
  if (args.json && args.runs_csv) throw config_error("--json, --runs-csv: choose one output format");
  CountOptions options;
  options.context_length = args.context;
  options.elementwise = args.elementwise;

  const auto read_named = [](const std::string& path) {
    ModelConfig config = read_config(path);
    if (config.name.empty()) config.name = path;
    return config;
  };
  detail::Violations errors;
  std::optional<ModelConfig> reference;
  if (!args.sparsity_reference.empty()) {
    try {
      reference = read_named(args.sparsity_reference);
    } catch (const config_error& e) {
      errors.merge(e);
    }
  }
  std::vector<CountedModel> models;
  for (const auto& path : args.configs) {
    try {
      models.push_back(count_model(read_named(path), options, reference ? &*reference : nullptr));
    } catch (const config_error& e) {
      errors.merge(e);
    }
  }
  // --time: each config's predicted step under the layout (docs/time.md), the count's context as its sequence.
  std::vector<TimeReport> times;
  if (args.time || !args.hardware.empty()) {
    if (!args.time || args.hardware.empty())
      errors.add("--time, --hardware", args.hardware.empty() ? "--time" : args.hardware,
                 "go together: --time --hardware NAME|FILE predicts each config's step time");
    MemoryLayout layout;
    TimeOptions time_options;
    args.layout->apply(layout, errors);
    args.time_options->apply(time_options, errors);
    if (args.context_given) layout.seq = layout.context = args.context;
    if (errors.empty()) {
      const HardwareSpec hw = calibrated_hardware_spec(args.hardware, args.calibration);
      for (const CountedModel& m : models)
        errors.collect([&] { times.push_back(step_time(CheckedConfig(m.config), layout, hw, time_options)); });
    }
  }
  errors.throw_if_any();

  // Everything is computed before anything is printed.
  std::string out;
  if (args.json && args.time) {
    out = "[\n";
    for (std::size_t i = 0; i < times.size(); ++i) out += (i ? ",\n" : "") + time_report_json(times[i]);
    out += "]\n";
  } else if (args.json) {
    CountReportOptions report;
    report.every_layer = args.every_layer;
    out = count_report_json(models, convention, report);
  } else if (args.runs_csv) {
    out = count_runs_csv(models);
  } else {
    std::vector<std::string> names;
    for (const auto& m : models) names.push_back(m.cost.model);
    out = render_table(names, summary_rows(models, convention));
    out += reference ? fmt::format("sparsity reference: {}\n", shown_name(reference->name))
                     : "sparsity reference: each config with every expert active\n";
    if (args.layers)
      for (const auto& m : models)
        out += fmt::format("\n{}\n{}", shown_name(m.cost.model), layer_table(m, args.every_layer));
    for (const TimeReport& t : times) out += "\n" + time_text(t);
  }
  std::cout << out;
  return kOk;
}

}  // namespace

Run add_count(CLI::App& app) {
  auto args = std::make_shared<CountArgs>();
  auto* sub = app.add_subcommand("count", "Count parameters, FLOPs per token and KV cache of model configs");
  sub->add_option("CONFIG", args->configs, "Model configs: smelt native JSON or Hugging Face config.json")->required();
  sub->add_flag("--json", args->json, "Print ordered JSON instead of a table");
  sub->add_option("--context", args->context,
                  "Context length in tokens for attention FLOPs and KV cache "
                  "(default: each config's context_length)");
  sub->add_option("--convention", args->convention,
                  "FLOP convention: smelt (default), megatron, torchtitan or flop-counter");
  sub->add_flag("--elementwise", args->elementwise,
                "Also count norms, activations, softmax and residual adds (approximate)");
  sub->add_flag("--layers", args->layers,
                "Also print the layers (table output): one line per run of layers that cost the same");
  sub->add_flag("--every-layer", args->every_layer,
                "One line per layer with --layers; with --json, also the \"layers\" array, one object per layer");
  sub->add_option("--sparsity-reference", args->sparsity_reference,
                  "Config whose FLOPs and parameters (F0, N0) define sparsity S = 1 - (F/F0)(N0/N) "
                  "(default: each config with every expert active)");
  sub->add_flag("--runs-csv", args->runs_csv,
                "Print the model, N, F and S columns of a runs file for `fit --form smelt` (CSV)");
  sub->add_flag("--time", args->time,
                "Also predict each config's training-step and decode time per token on --hardware (docs/time.md); "
                "with --json, a list of time reports");
  sub->add_option(
      "--hardware", args->hardware,
      fmt::format("Device for --time: {} (data/hardware), or a spec file", fmt::join(hardware_names(), ", ")));
  sub->add_option("--calibration", args->calibration,
                  "With --time: a calibration of the device's backend (bench --calibrate)");
  args->layout = std::make_unique<OptionFlags<MemoryLayout>>(
      sub, std::vector<std::string_view>{"context", "convention", "device_memory"});
  args->time_options = std::make_unique<OptionFlags<TimeOptions>>(sub);
  auto* context = sub->get_option("--context");
  return [args, context] {
    args->context_given = context->count() > 0;
    return run_count(*args);
  };
}

}  // namespace smelt::cli
