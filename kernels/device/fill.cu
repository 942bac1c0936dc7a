// Grid-stride fill, used to poison outputs before a run.
#include <algorithm>

#include "device/cuda_check.hpp"
#include "device/device.hpp"
#include "device/device_common.cuh"

namespace smelt::kernels {
namespace {

__global__ void fill_kernel(float* data, std::size_t count, float value) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
    data[i] = value;
}

}  // namespace

void fill(float* device_data, std::size_t count, float value) {
  if (count == 0) return;
  constexpr int kThreads = 256;
  const int blocks = static_cast<int>(std::min<std::size_t>((count + kThreads - 1) / kThreads, 4096));
  SMELT_LAUNCH(fill_kernel, blocks, kThreads)(device_data, count, value);
  SMELT_CUDA_CALL(cudaGetLastError());
  SMELT_CUDA_CALL(cudaDeviceSynchronize());
}

}  // namespace smelt::kernels
