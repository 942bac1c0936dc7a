#include "backend/counted_flops.hpp"

#include <cmath>

#include <fmt/format.h>

#include "cupti/cupti_counters.hpp"
#include "device/cuda_check.hpp"
#include "device/timing.hpp"

namespace smelt::kernels {
namespace {

constexpr const char* kMetric = "sm__ops_path_tensor_src_bf16_dst_fp32.sum";
constexpr std::int64_t kCalibrationN = 4096;

// The one reading of kMetric, or the reason it is missing.
std::optional<double> reading(const std::vector<CounterReading>& readings, std::string& why) {
  for (const auto& r : readings)
    if (r.metric == kMetric) {
      if (r.available && std::isfinite(r.value) && r.value > 0) return r.value;
      why = r.available ? fmt::format("{} read {}", kMetric, r.value) : r.reason;
      return std::nullopt;
    }
  why = fmt::format("{} was not returned", kMetric);
  return std::nullopt;
}

}  // namespace

CountedFlops counted_tensor_flops(cublasHandle_t handle, cudaStream_t stream, const std::function<void()>& work) {
  TensorCounter counter({kMetric});
  if (!counter.ok()) return {std::nullopt, "unavailable: " + counter.reason()};
  std::string why;
  // Calibration: one n^3 product (measure_dense_rate with no warm-up and one rep).
  counter.begin();
  (void)measure_dense_rate(handle, stream, kCalibrationN, 0, 1);
  SMELT_CUDA_CALL(cudaStreamSynchronize(stream));
  const std::optional<double> ops = reading(counter.end(), why);
  if (!ops) return {std::nullopt, "unavailable: calibration: " + why};
  const double n = static_cast<double>(kCalibrationN);
  const double flops_per_op = 2.0 * n * n * n / *ops;

  counter.begin();
  work();
  SMELT_CUDA_CALL(cudaStreamSynchronize(stream));
  const std::optional<double> work_ops = reading(counter.end(), why);
  if (!work_ops) return {std::nullopt, "unavailable: " + why};
  return {*work_ops * flops_per_op,
          fmt::format("{} x {:.6g} FLOP per op (calibrated on a {}^3 cuBLAS bf16 GEMM in this run; {})", kMetric,
                      flops_per_op, kCalibrationN, counter.mode())};
}

}  // namespace smelt::kernels
