// model_type "smelt": the config.json of smelt's transformers class holds the
// native config whole, so every config reads back byte for byte, and what does
// not fit (no native block, a copy that disagrees, another schema, a broken
// rule) is named under its place in the file.
#include <filesystem>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "hf_test_helpers.hpp"
#include "smelt/config_io.hpp"
#include "smelt/count.hpp"
#include "smelt/error.hpp"
#include "smelt/export.hpp"

using namespace smelt;
using namespace smelt::test;

namespace {

nlohmann::json exported(const char* example) {
  return nlohmann::json::parse(export_hf(read_config(std::string(SMELT_SOURCE_DIR "/examples/") + example), "smelt"));
}

}  // namespace

TEST_CASE("every example reads back from model_type smelt byte for byte, loops and extras included", "[hf_smelt]") {
  namespace fs = std::filesystem;
  int seen = 0;
  for (const char* dir : {"", "hf", "loops", "paper"}) {
    for (const auto& entry : fs::directory_iterator(fs::path(SMELT_SOURCE_DIR "/examples") / dir)) {
      if (entry.path().extension() != ".json") continue;
      ModelConfig c;
      try {
        c = read_config(entry.path().string());
      } catch (const error&) {
        continue;  // the paper folder holds reports and laws too
      }
      INFO(entry.path().string());
      const std::string text = export_hf(c, "smelt");
      CHECK(to_json(parse_hf_config(text)) == to_json(c));
      ++seen;
    }
  }
  CHECK(seen >= 25);
}

TEST_CASE("model_type smelt writes transformers' names beside the native block", "[hf_smelt]") {
  const auto j = exported("smelt-looped-12l.json");
  CHECK(j.at("architectures") == nlohmann::json::array({"SmeltForCausalLM"}));
  CHECK(j.at("model_type") == "smelt");
  // The copies: vocab 50,304, hidden 1,056, 12 layers, 10 heads, untied (examples/smelt-looped-12l.json).
  CHECK(j.at("vocab_size") == 50304);
  CHECK(j.at("hidden_size") == 1056);
  CHECK(j.at("num_hidden_layers") == 12);
  CHECK(j.at("num_attention_heads") == 10);
  CHECK(j.at("tie_word_embeddings") == false);
  CHECK(j.at("smelt").at("loop").at("span") == "4-9");
  CHECK(j.at("smelt").at("schema_version") == 1);
}

TEST_CASE("model_type smelt: a missing block, a disagreeing copy, another schema and a broken rule are named",
          "[hf_smelt]") {
  CHECK(count_errors({{"model_type", "smelt"}, {"hidden_size", 64}}) ==
        std::vector<std::string>{"smelt = missing: a config.json of model_type \"smelt\" holds the native config "
                                 "(docs/config.md) as the object \"smelt\""});
  CHECK(count_errors({{"model_type", "smelt"}, {"smelt", 3}}) ==
        std::vector<std::string>{"smelt = 3: a config.json of model_type \"smelt\" holds the native config "
                                 "(docs/config.md) as the object \"smelt\""});
  auto j = exported("smelt-looped-12l.json");
  j["hidden_size"] = 1024;
  j["num_hidden_layers"] = 13;
  CHECK(count_errors(j) ==
        std::vector<std::string>{
            "hidden_size = 1024: must equal smelt.hidden_size (1056): the native config is the model, this a copy",
            "num_hidden_layers = 13: must equal smelt.num_layers (12): the native config is the model, this a copy"});
  j = exported("smelt-looped-12l.json");
  j["smelt"]["schema_version"] = 2;
  CHECK(count_errors(j) == std::vector<std::string>{"smelt.schema_version = 2: must be 1"});
  j = exported("smelt-looped-12l.json");
  j["smelt"]["loop"]["span"] = "10-14";
  const auto loop = count_errors(j);
  REQUIRE(loop.size() == 1);
  CHECK(loop[0].starts_with("smelt.loop.span = \"10-14\": "));
  j = exported("smelt-looped-12l.json");
  j["smelt"]["attention"]["num_heads"] = "ten";
  const auto typed = count_errors(j);
  REQUIRE(!typed.empty());
  CHECK(typed[0].starts_with("smelt.attention.num_heads = \"ten\": "));
}

TEST_CASE("model_type smelt refuses a top-level loop: the loops are the native block's", "[hf_smelt]") {
  // The finding's input: smelt-looped-12l's export with a "loop" beside the block, once ignored silently.
  CHECK_THROWS_WITH(read_config(SMELT_SOURCE_DIR "/tests/data/hostile/smelt-hf-ignored-loop-block.json"),
                    Catch::Contains("loop = {\"count\":3,\"first_layer\":1,\"last_layer\":2}: not read for model_type "
                                    "\"smelt\": the loops are the native block's (smelt.loop or smelt.loops)"));
  auto j = exported("smelt-looped-12l.json");
  j["loops"] = nlohmann::json::array({{{"first_layer", 1}, {"last_layer", 2}, {"count", 3}}});
  CHECK(count_errors(j) ==
        std::vector<std::string>{"loops = [{\"count\":3,\"first_layer\":1,\"last_layer\":2}]: not read for model_type "
                                 "\"smelt\": the loops are the native block's (smelt.loop or smelt.loops)"});
  j["loops"] = nullptr;  // null is absent, as in every family
  CHECK(count_errors(j).empty());
}

TEST_CASE("model_type smelt compares the shape keys transformers' families spell alike", "[hf_smelt]") {
  // smelt-looped-12l: context 4096, dense width 0 (every layer MoE), 2 KV heads of 88 (examples/smelt-looped-12l.json).
  auto j = exported("smelt-looped-12l.json");
  const auto& native = j.at("smelt");
  j["max_position_embeddings"] = native.at("context_length");
  j["intermediate_size"] = native.at("ffn").at("dense_width");
  j["num_key_value_heads"] = native.at("attention").at("num_kv_heads");
  j["head_dim"] = native.at("attention").at("head_dim");
  CHECK(count_errors(j).empty());  // copies that agree are fine
  // Informational keys are not compared: transformers rewrites them on every save.
  j["_name_or_path"] = "/checkpoints/run-7";
  j["dtype"] = "float32";
  j["transformers_version"] = "5.24.0";
  CHECK(count_errors(j).empty());
  j["max_position_embeddings"] = 8192;
  j["intermediate_size"] = 4096;
  j["num_key_value_heads"] = 5;
  j["head_dim"] = 128;
  const auto d = [&](const char* path) { return native.at(nlohmann::json::json_pointer(path)).dump(); };
  CHECK(count_errors(j) ==
        std::vector<std::string>{"max_position_embeddings = 8192: must equal smelt.context_length (" +
                                     d("/context_length") + "): the native config is the model, this a copy",
                                 "intermediate_size = 4096: must equal smelt.ffn.dense_width (" +
                                     d("/ffn/dense_width") + "): the native config is the model, this a copy",
                                 "num_key_value_heads = 5: must equal smelt.attention.num_kv_heads (" +
                                     d("/attention/num_kv_heads") + "): the native config is the model, this a copy",
                                 "head_dim = 128: must equal smelt.attention.head_dim (" + d("/attention/head_dim") +
                                     "): the native config is the model, this a copy"});
  // MLA has no per-head keys and values: the two GQA keys are refused outright.
  auto mla = exported("deepseek-v3-mla.json");
  mla["num_key_value_heads"] = 128;
  mla["head_dim"] = 192;
  CHECK(
      count_errors(mla) ==
      std::vector<std::string>{"num_key_value_heads = 128: not read for model_type \"smelt\": smelt.attention.type is "
                               "\"mla\", which has no per-head keys and values",
                               "head_dim = 192: not read for model_type \"smelt\": smelt.attention.type is \"mla\", "
                               "which has no per-head keys and values"});
}
