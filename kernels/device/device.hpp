// What CUDA device this process can use, without failing where there is none.
#pragma once

#include <cstddef>
#include <string>

namespace smelt::kernels {

struct DeviceInfo {
  bool available = false;
  std::string reason;  // why not, when unavailable
  std::string name;
  int compute_major = 0;
  int compute_minor = 0;
  std::size_t memory_bytes = 0;
};

// Device 0, or the reason there is none (no driver, no device).
DeviceInfo query_device();

// Fills device memory with `value`, so that an element a kernel fails to write
// shows up in a check (outputs are poisoned before each run). Synchronises.
void fill(float* device_data, std::size_t count, float value);

}  // namespace smelt::kernels
