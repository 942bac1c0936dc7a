// Calibrations (docs/time.md, "Calibration"): reading and writing the JSON kind
// "calibration", applying one to a spec, and a GEMM's rate from its table.
#include "smelt/calibration.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "smelt/error.hpp"
#include "smelt/file_io.hpp"
#include "smelt/schema_version.hpp"
#include "time/hardware_read.hpp"
#include "util/json_reader.hpp"

namespace smelt {
namespace {

using i64 = std::int64_t;
using ordered_json = nlohmann::ordered_json;

// Where `x` falls on an ascending axis: the lower point's index and the weight of the upper one, linear in log2.
std::pair<std::size_t, double> locate(const std::vector<i64>& axis, i64 x) {
  if (axis.size() == 1 || x <= axis.front()) return {0, 0.0};
  if (x >= axis.back()) return {axis.size() - 2, 1.0};
  const std::size_t hi = static_cast<std::size_t>(std::upper_bound(axis.begin(), axis.end(), x) - axis.begin());
  const double lo_log = std::log2(static_cast<double>(axis[hi - 1])), hi_log = std::log2(static_cast<double>(axis[hi]));
  return {hi - 1, (std::log2(static_cast<double>(x)) - lo_log) / (hi_log - lo_log)};
}

// An ascending axis of positive sizes, at least one.
std::vector<i64> axis(detail::JsonObject& o, std::string_view key) {
  std::vector<i64> out;
  const nlohmann::json* a = o.raw(key);
  if (a == nullptr) {
    o.violation(key, "", "missing (required)");
    return out;
  }
  const bool ok =
      a->is_array() && !a->empty() && a->size() <= 64 && std::all_of(a->begin(), a->end(), [](const nlohmann::json& v) {
        return v.is_number_integer() && v.get<i64>() >= 1 && v.get<i64>() <= (i64{1} << 30);
      });
  if (!ok) {
    o.violation(key, detail::json_excerpt(*a), "must be a list of 1 to 64 sizes in [1, 2^30]");
    return out;
  }
  for (const auto& v : *a) out.push_back(v.get<i64>());
  if (!std::is_sorted(out.begin(), out.end()) || std::adjacent_find(out.begin(), out.end()) != out.end()) {
    o.violation(key, detail::json_excerpt(*a), "must be strictly ascending");
    out.clear();
  }
  return out;
}

}  // namespace

double GemmTable::rate(i64 mm, i64 nn, i64 kk) const {
  const auto [im, wm] = locate(m, mm);
  const auto [in, wn] = locate(n, nn);
  const auto [ik, wk] = locate(k, kk);
  const auto at = [&](std::size_t a, std::size_t b, std::size_t c) {
    return flops_per_second[(a * n.size() + b) * k.size() + c];
  };
  double r = 0;
  for (std::size_t da = 0; da < (m.size() > 1 ? 2U : 1U); ++da)
    for (std::size_t db = 0; db < (n.size() > 1 ? 2U : 1U); ++db)
      for (std::size_t dc = 0; dc < (k.size() > 1 ? 2U : 1U); ++dc) {
        const double w = (da ? wm : 1 - wm) * (db ? wn : 1 - wn) * (dc ? wk : 1 - wk);
        if (w > 0) r += w * at(im + da, in + db, ik + dc);
      }
  return r;
}

Calibration parse_calibration(std::string_view json_text, std::string_view source) {
  const nlohmann::json json = detail::parse_json_text(json_text, source);
  detail::Violations errors;
  Calibration c;
  if (!json.is_object()) {
    errors.add(Violation("", "", "a calibration is a JSON object"));
  } else {
    detail::JsonObject o(json, "", errors);
    const i64 version = o.integer("schema_version");
    if (o.has("schema_version") && version != kCalibrationSchemaVersion)
      o.violation("schema_version", fmt::format("{}", version),
                  fmt::format("must be {} (this smelt reads calibration schema {})", kCalibrationSchemaVersion,
                              kCalibrationSchemaVersion));
    const std::string kind = o.string("kind");
    if (o.has("kind") && kind != "calibration")
      o.violation("kind", fmt::format("\"{}\"", kind), "must be \"calibration\"");
    c.backend = o.string("backend");
    if (o.has("backend") && c.backend != "cpu" && c.backend != "cuda")
      o.violation("backend", fmt::format("\"{}\"", c.backend), "must be cpu or cuda");
    c.device = o.string("device");
    const std::string dtype = o.string("dtype");
    if (o.has("dtype")) errors.collect([&] { c.dtype = parse_dtype(dtype, "dtype"); });
    c.threads = o.integer("threads");
    if (o.has("threads") && (c.threads < 1 || c.threads > 4096))
      o.violation("threads", fmt::format("{}", c.threads), "must be in 1..4096");
    c.memory_bandwidth = o.number("memory_bandwidth");
    if (o.has("memory_bandwidth") && !(c.memory_bandwidth >= 1 && c.memory_bandwidth <= 1e24))
      o.violation("memory_bandwidth", fmt::format("{}", c.memory_bandwidth), "must be a rate in [1, 1e24]");
    c.op_overhead = o.number("op_overhead");
    if (o.has("op_overhead") && !(c.op_overhead >= 0 && c.op_overhead < 1))
      o.violation("op_overhead", fmt::format("{}", c.op_overhead), "must be in [0, 1) seconds");
    if (auto g = o.object("gemm")) {
      c.gemm.m = axis(*g, "m");
      c.gemm.n = axis(*g, "n");
      c.gemm.k = axis(*g, "k");
      const nlohmann::json* r = g->raw("flops_per_second");
      const std::size_t cells = c.gemm.m.size() * c.gemm.n.size() * c.gemm.k.size();
      if (r == nullptr) {
        g->violation("flops_per_second", "", "missing (required)");
      } else if (!r->is_array() || (cells > 0 && r->size() != cells) ||
                 !std::all_of(r->begin(), r->end(), [](const nlohmann::json& v) {
                   return v.is_number() && v.get<double>() >= 1 && v.get<double>() <= 1e24;
                 })) {
        g->violation("flops_per_second", detail::json_excerpt(*r),
                     fmt::format("must be the grid's {} x {} x {} = {} rates in [1, 1e24] FLOP/s, k fastest",
                                 c.gemm.m.size(), c.gemm.n.size(), c.gemm.k.size(), cells));
      } else {
        for (const auto& v : *r) c.gemm.flops_per_second.push_back(v.get<double>());
      }
      g->reject_unknown_keys();
    }
    if (auto h = o.object("hardware", true)) {
      time_detail::read_spec(*h, c.hardware);
      c.has_hardware = true;
    }
    if (o.has("backend") && o.has("hardware") && c.hardware.backend != c.backend)
      o.violation("hardware.backend", fmt::format("\"{}\"", c.hardware.backend),
                  fmt::format("must be the calibration's backend (\"{}\")", c.backend));
    (void)o.string("date", "");
    (void)o.raw("note");
    o.reject_unknown_keys();
  }
  if (!errors.empty()) detail::throw_within(std::string(source), errors.list());
  return c;
}

std::string calibration_json(const Calibration& c) {
  ordered_json j;
  j["schema_version"] = kCalibrationSchemaVersion;
  j["kind"] = "calibration";
  j["backend"] = c.backend;
  j["device"] = c.device;
  j["dtype"] = std::string(to_string(c.dtype));
  j["threads"] = c.threads;
  j["memory_bandwidth"] = c.memory_bandwidth;
  j["op_overhead"] = c.op_overhead;
  j["gemm"] = {{"m", c.gemm.m}, {"n", c.gemm.n}, {"k", c.gemm.k}, {"flops_per_second", c.gemm.flops_per_second}};
  if (!c.has_hardware) return j.dump(2) + "\n";
  const HardwareSpec& h = c.hardware;
  j["hardware"] = {{"schema", "smelt-hardware/1"},
                   {"name", h.name},
                   {"description", h.description},
                   {"backend", h.backend},
                   {"peak_flops_bf16", h.peak_flops_bf16},
                   {"peak_flops_fp16", h.peak_flops_fp16},
                   {"peak_flops_fp32", h.peak_flops_fp32},
                   {"memory_bandwidth", h.memory_bandwidth},
                   {"memory_bytes", h.memory_bytes},
                   {"link_bandwidth", h.link_bandwidth},
                   {"link_latency", h.link_latency},
                   {"network_bandwidth", h.network_bandwidth},
                   {"network_latency", h.network_latency},
                   {"devices_per_node", h.devices_per_node},
                   {"op_overhead", h.op_overhead},
                   {"gemm_efficiency", h.gemm_efficiency},
                   {"gemm_half_size", h.gemm_half_size},
                   {"attention_efficiency", h.attention_efficiency},
                   {"memory_efficiency", h.memory_efficiency},
                   {"calibrated", true},
                   {"sources", h.sources}};
  return j.dump(2) + "\n";
}

HardwareSpec apply_calibration(HardwareSpec spec, const Calibration& c, std::string_view source) {
  if (c.backend != spec.backend)
    detail::throw_within(std::string(source),
                         {Violation("backend", fmt::format("\"{}\"", c.backend),
                                    fmt::format("must be the backend of the hardware spec {} (\"{}\"): a calibration "
                                                "measures one backend",
                                                spec.name, spec.backend))});
  spec.gemm_table = c.gemm;
  spec.calibrated = true;
  spec.calibration = fmt::format("{} ({} GEMM rates, {})", source, c.gemm.flops_per_second.size(), to_string(c.dtype));
  return spec;
}

HardwareSpec calibrated_hardware_spec(std::string_view name_or_file, const std::string& calibration_file) {
  HardwareSpec spec = hardware_spec(name_or_file);
  if (calibration_file.empty()) return spec;
  const std::string source = source_name(calibration_file);
  return apply_calibration(std::move(spec), parse_calibration(read_text_file(calibration_file), source), source);
}

}  // namespace smelt
