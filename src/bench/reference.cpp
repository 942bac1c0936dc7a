// The reference block of bench_reference.hpp in Eigen, in float or double, its
// weight products through OpenBLAS (cpu/blas.hpp). It performs only the
// products the counting contract counts (each causal query against exactly the
// keys it may see, each expert on exactly its tokens), so adding 2 m n k per
// product gives the executed FLOPs by construction: every weight product goes
// through Runner::times, which counts it.
#include <algorithm>
#include <cmath>
#include <deque>
#include <numeric>
#include <stdexcept>
#include <type_traits>

#include <Eigen/Dense>

#include "cpu/attention_keys.hpp"
#include "cpu/blas.hpp"
#include "cpu/routing.hpp"
#include "smelt/bench_reference.hpp"

namespace smelt {
namespace {

using i64 = std::int64_t;
using Eigen::Index;
template <class T>
using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using Vec = Eigen::Matrix<T, Eigen::Dynamic, 1>;

Index ix(i64 v) { return static_cast<Index>(v); }
std::size_t u(i64 v) { return static_cast<std::size_t>(v); }

struct Flops {
  i64 all = 0;
  i64 gemm = 0;
  void weights(i64 m, i64 n, i64 k) { gemm += 2 * m * n * k, all += 2 * m * n * k; }
};

// The weights in T: float runs read the float32 vectors in place; double runs
// convert once per call, so looped layers are not converted per visit.
template <class T>
struct Ffn {
  const T* gate = nullptr;
  const T* up = nullptr;
  const T* down = nullptr;
  i64 width = 0;
};
template <class T>
struct Layer {
  const T *wq = nullptr, *wk = nullptr, *wv = nullptr, *wo = nullptr, *router = nullptr, *shared_gate = nullptr;
  std::vector<Ffn<T>> experts, shared;
  Ffn<T> dense;
};

template <class T>
class Converter {
 public:
  const T* operator()(const std::vector<float>& v) {
    if (v.empty()) return nullptr;
    if constexpr (std::is_same_v<T, float>) {
      return v.data();
    } else {
      owned_.emplace_back(v.begin(), v.end());
      return owned_.back().data();
    }
  }
  Ffn<T> ffn(const LayerWeights::Ffn& f, i64 width) { return {(*this)(f.gate), (*this)(f.up), (*this)(f.down), width}; }

 private:
  std::deque<std::vector<T>> owned_;  // a deque keeps the addresses handed out stable
};

using cpu::first_key;

template <class T>
class Runner {
 public:
  Runner(const LayerPlan& plan, bool balanced, const Routing* replay)
      : plan_(plan), c_(plan.config), h_(c_.hidden_size), balanced_(balanced), replay_(replay) {}

  void visit(Mat<T>& x, const Layer<T>& w, i64 layer, ReferenceRun& run) {
    const T s = static_cast<T>(c_.residual_scale_at(layer));
    if (!plan_.moe_only) x.noalias() += s * attention(x, w, c_.attention_at(layer));
    x.noalias() += s * (c_.is_moe_layer(layer) ? moe(x, w, run) : ffn(x, w.dense));
  }

  Flops flops;

 private:
  // a (m x k) times the row-major k x n weight w, counted as 2 m n k.
  Mat<T> times(const Mat<T>& a, const T* w, i64 n) {
    const i64 m = a.rows(), k = a.cols();
    Mat<T> c(ix(m), ix(n));
    detail::gemm(m, n, k, a.data(), w, c.data());
    flops.weights(m, n, k);
    return c;
  }

  Mat<T> attention(const Mat<T>& x, const Layer<T>& w, LayerAttention kind) {
    const auto& a = c_.attention;
    const i64 n = plan_.tokens, d = a.head_dim, q = a.num_heads * d, kv = a.num_kv_heads * d;
    const Mat<T> qm = times(x, w.wq, q), km = times(x, w.wk, kv), vm = times(x, w.wv, kv);
    Mat<T> heads(ix(n), ix(q));
    Vec<T> p(ix(plan_.context));
    const T scale = static_cast<T>(1.0 / std::sqrt(static_cast<double>(d)));
    const i64 group = a.num_heads / a.num_kv_heads;
    for (i64 seq = 0; seq < plan_.sequences; ++seq) {
      const i64 base = seq * plan_.context;
      for (i64 head = 0; head < a.num_heads; ++head) {
        const i64 kv_col = head / group * d;
        for (i64 i = 0; i < plan_.context; ++i) {
          const i64 lo = first_key(a, kind, i), keys = i - lo + 1;
          auto s = p.head(ix(keys));
          s.noalias() = km.block(ix(base + lo), ix(kv_col), ix(keys), ix(d)) *
                        qm.row(ix(base + i)).segment(ix(head * d), ix(d)).transpose();
          s *= scale;
          s = (s.array() - s.maxCoeff()).exp().matrix();
          s /= s.sum();
          heads.row(ix(base + i)).segment(ix(head * d), ix(d)).noalias() =
              s.transpose() * vm.block(ix(base + lo), ix(kv_col), ix(keys), ix(d));
          flops.all += 4 * keys * d;  // 2 d per key for the score, 2 d for the value
        }
      }
    }
    return times(heads, w.wo, h_);
  }

  // SwiGLU (or gelu_tanh for plain FFNs) over the rows of `in`.
  Mat<T> ffn(const Mat<T>& in, const Ffn<T>& f) {
    Mat<T> up = times(in, f.up, f.width);
    if (c_.ffn.type == FfnType::gated) {
      const Mat<T> g = times(in, f.gate, f.width);
      up.array() *= g.array() / (static_cast<T>(1) + (-g.array()).exp());
    } else {
      const T k0 = static_cast<T>(0.7978845608028654), k1 = static_cast<T>(0.044715);  // sqrt(2/pi)
      up.array() =
          static_cast<T>(0.5) * up.array() * (static_cast<T>(1) + (k0 * (up.array() + k1 * up.array().cube())).tanh());
    }
    return times(up, f.down, h_);
  }

  // The routing to replay for the MoE visit `moe_visit`, if the run replays one.
  const std::vector<i64>* replayed(i64 moe_visit) const {
    if (!replay_) return nullptr;
    const i64 n = plan_.tokens, k = c_.moe.top_k;
    if (moe_visit >= static_cast<i64>(replay_->experts.size()) || replay_->experts[u(moe_visit)].size() != u(n * k))
      throw std::invalid_argument("reference_forward: the routing to replay does not match the plan");
    return &replay_->experts[u(moe_visit)];
  }

  Mat<T> moe(const Mat<T>& x, const Layer<T>& w, ReferenceRun& run) {
    const auto& m = c_.moe;
    const i64 n = plan_.tokens, k = m.top_k, experts = m.num_experts;
    // The router's scores, the top-k choice, the mixing weights (the chosen scores over their sum) and the
    // token permutation grouped by expert (slot / k is the token): cpu/routing.cpp, as the training step routes.
    Mat<T> scores = times(x, w.router, experts);
    cpu::TokenRoutes<T> routes;
    cpu::route_tokens(scores.data(), n, experts, k, m.router_score == RouterScore::softmax, balanced_, routes,
                      replayed(static_cast<i64>(run.routing.experts.size())));
    const std::vector<i64>& count = routes.count;
    const std::vector<i64>& start = routes.start;
    const std::vector<i64>& slots = routes.slots;
    const std::vector<T>& mix = routes.mix;

    Mat<T> out = Mat<T>::Zero(ix(n), ix(h_));
    for (std::size_t e = 0; e < u(experts); ++e) {
      if (count[e] == 0) continue;
      Mat<T> in(ix(count[e]), ix(h_));
      for (i64 r = 0; r < count[e]; ++r) in.row(ix(r)) = x.row(ix(slots[u(start[e] + r)] / k));
      const Mat<T> y = ffn(in, w.experts[e]);
      for (i64 r = 0; r < count[e]; ++r) {
        const i64 slot = slots[u(start[e] + r)];
        out.row(ix(slot / k)) += mix[u(slot)] * y.row(ix(r));
      }
    }
    if (!w.shared.empty()) {
      Mat<T> shared = Mat<T>::Zero(ix(n), ix(h_));
      for (const Ffn<T>& f : w.shared) shared += ffn(x, f);
      if (w.shared_gate) {
        const Mat<T> g = times(x, w.shared_gate, 1);
        shared.array().colwise() *= static_cast<T>(1) / (static_cast<T>(1) + (-g.col(0).array()).exp());
      }
      out += shared;
    }
    if (run.expert_tokens.empty()) run.expert_tokens = count;
    run.routing.experts.push_back(std::move(routes.chosen));
    return out;
  }

  const LayerPlan& plan_;
  const ModelConfig& c_;
  const i64 h_;
  const bool balanced_;
  const Routing* replay_;
};

template <class T>
ReferenceRun forward(const LayerPlan& plan, const std::vector<float>& input, const std::vector<LayerWeights>& weights,
                     bool balanced, const Routing* replay) {
  const ModelConfig& c = plan.config;
  if (input.size() != u(plan.tokens * c.hidden_size) || weights.size() != u(c.num_layers))
    throw std::invalid_argument("reference_forward: input or weights do not match the plan");
  Converter<T> convert;
  std::vector<Layer<T>> layers(weights.size());
  for (std::size_t l = 0; l < weights.size(); ++l) {
    const LayerWeights& lw = weights[l];
    Layer<T>& t = layers[l];
    t.wq = convert(lw.wq), t.wk = convert(lw.wk), t.wv = convert(lw.wv), t.wo = convert(lw.wo);
    t.router = convert(lw.router), t.shared_gate = convert(lw.shared_gate);
    for (const auto& f : lw.experts) t.experts.push_back(convert.ffn(f, c.moe.expert_width));
    for (const auto& f : lw.shared) t.shared.push_back(convert.ffn(f, c.moe.shared_width));
    t.dense = convert.ffn(lw.dense, c.ffn.dense_width);
  }
  Mat<T> x = Eigen::Map<const Mat<float>>(input.data(), ix(plan.tokens), ix(c.hidden_size)).template cast<T>();
  const detail::SingleThreadedBlas one_thread;
  Runner<T> runner(plan, balanced, replay);
  ReferenceRun run;
  for (const i64 layer : plan.visits) runner.visit(x, layers[u(layer)], layer, run);
  run.output.assign(x.data(), x.data() + x.size());
  run.accounted_flops = static_cast<double>(runner.flops.all);
  run.accounted_gemm_flops = static_cast<double>(runner.flops.gemm);
  return run;
}

}  // namespace

ReferenceRun reference_forward(const LayerPlan& plan, const std::vector<float>& input,
                               const std::vector<LayerWeights>& weights, const ReferenceOptions& options,
                               const Routing* replay) {
  return options.precision == Precision::float64 ? forward<double>(plan, input, weights, options.balanced, replay)
                                                 : forward<float>(plan, input, weights, options.balanced, replay);
}

ReferenceRun reference_forward(const LayerPlan& plan, const std::vector<float>& input, std::uint64_t seed,
                               const ReferenceOptions& options) {
  std::vector<LayerWeights> weights;
  for (i64 l = 0; l < plan.config.num_layers; ++l) weights.push_back(make_layer_weights(plan, l, seed));
  return reference_forward(plan, input, weights, options);
}

}  // namespace smelt
