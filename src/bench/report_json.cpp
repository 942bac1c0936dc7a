#include <nlohmann/json.hpp>

#include "smelt/bench_report.hpp"
#include "smelt/detail/diff_pct.hpp"
#include "smelt/schema_version.hpp"

namespace smelt {
namespace {

using detail::diff_pct;
using nlohmann::ordered_json;

ordered_json counts(const FlopCounts& f) {
  ordered_json j;
  j["analytic"] = f.analytic;
  j["accounted"] = f.accounted;
  j["counter"] = f.counter ? ordered_json(*f.counter) : ordered_json();
  j["accounted_vs_analytic_pct"] = diff_pct(f.accounted, f.analytic);
  j["counter_vs_analytic_pct"] = f.counter ? ordered_json(diff_pct(*f.counter, f.analytic)) : ordered_json();
  j["counter_note"] = f.counter_note;
  return j;
}

ordered_json result_json(const BenchResult& r) {
  ordered_json j;
  j["model"] = r.model;
  j["backend"] = r.backend;
  j["device"] = r.device;
  j["tokens"] = r.tokens;
  j["context"] = r.context;
  j["layer_visits"] = r.layer_visits;
  j["moe_only"] = r.moe_only;
  j["seconds"] = r.seconds;
  j["seconds_per_token"] = r.seconds_per_token;
  j["tflops"] = r.tflops;
  j["dense_tflops"] = r.dense_tflops;
  j["pct_of_dense"] = r.pct_of_dense;
  j["expert_gemm_path"] = r.expert_gemm_path;
  j["expert_gemm_tflops"] = r.expert_gemm_tflops;
  j["flops"] = counts(r.flops);
  j["gemm_flops"] = counts(r.gemm_flops);
  j["expert_tokens"] = r.expert_tokens;
  j["load_imbalance"] = r.load_imbalance;
  j["max_rel_error"] = r.max_rel_error;
  j["tolerance"] = r.tolerance;
  j["correct"] = r.correct;
  return j;
}

}  // namespace

std::string bench_report_json(const std::vector<BenchResult>& results) {
  ordered_json j;
  j["schema_version"] = kReportSchemaVersion;
  j["kind"] = "bench";
  j["results"] = ordered_json::array();
  for (const auto& r : results) j["results"].push_back(result_json(r));
  if (results.size() > 1) {
    j["comparison"] = ordered_json::array();
    const BenchResult& base = results.front();
    for (std::size_t i = 1; i < results.size(); ++i)
      j["comparison"].push_back({{"model", results[i].model},
                                 {"time_ratio", results[i].seconds / base.seconds},
                                 {"analytic_flop_ratio", results[i].flops.analytic / base.flops.analytic},
                                 {"time_per_token_ratio", results[i].seconds_per_token / base.seconds_per_token}});
  }
  return j.dump(2) + "\n";
}

}  // namespace smelt
