// Calibrating the time model on this machine (`smelt-match bench calibrate`,
// docs/time.md, "Calibration"): the CPU backend's single-thread fp32 GEMM rate
// over a grid of shapes, a streaming add's bandwidth and the smallest GEMM
// call's time, and the hardware spec they make.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "smelt/calibration.hpp"
#include "smelt/option_fields.hpp"

namespace smelt {

struct CalibrateOptions {
  bool quick = false;            // a 2 x 2 x 2 grid of small shapes (for tests), not the full grid
  std::int64_t repetitions = 3;  // in [1, 20]: timed runs per shape (each at least 10 ms of work); the median is kept
};

// CalibrateOptions' fields (include/smelt/option_fields.hpp). A repetition of the full grid takes about 2 s.
template <>
struct OptionTable<CalibrateOptions> {
  static constexpr std::string_view owner = "CalibrateOptions";
  using Field = OptionField<CalibrateOptions, bool, std::int64_t>;
  static constexpr auto fields = std::to_array<Field>({
      {"quick", OptionKind::boolean, &CalibrateOptions::quick, 0, 1,
       "A 2 x 2 x 2 grid of small shapes (a check, not a calibration)"},
      {"repetitions", OptionKind::integer, &CalibrateOptions::repetitions, 1, 20,
       "Timed runs of each shape; the median is kept"},
  });
};

// Runs the CPU backend for a few seconds (about 2 s a repetition on the full grid). Throws config_error naming
// CalibrateOptions::repetitions outside its bounds.
Calibration calibrate_cpu(const CalibrateOptions& options = {});

}  // namespace smelt
