// Hugging Face export: one config.json checked key by key, the round trip of
// every example (export, import, the same count report), the loop block's
// reading, and every refusal.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "smelt/config.hpp"
#include "smelt/config_io.hpp"
#include "smelt/count_report.hpp"
#include "smelt/error.hpp"
#include "smelt/export.hpp"
#include "smelt/file_io.hpp"
#include "smelt/solve.hpp"

namespace {

using smelt::ModelConfig;
namespace fs = std::filesystem;

const fs::path kExamples = fs::path(SMELT_SOURCE_DIR) / "examples";

std::string count_json(const ModelConfig& c) { return smelt::count_report_json({smelt::count_model(c)}); }

std::string error_of(const ModelConfig& c, std::string_view family) {
  try {
    smelt::export_hf(c, family);
  } catch (const smelt::config_error& e) {
    return e.what();
  }
  return "(no error)";
}

std::string hf_error(const std::string& text) {
  try {
    smelt::parse_hf_config(text);
  } catch (const smelt::config_error& e) {
    return e.what();
  }
  return "(no error)";
}

// Exports in the config's own family (its model_type, or the default for
// native JSON), imports, and requires the same count report.
void require_round_trip(const ModelConfig& c, const std::string& family) {
  const std::string exported = smelt::export_hf(c, family);
  const ModelConfig back = smelt::parse_hf_config(exported);
  CHECK(count_json(back) == count_json(c));
  CHECK(back.loops == c.loops);
}

}  // namespace

TEST_CASE("Hugging Face export of Qwen3-30B-A3B is its own schema, key by key", "[export]") {
  const std::string text = smelt::read_text_file(kExamples / "hf/qwen3-30b-a3b.json");
  const ModelConfig c = smelt::parse_hf_config(text);
  const auto out = nlohmann::json::parse(smelt::export_hf(c, smelt::hf_family_of(text)));
  const auto hub = nlohmann::json::parse(text);
  // Every key written carries the Hub file's value (norm_topk_prob: true there, as renormalize), except the two the Hub
  // file spells differently: _name_or_path (absent there, the import names the model after its type) and
  // mlp_only_layers/ decoder_sparse_step (equal here: 1 and []).
  for (const char* key : {"architectures",       "model_type",
                          "vocab_size",          "hidden_size",
                          "num_hidden_layers",   "max_position_embeddings",
                          "tie_word_embeddings", "num_attention_heads",
                          "num_key_value_heads", "head_dim",
                          "torch_dtype",         "hidden_act",
                          "attention_bias",      "intermediate_size",
                          "use_sliding_window",  "sliding_window",
                          "max_window_layers",   "num_experts",
                          "num_experts_per_tok", "moe_intermediate_size",
                          "decoder_sparse_step", "mlp_only_layers",
                          "norm_topk_prob"}) {
    INFO(key);
    CHECK(out.at(key) == hub.at(key));
  }
  CHECK(out.at("_name_or_path") == "qwen3_moe");
  CHECK(out.size() == 24);  // the 23 keys above and the name: no loop block without a loop
}

TEST_CASE("Hugging Face export writes the loop block, and the import reads it back", "[export]") {
  // The worked example: Qwen3-30B-A3B derived with the SMELT recipe (layers 13-36 twice, scale 1/2).
  const ModelConfig base = smelt::read_config(kExamples / "hf/qwen3-30b-a3b.json");
  const smelt::MatchResult match = smelt::solve(base, smelt::LoopRecipe{});
  const ModelConfig& derived = match.candidates.at(0).config;
  const auto out = nlohmann::json::parse(smelt::export_hf(derived, "qwen3_moe"));
  CHECK(out.at("loop") ==
        nlohmann::json{{"first_layer", 13}, {"last_layer", 36}, {"count", 2}, {"residual_scale", 0.5}});
  CHECK(out.at("_name_or_path") == "qwen3_moe-smelt");
  require_round_trip(derived, "qwen3_moe");
}

TEST_CASE("Every example config survives export and import with the same count report", "[export]") {
  for (const char* dir : {"", "hf", "paper"}) {
    for (const auto& entry : fs::directory_iterator(kExamples / dir)) {
      if (entry.path().extension() != ".json") continue;
      INFO(entry.path().string());
      const std::string text = smelt::read_text_file(entry.path());
      const ModelConfig c = smelt::parse_config(text);
      if (entry.path().filename() == "tiny-moe.json") {
        // A dense first layer with an ungated shared expert and no q/k norm: no family has that shape.
        CHECK_THROWS_WITH(smelt::export_hf(c), Catch::StartsWith("no Hugging Face family expresses this config; "
                                                                 "the first field each family cannot express:\n"
                                                                 "  mixtral: ffn.dense_width = 128: "));
        continue;
      }
      require_round_trip(c, smelt::hf_family_of(text));
    }
  }
}

TEST_CASE("Native configs default to the first family that expresses them", "[export]") {
  CHECK(smelt::default_hf_family(smelt::read_config(kExamples / "smelt-baseline-54b.json")) == "mixtral");
  CHECK(smelt::default_hf_family(smelt::read_config(kExamples / "deepseek-v3-mla.json")) == "deepseek_v3");
  CHECK(smelt::hf_family_of(smelt::read_text_file(kExamples / "smelt-baseline-54b.json")).empty());
  CHECK(smelt::hf_family_of(smelt::read_text_file(kExamples / "hf/llama4-maverick.json")) == "llama4");
}

TEST_CASE("Hugging Face export names every field a family cannot express", "[export]") {
  const ModelConfig mla = smelt::read_config(kExamples / "hf/deepseek-v3.json");
  CHECK(error_of(mla, "mixtral") ==
        "attention.type = \"mla\": the Hugging Face mixtral schema cannot express it (it reads back as \"gqa\")\n"
        "ffn.dense_width = 18432: the Hugging Face mixtral schema cannot express it (it reads back as 0)\n"
        "moe.num_shared_experts = 1: the Hugging Face mixtral schema cannot express it (it reads back as 0)\n"
        "moe.shared_width = 2048: the Hugging Face mixtral schema cannot express it (it reads back as 0)\n"
        "moe.router_bias = true: the Hugging Face mixtral schema cannot express it (it reads back as false)\n"
        "moe.router_score = \"sigmoid\": the Hugging Face mixtral schema cannot express it (it reads back as "
        "\"softmax\")\n"
        "moe.router_form = \"deepseek\": the Hugging Face mixtral schema cannot express it (it reads back as "
        "\"plain\")\n"
        "moe.layers = {\"every\":1,\"first_dense\":3,\"phase\":0}: the Hugging Face mixtral schema cannot express it "
        "(it reads back as {\"every\":1,\"first_dense\":0,\"phase\":0})\n"
        "mtp_modules = 1: the Hugging Face mixtral schema cannot express it (it reads back as 0)");
  const ModelConfig gpt_oss = smelt::read_config(kExamples / "hf/gpt-oss-20b.json");
  CHECK(error_of(gpt_oss, "mistral") ==
        "attention.qkv_bias = true: the Hugging Face mistral schema cannot express it (it reads back as false)\n"
        "attention.out_bias = true: the Hugging Face mistral schema cannot express it (it reads back as false)\n"
        "attention.sinks = true: the Hugging Face mistral schema cannot express it (it reads back as false)\n"
        "attention.pattern = [\"sliding\",\"full\"]: the Hugging Face mistral schema cannot express it (it reads back "
        "as [\"sliding\"])\n"
        "ffn.bias = true: the Hugging Face mistral schema cannot express it (it reads back as false)\n"
        "moe = {\"clamped_swiglu\":{\"alpha\":1.702,\"limit\":7.0},\"expert_width\"...: "
        "the Hugging Face mistral schema cannot express it (it reads back without it)");
  ModelConfig bad_name = gpt_oss;
  bad_name.name = "gpt\xff";  // JSON text is UTF-8: a name set through the API may not be
  CHECK(error_of(bad_name, "gpt_oss") == "name: must be UTF-8 text");
  CHECK(error_of(bad_name, "") == "name: must be UTF-8 text");
  CHECK(error_of(gpt_oss, "gpt-oss") ==
        "export_hf::family = \"gpt-oss\": must be one of dbrx, deepseek_v2, deepseek_v3, gpt_oss, huginn_raven, "
        "llama, llama4, llama4_text, mistral, mixtral, nanbeige, olmoe, ouro, qwen2, qwen2_moe, qwen3, qwen3_moe, "
        "smelt");
}

TEST_CASE("Ouro's loop travels in its own keys, and what its schema cannot hold is named", "[export]") {
  const ModelConfig ouro = smelt::read_config(kExamples / "hf/ouro-1.4b.json");
  const auto out = nlohmann::json::parse(smelt::export_hf(ouro, "ouro"));
  CHECK(out["total_ut_steps"] == 4);
  CHECK(out["architectures"] == nlohmann::json::array({"OuroForCausalLM"}));
  CHECK(!out.contains("loop"));  // no smelt loop block: total_ut_steps is the loop
  CHECK(smelt::default_hf_family(ouro) == "ouro");
  // Llama 3.1 with the SMELT recipe's loop, pre-norm: Ouro's schema loops the whole stack with sandwich norms.
  ModelConfig llama = smelt::read_config(kExamples / "hf/llama-3.1-8b.json");
  llama.loops = {{9, 24, 2, 0.5}};
  CHECK(error_of(llama, "ouro") ==
        "norm_placement = \"pre\": the Hugging Face ouro schema cannot express it (it reads back as \"sandwich\")\n"
        "loops = [{\"count\":2,\"residual_scale\":0.5,\"span\":\"9-24\"}]: the Hugging Face ouro schema cannot "
        "express it (it reads back as [{\"count\":1,\"exit_gate\":true,\"norm_each_pass\":true,\"residual...)");
}

TEST_CASE("Nanbeige's loop travels in num_loops and skip_loop_final_norm, and reads back", "[export]") {
  const ModelConfig nanbeige = smelt::read_config(kExamples / "hf/nanbeige4.2-3b.json");
  const auto out = nlohmann::json::parse(smelt::export_hf(nanbeige, "nanbeige"));
  CHECK(out["num_loops"] == 2);
  CHECK(out["skip_loop_final_norm"] == false);
  CHECK(out["loop_loss_weights"] == nlohmann::json::array());
  CHECK((out["head_dim"] == 128 && out["kv_channels"] == 128 && out["intermediate_size"] == 10752));
  CHECK(!out.contains("loop"));  // num_loops is the loop
  CHECK(smelt::default_hf_family(nanbeige) == "nanbeige");
  // Llama 3.1 with its whole stack run 3 times, unscaled and without the per-loop norm: skip_loop_final_norm.
  ModelConfig llama = smelt::read_config(kExamples / "hf/llama-3.1-8b.json");
  llama.loops = {{1, 32, 3, 1.0}};
  const auto looped = nlohmann::json::parse(smelt::export_hf(llama, "nanbeige"));
  CHECK((looped["num_loops"] == 3 && looped["skip_loop_final_norm"] == true));
  ModelConfig back = smelt::parse_hf_config(looped.dump());
  back.name = llama.name;
  CHECK(back == llama);
  // A span inside the stack, or a residual scale, is not Nanbeige's loop.
  llama.loops = {{9, 24, 2, 0.5}};
  CHECK(error_of(llama, "nanbeige") ==
        "loops = [{\"count\":2,\"residual_scale\":0.5,\"span\":\"9-24\"}]: the Hugging Face nanbeige schema cannot "
        "express it (it reads back as [])");
}

TEST_CASE("The Hugging Face import reads a loop block and names its errors", "[export]") {
  const std::string base = smelt::read_text_file(kExamples / "hf/mixtral-8x7b.json");
  auto with_loop = [&](const nlohmann::json& loop) {
    auto j = nlohmann::json::parse(base);
    j["loop"] = loop;
    return j.dump();
  };
  const ModelConfig c = smelt::parse_hf_config(with_loop({{"first_layer", 9}, {"last_layer", 24}, {"count", 3}}));
  CHECK(c.loops.front().first == 9);
  CHECK(c.loops.front().last == 24);
  CHECK(c.loops.front().count == 3);
  CHECK(c.loops.front().residual_scale == 1.0 / 3.0);  // native JSON's default, 1 / count
  CHECK(smelt::parse_hf_config(with_loop(nullptr)).loops.empty());
  CHECK(hf_error(with_loop(4)) == "loop = 4: must be an object");
  CHECK(hf_error(with_loop({{"first", 9}, {"last_layer", 24}, {"count", 2}})) ==
        "loop.first_layer: missing (required)\nloop.first: unknown key");
  // The range is validate()'s rule, shared with native JSON, which names the span as native JSON spells it.
  CHECK(hf_error(with_loop({{"first_layer", 9}, {"last_layer", 40}, {"count", 2}})) ==
        "loop.span = \"9-40\": must satisfy 1 <= first <= last <= num_layers = 32");
}

TEST_CASE("Hugging Face export escapes a hostile name: ASCII JSON that reads back to the same bytes", "[export]") {
  smelt::ModelConfig c = smelt::read_config((kExamples / "smelt-looped-12l.json").string());
  c.name = std::string("x\n--num-layers 999\r\n#\0 \"q\" 'a' $(id) `id`; a|b & c > d \\ \xe2\x80\xa8 \xc2\x85 end", 67);
  const std::string text = smelt::export_hf(c);
  // Every byte printable ASCII or a line break between keys: the name's newline, NUL, quotes, backslash and
  // U+2028 / U+0085 are JSON escapes, as transformers' own json.dumps writes them.
  CHECK(std::all_of(text.begin(), text.end(), [](char ch) { return (ch >= 0x20 && ch < 0x7f) || ch == '\n'; }));
  CHECK(text.find("\"_name_or_path\": \"x\\n--num-layers 999\\r\\n#\\u0000 \\\"q\\\" 'a' $(id) `id`; a|b & c > d "
                  "\\\\ \\u2028 \\u0085 end\",\n") != std::string::npos);
  CHECK(nlohmann::json::parse(text).at("_name_or_path").get<std::string>() == c.name);
  CHECK(smelt::parse_config(text, "<export>").name == c.name);
}
