// memory_report_json(): the JSON shape documented in docs/json-schema.md.
#include <string>

#include <nlohmann/json.hpp>

#include "memory/layout_json.hpp"
#include "smelt/memory_report.hpp"
#include "smelt/option_fields.hpp"
#include "smelt/schema_version.hpp"

namespace smelt {
namespace memory_detail {
namespace {

using nlohmann::ordered_json;

ordered_json value_of(std::int64_t v) { return v; }
ordered_json value_of(bool v) { return v; }
ordered_json value_of(const std::vector<std::int64_t>& v) { return v; }
ordered_json value_of(const DeviceMemory& v) { return {{"bytes", v.bytes}, {"name", v.name}}; }
template <class E>
ordered_json value_of(E v) {
  return std::string(to_string(v));
}

}  // namespace

ordered_json layout_json(const MemoryLayout& l) {
  ordered_json j = ordered_json::object();
  for (const auto& row : OptionTable<MemoryLayout>::fields)
    std::visit([&](auto member) { j[std::string(row.name)] = value_of(l.*member); }, row.member);
  return j;
}

}  // namespace memory_detail

namespace {

using memory_detail::layout_json;
using nlohmann::ordered_json;

ordered_json part(const MemoryPart& p) {
  ordered_json terms = ordered_json::object();
  for (const MemoryTerm& t : p.terms) terms[t.name] = t.bytes;
  return {{"total", p.total}, {"terms", terms}};
}

ordered_json stage_json(const StageMemory& s, bool training, bool runs) {
  ordered_json j;
  j["stage"] = s.stage;
  j["first_layer"] = s.layers.front();  // a stage holds consecutive layers
  j["last_layer"] = s.layers.back();
  j["weights"] = part(s.weights);
  if (training) {
    j["gradients"] = part(s.gradients);
    j["optimizer"] = part(s.optimizer);
    j["activations"] = part(s.activations);
    j["transient"] = part(s.transient);
    j["in_flight"] = s.in_flight;
    j["activations_per_micro_batch"] = s.activations_per_micro_batch;
  } else {
    j["kv_cache"] = part(s.kv_cache);
  }
  j["total"] = s.total;
  if (runs && training) {
    j["layer_visits"] = s.layer_visits;
    ordered_json rows = ordered_json::array();
    for (const VisitRun& v : s.visit_runs)
      rows.push_back({{"first_layer", v.first_layer},
                      {"last_layer", v.last_layer},
                      {"step", v.step},
                      {"first_visit", v.first_visit},
                      {"last_visit", v.last_visit},
                      {"count", v.count},
                      {"kind", v.moe ? "moe" : "dense"},
                      {"attention", std::string(to_string(v.attention))},
                      {"recompute", std::string(to_string(v.recompute))},
                      {"activations", part(v.activations)}});
    j["visit_runs"] = rows;
  }
  return j;
}

}  // namespace

std::string memory_report_json(const MemoryReport& r) {
  const bool training = !r.layout.inference;
  ordered_json j;
  j["schema_version"] = kMemoryReportSchemaVersion;
  j["kind"] = "memory";
  j["model"] = r.model;
  j["mode"] = training ? "training" : "inference";
  j["layout"] = layout_json(r.layout);
  j["total"] = r.total;
  j["device_memory"] = r.layout.device_memory.bytes;
  j["fraction_of_device"] = r.fraction_of_device;
  j["worst_rank"] = stage_json(r.stages[r.worst_stage], training, true);
  ordered_json stages = ordered_json::array();
  for (const StageMemory& s : r.stages) stages.push_back(stage_json(s, training, false));
  j["per_stage"] = stages;
  j["assumptions"] = r.assumptions;
  return j.dump(2) + "\n";
}

}  // namespace smelt
