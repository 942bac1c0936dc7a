// What the benchmark's device code shares (moe_kernels.cuh,
// attention_kernels.cuh): the full-warp mask, the block's dynamic shared
// memory, and the launch the .cu launchers use. Compiled by nvcc these are
// CUDA's own; compiled as host C++ (tests/kernels/emulated/cuda_emulation.hpp included first),
// the emulation provides dynamic_shared and the launch.
#pragma once

namespace smelt::kernels::device {

constexpr unsigned kFullMask = 0xffffffffu;

// SMELT_LAUNCH(kernel, grid, block[, shared bytes[, stream]])(args...) is
// kernel<<<grid, block, shared, stream>>>(args...) under nvcc.
#if defined(__CUDACC__)
#define SMELT_LAUNCH(kernel, ...) kernel<<<__VA_ARGS__>>>
#else
#define SMELT_LAUNCH(kernel, ...) ::smelt_emulation::launcher(kernel, __VA_ARGS__)
#endif

#if defined(__CUDACC__)
// The block's dynamic shared memory (the launch's third parameter) as T.
template <class T>
__device__ __forceinline__ T* dynamic_shared() {
  extern __shared__ __align__(16) unsigned char smelt_dynamic_shared[];
  return reinterpret_cast<T*>(smelt_dynamic_shared);
}
#endif

}  // namespace smelt::kernels::device
