#include "cpu/routing.hpp"

#include <algorithm>
#include <numeric>

#include <Eigen/Dense>

namespace smelt::cpu {

template <class T>
void route_tokens(T* scores, std::int64_t tokens, std::int64_t experts, std::int64_t top_k, bool softmax, bool balanced,
                  TokenRoutes<T>& out, const std::vector<std::int64_t>* replay) {
  using i64 = std::int64_t;
  const auto at = [](i64 v) { return static_cast<std::size_t>(v); };
  for (i64 t = 0; t < tokens; ++t) {
    Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>> r(scores + t * experts, static_cast<Eigen::Index>(experts));
    if (softmax) {
      r = (r - r.maxCoeff()).exp();
      r /= r.sum();
    } else {
      r = (T(1) + (-r).exp()).inverse();
    }
  }
  out.chosen.resize(at(tokens * top_k)), out.mix.resize(at(tokens * top_k));
  std::vector<i64> order(at(experts));
  for (i64 t = 0; t < tokens; ++t) {
    const T* r = scores + t * experts;
    i64* pick = out.chosen.data() + t * top_k;
    if (replay) {
      std::copy(replay->begin() + t * top_k, replay->begin() + (t + 1) * top_k, pick);
    } else if (balanced) {
      for (i64 j = 0; j < top_k; ++j) pick[j] = (t * top_k + j) % experts;
    } else {
      std::iota(order.begin(), order.end(), i64{0});
      std::partial_sort(order.begin(), order.begin() + top_k, order.end(),
                        [&](i64 x1, i64 x2) { return r[x1] > r[x2] || (r[x1] == r[x2] && x1 < x2); });
      std::copy(order.begin(), order.begin() + top_k, pick);
    }
    T sum = 0;
    for (i64 j = 0; j < top_k; ++j) sum += r[pick[j]];
    for (i64 j = 0; j < top_k; ++j) out.mix[at(t * top_k + j)] = r[pick[j]] / sum;
  }
  out.count.assign(at(experts), 0), out.start.assign(at(experts) + 1, 0);
  for (const i64 e : out.chosen) ++out.count[at(e)];
  std::partial_sum(out.count.begin(), out.count.end(), out.start.begin() + 1);
  out.slots.resize(out.chosen.size());
  std::vector<i64> next(out.start.begin(), out.start.end() - 1);
  for (std::size_t i = 0; i < out.chosen.size(); ++i) out.slots[at(next[at(out.chosen[i])]++)] = static_cast<i64>(i);
}

template <class T>
void route_backward(const T* scores, const TokenRoutes<T>& routes, const T* dmix, std::int64_t tokens,
                    std::int64_t experts, std::int64_t top_k, bool softmax, T* dlogits) {
  using i64 = std::int64_t;
  std::fill(dlogits, dlogits + tokens * experts, T(0));
  for (i64 t = 0; t < tokens; ++t) {
    // mix_j = c_j / sum_i c_i over the chosen scores c; then the scores' own function of the logits.
    const T* pr = scores + t * experts;
    const i64* ch = routes.chosen.data() + t * top_k;
    const T* mix = routes.mix.data() + t * top_k;
    T sum = 0, weighted = 0;
    for (i64 j = 0; j < top_k; ++j) sum += pr[ch[j]], weighted += dmix[t * top_k + j] * mix[j];
    T* dl = dlogits + t * experts;
    T pdot = 0;  // sum over chosen of dc_j p_j (softmax)
    for (i64 j = 0; j < top_k; ++j) {
      const T dc = (dmix[t * top_k + j] - weighted) / sum;
      dl[ch[j]] += dc;
      pdot += dc * pr[ch[j]];
    }
    for (i64 e = 0; e < experts; ++e) dl[e] = softmax ? pr[e] * (dl[e] - pdot) : dl[e] * pr[e] * (T(1) - pr[e]);
  }
}

template void route_tokens(float*, std::int64_t, std::int64_t, std::int64_t, bool, bool, TokenRoutes<float>&,
                           const std::vector<std::int64_t>*);
template void route_tokens(double*, std::int64_t, std::int64_t, std::int64_t, bool, bool, TokenRoutes<double>&,
                           const std::vector<std::int64_t>*);
template void route_backward(const float*, const TokenRoutes<float>&, const float*, std::int64_t, std::int64_t,
                             std::int64_t, bool, float*);
template void route_backward(const double*, const TokenRoutes<double>&, const double*, std::int64_t, std::int64_t,
                             std::int64_t, bool, double*);

}  // namespace smelt::cpu
