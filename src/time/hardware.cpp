// Device specs: the shipped ones by name, or a file of the same schema
// (docs/time.md, "Hardware"). Every number must be positive and finite.
#include "smelt/hardware.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "smelt/calibration.hpp"
#include "smelt/error.hpp"
#include "smelt/file_io.hpp"
#include "time/hardware_data.hpp"
#include "time/hardware_read.hpp"
#include "util/json_reader.hpp"

namespace smelt {
namespace {

constexpr std::string_view kSchema = "smelt-hardware/1";
constexpr double kMinEfficiency = 1e-4;

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

// A rate (FLOP/s, bytes/s) within [1, 1e24]: every time the model divides by it stays finite.
double rate(detail::JsonObject& o, std::string_view key) {
  const double v = o.number(key);
  if (o.has(key) && !(v >= 1 && v <= 1e24)) o.violation(key, fmt::format("{}", v), "must be a rate in [1, 1e24]");
  return v;
}

// A latency in (0, 1] seconds.
double latency(detail::JsonObject& o, std::string_view key) {
  const double v = o.number(key);
  if (o.has(key) && !(v > 0 && v <= 1)) o.violation(key, fmt::format("{}", v), "must be in (0, 1] seconds");
  return v;
}

// An efficiency: a fraction in [1e-4, 1]. Any positive double was once allowed, and 5e-324 (the smallest) made a
// memory time of bytes / (bandwidth x 5e-324) infinite; no device reaches less than a ten-thousandth of its
// data sheet, and above it every time stays finite (docs/time.md, "Hardware").
double fraction(detail::JsonObject& o, std::string_view key) {
  const double v = o.number(key);
  if (o.has(key) && !(v >= kMinEfficiency && v <= 1))
    o.violation(key, fmt::format("{}", v), fmt::format("must be a fraction in [{}, 1]", kMinEfficiency));
  return v;
}

}  // namespace

double HardwareSpec::peak_flops(Dtype dtype) const {
  switch (dtype) {
    case Dtype::automatic:  // the time model's default: bf16 (step_time resolves it)
    case Dtype::bf16:
      return peak_flops_bf16;
    case Dtype::fp16:
      return peak_flops_fp16;
    case Dtype::fp32:
      break;
  }
  return peak_flops_fp32;
}

void time_detail::read_spec(detail::JsonObject& o, HardwareSpec& h) {
  const std::string schema = o.string("schema");
  if (o.has("schema") && schema != kSchema)
    o.violation("schema", fmt::format("\"{}\"", schema), fmt::format("must be \"{}\"", kSchema));
  h.name = o.string("name");
  if (o.has("name") && h.name.empty()) o.violation("name", "\"\"", "must not be empty");
  h.description = o.string("description", "");
  h.backend = o.string("backend");
  if (o.has("backend") && h.backend != "cuda" && h.backend != "rocm" && h.backend != "cpu")
    o.violation("backend", fmt::format("\"{}\"", h.backend), "must be cuda, rocm or cpu");
  h.peak_flops_bf16 = rate(o, "peak_flops_bf16");
  h.peak_flops_fp16 = rate(o, "peak_flops_fp16");
  h.peak_flops_fp32 = rate(o, "peak_flops_fp32");
  h.memory_bandwidth = rate(o, "memory_bandwidth");
  h.memory_bytes = o.integer("memory_bytes");
  if (o.has("memory_bytes") && h.memory_bytes <= 0)
    o.violation("memory_bytes", fmt::format("{}", h.memory_bytes), "must be positive");
  h.link_bandwidth = rate(o, "link_bandwidth");
  h.link_latency = latency(o, "link_latency");
  h.network_bandwidth = rate(o, "network_bandwidth");
  h.network_latency = latency(o, "network_latency");
  h.devices_per_node = o.integer("devices_per_node");
  if (o.has("devices_per_node") && (h.devices_per_node < 1 || h.devices_per_node > (1 << 20)))
    o.violation("devices_per_node", fmt::format("{}", h.devices_per_node), "must be in 1..1048576");
  h.op_overhead = o.number("op_overhead");
  if (o.has("op_overhead") && !(h.op_overhead >= 0 && h.op_overhead < 1))
    o.violation("op_overhead", fmt::format("{}", h.op_overhead), "must be in [0, 1) seconds");
  h.gemm_efficiency = fraction(o, "gemm_efficiency");
  h.gemm_half_size = o.number("gemm_half_size");
  if (o.has("gemm_half_size") && !(h.gemm_half_size >= 0 && h.gemm_half_size <= 1e6))
    o.violation("gemm_half_size", fmt::format("{}", h.gemm_half_size), "must be in [0, 1e6]");
  h.attention_efficiency = fraction(o, "attention_efficiency");
  h.memory_efficiency = fraction(o, "memory_efficiency");
  h.calibrated = o.boolean("calibrated", false);
  if (const nlohmann::json* s = o.raw("sources")) {
    if (!s->is_array()) o.violation("sources", detail::json_excerpt(*s), "must be a list of strings");
    for (const auto& item : s->is_array() ? *s : nlohmann::json::array())
      if (item.is_string()) h.sources.push_back(item.get<std::string>());
  }
  o.reject_unknown_keys();
}

HardwareSpec parse_hardware_spec(std::string_view json_text, std::string_view source) {
  const nlohmann::json json = detail::parse_json_text(json_text, source);
  detail::Violations errors;
  HardwareSpec h;
  if (!json.is_object()) {
    errors.add(Violation("", "", "a hardware spec is a JSON object"));
  } else if (json.contains("kind") && json["kind"] == "calibration") {
    // A calibration file: its measured spec with its GEMM table.
    const Calibration c = parse_calibration(json_text, source);
    if (!c.has_hardware)
      detail::throw_within(
          std::string(source),
          {Violation("hardware", "",
                     "missing: a calibration used as a spec file must hold its spec (calibrate_cpu writes one); "
                     "apply a table alone with calibrated_hardware_spec")});
    return apply_calibration(c.hardware, c, source);
  } else {
    detail::JsonObject o(json, "", errors);
    time_detail::read_spec(o, h);
  }
  if (!errors.empty()) detail::throw_within(std::string(source), errors.list());
  return h;
}

std::vector<std::string> hardware_names() {
  std::vector<std::string> names;
  for (const auto& s : time_detail::shipped_specs()) names.emplace_back(s.name);
  std::sort(names.begin(), names.end());
  return names;
}

HardwareSpec hardware_spec(std::string_view name_or_file) {
  const std::string name = lower(name_or_file);
  for (const auto& s : time_detail::shipped_specs())
    if (s.name == name) return parse_hardware_spec(s.json, fmt::format("data/hardware/{}.json", s.name));
  // Any file that exists is read as a config is: a pipe (<(...), /dev/stdin) or a FIFO too, and a directory is
  // read_text_file's io_error ("Is a directory"), not an unknown device.
  std::error_code ec;
  if (!name_or_file.empty() && std::filesystem::exists(std::filesystem::path(name_or_file), ec))
    return parse_hardware_spec(read_text_file(std::filesystem::path(name_or_file)), name_or_file);
  const std::vector<std::string> names = hardware_names();
  const std::string near = detail::nearest(name, names);
  throw config_error(Violation("hardware", fmt::format("\"{}\"", name_or_file),
                               fmt::format("is neither a known device ({}) nor a spec file{}", fmt::join(names, ", "),
                                           near.empty() ? "" : fmt::format(": did you mean \"{}\"?", near))));
}

}  // namespace smelt
