// A calibration: what one backend measured on this machine (docs/time.md,
// "Calibration"), as `smelt-match bench calibrate` writes it (JSON kind
// "calibration", schema_version 1): the GEMM rate over a grid of shapes, the
// streaming bandwidth, the fixed cost of one call, and the hardware spec they
// make. Applied to a spec of the same backend, the time model reads a GEMM's
// rate from the table.
#pragma once

#include <string>
#include <string_view>

#include "smelt/hardware.hpp"
#include "smelt/memory.hpp"

namespace smelt {

struct Calibration {
  std::string backend;  // "cpu" or "cuda": the spec it applies to must run on it
  std::string device;   // what ran it, in words
  Dtype dtype = Dtype::fp32;
  std::int64_t threads = 1;
  GemmTable gemm;
  double memory_bandwidth = 0;  // bytes/s a streaming add reached
  double op_overhead = 0;       // s: the smallest GEMM call's time
  HardwareSpec hardware;        // this machine's spec, from the measurements
  bool has_hardware = false;    // the file holds one (bench calibrate writes it; a table alone may not)
};

// Throws config_error naming `source`, the field, the value and the rule: a
// schema_version other than 1, another kind, a missing or non-positive field, a
// table that is not a full grid of ascending axes.
Calibration parse_calibration(std::string_view json_text, std::string_view source);

// The calibration as JSON (kind "calibration"), ordered; parse_calibration reads it back.
std::string calibration_json(const Calibration& calibration);

// `spec` with the calibration's GEMM table (and calibrated set): config_error
// naming `source` and `backend` where the calibration's backend is not the spec's.
HardwareSpec apply_calibration(HardwareSpec spec, const Calibration& calibration, std::string_view source);

// hardware_spec(name_or_file), with the calibration file's table applied when
// `calibration_file` is not empty (the file read, parsed and checked as above).
HardwareSpec calibrated_hardware_spec(std::string_view name_or_file, const std::string& calibration_file);

}  // namespace smelt
