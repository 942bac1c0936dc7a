#include "smelt/sweep_report.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "config/native_json.hpp"
#include "smelt/config_io.hpp"
#include "smelt/schema_version.hpp"
#include "util/csv.hpp"

namespace smelt {
namespace {

using nlohmann::ordered_json;

ordered_json row_json(const SweepRow& r) {
  ordered_json j;
  j["kind"] = to_string(r.kind);
  j["span_fraction"] = r.span_fraction;
  j["depth_multiplier"] = r.depth_multiplier;
  j["span"] = r.span;
  j["loops"] = r.loops;
  j["residual_scale"] = r.config.looped() ? r.config.loops.front().residual_scale : 1.0;
  j["depth"] = r.config.num_layers;
  j["executed_layers"] = r.executed_layers;
  j["hidden_size"] = r.knobs.hidden;
  j["num_experts"] = r.knobs.experts;
  j["num_heads"] = r.knobs.heads;
  j["num_kv_heads"] = r.knobs.kv_heads;
  j["head_dim"] = r.knobs.head_dim;
  j["flops_mismatch_pct"] = r.flops_mismatch_pct;
  j["params_mismatch_pct"] = r.params_mismatch_pct;
  j["kv_mismatch_pct"] = r.kv_mismatch_pct;
  j["max_abs_mismatch_pct"] = r.max_abs_mismatch_pct;
  j["within_tolerance"] = r.within_tolerance;
  j["depth_to_width"] = r.depth_to_width;
  j["memory_bytes"] = r.memory_bytes ? ordered_json(*r.memory_bytes) : ordered_json();
  j["memory_mismatch_pct"] = r.memory_mismatch_pct ? ordered_json(*r.memory_mismatch_pct) : ordered_json();
  j["training_seconds_per_token"] =
      r.training_seconds_per_token ? ordered_json(*r.training_seconds_per_token) : ordered_json();
  j["training_time_mismatch_pct"] =
      r.training_time_mismatch_pct ? ordered_json(*r.training_time_mismatch_pct) : ordered_json();
  j["config"] = config_detail::config_json(r.config);
  return j;
}

}  // namespace

std::string sweep_report_json(const ModelConfig& baseline, const std::vector<SweepRow>& rows,
                              const MatchOptions& match) {
  ordered_json j;
  j["schema_version"] = kReportSchemaVersion;
  j["kind"] = "sweep";
  j["baseline"] = baseline.name;
  ordered_json budgets = ordered_json::array();
  for (const Budget b : match.match) budgets.push_back(to_string(b));
  j["match"] = budgets;
  j["contexts"] = match.contexts.empty() ? std::vector<std::int64_t>{baseline.context_length} : match.contexts;
  j["tolerance_pct"] = match.tolerance_pct;
  j["rows"] = ordered_json::array();
  for (const SweepRow& r : rows) j["rows"].push_back(row_json(r));
  return j.dump(2) + "\n";
}

std::string sweep_report_csv(const std::vector<SweepRow>& rows) {
  std::string out = std::string(kSweepCsvHeader) + "\n";
  const auto text = [](const auto& v) { return fmt::format("{}", v); };
  for (const SweepRow& r : rows) {
    const Knobs& k = r.knobs;
    out += detail::csv_record({std::string(to_string(r.kind)),
                               text(r.span_fraction),
                               text(r.depth_multiplier),
                               r.span,
                               text(r.loops),
                               text(r.config.num_layers),
                               text(r.executed_layers),
                               text(k.hidden),
                               text(k.experts),
                               text(k.heads),
                               text(k.kv_heads),
                               text(k.head_dim),
                               text(r.flops_mismatch_pct),
                               text(r.params_mismatch_pct),
                               text(r.kv_mismatch_pct),
                               text(r.max_abs_mismatch_pct),
                               r.within_tolerance ? "yes" : "no",
                               text(r.depth_to_width),
                               r.memory_bytes ? text(*r.memory_bytes) : "",
                               r.memory_mismatch_pct ? text(*r.memory_mismatch_pct) : "",
                               r.training_seconds_per_token ? text(*r.training_seconds_per_token) : "",
                               r.training_time_mismatch_pct ? text(*r.training_time_mismatch_pct) : ""});
  }
  return out;
}

}  // namespace smelt
