// The MoE sublayer's device code: router top-k with the expert histogram,
// offsets (exclusive prefix sum), token permutation, SwiGLU / gelu_tanh, the
// weighted un-permute + combine with the residual, a plain residual add, and a
// random fill. Grid-stride loops throughout, so any grid computes the whole
// result; 16-byte accesses where rows allow them. The launchers are in
// moe_kernels.cu; tests/kernels/emulated/kernels_emulated_test.cpp runs these same kernels on
// the CPU, which is why this file holds device code only.
#pragma once

#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "device/device_common.cuh"
#include "device/layer_kernels.hpp"

namespace smelt::kernels::device {

constexpr int kThreads = 256;
constexpr int kWarpsPerBlock = kThreads / 32;
constexpr int kScanThreads = 1024;

// V consecutive elements, aligned so that 16 (or 8) bytes of them move as one access.
template <class T, int V>
struct alignas(sizeof(T) * V) Vec {
  T v[V];
};

template <class T, int V>
__device__ __forceinline__ Vec<T, V> load(const T* p) {
  if constexpr (sizeof(T) * V == 16) {
    Vec<T, V> r;
    *reinterpret_cast<uint4*>(r.v) = *reinterpret_cast<const uint4*>(p);
    return r;
  } else if constexpr (sizeof(T) * V == 8) {
    Vec<T, V> r;
    *reinterpret_cast<uint2*>(r.v) = *reinterpret_cast<const uint2*>(p);
    return r;
  } else {
    Vec<T, V> r;
#pragma unroll
    for (int i = 0; i < V; ++i) r.v[i] = p[i];
    return r;
  }
}

template <class T, int V>
__device__ __forceinline__ void store(T* p, const Vec<T, V>& r) {
  if constexpr (sizeof(T) * V == 16) {
    *reinterpret_cast<uint4*>(p) = *reinterpret_cast<const uint4*>(r.v);
  } else if constexpr (sizeof(T) * V == 8) {
    *reinterpret_cast<uint2*>(p) = *reinterpret_cast<const uint2*>(r.v);
  } else {
#pragma unroll
    for (int i = 0; i < V; ++i) p[i] = r.v[i];
  }
}

__device__ __forceinline__ float router_score(float logit, float max_logit, float inv_sum, bool sigmoid) {
  return sigmoid ? 1.f / (1.f + expf(-logit)) : expf(logit - max_logit) * inv_sum;
}

__device__ __forceinline__ float warp_max(float v) {
  for (int off = 16; off > 0; off >>= 1) v = fmaxf(v, __shfl_xor_sync(kFullMask, v, off));
  return v;
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(kFullMask, v, off);
  return v;
}

// One warp per token; a block-level histogram in shared memory (experts ints)
// is flushed to `counts` once per block.
__global__ void router_topk_kernel(const float* __restrict__ logits, std::int64_t tokens, int experts, int top_k,
                                   bool sigmoid, bool balanced, int* __restrict__ topk_idx, float* __restrict__ topk_w,
                                   int* __restrict__ counts) {
  int* hist = dynamic_shared<int>();
  for (int e = threadIdx.x; e < experts; e += blockDim.x) hist[e] = 0;
  __syncthreads();
  const int lane = threadIdx.x & 31;
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / 32);
  for (std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32; t < tokens;
       t += warps) {
    const float* row = logits + t * experts;
    float max_logit = 0.f, inv_sum = 1.f;
    if (!sigmoid) {
      float m = -INFINITY;
      for (int e = lane; e < experts; e += 32) m = fmaxf(m, row[e]);
      max_logit = warp_max(m);
      float s = 0.f;
      for (int e = lane; e < experts; e += 32) s += expf(row[e] - max_logit);
      inv_sum = 1.f / warp_sum(s);
    }
    float chosen_sum = 0.f;
    std::uint64_t taken = 0;  // bit i: this lane's element lane + 32 i is already chosen
    for (int j = 0; j < top_k; ++j) {
      int best_e = INT_MAX;
      float best_v = -INFINITY;
      if (balanced) {
        best_e = static_cast<int>((t * top_k + j) % experts);
        best_v = router_score(row[best_e], max_logit, inv_sum, sigmoid);
      } else {
        int i = 0;
        for (int e = lane; e < experts; e += 32, ++i) {
          if ((taken >> i) & 1u) continue;
          const float v = router_score(row[e], max_logit, inv_sum, sigmoid);
          if (v > best_v) best_v = v, best_e = e;  // ascending e: the lower index keeps a tie
        }
        for (int off = 16; off > 0; off >>= 1) {  // argmax over the warp, lower index on ties
          const float ov = __shfl_xor_sync(kFullMask, best_v, off);
          const int oe = __shfl_xor_sync(kFullMask, best_e, off);
          if (ov > best_v || (ov == best_v && oe < best_e)) best_v = ov, best_e = oe;
        }
        best_e = min(best_e, experts - 1);  // only with NaN scores; keeps memory accesses in range
        if ((best_e & 31) == lane) taken |= std::uint64_t{1} << (best_e >> 5);
      }
      chosen_sum += best_v;
      if (lane == 0) {
        topk_idx[t * top_k + j] = best_e;
        topk_w[t * top_k + j] = best_v;
        atomicAdd(&hist[best_e], 1);
      }
    }
    __syncwarp();
    const float inv = 1.f / chosen_sum;
    for (int j = lane; j < top_k; j += 32) topk_w[t * top_k + j] *= inv;
  }
  __syncthreads();
  for (int e = threadIdx.x; e < experts; e += blockDim.x)
    if (hist[e] != 0) atomicAdd(&counts[e], hist[e]);
}

// One block (any whole number of warps up to kScanThreads, which the launcher
// uses): tiles of blockDim counts, warp scans, then a scan of the warp totals,
// with a carry between tiles.
__global__ void offsets_kernel(const int* __restrict__ counts, int experts, int* __restrict__ offsets,
                               int* __restrict__ cursor) {
  __shared__ int warp_total[kScanThreads / 32];
  __shared__ int carry;
  const int lane = threadIdx.x & 31, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  const int tile = blockDim.x;
  if (threadIdx.x == 0) carry = 0;
  __syncthreads();
  for (int base = 0; base < experts; base += tile) {
    const int e = base + threadIdx.x;
    const int c = e < experts ? counts[e] : 0;
    int incl = c;
    for (int off = 1; off < 32; off <<= 1) {
      const int up = __shfl_up_sync(kFullMask, incl, off);
      if (lane >= off) incl += up;
    }
    if (lane == 31) warp_total[warp] = incl;
    __syncthreads();
    if (warp == 0) {
      int w = lane < warps ? warp_total[lane] : 0;
      for (int off = 1; off < 32; off <<= 1) {
        const int up = __shfl_up_sync(kFullMask, w, off);
        if (lane >= off) w += up;
      }
      if (lane < warps) warp_total[lane] = w;  // inclusive over warps
    }
    __syncthreads();
    const int before = carry + (warp > 0 ? warp_total[warp - 1] : 0) + incl - c;
    if (e < experts) offsets[e] = cursor[e] = before;
    __syncthreads();  // every thread has read carry and warp_total
    if (threadIdx.x == 0) carry += warp_total[warps - 1];
    __syncthreads();
  }
  if (threadIdx.x == 0) offsets[experts] = carry;
}

template <int V>
__global__ void permute_kernel(const bf16* __restrict__ x, std::int64_t pairs, std::int64_t hidden, int top_k,
                               const int* __restrict__ topk_idx, int* __restrict__ cursor, int* __restrict__ slot,
                               bf16* __restrict__ xp) {
  const int lane = threadIdx.x & 31;
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / 32);
  for (std::int64_t p = static_cast<std::int64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32; p < pairs;
       p += warps) {
    int pos = 0;
    if (lane == 0) {
      pos = atomicAdd(&cursor[topk_idx[p]], 1);
      slot[p] = pos;
    }
    pos = __shfl_sync(kFullMask, pos, 0);
    const bf16* src = x + (p / top_k) * hidden;
    bf16* dst = xp + static_cast<std::int64_t>(pos) * hidden;
    for (std::int64_t c = static_cast<std::int64_t>(lane) * V; c < hidden; c += 32 * V)
      store<bf16, V>(dst + c, load<bf16, V>(src + c));
  }
}

template <int V>
__global__ void activation_kernel(const bf16* __restrict__ in, std::int64_t rows, std::int64_t width, bool gated,
                                  bf16* __restrict__ out) {
  const std::int64_t chunks = width / V, total = rows * chunks;
  const std::int64_t in_width = gated ? 2 * width : width;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t r = i / chunks, c = (i % chunks) * V;
    const bf16* src = in + r * in_width + c;
    Vec<bf16, V> result;
    if (gated) {
      const Vec<bf16, V> g = load<bf16, V>(src), u = load<bf16, V>(src + width);
#pragma unroll
      for (int k = 0; k < V; ++k) {
        const float a = __bfloat162float(g.v[k]);
        result.v[k] = __float2bfloat16_rn(a / (1.f + expf(-a)) * __bfloat162float(u.v[k]));
      }
    } else {
      const Vec<bf16, V> u = load<bf16, V>(src);
#pragma unroll
      for (int k = 0; k < V; ++k) {
        const float a = __bfloat162float(u.v[k]);
        result.v[k] = __float2bfloat16_rn(0.5f * a * (1.f + tanhf(0.7978845608028654f * (a + 0.044715f * a * a * a))));
      }
    }
    store<bf16, V>(out + r * width + c, result);
  }
}

// Writes x_out = x_in + scale * acc and its bf16 copy for V elements at offset i.
template <int V>
__device__ __forceinline__ void finish(const float* x_in, const float (&acc)[V], float scale, float* x_out, bf16* xb,
                                       std::int64_t i) {
  Vec<float, V> y = load<float, V>(x_in + i);
  Vec<bf16, V> yb;
#pragma unroll
  for (int k = 0; k < V; ++k) {
    y.v[k] += scale * acc[k];
    yb.v[k] = __float2bfloat16_rn(y.v[k]);
  }
  store<float, V>(x_out + i, y);
  store<bf16, V>(xb + i, yb);
}

// V is 4 (16-byte fp32 accesses, 8-byte bf16 ones) or 1.
template <int V>
__global__ void combine_kernel(const float* x_in, const bf16* __restrict__ z, const int* __restrict__ slot,
                               const float* __restrict__ topk_w, int top_k, const float* __restrict__ shared,
                               const float* __restrict__ gate_logit, std::int64_t tokens, std::int64_t hidden,
                               float scale, float* x_out, bf16* __restrict__ xb) {
  const std::int64_t chunks = hidden / V, total = tokens * chunks;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t t = i / chunks, c = (i % chunks) * V;
    float acc[V] = {};
    for (int j = 0; j < top_k; ++j) {
      const float w = topk_w[t * top_k + j];
      const Vec<bf16, V> zz = load<bf16, V>(z + static_cast<std::int64_t>(slot[t * top_k + j]) * hidden + c);
#pragma unroll
      for (int k = 0; k < V; ++k) acc[k] += w * __bfloat162float(zz.v[k]);
    }
    if (shared != nullptr) {
      const float g = gate_logit != nullptr ? 1.f / (1.f + expf(-gate_logit[t])) : 1.f;
      const Vec<float, V> s = load<float, V>(shared + t * hidden + c);
#pragma unroll
      for (int k = 0; k < V; ++k) acc[k] += g * s.v[k];
    }
    finish<V>(x_in, acc, scale, x_out, xb, t * hidden + c);
  }
}

template <int V>
__global__ void residual_kernel(const float* x_in, const float* __restrict__ delta, std::int64_t count, float scale,
                                float* x_out, bf16* __restrict__ xb) {
  for (std::int64_t i = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * V; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x * V) {
    const Vec<float, V> d = load<float, V>(delta + i);
    float acc[V];
#pragma unroll
    for (int k = 0; k < V; ++k) acc[k] = d.v[k];
    finish<V>(x_in, acc, scale, x_out, xb, i);
  }
}

__global__ void random_bf16_kernel(bf16* out, std::size_t count, std::uint64_t seed) {
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    std::uint64_t h = (i + 1) * 0x9E3779B97F4A7C15ull ^ seed;  // splitmix64 finaliser
    h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
    h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
    h ^= h >> 31;
    out[i] = __float2bfloat16_rn(static_cast<float>(h >> 40) * (2.f / 16777216.f) - 1.f);
  }
}

}  // namespace smelt::kernels::device
