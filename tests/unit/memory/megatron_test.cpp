// The megatron convention against Megatron-LM's own unit tests of its formula
// (tests/unit_tests/test_theoretical_memory_usage.py at commit c88312c9): a
// dense model of 2 layers, H 16, 8 heads of 4 (no GQA), FFN 64 (no SwiGLU),
// LayerNorm, vocabulary 128, tied embeddings; sequence 8, micro-batch 2.
// Megatron asserts 187200, 124800 (distributed optimizer over 2 ranks), 27008
// (sequence parallel with selective recompute) and 23520 (the other path) bytes.
#include <catch2/catch.hpp>

#include "smelt/error.hpp"
#include "smelt/memory.hpp"

using namespace smelt;

namespace {

CheckedConfig megatron_test_model() {
  ModelConfig c;
  c.name = "megatron-unit-test";
  c.vocab_size = 128;
  c.hidden_size = 16;
  c.num_layers = 2;
  c.context_length = 8;
  c.norm = NormType::layernorm;
  c.tie_embeddings = true;
  c.attention.num_heads = 8;
  c.attention.num_kv_heads = 8;
  c.attention.head_dim = 4;
  c.ffn.type = FfnType::plain;
  c.ffn.dense_width = 64;
  return CheckedConfig(c);
}

MemoryLayout megatron_layout() {
  MemoryLayout l;
  l.convention = MemoryConvention::megatron;
  l.seq = 8;
  l.micro_batch = 2;
  return l;
}

std::int64_t weight_and_optimizer(const StageMemory& s) {
  return s.weights.total + s.gradients.total + s.optimizer.total;
}

}  // namespace

TEST_CASE("megatron: weights and optimizer, 18 bytes per parameter of the first stage", "[memory][megatron]") {
  // Per layer: attention 2 x 16 x 16 x ((1 + 8/8) x (4 x 8 / 16)) = 2048, MLP 2 x 16 x 64 = 2048, two LayerNorms
  // 2 x 16 x 2 = 64: 4160. Block 2 x 4160 + final norm 32 = 8352; embedding 16 x 128 = 2048 (tied: once).
  // 10400 parameters x (2 bf16 + 4 fp32 gradient + 12 fp32 Adam) = 187200.
  const MemoryReport r = memory(megatron_test_model(), megatron_layout());
  REQUIRE(r.stages.size() == 1);
  const StageMemory& s = r.stages[0];
  CHECK(s.weights.total == 10400 * 2);
  CHECK(s.gradients.total == 10400 * 4);
  CHECK(weight_and_optimizer(s) == 187200);
  // The distributed optimizer over dp = 2: 6 + 12/2 bytes per parameter, 10400 x 12 = 124800.
  MemoryLayout l = megatron_layout();
  l.distributed_optimizer = true;
  l.dp = 2;
  CHECK(weight_and_optimizer(memory(megatron_test_model(), l).stages[0]) == 124800);
}

TEST_CASE("megatron: activations on its two paths", "[memory][megatron]") {
  // sbh = 8 x 2 x 16 = 256. Sequence parallel with selective recompute: 256 x (18 + 4 x 64/16) = 8704 per layer,
  // x 2 = 17408, + 8sb pp = 128, + sbh pp = 256, + the output layer and loss sbh x 4 (1 + 128/16) = 9216: 27008,
  // / tp 1.
  MemoryLayout l = megatron_layout();
  l.sequence_parallel = true;
  l.recompute = Recompute::selective;
  const MemoryPart sp = memory(megatron_test_model(), l).stages[0].activations;
  CHECK(sp.total == 27008);
  // Otherwise: 256 x (10 + 24/1) x 2 = 17408, + 128 + 256, + (logits 8 x 2 x 128 + sbh) x 2 = 4608: 22400, x 1.05.
  const MemoryPart plain = memory(megatron_test_model(), megatron_layout()).stages[0].activations;
  CHECK(plain.total == 23520);
  CHECK(plain.terms.size() == 3);
  CHECK(plain.terms[0].name == "layers");
  CHECK(plain.terms[0].bytes == 18278);  // 17408 x 1.05 = 18278.4
}

TEST_CASE("megatron: what the formula has no term for is refused", "[memory][megatron]") {
  MemoryLayout l = megatron_layout();
  l.zero = 1;
  l.inference = true;
  l.activation_dtype = Dtype::fp32;
  CHECK_THROWS_WITH(memory(megatron_test_model(), l),
                    "MemoryLayout::activation_dtype = fp32: must be bf16 or fp16 under the megatron convention (its "
                    "bytes are 16-bit activations)\n"
                    "MemoryLayout::inference = true: the megatron convention counts training memory only\n"
                    "MemoryLayout::zero = 1: the megatron convention knows the distributed optimizer, not ZeRO");
}
