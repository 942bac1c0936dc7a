#include "step/parameters.hpp"

#include <algorithm>
#include <cmath>

#include "smelt/bench_weights.hpp"

namespace smelt::step_detail {

template <class T>
Slice StepParameters<T>::take(std::int64_t size) {
  const Slice s{static_cast<std::int64_t>(values.size()), size};
  values.resize(values.size() + static_cast<std::size_t>(size));
  return s;
}

template <class T>
Slice StepParameters<T>::put(const std::vector<float>& weights) {
  const Slice s = take(static_cast<std::int64_t>(weights.size()));
  std::copy(weights.begin(), weights.end(), values.begin() + s.offset);
  return s;
}

template <class T>
FfnSlices StepParameters<T>::put_ffn(const std::vector<float>& gate, const std::vector<float>& up,
                                     const std::vector<float>& down, std::int64_t width) {
  FfnSlices s;
  s.gate = put(gate), s.up = put(up), s.down = put(down), s.width = width;
  return s;
}

template <class T>
StepParameters<T>::StepParameters(const LayerPlan& plan, std::uint64_t seed, std::mt19937_64& rng) {
  const ModelConfig& c = plan.config;
  const std::int64_t h = c.hidden_size, vocab = c.vocab_size;
  const T bound = static_cast<T>(1.0 / std::sqrt(static_cast<double>(h)));
  std::uniform_real_distribution<double> uni(-1, 1);
  const auto draw = [&](Slice s) {
    for (std::int64_t i = 0; i < s.size; ++i)
      values[static_cast<std::size_t>(s.offset + i)] = bound * static_cast<T>(uni(rng));
  };
  embedding = take(vocab * h);
  draw(embedding);
  for (std::int64_t l = 0; l < c.num_layers; ++l) {
    const LayerWeights lw = make_layer_weights(plan, l, seed);
    LayerSlices s;
    s.norm1 = take(h), s.norm2 = take(h);
    std::fill(values.begin() + s.norm1.offset, values.end(), T(1));
    s.wq = put(lw.wq), s.wk = put(lw.wk), s.wv = put(lw.wv), s.wo = put(lw.wo);
    s.router = put(lw.router), s.shared_gate = put(lw.shared_gate);
    for (const auto& f : lw.experts) s.experts.push_back(put_ffn(f.gate, f.up, f.down, c.moe.expert_width));
    for (const auto& f : lw.shared) s.shared.push_back(put_ffn(f.gate, f.up, f.down, c.moe.shared_width));
    s.dense = put_ffn(lw.dense.gate, lw.dense.up, lw.dense.down, c.ffn.dense_width);
    layers.push_back(std::move(s));
  }
  final_norm = take(h);
  std::fill(values.begin() + final_norm.offset, values.end(), T(1));
  if (c.tie_embeddings) {
    head = embedding;
  } else {
    head = take(h * vocab);
    draw(head);
  }
  grads.assign(values.size(), T(0)), m.assign(values.size(), T(0)), v.assign(values.size(), T(0));
}

template struct StepParameters<float>;
template struct StepParameters<double>;

}  // namespace smelt::step_detail
