// What the benchmark's device code shares (moe_kernels.cuh,
// attention_kernels.cuh): the full-warp mask and the block's dynamic shared
// memory. Device code only; tests/cuda_emulation.hpp provides the same names
// on the CPU.
#pragma once

namespace smelt::kernels::device {

constexpr unsigned kFullMask = 0xffffffffu;

#if defined(__CUDACC__)
// The block's dynamic shared memory (the launch's third parameter) as T.
template <class T>
__device__ __forceinline__ T* dynamic_shared() {
  extern __shared__ __align__(16) unsigned char smelt_dynamic_shared[];
  return reinterpret_cast<T*>(smelt_dynamic_shared);
}
#endif

}  // namespace smelt::kernels::device
