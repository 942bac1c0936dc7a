#include "backend/device_weights.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "smelt/error.hpp"

namespace smelt::kernels {
namespace {

void expect_size(const std::vector<float>& v, std::int64_t n, std::string_view what) {
  if (static_cast<std::int64_t>(v.size()) != n)
    throw error(fmt::format("make_layer_weights: {} has {} elements, the CUDA backend expects {}", what, v.size(), n));
}

DeviceBuffer upload(const std::vector<std::uint16_t>& bits) {
  DeviceBuffer out(bits.size() * sizeof(std::uint16_t));
  if (!bits.empty()) SMELT_CUDA_CALL(cudaMemcpy(out.as<void>(), bits.data(), out.bytes(), cudaMemcpyHostToDevice));
  return out;
}

std::vector<std::uint16_t> bits(const std::vector<float>& v) { return to_bf16_bits(v.data(), v.size()); }

// Rows of several row-major [rows x width_i] matrices side by side: [rows x sum width_i], as bf16 bits.
std::vector<std::uint16_t> side_by_side(std::int64_t rows, const std::vector<const std::vector<float>*>& parts) {
  std::int64_t width = 0;
  for (const auto* p : parts) width += static_cast<std::int64_t>(p->size()) / rows;
  std::vector<std::uint16_t> joined(static_cast<std::size_t>(rows * width));
  std::int64_t column = 0;
  for (const auto* p : parts) {
    const std::int64_t w = static_cast<std::int64_t>(p->size()) / rows;
    for (std::int64_t r = 0; r < rows; ++r) {
      const std::vector<std::uint16_t> row = to_bf16_bits(p->data() + r * w, static_cast<std::size_t>(w));
      std::copy(row.begin(), row.end(), joined.begin() + r * width + column);
    }
    column += w;
  }
  return joined;
}

// up = [gate | up] per row when gated, else up alone: [H x U] bf16 bits; down [F x H].
HostFfn host_ffn(const Dims& d, const LayerWeights::Ffn& ffn, std::int64_t f, std::string_view what) {
  expect_size(ffn.up, d.hidden * f, fmt::format("{} up", what));
  expect_size(ffn.down, f * d.hidden, fmt::format("{} down", what));
  HostFfn out;
  out.width = f;
  if (d.gated) {
    expect_size(ffn.gate, d.hidden * f, fmt::format("{} gate", what));
    out.up = side_by_side(d.hidden, {&ffn.gate, &ffn.up});
  } else {
    out.up = bits(ffn.up);
  }
  out.down = bits(ffn.down);
  return out;
}

DeviceFfn upload_ffn(const HostFfn& f) {
  DeviceFfn out;
  out.width = f.width;
  out.up = upload(f.up);
  out.down = upload(f.down);
  return out;
}

}  // namespace

Dims Dims::of(const ModelConfig& c) {
  Dims d;
  d.hidden = c.hidden_size;
  d.heads = c.attention.num_heads;
  d.kv_heads = c.attention.num_kv_heads;
  d.head_dim = c.attention.head_dim;
  d.q = d.heads * d.head_dim;
  d.kv = d.kv_heads * d.head_dim;
  d.qkv = d.q + 2 * d.kv;
  d.experts = c.moe.num_experts;
  d.top_k = c.moe.top_k;
  d.expert_width = c.moe.expert_width;
  d.shared = c.moe.num_shared_experts;
  d.shared_width = c.moe.shared_width;
  d.dense_width = c.ffn.dense_width;
  d.gated = c.ffn.type == FfnType::gated;
  d.shared_gate = c.moe.shared_gate;
  d.sigmoid = c.moe.router_score == RouterScore::sigmoid;
  return d;
}

std::vector<std::uint16_t> to_bf16_bits(const float* data, std::size_t count) {
  std::vector<std::uint16_t> out(count);
  for (std::size_t i = 0; i < count; ++i) {
    std::uint32_t u = 0;
    std::memcpy(&u, &data[i], sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u) {
      out[i] = static_cast<std::uint16_t>((u >> 16) | 0x40u);  // quiet NaN
      continue;
    }
    u += 0x7fffu + ((u >> 16) & 1u);
    out[i] = static_cast<std::uint16_t>(u >> 16);
  }
  return out;
}

std::int64_t layer_weight_bytes(const ModelConfig& config, std::int64_t layer, bool moe_only) {
  const Dims d = Dims::of(config);
  std::int64_t elements = moe_only ? 0 : d.hidden * d.qkv + d.q * d.hidden;
  if (config.is_moe_layer(layer)) {
    elements += d.hidden * d.experts + d.experts * d.ffn_elements(d.expert_width) +
                d.shared * d.ffn_elements(d.shared_width) + (d.shared_gate ? d.hidden : 0);
  } else {
    elements += d.ffn_elements(d.dense_width);
  }
  return 2 * elements;
}

HostLayer to_host_layer(const ModelConfig& config, bool moe_only, std::int64_t layer, const LayerWeights& w) {
  const Dims d = Dims::of(config);
  HostLayer out;
  out.moe = config.is_moe_layer(layer);
  if (!moe_only) {
    expect_size(w.wq, d.hidden * d.q, "wq");
    expect_size(w.wk, d.hidden * d.kv, "wk");
    expect_size(w.wv, d.hidden * d.kv, "wv");
    expect_size(w.wo, d.q * d.hidden, "wo");
    out.wqkv = side_by_side(d.hidden, {&w.wq, &w.wk, &w.wv});
    out.wo = bits(w.wo);
  }
  if (!out.moe) {
    out.dense = host_ffn(d, w.dense, d.dense_width, "dense FFN");
    return out;
  }
  expect_size(w.router, d.hidden * d.experts, "router");
  out.router = bits(w.router);
  if (static_cast<std::int64_t>(w.experts.size()) != d.experts)
    throw error(fmt::format("make_layer_weights: {} experts, the config has {}", w.experts.size(), d.experts));
  out.expert_up.reserve(static_cast<std::size_t>(d.experts * d.hidden * d.up_width(d.expert_width)));
  out.expert_down.reserve(static_cast<std::size_t>(d.experts * d.expert_width * d.hidden));
  for (const auto& ffn : w.experts) {
    const HostFfn f = host_ffn(d, ffn, d.expert_width, "expert");
    out.expert_up.insert(out.expert_up.end(), f.up.begin(), f.up.end());
    out.expert_down.insert(out.expert_down.end(), f.down.begin(), f.down.end());
  }
  if (static_cast<std::int64_t>(w.shared.size()) != d.shared)
    throw error(fmt::format("make_layer_weights: {} shared experts, the config has {}", w.shared.size(), d.shared));
  for (const auto& ffn : w.shared) out.shared.push_back(host_ffn(d, ffn, d.shared_width, "shared expert"));
  if (d.shared_gate) {
    expect_size(w.shared_gate, d.hidden, "shared_gate");
    out.shared_gate = bits(w.shared_gate);
  }
  return out;
}

DeviceLayer upload_layer(const HostLayer& host) {
  DeviceLayer out;
  out.moe = host.moe;
  out.wqkv = upload(host.wqkv);
  out.wo = upload(host.wo);
  out.router = upload(host.router);
  out.expert_up = upload(host.expert_up);
  out.expert_down = upload(host.expert_down);
  for (const HostFfn& f : host.shared) out.shared.push_back(upload_ffn(f));
  out.shared_gate = upload(host.shared_gate);
  out.dense = upload_ffn(host.dense);
  return out;
}

}  // namespace smelt::kernels
