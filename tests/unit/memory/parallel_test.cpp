// memory() under the parallel layouts memory_test.cpp leaves out, by hand on
// examples/tiny-moe.json at micro-batch 2 x 16 tokens in fp32 (its per-visit
// figures are memory_test.cpp's: a dense visit 158,208 bytes, an MoE visit
// 194,176; outside the layers the token ids 272 on the first stage and the
// final norm, head input, loss 152,964 on the last; 369,728 parameters, 114
// tensors). Visits 1, 2, 3, 2, 3, 4 (layers 2-3 looped twice).
#include <catch2/catch.hpp>

#include <string>

#include "smelt/config_io.hpp"
#include "smelt/memory.hpp"
#include "tiny_moe_layout.hpp"

using namespace smelt;

namespace {

using test::small;
using test::term;
using test::tiny;

}  // namespace

TEST_CASE("an uneven pipeline: its stages' layers, visits and micro-batches in flight", "[memory][parallel]") {
  MemoryLayout l = small();
  l.pp = 2;
  l.pp_layers = {1, 3};
  const MemoryReport r = memory(tiny(), l);
  REQUIRE(r.stages.size() == 2);
  const StageMemory &first = r.stages[0], &last = r.stages[1];
  // Stage 0: layer 1 (dense) and the embedding: 36,992 + 64,000 = 100,992 parameters, 10 tensors; visit 1 and
  // the token ids, for pp - 0 = 2 micro-batches in flight.
  CHECK(first.weights.total == 100992 * 4);
  CHECK(term(first.optimizer, "moments") == 2 * 100992 * 4);
  CHECK(term(first.optimizer, "step") == 10 * 4);
  CHECK(first.activations_per_micro_batch == 158208 + 272);
  CHECK(first.activations.total == 2 * (158208 + 272));
  // Stage 1: the other 268,736 parameters; visits 2, 3, 2, 3, 4 (five MoE visits) and the loss, one in flight.
  CHECK(last.weights.total == 268736 * 4);
  CHECK(last.activations.total == 5 * 194176 + 152964);
}

TEST_CASE("an interleaved pipeline holds Megatron-LM's warm-up chunks", "[memory][parallel]") {
  MemoryLayout l = small();
  l.pp = 2;
  l.vpp = 2;
  l.microbatches = 8;
  const MemoryReport r = memory(tiny(), l);
  // Stage 0 warms up with 2 (pp - 0 - 1) + (vpp - 1) pp = 4 chunks and holds one more: 5 chunks of its 2 (vpp),
  // each half its activations per micro-batch: visits 1, 2, 2 and the token ids, 546,832 x 5 / 2.
  CHECK(r.stages[0].in_flight == 5);
  CHECK(r.stages[0].activations_per_micro_batch == 158208 + 2 * 194176 + 272);
  CHECK(r.stages[0].activations.total == 546832 * 5 / 2);
  // Stage 1: 2 (2 - 1 - 1) + 2 + 1 = 3 chunks; visits 3, 3, 4 and the loss.
  CHECK(r.stages[1].in_flight == 3);
  CHECK(r.stages[1].activations.total == (3 * 194176 + 152964) * 3 / 2);
  // Fewer micro-batches than that: at most all of them, 2 micro-batches x 2 chunks.
  l.microbatches = 2;
  CHECK(memory(tiny(), l).stages[0].in_flight == 4);
}

TEST_CASE("the distributed optimizer shards Adam's state over the data-parallel ranks", "[memory][parallel]") {
  MemoryLayout l = small();
  l.dp = 4;
  l.distributed_optimizer = true;
  const StageMemory s = memory(tiny(), l).stages[0];
  // Dense state over dp x cp = 4, routed experts over their own data-parallel ranks, tp cp dp / (ep etp) = 4.
  CHECK(term(s.optimizer, "moments") == 2 * 1478912 / 4);
  CHECK(s.gradients.total == 1478912);  // gradients stay whole
}

TEST_CASE("expert tensor parallelism splits the expert widths", "[memory][parallel]") {
  MemoryLayout l = small();
  l.tp = 2;
  l.etp = 2;
  const StageMemory s = memory(tiny(), l).stages[0];
  // 8 experts x 3 x 64 x 32 = 49,152 parameters a layer, halved over etp, x 3 MoE layers x 4 bytes.
  CHECK(term(s.weights, "experts") == 49152 / 2 * 3 * 4);
}

TEST_CASE("context parallelism halves every per-token activation", "[memory][parallel]") {
  MemoryLayout l = small();
  l.cp = 2;
  // Every term is per token (the softmax over 8 of the 16 query rows, the mask's rows too) but the loss's
  // 4-byte weight total: (1,282,324 - 4) / 2 + 4.
  CHECK(memory(tiny(), l).stages[0].activations.total == (1282324 - 4) / 2 + 4);
}
