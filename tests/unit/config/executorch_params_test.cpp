// ExecuTorch's Llama params.json with block_repeat_config: the ModelArgs
// defaults (hidden_dim from dim, ffn_dim_multiplier and multiple_of), several
// repeated spans counted by hand, the export back, and every bad value named.
#include <limits>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "smelt/config_io.hpp"
#include "smelt/count.hpp"
#include "smelt/error.hpp"
#include "smelt/export.hpp"
#include "smelt/file_io.hpp"

using namespace smelt;

namespace {

const std::string kExample = SMELT_SOURCE_DIR "/examples/executorch/llama3.2-1b-block-repeat.json";

nlohmann::json example() { return nlohmann::json::parse(read_text_file(kExample)); }

std::vector<std::string> executorch_errors(const nlohmann::json& j) {
  try {
    (void)parse_config(j.dump());
  } catch (const config_error& e) {
    return e.lines();
  }
  return {};
}

}  // namespace

TEST_CASE("a Llama 3.2 1B params.json with two repeated blocks, counted by hand", "[executorch]") {
  const ModelConfig c = read_config(kExample);
  // hidden_dim absent: int(2 x 4 x 2048 / 3) = 5461, x 1.5 = 8191 (int), up to a multiple of 256: 8192.
  CHECK(c.ffn.dense_width == 8192);
  CHECK(c.attention.head_dim == 64);  // 2048 / 32
  // {"start": 4, "end": 8, "count": 2}: 0-based layers 4..7 (1-based 5-8) twice; 10..13 (11-14) three times.
  CHECK(c.loops == std::vector<LoopConfig>{{5, 8, 2, 1.0}, {11, 14, 3, 1.0}});
  const CostReport r = count(c);
  CHECK(r.executed_layers == 28);  // 16 + 4 x 1 + 4 x 2
  // A layer: q and o 2 x 2048 x 2048 = 8,388,608; k and v 2 x 2048 x 512 = 2,097,152; SwiGLU
  // 3 x 2048 x 8192 = 50,331,648; norms 2 x 2048 = 4,096 -> 60,821,504. x 16 = 973,144,064; final norm 2048;
  // tok_embeddings and the untied output 2 x 128,256 x 2048 = 525,336,576.
  CHECK(r.params.total == 1'498'482'688);
  CHECK(r.kv.bytes_per_token == 28 * 2 * 512 * 2);  // 57,344: one slot per visit
  CHECK(r.context_length == 2048);                  // max_seq_len's default
}

TEST_CASE("the params.json export writes the spans back as block_repeat_config", "[executorch]") {
  const ModelConfig c = read_config(kExample);
  const auto out = nlohmann::json::parse(export_executorch(c));
  CHECK(out["block_repeat_config"] ==
        nlohmann::json::parse(R"([{"start": 4, "end": 8, "count": 2}, {"start": 10, "end": 14, "count": 3}])"));
  CHECK(out["hidden_dim"] == 8192);
  ModelConfig back = parse_config(out.dump());
  back.name = c.name;
  CHECK(back == c);
  ModelConfig scaled = c;
  scaled.loops.front().residual_scale = 0.5;  // ExecuTorch repeats without a scale
  CHECK_THROWS_WITH(export_executorch(scaled),
                    Catch::StartsWith("loops = [{\"count\":2,\"residual_scale\":0.5,\"span\":\"5-8\"},{\"count\":3,"));
}

TEST_CASE("bad params.json values are all named at once", "[executorch]") {
  auto j = example();
  j["block_repeat_config"] = nlohmann::json::parse(
      R"([{"start": 6, "end": 4, "count": 2}, {"start": 2, "end": 99, "count": 2}, 7, {"start": 0, "end": 2}])");
  j["post_attention_norm"] = true;
  j["moe"] = true;
  CHECK(executorch_errors(j) ==
        std::vector<std::string>{
            "post_ffn_norm = false: must equal post_attention_norm: smelt's sandwich norms both sublayers",
            "moe = true: not read: this params.json reader has no such layer",
            "block_repeat_config[0] = {\"start\": 6, \"end\": 4}: must satisfy 0 <= start < end <= n_layers = 16 "
            "(0-based, end exclusive)",
            "block_repeat_config[1] = {\"start\": 2, \"end\": 99}: must satisfy 0 <= start < end <= n_layers = 16 "
            "(0-based, end exclusive)",
            "block_repeat_config[2] = 7: must be an object", "block_repeat_config[3].count: missing (required)"});
  j = example();
  j["block_repeat_config"] = nlohmann::json::parse(R"([{"start": 4, "end": 8, "count": 0},
                                                         {"start": 6, "end": 10, "count": 2}])");
  CHECK(executorch_errors(j) ==
        std::vector<std::string>{"loops[0].count = 0: must be positive",
                                 "loops[1].span = \"7-10\": must start after loops[0].span \"5-8\" "
                                 "ends: spans are disjoint and in layer order"});
}

TEST_CASE("multiple_of is bounded before the FFN width is rounded up to it", "[executorch]") {
  // INT64_MAX once overflowed h + multiple_of - 1 and was reported as ffn.dense_width = 0.
  auto j = example();
  j["multiple_of"] = std::numeric_limits<std::int64_t>::max();
  CHECK(executorch_errors(j) ==
        std::vector<std::string>{"multiple_of = 9223372036854775807: must be at most 16777216"});
  j["multiple_of"] = 0;
  CHECK(executorch_errors(j) == std::vector<std::string>{"multiple_of = 0: must be positive"});
  // The largest dim: int(8 x 16,777,216 / 3) = 44,739,242, x 1.5 is over the width bound, which
  // ffn_dim_multiplier names; without it, rounded up to 256: 44,739,328, named as the absent hidden_dim's default.
  j = example();
  j["dim"] = 16777216;
  j["n_heads"] = 16384;
  j.erase("ffn_dim_multiplier");
  CHECK(executorch_errors(j) ==
        std::vector<std::string>{
            "hidden_dim = absent: its default from dim = 16777216 and multiple_of = 256 is 44739328: must be at most "
            "16777216"});
  // A bounded multiple_of still rounds as ModelArgs does: 8191 up to a multiple of 1000 is 9000.
  j = example();
  j["multiple_of"] = 1000;
  CHECK(parse_config(j.dump()).ffn.dense_width == 9000);
  CHECK_THROWS_WITH(read_config(SMELT_SOURCE_DIR "/tests/data/hostile/executorch-multiple-of-overflow.json"),
                    Catch::Contains("multiple_of = 9223372036854775807: must be at most 16777216"));
}
