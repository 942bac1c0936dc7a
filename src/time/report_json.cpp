// time_report_json(): the JSON shape documented in docs/json-schema.md.
#include <string>

#include <nlohmann/json.hpp>

#include "memory/layout_json.hpp"
#include "smelt/schema_version.hpp"
#include "smelt/time_report.hpp"

namespace smelt {
namespace {

using nlohmann::ordered_json;

ordered_json op_json(const Op& op) {
  ordered_json j;
  j["name"] = std::string(op.name);
  j["kind"] = std::string(to_string(op.kind));
  j["layer"] = op.layer;
  j["visit"] = op.visit;
  j["backward"] = op.backward;
  if (op.kind == OpKind::gemm || op.kind == OpKind::grouped_gemm) {
    j["m"] = op.m, j["n"] = op.n, j["k"] = op.k;
    if (op.kind == OpKind::grouped_gemm) j["groups"] = op.groups;
  }
  if (op.kind == OpKind::collective) j["ranks"] = op.m;
  j["flops"] = op.flops;
  j["bytes"] = op.bytes;
  j["seconds"] = op.seconds;
  j["bound"] = std::string(to_string(op.bound));
  j["times"] = op.times;
  if (op.recomputed) j["recomputed"] = true;
  return j;
}

ordered_json step_json(const StepTime& s, bool ops) {
  ordered_json j;
  j["seconds"] = s.seconds;
  j["tokens"] = s.tokens;
  j["flops"] = s.flops;
  ordered_json bound;
  for (Bound b : {Bound::compute, Bound::memory, Bound::communication, Bound::overhead})
    bound[std::string(to_string(b))] = s.seconds_by_bound[static_cast<int>(b)];
  j["seconds_by_bound"] = bound;
  // The ops summed per counted term, and, on request, one by one.
  ordered_json terms = ordered_json::object();
  for (const Op& op : s.ops) {
    const std::string name(op.name);
    if (!terms.contains(name)) terms[name] = 0.0;
    terms[name] = terms[name].get<double>() + op.seconds * static_cast<double>(op.times);
  }
  j["seconds_by_term"] = terms;
  if (ops) {
    ordered_json list = ordered_json::array();
    for (const Op& op : s.ops) list.push_back(op_json(op));
    j["ops"] = list;
  }
  return j;
}

}  // namespace

std::string time_report_json(const TimeReport& r) {
  ordered_json j;
  j["schema_version"] = kTimeReportSchemaVersion;
  j["kind"] = "time";
  j["model"] = r.model;
  j["hardware"] = {{"name", r.hardware.name},
                   {"description", r.hardware.description},
                   {"calibrated", r.hardware.calibrated},
                   {"calibration", r.hardware.calibration}};
  j["layout"] = memory_detail::layout_json(r.layout);
  j["options"] = {{"imbalance", r.options.imbalance},
                  {"decode_batch", r.options.decode_batch},
                  {"decode_context", r.options.decode_context}};
  j["training_seconds_per_token"] = r.training_seconds_per_token;
  j["forward_seconds_per_token"] = r.forward_seconds_per_token;
  j["decode_seconds_per_token"] = r.decode_seconds_per_token;
  j["model_flops_utilization"] = r.model_flops_utilization;
  j["training"] = step_json(r.training, true);
  j["forward"] = step_json(r.forward, false);
  j["decode"] = step_json(r.decode, true);
  j["assumptions"] = r.assumptions;
  return j.dump(2) + "\n";
}

}  // namespace smelt
