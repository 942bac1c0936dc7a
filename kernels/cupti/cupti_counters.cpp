// TensorCounter: hardware counter readings through the CUPTI Range Profiler.
// The session itself (the host object, the config image, the counter data
// image and the range profiler calls) is TensorCounter::State, in
// cupti_session.hpp/.cpp; without the Range Profiler API in the toolkit a stub
// State here says why.
#include "cupti/cupti_counters.hpp"

#include "cupti/cupti_session.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include <cuda_runtime.h>

namespace smelt::kernels {

namespace {

std::vector<CounterReading> unavailable(const std::vector<std::string>& metrics, const std::string& why) {
  std::vector<CounterReading> readings;
  readings.reserve(metrics.size());
  for (const std::string& metric : metrics) {
    CounterReading reading;
    reading.metric = metric;
    reading.reason = why;
    readings.push_back(std::move(reading));
  }
  return readings;
}

}  // namespace

#if SMELT_CUPTI_RANGE_PROFILER

TensorCounter::TensorCounter(std::vector<std::string> metrics) : state_(std::make_unique<State>()) {
  state_->metrics = std::move(metrics);
  try {
    state_->setup();
  } catch (const std::exception& e) {  // std::bad_alloc, fmt: never out of the constructor
    state_->fail(fmt::format("setting up CUPTI failed: {}", e.what()));
  }
}

TensorCounter::~TensorCounter() {
  try {
    state_->close_range();
    if (state_->host != nullptr) {
      CUpti_Profiler_Host_Deinitialize_Params params{};
      params.structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE;
      params.pHostObject = state_->host;
      state_->host = nullptr;
      cuptiProfilerHostDeinitialize(&params);
    }
  } catch (...) {  // a destructor never throws
  }
}

std::vector<std::string> TensorCounter::counter_metrics(const std::string& contains) const {
  std::vector<std::string> found;
  if (state_->host == nullptr) return found;
  CUpti_Profiler_Host_GetBaseMetrics_Params params{};
  params.structSize = CUpti_Profiler_Host_GetBaseMetrics_Params_STRUCT_SIZE;
  params.pHostObject = state_->host;
  params.metricType = CUPTI_METRIC_TYPE_COUNTER;
  if (cuptiProfilerHostGetBaseMetrics(&params) != CUPTI_SUCCESS || params.ppMetricNames == nullptr) return found;
  for (std::size_t i = 0; i < params.numMetrics; ++i)
    if (params.ppMetricNames[i] != nullptr &&
        std::string_view(params.ppMetricNames[i]).find(contains) != std::string_view::npos)
      found.emplace_back(params.ppMetricNames[i]);
  return found;
}

void TensorCounter::begin() {
  State& s = *state_;
  if (s.failed) return;
  if (s.open) {
    s.fail("begin() called while a range is open");
    s.close_range();
    return;
  }
  if (!SMELT_CUPTI_CUDA(s, cudaDeviceSynchronize())) return;
  s.open = true;
  if (!s.start_range()) s.close_range();
}

std::vector<CounterReading> TensorCounter::end() {
  State& s = *state_;
  if (!s.failed && !s.open) return unavailable(s.metrics, "end() called without begin()");
  if (s.failed) {
    s.close_range();
    return unavailable(s.metrics, s.reason);
  }
  std::vector<CounterReading> readings;
  const bool measured = SMELT_CUPTI_CUDA(s, cudaDeviceSynchronize()) && s.stop_range();
  s.disable();  // evaluation needs only the host object and the counter data image
  s.open = false;
  if (!measured || s.failed || !s.evaluate(readings)) {
    s.close_range();
    return unavailable(s.metrics, s.reason);
  }
  return readings;
}

#undef SMELT_CUPTI_CHECK
#undef SMELT_CUPTI_CUDA

#else  // no CUPTI Range Profiler API in this toolkit

struct TensorCounter::State {
  std::vector<std::string> metrics;
  std::string reason =
      "built without the CUPTI Range Profiler API (cupti_range_profiler.h, CUDA 12.6+ with CUPTI) in the toolkit";
  std::string mode = "unavailable";
};

TensorCounter::TensorCounter(std::vector<std::string> metrics) : state_(std::make_unique<State>()) {
  state_->metrics = std::move(metrics);
}
TensorCounter::~TensorCounter() = default;
std::vector<std::string> TensorCounter::counter_metrics(const std::string&) const { return {}; }
void TensorCounter::begin() {}
std::vector<CounterReading> TensorCounter::end() { return unavailable(state_->metrics, state_->reason); }

#endif

bool TensorCounter::ok() const {
#if SMELT_CUPTI_RANGE_PROFILER
  return !state_->failed;
#else
  return false;
#endif
}

const std::string& TensorCounter::reason() const { return state_->reason; }
const std::string& TensorCounter::mode() const { return state_->mode; }

}  // namespace smelt::kernels
