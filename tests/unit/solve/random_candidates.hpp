// Random configs and memory layouts for the tests of the solver's memory and time counts: MoE and dense,
// GQA/MHA/MQA, sliding and chunked layers, shared experts and their gate, biases, layernorm, q/k norms, sinks, the
// router's forms, loops; tp, cp, ep, etp, dp, sequence parallelism, ZeRO, the distributed optimizer, recompute,
// dtypes, micro-batches, and now and then a pipeline, another convention or inference.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <random>

#include "smelt/config.hpp"
#include "smelt/memory.hpp"
#include "test_configs.hpp"

namespace smelt::test {

using i64 = std::int64_t;

template <class T>
inline T pick(std::mt19937_64& rng, std::initializer_list<T> values) {
  std::uniform_int_distribution<std::size_t> d(0, values.size() - 1);
  return *(values.begin() + static_cast<std::ptrdiff_t>(d(rng)));
}

inline ModelConfig draw_config(std::mt19937_64& rng) {
  ModelConfig c = pick(rng, {0, 1, 2}) == 0 ? test::tiny_dense(pick<i64>(rng, {1, 3, 6})) : test::tiny_moe();
  c.num_layers = pick<i64>(rng, {2, 4, 6});
  c.loops = {};
  if (pick(rng, {0, 1, 2}) > 0) {
    const i64 first = pick<i64>(rng, {1, 2}), last = std::min<i64>(c.num_layers, first + pick<i64>(rng, {0, 1, 3}));
    c.loops = {{first, last, pick<i64>(rng, {2, 3, 5}), 1.0}};
  }
  c.hidden_size = pick<i64>(rng, {32, 64, 96, 160});
  auto& a = c.attention;
  a.head_dim = pick<i64>(rng, {8, 16, 24, 33});
  a.num_heads = pick<i64>(rng, {2, 4, 6, 8});
  a.num_kv_heads = pick<i64>(rng, {1, 2, a.num_heads});
  a.qkv_bias = pick(rng, {false, true});
  a.out_bias = pick(rng, {false, true});
  a.sinks = pick(rng, {false, false, true});
  a.qk_norm = pick(rng, {QkNorm::none, QkNorm::full, QkNorm::per_head});
  if (pick(rng, {0, 1, 2}) == 0) {
    a.window = 4;
    a.chunk = 4;
    a.pattern = {pick(rng, {LayerAttention::sliding, LayerAttention::chunked}), LayerAttention::full};
  }
  c.context_length = pick<i64>(rng, {8, 16, 32});
  c.norm = pick(rng, {NormType::rmsnorm, NormType::layernorm});
  c.ffn.type = pick(rng, {FfnType::gated, FfnType::plain});
  c.ffn.bias = pick(rng, {false, true});
  c.ffn.dense_width = pick<i64>(rng, {64, 96, 128});
  c.tie_embeddings = pick(rng, {false, true});
  if (c.is_moe()) {
    auto& m = c.moe;
    m.num_experts = pick<i64>(rng, {4, 6, 8, 12, 16});
    m.top_k = pick<i64>(rng, {1, 2, 3});
    m.expert_width = pick<i64>(rng, {16, 32, 48});
    m.num_shared_experts = pick<i64>(rng, {0, 1, 2});
    m.shared_width = m.num_shared_experts > 0 ? pick<i64>(rng, {16, 32}) : 0;
    m.shared_gate = m.num_shared_experts > 0 && pick(rng, {false, true});
    m.first_dense = pick<i64>(rng, {0, 1});
    m.router_score = pick(rng, {RouterScore::softmax, RouterScore::sigmoid});
    m.router_bias = pick(rng, {false, true});
    m.router_form = default_router_form(m);
    m.renormalize = default_renormalize(m.router_form);
  }
  return c;
}

inline MemoryLayout draw_layout(std::mt19937_64& rng) {
  MemoryLayout l;
  l.micro_batch = pick<i64>(rng, {1, 1, 2, 3});
  l.seq = pick<i64>(rng, {0, 8, 16});
  l.tp = pick<i64>(rng, {1, 1, 2, 4});
  l.cp = pick<i64>(rng, {1, 1, 2});
  l.ep = pick<i64>(rng, {1, 1, 2, 4});
  l.etp = pick<i64>(rng, {1, 1, 2});
  l.dp = pick<i64>(rng, {1, 2, 8});
  l.sequence_parallel = l.tp > 1 && pick(rng, {false, true});
  if (pick(rng, {0, 1}) == 0)
    l.zero = pick<i64>(rng, {0, 1, 2, 3});
  else
    l.distributed_optimizer = pick(rng, {false, true});
  l.recompute = pick(rng, {Recompute::none, Recompute::selective, Recompute::full});
  if (l.recompute == Recompute::full) l.recompute_layers = pick<i64>(rng, {0, 1, 2, 5});
  l.param_dtype = pick(rng, {Dtype::automatic, Dtype::bf16, Dtype::fp32});
  l.grad_dtype = pick(rng, {Dtype::automatic, Dtype::fp32});
  l.optimizer_dtype = pick(rng, {Dtype::automatic, Dtype::fp32, Dtype::bf16});
  l.activation_dtype = pick(rng, {Dtype::automatic, Dtype::bf16, Dtype::fp32});
  l.microbatches = pick<i64>(rng, {0, 4});
  switch (pick(rng, {0, 0, 0, 0, 0, 0, 1, 2, 3})) {  // what the evaluator leaves to the full report
    case 1:
      l.pp = 2;
      break;
    case 2:
      l.convention = MemoryConvention::korthikanti;
      break;
    case 3:
      l.inference = true;
      break;
    default:
      break;
  }
  return l;
}

}  // namespace smelt::test
