#include "cpu/attention.hpp"

#include <algorithm>
#include <cmath>

#include <Eigen/Dense>

#include "cpu/array_view.hpp"
#include "cpu/attention_keys.hpp"
#include "cpu/blas.hpp"

namespace smelt::cpu {
// A named namespace: the tiles' types are captured by the lambdas of members with external linkage.
namespace attention_tiles {

using i64 = std::int64_t;
using Eigen::Index;

Index eigen_index(i64 v) { return static_cast<Index>(v); }
std::size_t tile_elements(i64 v) { return static_cast<std::size_t>(v); }

// Query rows per tile, as flash attention tiles them.
constexpr i64 kTileRows = 64;

template <class T>
struct HeadDims {
  i64 d, heads, group, qw, kvw;
  T scale;
  explicit HeadDims(const AttentionConfig& a)
      : d(a.head_dim),
        heads(a.num_heads),
        group(a.num_heads / a.num_kv_heads),
        qw(a.num_heads * a.head_dim),
        kvw(a.num_kv_heads * a.head_dim),
        scale(static_cast<T>(1.0 / std::sqrt(static_cast<double>(a.head_dim)))) {}
};

// Queries r0.. and keys k0.. of one head within the sequence starting at token `base`.
struct QueryTile {
  i64 base, head, r0, rows, k0, keys;
};

template <class F>
void for_each_tile(const AttentionConfig& a, LayerAttention kind, i64 sequences, i64 context, F&& f) {
  for (i64 seq = 0; seq < sequences; ++seq)
    for (i64 head = 0; head < a.num_heads; ++head)
      for (i64 r0 = 0; r0 < context; r0 += kTileRows) {
        const i64 rows = std::min(kTileRows, context - r0), k0 = first_key(a, kind, r0);
        f(QueryTile{seq * context, head, r0, rows, k0, r0 + rows - k0});
      }
}

// Row r of a tile sees its keys first..last (offsets in the tile's keys).
std::pair<i64, i64> visible_keys(const AttentionConfig& a, LayerAttention kind, const QueryTile& t, i64 r) {
  return {first_key(a, kind, t.r0 + r) - t.k0, t.r0 + r - t.k0};
}

}  // namespace attention_tiles

using namespace attention_tiles;

template <class T>
double TiledAttention<T>::forward(LayerAttention kind, const T* q, const T* k, const T* v, T* o, T* lse) {
  const HeadDims<T> a(a_);
  double flops = 0;
  for_each_tile(a_, kind, sequences_, context_, [&](const QueryTile& t) {
    const i64 kv_col = t.head / a.group * a.d, q_col = t.head * a.d;
    const T* kb = k + (t.base + t.k0) * a.kvw + kv_col;
    tile_.resize(tile_elements(t.rows * t.keys));
    detail::gemm(false, true, t.rows, t.keys, a.d, q + (t.base + t.r0) * a.qw + q_col, a.qw, kb, a.kvw, T(0),
                 tile_.data(), t.keys);
    for (i64 r = 0; r < t.rows; ++r) {
      const auto [lo, hi] = visible_keys(a_, kind, t, r);
      ArrayView<T> row(tile_.data() + r * t.keys, eigen_index(t.keys));
      auto seen = row.segment(eigen_index(lo), eigen_index(hi - lo + 1));
      seen *= a.scale;
      const T top = seen.maxCoeff();
      seen = (seen - top).exp();
      const T sum = seen.sum();
      seen /= sum;
      row.head(eigen_index(lo)).setZero();
      row.tail(eigen_index(t.keys - hi - 1)).setZero();
      lse[(t.base + t.r0 + r) * a.heads + t.head] = top + std::log(sum);
    }
    detail::gemm(false, false, t.rows, a.d, t.keys, tile_.data(), t.keys, v + (t.base + t.k0) * a.kvw + kv_col, a.kvw,
                 T(0), o + (t.base + t.r0) * a.qw + q_col, a.qw);
    flops += 4.0 * static_cast<double>(t.rows * t.keys * a.d);
  });
  return flops;
}

template <class T>
double TiledAttention<T>::backward(LayerAttention kind, const T* q, const T* k, const T* v, const T* o, const T* lse,
                                   const T* dout, T* dq, T* dk, T* dv) {
  const HeadDims<T> a(a_);
  const i64 n = sequences_ * context_;
  std::fill(dk, dk + n * a.kvw, T(0));
  std::fill(dv, dv + n * a.kvw, T(0));
  double flops = 0;
  for_each_tile(a_, kind, sequences_, context_, [&](const QueryTile& t) {
    const i64 kv_col = t.head / a.group * a.d, at = (t.base + t.r0) * a.qw + t.head * a.d;
    const i64 k_at = (t.base + t.k0) * a.kvw + kv_col;
    tile_.resize(tile_elements(t.rows * t.keys)), tile2_.resize(tile_elements(t.rows * t.keys));
    detail::gemm(false, true, t.rows, t.keys, a.d, q + at, a.qw, k + k_at, a.kvw, T(0), tile_.data(), t.keys);
    detail::gemm(false, true, t.rows, t.keys, a.d, dout + at, a.qw, v + k_at, a.kvw, T(0), tile2_.data(), t.keys);
    for (i64 r = 0; r < t.rows; ++r) {
      const auto [lo, hi] = visible_keys(a_, kind, t, r);
      ArrayView<T> prob(tile_.data() + r * t.keys, eigen_index(t.keys)),
          dp(tile2_.data() + r * t.keys, eigen_index(t.keys));
      const T delta = (ConstArrayView<T>(dout + at + r * a.qw, eigen_index(a.d)) *
                       ConstArrayView<T>(o + at + r * a.qw, eigen_index(a.d)))
                          .sum();
      auto seen = prob.segment(eigen_index(lo), eigen_index(hi - lo + 1));
      seen = (seen * a.scale - lse[(t.base + t.r0 + r) * a.heads + t.head]).exp();
      prob.head(eigen_index(lo)).setZero();
      prob.tail(eigen_index(t.keys - hi - 1)).setZero();
      dp = prob * (dp - delta) * a.scale;  // the scores' gradient, times the scale
    }
    detail::gemm(false, false, t.rows, a.d, t.keys, tile2_.data(), t.keys, k + k_at, a.kvw, T(0), dq + at, a.qw);
    detail::gemm(true, false, t.keys, a.d, t.rows, tile2_.data(), t.keys, q + at, a.qw, T(1), dk + k_at, a.kvw);
    detail::gemm(true, false, t.keys, a.d, t.rows, tile_.data(), t.keys, dout + at, a.qw, T(1), dv + k_at, a.kvw);
    flops += 10.0 * static_cast<double>(t.rows * t.keys * a.d);
  });
  return flops;
}

template <class T>
double TiledAttention<T>::decode(LayerAttention kind, const T* q, const T* k, const T* v, T* cache_k, T* cache_v,
                                 T* o) {
  const HeadDims<T> a(a_);
  const i64 last = context_ - 1, lo = first_key(a_, kind, last), keys = last - lo + 1;
  tile_.resize(tile_elements(a.group * keys));
  double flops = 0;
  for (i64 b = 0; b < sequences_; ++b) {
    std::copy_n(k + b * a.kvw, a.kvw, cache_k + (b * context_ + last) * a.kvw);
    std::copy_n(v + b * a.kvw, a.kvw, cache_v + (b * context_ + last) * a.kvw);
    for (i64 kv = 0; kv < a_.num_kv_heads; ++kv) {
      const i64 q_at = b * a.qw + kv * a.group * a.d, k_at = (b * context_ + lo) * a.kvw + kv * a.d;
      detail::gemm(false, true, a.group, keys, a.d, q + q_at, a.d, cache_k + k_at, a.kvw, T(0), tile_.data(), keys);
      for (i64 r = 0; r < a.group; ++r) {
        ArrayView<T> row(tile_.data() + r * keys, eigen_index(keys));
        row *= a.scale;
        row = (row - row.maxCoeff()).exp();
        row /= row.sum();
      }
      detail::gemm(false, false, a.group, a.d, keys, tile_.data(), keys, cache_v + k_at, a.kvw, T(0), o + q_at, a.d);
      flops += 4.0 * static_cast<double>(a.group * keys * a.d);
    }
  }
  return flops;
}

template class TiledAttention<float>;
template class TiledAttention<double>;

}  // namespace smelt::cpu
