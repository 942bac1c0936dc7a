// A device's data sheet as the time model reads it (docs/time.md, "Hardware"):
// peak dense FLOP/s per dtype, memory bandwidth and capacity, the links
// between devices, the fixed cost of one op. Shipped for a few accelerators
// (data/hardware/*.json, each number with its source) or read from a file of
// the same schema.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "smelt/memory.hpp"

namespace smelt {

// Measured GEMM rates over a grid of shapes (docs/time.md, "Calibration"):
// FLOP/s of C (m x n) = A (m x k) B (k x n) for every m, n, k of the axes.
struct GemmTable {
  std::vector<std::int64_t> m, n, k;     // ascending, each at least one value
  std::vector<double> flops_per_second;  // m.size() x n.size() x k.size(), k fastest
  // The rate at any shape: linear in log2 of each dimension between the grid's
  // points (trilinear), each dimension clamped to its axis.
  double rate(std::int64_t m, std::int64_t n, std::int64_t k) const;
};

struct HardwareSpec {
  std::string name;            // "h200": the word --hardware takes
  std::string description;     // "NVIDIA H200 SXM, 141 GB HBM3e"
  std::string backend;         // "cuda", "rocm" or "cpu"
  double peak_flops_bf16 = 0;  // dense (no structured sparsity), FLOP/s
  double peak_flops_fp16 = 0;
  double peak_flops_fp32 = 0;
  double memory_bandwidth = 0;    // bytes/s
  std::int64_t memory_bytes = 0;  // capacity
  double link_bandwidth = 0;      // within a node: bytes/s one device sends (one direction)
  double link_latency = 0;        // s per step of a collective within a node
  double network_bandwidth = 0;   // between nodes: bytes/s one device sends
  double network_latency = 0;     // s per step between nodes
  std::int64_t devices_per_node = 0;
  double op_overhead = 0;  // s: the fixed cost of one op (a kernel launch)
  // What the model assumes of attainable rates where no calibration table says
  // otherwise (docs/time.md, "Efficiency"): the best fraction of peak a GEMM
  // reaches, the size of a GEMM dimension at which it reaches half of it, the
  // fraction the attention core reaches, and the fraction of the memory
  // bandwidth a streaming op reaches.
  double gemm_efficiency = 0;
  double gemm_half_size = 0;
  double attention_efficiency = 0;
  double memory_efficiency = 0;
  bool calibrated = false;  // the rates were measured on this device (else: the data sheet's and the defaults)
  std::vector<std::string> sources;
  // With a calibration: a GEMM's compute time is its FLOPs over the table's
  // rate at its shape, in place of peak x gemm_efficiency x the saturation.
  std::optional<GemmTable> gemm_table;
  std::string calibration;  // the calibration's file and dtype, where one was applied

  // Peak dense FLOP/s for a dtype of the layout.
  double peak_flops(Dtype dtype) const;
};

// The shipped specs' names, sorted.
std::vector<std::string> hardware_names();

// A shipped spec by name (case-insensitive), or a spec file when `name_or_file`
// names an existing file: a hardware spec, or a calibration (kind
// "calibration", what `smelt-match bench calibrate` writes), whose measured
// spec and GEMM table it returns. Unknown names: config_error naming the nearest.
HardwareSpec hardware_spec(std::string_view name_or_file);

// A spec from its JSON text; `source` names it in errors (config_error with
// the file, field, value and rule: a missing or non-positive field).
HardwareSpec parse_hardware_spec(std::string_view json_text, std::string_view source);

}  // namespace smelt
