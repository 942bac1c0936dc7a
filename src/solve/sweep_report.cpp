#include "smelt/sweep_report.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "smelt/io.hpp"
#include "smelt/report.hpp"

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
  j["residual_scale"] = r.config.loop.active() ? r.config.loop.residual_scale : 1.0;
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
  j["config"] = ordered_json::parse(to_json(r.config));
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

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (const char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string sweep_report_csv(const std::vector<SweepRow>& rows) {
  std::string out = std::string(kSweepCsvHeader) + "\n";
  for (const SweepRow& r : rows) {
    const Knobs& k = r.knobs;
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", csv_field(to_string(r.kind)),
                       r.span_fraction, r.depth_multiplier, csv_field(r.span), r.loops, r.config.num_layers,
                       r.executed_layers, k.hidden, k.experts, k.heads, k.kv_heads, k.head_dim, r.flops_mismatch_pct,
                       r.params_mismatch_pct, r.kv_mismatch_pct, r.max_abs_mismatch_pct,
                       r.within_tolerance ? "yes" : "no", r.depth_to_width);
  }
  return out;
}

}  // namespace smelt
