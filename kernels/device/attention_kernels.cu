// Launcher of the masked softmax (attention_kernels.cuh).
#include <algorithm>
#include <cstdint>

#include "device/attention_kernels.cuh"
#include "device/cuda_check.hpp"
#include "device/layer_kernels.hpp"

namespace smelt::kernels {

void masked_softmax(const float* scores, std::int64_t rows, std::int64_t context, Mask mask, std::int64_t window,
                    std::int64_t chunk, bf16* probs, cudaStream_t stream) {
  if (rows == 0) return;
  const int blocks = static_cast<int>(std::min<std::int64_t>(rows, 1 << 20));
  SMELT_LAUNCH(device::masked_softmax_kernel, blocks, device::kSoftmaxThreads, 0, stream)
  (scores, rows, context, static_cast<int>(mask), window, std::max<std::int64_t>(chunk, 1), probs);
  SMELT_CUDA_CALL(cudaGetLastError());
}

}  // namespace smelt::kernels
