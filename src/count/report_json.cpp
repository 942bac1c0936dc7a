// count_report_json(): the JSON shape documented in docs/json-schema.md.
#include <string>

#include <nlohmann/json.hpp>

#include "smelt/count_report.hpp"
#include "smelt/detail/count_report_terms.hpp"
#include "smelt/layer_runs.hpp"

namespace smelt {
namespace {

using nlohmann::ordered_json;

// A layer's terms (layer) leave out the model-level ones (smelt/detail/count_report_terms.hpp).
ordered_json flop_terms(const FlopTerms& t, bool layer = false) {
  ordered_json j = ordered_json::object();
  for (const detail::FlopTermField& f : detail::kFlopTermFields)
    if (f.per_layer || !layer) j[std::string(f.name)] = t.*f.value;
  return j;
}

ordered_json param_terms(const ParamTerms& t, bool layer = false) {
  ordered_json j = ordered_json::object();
  for (const detail::ParamTermField& f : detail::kParamTermFields)
    if (f.per_layer || !layer) j[std::string(f.name)] = t.*f.value;
  return j;
}

// What one layer costs, after the keys that say which layers: "layer" for one,
// "first", "last", "step", "count" for a run.
void layer_fields(ordered_json& j, const LayerCost& l) {
  j["kind"] = l.moe ? "moe" : "dense";
  j["attention"] = to_string(l.attention);
  j["visits"] = l.visits;
  j["params"] = param_terms(l.params, true);
  j["active_params"] = l.active_params;
  j["flops_per_visit"] = flop_terms(l.flops_per_visit, true);
  j["flops_per_visit"]["total"] = l.flops_per_visit.forward();
  j["kv_elements_per_token_held"] = l.kv_elements_per_visit;
  j["kv_tokens_held"] = l.kv_tokens_held;
  j["kv_bytes_per_visit"] = l.kv_bytes_per_visit;
}

ordered_json layer_json(const LayerCost& l) {
  ordered_json j;
  j["layer"] = l.layer;
  layer_fields(j, l);
  return j;
}

ordered_json run_json(const LayerRun& r) {
  ordered_json j;
  j["first"] = r.first;
  j["last"] = r.last;
  j["step"] = r.step;
  j["count"] = r.count();
  layer_fields(j, r.cost);
  return j;
}

ordered_json flops_json(const CountedModel& m, Convention convention) {
  ordered_json f;
  if (convention == Convention::megatron) {
    const MegatronFlops mf = megatron_flops(m.config, m.cost.context_length);
    f["forward"] = mf.forward();
    f["training"] = mf.training();
    f["terms_training"] = {{"self_attention", mf.self_attention},
                           {"dense_mlp", mf.dense_mlp},
                           {"routed_experts", mf.routed_experts},
                           {"shared_experts", mf.shared_experts},
                           {"mtp", mf.mtp},
                           {"logits", mf.logits}};
    return f;
  }
  if (convention == Convention::torchtitan) {
    const TorchtitanFlops tt = torchtitan_flops(m.config, m.cost.context_length);
    f["forward"] = tt.forward();
    f["training"] = tt.training();
    f["params"] = tt.params;
    f["terms_training"] = {{"parameters", tt.parameters}, {"attention", tt.attention}};
    return f;
  }
  if (convention == Convention::flop_counter) {
    const FlopCounterFlops fc = flop_counter_flops(m.config, m.cost.context_length);
    f["forward"] = fc.forward_per_token();
    f["forward_per_sequence"] = fc.forward_per_sequence();
    f["terms"] = flop_terms(fc.per_token);
    f["terms"].erase("elementwise");  // never counted
    f["terms"].erase("mtp");
    return f;
  }
  const auto& c = m.cost.flops;
  f["forward"] = c.forward;
  f["forward_non_embedding"] = c.forward_non_embedding();
  f["training"] = c.training;
  f["terms"] = flop_terms(c.terms);
  return f;
}

ordered_json model_json(const CountedModel& m, Convention convention, const CountReportOptions& options) {
  const CostReport& r = m.cost;
  ordered_json j;
  j["schema_version"] = kCountReportSchemaVersion;
  j["kind"] = "count";
  j["model"] = r.model;
  j["convention"] = to_string(convention);
  j["context_length"] = r.context_length;
  j["layers_stored"] = m.config.num_layers;
  j["layers_executed"] = r.executed_layers;
  std::vector<const LoopConfig*> spans;
  for (const LoopConfig& l : m.config.loops)
    if (l.active()) spans.push_back(&l);
  const auto span = [](const LoopConfig& l) {
    return ordered_json{{"span", format_span(l)}, {"count", l.count}, {"residual_scale", l.residual_scale}};
  };
  if (spans.size() == 1) j["loop"] = span(*spans.front());
  if (spans.size() > 1) {
    j["loops"] = ordered_json::array();
    for (const LoopConfig* l : spans) j["loops"].push_back(span(*l));
  }
  const auto& p = r.params;
  j["params"] = {{"total", p.total},     {"embedding", p.embedding},
                 {"lm_head", p.lm_head}, {"non_embedding", p.non_embedding},
                 {"active", p.active},   {"active_non_embedding", p.active_non_embedding},
                 {"mtp", p.mtp},         {"terms", param_terms(p.terms)}};
  j["flops_per_token"] = flops_json(m, convention);
  j["kv_cache"] = {{"bytes_per_token", r.kv.bytes_per_token},
                   {"elements_per_token", r.kv.elements_per_token},
                   {"bytes_at_context", r.kv.bytes_at_context},
                   {"element_bytes", m.config.kv_cache_bytes}};
  const Sparsity& s = m.sparsity;
  j["sparsity"] = {{"S", s.value},
                   {"reference", s.reference.empty() ? "every_expert_active" : "config"},
                   {"reference_model", s.reference.empty() ? ordered_json() : ordered_json(s.reference)},
                   {"flops_forward_non_embedding", s.flops},
                   {"params_non_embedding", s.params},
                   {"reference_flops_forward_non_embedding", s.reference_flops},
                   {"reference_params_non_embedding", s.reference_params}};
  j["layer_runs"] = ordered_json::array();
  for (const auto& run : layer_runs(m.config, r)) j["layer_runs"].push_back(run_json(run));
  if (options.every_layer) {
    j["layers"] = ordered_json::array();
    for (const auto& l : r.layers) j["layers"].push_back(layer_json(l));
  }
  return j;
}

}  // namespace

std::string count_report_json(const std::vector<CountedModel>& models, Convention convention,
                              const CountReportOptions& options) {
  if (models.size() == 1) return model_json(models.front(), convention, options).dump(2) + "\n";
  ordered_json all = ordered_json::array();
  for (const auto& m : models) all.push_back(model_json(m, convention, options));
  return all.dump(2) + "\n";
}

}  // namespace smelt
