#include "device/timing.hpp"

#include <algorithm>
#include <utility>

#include "device/cuda_check.hpp"
#include "device/device_buffer.hpp"
#include "device/gemm.hpp"
#include "device/layer_kernels.hpp"
#include "util/median.hpp"

namespace smelt::kernels {

Event::Event() { SMELT_CUDA_CALL(cudaEventCreate(&event_)); }

Event::~Event() {
  if (event_ != nullptr && cudaEventDestroy(event_) != cudaSuccess) (void)cudaGetLastError();
}

Event::Event(Event&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}

void Event::record(cudaStream_t stream) { SMELT_CUDA_CALL(cudaEventRecord(event_, stream)); }

double elapsed_ms(const Event& from, const Event& to) {
  SMELT_CUDA_CALL(cudaEventSynchronize(to.get()));
  float ms = 0.f;
  SMELT_CUDA_CALL(cudaEventElapsedTime(&ms, from.get(), to.get()));
  return static_cast<double>(ms);
}

std::vector<double> time_runs(cudaStream_t stream, std::int64_t warmup, std::int64_t reps,
                              const std::function<void(std::int64_t)>& body) {
  for (std::int64_t i = 0; i < warmup; ++i) body(i);
  std::vector<Event> events;
  events.reserve(static_cast<std::size_t>(2 * reps));
  for (std::int64_t i = 0; i < 2 * reps; ++i) events.emplace_back();
  for (std::int64_t i = 0; i < reps; ++i) {
    events[static_cast<std::size_t>(2 * i)].record(stream);
    body(warmup + i);
    events[static_cast<std::size_t>(2 * i + 1)].record(stream);
  }
  std::vector<double> ms;
  for (std::int64_t i = 0; i < reps; ++i)
    ms.push_back(elapsed_ms(events[static_cast<std::size_t>(2 * i)], events[static_cast<std::size_t>(2 * i + 1)]));
  return ms;
}

std::int64_t rotation_count(std::size_t bytes_each, std::size_t l2_bytes) {
  if (bytes_each == 0) return 3;
  const std::size_t needed = 2 * l2_bytes / bytes_each + 1;  // count x bytes_each > 2 x L2
  return static_cast<std::int64_t>(std::max<std::size_t>(3, needed));
}

std::size_t dense_rate_bytes(std::int64_t n) { return 3 * static_cast<std::size_t>(n * n) * sizeof(bf16); }

DenseRate measure_dense_rate(cublasHandle_t handle, cudaStream_t stream, std::int64_t n, std::int64_t warmup,
                             std::int64_t reps) {
  const std::size_t elements = static_cast<std::size_t>(n * n);
  DeviceBuffer a(elements * sizeof(bf16)), b(elements * sizeof(bf16)), c(elements * sizeof(bf16));
  fill_random_bf16(a.as<bf16>(), elements, 1, stream);
  fill_random_bf16(b.as<bf16>(), elements, 2, stream);
  // Each operand is far larger than the L2, so no rotation is needed here.
  const std::vector<double> ms = time_runs(stream, warmup, reps, [&](std::int64_t) {
    gemm_rm(handle, n, n, n, a.as<bf16>(), n, b.as<bf16>(), n, c.as<void>(), CUDA_R_16BF, n);
  });
  SMELT_CUDA_CALL(cudaStreamSynchronize(stream));
  DenseRate rate;
  rate.n = n;
  rate.seconds = smelt::detail::median(ms) * 1e-3;
  rate.tflops = rate.seconds > 0 ? 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n) /
                                       rate.seconds / 1e12
                                 : 0.0;
  return rate;
}

}  // namespace smelt::kernels
