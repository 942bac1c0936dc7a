// FLOPs from the hardware: tensor-pipe operations read through the CUPTI range
// profiler around a piece of work, converted to FLOPs with the operations a
// known cuBLAS product of 2 n^3 FLOPs reads in the same process.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include <cublas_v2.h>
#include <cuda_runtime.h>

namespace smelt::kernels {

struct CountedFlops {
  std::optional<double> flops;  // absent where counters cannot be read
  std::string note;             // the metric and conversion used, or why there is no reading
};

// Runs `work` once (it must launch on `stream`) between counter reads.
CountedFlops counted_tensor_flops(cublasHandle_t handle, cudaStream_t stream, const std::function<void()>& work);

}  // namespace smelt::kernels
