// Masked softmax over attention score rows, device code: one block per row, an
// online (max, sum) pass over the visible keys only, then one pass that writes
// bf16 probabilities for every key (zeros where masked) so that the AV product
// can run as a plain batched GEMM over the full context. The launcher is in
// attention_kernels.cu; tests/kernels/emulated/kernels_emulated_test.cpp runs this same kernel
// on the CPU.
#pragma once

#include <cmath>
#include <cstdint>

#include "device/device_common.cuh"
#include "device/layer_kernels.hpp"

namespace smelt::kernels::device {

constexpr int kSoftmaxThreads = 256;  // threads per block (one block per row)

// Merges a partial softmax (m2, s2) into (m, s): s is the sum of exp(v - m).
__device__ __forceinline__ void merge(float& m, float& s, float m2, float s2) {
  if (m2 == -INFINITY) return;
  if (m == -INFINITY) {
    m = m2, s = s2;
    return;
  }
  const float nm = fmaxf(m, m2);
  s = s * expf(m - nm) + s2 * expf(m2 - nm);
  m = nm;
}

__device__ __forceinline__ void warp_merge(float& m, float& s) {
  for (int off = 16; off > 0; off >>= 1) {
    const float m2 = __shfl_xor_sync(kFullMask, m, off);
    const float s2 = __shfl_xor_sync(kFullMask, s, off);
    merge(m, s, m2, s2);
  }
}

__global__ void masked_softmax_kernel(const float* __restrict__ scores, std::int64_t rows, std::int64_t context,
                                      int mask, std::int64_t window, std::int64_t chunk, bf16* __restrict__ probs) {
  __shared__ float part_m[kSoftmaxThreads / 32], part_s[kSoftmaxThreads / 32];
  __shared__ float row_m, row_s;
  const int lane = threadIdx.x & 31, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const std::int64_t p = r % context;  // position of this query in its sequence
    std::int64_t lo = 0;
    if (mask == static_cast<int>(Mask::sliding)) lo = p - window + 1 > 0 ? p - window + 1 : 0;
    if (mask == static_cast<int>(Mask::chunked)) lo = (p / chunk) * chunk;
    const std::int64_t hi = p;  // visible keys: [lo, hi]
    const float* row = scores + r * context;

    float m = -INFINITY, s = 0.f;
    for (std::int64_t j = lo + threadIdx.x; j <= hi; j += blockDim.x) merge(m, s, row[j], 1.f);
    warp_merge(m, s);
    if (lane == 0) part_m[warp] = m, part_s[warp] = s;
    __syncthreads();
    if (warp == 0) {
      m = lane < warps ? part_m[lane] : -INFINITY;
      s = lane < warps ? part_s[lane] : 0.f;
      warp_merge(m, s);
      if (lane == 0) row_m = m, row_s = s;
    }
    __syncthreads();
    m = row_m;
    const float inv = 1.f / row_s;

    bf16* out = probs + r * context;
    if (context % 2 == 0) {  // pairs: 4-byte stores (rows start at even offsets)
      __nv_bfloat162* out2 = reinterpret_cast<__nv_bfloat162*>(out);
      for (std::int64_t j2 = threadIdx.x; j2 < context / 2; j2 += blockDim.x) {
        const std::int64_t j = 2 * j2;
        const float a = (j >= lo && j <= hi) ? expf(row[j] - m) * inv : 0.f;
        const float b = (j + 1 >= lo && j + 1 <= hi) ? expf(row[j + 1] - m) * inv : 0.f;
        out2[j2] = __floats2bfloat162_rn(a, b);
      }
    } else {
      for (std::int64_t j = threadIdx.x; j < context; j += blockDim.x)
        out[j] = __float2bfloat16_rn((j >= lo && j <= hi) ? expf(row[j] - m) * inv : 0.f);
    }
    __syncthreads();  // row_m / row_s and the partials are reused by the next row
  }
}

}  // namespace smelt::kernels::device
