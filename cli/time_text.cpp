#include "time_text.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "smelt/detail/excerpt.hpp"
#include "table.hpp"

namespace smelt::cli {

std::string seconds_text(double s) {
  if (s >= 1) return fmt::format("{:.3g} s", s);
  if (s >= 1e-3) return fmt::format("{:.3g} ms", s * 1e3);
  if (s >= 1e-6) return fmt::format("{:.3g} us", s * 1e6);
  return fmt::format("{:.3g} ns", s * 1e9);
}

namespace {

// "attention_core 31% (compute), experts 25% (compute), ..." with the largest terms first.
std::string terms_line(const StepTime& step) {
  std::vector<std::pair<std::string_view, double>> terms;
  for (const Op& op : step.ops) {
    auto it = std::find_if(terms.begin(), terms.end(), [&](const auto& t) { return t.first == op.name; });
    if (it == terms.end()) it = terms.insert(terms.end(), {op.name, 0.0});
    it->second += op.seconds * static_cast<double>(op.times);
  }
  std::stable_sort(terms.begin(), terms.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out;
  for (const auto& [name, s] : terms) {
    if (s < 0.005 * step.seconds) continue;
    out += fmt::format("{}{} {:.0f}%", out.empty() ? "" : ", ", name, 100 * s / step.seconds);
  }
  return out;
}

std::string bound_line(const StepTime& step) {
  std::string out;
  for (Bound b : {Bound::compute, Bound::memory, Bound::communication, Bound::overhead}) {
    const double s = step.seconds_by_bound[static_cast<int>(b)];
    if (s > 0) out += fmt::format("{}{} {:.0f}%", out.empty() ? "" : ", ", to_string(b), 100 * s / step.seconds);
  }
  return out;
}

std::string step_lines(const char* label, const StepTime& step) {
  return fmt::format("{}: {} per token ({} per step of {:.0f} tokens)\n  bound: {}\n  terms: {}\n", label,
                     seconds_text(step.seconds_per_token()), seconds_text(step.seconds), step.tokens, bound_line(step),
                     terms_line(step));
}

}  // namespace

std::string time_text(const TimeReport& r) {
  const MemoryLayout& l = r.layout;
  std::string out = fmt::format("{} on {} ({}{})\n", shown_name(r.model), shown_name(r.hardware.name),
                                shown_name(r.hardware.description),
                                r.hardware.calibrated ? ", calibrated" : ", uncalibrated: data sheet and defaults");
  out += fmt::format(
      "  micro-batch {} x seq {}; tp {}, pp {}{}, ep {}, etp {}, cp {}, dp {}; {} micro-batches; "
      "recompute {}; weights {}, activations {}\n",
      l.micro_batch, l.seq, l.tp, l.pp, l.vpp > 1 ? fmt::format(" (vpp {})", l.vpp) : "", l.ep, l.etp, l.cp, l.dp,
      l.microbatches, to_string(l.recompute), to_string(l.param_dtype), to_string(l.activation_dtype));
  out += step_lines("training step", r.training);
  out += fmt::format("  model FLOPs utilization {:.1f}%\n", 100 * r.model_flops_utilization);
  out += step_lines("forward", r.forward);
  const std::int64_t batch = r.options.decode_batch > 0 ? r.options.decode_batch : l.batch;
  const std::int64_t context = r.options.decode_context > 0 ? r.options.decode_context : l.context;
  out += step_lines(fmt::format("decode (batch {} at context {})", batch, context).c_str(), r.decode);
  for (const std::string& a : r.assumptions) out += fmt::format("assumes {}\n", detail::one_line(a));  // names a spec
  return out;
}

}  // namespace smelt::cli
