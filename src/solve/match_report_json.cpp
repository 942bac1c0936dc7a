#include <nlohmann/json.hpp>

#include "config/native_json.hpp"
#include "memory/layout_json.hpp"
#include "smelt/config_io.hpp"
#include "smelt/match_report.hpp"

namespace smelt {
namespace {

using nlohmann::ordered_json;

ordered_json budget(const BudgetValue& v) {
  return {{"baseline", v.baseline}, {"candidate", v.candidate}, {"mismatch_pct", v.mismatch_pct}};
}

// Parameter counts are exact integers.
ordered_json count_budget(const BudgetValue& v) {
  return {{"baseline", static_cast<std::int64_t>(v.baseline)},
          {"candidate", static_cast<std::int64_t>(v.candidate)},
          {"mismatch_pct", v.mismatch_pct}};
}

ordered_json budgets(const BudgetsAt& at) {
  return {{"flops_per_token", budget(at.flops)},
          {"params_non_embedding", count_budget(at.params)},
          {"kv_bytes_per_token", budget(at.kv)},
          {"flops_per_token_with_head", budget(at.flops_with_head)},
          {"flops_per_token_non_embedding", budget(at.flops_non_embedding)}};
}

ordered_json knobs(const Knobs& k) {
  return {{"hidden_size", k.hidden},        {"num_experts", k.experts},    {"num_heads", k.heads},
          {"num_kv_heads", k.kv_heads},     {"head_dim", k.head_dim},      {"expert_width", k.expert_width},
          {"shared_width", k.shared_width}, {"dense_width", k.dense_width}};
}

ordered_json candidate(const Candidate& c) {
  ordered_json j;
  j["name"] = c.config.name;
  j["knobs"] = knobs(c.knobs);
  j["equivalent_head_splits"] = c.head_splits.size();
  j["head_splits"] = ordered_json::array();
  for (const HeadSplit& h : c.head_splits)
    j["head_splits"].push_back({{"num_heads", h.heads}, {"num_kv_heads", h.kv_heads}, {"head_dim", h.head_dim}});
  j["budgets"] = budgets(c.budgets.front());
  j["max_abs_mismatch_pct"] = c.max_abs_mismatch_pct;
  j["contexts"] = ordered_json::array();
  for (const auto& at : c.budgets) {
    ordered_json one{{"context", at.context}};
    one.update(budgets(at));
    j["contexts"].push_back(std::move(one));
  }
  j["layers_executed"] = c.executed_layers;
  j["depth_to_width"] = c.depth_to_width;
  j["active_params"] = c.active_params;
  j["residual_scale"] = c.config.looped() ? c.config.loops.front().residual_scale : 1.0;
  // Per-GPU bytes under the memory layout, or null with the reason.
  j["memory_bytes"] = c.memory ? count_budget(*c.memory) : ordered_json();
  j["memory_note"] = c.memory ? ordered_json() : ordered_json(c.memory_note);
  // Predicted seconds per token on MatchOptions::hardware, or null (with the reason where there is one).
  j["training_seconds_per_token"] = c.training_time ? budget(*c.training_time) : ordered_json();
  j["decode_seconds_per_token"] = c.decode_time ? budget(*c.decode_time) : ordered_json();
  j["time_note"] = c.time_note.empty() ? ordered_json() : ordered_json(c.time_note);
  j["config"] = config_detail::config_json(c.config);
  return j;
}

// A solved relaxation carries its best's mismatch and knobs, a refused one its
// error; the other keys are null.
ordered_json relaxation(const Relaxation& r) {
  ordered_json changes = ordered_json::array();
  for (const FieldChange& c : r.changes) changes.push_back({{"field", c.field}, {"value", c.value}});
  ordered_json j{{"changes", std::move(changes)}};
  j["max_abs_mismatch_pct"] = r.solved ? ordered_json(r.max_abs_mismatch_pct) : ordered_json();
  j["within_tolerance"] = r.within_tolerance;
  j["knobs"] = r.solved ? knobs(r.knobs) : ordered_json();
  j["error"] = r.solved ? ordered_json() : ordered_json(r.error);
  return j;
}

// A pinned or ranged knob as [lo, hi]; "default" for its default domain.
ordered_json range(const std::optional<KnobRange>& r) {
  if (!r) return "default";
  return ordered_json::array({r->lo, r->hi});
}

}  // namespace

std::string match_report_json(const MatchResult& r) {
  ordered_json j;
  j["schema_version"] = kMatchReportSchemaVersion;
  j["kind"] = "match";
  j["baseline"] = {
      {"name", r.baseline.name},
      {"hidden_size", r.baseline.hidden_size},
      {"layers_executed", r.baseline_executed_layers},
      {"depth_to_width", static_cast<double>(r.baseline_executed_layers) / static_cast<double>(r.baseline.hidden_size)},
      {"active_params", r.baseline_active_params},
      {"config", config_detail::config_json(r.baseline)}};
  ordered_json match = ordered_json::array();
  for (const Budget b : r.options.match) match.push_back(to_string(b));
  j["recipe"] = {{"span", r.loop.active() ? format_span(r.loop) : std::string("none")},
                 {"loops", r.loop.active() ? r.loop.count : 1},
                 {"residual_scale", r.loop.active() ? r.loop.residual_scale : 1.0},
                 {"match", match},
                 {"flops_with_head", r.options.flops_with_head},
                 {"contexts", r.options.contexts},
                 {"tolerance_pct", r.options.tolerance_pct},
                 {"ffn", to_string(r.space.ffn)},
                 {"align_hidden", r.space.align_hidden},
                 {"align_experts", r.space.align_experts},
                 {"align_head_dim", r.space.align_head_dim},
                 {"align_ffn", r.space.align_ffn},
                 {"min_head_dim", r.space.min_head_dim},
                 {"max_head_dim", r.space.max_head_dim},
                 {"attention_ratio", ordered_json::array({r.space.attention_ratio.lo, r.space.attention_ratio.hi})},
                 {"free_heads", r.space.free_heads},
                 {"depth", r.candidates.empty() ? r.baseline.num_layers : r.candidates.front().config.num_layers},
                 {"hidden", range(r.space.hidden)},
                 {"experts", range(r.space.experts)},
                 {"head_dim", range(r.space.head_dim)},
                 {"kv_heads", range(r.space.kv_heads)},
                 {"heads", range(r.space.heads)},
                 {"expert_width", range(r.space.expert_width)},
                 {"relaxations", r.options.relaxations}};
  j["memory"] = {{"layout", memory_detail::layout_json(r.options.memory_layout)},
                 {"limit_bytes", r.options.memory_limit.bytes},
                 {"limit_name", r.options.memory_limit.name},
                 {"dropped", r.dropped_for_memory}};
  j["time"] = {{"hardware", r.options.hardware},
               {"limit_ratio", r.options.time_limit},
               {"imbalance", r.options.time_options.imbalance},
               {"decode_batch", r.options.time_options.decode_batch},
               {"decode_context", r.options.time_options.decode_context},
               {"dropped", r.dropped_for_time}};
  j["space_size"] = r.space_size;
  j["evaluated"] = r.evaluated;
  j["within_tolerance"] = r.within_tolerance;
  ordered_json why = ordered_json::array();
  for (const Message& m : r.why) why.push_back(m.text);
  j["why"] = std::move(why);
  j["relaxations"] = ordered_json::array();
  for (const Relaxation& x : r.relaxations) j["relaxations"].push_back(relaxation(x));
  j["best"] = r.candidates.empty() ? ordered_json() : candidate(r.candidates.front());
  j["alternatives"] = ordered_json::array();
  for (std::size_t i = 1; i < r.candidates.size(); ++i) j["alternatives"].push_back(candidate(r.candidates[i]));
  return j.dump(2) + "\n";
}

}  // namespace smelt
