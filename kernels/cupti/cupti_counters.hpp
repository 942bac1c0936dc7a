// Hardware counter readings of the work a region of GPU code runs, through the
// CUPTI Range Profiler API (cupti_range_profiler.h + cupti_profiler_host.h,
// CUDA 12.6 and later). Made to count tensor-core operations, so that a
// kernel's FLOPs can be checked against what the hardware did.
//
// Nothing here aborts or throws: where counters cannot be read (no device, a
// toolkit without the API, profiling not permitted, an unknown metric, a
// failing call) ok() turns false, reason() says why, and end() returns
// readings marked unavailable with that reason.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace smelt::kernels {

struct CounterReading {
  bool available = false;
  std::string reason;       // why not, when unavailable
  std::string metric;       // e.g. "sm__ops_path_tensor_src_bf16_dst_fp32.sum"
  double value = 0;         // the metric's raw value over the range
  std::string unit;         // CUPTI's dimension unit for the metric, when known
  std::string description;  // CUPTI's description of the metric, when known
};

// One metric configuration on the current device's current context (the
// runtime's primary context of the current device when the object is built).
// Use one object at a time per context, from one thread, and destroy it before
// the device is reset.
class TensorCounter {
 public:
  explicit TensorCounter(std::vector<std::string> metrics = {"sm__ops_path_tensor_src_bf16_dst_fp32.sum",
                                                             "sm__inst_executed_pipe_tensor.sum"});
  ~TensorCounter();
  TensorCounter(const TensorCounter&) = delete;
  TensorCounter& operator=(const TensorCounter&) = delete;

  bool ok() const;  // false when counters cannot be read here; reason() says why
  const std::string& reason() const;

  // How ranges are measured, e.g. "chip GH100, user range, user replay, 1 pass":
  // metrics that fit one pass are read over one user range around everything
  // between begin() and end(); metrics that need more passes fall back to one
  // auto range per kernel with kernel replay, summed (right for .sum counters).
  const std::string& mode() const;

  // The chip's base counter metrics whose name contains `contains` (for
  // finding the right metric names on a new chip); empty when the chip could
  // not be queried.
  std::vector<std::string> counter_metrics(const std::string& contains) const;

  // Measures everything launched on the context between begin() and end() as
  // one range. begin() synchronizes the device first, so earlier work is not
  // counted; the caller synchronizes before end() (end() does so again).
  void begin();
  std::vector<CounterReading> end();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace smelt::kernels
