// Weights, gradients and optimizer state of one pipeline stage. Sharding
// (Megatron-LM's): attention, dense FFN, shared experts, embedding and head
// over tp; routed experts ep-ways by expert and etp-ways by width; norms and
// the router replicated. ZeRO 1/2/3 divide optimizer, gradients, weights over
// dp; the distributed optimizer divides the optimizer state over dp x cp
// (routed experts: over their own data-parallel ranks).
#include "memory/model_state.hpp"

#include <algorithm>
#include <array>

#include "anatomy/layer_anatomy.hpp"
#include "memory/division.hpp"
#include "util/checked.hpp"

namespace smelt::memory_detail {
namespace {

using detail::add;
using detail::mul;

std::int64_t norm_tensors(const ModelConfig& c) { return c.norm == NormType::layernorm ? 2 : 1; }

// Elements of one stage's parameters, by term, before the data-parallel split.
struct Shares {
  MemoryPart dense;             // replicated over or sharded within tp: split by the dense data-parallel ranks
  MemoryPart experts;           // routed experts: split by the expert data-parallel ranks
  std::int64_t frozen = 0;      // router elements without gradients (DeepSeek's correction bias)
  std::int64_t frozen_mtp = 0;  // the same in the MTP modules' layers
  std::int64_t tensors = 0;     // trainable parameter tensors
};

}  // namespace

std::int64_t layer_tensors(const ModelConfig& c, std::int64_t layer) {
  return anatomy::layer_sums(c, c.is_moe_layer(layer)).trainable_tensors;
}

ModelState model_state(const ModelConfig& c, const CostReport& cost, const ResolvedLayout& r,
                       const std::vector<std::int64_t>& layers, bool first, bool last) {
  const MemoryLayout& l = r.layout;
  Shares s;
  const auto dense = [&](const char* name, std::int64_t elements, std::int64_t split) {
    if (elements > 0) s.dense.add(name, ceil_div(elements, split));
  };
  // Each layer's share, rounded up layer by layer, summed per term, the terms named in the order they first appear.
  struct Sum {
    const char* name;
    std::int64_t ParamTerms::*member;
    std::int64_t split;
    std::int64_t total = 0;
  };
  std::array<Sum, 5> sums{{{"attention", &ParamTerms::attention, l.tp},
                           {"norms", &ParamTerms::norms, 1},
                           {"router", &ParamTerms::router, 1},
                           {"shared_experts", &ParamTerms::shared_experts, l.tp},
                           {"dense_ffn", &ParamTerms::dense_ffn, l.tp}}};
  std::vector<std::size_t> order;
  std::int64_t experts = 0;
  for (std::int64_t i : layers) {
    const ParamTerms& p = cost.layers[static_cast<std::size_t>(i)].params;
    for (std::size_t k = 0; k < sums.size(); ++k)
      if (const std::int64_t elements = p.*sums[k].member; elements > 0) {
        if (sums[k].total == 0) order.push_back(k);
        sums[k].total = add(sums[k].total, ceil_div(elements, sums[k].split), "parameters");
      }
    if (p.experts > 0) experts = add(experts, ceil_div(p.experts / l.ep, l.etp), "parameters");
    const anatomy::LayerSums a = anatomy::layer_sums(c, c.is_moe_layer(i));
    s.tensors = add(s.tensors, a.trainable_tensors, "parameter tensors");
    s.frozen = add(s.frozen, a.frozen_params, "parameters");
  }
  for (std::size_t k : order) s.dense.add(sums[k].name, sums[k].total);
  if (experts > 0) s.experts.add("experts", experts);
  if (first) {
    dense("embedding", cost.params.embedding, l.tp);
    s.tensors += 1;
  }
  if (last) {
    // The final norm: the model's norms less its layers' (a sum over every layer, on the last stage alone).
    std::int64_t layer_norms = 0;
    for (const LayerCost& lc : cost.layers) layer_norms = add(layer_norms, lc.params.norms, "parameters");
    // A tied head on its own stage keeps a copy of the embedding (Megatron-LM's word embeddings on the last stage).
    const std::int64_t head = c.tie_embeddings ? (first ? 0 : cost.params.embedding) : cost.params.lm_head;
    dense("lm_head", head, l.tp);
    dense("norms", cost.params.terms.norms - layer_norms, 1);
    dense("loop_extras", cost.params.terms.loop_extras, 1);  // exit gates, beside the final norm
    dense("mtp", cost.params.mtp, l.tp);
    const auto gates = std::count_if(c.loops.begin(), c.loops.end(), [](const LoopConfig& g) { return g.exit_gate; });
    s.tensors += (head > 0 ? 1 : 0) + norm_tensors(c) + 2 * gates;  // an exit gate: weight and bias
    if (c.mtp_modules > 0) {
      s.tensors += c.mtp_modules * (3 * norm_tensors(c) + 1 + layer_tensors(c, c.num_layers - 1));
      const anatomy::LayerSums a = anatomy::layer_sums(c, c.is_moe_layer(c.num_layers - 1));
      s.frozen_mtp = mul(c.mtp_modules, a.frozen_params, "parameters");
    }
  }

  ModelState out;
  // ZeRO-3 shards the weights, ZeRO-2 the gradients, ZeRO-1 and the distributed optimizer the optimizer state.
  const std::int64_t dense_dp = l.distributed_optimizer ? mul(l.dp, l.cp, "ranks") : l.dp;
  const std::int64_t expert_dp = l.distributed_optimizer ? r.expert_dp : l.dp;
  const auto fill = [&](const MemoryPart& part, std::int64_t dp) {
    for (const MemoryTerm& t : part.terms) {
      const std::int64_t w = l.zero >= 3 ? ceil_div(t.bytes, dp) : t.bytes;
      out.weights.add(t.name, mul(w, r.param_bytes, "weight bytes"));
      const std::int64_t trainable = t.bytes - (t.name == "router" ? s.frozen : t.name == "mtp" ? s.frozen_mtp : 0);
      const std::int64_t g = l.zero >= 2 ? ceil_div(trainable, dp) : trainable;
      out.gradients.add(t.name, mul(g, r.grad_bytes, "gradient bytes"));
      const std::int64_t o = l.zero >= 1 || l.distributed_optimizer ? ceil_div(trainable, dp) : trainable;
      out.optimizer.add("moments", mul(o, 2 * r.optimizer_bytes, "optimizer bytes"));
      if (l.optimizer_dtype != l.param_dtype)
        out.optimizer.add("master_weights", mul(o, r.optimizer_bytes, "optimizer bytes"));
    }
  };
  fill(s.dense, dense_dp);
  fill(s.experts, expert_dp);
  // torch.optim.AdamW's `step`: a float32 scalar per trainable tensor (the smelt convention counts it).
  if (l.convention == MemoryConvention::smelt) out.optimizer.add("step", mul(s.tensors, 4, "optimizer bytes"));
  return out;
}

}  // namespace smelt::memory_detail
