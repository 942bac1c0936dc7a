// The trained model of step_model.hpp: forward with what the backward needs
// kept per visit, the backward in reverse visit order, and AdamW. Buffers live
// as long as the model, so repeated steps reuse their memory as a framework's
// caching allocator would.
#include "bench/step_model.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <random>

#include <Eigen/Dense>

#include "bench/attention_keys.hpp"
#include "bench/blas.hpp"
#include "smelt/bench_weights.hpp"
#include "util/median.hpp"

namespace smelt::bench_detail {
namespace {

using i64 = std::int64_t;
using Eigen::Index;
template <class T>
using Arr = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
template <class T>
using ConstArr = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;

std::size_t u(i64 v) { return static_cast<std::size_t>(v); }
Index ix(i64 v) { return static_cast<Index>(v); }

constexpr double kNormEps = 1e-6;
// torch.optim.AdamW's defaults but the learning rate.
constexpr double kLr = 1e-4, kBeta1 = 0.9, kBeta2 = 0.999, kAdamEps = 1e-8, kWeightDecay = 1e-2;

template <class T>
T sigmoid(T x) {
  return T(1) / (T(1) + std::exp(-x));
}

}  // namespace

template <class T>
void adamw_update(T* params, T* m, T* v, const T* grads, std::int64_t size, std::int64_t step) {
  const double c1 = 1 - std::pow(kBeta1, static_cast<double>(step));
  const double c2 = 1 - std::pow(kBeta2, static_cast<double>(step));
  const T b1 = static_cast<T>(kBeta1), b2 = static_cast<T>(kBeta2);
  const T rate = static_cast<T>(kLr / c1), root = static_cast<T>(std::sqrt(c2)), eps = static_cast<T>(kAdamEps);
  const T decay = static_cast<T>(1 - kLr * kWeightDecay);
  // In blocks that stay in cache, so that the three updates make one pass over memory, as a fused AdamW does.
  constexpr i64 kBlock = 4096;
  for (i64 at = 0; at < size; at += kBlock) {
    const i64 len = std::min(kBlock, size - at);
    Arr<T> P(params + at, ix(len)), M(m + at, ix(len)), V(v + at, ix(len));
    const ConstArr<T> G(grads + at, ix(len));
    M = b1 * M + (T(1) - b1) * G;
    V = b2 * V + (T(1) - b2) * G.square();
    P = P * decay - rate * M / (V.sqrt() / root + eps);
  }
}
template void adamw_update(float*, float*, float*, const float*, std::int64_t, std::int64_t);
template void adamw_update(double*, double*, double*, const double*, std::int64_t, std::int64_t);

template <class T>
struct StepModel<T>::Impl {
  LayerPlan plan;
  const ModelConfig& c = plan.config;
  i64 n = 0, h = 0, vocab = 0;
  bool balanced = false;
  std::vector<T> p, g, m1, m2;
  i64 adam_steps = 0;
  std::vector<LayerSlices> layers;
  Slice emb, head_w, fnorm;
  std::vector<i64> tokens, targets;
  std::vector<T> resid, x_final, rstd_f, xf, probs;
  std::vector<T> t1, t2, t3, t4, t5, t6, t7, tile, tile2;  // scratch
  struct Backward {
    std::vector<T> dxf, dx, dout, dxn, dq, dk, dv, dov, dmix, dgl;
  } bk;
  StepFlops flops;
  std::vector<i64> expert_tokens;

  explicit Impl(const LayerPlan& pl) : plan(pl) {}

  // Per visit: what its backward reads.
  struct Saved {
    i64 layer = 0;
    T scale = 1;
    std::vector<T> x_in, rstd1, xn1, q, k, v, o, lse, x_mid, rstd2, xn2;
    // MoE: router probabilities, choices, mixing weights, the permutation; the
    // experts' inputs, hidden activations and outputs in slot (expert) order.
    std::vector<T> scores, mix, perm_in, eg, eu, eh, ey;
    std::vector<i64> chosen, count, start, slots;
    // Shared experts (or the dense FFN, in entry 0): hidden activations on every token.
    std::vector<std::vector<T>> sg, su, sh;
    std::vector<T> shared_sum, gate;
  };
  std::vector<Saved> saved;

  // ---- parameters ---------------------------------------------------------------------------------------------
  Slice take(i64 size) {
    const Slice s{static_cast<i64>(p.size()), size};
    p.resize(p.size() + u(size));
    return s;
  }
  Slice put(const std::vector<float>& v) {
    const Slice s = take(static_cast<i64>(v.size()));
    std::copy(v.begin(), v.end(), p.begin() + s.offset);
    return s;
  }
  FfnSlices put_ffn(const LayerWeights::Ffn& f, i64 width) {
    FfnSlices s;
    s.gate = put(f.gate), s.up = put(f.up), s.down = put(f.down), s.width = width;
    return s;
  }
  T* w(Slice s) { return p.data() + s.offset; }
  T* dw(Slice s) { return g.data() + s.offset; }

  void build(std::uint64_t seed) {
    n = plan.tokens, h = c.hidden_size, vocab = c.vocab_size;
    std::mt19937_64 rng(seed ^ 0x5DEECE66DULL);
    const T bound = static_cast<T>(1.0 / std::sqrt(static_cast<double>(h)));
    std::uniform_real_distribution<double> uni(-1, 1);
    emb = take(vocab * h);
    for (i64 i = 0; i < emb.size; ++i) p[u(emb.offset + i)] = bound * static_cast<T>(uni(rng));
    for (i64 l = 0; l < c.num_layers; ++l) {
      const LayerWeights lw = make_layer_weights(plan, l, seed);
      LayerSlices s;
      s.norm1 = take(h), s.norm2 = take(h);
      std::fill(p.begin() + s.norm1.offset, p.end(), T(1));
      s.wq = put(lw.wq), s.wk = put(lw.wk), s.wv = put(lw.wv), s.wo = put(lw.wo);
      s.router = put(lw.router), s.shared_gate = put(lw.shared_gate);
      for (const auto& f : lw.experts) s.experts.push_back(put_ffn(f, c.moe.expert_width));
      for (const auto& f : lw.shared) s.shared.push_back(put_ffn(f, c.moe.shared_width));
      s.dense = put_ffn(lw.dense, c.ffn.dense_width);
      layers.push_back(std::move(s));
    }
    fnorm = take(h);
    std::fill(p.begin() + fnorm.offset, p.end(), T(1));
    if (c.tie_embeddings) {
      head_w = emb;
    } else {
      head_w = take(h * vocab);
      for (i64 i = 0; i < head_w.size; ++i) p[u(head_w.offset + i)] = bound * static_cast<T>(uni(rng));
    }
    g.assign(p.size(), T(0)), m1.assign(p.size(), T(0)), m2.assign(p.size(), T(0));
    std::uniform_int_distribution<i64> token(0, vocab - 1);
    for (i64 t = 0; t < n; ++t) tokens.push_back(token(rng)), targets.push_back(token(rng));
    saved.resize(plan.visits.size());
    for (std::size_t i = 0; i < saved.size(); ++i) {
      const i64 layer = plan.visits[i];
      const bool looped = c.loop.active() && layer + 1 >= c.loop.first && layer + 1 <= c.loop.last;
      saved[i].layer = layer;
      saved[i].scale = static_cast<T>(looped ? c.loop.residual_scale : 1.0);
    }
  }

  // ---- products -----------------------------------------------------------------------------------------------
  // C (m x n) = op(A) op(B) + beta C, counted as 2 m n k into `counter`.
  void mm(bool ta, bool tb, i64 m, i64 nn, i64 k, const T* a, const T* b, T beta, T* out, double& counter) {
    detail::gemm(ta, tb, m, nn, k, a, b, beta, out);
    counter += 2.0 * static_cast<double>(m) * static_cast<double>(nn) * static_cast<double>(k);
  }
  // Forward: out = in W; backward: din (+)= dout W^T and dW += in^T dout.
  void fwd(const T* in, i64 rows, Slice wt, i64 cols, i64 inner, T* out) {
    mm(false, false, rows, cols, inner, in, w(wt), T(0), out, flops.forward_gemm);
  }
  void bwd(const T* in, const T* dout, i64 rows, Slice wt, i64 cols, i64 inner, T* din, T beta) {
    if (din) mm(false, true, rows, inner, cols, dout, w(wt), beta, din, flops.backward_gemm);
    mm(true, false, inner, cols, rows, in, dout, T(1), dw(wt), flops.backward_gemm);
  }

  // ---- elementwise, vectorised by Eigen's array expressions ---------------------------------------------------
  static Arr<T> arr(T* v, i64 size) { return Arr<T>(v, ix(size)); }
  static ConstArr<T> arr(const T* v, i64 size) { return ConstArr<T>(v, ix(size)); }

  // ---- RMSNorm ------------------------------------------------------------------------------------------------
  void norm(const T* in, Slice weight, T* out, std::vector<T>& rstd) {
    rstd.resize(u(n));
    const ConstArr<T> gw = arr(static_cast<const T*>(w(weight)), h);
    for (i64 t = 0; t < n; ++t) {
      const ConstArr<T> xr = arr(in + t * h, h);
      const T r = T(1) / std::sqrt(xr.square().sum() / static_cast<T>(h) + static_cast<T>(kNormEps));
      rstd[u(t)] = r;
      arr(out + t * h, h) = xr * r * gw;
    }
  }
  // dx += the input's gradient; the weight's into the gradients.
  void norm_back(const T* dy, const T* in, const std::vector<T>& rstd, Slice weight, T* dx) {
    const ConstArr<T> gw = arr(static_cast<const T*>(w(weight)), h);
    Arr<T> dg = arr(dw(weight), h);
    for (i64 t = 0; t < n; ++t) {
      const ConstArr<T> xr = arr(in + t * h, h), dr = arr(dy + t * h, h);
      const T r = rstd[u(t)];
      const T coef = (dr * gw * xr).sum() * r * r * r / static_cast<T>(h);
      dg += dr * xr * r;
      arr(dx + t * h, h) += r * gw * dr - coef * xr;
    }
  }

  // ---- FFN ----------------------------------------------------------------------------------------------------
  bool gated() const { return c.ffn.type == FfnType::gated; }
  static constexpr double kGelu0 = 0.7978845608028654, kGelu1 = 0.044715;  // sqrt(2/pi), and tanh-GELU's cubic
  void ffn(const T* in, i64 rows, const FfnSlices& f, T* gg, T* uu, T* hh, T* y) {
    const i64 size = rows * f.width;
    fwd(in, rows, f.up, f.width, h, uu);
    const ConstArr<T> U = arr(static_cast<const T*>(uu), size);
    if (gated()) {
      fwd(in, rows, f.gate, f.width, h, gg);
      const ConstArr<T> G = arr(static_cast<const T*>(gg), size);
      arr(hh, size) = G / (T(1) + (-G).exp()) * U;
    } else {
      const T k0 = static_cast<T>(kGelu0), k1 = static_cast<T>(kGelu1);
      arr(hh, size) = static_cast<T>(0.5) * U * (T(1) + (k0 * (U + k1 * U.cube())).tanh());
    }
    fwd(hh, rows, f.down, h, f.width, y);
  }
  // din = the input's gradient (overwritten); weight gradients added.
  void ffn_back(const T* in, i64 rows, const FfnSlices& f, const T* gg, const T* uu, const T* hh, const T* dy, T* din) {
    const i64 size = rows * f.width;
    t5.resize(u(size)), t6.resize(u(size)), t7.resize(u(size));
    bwd(hh, dy, rows, f.down, h, f.width, t5.data(), T(0));
    Arr<T> dh = arr(t5.data(), size), aux = arr(t6.data(), size);
    const ConstArr<T> U = arr(uu, size);
    if (gated()) {
      const ConstArr<T> G = arr(gg, size);
      aux = (T(1) + (-G).exp()).inverse();  // sigmoid(g)
      Arr<T> dg = arr(t7.data(), size);
      dg = dh * U * aux * (T(1) + G * (T(1) - aux));
      dh = dh * G * aux;  // now the up projection's gradient
      bwd(in, t7.data(), rows, f.gate, f.width, h, din, T(0));
      bwd(in, t5.data(), rows, f.up, f.width, h, din, T(1));
    } else {
      const T k0 = static_cast<T>(kGelu0), k1 = static_cast<T>(kGelu1);
      aux = (k0 * (U + k1 * U.cube())).tanh();
      dh = dh * (static_cast<T>(0.5) * (T(1) + aux) +
                 static_cast<T>(0.5) * U * (T(1) - aux.square()) * k0 * (T(1) + 3 * k1 * U.square()));
      bwd(in, t5.data(), rows, f.up, f.width, h, din, T(0));
    }
  }

  // ---- attention ----------------------------------------------------------------------------------------------
  // Tiles of kTile queries against the keys the tile's queries see (from its first query's first key to its last
  // query), by BLAS; the keys a query may not see inside its tile are masked, as flash attention masks a tile.
  static constexpr i64 kTile = 64;
  struct Dims {
    i64 d, heads, group, qw, kvw;
    T scale;
  };
  Dims dims() const {
    const auto& a = c.attention;
    return {a.head_dim,
            a.num_heads,
            a.num_heads / a.num_kv_heads,
            a.num_heads * a.head_dim,
            a.num_kv_heads * a.head_dim,
            static_cast<T>(1.0 / std::sqrt(static_cast<double>(a.head_dim)))};
  }
  struct Tile {
    i64 base, head, r0, rows, k0, keys;  // sequence's first token; queries r0.. and keys k0.. within the sequence
  };
  template <class F>
  void each_tile(LayerAttention kind, F&& f) {
    for (i64 seq = 0; seq < plan.sequences; ++seq)
      for (i64 head = 0; head < c.attention.num_heads; ++head)
        for (i64 r0 = 0; r0 < plan.context; r0 += kTile) {
          const i64 rows = std::min(kTile, plan.context - r0), k0 = first_key(c.attention, kind, r0);
          f(Tile{seq * plan.context, head, r0, rows, k0, r0 + rows - k0});
        }
  }
  // Row r of a tile sees its keys first..last (offsets in the tile's keys).
  std::pair<i64, i64> visible(LayerAttention kind, const Tile& t, i64 r) const {
    return {first_key(c.attention, kind, t.r0 + r) - t.k0, t.r0 + r - t.k0};
  }

  void attention(Saved& s) {
    const Dims a = dims();
    const LayerAttention kind = c.attention_at(s.layer);
    s.o.resize(u(n * a.qw)), s.lse.resize(u(n * a.heads));
    each_tile(kind, [&](const Tile& t) {
      const i64 kv_col = t.head / a.group * a.d, q_col = t.head * a.d;
      const T* qb = s.q.data() + (t.base + t.r0) * a.qw + q_col;
      const T* kb = s.k.data() + (t.base + t.k0) * a.kvw + kv_col;
      const T* vb = s.v.data() + (t.base + t.k0) * a.kvw + kv_col;
      tile.resize(u(t.rows * t.keys));
      detail::gemm(false, true, t.rows, t.keys, a.d, qb, a.qw, kb, a.kvw, T(0), tile.data(), t.keys);
      for (i64 r = 0; r < t.rows; ++r) {
        const auto [lo, hi] = visible(kind, t, r);
        Arr<T> row = arr(tile.data() + r * t.keys, t.keys);
        auto seen = row.segment(ix(lo), ix(hi - lo + 1));
        seen *= a.scale;
        const T top = seen.maxCoeff();
        seen = (seen - top).exp();
        const T sum = seen.sum();
        seen /= sum;
        row.head(ix(lo)).setZero();
        row.tail(ix(t.keys - hi - 1)).setZero();
        s.lse[u((t.base + t.r0 + r) * a.heads + t.head)] = top + std::log(sum);
      }
      detail::gemm(false, false, t.rows, a.d, t.keys, tile.data(), t.keys, vb, a.kvw, T(0),
                   s.o.data() + (t.base + t.r0) * a.qw + q_col, a.qw);
      flops.forward_attention += 4.0 * static_cast<double>(t.rows * t.keys * a.d);
    });
  }

  // dq, dk, dv (zeroed here) from do_: per tile the probabilities again from the saved log-sum-exps, then
  // dP = dO V^T, dS = P (dP - rowsum(dO O)), dQ = scale dS K, dK += scale dS^T Q, dV += P^T dO.
  void attention_back(const Saved& s, const T* do_, T* dq, T* dk, T* dv) {
    const Dims a = dims();
    const LayerAttention kind = c.attention_at(s.layer);
    std::fill(dk, dk + n * a.kvw, T(0));
    std::fill(dv, dv + n * a.kvw, T(0));
    each_tile(kind, [&](const Tile& t) {
      const i64 kv_col = t.head / a.group * a.d, q_col = t.head * a.d, at = (t.base + t.r0) * a.qw + q_col;
      const i64 k_at = (t.base + t.k0) * a.kvw + kv_col;
      tile.resize(u(t.rows * t.keys)), tile2.resize(u(t.rows * t.keys));
      detail::gemm(false, true, t.rows, t.keys, a.d, s.q.data() + at, a.qw, s.k.data() + k_at, a.kvw, T(0), tile.data(),
                   t.keys);
      detail::gemm(false, true, t.rows, t.keys, a.d, do_ + at, a.qw, s.v.data() + k_at, a.kvw, T(0), tile2.data(),
                   t.keys);
      for (i64 r = 0; r < t.rows; ++r) {
        const auto [lo, hi] = visible(kind, t, r);
        Arr<T> prob = arr(tile.data() + r * t.keys, t.keys), dp = arr(tile2.data() + r * t.keys, t.keys);
        const T lse = s.lse[u((t.base + t.r0 + r) * a.heads + t.head)];
        const T delta = (arr(do_ + at + r * a.qw, a.d) * arr(s.o.data() + at + r * a.qw, a.d)).sum();
        auto seen = prob.segment(ix(lo), ix(hi - lo + 1));
        seen = (seen * a.scale - lse).exp();
        prob.head(ix(lo)).setZero();
        prob.tail(ix(t.keys - hi - 1)).setZero();
        dp = prob * (dp - delta) * a.scale;  // the scores' gradient, times the scale
      }
      detail::gemm(false, false, t.rows, a.d, t.keys, tile2.data(), t.keys, s.k.data() + k_at, a.kvw, T(0), dq + at,
                   a.qw);
      detail::gemm(true, false, t.keys, a.d, t.rows, tile2.data(), t.keys, s.q.data() + at, a.qw, T(1), dk + k_at,
                   a.kvw);
      detail::gemm(true, false, t.keys, a.d, t.rows, tile.data(), t.keys, do_ + at, a.qw, T(1), dv + k_at, a.kvw);
      flops.backward_attention += 10.0 * static_cast<double>(t.rows * t.keys * a.d);
    });
  }

  // ---- MoE ----------------------------------------------------------------------------------------------------
  void route(Saved& s, const LayerSlices& l) {
    const auto& m = c.moe;
    const i64 experts = m.num_experts, k = m.top_k;
    s.scores.resize(u(n * experts));
    fwd(s.xn2.data(), n, l.router, experts, h, s.scores.data());
    for (i64 t = 0; t < n; ++t) {
      Arr<T> r = arr(s.scores.data() + t * experts, experts);
      if (m.router_score == RouterScore::softmax) {
        r = (r - r.maxCoeff()).exp();
        r /= r.sum();
      } else {
        r = (T(1) + (-r).exp()).inverse();
      }
    }
    s.chosen.resize(u(n * k)), s.mix.resize(u(n * k));
    std::vector<i64> order(u(experts));
    for (i64 t = 0; t < n; ++t) {
      const T* r = s.scores.data() + t * experts;
      i64* out = s.chosen.data() + t * k;
      if (balanced) {
        for (i64 j = 0; j < k; ++j) out[j] = (t * k + j) % experts;
      } else {
        std::iota(order.begin(), order.end(), i64{0});
        std::partial_sort(order.begin(), order.begin() + k, order.end(),
                          [&](i64 x1, i64 x2) { return r[x1] > r[x2] || (r[x1] == r[x2] && x1 < x2); });
        std::copy(order.begin(), order.begin() + k, out);
      }
      T sum = 0;
      for (i64 j = 0; j < k; ++j) sum += r[out[j]];
      for (i64 j = 0; j < k; ++j) s.mix[u(t * k + j)] = r[out[j]] / sum;
    }
    s.count.assign(u(experts), 0), s.start.assign(u(experts) + 1, 0);
    for (const i64 e : s.chosen) ++s.count[u(e)];
    std::partial_sum(s.count.begin(), s.count.end(), s.start.begin() + 1);
    s.slots.resize(s.chosen.size());
    std::vector<i64> next(s.start.begin(), s.start.end() - 1);
    for (std::size_t i = 0; i < s.chosen.size(); ++i) s.slots[u(next[u(s.chosen[i])]++)] = static_cast<i64>(i);
  }

  void moe(Saved& s, const LayerSlices& l, T* out) {
    const auto& m = c.moe;
    const i64 k = m.top_k, f = m.expert_width, rows = n * k;
    route(s, l);
    if (expert_tokens.empty()) expert_tokens = s.count;
    s.perm_in.resize(u(rows * h)), s.eg.resize(u(rows * f)), s.eu.resize(u(rows * f)), s.eh.resize(u(rows * f));
    s.ey.resize(u(rows * h));
    for (i64 r = 0; r < rows; ++r) std::copy_n(s.xn2.data() + s.slots[u(r)] / k * h, h, s.perm_in.data() + r * h);
    for (std::size_t e = 0; e < l.experts.size(); ++e) {
      const i64 from = s.start[e], cnt = s.count[e];
      if (cnt == 0) continue;
      ffn(s.perm_in.data() + from * h, cnt, l.experts[e], s.eg.data() + from * f, s.eu.data() + from * f,
          s.eh.data() + from * f, s.ey.data() + from * h);
    }
    std::fill(out, out + n * h, T(0));
    for (i64 r = 0; r < rows; ++r) {
      const i64 slot = s.slots[u(r)];
      const T mix = s.mix[u(slot)];
      T* o = out + slot / k * h;
      const T* y = s.ey.data() + r * h;
      for (i64 j = 0; j < h; ++j) o[j] += mix * y[j];
    }
    shared(s, l.shared, l.shared_gate, out);
  }

  // Shared experts (or a dense layer's FFN: one, ungated) on every token, added to out.
  void shared(Saved& s, const std::vector<FfnSlices>& ffns, Slice gate, T* out) {
    if (ffns.empty()) return;
    s.sg.resize(ffns.size()), s.su.resize(ffns.size()), s.sh.resize(ffns.size());
    s.shared_sum.assign(u(n * h), T(0));
    t1.resize(u(n * h));
    for (std::size_t i = 0; i < ffns.size(); ++i) {
      const i64 f = ffns[i].width;
      s.sg[i].resize(u(n * f)), s.su[i].resize(u(n * f)), s.sh[i].resize(u(n * f));
      ffn(s.xn2.data(), n, ffns[i], s.sg[i].data(), s.su[i].data(), s.sh[i].data(), t1.data());
      for (i64 j = 0; j < n * h; ++j) s.shared_sum[u(j)] += t1[u(j)];
    }
    if (gate.size > 0) {
      s.gate.resize(u(n));
      fwd(s.xn2.data(), n, gate, 1, h, s.gate.data());
      for (T& v : s.gate) v = sigmoid(v);
    }
    for (i64 t = 0; t < n; ++t) {
      const T gt = gate.size > 0 ? s.gate[u(t)] : T(1);
      for (i64 j = 0; j < h; ++j) out[t * h + j] += gt * s.shared_sum[u(t * h + j)];
    }
  }

  // dxn (+)= the MoE's input gradient from dout.
  void moe_back(const Saved& s, const LayerSlices& l, const T* dout, T* dxn) {
    const auto& m = c.moe;
    const i64 k = m.top_k, experts = m.num_experts, rows = n * k;
    shared_back(s, l.shared, l.shared_gate, dout, dxn);
    // The experts' output gradients (mix x dout) and the mixing weights' (dout . y), in slot order.
    t2.resize(u(rows * h)), t3.resize(u(rows * h));
    std::vector<T>& dmix = bk.dmix;
    dmix.resize(u(rows));
    for (i64 r = 0; r < rows; ++r) {
      const i64 slot = s.slots[u(r)];
      const T* d = dout + slot / k * h;
      const T* y = s.ey.data() + r * h;
      T* dy = t2.data() + r * h;
      T dot = 0;
      for (i64 j = 0; j < h; ++j) dy[j] = s.mix[u(slot)] * d[j], dot += d[j] * y[j];
      dmix[u(slot)] = dot;
    }
    const i64 f = m.expert_width;
    for (std::size_t e = 0; e < l.experts.size(); ++e) {
      const i64 from = s.start[e], cnt = s.count[e];
      if (cnt == 0) continue;
      ffn_back(s.perm_in.data() + from * h, cnt, l.experts[e], s.eg.data() + from * f, s.eu.data() + from * f,
               s.eh.data() + from * f, t2.data() + from * h, t3.data() + from * h);
    }
    for (i64 r = 0; r < rows; ++r) {  // unpermute: each slot's input gradient back to its token
      T* d = dxn + s.slots[u(r)] / k * h;
      const T* di = t3.data() + r * h;
      for (i64 j = 0; j < h; ++j) d[j] += di[j];
    }
    // mix_j = c_j / sum_i c_i over the chosen scores c; then the scores' own function of the logits.
    t4.assign(u(n * experts), T(0));
    for (i64 t = 0; t < n; ++t) {
      const T* pr = s.scores.data() + t * experts;
      const i64* ch = s.chosen.data() + t * k;
      T sum = 0, weighted = 0;
      for (i64 j = 0; j < k; ++j) sum += pr[ch[j]], weighted += dmix[u(t * k + j)] * s.mix[u(t * k + j)];
      T* dl = t4.data() + t * experts;
      T pdot = 0;  // sum over chosen of dc_j p_j (softmax)
      for (i64 j = 0; j < k; ++j) {
        const T dc = (dmix[u(t * k + j)] - weighted) / sum;
        dl[ch[j]] += dc;
        pdot += dc * pr[ch[j]];
      }
      for (i64 e = 0; e < experts; ++e)
        dl[e] = m.router_score == RouterScore::softmax ? pr[e] * (dl[e] - pdot) : dl[e] * pr[e] * (T(1) - pr[e]);
    }
    bwd(s.xn2.data(), t4.data(), n, l.router, experts, h, dxn, T(1));
  }

  void shared_back(const Saved& s, const std::vector<FfnSlices>& ffns, Slice gate, const T* dout, T* dxn) {
    if (ffns.empty()) return;
    const T* dy = dout;
    if (gate.size > 0) {
      t2.resize(u(n * h));
      std::vector<T>& dgl = bk.dgl;
      dgl.resize(u(n));
      for (i64 t = 0; t < n; ++t) {
        const T gt = s.gate[u(t)];
        T dot = 0;
        for (i64 j = 0; j < h; ++j)
          dot += dout[t * h + j] * s.shared_sum[u(t * h + j)], t2[u(t * h + j)] = gt * dout[t * h + j];
        dgl[u(t)] = dot * gt * (T(1) - gt);
      }
      bwd(s.xn2.data(), dgl.data(), n, gate, 1, h, dxn, T(1));
      dy = t2.data();
    }
    t3.resize(u(n * h));
    for (std::size_t i = 0; i < ffns.size(); ++i) {
      ffn_back(s.xn2.data(), n, ffns[i], s.sg[i].data(), s.su[i].data(), s.sh[i].data(), dy, t3.data());
      for (i64 j = 0; j < n * h; ++j) dxn[j] += t3[u(j)];
    }
  }

  // ---- the step -----------------------------------------------------------------------------------------------
  // The forward of the rows of `ids` (n of them) to the logits in `probs`: embedding, every visit, final norm, head.
  // `attend(s, visit)` runs the attention core of a visit into s.o from its s.q, s.k, s.v.
  template <class Attend>
  void to_logits(const std::vector<i64>& ids, Attend&& attend) {
    const Dims a = dims();
    resid.resize(u(n * h));
    for (i64 t = 0; t < n; ++t) std::copy_n(p.data() + emb.offset + ids[u(t)] * h, h, resid.data() + t * h);
    for (std::size_t visit = 0; visit < saved.size(); ++visit) {
      Saved& s = saved[visit];
      const LayerSlices& l = layers[u(s.layer)];
      s.x_in = resid;
      s.xn1.resize(u(n * h)), s.q.resize(u(n * a.qw)), s.k.resize(u(n * a.kvw)), s.v.resize(u(n * a.kvw));
      norm(resid.data(), l.norm1, s.xn1.data(), s.rstd1);
      fwd(s.xn1.data(), n, l.wq, a.qw, h, s.q.data());
      fwd(s.xn1.data(), n, l.wk, a.kvw, h, s.k.data());
      fwd(s.xn1.data(), n, l.wv, a.kvw, h, s.v.data());
      attend(s, visit);
      t1.resize(u(n * h));
      fwd(s.o.data(), n, l.wo, h, a.qw, t1.data());
      arr(resid.data(), n * h) += s.scale * arr(static_cast<const T*>(t1.data()), n * h);
      s.x_mid = resid;
      s.xn2.resize(u(n * h));
      norm(resid.data(), l.norm2, s.xn2.data(), s.rstd2);
      t2.assign(u(n * h), T(0));
      if (c.is_moe_layer(s.layer))
        moe(s, l, t2.data());
      else
        shared(s, {l.dense}, {}, t2.data());
      arr(resid.data(), n * h) += s.scale * arr(static_cast<const T*>(t2.data()), n * h);
    }
    x_final = resid;
    xf.resize(u(n * h)), probs.resize(u(n * vocab));
    norm(resid.data(), fnorm, xf.data(), rstd_f);
    if (c.tie_embeddings)
      mm(false, true, n, vocab, h, xf.data(), w(emb), T(0), probs.data(), flops.forward_gemm);
    else
      fwd(xf.data(), n, head_w, vocab, h, probs.data());
  }

  T forward() {
    flops = {};
    expert_tokens.clear();
    to_logits(tokens, [&](Saved& s, std::size_t) { attention(s); });
    double loss = 0;
    for (i64 t = 0; t < n; ++t) {
      Arr<T> r = arr(probs.data() + t * vocab, vocab);
      r = (r - r.maxCoeff()).exp();
      r /= r.sum();
      loss -= std::log(static_cast<double>(r(ix(targets[u(t)]))));
    }
    return static_cast<T>(loss / static_cast<double>(n));
  }

  // ---- decoding -----------------------------------------------------------------------------------------------
  // Each sequence's cache, per visit: the K and V rows of its first context - 1 tokens from the last forward, and
  // room for the token decoded, [sequence][context][kv width].
  struct Cache {
    std::vector<T> k, v;
  };
  std::vector<Cache> caches;
  std::vector<i64> decode_ids;

  void prepare_decode() {
    const Dims a = dims();
    const i64 ctx = plan.context, seqs = plan.sequences;
    caches.assign(saved.size(), {});
    for (std::size_t visit = 0; visit < saved.size(); ++visit) {
      Cache& cache = caches[visit];
      cache.k.assign(u(seqs * ctx * a.kvw), T(0)), cache.v.assign(u(seqs * ctx * a.kvw), T(0));
      for (i64 b = 0; b < seqs; ++b) {
        std::copy_n(saved[visit].k.data() + b * ctx * a.kvw, (ctx - 1) * a.kvw, cache.k.data() + b * ctx * a.kvw);
        std::copy_n(saved[visit].v.data() + b * ctx * a.kvw, (ctx - 1) * a.kvw, cache.v.data() + b * ctx * a.kvw);
      }
    }
    decode_ids.clear();
    for (i64 b = 0; b < seqs; ++b) decode_ids.push_back(tokens[u(b * ctx + ctx - 1)]);
  }

  // The group's query heads of sequence b against the keys its last token sees in the cache.
  void attention_decode(Saved& s, Cache& cache) {
    const Dims a = dims();
    const i64 ctx = plan.context, last = ctx - 1;
    const i64 lo = first_key(c.attention, c.attention_at(s.layer), last), keys = last - lo + 1;
    s.o.resize(u(n * a.qw));
    tile.resize(u(a.group * keys));
    for (i64 b = 0; b < n; ++b) {
      // The decoded token's own K and V join the cache.
      std::copy_n(s.k.data() + b * a.kvw, a.kvw, cache.k.data() + (b * ctx + last) * a.kvw);
      std::copy_n(s.v.data() + b * a.kvw, a.kvw, cache.v.data() + (b * ctx + last) * a.kvw);
      for (i64 kv = 0; kv < c.attention.num_kv_heads; ++kv) {
        const i64 q_at = b * a.qw + kv * a.group * a.d, k_at = (b * ctx + lo) * a.kvw + kv * a.d;
        detail::gemm(false, true, a.group, keys, a.d, s.q.data() + q_at, a.d, cache.k.data() + k_at, a.kvw, T(0),
                     tile.data(), keys);
        for (i64 r = 0; r < a.group; ++r) {
          Arr<T> row = arr(tile.data() + r * keys, keys);
          row *= a.scale;
          row = (row - row.maxCoeff()).exp();
          row /= row.sum();
        }
        detail::gemm(false, false, a.group, a.d, keys, tile.data(), keys, cache.v.data() + k_at, a.kvw, T(0),
                     s.o.data() + q_at, a.d);
        flops.forward_attention += 4.0 * static_cast<double>(a.group * keys * a.d);
      }
    }
  }

  // One new token for every sequence, each against its cache; its logits in probs, its final hidden rows in xf.
  void decode() {
    flops = {};
    expert_tokens.clear();
    const i64 rows = n;
    n = plan.sequences;
    to_logits(decode_ids, [&](Saved& s, std::size_t visit) { attention_decode(s, caches[visit]); });
    n = rows;
  }

  void backward() {
    flops.backward_gemm = flops.backward_attention = 0;
    std::fill(g.begin(), g.end(), T(0));
    const Dims a = dims();
    // The loss's gradient into the logits, in place: (softmax - one-hot) / tokens.
    for (i64 t = 0; t < n; ++t) probs[u(t * vocab + targets[u(t)])] -= T(1);
    for (T& v : probs) v /= static_cast<T>(n);
    // The backward's buffers live with the model: repeated steps reuse their memory.
    std::vector<T>&dxf = bk.dxf, &dx = bk.dx, &dout = bk.dout, &dxn = bk.dxn, &dq = bk.dq, &dk = bk.dk, &dv = bk.dv,
    &dov = bk.dov;
    dxf.resize(u(n * h)), dx.assign(u(n * h), T(0)), dout.resize(u(n * h)), dxn.resize(u(n * h));
    dq.resize(u(n * a.qw)), dk.resize(u(n * a.kvw)), dv.resize(u(n * a.kvw)), dov.resize(u(n * a.qw));
    if (c.tie_embeddings) {
      mm(false, false, n, h, vocab, probs.data(), w(emb), T(0), dxf.data(), flops.backward_gemm);
      mm(true, false, vocab, h, n, probs.data(), xf.data(), T(1), dw(emb), flops.backward_gemm);
    } else {
      bwd(xf.data(), probs.data(), n, head_w, vocab, h, dxf.data(), T(0));
    }
    norm_back(dxf.data(), x_final.data(), rstd_f, fnorm, dx.data());
    for (auto it = saved.rbegin(); it != saved.rend(); ++it) {
      const Saved& s = *it;
      const LayerSlices& l = layers[u(s.layer)];
      arr(dout.data(), n * h) = s.scale * arr(static_cast<const T*>(dx.data()), n * h);
      std::fill(dxn.begin(), dxn.end(), T(0));
      if (c.is_moe_layer(s.layer))
        moe_back(s, l, dout.data(), dxn.data());
      else
        shared_back(s, {l.dense}, {}, dout.data(), dxn.data());
      norm_back(dxn.data(), s.x_mid.data(), s.rstd2, l.norm2, dx.data());
      arr(dout.data(), n * h) = s.scale * arr(static_cast<const T*>(dx.data()), n * h);
      bwd(s.o.data(), dout.data(), n, l.wo, h, a.qw, dov.data(), T(0));
      attention_back(s, dov.data(), dq.data(), dk.data(), dv.data());
      bwd(s.xn1.data(), dq.data(), n, l.wq, a.qw, h, dxn.data(), T(0));
      bwd(s.xn1.data(), dk.data(), n, l.wk, a.kvw, h, dxn.data(), T(1));
      bwd(s.xn1.data(), dv.data(), n, l.wv, a.kvw, h, dxn.data(), T(1));
      norm_back(dxn.data(), s.x_in.data(), s.rstd1, l.norm1, dx.data());
    }
    for (i64 t = 0; t < n; ++t) {
      T* d = g.data() + emb.offset + tokens[u(t)] * h;
      for (i64 j = 0; j < h; ++j) d[j] += dx[u(t * h + j)];
    }
  }

  void update() {
    ++adam_steps;
    adamw_update(p.data(), m1.data(), m2.data(), g.data(), static_cast<i64>(p.size()), adam_steps);
  }
};

template <class T>
StepModel<T>::StepModel(const LayerPlan& plan, std::uint64_t seed, bool balanced)
    : impl_(std::make_unique<Impl>(plan)) {
  impl_->balanced = balanced;
  impl_->build(seed);
}
template <class T>
StepModel<T>::~StepModel() = default;
template <class T>
T StepModel<T>::forward() {
  const detail::SingleThreadedBlas one_thread;
  return impl_->forward();
}
template <class T>
void StepModel<T>::backward() {
  const detail::SingleThreadedBlas one_thread;
  impl_->backward();
}
template <class T>
void StepModel<T>::update() {
  impl_->update();
}
template <class T>
double StepModel<T>::time_attention(std::int64_t repetitions) {
  const detail::SingleThreadedBlas one_thread;
  Impl& m = *impl_;
  auto& s = m.saved.front();
  const auto a = m.dims();
  std::vector<T> dq(u(m.n * a.qw)), dk(u(m.n * a.kvw)), dv(u(m.n * a.kvw));
  const std::vector<T> grad = s.o;
  std::vector<double> times;
  for (i64 r = 0; r <= repetitions; ++r) {  // the first run warms up
    const auto t0 = std::chrono::steady_clock::now();
    m.attention(s);
    m.attention_back(s, grad.data(), dq.data(), dk.data(), dv.data());
    if (r > 0) times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return detail::median(times);
}

template <class T>
void StepModel<T>::prepare_decode() {
  impl_->prepare_decode();
}
template <class T>
void StepModel<T>::decode() {
  const detail::SingleThreadedBlas one_thread;
  impl_->decode();
}
template <class T>
const std::vector<T>& StepModel<T>::final_hidden() const {
  return impl_->xf;
}
template <class T>
std::vector<T>& StepModel<T>::params() {
  return impl_->p;
}
template <class T>
const std::vector<T>& StepModel<T>::grads() const {
  return impl_->g;
}
template <class T>
const std::vector<LayerSlices>& StepModel<T>::layers() const {
  return impl_->layers;
}
template <class T>
Slice StepModel<T>::embedding() const {
  return impl_->emb;
}
template <class T>
Slice StepModel<T>::head() const {
  return impl_->head_w;
}
template <class T>
Slice StepModel<T>::final_norm() const {
  return impl_->fnorm;
}
template <class T>
const StepFlops& StepModel<T>::flops() const {
  return impl_->flops;
}
template <class T>
const std::vector<std::int64_t>& StepModel<T>::expert_tokens() const {
  return impl_->expert_tokens;
}

template class StepModel<float>;
template class StepModel<double>;

}  // namespace smelt::bench_detail
