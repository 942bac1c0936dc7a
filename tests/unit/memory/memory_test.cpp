// memory(): hand-computed bytes for examples/tiny-moe.json (H 64, V 1000
// untied, 4 layers, 4 heads of 16 with 2 KV heads, layer 1 dense (width
// 128), layers 2-4 MoE (8 experts of width 32, top-2, one shared expert of
// 32), layers 2-3 looped twice: visits 1, 2, 3, 2, 3, 4), fp32, micro-batch 2
// of 16 tokens: N = 32. The same totals were measured on the reference model
// with saved_tensors_hooks and torch.optim.AdamW (benchmarks/memory_probe.py).
#include <catch2/catch.hpp>

#include <string>

#include "smelt/config_io.hpp"
#include "smelt/error.hpp"
#include "smelt/memory.hpp"
#include "tiny_moe_layout.hpp"

using namespace smelt;

namespace {

using test::small;
using test::term;
using test::tiny;

std::string message_of(const MemoryLayout& l) {
  try {
    memory(tiny(), l);
  } catch (const config_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("tiny-moe's activations, run by run of visits, to the byte", "[memory]") {
  const MemoryReport r = memory(tiny(), small());
  REQUIRE(r.stages.size() == 1);
  const StageMemory& s = r.stages[0];
  CHECK(s.layer_visits == 6);
  // Layer 1 (dense); layers 2-3 on both passes of the loop (MoE): 4 visits; layer 4 (MoE, after the loop).
  REQUIRE(s.visit_runs.size() == 3);
  const VisitRun& loop = s.visit_runs[1];
  CHECK((loop.first_layer == 2 && loop.last_layer == 3 && loop.step == 1));
  CHECK((loop.first_visit == 1 && loop.last_visit == 2 && loop.count == 4 && loop.moe));
  CHECK((s.visit_runs[2].first_layer == 4 && s.visit_runs[2].count == 1 && s.visit_runs[2].moe));
  // RMSNorm (fp32): its input, the normalized values (2 N H 4) and 1/rms per token (N 4): 16384 + 128.
  CHECK(term(s.visit_runs[0].activations, "attention_norm") == 16512);
  // Attention: input N H 4 = 8192; RoPE cos and sin for q and k: 4 x 16 x 8 x 4 = 2048; q, repeated K and V and
  // the heads' output, 4 x N x 64 x 4 = 32768; the mask 16 x 16 bools = 256; softmax 2 x 4 x 16 x 16 x 4 = 8192.
  CHECK(term(s.visit_runs[0].activations, "attention") == 8192 + 2048 + 32768 + 256 + 8192);
  // Dense FFN (SwiGLU, 128): input 8192 + gate, up, SiLU and product 4 x N x 128 x 4 = 65536.
  CHECK(term(s.visit_runs[0].activations, "ffn") == 73728);
  // MoE: input 8192; softmax N E 4 = 1024; top-k weights and their sum (64 + 32) x 4 = 384; choices 64 x 8 = 512;
  // sort order and slot tokens 2 x 64 x 8 = 1024; gathered tokens 64 x 64 x 4 = 16384; slot weights 256; expert
  // SwiGLU 4 x 64 x 32 x 4 = 32768; outputs and weighted outputs 2 x 16384; shared expert 4 x 32 x 32 x 4 = 16384.
  CHECK(term(s.visit_runs[1].activations, "moe") ==
        8192 + 1024 + 384 + 512 + 1024 + 16384 + 256 + 32768 + 2 * 16384 + 16384);
  CHECK(s.visit_runs[1].activations.total == 2 * 16512 + 51456 + 109696);
  // Outside the layers: token ids 2 x 17 x 8 = 272; final norm 16512; head input 8192; log-softmax N V 4 = 128000;
  // targets 32 x 8 = 256; the loss's weight total 4.
  CHECK(term(s.activations, "token_ids") == 272);
  CHECK(term(s.activations, "log_probabilities") == 128000);
  // 1 dense visit (158208) + 5 MoE visits (194176 each) + 153236 outside = what the hooks saw.
  CHECK(s.activations.total == 158208 + 5 * 194176 + 153236);
  CHECK(s.activations.total == 1282324);
}

TEST_CASE("tiny-moe's weights, gradients and AdamW state", "[memory]") {
  const MemoryReport r = memory(tiny(), small());
  const StageMemory& s = r.stages[0];
  CHECK(s.weights.total == 1478912);  // 369728 parameters x 4
  CHECK(s.gradients.total == 1478912);
  // Two moments, and AdamW's float32 `step` for each of the 114 parameter tensors.
  CHECK(s.optimizer.total == 2 * 1478912 + 114 * 4);
  // The backward's peak is its first op, the cross-entropy's: the gradients of the log-probabilities and of the
  // logits, 2 x 32 tokens x 1000 x 4 bytes, less the targets (256) and loss weight (4) it has freed.
  CHECK(s.transient.total == 2 * 32 * 1000 * 4 - 256 - 4);
  CHECK(s.transient.terms.front().name == "loss_backward");
  CHECK(r.total == 2 * 1478912 + 2958280 + 1282324 + 255740);
}

TEST_CASE("tensor and expert parallelism divide the weights", "[memory]") {
  MemoryLayout l = small();
  l.tp = 2;
  l.ep = 2;
  const StageMemory s = memory(tiny(), l).stages[0];
  // Attention 64 x (64 + 32 + 32) + 64 x 64 = 12288 a layer, halved, x 4 layers x 4 bytes.
  CHECK(term(s.weights, "attention") == 12288 / 2 * 4 * 4);
  // Routed experts 8 x 3 x 64 x 32 = 49152 a layer, 4 of 8 experts on a rank, x 3 MoE layers x 4 bytes.
  CHECK(term(s.weights, "experts") == 49152 / 2 * 3 * 4);
  // The router (64 x 8 a layer) and the norms stay whole on every rank.
  CHECK(term(s.weights, "router") == 64 * 8 * 3 * 4);
}

TEST_CASE("a pipeline's first stage holds a micro-batch per stage", "[memory]") {
  MemoryLayout l = small();
  l.pp = 2;
  const MemoryReport r = memory(tiny(), l);
  REQUIRE(r.stages.size() == 2);
  CHECK(r.stages[0].layers == std::vector<std::int64_t>{1, 2});
  CHECK(r.stages[0].in_flight == 2);  // 1F1B: stage s of pp holds pp - s micro-batches
  CHECK(r.stages[1].in_flight == 1);
  CHECK(r.stages[0].activations.total == 2 * r.stages[0].activations_per_micro_batch);
  // Stage 0: visits 1 (dense), 2, 2 (MoE) and the token ids: 158208 + 2 x 194176 + 272.
  CHECK(r.stages[0].activations_per_micro_batch == 158208 + 2 * 194176 + 272);
}

TEST_CASE("ZeRO stages shard optimizer, gradients, weights over dp", "[memory]") {
  MemoryLayout l = small();
  l.dp = 4;
  for (std::int64_t zero : {0, 1, 2, 3}) {
    l.zero = zero;
    const StageMemory s = memory(tiny(), l).stages[0];
    CHECK(term(s.optimizer, "moments") == (zero >= 1 ? 2 * 1478912 / 4 : 2 * 1478912));
    CHECK(s.gradients.total == (zero >= 2 ? 1478912 / 4 : 1478912));
    CHECK(s.weights.total == (zero >= 3 ? 1478912 / 4 : 1478912));
  }
}

TEST_CASE("full recompute keeps each visit input alone, selective drops the mask and softmax", "[memory]") {
  MemoryLayout l = small();
  l.recompute = Recompute::full;
  CHECK(memory(tiny(), l).stages[0].visit_runs[0].activations.total == 32 * 64 * 4);
  l.recompute = Recompute::selective;
  CHECK(term(memory(tiny(), l).stages[0].visit_runs[0].activations, "attention") == 51456 - 256 - 8192);
}

TEST_CASE("the korthikanti convention: sbh (34 + 5as/h) per layer visit", "[memory]") {
  MemoryLayout l = small();
  l.convention = MemoryConvention::korthikanti;
  const StageMemory s = memory(tiny(), l).stages[0];
  // 16 x 2 x 64 x 34 = 69632 and 5 x 4 x 16 x 16 x 2 = 10240, for each of the 6 visits.
  CHECK(s.visit_runs[0].activations.total == 69632 + 10240);
  CHECK(s.activations.total == 6 * (69632 + 10240));
  CHECK(memory(tiny(), l).layout.activation_dtype == Dtype::bf16);  // the convention's default
}

TEST_CASE("a bad layout names every field, value and rule at once", "[memory]") {
  MemoryLayout l = small();
  l.tp = 3;
  l.ep = 3;
  l.pp = 2;
  l.pp_layers = {1, 2};
  const std::string m = message_of(l);
  CHECK_THAT(m, Catch::Contains("MemoryLayout::tp = 3: must divide attention.num_heads (4)"));
  CHECK_THAT(m, Catch::Contains("MemoryLayout::ep = 3: must divide moe.num_experts (8)"));
  CHECK_THAT(m, Catch::Contains("MemoryLayout::pp_layers = 1,2: must sum to the layers (4), not 3"));
  l = small();
  l.micro_batch = std::int64_t{1} << 40;
  CHECK(message_of(l) == "MemoryLayout::micro_batch = 1099511627776: must be at most 16777216");
  CHECK_THROWS_AS(parse_device_memory("-1GiB", "d"), config_error);
  CHECK(parse_device_memory("141GiB", "d").bytes == 141 * (std::int64_t{1} << 30));
  CHECK(parse_device_memory("H200", "d").bytes == 141 * (std::int64_t{1} << 30));
}
