// smelt-match memory CONFIG [layout flags]: the bytes one GPU holds to train
// (or serve) the config under a parallel layout, for the most loaded rank.
#include <algorithm>
#include <iostream>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "option_flags.hpp"
#include "smelt/config_io.hpp"
#include "smelt/detail/violations.hpp"
#include "smelt/error.hpp"
#include "smelt/memory.hpp"
#include "smelt/memory_report.hpp"
#include "table.hpp"

namespace smelt::cli {
namespace {

struct MemoryArgs {
  std::string config;
  bool json = false;
  std::unique_ptr<OptionFlags<MemoryLayout>> layout;
};

std::string bytes(std::int64_t b) { return human(static_cast<double>(b), Unit::bytes); }

// "weights 1.2 GB: experts 1.0 GB, attention 150 MB, ..." with the largest terms first.
std::string part_line(const char* label, const MemoryPart& p) {
  std::vector<MemoryTerm> terms = p.terms;
  std::stable_sort(terms.begin(), terms.end(), [](const auto& a, const auto& b) { return a.bytes > b.bytes; });
  std::string out = fmt::format("  {:<12} {:>10}", label, bytes(p.total));
  std::string sep = "  (";
  for (const MemoryTerm& t : terms) {
    if (t.bytes == 0) continue;
    out += fmt::format("{}{} {}", sep, t.name, bytes(t.bytes));
    sep = ", ";
  }
  return out + (sep == ", " ? ")\n" : "\n");
}

// The most loaded stage's runs of visits printed, and the stages whose totals are listed, at most.
constexpr std::size_t kRunLines = 12;
constexpr std::size_t kStageTotals = 64;

// "layers 2-3, visits 1-2 (4 visits): moe, full attention, 190 kB each".
std::string run_line(const VisitRun& v) {
  std::string layers = v.first_layer == v.last_layer ? fmt::format("layer {}", v.first_layer)
                                                     : fmt::format("layers {}-{}", v.first_layer, v.last_layer);
  if (v.step > 1) layers += fmt::format(" every {}", v.step);
  const std::string visits = v.first_visit == v.last_visit ? fmt::format("visit {}", v.first_visit)
                                                           : fmt::format("visits {}-{}", v.first_visit, v.last_visit);
  return fmt::format("    {}, {} ({} visit{}): {}, {} attention{}, {} each\n", layers, visits, v.count,
                     v.count == 1 ? "" : "s", v.moe ? "moe" : "dense", to_string(v.attention),
                     v.recompute == Recompute::none ? "" : fmt::format(", recompute {}", to_string(v.recompute)),
                     bytes(v.activations.total));
}

std::string human_report(const MemoryReport& r) {
  const MemoryLayout& l = r.layout;
  const StageMemory& w = r.stages[r.worst_stage];
  std::string out = fmt::format("{}: {} memory per GPU, convention {}\n", shown_name(r.model),
                                l.inference ? "inference" : "training", to_string(l.convention));
  if (l.inference)
    out += fmt::format("  batch {} x context {}; tp {}, pp {}, ep {}\n", l.batch, l.context, l.tp, l.pp, l.ep);
  else
    out += fmt::format("  micro-batch {} x seq {}; tp {}, pp {}{}, ep {}, etp {}, cp {}, dp {}{}{}; recompute {}\n",
                       l.micro_batch, l.seq, l.tp, l.pp, l.vpp > 1 ? fmt::format(" (vpp {})", l.vpp) : "", l.ep, l.etp,
                       l.cp, l.dp, l.sequence_parallel ? ", sequence parallel" : "",
                       l.zero > 0                ? fmt::format(", ZeRO-{}", l.zero)
                       : l.distributed_optimizer ? ", distributed optimizer"
                                                 : "",
                       to_string(l.recompute));
  if (l.inference)
    out += fmt::format("  dtypes: weights {}\n", to_string(l.param_dtype));
  else
    out += fmt::format("  dtypes: weights {}, gradients {}, optimizer {}, activations {}\n", to_string(l.param_dtype),
                       to_string(l.grad_dtype), to_string(l.optimizer_dtype), to_string(l.activation_dtype));
  out += fmt::format("most loaded rank: pipeline stage {} of {} (layers {}-{})\n", w.stage + 1, r.stages.size(),
                     w.layers.front(), w.layers.back());
  out += part_line("weights", w.weights);
  if (l.inference) {
    out += part_line("KV cache", w.kv_cache);
  } else {
    out += part_line("gradients", w.gradients);
    out += part_line("optimizer", w.optimizer);
    out += part_line("activations", w.activations);
    out += fmt::format("  {} layer visits in {} run(s), {} micro-batch chunk(s) in flight, {} per micro-batch\n",
                       w.layer_visits, w.visit_runs.size(), w.in_flight, bytes(w.activations_per_micro_batch));
    for (std::size_t i = 0; i < w.visit_runs.size() && i < kRunLines; ++i) out += run_line(w.visit_runs[i]);
    if (w.visit_runs.size() > kRunLines)
      out += fmt::format("    ... {} more runs (--json lists them all)\n", w.visit_runs.size() - kRunLines);
    if (!w.transient.terms.empty())
      out += fmt::format("  {:<12} {:>10}  the backward's peak ({})\n", "transient", bytes(w.transient.total),
                         w.transient.terms.front().name);
  }
  out += fmt::format("  {:<12} {:>10}", "total", bytes(r.total));
  if (l.device_memory.bytes > 0)
    out +=
        fmt::format("  = {:.3g}% of {} ({})", 100 * r.fraction_of_device,
                    l.device_memory.name.empty() ? "the device" : l.device_memory.name, bytes(l.device_memory.bytes));
  out += "\n";
  if (r.stages.size() > kStageTotals) {  // the smallest and the largest; the JSON has each
    const auto [least, most] = std::minmax_element(r.stages.begin(), r.stages.end(),
                                                   [](const auto& a, const auto& b) { return a.total < b.total; });
    out += fmt::format("per stage: {} stages, from {} to {} (--json lists each)\n", r.stages.size(),
                       bytes(least->total), bytes(most->total));
  } else if (r.stages.size() > 1) {
    out += "per stage:";
    for (const StageMemory& s : r.stages) out += fmt::format(" {}", bytes(s.total));
    out += "\n";
  }
  for (const std::string& a : r.assumptions) out += fmt::format("assumes {}\n", a);
  return out;
}

int run(const MemoryArgs& args) {
  detail::Violations errors;
  MemoryLayout layout;
  args.layout->apply(layout, errors);
  errors.throw_if_any();
  const MemoryReport report = memory(read_checked_config(args.config), layout);
  std::string text;
  try {
    text = args.json ? memory_report_json(report) : human_report(report);
  } catch (const std::bad_alloc&) {  // the report grows with the stages: many stages, little memory
    throw config_error(
        Violation(fmt::format("out of memory: the report of {} pipeline stages (--pp) could not be "
                              "written",
                              report.stages.size())));
  }
  std::cout << text;
  return kOk;
}

}  // namespace

Run add_memory(CLI::App& app) {
  auto a = std::make_shared<MemoryArgs>();
  auto* sub = app.add_subcommand("memory",
                                 "Bytes one GPU holds to train or serve a config under a parallel layout: weights, "
                                 "gradients, optimizer state, activations (docs/memory.md)");
  sub->add_option("CONFIG", a->config, "Model config: smelt native JSON or Hugging Face config.json")->required();
  a->layout = std::make_unique<OptionFlags<MemoryLayout>>(sub);
  sub->add_flag("--json", a->json, "Print ordered JSON instead of text");
  return [a] { return run(*a); };
}

}  // namespace smelt::cli
