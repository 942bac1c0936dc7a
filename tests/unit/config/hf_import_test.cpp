// Hugging Face config.json import rules: how each model_type's keys map onto
// ModelConfig (layer selection, windows, defaults, alternative spellings), and
// bad configs fail with exact messages naming their JSON path. The examples'
// field-by-field imports and published figures are in hf_published_test.cpp
// and hf_published_attention_test.cpp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hf_test_helpers.hpp"
#include "smelt/config_io.hpp"
#include "smelt/count.hpp"
#include "smelt/error.hpp"

using namespace smelt;
using namespace smelt::test;

namespace {

std::vector<std::string> hf_errors(const nlohmann::json& j) {
  try {
    (void)parse_hf_config(j.dump(), "config.json");
  } catch (const config_error& e) {
    return e.lines();
  }
  return {};
}

}  // namespace

TEST_CASE("an unknown model_type lists every supported one", "[hf_import]") {
  CHECK(hf_errors({{"model_type", "foo"}}) ==
        std::vector<std::string>{"model_type = \"foo\": not supported; supported: dbrx, deepseek_v2, deepseek_v3, "
                                 "gpt_oss, huginn_raven, llama, llama4, llama4_text, mistral, mixtral, nanbeige, "
                                 "olmoe, ouro, qwen2, qwen2_moe, qwen3, qwen3_moe, smelt"});
  const auto types = supported_hf_model_types();
  CHECK(std::is_sorted(types.begin(), types.end()));
  CHECK(types.size() == 18);
}

TEST_CASE("missing and mistyped fields are all reported, naming their JSON path", "[hf_import]") {
  auto j = example_json("mixtral-8x7b.json");
  j.erase("num_local_experts");
  CHECK(hf_errors(j) == std::vector<std::string>{"num_local_experts: missing (required)"});
  j["num_hidden_layers"] = "32";
  j["num_experts_per_tok"] = 2.5;
  CHECK(hf_errors(j) == std::vector<std::string>{"num_hidden_layers = \"32\": must be an integer",
                                                 "num_local_experts: missing (required)",
                                                 "num_experts_per_tok = 2.5: must be an integer"});

  auto dbrx = example_json("dbrx.json");
  dbrx["ffn_config"].erase("moe_top_k");
  dbrx["attn_config"] = 8;
  CHECK(hf_errors(dbrx) ==
        std::vector<std::string>{"attn_config = 8: must be an object", "ffn_config.moe_top_k: missing (required)"});

  auto scout = example_json("llama4-scout.json");
  scout["text_config"].erase("num_local_experts");
  scout["text_config"]["use_qk_norm"] = "yes";
  CHECK(hf_errors(scout) == std::vector<std::string>{"text_config.use_qk_norm = \"yes\": must be true or false",
                                                     "text_config.num_local_experts: missing (required)"});
  scout.erase("text_config");
  CHECK(hf_errors(scout) == std::vector<std::string>{"text_config: missing (required)"});
}

TEST_CASE("read_config names the file above the import's violations", "[hf_import]") {
  try {
    (void)read_config(example_path("no-such-model.json"));
    FAIL("expected an io_error");
  } catch (const io_error& e) {
    CHECK_THAT(e.what(), Catch::Contains("no-such-model.json"));
  }
}

TEST_CASE("imported values must still pass validation", "[hf_import]") {
  auto j = example_json("mixtral-8x7b.json");
  j["num_experts_per_tok"] = 9;
  CHECK(hf_errors(j) == std::vector<std::string>{"moe.top_k = 9: must be at most moe.num_experts = 8"});
}

TEST_CASE("a sliding_window on Mistral-family configs makes every layer slide", "[hf_import]") {
  auto j = example_json("mixtral-8x7b.json");
  j["sliding_window"] = 4096;
  const ModelConfig c = parse_hf_config(j.dump());
  CHECK(c.attention.pattern == std::vector<LayerAttention>{LayerAttention::sliding});
  CHECK(c.attention.window == 4096);

  j["model_type"] = "mistral";
  j.erase("num_local_experts");
  j["head_dim"] = nullptr;  // Mistral's "null": hidden / heads
  const ModelConfig m = parse_hf_config(j.dump());
  CHECK_FALSE(m.is_moe());
  CHECK(m.ffn.dense_width == 14336);
  CHECK(m.attention.head_dim == 128);
  CHECK(m.attention.window == 4096);
}

TEST_CASE("Qwen MoE layer selection follows decoder_sparse_step and mlp_only_layers", "[hf_import]") {
  auto j = example_json("qwen3-30b-a3b.json");
  j["decoder_sparse_step"] = 2;
  ModelConfig c = parse_hf_config(j.dump());
  CHECK(c.moe.every == 2);
  CHECK(c.moe.phase == 1);
  CHECK(c.moe.layers.empty());
  CHECK_FALSE(c.is_moe_layer(0));
  CHECK(c.is_moe_layer(1));

  j["decoder_sparse_step"] = 1;
  j["mlp_only_layers"] = {0, 47};
  c = parse_hf_config(j.dump());
  CHECK(c.moe.layers.size() == 46);
  CHECK(c.moe.layers.front() == 2);
  CHECK(c.moe.layers.back() == 47);
  CHECK_FALSE(c.is_moe_layer(0));
  CHECK_FALSE(c.is_moe_layer(47));

  auto qwen15 = example_json("qwen1.5-moe-a2.7b.json");
  std::vector<int> all(24);
  for (int i = 0; i < 24; ++i) all[static_cast<std::size_t>(i)] = i;
  qwen15["mlp_only_layers"] = all;
  const ModelConfig dense = parse_hf_config(qwen15.dump());
  CHECK_FALSE(dense.is_moe());
  CHECK(dense.moe == MoeConfig{});
  CHECK(dense.ffn.dense_width == 5632);

  j["mlp_only_layers"] = {48};
  CHECK(hf_errors(j) == std::vector<std::string>{"mlp_only_layers[0] = 48: must be a 0-based layer in 0..47"});

  j.erase("mlp_only_layers");
  j.erase("head_dim");  // Qwen3MoeConfig's default is 128, not hidden / heads = 64
  CHECK(parse_hf_config(j.dump()).attention.head_dim == 128);

  j["use_sliding_window"] = true;
  j["sliding_window"] = 4096;
  j["max_window_layers"] = 28;
  c = parse_hf_config(j.dump());
  CHECK(c.attention.pattern.size() == 48);
  CHECK(c.attention_at(27) == LayerAttention::full);
  CHECK(c.attention_at(28) == LayerAttention::sliding);
  CHECK(c.attention.window == 4096);
}

TEST_CASE("DeepSeek layer frequency, routing and MTP keys map onto the MoE rule", "[hf_import]") {
  auto j = example_json("deepseek-v2-lite.json");
  j["moe_layer_freq"] = 2;
  j["first_k_dense_replace"] = 3;
  j["n_shared_experts"] = nullptr;
  const ModelConfig c = parse_hf_config(j.dump());
  CHECK(c.moe.first_dense == 3);
  CHECK(c.moe.every == 2);
  CHECK(c.moe.phase == 0);
  CHECK_FALSE(c.is_moe_layer(2));
  CHECK(c.is_moe_layer(4));
  CHECK(c.moe.num_shared_experts == 0);
  CHECK(c.moe.shared_width == 0);
  CHECK(c.moe.router_score == RouterScore::softmax);
  CHECK_FALSE(c.moe.router_bias);
  CHECK(c.mtp_modules == 0);

  j.erase("q_lora_rank");
  j["scoring_func"] = "relu";
  j["attention_bias"] = true;
  CHECK(hf_errors(j) ==
        std::vector<std::string>{"q_lora_rank: missing (required)",
                                 "attention_bias = true: not supported for MLA (no released DeepSeek model uses it)",
                                 "scoring_func = \"relu\": must be \"softmax\" or \"sigmoid\""});
}

TEST_CASE("gpt-oss reads either top-k spelling, and layer_types must name known kinds", "[hf_import]") {
  auto j = example_json("gpt-oss-20b.json");
  j.erase("num_experts_per_tok");
  j["experts_per_token"] = 2;
  CHECK(parse_hf_config(j.dump()).moe.top_k == 2);
  j["num_experts_per_tok"] = 4;
  CHECK(hf_errors(j) == std::vector<std::string>{"experts_per_token = 2: must equal num_experts_per_tok = 4"});
  j["experts_per_token"] = 4;

  j.erase("layer_types");  // GptOssConfig's default: sliding on even layers
  CHECK(parse_hf_config(j.dump()).attention.pattern ==
        std::vector<LayerAttention>{LayerAttention::sliding, LayerAttention::full});

  j["layer_types"] = {"full_attention", "linear_attention"};
  CHECK(hf_errors(j) ==
        std::vector<std::string>{
            "layer_types[1] = \"linear_attention\": must be \"full_attention\", \"sliding_attention\" or "
            "\"chunked_attention\"",
            "layer_types has 2 entries: must have num_hidden_layers = 24"});
}

TEST_CASE("Llama 4 honours explicit no_rope_layers, moe_layers and a null chunk size", "[hf_import]") {
  auto j = example_json("llama4-scout.json");
  auto& t = j["text_config"];
  std::vector<int> rope(48, 1);
  rope[0] = 0;
  t["no_rope_layers"] = rope;
  t["moe_layers"] = {1, 3};
  ModelConfig c = parse_hf_config(j.dump());
  CHECK(c.attention.pattern.size() == 48);
  CHECK(c.attention_at(0) == LayerAttention::full);
  CHECK(c.attention_at(1) == LayerAttention::chunked);
  CHECK(c.moe.layers == std::vector<std::int64_t>{2, 4});

  t["attention_chunk_size"] = nullptr;
  t["moe_layers"] = nlohmann::json::array();
  c = parse_hf_config(j.dump());
  CHECK(c.attention.pattern == std::vector<LayerAttention>{LayerAttention::full});
  CHECK(c.attention.chunk == 0);
  CHECK_FALSE(c.is_moe());
  CHECK(c.ffn.dense_width == 16384);

  t["no_rope_layers"] = {1, 2};
  CHECK(hf_errors(j) == std::vector<std::string>{"text_config.no_rope_layers has 2 entries: must have "
                                                 "num_hidden_layers = 48",
                                                 "text_config.no_rope_layers[1] = 2: must be 0 or 1"});
}

TEST_CASE("the name comes from _name_or_path, and unknown keys are ignored", "[hf_import]") {
  auto j = example_json("llama-3.1-8b.json");
  j["_name_or_path"] = "meta-llama/Llama-3.1-8B";
  j["some_future_key"] = {{"anything", 1}};
  CHECK(parse_hf_config(j.dump()).name == "meta-llama/Llama-3.1-8B");
  j["tie_word_embeddings"] = true;
  j.erase("num_key_value_heads");  // defaults to num_attention_heads
  const ModelConfig c = parse_hf_config(j.dump());
  CHECK(c.tie_embeddings);
  CHECK(c.attention.num_kv_heads == 32);
}

TEST_CASE("every config under examples/hf imports and validates", "[hf_import]") {
  std::size_t seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(SMELT_SOURCE_DIR "/examples/hf")) {
    if (entry.path().extension() != ".json") continue;
    INFO(entry.path().string());
    CHECK_NOTHROW(count(read_config(entry.path())));
    ++seen;
  }
  CHECK(seen >= 12);
}

TEST_CASE("the KV cache element size follows the model's dtype", "[hf_import]") {
  auto j = example_json("llama-3.1-8b.json");
  j["torch_dtype"] = "bfloat16";
  CHECK(parse_hf_config(j.dump()).kv_cache_bytes == 2);
  j["torch_dtype"] = "float32";
  // 32 layers * 2 * 8 KV heads * 128 * 4 bytes = 262,144 bytes per token.
  CHECK(count(parse_hf_config(j.dump())).kv.bytes_per_token == 262144);
  j["dtype"] = "float8_e4m3fn";  // newer transformers spell it dtype, and it wins
  CHECK(parse_hf_config(j.dump()).kv_cache_bytes == 1);
  j.erase("dtype");
  j.erase("torch_dtype");
  CHECK(parse_hf_config(j.dump()).kv_cache_bytes == 2);
}

// The configs transformers 5.x writes, and the flags it builds from (issue: configs saved by transformers 5).
TEST_CASE("qwen3_moe reads num_local_experts, as transformers 5 saves it, or num_experts", "[hf_import]") {
  auto j = example_json("qwen3-30b-a3b.json");
  j.erase("num_experts");
  j["num_local_experts"] = 128;  // Qwen3MoeConfig's attribute_map: num_experts -> num_local_experts
  CHECK(parse_hf_config(j.dump()).moe.num_experts == 128);
  // Same model, same count as the Hub file: 30,532,122,624 (hf_published_test.cpp).
  CHECK(count(parse_hf_config(j.dump())).params.total == 30532122624);
  j["num_experts"] = nullptr;  // null is absent: the other spelling decides
  CHECK(parse_hf_config(j.dump()).moe.num_experts == 128);
  j["num_experts"] = 128;
  CHECK(parse_hf_config(j.dump()).moe.num_experts == 128);
  j["num_local_experts"] = 64;
  CHECK(hf_errors(j) == std::vector<std::string>{"num_local_experts = 64: must equal num_experts = 128"});
  j.erase("num_experts");
  j.erase("num_local_experts");
  CHECK(hf_errors(j) == std::vector<std::string>{"num_experts (or num_local_experts): missing (required)"});
}

TEST_CASE("qwen2_moe honours qkv_bias, default true", "[hf_import]") {
  auto j = example_json("qwen1.5-moe-a2.7b.json");
  CHECK(parse_hf_config(j.dump()).attention.qkv_bias);  // absent: Qwen2MoeConfig's default, true
  j["qkv_bias"] = false;
  const ModelConfig c = parse_hf_config(j.dump());
  CHECK_FALSE(c.attention.qkv_bias);
  // 24 layers x (q + 2 kv) = 24 x (2048 + 2 x 2048) = 147,456 biases fewer than 14,315,784,192.
  CHECK(count(c).params.total == 14315784192 - 147456);
}

TEST_CASE("deepseek_v3 always has its router bias and sigmoid scores, deepseek_v2 only with noaux_tc", "[hf_import]") {
  auto j = example_json("deepseek-v3.json");
  j.erase("topk_method");  // DeepseekV3Config in transformers 5 has neither key
  j.erase("scoring_func");
  const ModelConfig c = parse_hf_config(j.dump());
  CHECK(c.moe.router_bias);
  CHECK(c.moe.router_score == RouterScore::sigmoid);
  // The published 671,026,419,200 includes e_score_correction_bias: 58 MoE layers x 256 experts = 14,848.
  CHECK(count(c).params.total == 671026419200);
  j["topk_method"] = "greedy";  // transformers ignores it: DeepseekV3TopkRouter always adds the bias
  CHECK(parse_hf_config(j.dump()).moe.router_bias);

  auto v2 = example_json("deepseek-v2-lite.json");
  CHECK_FALSE(parse_hf_config(v2.dump()).moe.router_bias);  // topk_method "greedy"
  v2["topk_method"] = "noaux_tc";
  CHECK(parse_hf_config(v2.dump()).moe.router_bias);
}

TEST_CASE("the llama4 wrapper ties the head from text_config, ignoring a top-level flag", "[hf_import]") {
  auto j = example_json("llama4-scout.json");
  j["tie_word_embeddings"] = true;  // Llama4ForConditionalGeneration does not read it
  j["text_config"]["tie_word_embeddings"] = false;
  CHECK_FALSE(parse_hf_config(j.dump()).tie_embeddings);
  j["tie_word_embeddings"] = false;
  j["text_config"]["tie_word_embeddings"] = true;
  CHECK(parse_hf_config(j.dump()).tie_embeddings);
}

TEST_CASE("dbrx takes its KV cache element size from the dtype", "[hf_import]") {
  auto j = example_json("dbrx.json");
  CHECK(parse_hf_config(j.dump()).kv_cache_bytes == 2);  // torch_dtype bfloat16
  j["torch_dtype"] = "float32";
  // 40 layers x 2 x 8 KV heads x 128 (6144 / 48) x 4 bytes = 327,680 bytes per token.
  CHECK(count(parse_hf_config(j.dump())).kv.bytes_per_token == 327680);
  j["dtype"] = "float8_e4m3fn";
  CHECK(parse_hf_config(j.dump()).kv_cache_bytes == 1);
}
