#include "backend/layer_runner.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "device/cuda_check.hpp"
#include "device/layer_kernels.hpp"
#include "device/timing.hpp"
#include "smelt/error.hpp"
#include "util/parallel_for.hpp"

namespace smelt::kernels {
namespace {

using i64 = std::int64_t;

// Element counts of every workspace buffer for a plan.
struct Sizes {
  i64 stream = 0;                     // tokens x H (x, delta, xb)
  i64 qkv = 0, attn = 0, scores = 0;  // tokens x (q + 2 kv), tokens x q, tokens x context (scores and probs)
  i64 logits = 0, pairs = 0, experts = 0;
  i64 routed = 0;       // tokens x top_k x H (xp, z)
  i64 up = 0, act = 0;  // widest FFN input/output over the visited layers
  i64 gate = 0;

  explicit Sizes(const LayerPlan& plan) {
    const Dims d = Dims::of(plan.config);
    const i64 t = plan.tokens;
    stream = t * d.hidden;
    if (!plan.moe_only) qkv = t * d.qkv, attn = t * d.q, scores = t * plan.context;
    for (const i64 layer : std::set<i64>(plan.visits.begin(), plan.visits.end())) {
      if (!plan.config.is_moe_layer(layer)) {
        up = std::max(up, t * d.up_width(d.dense_width)), act = std::max(act, t * d.dense_width);
        continue;
      }
      logits = t * d.experts, pairs = t * d.top_k, experts = d.experts;
      routed = pairs * d.hidden;
      up = std::max({up, pairs * d.up_width(d.expert_width), t * d.up_width(d.shared_width)});
      act = std::max({act, pairs * d.expert_width, t * d.shared_width});
      if (d.shared_gate) gate = t;
    }
  }
  i64 bytes() const {
    return stream * (4 + 4 + 2) + qkv * 2 + attn * 2 + scores * (4 + 2) + logits * 4 + pairs * (4 + 4 + 4) +
           (experts + 1) * 3 * 4 + routed * 2 * 2 + (up + act) * 2 + gate * 4;
  }
};

DeviceBuffer buffer(i64 elements, std::size_t element_bytes) {
  return DeviceBuffer(static_cast<std::size_t>(elements) * element_bytes);
}

Mask mask_of(LayerAttention kind) {
  switch (kind) {
    case LayerAttention::sliding:
      return Mask::sliding;
    case LayerAttention::chunked:
      return Mask::chunked;
    case LayerAttention::full:
      break;
  }
  return Mask::causal;
}

// Keys the mask keeps, summed over the positions of one sequence.
i64 visible_pairs(Mask mask, i64 context, i64 window, i64 chunk) {
  i64 pairs = 0;
  for (i64 p = 0; p < context; ++p) {
    i64 lo = 0;
    if (mask == Mask::sliding) lo = std::max<i64>(0, p - window + 1);
    if (mask == Mask::chunked) lo = (p / chunk) * chunk;
    pairs += p - lo + 1;
  }
  return pairs;
}

}  // namespace

std::int64_t LayerRunner::workspace_bytes(const LayerPlan& plan) { return Sizes(plan).bytes(); }

LayerRunner::LayerRunner(const LayerPlan& plan, const std::vector<LayerWeights>& weights, bool balanced,
                         BlasContext& blas)
    : blas_(blas), d_(Dims::of(plan.config)), balanced_(balanced), tokens_cap_(plan.tokens) {
  const Sizes s(plan);
  scores_cap_ = s.scores;
  const std::set<i64> distinct(plan.visits.begin(), plan.visits.end());
  const std::vector<i64> visited(distinct.begin(), distinct.end());
  for (const i64 layer : visited)
    if (layer < 0 || layer >= static_cast<i64>(weights.size()))
      throw error(fmt::format("LayerRunner: no weights for layer {}", layer));
  std::vector<HostLayer> host(visited.size());
  smelt::detail::parallel_for(visited.size(), 0, [&](std::size_t i) {
    const i64 layer = visited[i];
    host[i] = to_host_layer(plan.config, plan.moe_only, layer, weights[static_cast<std::size_t>(layer)]);
  });
  for (std::size_t i = 0; i < visited.size(); ++i) {
    layers_.emplace(visited[i], upload_layer(host[i]));
    host[i] = HostLayer{};  // free the host copy as soon as it is on the device
  }
  x_ = buffer(s.stream, 4), delta_ = buffer(s.stream, 4), xb_ = buffer(s.stream, 2);
  qkv_ = buffer(s.qkv, 2), attn_ = buffer(s.attn, 2), scores_ = buffer(s.scores, 4), probs_ = buffer(s.scores, 2);
  logits_ = buffer(s.logits, 4), topk_idx_ = buffer(s.pairs, 4), topk_w_ = buffer(s.pairs, 4);
  slot_ = buffer(s.pairs, 4);
  counts_ = buffer(s.experts + 1, 4), offsets_ = buffer(s.experts + 1, 4), cursor_ = buffer(s.experts + 1, 4);
  xp_ = buffer(s.routed, 2), z_ = buffer(s.routed, 2), up_ = buffer(s.up, 2), act_ = buffer(s.act, 2);
  gate_logit_ = buffer(s.gate, 4);
}

void LayerRunner::forward(const LayerPlan& plan, const float* x0, const bf16* x0b, RoutingMode routing, ExpertPath path,
                          FlopTally& tally, Routing* chosen) {
  if (plan.tokens > tokens_cap_ || (!plan.moe_only && plan.tokens * plan.context > scores_cap_))
    throw error(
        fmt::format("LayerRunner: a plan of {} tokens x {} context exceeds the workspace", plan.tokens, plan.context));
  if (routing == RoutingMode::record) recorded_.clear(), recorded_tokens_ = plan.tokens;
  if (routing == RoutingMode::cached && recorded_tokens_ != plan.tokens)
    throw error("LayerRunner: a cached pass needs a recorded pass of the same plan first");
  std::vector<std::unique_ptr<ExpertBatch>> temps;  // sync mode: alive until the pass has finished
  const float* x_in = x0;
  const bf16* xb_in = x0b;
  std::size_t moe_index = 0;
  for (const i64 index : plan.visits) {
    const DeviceLayer& layer = layers_.at(index);
    // Looped layers scale their residual updates (the SMELT recipe), other layers add them as they are.
    const float scale = static_cast<float>(plan.config.residual_scale_at(index));
    if (!plan.moe_only) {
      attention(plan, layer, index, x_in, xb_in, scale, tally);
      x_in = x_.as<float>(), xb_in = xb_.as<bf16>();
    }
    if (layer.moe) {
      moe(plan, layer, x_in, xb_in, scale, routing, path, moe_index++, temps, tally, chosen);
    } else {
      tally.gemm += ffn(layer.dense, xb_in, plan.tokens, delta_.as<float>(), 0.f);
      residual_add(x_in, delta_.as<float>(), plan.tokens * d_.hidden, scale, x_.as<float>(), xb_.as<bf16>(),
                   blas_.stream());
    }
    x_in = x_.as<float>(), xb_in = xb_.as<bf16>();
  }
  if (routing == RoutingMode::cached && moe_index != recorded_.size())
    throw error("LayerRunner: the cached pass has a different number of MoE visits than the recorded one");
  if (!temps.empty()) SMELT_CUDA_CALL(cudaStreamSynchronize(blas_.stream()));
}

void LayerRunner::attention(const LayerPlan& plan, const DeviceLayer& layer, std::int64_t index, const float* x_in,
                            const bf16* xb_in, float scale, FlopTally& tally) {
  const i64 t = plan.tokens, c = plan.context, seqs = plan.sequences, h = d_.hidden, hd = d_.head_dim;
  const cublasHandle_t handle = blas_.handle();
  const cudaStream_t stream = blas_.stream();
  bf16* qkv = qkv_.as<bf16>();
  bf16* attn = attn_.as<bf16>();
  tally.gemm += gemm_rm(handle, t, d_.qkv, h, xb_in, h, layer.wqkv.as<bf16>(), d_.qkv, qkv, CUDA_R_16BF, d_.qkv);

  const Mask mask = mask_of(plan.config.attention_at(index));
  const i64 window = std::max<i64>(plan.config.attention.window, 1),
            chunk = std::max<i64>(plan.config.attention.chunk, 1);
  const float alpha = 1.f / std::sqrt(static_cast<float>(hd));
  const AttentionShape shape{c, seqs, d_.heads, d_.kv_heads, hd};
  // Per query head, batched over the sequences: S = Q_h K_g^T / sqrt(d) (fp32),
  // masked softmax to bf16 P, then O_h = P V_g into the head's columns of attn
  // (the cuBLAS view of both products is in gemm_shapes.hpp).
  for (i64 head = 0; head < d_.heads; ++head) {
    tally.attention_launched +=
        launch(handle, attention_scores_gemm(shape, head), qkv, qkv, scores_.as<void>(), CUDA_R_32F, alpha);
    masked_softmax(scores_.as<float>(), seqs * c, c, mask, window, chunk, probs_.as<bf16>(), stream);
    tally.attention_launched +=
        launch(handle, attention_values_gemm(shape, head), qkv, probs_.as<bf16>(), attn, CUDA_R_16BF);
  }
  // What the mask keeps: QK^T and AV each 2 d per visible (query, key) pair.
  tally.attention_useful += 2 * 2 * hd * d_.heads * seqs * visible_pairs(mask, c, window, chunk);
  tally.gemm += gemm_rm(handle, t, h, d_.q, attn, d_.q, layer.wo.as<bf16>(), h, delta_.as<void>(), CUDA_R_32F, h);
  residual_add(x_in, delta_.as<float>(), t * h, scale, x_.as<float>(), xb_.as<bf16>(), stream);
}

ExpertOperands LayerRunner::expert_operands(const DeviceLayer& layer) const {
  ExpertOperands o;
  o.up_weights = layer.expert_up.as<bf16>();
  o.down_weights = layer.expert_down.as<bf16>();
  o.xp = xp_.as<bf16>();
  o.up_out = up_.as<bf16>();
  o.act = act_.as<bf16>();
  o.z = z_.as<bf16>();
  o.shape = ExpertShape{d_.hidden, d_.expert_width, d_.gated};
  return o;
}

void LayerRunner::moe(const LayerPlan& plan, const DeviceLayer& layer, const float* x_in, const bf16* xb_in,
                      float scale, RoutingMode routing, ExpertPath path, std::size_t moe_index,
                      std::vector<std::unique_ptr<ExpertBatch>>& temps, FlopTally& tally, Routing* chosen) {
  const i64 t = plan.tokens, h = d_.hidden, e = d_.experts, k = d_.top_k;
  const cublasHandle_t handle = blas_.handle();
  const cudaStream_t stream = blas_.stream();
  int* counts = counts_.as<int>();
  tally.gemm += gemm_rm(handle, t, e, h, xb_in, h, layer.router.as<bf16>(), e, logits_.as<void>(), CUDA_R_32F, e);
  SMELT_CUDA_CALL(cudaMemsetAsync(counts, 0, static_cast<std::size_t>(e) * sizeof(int), stream));
  router_topk(logits_.as<float>(), t, static_cast<int>(e), static_cast<int>(k), d_.sigmoid, balanced_,
              topk_idx_.as<int>(), topk_w_.as<float>(), counts, stream);
  expert_offsets(counts, static_cast<int>(e), offsets_.as<int>(), cursor_.as<int>(), stream);
  permute_rows(xb_in, t, h, static_cast<int>(k), topk_idx_.as<int>(), cursor_.as<int>(), slot_.as<int>(),
               xp_.as<bf16>(), stream);

  const ExpertBatch* batch = nullptr;
  if (routing == RoutingMode::cached) {
    if (moe_index >= recorded_.size()) throw error("LayerRunner: more MoE visits than recorded");
    batch = recorded_[moe_index].get();
  } else {
    std::vector<int> host(static_cast<std::size_t>(e)), idx(chosen != nullptr ? static_cast<std::size_t>(t * k) : 0);
    SMELT_CUDA_CALL(cudaMemcpyAsync(host.data(), counts, host.size() * sizeof(int), cudaMemcpyDeviceToHost, stream));
    if (!idx.empty())
      SMELT_CUDA_CALL(
          cudaMemcpyAsync(idx.data(), topk_idx_.as<int>(), idx.size() * sizeof(int), cudaMemcpyDeviceToHost, stream));
    SMELT_CUDA_CALL(cudaStreamSynchronize(stream));
    if (chosen != nullptr) chosen->experts.emplace_back(idx.begin(), idx.end());
    auto made = std::make_unique<ExpertBatch>(host, expert_operands(layer));
    batch = made.get();
    (routing == RoutingMode::record ? recorded_ : temps).push_back(std::move(made));
  }
  batch->up(path, blas_);
  ffn_activation(up_.as<bf16>(), t * k, d_.expert_width, d_.gated, act_.as<bf16>(), stream);
  batch->down(path, blas_);
  tally.gemm += batch->flops();
  tally.experts += batch->flops();

  const float* shared = nullptr;
  for (std::size_t s = 0; s < layer.shared.size(); ++s) {
    tally.gemm += ffn(layer.shared[s], xb_in, t, delta_.as<float>(), s == 0 ? 0.f : 1.f);
    shared = delta_.as<float>();
  }
  const float* gate = nullptr;
  if (d_.shared_gate && shared != nullptr) {
    tally.gemm +=
        gemm_rm(handle, t, 1, h, xb_in, h, layer.shared_gate.as<bf16>(), 1, gate_logit_.as<void>(), CUDA_R_32F, 1);
    gate = gate_logit_.as<float>();
  }
  moe_combine(x_in, z_.as<bf16>(), slot_.as<int>(), topk_w_.as<float>(), static_cast<int>(k), shared, gate, t, h, scale,
              x_.as<float>(), xb_.as<bf16>(), stream);
}

std::int64_t LayerRunner::ffn(const DeviceFfn& f, const bf16* xb_in, std::int64_t tokens, float* out, float beta) {
  const i64 h = d_.hidden, u = d_.up_width(f.width);
  std::int64_t flops =
      gemm_rm(blas_.handle(), tokens, u, h, xb_in, h, f.up.as<bf16>(), u, up_.as<void>(), CUDA_R_16BF, u);
  ffn_activation(up_.as<bf16>(), tokens, f.width, d_.gated, act_.as<bf16>(), blas_.stream());
  flops += gemm_rm(blas_.handle(), tokens, h, f.width, act_.as<bf16>(), f.width, f.down.as<bf16>(), h, out, CUDA_R_32F,
                   h, 1.f, beta);
  return flops;
}

std::vector<double> LayerRunner::time_experts(ExpertPath path, std::int64_t warmup, std::int64_t reps) {
  const ExpertBatch* batch = first_recorded();
  if (batch == nullptr) return {};
  const cudaStream_t stream = blas_.stream();
  const i64 rows = recorded_tokens_ * d_.top_k;
  for (std::int64_t i = 0; i < warmup; ++i) {
    batch->up(path, blas_);
    batch->down(path, blas_);
  }
  std::vector<Event> events;
  events.reserve(static_cast<std::size_t>(4 * reps));
  for (std::int64_t i = 0; i < 4 * reps; ++i) events.emplace_back();
  for (std::int64_t i = 0; i < reps; ++i) {
    Event* ev = &events[static_cast<std::size_t>(4 * i)];
    ev[0].record(stream);
    batch->up(path, blas_);
    ev[1].record(stream);
    ffn_activation(up_.as<bf16>(), rows, d_.expert_width, d_.gated, act_.as<bf16>(), stream);
    ev[2].record(stream);
    batch->down(path, blas_);
    ev[3].record(stream);
  }
  std::vector<double> ms;
  for (std::int64_t i = 0; i < reps; ++i) {
    const Event* ev = &events[static_cast<std::size_t>(4 * i)];
    ms.push_back(elapsed_ms(ev[0], ev[1]) + elapsed_ms(ev[2], ev[3]));
  }
  return ms;
}

bool LayerRunner::routing_reproduced() const {
  if (recorded_.empty()) return true;
  std::vector<int> host(static_cast<std::size_t>(d_.experts));
  SMELT_CUDA_CALL(cudaMemcpyAsync(host.data(), counts_.as<int>(), host.size() * sizeof(int), cudaMemcpyDeviceToHost,
                                  blas_.stream()));
  SMELT_CUDA_CALL(cudaStreamSynchronize(blas_.stream()));
  return host == recorded_.back()->counts();
}

}  // namespace smelt::kernels
