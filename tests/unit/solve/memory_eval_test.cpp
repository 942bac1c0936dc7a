// The solver's memory counted by kind (MemoryEvaluator) equals memory()'s total to the byte, over random configs
// (MoE and dense, GQA/MHA/MQA, sliding and chunked layers, shared experts and their gate, biases, layernorm, q/k
// norms, sinks, the router's forms, loops) and random layouts (tp, cp, ep, etp, dp, sequence parallelism, ZeRO,
// the distributed optimizer, recompute, dtypes, micro-batches), and leaves to the full report what it does not
// cover: a pipeline, inference, another convention, MLA, MTP modules, a layout that cannot shard the config.
#include <random>

#include <catch2/catch.hpp>

#include "../memory/tiny_moe_layout.hpp"
#include "smelt/checked_config.hpp"
#include "smelt/error.hpp"
#include "smelt/memory.hpp"
#include "solve/memory_eval.hpp"
#include "test_configs.hpp"

using namespace smelt;

namespace {

using i64 = std::int64_t;

template <class T>
T pick(std::mt19937_64& rng, std::initializer_list<T> values) {
  std::uniform_int_distribution<std::size_t> d(0, values.size() - 1);
  return *(values.begin() + static_cast<std::ptrdiff_t>(d(rng)));
}

ModelConfig draw_config(std::mt19937_64& rng) {
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
  }
  return c;
}

MemoryLayout draw_layout(std::mt19937_64& rng) {
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

}  // namespace

TEST_CASE("memory counted by kind equals memory()'s total, or leaves it to the report", "[solve][memory]") {
  std::mt19937_64 rng(20261207);
  int compared = 0, left = 0, refused = 0;
  for (int draw = 0; draw < 6000; ++draw) {
    const ModelConfig c = draw_config(rng);
    const MemoryLayout l = draw_layout(rng);
    std::optional<CheckedConfig> checked;
    try {
      checked.emplace(c);
    } catch (const config_error&) {
      continue;  // a draw the config rules refuse
    }
    std::optional<i64> full;
    try {
      full = memory(*checked, l).total;
    } catch (const config_error&) {
    }
    // A fresh evaluator (prepared by this config) and one prepared by another candidate of the same shape.
    detail::MemoryEvaluator fresh(l);
    const std::optional<i64> fast = fresh.bytes(c);
    INFO("draw " << draw);
    if (fast) {
      REQUIRE(full.has_value());
      REQUIRE(*fast == *full);
      ++compared;
    } else {
      ++(full ? left : refused);
    }
    ModelConfig other = c;
    other.hidden_size += 32;
    if (c.is_moe()) other.moe.num_experts = 24;
    detail::MemoryEvaluator shared(l);
    (void)shared.bytes(other);
    if (const std::optional<i64> again = shared.bytes(c)) REQUIRE(again == full);
  }
  // Most draws are covered; the rest are the layouts it leaves to the report, or refused by memory() itself.
  CHECK(compared > 1200);
  CHECK(left > 200);
  CHECK(refused > 200);
}

TEST_CASE("memory counted by kind: docs/memory.md's tiny-moe example to the byte", "[solve][memory]") {
  // examples/tiny-moe.json, fp32, b = 2, s = 16: weights 1,478,912, gradients 1,478,912, AdamW 2 x 1,478,912 +
  // 456, activations 1,282,324, the backward's transient 255,740.
  const CheckedConfig c = test::tiny();
  const MemoryLayout l = test::small();
  detail::MemoryEvaluator e(l);
  const std::optional<i64> fast = e.bytes(c);
  REQUIRE(fast.has_value());
  CHECK(*fast == 7454168);
  CHECK(*fast == memory(c, l).total);
}
