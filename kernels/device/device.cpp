#include "device/device.hpp"

#include <fmt/format.h>

#include "device/cuda_check.hpp"

namespace smelt::kernels {
namespace detail {

void throw_cuda(const char* call, const char* file, int line, const std::string& what) {
  throw cuda_error(fmt::format("{} failed at {}:{}: {}", call, file, line, what));
}

}  // namespace detail

DeviceInfo query_device() {
  DeviceInfo info;
  int count = 0;
  if (const cudaError_t status = cudaGetDeviceCount(&count); status != cudaSuccess) {
    info.reason = fmt::format("no usable CUDA device: {}", cudaGetErrorString(status));
    return info;
  }
  if (count == 0) {
    info.reason = "no CUDA device present";
    return info;
  }
  cudaDeviceProp prop{};
  SMELT_CUDA_CALL(cudaGetDeviceProperties(&prop, 0));
  info.available = true;
  info.name = prop.name;
  info.compute_major = prop.major;
  info.compute_minor = prop.minor;
  info.memory_bytes = prop.totalGlobalMem;
  return info;
}

}  // namespace smelt::kernels
