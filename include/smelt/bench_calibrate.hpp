// Calibrating the time model on this machine (`smelt-match bench --calibrate`,
// docs/time.md, "Calibration"): the CPU backend's single-thread fp32 GEMM rate
// over a grid of shapes, a streaming add's bandwidth and the smallest GEMM
// call's time, and the hardware spec they make.
#pragma once

#include <cstdint>

#include "smelt/calibration.hpp"

namespace smelt {

struct CalibrateOptions {
  bool quick = false;            // a 2 x 2 x 2 grid of small shapes (for tests), not the full grid
  std::int64_t repetitions = 3;  // timed runs per shape (each at least 10 ms of work); the median is kept
};

// Runs the CPU backend for a few seconds (about 2 s a repetition on the full grid).
Calibration calibrate_cpu(const CalibrateOptions& options = {});

}  // namespace smelt
