// The native format: byte-for-byte round trips and exact error messages.
#include <catch2/catch.hpp>

#include "scratch_dir.hpp"
#include "smelt/config_io.hpp"
#include "smelt/error.hpp"
#include "smelt/file_io.hpp"
#include "test_configs.hpp"

using namespace smelt;

namespace {
std::string example_text(const char* name) { return read_text_file(std::string(SMELT_SOURCE_DIR "/examples/") + name); }

std::vector<std::string> errors_of(const std::string& text) {
  try {
    (void)parse_native_config(text, "t.json");
  } catch (const config_error& e) {
    return e.lines();
  }
  return {};
}
}  // namespace

TEST_CASE("the native examples round-trip byte for byte", "[native_json]") {
  for (const char* name : {"smelt-baseline-12l.json", "smelt-looped-12l.json", "mixtral-8x7b.json", "tiny-moe.json",
                           "deepseek-v3-mla.json"}) {
    INFO(name);
    const std::string text = example_text(name);
    CHECK(to_json(parse_native_config(text)) == text);
  }
}

TEST_CASE("configs built in code round-trip through JSON to an equal value", "[native_json]") {
  for (ModelConfig c : {test::tiny_moe(), test::mixtral_8x7b(), test::olmoe_1b_7b()}) {
    c.attention.pattern = {LayerAttention::sliding, LayerAttention::full};
    c.attention.window = 128;
    const std::string text = to_json(c);
    const ModelConfig back = parse_native_config(text);
    CHECK(back == c);
    CHECK(to_json(back) == text);
  }
}

TEST_CASE("an explicit MoE layer list and a one-third residual scale survive the round trip", "[native_json]") {
  ModelConfig c = test::tiny_moe();
  c.moe.layers = {2, 4};
  c.moe.first_dense = 0;  // the list replaces the rule, which is not written
  c.loops = {{1, 4, 3, 1.0 / 3.0}};
  const ModelConfig back = parse_native_config(to_json(c));
  CHECK(back.moe.layers == std::vector<std::int64_t>{2, 4});
  CHECK(back.loops.front().residual_scale == 1.0 / 3.0);
  CHECK(back == c);
}

TEST_CASE("omitted fields take their documented defaults", "[native_json]") {
  const ModelConfig c = parse_native_config(R"({"schema_version": 1, "vocab_size": 10, "num_layers": 4,
    "hidden_size": 8, "attention": {"num_heads": 2, "num_kv_heads": 1, "head_dim": 4},
    "ffn": {"dense_width": 16}, "loop": {"span": "2-3"}})");
  CHECK(c.context_length == 4096);
  CHECK(c.kv_cache_bytes == 2);
  CHECK(c.ffn.type == FfnType::gated);
  CHECK(c.attention.pattern == std::vector<LayerAttention>{LayerAttention::full});
  CHECK(c.loops.front().count == 2);
  CHECK(c.loops.front().residual_scale == 0.5);
}

TEST_CASE("malformed JSON names the line and column", "[native_json]") {
  CHECK(errors_of("{\n  \"schema_version\": 1,\n  \"num_layers\": 4,,\n}") ==
        std::vector<std::string>{"t.json:3:19: malformed JSON: syntax error while parsing object key - unexpected "
                                 "','; expected string literal"});
}

TEST_CASE("wrong types, unknown keys and bad values are all reported together", "[native_json]") {
  CHECK(errors_of(R"({"schema_version": 1, "num_layers": 4, "hidden_sise": 64, "vocab_size": -3,
    "attention": {"num_heads": 6, "num_kv_heads": 4, "head_dim": "16", "pattern": ["full", "local"]},
    "moe": {"num_experts": 4, "top_k": 8, "expert_width": 32, "topk": 2}, "loop": {"span": "3-9"}})") ==
        std::vector<std::string>{
            "hidden_size: missing (required)",
            "attention.head_dim = \"16\": must be an integer",
            "attention.pattern[1] = \"local\": must be one of full, sliding, chunked",
            "moe.topk: unknown key (did you mean \"top_k\"?)",
            "hidden_sise: unknown key (did you mean \"hidden_size\"?)",
            "vocab_size = -3: must be positive",
            "attention.num_kv_heads = 4: must divide attention.num_heads = 6",
            "moe.top_k = 8: must be at most moe.num_experts = 4",
            "loop.span = \"3-9\": must satisfy 1 <= first <= last <= num_layers = 4",
        });
}

TEST_CASE("the schema version is checked", "[native_json]") {
  CHECK(errors_of(R"({"schema_version": 2})") == std::vector<std::string>{"schema_version = 2: must be 1"});
}

TEST_CASE("the format is detected from its keys", "[native_json]") {
  CHECK(detect_format(R"({"schema_version": 1})") == ConfigFormat::native);
  CHECK(detect_format(R"({"model_type": "mixtral"})") == ConfigFormat::huggingface);
  CHECK(detect_format(R"({"dim": 64, "n_layers": 2})") == ConfigFormat::executorch);
  CHECK_THROWS_WITH(detect_format("{}", "x.json"),
                    "x.json: cannot tell the format: expected \"schema_version\" (smelt native JSON), "
                    "\"model_type\" (Hugging Face config.json) or \"dim\" and \"n_layers\" (ExecuTorch "
                    "params.json)");
}

TEST_CASE("writing a file replaces it whole or not at all", "[native_json]") {
  const auto path = test::scratch_path("smelt_write_test.json");
  write_text_file(path, "first");
  write_text_file(path, "second");
  CHECK(read_text_file(path) == "second");
  CHECK_FALSE(std::filesystem::exists(path.string() + ".tmp"));
  std::filesystem::remove(path);
  CHECK_THROWS_AS(write_text_file("/nonexistent-dir/x.json", "x"), io_error);
}

TEST_CASE("a missing object is reported once, not again through its fields", "[native_json]") {
  CHECK(errors_of(R"({"schema_version": 1, "vocab_size": 10, "num_layers": 4, "hidden_size": 8,
    "ffn": {"dense_width": 16}, "loop": {"count": 2}})") ==
        std::vector<std::string>{"attention: missing (required)", "loop.span: missing (required)"});
}

TEST_CASE("several spans are written as \"loops\" and read back, one span stays \"loop\"", "[native_json]") {
  ModelConfig c = test::tiny_dense(6);
  c.loops = {{1, 2, 2, 0.5}, {4, 6, 3, 1.0 / 3.0}};
  const std::string text = to_json(c);
  CHECK(text.find("\"loops\": [") != std::string::npos);
  CHECK(text.find("\"loop\":") == std::string::npos);
  CHECK(parse_native_config(text) == c);
  c.loops = {{4, 6, 3, 1.0 / 3.0}};
  CHECK(to_json(c).find("\"loop\": {") != std::string::npos);
}

TEST_CASE("a config with both loop and loops, or a malformed loops list, is refused", "[native_json]") {
  const std::string head = R"({"schema_version": 1, "vocab_size": 10, "num_layers": 4, "hidden_size": 8,
    "attention": {"num_heads": 2, "num_kv_heads": 1, "head_dim": 4}, "ffn": {"dense_width": 16}, )";
  CHECK(errors_of(head + R"("loop": {"span": "2-3"}, "loops": [{"span": "4"}]})") ==
        std::vector<std::string>{
            "loops = [{\"span\":\"4\"}]: give either \"loop\" (one span) or \"loops\" (several), not both"});
  CHECK(errors_of(head + R"("loops": [{"span": "1-2", "count": 2}, 7]})") ==
        std::vector<std::string>{"loops[1] = 7: must be an object"});
  CHECK(errors_of(head + R"("loops": []})") ==
        std::vector<std::string>{"loops = []: must be a non-empty list of {\"span\", \"count\", ...}"});
}

TEST_CASE("a span's unknown words are named together: injection, KV policy, LoRA targets", "[native_json]") {
  CHECK(errors_of(R"({"schema_version": 1, "vocab_size": 10, "num_layers": 4, "hidden_size": 8,
    "attention": {"num_heads": 2, "num_kv_heads": 1, "head_dim": 4}, "ffn": {"dense_width": 16},
    "loop": {"span": "2-3", "injection": "gated", "kv_policy": "sometimes", "lora_rank": 2,
             "lora_targets": ["q", "qkv", 3], "kv_keep": "half"}})") ==
        std::vector<std::string>{"loop.injection = \"gated\": must be one of none, linear",
                                 "loop.kv_policy = \"sometimes\": must be one of per_visit, shared, active",
                                 "loop.kv_keep = \"half\": must be a list of fractions in (0, 1]",
                                 "loop.lora_targets[1] = \"qkv\": must be one of q, k, v, o, gate, up, down",
                                 "loop.lora_targets[2] = 3: must be a string"});
}
