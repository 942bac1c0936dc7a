// The measured step's parameters (step_model.hpp): one flat store of every tensor, with its gradients and AdamW's
// two moments at the same offsets. Private to the bench module.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "smelt/bench_plan.hpp"

namespace smelt::step_detail {

// Where one tensor lies in the flat parameter store (and in the gradients and
// the optimizer's moments, which share its offsets).
struct Slice {
  std::int64_t offset = 0;
  std::int64_t size = 0;
};
struct FfnSlices {
  Slice gate, up, down;  // gate empty for plain FFNs
  std::int64_t width = 0;
};
struct LayerSlices {
  Slice norm1, norm2;              // RMSNorm weights [H]
  Slice wq, wk, wv, wo;            // as LayerWeights
  Slice router, shared_gate;       // MoE layers
  std::vector<FfnSlices> experts;  // routed, then
  std::vector<FfnSlices> shared;   // shared experts
  FfnSlices dense;                 // dense layers
};

template <class T>
struct StepParameters {
  std::vector<T> values, grads, m, v;
  std::vector<LayerSlices> layers;
  Slice embedding, head, final_norm;  // head equals embedding when tied

  // In order: the embedding from `rng`, uniform in +-1/sqrt(H); each layer's norms (1) and weights from
  // make_layer_weights (the benchmark's own, from `seed`); the final norm (1); the head from `rng` unless tied.
  StepParameters(const LayerPlan& plan, std::uint64_t seed, std::mt19937_64& rng);

 private:
  Slice take(std::int64_t size);
  Slice put(const std::vector<float>& weights);
  FfnSlices put_ffn(const std::vector<float>& gate, const std::vector<float>& up, const std::vector<float>& down,
                    std::int64_t width);
};

extern template struct StepParameters<float>;
extern template struct StepParameters<double>;

}  // namespace smelt::step_detail
