// The measured step's attention core (step_model.hpp): causal, sliding or chunked attention in tiles of 64 queries
// by BLAS, its backward, and one decoded token per sequence against a KV cache. Private to the bench module.
#pragma once

#include <cstdint>
#include <vector>

#include "smelt/config.hpp"

namespace smelt::cpu {

// Row-major activations of `sequences` x `context` tokens: q and o [tokens x heads d], k and v [tokens x kv_heads
// d], lse [tokens x heads] (each query's log-sum-exp, kept for the backward). Each call returns the FLOPs it ran.
template <class T>
class TiledAttention {
 public:
  TiledAttention(const AttentionConfig& a, std::int64_t sequences, std::int64_t context)
      : a_(a), sequences_(sequences), context_(context) {}

  // Per tile and head S = Q K^T over the keys the tile's queries see, masked within the tile, softmax, O = P V:
  // 4 d per (query, head, key) of the tile.
  double forward(LayerAttention kind, const T* q, const T* k, const T* v, T* o, T* lse);
  // dq (written), dk and dv (zeroed here) from dout: per tile P again from lse, dP = dO V^T,
  // dS = P (dP - rowsum(dO O)), dQ = scale dS K, dK += scale dS^T Q, dV += P^T dO: 10 d per pair and head.
  double backward(LayerAttention kind, const T* q, const T* k, const T* v, const T* o, const T* lse, const T* dout,
                  T* dq, T* dk, T* dv);
  // One new token per sequence (q, k, v: [sequences x width]) against caches of `context` rows per sequence whose
  // first context - 1 hold the earlier tokens: the new K and V join them at the last row, and each KV head's query
  // heads read the keys the token sees as one product.
  double decode(LayerAttention kind, const T* q, const T* k, const T* v, T* cache_k, T* cache_v, T* o);

 private:
  const AttentionConfig& a_;
  std::int64_t sequences_, context_;
  std::vector<T> tile_, tile2_;
};

extern template class TiledAttention<float>;
extern template class TiledAttention<double>;

}  // namespace smelt::cpu
