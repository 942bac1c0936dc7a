// Private to kernels/: the CUPTI Range Profiler session behind TensorCounter
// (cupti_counters.cpp), with its steps in cupti_session.cpp.
//
// CUPTI Range Profiler behind TensorCounter. The order of calls follows the
// CUPTI range_profiling sample: on the host side a profiler host object (chip
// name + counter availability image) turns metric names into a config image
// and later evaluates the decoded counter data image; on the target side the
// range profiler object is enabled on the context, given the config and a
// fresh counter data image, started, and stopped and decoded after the range.
#pragma once

#include "cupti/cupti_counters.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <cuda_runtime.h>

#if defined(SMELT_HAS_CUPTI) && __has_include(<cupti_range_profiler.h>) && __has_include(<cupti_profiler_host.h>)
#define SMELT_CUPTI_RANGE_PROFILER 1
#include <cuda.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>
#else
#define SMELT_CUPTI_RANGE_PROFILER 0
#endif

#if SMELT_CUPTI_RANGE_PROFILER

namespace smelt::kernels {

namespace detail {

// The message for a failed CUPTI call: the call, CUPTI's name for the result
// and its description; the privilege errors get the one cause that matters.
std::string cupti_failure(CUptiResult result, std::string_view call);

struct MetricInfo {
  std::string unit;
  std::string description;
  CUpti_MetricType type = CUPTI_METRIC_TYPE_COUNTER;
};

}  // namespace detail

struct TensorCounter::State {
  std::vector<std::string> metrics;
  std::vector<const char*> names;  // metrics as C strings, for CUPTI
  std::vector<detail::MetricInfo> info;
  bool failed = false;
  std::string reason;
  std::string mode = "not configured";

  CUcontext context = nullptr;
  CUdevice device = 0;
  std::string chip;
  std::vector<std::uint8_t> availability;
  std::vector<std::uint8_t> config;
  std::vector<std::uint8_t> counter_data;
  CUpti_Profiler_Host_Object* host = nullptr;
  CUpti_RangeProfiler_Object* profiler = nullptr;  // set while enabled on the context
  bool user_range = true;
  std::size_t max_ranges = 1;
  bool started = false;
  bool pushed = false;
  bool open = false;  // between begin() and end()

  bool fail(std::string why) {
    if (!failed) {
      failed = true;
      reason = std::move(why);
    }
    return false;
  }
  // The checked helper every CUPTI call goes through.
  bool check(CUptiResult result, const char* call) {
    return result == CUPTI_SUCCESS || fail(detail::cupti_failure(result, call));
  }
  bool cuda(cudaError_t status, const char* call) {
    return status == cudaSuccess ||
           fail(fmt::format("{} failed: {} ({})", call, cudaGetErrorName(status), cudaGetErrorString(status)));
  }

  bool setup();
  bool find_context();
  bool check_device_supported();
  bool build_config();
  bool enable();
  void disable();
  bool start_range();
  bool stop_range();
  bool evaluate(std::vector<CounterReading>& readings);
  void close_range();  // pops, stops and disables what is open: for failures and the destructor
};

#define SMELT_CUPTI_CHECK(state, call) (state).check((call), #call)
#define SMELT_CUPTI_CUDA(state, call) (state).cuda((call), #call)

}  // namespace smelt::kernels

#endif  // SMELT_CUPTI_RANGE_PROFILER
