// A naive float64 implementation of the benchmark block (bench_reference.hpp),
// written with plain loops and no Eigen, token by token and head by head, to
// check the reference backend against code that shares nothing with it but
// the seeded weights and inputs.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "smelt/bench_weights.hpp"

namespace smelt::test {

class Naive {
 public:
  Naive(const LayerPlan& plan, bool balanced) : plan_(plan), c_(plan.config), balanced_(balanced) {}

  std::vector<double> run(const std::vector<float>& input, std::uint64_t seed) const {
    const std::size_t h = sz(c_.hidden_size);
    std::vector<Row> x;
    for (std::size_t t = 0; t < sz(plan_.tokens); ++t)
      x.emplace_back(input.begin() + static_cast<std::ptrdiff_t>(t * h),
                     input.begin() + static_cast<std::ptrdiff_t>((t + 1) * h));
    for (const std::int64_t layer : plan_.visits) {
      const LayerWeights w = make_layer_weights(plan_, layer, seed);  // redrawn per visit: same seed, same weights
      const double s = c_.residual_scale_at(layer);
      if (!plan_.moe_only) {
        const std::vector<Row> a = attention(x, w, c_.attention_at(layer));
        for (std::size_t t = 0; t < x.size(); ++t)
          for (std::size_t i = 0; i < h; ++i) x[t][i] += s * a[t][i];
      }
      for (std::size_t t = 0; t < x.size(); ++t) {
        const Row y = feed_forward(x[t], t, w, c_.is_moe_layer(layer));
        for (std::size_t i = 0; i < h; ++i) x[t][i] += s * y[i];
      }
    }
    std::vector<double> out;
    for (const Row& r : x) out.insert(out.end(), r.begin(), r.end());
    return out;
  }

 private:
  using Row = std::vector<double>;
  static std::size_t sz(std::int64_t v) { return static_cast<std::size_t>(v); }
  static double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

  // out[j] = sum_i in[i] w[i][j], with w row-major [in.size() x cols].
  static Row times(const Row& in, const std::vector<float>& w, std::size_t cols) {
    Row out(cols, 0.0);
    for (std::size_t i = 0; i < in.size(); ++i)
      for (std::size_t j = 0; j < cols; ++j) out[j] += in[i] * w[i * cols + j];
    return out;
  }

  Row ffn(const Row& x, const LayerWeights::Ffn& f, std::int64_t width) const {
    Row up = times(x, f.up, sz(width));
    if (c_.ffn.type == FfnType::gated) {
      const Row gate = times(x, f.gate, sz(width));
      for (std::size_t i = 0; i < up.size(); ++i) up[i] *= gate[i] * sigmoid(gate[i]);  // silu(gate) * up
    } else {
      for (double& u : up) u = 0.5 * u * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (u + 0.044715 * u * u * u)));
    }
    return times(up, f.down, sz(c_.hidden_size));
  }

  Row feed_forward(const Row& x, std::size_t t, const LayerWeights& w, bool moe) const {
    const auto& m = c_.moe;
    if (!moe) return ffn(x, w.dense, c_.ffn.dense_width);
    const std::size_t experts = sz(m.num_experts), k = sz(m.top_k);
    Row score = times(x, w.router, experts);
    if (m.router_score == RouterScore::softmax) {
      const double top = *std::max_element(score.begin(), score.end());
      double sum = 0;
      for (double& s : score) sum += (s = std::exp(s - top));
      for (double& s : score) s /= sum;
    } else {
      for (double& s : score) s = sigmoid(s);
    }
    std::vector<std::size_t> chosen;
    for (std::size_t j = 0; j < k; ++j) {
      std::size_t best = experts;  // the best not yet chosen; strict > lets the lower index win a tie
      for (std::size_t e = 0; e < experts; ++e)
        if (std::find(chosen.begin(), chosen.end(), e) == chosen.end() && (best == experts || score[e] > score[best]))
          best = e;
      chosen.push_back(balanced_ ? (t * k + j) % experts : best);
    }
    double total = 0;
    for (std::size_t e : chosen) total += score[e];
    Row out(x.size(), 0.0);
    for (std::size_t e : chosen) {
      const Row y = ffn(x, w.experts[e], m.expert_width);
      for (std::size_t i = 0; i < x.size(); ++i) out[i] += score[e] / total * y[i];
    }
    const double gate = m.shared_gate ? sigmoid(times(x, w.shared_gate, 1)[0]) : 1.0;
    for (const auto& f : w.shared) {
      const Row y = ffn(x, f, m.shared_width);
      for (std::size_t i = 0; i < x.size(); ++i) out[i] += gate * y[i];
    }
    return out;
  }

  std::vector<Row> attention(const std::vector<Row>& x, const LayerWeights& w, LayerAttention kind) const {
    const auto& a = c_.attention;
    const std::size_t d = sz(a.head_dim), heads = sz(a.num_heads), group = heads / sz(a.num_kv_heads);
    const std::size_t context = sz(plan_.context), window = sz(a.window), chunk = sz(a.chunk);
    std::vector<Row> qs, ks, vs, out;
    for (const Row& r : x) {
      qs.push_back(times(r, w.wq, heads * d));
      ks.push_back(times(r, w.wk, heads / group * d));
      vs.push_back(times(r, w.wv, heads / group * d));
    }
    for (std::size_t t = 0; t < x.size(); ++t) {
      const std::size_t base = t / context * context, i = t - base;
      Row concat(heads * d, 0.0);
      for (std::size_t hd = 0; hd < heads; ++hd) {
        const std::size_t g = hd / group;
        std::vector<double> p;
        std::vector<std::size_t> keys;
        for (std::size_t j = 0; j <= i; ++j) {
          const bool seen = kind == LayerAttention::full || (kind == LayerAttention::sliding && i - j < window) ||
                            (kind == LayerAttention::chunked && j / chunk == i / chunk);
          if (!seen) continue;
          double dot = 0;
          for (std::size_t c = 0; c < d; ++c) dot += qs[t][hd * d + c] * ks[base + j][g * d + c];
          p.push_back(dot / std::sqrt(static_cast<double>(d)));
          keys.push_back(base + j);
        }
        const double top = *std::max_element(p.begin(), p.end());
        double sum = 0;
        for (double& v : p) sum += (v = std::exp(v - top));
        for (std::size_t n = 0; n < p.size(); ++n)
          for (std::size_t c = 0; c < d; ++c) concat[hd * d + c] += p[n] / sum * vs[keys[n]][g * d + c];
      }
      out.push_back(times(concat, w.wo, sz(c_.hidden_size)));
    }
    return out;
  }

  const LayerPlan& plan_;
  const ModelConfig& c_;
  bool balanced_;
};

}  // namespace smelt::test
