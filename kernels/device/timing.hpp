// Timing with CUDA events: medians of repeated runs, the number of rotated
// input buffers that keeps the L2 from serving a run's input, and the dense
// cuBLAS bf16 GEMM rate measured as the ceiling in the same process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime.h>

namespace smelt::kernels {

// A timing event (move-only); destroying it is checked but cannot throw.
class Event {
 public:
  Event();
  ~Event();
  Event(Event&& other) noexcept;
  Event& operator=(Event&&) = delete;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(cudaStream_t stream);
  cudaEvent_t get() const noexcept { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// Milliseconds between two recorded events (synchronises on `to`).
double elapsed_ms(const Event& from, const Event& to);

// Runs `body(i)` for i in [0, warmup) untimed, then for i in [warmup, warmup +
// reps) between a pair of events on `stream`; returns the reps' milliseconds.
// body enqueues its work on `stream` (side streams must join back into it).
std::vector<double> time_runs(cudaStream_t stream, std::int64_t warmup, std::int64_t reps,
                              const std::function<void(std::int64_t)>& body);

// How many input buffers of `bytes_each` to rotate so that they are at least 3
// and together exceed twice the L2.
std::int64_t rotation_count(std::size_t bytes_each, std::size_t l2_bytes);

struct DenseRate {
  std::int64_t n = 0;  // an n x n x n product
  double seconds = 0;  // median
  double tflops = 0;
};

// Device bytes measure_dense_rate allocates for an n x n x n product.
std::size_t dense_rate_bytes(std::int64_t n);

// The cuBLAS bf16 GEMM rate (fp32 accumulation, bf16 output) on random
// operands: median of `reps` timed n x n x n products after `warmup`.
DenseRate measure_dense_rate(cublasHandle_t handle, cudaStream_t stream, std::int64_t n, std::int64_t warmup,
                             std::int64_t reps);

}  // namespace smelt::kernels
