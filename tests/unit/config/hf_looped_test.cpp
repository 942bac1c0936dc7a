// The looped families' Hugging Face configs: Ouro-1.4B and Ouro-2.6B import
// to the structure of ByteDance's modeling_ouro.py (the whole stack run
// total_ut_steps times, sandwich norms, a final norm and an exit gate after
// every step) and reproduce the published parameter totals to the integer.
#include <limits>

#include <catch2/catch.hpp>

#include "hf_test_helpers.hpp"
#include "smelt/config_io.hpp"
#include "smelt/count.hpp"
#include "smelt/error.hpp"

using namespace smelt;
using namespace smelt::test;

TEST_CASE("Ouro-1.4B: the whole stack looped 4 times, and its published 1,434,652,673 parameters", "[hf_looped]") {
  const ModelConfig c = read_config(example_path("ouro-1.4b.json"));
  CHECK(c.norm_placement == NormPlacement::sandwich);
  REQUIRE(c.loops.size() == 1);
  const LoopConfig& l = c.loops.front();
  CHECK((l.first == 1 && l.last == 24 && l.count == 4));
  CHECK(l.residual_scale == 1.0);  // Ouro adds each step's updates unscaled
  CHECK((l.norm_each_pass && l.exit_gate));
  CHECK(!c.attention.qkv_bias);  // unlike Qwen2, Ouro's projections have no bias
  const CostReport r = count(c, {.context_length = 4096});
  // Per layer: attention 4 x 2048 x 2048 = 16,777,216; SwiGLU 3 x 2048 x 5632 = 34,603,008; four norms
  // 4 x 2048 = 8,192 -> 51,388,416. x 24 = 1,233,321,984; embedding and head 2 x 49,152 x 2048 =
  // 201,326,592; final norm 2048; exit gate 2048 + 1 = 2049. The safetensors header's 269 tensors
  // hold 1,434,652,673 elements (2,869,336,434 bytes of bf16 with the header).
  CHECK(r.params.total == 1'434'652'673);
  CHECK(r.params.terms.loop_extras == 2'049);
  CHECK(r.params.terms.norms == 24 * 4 * 2048 + 2048);
  CHECK(r.executed_layers == 96);
  // KV: one slot per (step, layer), slot step x 24 + layer: 96 visits x 2 x 16 x 128 x 2 bytes.
  CHECK(r.kv.bytes_per_token == 786'432);
  // FLOPs a token at 4096: per visit 2 x 2048 x (2048 + 4096) + 2 x 2048^2 + 2 x 3 x 2048 x 5632 =
  // 102,760,448 matmul and 2 x 2 x 2048 x 2048.5 = 16,781,312 scores and values (2048.5 = 4097 / 2
  // keys on average); x 96 = 11,476,008,960; the gate 2 x 2048 x 4 steps = 16,384; the head 201,326,592.
  CHECK(r.flops.terms.loop_extras == 16'384);
  CHECK(r.flops.forward == 11'677'351'936.0);
}

TEST_CASE("Ouro-2.6B: 48 layers looped 4 times, 2,667,974,657 parameters", "[hf_looped]") {
  const CostReport r = count(read_config(example_path("ouro-2.6b.json")));
  CHECK(r.params.total == 2'667'974'657);  // 48 x 51,388,416 + 201,326,592 + 2048 + 2049
  CHECK(r.executed_layers == 192);
  CHECK(r.kv.bytes_per_token == 1'572'864);  // 192 visits x 8,192 bytes
}

TEST_CASE("Ouro's total_ut_steps: absent is 4, one step still stores the gate, a bad one is named", "[hf_looped]") {
  auto j = example_json("ouro-1.4b.json");
  j.erase("total_ut_steps");
  CHECK(parse_hf_config(j.dump()).loops.front().count == 4);  // OuroConfig's default
  j["total_ut_steps"] = 1;
  const CostReport one = count(parse_hf_config(j.dump()));
  CHECK(one.executed_layers == 24);
  CHECK(one.params.total == 1'434'652'673);
  j["total_ut_steps"] = 0;
  CHECK(count_errors(j) == std::vector<std::string>{"total_ut_steps = 0: must be between 1 and 1024"});
  j["total_ut_steps"] = 4;
  j["loop"] = {{"first_layer", 3}, {"last_layer", 4}, {"count", 2}};  // a second loop inside Ouro's own
  CHECK(count_errors(j) ==
        std::vector<std::string>{"loops[1].span = \"3-4\": must start after loops[0].span \"1-24\" ends: spans are "
                                 "disjoint and in layer order"});
}

TEST_CASE("an exit gate or a per-pass norm needs a span that ends at the last layer", "[hf_looped]") {
  ModelConfig c = read_config(example_path("ouro-1.4b.json"));
  c.loops.front().last = 12;
  CHECK_THROWS_WITH(validate(c), Catch::Contains("loop.norm_each_pass = true: needs a span that ends at the last "
                                                 "layer (24), not \"1-12\"") &&
                                     Catch::Contains("loop.exit_gate = true: needs a span that ends at the last "
                                                     "layer (24), not \"1-12\""));
}

TEST_CASE("Huginn-0125: prelude 2, a recurrent block of 4 run 32 times, coda 2, 3,564,976,800 parameters",
          "[hf_looped]") {
  const ModelConfig c = read_config(example_path("huginn-0125.json"));
  CHECK(c.norm_placement == NormPlacement::sandwich_residual);
  CHECK(c.attention.qk_bias);
  CHECK(c.tie_embeddings);
  REQUIRE(c.loops.size() == 1);
  const LoopConfig& l = c.loops.front();
  CHECK((l.first == 3 && l.last == 6 && l.count == 32 && l.residual_scale == 1.0));
  CHECK((l.injection == Injection::linear && !l.injection_bias && l.norm_after && l.backprop_passes == 8));
  const CostReport r = count(c, {.context_length = 4096});
  // A block: Wqkv 5280 x 15,840 = 83,635,200; qk_bias 2 x 5280 = 10,560; proj 5280^2 = 27,878,400;
  // GatedMLP fc 5280 x 35,840 = 189,235,200 and proj 17,920 x 5280 = 94,617,600; four norms 21,120 ->
  // 395,398,080. x 8 = 3,163,184,640; the tied embedding 65,536 x 5280 = 346,030,080; the adapter
  // 2 x 5280^2 = 55,756,800; ln_f 5280. The model card's "3.5B parameters".
  CHECK(r.params.total == 3'564'976'800);
  CHECK(r.params.terms.loop_extras == 55'756'800);
  CHECK(r.executed_layers == 132);  // 2 + 4 x 32 + 2: the config's own effective_expected_depth
  // KV in float32 (torch_dtype): 132 visits x 2 x 5280 x 4 bytes.
  CHECK(r.kv.bytes_per_token == 5'575'680);
  // A visit: 2 x 5280 x 15,840 + 2 x 5280^2 + 2 x 3 x 5280 x 17,920 = 790,732,800 and 4 x 5280 x 2048.5 =
  // 43,264,320 attended -> 833,997,120; x 132 = 110,087,619,840; the adapter 4 x 5280^2 x 32 = 3,568,435,200;
  // the tied head 2 x 5280 x 65,536 = 692,060,160.
  CHECK(r.flops.forward == 114'348'115'200.0);
  // Truncated backprop: the first 32 - 8 recurrences run forward only, so training skips 2 x 24 passes of
  // 4 x 833,997,120 + 111,513,600 (the adapter) = 3,447,502,080: 3 x forward - 165,480,099,840.
  CHECK(r.flops.training == 177'564'245'760.0);
}

TEST_CASE("Huginn's keys are checked: the depths, the recurrence and the module classes", "[hf_looped]") {
  auto j = example_json("huginn-0125.json");
  j["n_layers"] = 9;
  j["mean_recurrence"] = 0;
  j["injection_type"] = "add";
  j["bias"] = true;
  CHECK(count_errors(j) ==
        std::vector<std::string>{
            "bias = true: not read: no released Huginn has linear-layer biases",
            "injection_type = \"add\": must be \"linear\" (the one this reader knows)",
            "n_layers = 9: must equal n_layers_in_prelude + n_layers_in_recurrent_block + n_layers_in_coda = 8",
            "mean_recurrence = 0: must be between 1 and 1024"});
  j = example_json("huginn-0125.json");
  j["mean_recurrence"] = 4;  // at r = 4 the backprop depth of 8 covers every pass: full backprop
  const CostReport four = count(parse_hf_config(j.dump()));
  CHECK(four.executed_layers == 20);
  CHECK(four.flops.training == 3 * four.flops.forward);
}

TEST_CASE("Huginn's layer counts are bounded before they are summed, each named with its value", "[hf_looped]") {
  // Any of the three near INT64_MAX once wrapped the sum (signed overflow); each is now checked alone.
  constexpr std::int64_t kNearMax = 9'223'372'036'854'775'805;
  for (const char* key : {"n_layers_in_prelude", "n_layers_in_recurrent_block", "n_layers_in_coda"}) {
    INFO(key);
    auto j = example_json("huginn-0125.json");
    j[key] = kNearMax;
    CHECK(count_errors(j) ==
          std::vector<std::string>{std::string(key) + " = 9223372036854775805: must be at most 65536"});
  }
  auto j = example_json("huginn-0125.json");
  j["n_layers_in_prelude"] = -1;
  j["n_layers_in_recurrent_block"] = 0;
  j["n_layers_in_coda"] = std::numeric_limits<std::int64_t>::min();
  CHECK(count_errors(j) == std::vector<std::string>{"n_layers_in_prelude = -1: must be at least 0",
                                                    "n_layers_in_recurrent_block = 0: must be positive",
                                                    "n_layers_in_coda = -9223372036854775808: must be at least 0"});
  // The reproducer of the finding, as a user gives it: the prelude's key, value and rule.
  CHECK_THROWS_WITH(read_config(SMELT_SOURCE_DIR "/tests/data/hostile/huginn-layer-sum-overflow.json"),
                    Catch::Contains("n_layers_in_prelude = 9223372036854775805: must be at most 65536"));
}

TEST_CASE("Huginn's n_layers must be an integer whatever it says", "[hf_looped]") {
  const std::vector<std::pair<nlohmann::json, std::string>> cases{
      {"8 (ignored)", "n_layers = \"8 (ignored)\": must be an integer"},
      {nlohmann::json::array(), "n_layers = []: must be an integer"},
      {nlohmann::json::object(), "n_layers = {}: must be an integer"},
      {1.5, "n_layers = 1.5: must be an integer"},
  };
  for (const auto& [value, error] : cases) {
    auto j = example_json("huginn-0125.json");
    j["n_layers"] = value;
    CHECK(count_errors(j) == std::vector<std::string>{error});
  }
  auto j = example_json("huginn-0125.json");
  j["n_layers"] = 8.0;  // a whole number written as a float reads as the integer, as every integer key does
  CHECK(count_errors(j).empty());
  j.erase("n_layers");  // absent: the sum alone
  CHECK(count_errors(j).empty());
}
