// Loop forms beyond the SMELT recipe, counted by hand: the per-visit LoRA of a
// relaxed recursive span and a block-repeat config of two spans (examples/loops/),
// and the rules a LoRA's rank and targets must satisfy.
#include <catch2/catch.hpp>

#include "smelt/config_io.hpp"
#include "smelt/count.hpp"
#include "smelt/error.hpp"
#include "test_configs.hpp"

using namespace smelt;

namespace {

const std::string kLoops = SMELT_SOURCE_DIR "/examples/loops/";

using test::violations_of;

}  // namespace

TEST_CASE("relaxed recursive: a rank-16 LoRA on q and v for each pass of layers 4-9, by hand", "[loop_forms]") {
  const ModelConfig c = read_config(kLoops + "relaxed-recursive-lora.json");
  const CostReport r = count(c, {.context_length = 4096});
  // A layer: q 512 x 512 and o 512 x 512, k and v 512 x 256 -> 786,432; SwiGLU 3 x 512 x 1536 = 2,359,296;
  // norms 1,024 -> 3,146,752. x 12 = 37,761,024; final norm 512; embedding and head 2 x 32,000 x 512.
  // LoRA per layer and pass: 16 x ((512 + 512) + (512 + 256)) = 28,672; 6 layers x 2 passes = 344,064.
  CHECK(r.params.terms.loop_extras == 344'064);
  CHECK(r.params.total == 37'761'024 + 512 + 32'768'000 + 344'064);
  // FLOPs a token: 2 x 28,672 x 6 layers on each of 2 passes = 688,128.
  CHECK(r.flops.terms.loop_extras == 688'128.0);
  const ModelConfig bare = [&] {
    ModelConfig b = c;
    b.loops.front().lora_rank = 0;
    b.loops.front().lora_targets.clear();
    return b;
  }();
  CHECK(r.flops.forward == count(bare, {.context_length = 4096}).flops.forward + 688'128.0);
  CHECK(r.kv.bytes_per_token == count(bare, {.context_length = 4096}).kv.bytes_per_token);  // LoRA caches nothing
}

TEST_CASE("a block-repeat config of two spans, by hand", "[loop_forms]") {
  const CostReport r = count(read_config(kLoops + "block-repeat-two-spans.json"));
  CHECK(r.executed_layers == 12 + 3 * 1 + 3 * 2);  // 2-4 twice, 8-10 three times
  // 21 visits x 2 x 4 x 64 KV elements x 2 bytes
  CHECK(r.kv.bytes_per_token == 21 * 2 * 4 * 64 * 2);
  CHECK(r.params.total == 37'761'024 + 512 + 32'768'000);  // the spans store nothing more
}

TEST_CASE("a LoRA's rank and targets are checked, all at once", "[loop_forms]") {
  ModelConfig c = read_config(kLoops + "relaxed-recursive-lora.json");
  c.loops.front().lora_rank = 300;  // above k and v's 256
  c.loops.front().lora_targets = {LoraTarget::q, LoraTarget::k, LoraTarget::q};
  CHECK(violations_of(c) ==
        std::vector<std::string>{"loop.lora_rank = 300: must be at most 256, the smaller side of k (512 -> 256)",
                                 "loop.lora_targets[2] = \"q\": listed twice"});
  c.loops.front().lora_rank = 8;
  c.loops.front().lora_targets.clear();
  CHECK(violations_of(c) ==
        std::vector<std::string>{"loop.lora_targets = []: must name the projections a rank of 8 adapts"});
  ModelConfig moe = test::tiny_moe();  // layers 2-3 looped, both MoE; plain FFN has no gate either
  moe.ffn.type = FfnType::plain;
  moe.loops.front().lora_rank = 4;
  moe.loops.front().lora_targets = {LoraTarget::gate, LoraTarget::down, LoraTarget::o};
  CHECK(violations_of(moe) ==
        std::vector<std::string>{
            "loop.lora_targets[0] = \"gate\": a plain FFN has no gate",
            "loop.lora_targets[1] = \"down\": needs dense layers: the span holds MoE layers, whose experts this "
            "LoRA does not adapt"});
}

TEST_CASE("KV policies across visits: per visit, shared from the first, or the active tokens of each pass",
          "[loop_forms]") {
  ModelConfig c = test::tiny_dense(6);  // H 64, 2 KV heads of 16: 64 elements a token a visit; context 8
  c.loops = {{2, 4, 3, 1.0 / 3}};       // 6 + 3 x 2 = 12 visits
  const auto bytes = [&] { return count(c).kv.bytes_at_context; };
  CHECK(bytes() == 12 * 64 * 8 * 2);  // per visit: 12,288
  c.loops.front().kv_policy = KvPolicy::shared;
  CHECK(bytes() == 6 * 64 * 8 * 2);  // the span's later passes read the first's slots: 6 slots, 6,144
  c.loops.front().kv_policy = KvPolicy::active;
  c.loops.front().kv_keep = {1.0, 2.0 / 3, 1.0 / 3};  // Mixture-of-Recursions' default capacities for 3
  // each of the span's 3 layers holds 8 + int(5.33) + int(2.67) = 8 + 5 + 2 = 15 tokens; the other 3 hold 8
  CHECK(bytes() == (3 * 8 + 3 * 15) * 64 * 2);
  c.loops.front().kv_keep = {1.0, 0.5};
  CHECK(violations_of(c) == std::vector<std::string>{"loop.kv_keep = [1, 0.5]: must give one fraction per pass "
                                                     "(count = 3) with kv_policy = \"active\""});
  c.loops.front().kv_keep = {1.0, 0.0, 1.5};
  CHECK(violations_of(c) ==
        std::vector<std::string>{"loop.kv_keep[1] = 0: must be in (0, 1]", "loop.kv_keep[2] = 1.5: must be in (0, 1]"});
  c.loops.front().kv_policy = KvPolicy::per_visit;
  c.loops.front().kv_keep = {1.0};
  CHECK(violations_of(c) == std::vector<std::string>{"loop.kv_keep = [1]: only with kv_policy = \"active\""});
}
