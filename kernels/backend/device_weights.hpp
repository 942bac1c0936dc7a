// One layer's weights on the device, in bf16: make_layer_weights (float) is
// converted on the host (round to nearest even) and copied. Q/K/V are fused
// into one [H x (q + 2 kv)] matrix, gate and up into one [H x 2F] matrix per
// FFN; a fused product still accounts 2 m n k, the sum of its parts.
#pragma once

#include <cstdint>
#include <vector>

#include "device/device_buffer.hpp"
#include "smelt/bench_weights.hpp"

namespace smelt::kernels {

// The sizes the CUDA layer needs, read from a validated config.
struct Dims {
  std::int64_t hidden = 0, heads = 0, kv_heads = 0, head_dim = 0;
  std::int64_t q = 0, kv = 0, qkv = 0;  // heads x d, kv_heads x d, q + 2 kv
  std::int64_t experts = 0, top_k = 0, expert_width = 0;
  std::int64_t shared = 0, shared_width = 0, dense_width = 0;
  bool gated = true, shared_gate = false, sigmoid = false;

  static Dims of(const ModelConfig& config);
  std::int64_t up_width(std::int64_t f) const noexcept { return gated ? 2 * f : f; }
  std::int64_t ffn_elements(std::int64_t f) const noexcept { return hidden * up_width(f) + f * hidden; }
};

struct DeviceFfn {
  DeviceBuffer up;    // [H x U]
  DeviceBuffer down;  // [F x H]
  std::int64_t width = 0;
};

struct DeviceLayer {
  bool moe = false;
  DeviceBuffer wqkv, wo;                // [H x qkv], [q x H]; empty when moe_only
  DeviceBuffer router;                  // [H x E]
  DeviceBuffer expert_up, expert_down;  // E x [H x U], E x [F x H], contiguous
  std::vector<DeviceFfn> shared;
  DeviceBuffer shared_gate;  // [H x 1]
  DeviceFfn dense;
};

// Device bytes of one layer's weights (bf16).
std::int64_t layer_weight_bytes(const ModelConfig& config, std::int64_t layer, bool moe_only);

// A layer's weights as bf16 bits in device layout, built on the host (thread-safe).
struct HostFfn {
  std::vector<std::uint16_t> up, down;
  std::int64_t width = 0;
};
struct HostLayer {
  bool moe = false;
  std::vector<std::uint16_t> wqkv, wo, router, expert_up, expert_down, shared_gate;
  std::vector<HostFfn> shared;
  HostFfn dense;
};
// Converts make_layer_weights' output for `layer`, checking every shape.
HostLayer to_host_layer(const ModelConfig& config, bool moe_only, std::int64_t layer, const LayerWeights& w);
DeviceLayer upload_layer(const HostLayer& host);

// Float to bf16 bits, round to nearest even (NaN stays NaN).
std::vector<std::uint16_t> to_bf16_bits(const float* data, std::size_t count);

}  // namespace smelt::kernels
