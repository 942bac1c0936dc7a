// The interface a benchmark backend implements. The CPU reference backend is
// part of the library; the CUDA backend lives in smelt::kernels and is
// registered by the program that links it (bench_registry.hpp), so the library
// never sees a CUDA header.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "smelt/bench.hpp"
#include "smelt/bench_plan.hpp"

namespace smelt {

class BenchBackend {
 public:
  virtual ~BenchBackend() = default;
  virtual std::string name() const = 0;
  // Why this backend cannot run here, or nullopt when it can.
  virtual std::optional<std::string> unavailable() const = 0;
  virtual BenchResult run(const LayerPlan& plan, const BenchOptions& options) = 0;
};

// The Eigen reference backend ("cpu"): float32 runs timed with a steady
// clock (median), checked against one float64 run.
std::shared_ptr<BenchBackend> make_cpu_backend();

}  // namespace smelt
