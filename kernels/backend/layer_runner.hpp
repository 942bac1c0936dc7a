// Runs a LayerPlan's blocks on the device: the weights of every layer the plan
// visits (uploaded once, reused by looped visits) and one workspace sized for
// the plan it was built for (smaller plans of the same config fit too).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "backend/device_weights.hpp"
#include "device/gemm.hpp"
#include "smelt/bench_reference.hpp"

namespace smelt::kernels {

// FLOPs of what was launched, 2 m n k per product, as exact integers.
struct FlopTally {
  std::int64_t gemm = 0;                // weight products: projections, router, experts, shared experts + gate, FFNs
  std::int64_t experts = 0;             // the routed expert products alone (also in gemm)
  std::int64_t attention_launched = 0;  // QK^T and AV as launched: full context x context blocks per sequence
  std::int64_t attention_useful = 0;    // the part of those the mask keeps (what the analytic count counts)
};

// How a pass learns each MoE visit's expert row counts, which size its expert products.
enum class RoutingMode {
  sync,    // copy them back from the device (a host sync per MoE visit; untimed runs)
  record,  // the same, and keep the products for `cached` passes of the same plan
  cached,  // reuse the recorded products: timed passes (routing is deterministic for identical inputs)
};

class LayerRunner {
 public:
  // weights[layer] from make_layer_weights for every layer of the config (only
  // the visited ones are uploaded, converted on several host threads).
  LayerRunner(const LayerPlan& plan, const std::vector<LayerWeights>& weights, bool balanced, BlasContext& blas);

  // Device bytes of the workspace for `plan` (weights and inputs not included).
  static std::int64_t workspace_bytes(const LayerPlan& plan);

  // Enqueues one pass of `plan` on blas.stream() over the input x0 (fp32
  // [tokens x H]) and its bf16 copy x0b; the result lands in output(). With
  // `chosen` (sync/record only), appends each MoE visit's expert choices.
  void forward(const LayerPlan& plan, const float* x0, const bf16* x0b, RoutingMode routing, ExpertPath path,
               FlopTally& tally, Routing* chosen = nullptr);
  float* output() const noexcept { return x_.as<float>(); }

  // The expert products of the first MoE visit of the recorded pass (null when none).
  const ExpertBatch* first_recorded() const noexcept { return recorded_.empty() ? nullptr : recorded_.front().get(); }
  // Times the expert products of the first recorded MoE visit alone: for each
  // rep, the up and the down products between events (the activation between
  // them is not counted). Milliseconds per rep.
  std::vector<double> time_experts(ExpertPath path, std::int64_t warmup, std::int64_t reps);
  // Whether the device's counts of the last MoE visit equal the recorded ones
  // (checks that cached passes really routed as recorded). Synchronises.
  bool routing_reproduced() const;

 private:
  void attention(const LayerPlan& plan, const DeviceLayer& layer, std::int64_t index, const float* x_in,
                 const bf16* xb_in, float scale, FlopTally& tally);
  void moe(const LayerPlan& plan, const DeviceLayer& layer, const float* x_in, const bf16* xb_in, float scale,
           RoutingMode routing, ExpertPath path, std::size_t moe_index,
           std::vector<std::unique_ptr<ExpertBatch>>& temps, FlopTally& tally, Routing* chosen);
  // up, activation, down of one FFN over `tokens` rows into out (fp32), out = beta out + FFN(x).
  std::int64_t ffn(const DeviceFfn& f, const bf16* xb_in, std::int64_t tokens, float* out, float beta);
  ExpertOperands expert_operands(const DeviceLayer& layer) const;

  BlasContext& blas_;
  Dims d_;
  bool balanced_ = false;
  std::int64_t tokens_cap_ = 0, scores_cap_ = 0;
  std::map<std::int64_t, DeviceLayer> layers_;
  DeviceBuffer x_, delta_, xb_;                     // residual stream fp32, sublayer output fp32, bf16 copy
  DeviceBuffer qkv_, attn_, scores_, probs_;        // attention
  DeviceBuffer logits_, topk_idx_, topk_w_, slot_;  // routing
  DeviceBuffer counts_, offsets_, cursor_;          // per expert
  DeviceBuffer xp_, z_, up_, act_, gate_logit_;     // expert and FFN operands
  std::vector<std::unique_ptr<ExpertBatch>> recorded_;
  std::int64_t recorded_tokens_ = -1;
};

}  // namespace smelt::kernels
