// The trained model of step_model.hpp: forward with what the backward needs
// kept per visit, the backward in reverse visit order, and AdamW. Buffers live
// as long as the model, so repeated steps reuse their memory as a framework's
// caching allocator would.
#include "step/model.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include <Eigen/Dense>

#include "cpu/array_view.hpp"
#include "cpu/attention.hpp"
#include "cpu/blas.hpp"
#include "cpu/pointwise.hpp"
#include "cpu/routing.hpp"

namespace smelt::step_detail {

using namespace cpu;  // NOLINT: the cpu kernels this model runs (routing, attention, norms, activations, AdamW)

namespace {

using i64 = std::int64_t;
using Eigen::Index;

std::size_t u(i64 v) { return static_cast<std::size_t>(v); }
Index ix(i64 v) { return static_cast<Index>(v); }

template <class T>
T sigmoid(T x) {
  return T(1) / (T(1) + std::exp(-x));
}

}  // namespace

template <class T>
struct StepModel<T>::Impl {
  LayerPlan plan;
  const ModelConfig& c = plan.config;
  i64 n = 0, h = 0, vocab = 0;
  bool balanced = false;
  std::mt19937_64 rng;
  StepParameters<T> store;
  std::vector<T>&p = store.values, &g = store.grads;
  i64 adam_steps = 0;
  const std::vector<LayerSlices>& layers = store.layers;
  const Slice emb = store.embedding, head_w = store.head, fnorm = store.final_norm;
  std::vector<i64> tokens, targets;
  std::vector<T> resid, x_final, rstd_f, xf, probs;
  std::vector<T> t1, t2, t3, t4, t5, t6, t7;  // scratch
  struct Backward {
    std::vector<T> dxf, dx, dout, dxn, dq, dk, dv, dov, dmix, dgl;
  } bk;
  StepFlops flops;
  std::vector<i64> expert_tokens;

  Impl(const LayerPlan& pl, std::uint64_t seed, bool balance)
      : plan(pl), balanced(balance), rng(seed ^ 0x5DEECE66DULL), store(plan, seed, rng) {
    build();
  }

  // Per visit: what its backward reads.
  struct Saved {
    i64 layer = 0;
    T scale = 1;
    std::vector<T> x_in, rstd1, xn1, q, k, v, o, lse, x_mid, rstd2, xn2;
    // MoE: router probabilities, choices, mixing weights, the permutation; the
    // experts' inputs, hidden activations and outputs in slot (expert) order.
    std::vector<T> scores, perm_in, eg, eu, eh, ey;
    TokenRoutes<T> routes;
    // Shared experts (or the dense FFN, in entry 0): hidden activations on every token.
    std::vector<std::vector<T>> sg, su, sh;
    std::vector<T> shared_sum, gate;
  };
  std::vector<Saved> saved;

  T* w(Slice s) { return p.data() + s.offset; }
  T* dw(Slice s) { return g.data() + s.offset; }

  // The tokens and their targets (from the generator after the parameters), and each visit's residual scale.
  void build() {
    n = plan.tokens, h = c.hidden_size, vocab = c.vocab_size;
    std::uniform_int_distribution<i64> token(0, vocab - 1);
    for (i64 t = 0; t < n; ++t) tokens.push_back(token(rng)), targets.push_back(token(rng));
    saved.resize(plan.visits.size());
    for (std::size_t i = 0; i < saved.size(); ++i) {
      const i64 layer = plan.visits[i];
      saved[i].layer = layer;
      saved[i].scale = static_cast<T>(c.residual_scale_at(layer));
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
  static ArrayView<T> arr(T* v, i64 size) { return ArrayView<T>(v, ix(size)); }
  static ConstArrayView<T> arr(const T* v, i64 size) { return ConstArrayView<T>(v, ix(size)); }

  // ---- RMSNorm (cpu/pointwise.cpp) --------------------------------------------------------------------------
  void norm(const T* in, Slice weight, T* out, std::vector<T>& rstd) {
    rstd.resize(u(n));
    rms_norm(in, static_cast<const T*>(w(weight)), out, rstd.data(), n, h);
  }
  // dx += the input's gradient; the weight's into the gradients.
  void norm_back(const T* dy, const T* in, const std::vector<T>& rstd, Slice weight, T* dx) {
    rms_norm_backward(dy, in, rstd.data(), static_cast<const T*>(w(weight)), dw(weight), dx, n, h);
  }

  // ---- FFN ----------------------------------------------------------------------------------------------------
  bool gated() const { return c.ffn.type == FfnType::gated; }
  void ffn(const T* in, i64 rows, const FfnSlices& f, T* gg, T* uu, T* hh, T* y) {
    fwd(in, rows, f.up, f.width, h, uu);
    if (gated()) fwd(in, rows, f.gate, f.width, h, gg);
    ffn_activation(gated(), static_cast<const T*>(gg), static_cast<const T*>(uu), hh, rows * f.width);
    fwd(hh, rows, f.down, h, f.width, y);
  }
  // din = the input's gradient (overwritten); weight gradients added.
  void ffn_back(const T* in, i64 rows, const FfnSlices& f, const T* gg, const T* uu, const T* hh, const T* dy, T* din) {
    const i64 size = rows * f.width;
    t5.resize(u(size)), t6.resize(u(size)), t7.resize(u(size));
    bwd(hh, dy, rows, f.down, h, f.width, t5.data(), T(0));
    ffn_activation_backward(gated(), gg, uu, t5.data(), t7.data(), t6.data(), size);  // t5: up's gradient, t7: gate's
    if (gated()) {
      bwd(in, t7.data(), rows, f.gate, f.width, h, din, T(0));
      bwd(in, t5.data(), rows, f.up, f.width, h, din, T(1));
    } else {
      bwd(in, t5.data(), rows, f.up, f.width, h, din, T(0));
    }
  }

  // ---- attention (cpu/attention.cpp) ------------------------------------------------------------------------
  struct Dims {
    i64 qw, kvw, heads;
  };
  Dims dims() const {
    const auto& a = c.attention;
    return {a.num_heads * a.head_dim, a.num_kv_heads * a.head_dim, a.num_heads};
  }
  TiledAttention<T> tiled{c.attention, plan.sequences, plan.context};

  void attention(Saved& s) {
    const Dims a = dims();
    s.o.resize(u(n * a.qw)), s.lse.resize(u(n * a.heads));
    flops.forward_attention +=
        tiled.forward(c.attention_at(s.layer), s.q.data(), s.k.data(), s.v.data(), s.o.data(), s.lse.data());
  }
  void attention_back(const Saved& s, const T* do_, T* dq, T* dk, T* dv) {
    flops.backward_attention += tiled.backward(c.attention_at(s.layer), s.q.data(), s.k.data(), s.v.data(), s.o.data(),
                                               s.lse.data(), do_, dq, dk, dv);
  }

  // ---- MoE ----------------------------------------------------------------------------------------------------
  void route(Saved& s, const LayerSlices& l) {
    const auto& m = c.moe;
    s.scores.resize(u(n * m.num_experts));
    fwd(s.xn2.data(), n, l.router, m.num_experts, h, s.scores.data());
    route_tokens(s.scores.data(), n, m.num_experts, m.top_k, m.router_score == RouterScore::softmax, balanced,
                 s.routes);
  }

  void moe(Saved& s, const LayerSlices& l, T* out) {
    const auto& m = c.moe;
    const i64 k = m.top_k, f = m.expert_width, rows = n * k;
    route(s, l);
    if (expert_tokens.empty()) expert_tokens = s.routes.count;
    s.perm_in.resize(u(rows * h)), s.eg.resize(u(rows * f)), s.eu.resize(u(rows * f)), s.eh.resize(u(rows * f));
    s.ey.resize(u(rows * h));
    for (i64 r = 0; r < rows; ++r)
      std::copy_n(s.xn2.data() + s.routes.slots[u(r)] / k * h, h, s.perm_in.data() + r * h);
    for (std::size_t e = 0; e < l.experts.size(); ++e) {
      const i64 from = s.routes.start[e], cnt = s.routes.count[e];
      if (cnt == 0) continue;
      ffn(s.perm_in.data() + from * h, cnt, l.experts[e], s.eg.data() + from * f, s.eu.data() + from * f,
          s.eh.data() + from * f, s.ey.data() + from * h);
    }
    std::fill(out, out + n * h, T(0));
    for (i64 r = 0; r < rows; ++r) {
      const i64 slot = s.routes.slots[u(r)];
      const T mix = s.routes.mix[u(slot)];
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
      const i64 slot = s.routes.slots[u(r)];
      const T* d = dout + slot / k * h;
      const T* y = s.ey.data() + r * h;
      T* dy = t2.data() + r * h;
      T dot = 0;
      for (i64 j = 0; j < h; ++j) dy[j] = s.routes.mix[u(slot)] * d[j], dot += d[j] * y[j];
      dmix[u(slot)] = dot;
    }
    const i64 f = m.expert_width;
    for (std::size_t e = 0; e < l.experts.size(); ++e) {
      const i64 from = s.routes.start[e], cnt = s.routes.count[e];
      if (cnt == 0) continue;
      ffn_back(s.perm_in.data() + from * h, cnt, l.experts[e], s.eg.data() + from * f, s.eu.data() + from * f,
               s.eh.data() + from * f, t2.data() + from * h, t3.data() + from * h);
    }
    for (i64 r = 0; r < rows; ++r) {  // unpermute: each slot's input gradient back to its token
      T* d = dxn + s.routes.slots[u(r)] / k * h;
      const T* di = t3.data() + r * h;
      for (i64 j = 0; j < h; ++j) d[j] += di[j];
    }
    t4.resize(u(n * experts));
    route_backward(s.scores.data(), s.routes, dmix.data(), n, experts, k, m.router_score == RouterScore::softmax,
                   t4.data());
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
      ArrayView<T> r = arr(probs.data() + t * vocab, vocab);
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

  void attention_decode(Saved& s, Cache& cache) {
    s.o.resize(u(n * dims().qw));
    flops.forward_attention += tiled.decode(c.attention_at(s.layer), s.q.data(), s.k.data(), s.v.data(), cache.k.data(),
                                            cache.v.data(), s.o.data());
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
    adamw_update(p.data(), store.m.data(), store.v.data(), g.data(), static_cast<i64>(p.size()), adam_steps);
  }
};

template <class T>
StepModel<T>::StepModel(const LayerPlan& plan, std::uint64_t seed, bool balanced)
    : impl_(std::make_unique<Impl>(plan, seed, balanced)) {}
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

}  // namespace smelt::step_detail
