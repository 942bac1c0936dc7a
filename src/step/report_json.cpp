// JSON kind "bench_step" (docs/json-schema.md): the measured and the predicted
// seconds per token under the same keys.
#include <nlohmann/json.hpp>

#include "smelt/bench_step.hpp"
#include "smelt/schema_version.hpp"

namespace smelt {
namespace {

using nlohmann::ordered_json;

ordered_json seconds_json(const StepSeconds& s) {
  ordered_json j;
  j["forward_seconds_per_token"] = s.forward_seconds_per_token;
  j["training_seconds_per_token"] = s.training_seconds_per_token;
  j["decode_seconds_per_token"] = s.decode_seconds_per_token;
  return j;
}

ordered_json result_json(const StepResult& r) {
  ordered_json j;
  j["model"] = r.model;
  j["backend"] = r.backend;
  j["device"] = r.device;
  j["blas"] = r.blas;
  j["tokens"] = r.tokens;
  j["context"] = r.context;
  j["sequences"] = r.sequences;
  j["layer_visits"] = r.layer_visits;
  j["parameters"] = r.parameters;
  j["measured"] = seconds_json(r.measured);
  j["predicted"] = r.predicted ? seconds_json(*r.predicted) : ordered_json();
  j["hardware"] = r.predicted ? ordered_json(r.hardware) : ordered_json();
  j["training_error_pct"] =
      r.predicted
          ? ordered_json(100.0 * (r.predicted->training_seconds_per_token / r.measured.training_seconds_per_token - 1))
          : ordered_json();
  j["forward_seconds"] = r.forward_seconds;
  j["training_seconds"] = r.training_seconds;
  j["decode_seconds"] = r.decode_seconds;
  j["flops"] = {{"analytic_training", r.analytic_training_flops},
                {"accounted_forward", r.accounted_forward_flops},
                {"accounted_training", r.accounted_training_flops}};
  j["training_tflops"] = r.training_tflops;
  j["first_loss"] = r.first_loss;
  j["last_loss"] = r.last_loss;
  j["expert_tokens"] = r.expert_tokens;
  j["load_imbalance"] = r.load_imbalance;
  return j;
}

}  // namespace

std::string bench_step_report_json(const std::vector<StepResult>& results) {
  ordered_json j;
  j["schema_version"] = kReportSchemaVersion;
  j["kind"] = "bench_step";
  j["results"] = ordered_json::array();
  for (const auto& r : results) j["results"].push_back(result_json(r));
  if (results.size() > 1) {
    j["comparison"] = ordered_json::array();
    const StepResult& base = results.front();
    for (std::size_t i = 1; i < results.size(); ++i) {
      const StepResult& r = results[i];
      ordered_json row;
      row["model"] = r.model;
      row["measured_training_ratio"] = r.measured.training_seconds_per_token / base.measured.training_seconds_per_token;
      row["predicted_training_ratio"] =
          r.predicted && base.predicted
              ? ordered_json(r.predicted->training_seconds_per_token / base.predicted->training_seconds_per_token)
              : ordered_json();
      row["analytic_flop_ratio"] = r.analytic_training_flops / base.analytic_training_flops;
      j["comparison"].push_back(row);
    }
  }
  return j.dump(2) + "\n";
}

}  // namespace smelt
