// The steps of the CUPTI Range Profiler session behind TensorCounter (see
// cupti_session.hpp for the order of calls): finding the context, the host
// object and config image, enabling the range profiler with a fresh counter
// data image, starting, stopping and decoding a range, and evaluating it.
#include "cupti/cupti_session.hpp"

#if SMELT_CUPTI_RANGE_PROFILER

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include <cuda_runtime.h>
#include <dlfcn.h>

namespace smelt::kernels {

namespace {

// Ranges one counter data image holds in auto-range mode (one per kernel).
constexpr std::size_t kAutoRanges = 512;
constexpr const char* kRangeName = "smelt";

const char* support_level(CUpti_Profiler_Support_Level level) {
  switch (level) {
    case CUPTI_PROFILER_CONFIGURATION_SUPPORTED:
      return "supported";
    case CUPTI_PROFILER_CONFIGURATION_DISABLED:
      return "disabled";
    case CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED:
      return "unsupported";
    default:
      return "unknown";
  }
}

// CUPTI dlopen()s libnvperf_host.so by bare name; load it first from CUPTI's
// own directory so that it is found where that directory is on no search path.
// Best effort: where this fails, CUPTI's own lookup reports the problem.
void preload_perfworks() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cuptiGetResultString), &info) == 0 || info.dli_fname == nullptr) return;
  const std::string cupti_path = info.dli_fname;
  const std::size_t slash = cupti_path.rfind('/');
  if (slash == std::string::npos) return;
  const std::string host = cupti_path.substr(0, slash + 1) + "libnvperf_host.so";
  dlopen(host.c_str(), RTLD_NOW | RTLD_GLOBAL);  // kept loaded for the process's lifetime
}

}  // namespace

namespace detail {

std::string cupti_failure(CUptiResult result, std::string_view call) {
  const char* name = nullptr;
  if (cuptiGetResultString(result, &name) != CUPTI_SUCCESS || name == nullptr) name = "unknown CUptiResult";
  const char* message = nullptr;
  if (cuptiGetErrorMessage(result, &message) != CUPTI_SUCCESS || message == nullptr) message = "";
  if (result == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES || result == CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES)
    return fmt::format(
        "hardware counters not permitted on this machine (NVreg_RestrictProfilingToAdminUsers): {} returned {} "
        "(ERR_NVGPUCTRPERM: run as admin or load the driver with NVreg_RestrictProfilingToAdminUsers=0)",
        call, name);
  if (*message == '\0') return fmt::format("{} failed: {} ({})", call, name, static_cast<int>(result));
  return fmt::format("{} failed: {} ({}): {}", call, name, static_cast<int>(result), message);
}

}  // namespace detail

bool TensorCounter::State::find_context() {
  int count = 0;
  if (const cudaError_t status = cudaGetDeviceCount(&count); status != cudaSuccess)
    return fail(fmt::format("no usable CUDA device: {}", cudaGetErrorString(status)));
  if (count == 0) return fail("no CUDA device present");
  // Makes the runtime's primary context of the current device current.
  if (!SMELT_CUPTI_CUDA(*this, cudaFree(nullptr))) return false;
  // Driver calls through the runtime's entry points, so that nothing links
  // libcuda (binaries then still start where there is no driver).
  using CtxGetCurrent = CUresult (*)(CUcontext*);
  using CtxGetDevice = CUresult (*)(CUdevice*);
  void* get_current = nullptr;
  void* get_device = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (!SMELT_CUPTI_CUDA(
          *this, cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &get_current, 12000, cudaEnableDefault, &found)))
    return false;
  if (found != cudaDriverEntryPointSuccess || get_current == nullptr)
    return fail("the driver has no cuCtxGetCurrent entry point");
  if (!SMELT_CUPTI_CUDA(
          *this, cudaGetDriverEntryPointByVersion("cuCtxGetDevice", &get_device, 12000, cudaEnableDefault, &found)))
    return false;
  if (found != cudaDriverEntryPointSuccess || get_device == nullptr)
    return fail("the driver has no cuCtxGetDevice entry point");
  if (const CUresult status = reinterpret_cast<CtxGetCurrent>(get_current)(&context); status != CUDA_SUCCESS)
    return fail(fmt::format("cuCtxGetCurrent failed: CUresult {}", static_cast<int>(status)));
  if (context == nullptr) return fail("no current CUDA context");
  if (const CUresult status = reinterpret_cast<CtxGetDevice>(get_device)(&device); status != CUDA_SUCCESS)
    return fail(fmt::format("cuCtxGetDevice failed: CUresult {}", static_cast<int>(status)));
  return true;
}

bool TensorCounter::State::check_device_supported() {
  CUpti_Profiler_DeviceSupported_Params params{};
  params.structSize = CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE;
  params.cuDevice = device;
  params.api = CUPTI_PROFILER_RANGE_PROFILING;
  if (!SMELT_CUPTI_CHECK(*this, cuptiProfilerDeviceSupported(&params))) return false;
  if (params.isSupported == CUPTI_PROFILER_CONFIGURATION_SUPPORTED) return true;
  std::string why;
  const std::pair<const char*, CUpti_Profiler_Support_Level> parts[] = {
      {"architecture (needs compute capability 7.0+)", params.architecture},
      {"SLI", params.sli},
      {"vGPU", params.vGpu},
      {"confidential computing", params.confidentialCompute},
      {"CMP (crypto-mining) device", params.cmp},
      {"WSL", params.wsl}};
  for (const auto& [what, level] : parts)
    if (level != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
      why += fmt::format("{}{}: {}", why.empty() ? "" : ", ", what, support_level(level));
  return fail(fmt::format("CUPTI range profiling is {} on this device ({})", support_level(params.isSupported),
                          why.empty() ? "no reason given" : why));
}

bool TensorCounter::State::build_config() {
  // What the chip can count, then the host object that turns metric names
  // into a config image.
  CUpti_Device_GetChipName_Params chip_params{};
  chip_params.structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE;
  chip_params.deviceIndex = static_cast<std::size_t>(device);
  if (!SMELT_CUPTI_CHECK(*this, cuptiDeviceGetChipName(&chip_params))) return false;
  chip = chip_params.pChipName != nullptr ? chip_params.pChipName : "";

  CUpti_Profiler_GetCounterAvailability_Params avail{};
  avail.structSize = CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE;
  avail.ctx = context;
  if (!SMELT_CUPTI_CHECK(*this, cuptiProfilerGetCounterAvailability(&avail))) return false;
  availability.assign(avail.counterAvailabilityImageSize, 0);
  avail.pCounterAvailabilityImage = availability.data();
  if (!SMELT_CUPTI_CHECK(*this, cuptiProfilerGetCounterAvailability(&avail))) return false;

  CUpti_Profiler_Host_Initialize_Params init{};
  init.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE;
  init.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  init.pChipName = chip.c_str();
  init.pCounterAvailabilityImage = availability.data();
  if (!SMELT_CUPTI_CHECK(*this, cuptiProfilerHostInitialize(&init))) return false;
  host = init.pHostObject;

  // Each metric on its own first, so that an unknown one is named.
  info.assign(metrics.size(), detail::MetricInfo{});
  for (std::size_t i = 0; i < metrics.size(); ++i) {
    CUpti_Profiler_Host_GetMetricProperties_Params props{};
    props.structSize = CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE;
    props.pHostObject = host;
    props.pMetricName = names[i];
    if (const CUptiResult result = cuptiProfilerHostGetMetricProperties(&props); result != CUPTI_SUCCESS)
      return fail(fmt::format("metric '{}' on chip {}: {}", metrics[i], chip,
                              detail::cupti_failure(result, "cuptiProfilerHostGetMetricProperties")));
    info[i].unit = props.pDimUnit != nullptr ? props.pDimUnit : "";
    info[i].description = props.pDescription != nullptr ? props.pDescription : "";
    info[i].type = props.metricType;
  }

  CUpti_Profiler_Host_ConfigAddMetrics_Params add{};
  add.structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE;
  add.pHostObject = host;
  add.ppMetricNames = names.data();
  add.numMetrics = names.size();
  if (!SMELT_CUPTI_CHECK(*this, cuptiProfilerHostConfigAddMetrics(&add))) return false;

  CUpti_Profiler_Host_GetConfigImageSize_Params size{};
  size.structSize = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE;
  size.pHostObject = host;
  if (!SMELT_CUPTI_CHECK(*this, cuptiProfilerHostGetConfigImageSize(&size))) return false;
  config.assign(size.configImageSize, 0);
  CUpti_Profiler_Host_GetConfigImage_Params image{};
  image.structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE;
  image.pHostObject = host;
  image.configImageSize = config.size();
  image.pConfigImage = config.data();
  if (!SMELT_CUPTI_CHECK(*this, cuptiProfilerHostGetConfigImage(&image))) return false;

  CUpti_Profiler_Host_GetNumOfPasses_Params passes{};
  passes.structSize = CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE;
  passes.configImageSize = config.size();
  passes.pConfigImage = config.data();
  if (!SMELT_CUPTI_CHECK(*this, cuptiProfilerHostGetNumOfPasses(&passes))) return false;
  if (passes.numOfPasses == 0) return fail("CUPTI scheduled the metrics in 0 passes");

  // One pass: a user range around the region, which nothing needs to replay.
  // More passes: the region cannot be rerun by us, so each kernel is its own
  // auto range and CUPTI replays it once per pass.
  user_range = passes.numOfPasses == 1;
  max_ranges = user_range ? 1 : kAutoRanges;
  mode = fmt::format("chip {}, {}, {} pass{}", chip,
                     user_range ? "user range, user replay" : "auto range per kernel, kernel replay, summed",
                     passes.numOfPasses, passes.numOfPasses == 1 ? "" : "es");
  return true;
}

bool TensorCounter::State::enable() {
  CUpti_RangeProfiler_Enable_Params params{};
  params.structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE;
  params.ctx = context;
  if (!SMELT_CUPTI_CHECK(*this, cuptiRangeProfilerEnable(&params))) return false;
  profiler = params.pRangeProfilerObject;
  if (profiler == nullptr) return fail("cuptiRangeProfilerEnable returned no range profiler object");

  // A fresh counter data image for every range, so that nothing carries over.
  CUpti_RangeProfiler_GetCounterDataSize_Params size{};
  size.structSize = CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE;
  size.pRangeProfilerObject = profiler;
  size.pMetricNames = names.data();
  size.numMetrics = names.size();
  size.maxNumOfRanges = max_ranges;
  size.maxNumRangeTreeNodes = static_cast<std::uint32_t>(max_ranges);
  if (!SMELT_CUPTI_CHECK(*this, cuptiRangeProfilerGetCounterDataSize(&size))) return false;
  counter_data.assign(size.counterDataSize, 0);
  CUpti_RangeProfiler_CounterDataImage_Initialize_Params init{};
  init.structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE;
  init.pRangeProfilerObject = profiler;
  init.counterDataSize = counter_data.size();
  init.pCounterData = counter_data.data();
  return SMELT_CUPTI_CHECK(*this, cuptiRangeProfilerCounterDataImageInitialize(&init));
}

void TensorCounter::State::disable() {
  if (profiler == nullptr) return;
  CUpti_RangeProfiler_Disable_Params params{};
  params.structSize = CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE;
  params.pRangeProfilerObject = profiler;
  profiler = nullptr;
  SMELT_CUPTI_CHECK(*this, cuptiRangeProfilerDisable(&params));
}

bool TensorCounter::State::start_range() {
  if (!enable()) return false;
  CUpti_RangeProfiler_SetConfig_Params set{};
  set.structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE;
  set.pRangeProfilerObject = profiler;
  set.configSize = config.size();
  set.pConfig = config.data();
  set.counterDataImageSize = counter_data.size();
  set.pCounterDataImage = counter_data.data();
  set.range = user_range ? CUPTI_UserRange : CUPTI_AutoRange;
  set.replayMode = user_range ? CUPTI_UserReplay : CUPTI_KernelReplay;
  set.maxRangesPerPass = max_ranges;
  set.numNestingLevels = 1;
  set.minNestingLevel = 1;
  set.passIndex = 0;
  set.targetNestingLevel = 1;
  if (!SMELT_CUPTI_CHECK(*this, cuptiRangeProfilerSetConfig(&set))) return false;

  CUpti_RangeProfiler_Start_Params start{};
  start.structSize = CUpti_RangeProfiler_Start_Params_STRUCT_SIZE;
  start.pRangeProfilerObject = profiler;
  if (!SMELT_CUPTI_CHECK(*this, cuptiRangeProfilerStart(&start))) return false;
  started = true;
  if (user_range) {
    CUpti_RangeProfiler_PushRange_Params push{};
    push.structSize = CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE;
    push.pRangeProfilerObject = profiler;
    push.pRangeName = kRangeName;
    if (!SMELT_CUPTI_CHECK(*this, cuptiRangeProfilerPushRange(&push))) return false;
    pushed = true;
  }
  return true;
}

bool TensorCounter::State::stop_range() {
  if (pushed) {
    pushed = false;
    CUpti_RangeProfiler_PopRange_Params pop{};
    pop.structSize = CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE;
    pop.pRangeProfilerObject = profiler;
    if (!SMELT_CUPTI_CHECK(*this, cuptiRangeProfilerPopRange(&pop))) return false;
  }
  if (started) {
    started = false;
    CUpti_RangeProfiler_Stop_Params stop{};
    stop.structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE;
    stop.pRangeProfilerObject = profiler;
    if (!SMELT_CUPTI_CHECK(*this, cuptiRangeProfilerStop(&stop))) return false;
    if (stop.isAllPassSubmitted == 0)
      return fail(
          fmt::format("the metrics need more than the one run of the range that end() measured "
                      "(next pass index {}); use fewer metrics",
                      stop.passIndex));
  }
  CUpti_RangeProfiler_DecodeData_Params decode{};
  decode.structSize = CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE;
  decode.pRangeProfilerObject = profiler;
  if (!SMELT_CUPTI_CHECK(*this, cuptiRangeProfilerDecodeData(&decode))) return false;
  if (decode.numOfRangeDropped != 0)
    return fail(fmt::format("{} range(s) dropped: more than {} kernels ran between begin() and end()",
                            decode.numOfRangeDropped, max_ranges));
  return true;
}

bool TensorCounter::State::evaluate(std::vector<CounterReading>& readings) {
  CUpti_RangeProfiler_GetCounterDataInfo_Params data_info{};
  data_info.structSize = CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE;
  data_info.pCounterDataImage = counter_data.data();
  data_info.counterDataImageSize = counter_data.size();
  if (!SMELT_CUPTI_CHECK(*this, cuptiRangeProfilerGetCounterDataInfo(&data_info))) return false;
  const std::size_t ranges = data_info.numTotalRanges;
  if (ranges == 0)
    return fail(user_range ? "the counter data holds no range (was anything launched between begin() and end()?)"
                           : "no kernel ran between begin() and end()");
  if (user_range && ranges != 1)
    return fail(fmt::format("the counter data holds {} ranges where one user range was measured", ranges));

  readings.clear();
  for (std::size_t i = 0; i < metrics.size(); ++i) {
    CounterReading reading;
    reading.metric = metrics[i];
    reading.unit = info[i].unit;
    reading.description = info[i].description;
    const bool additive = info[i].type == CUPTI_METRIC_TYPE_COUNTER && metrics[i].ends_with(".sum");
    if (ranges > 1 && !additive) {
      reading.reason =
          fmt::format("'{}' is not a .sum counter, so its {} per-kernel values cannot be summed", metrics[i], ranges);
      readings.push_back(std::move(reading));
      continue;
    }
    double total = 0;
    for (std::size_t range = 0; range < ranges; ++range) {
      double value = 0;
      const char* name = names[i];
      CUpti_Profiler_Host_EvaluateToGpuValues_Params eval{};
      eval.structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE;
      eval.pHostObject = host;
      eval.pCounterDataImage = counter_data.data();
      eval.counterDataImageSize = counter_data.size();
      eval.rangeIndex = range;
      eval.ppMetricNames = &name;
      eval.numMetrics = 1;
      eval.pMetricValues = &value;
      if (!SMELT_CUPTI_CHECK(*this, cuptiProfilerHostEvaluateToGpuValues(&eval))) return false;
      total += value;
    }
    reading.available = true;
    reading.value = total;
    readings.push_back(std::move(reading));
  }
  return true;
}

void TensorCounter::State::close_range() {
  // Failures here keep the first reason (fail() records only the first).
  if (pushed) {
    pushed = false;
    CUpti_RangeProfiler_PopRange_Params pop{};
    pop.structSize = CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE;
    pop.pRangeProfilerObject = profiler;
    SMELT_CUPTI_CHECK(*this, cuptiRangeProfilerPopRange(&pop));
  }
  if (started) {
    started = false;
    CUpti_RangeProfiler_Stop_Params stop{};
    stop.structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE;
    stop.pRangeProfilerObject = profiler;
    SMELT_CUPTI_CHECK(*this, cuptiRangeProfilerStop(&stop));
  }
  disable();
  open = false;
}

bool TensorCounter::State::setup() {
  if (metrics.empty()) return fail("no metrics requested");
  names.reserve(metrics.size());
  for (const std::string& metric : metrics) names.push_back(metric.c_str());
  if (!find_context()) return false;
  preload_perfworks();
  CUpti_Profiler_Initialize_Params init{};
  init.structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE;
  if (!SMELT_CUPTI_CHECK(*this, cuptiProfilerInitialize(&init))) return false;
  if (!check_device_supported()) return false;
  if (!build_config()) return false;
  // A trial enable, so that a machine that does not permit profiling says so
  // here rather than at the first begin().
  const bool enabled = enable();
  disable();
  return enabled && !failed;
}

}  // namespace smelt::kernels

#undef SMELT_CUPTI_CHECK
#undef SMELT_CUPTI_CUDA

#endif  // SMELT_CUPTI_RANGE_PROFILER
