// The model one `bench step` trains (docs/time.md, "The measured step"):
// the benchmark's block (bench_reference.hpp) with what a training step adds
// around it, in float32 (or float64, for the gradient check of the tests):
//   token embedding (a gather), per visit RMSNorm -> attention -> residual,
//   RMSNorm -> MoE or FFN -> residual, a final RMSNorm, the LM head (the
//   embedding's transpose when tied), softmax cross-entropy over random
//   targets (the mean over tokens); the backward of all of it, weight
//   gradients summed over a looped layer's visits; one AdamW update.
// Every product is a BLAS call or a per-query attention loop, and each is
// counted as it runs (StepFlops). Private to the bench module.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "smelt/bench_plan.hpp"
#include "step/parameters.hpp"

namespace smelt::step_detail {

// FLOPs of the last forward() and backward(), as executed: weight products
// 2 m n k each (forward; the backward's input and weight gradients 2 x that),
// attention 4 d per (query, head, key) forward and 10 d backward (scores
// recomputed from the saved log-sum-exp, then the probabilities', queries',
// keys' and values' gradients).
struct StepFlops {
  double forward_gemm = 0, forward_attention = 0;
  double backward_gemm = 0, backward_attention = 0;
  double forward() const { return forward_gemm + forward_attention; }
  double backward() const { return backward_gemm + backward_attention; }
};

template <class T>
class StepModel {
 public:
  // Weights: each layer's from make_layer_weights (the benchmark's own), the
  // embedding and head uniform in +-1/sqrt(H), norms 1; the tokens and their
  // targets uniform over the vocabulary; all from `seed`.
  StepModel(const LayerPlan& plan, std::uint64_t seed, bool balanced);
  ~StepModel();
  StepModel(const StepModel&) = delete;
  StepModel& operator=(const StepModel&) = delete;

  T forward();      // the loss; keeps what backward() needs
  void backward();  // the last forward's gradients into grads(), which it zeroes first
  void update();    // one AdamW step (torch.optim.AdamW's defaults, lr 1e-4)
  // Decoding: prepare_decode() fills each sequence's KV cache, per visit, with the K and V of its first context - 1
  // tokens from the last forward; decode() then runs one new token for every sequence (its last token) against
  // that cache: the same logits as the forward's at those positions, of a step that reads every weight for a
  // handful of rows. It may be repeated; a forward() after it starts over.
  void prepare_decode();
  void decode();
  const std::vector<T>& final_hidden() const;  // the last forward's or decode's rows after the final norm

  std::vector<T>& params();
  const std::vector<T>& grads() const;
  const std::vector<LayerSlices>& layers() const;
  Slice embedding() const;
  Slice head() const;  // equals embedding() when tied
  Slice final_norm() const;
  const StepFlops& flops() const;
  // Tokens per expert of the first MoE visit of the last forward (empty without MoE).
  const std::vector<std::int64_t>& expert_tokens() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

extern template class StepModel<float>;
extern template class StepModel<double>;

}  // namespace smelt::step_detail
