// GPU smoke test (CTest label "gpu"): poisons a device buffer and reads it
// back. Exits 77, reported by CTest as skipped, where no device exists.
#include <cstdio>
#include <vector>

#include "device/cuda_check.hpp"
#include "device/device.hpp"

int main() {
  const smelt::kernels::DeviceInfo info = smelt::kernels::query_device();
  if (!info.available) {
    std::printf("skipped: %s\n", info.reason.c_str());
    return 77;
  }
  std::printf("device: %s (sm_%d%d, %zu MiB)\n", info.name.c_str(), info.compute_major, info.compute_minor,
              info.memory_bytes >> 20);
  constexpr std::size_t n = (1u << 20) + 3;  // not a multiple of the block size
  float* data = nullptr;
  SMELT_CUDA_CALL(cudaMalloc(&data, n * sizeof(float)));
  smelt::kernels::fill(data, n, -1.5f);
  std::vector<float> host(n);
  SMELT_CUDA_CALL(cudaMemcpy(host.data(), data, n * sizeof(float), cudaMemcpyDeviceToHost));
  SMELT_CUDA_CALL(cudaFree(data));
  for (std::size_t i = 0; i < n; ++i)
    if (host[i] != -1.5f) {
      std::printf("FAILED: element %zu = %g, expected -1.5\n", i, static_cast<double>(host[i]));
      return 1;
    }
  std::printf("fill: %zu elements checked\n", n);
  return 0;
}
