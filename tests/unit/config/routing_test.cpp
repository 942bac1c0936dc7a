// The routing choices of the moe block (router_form, renormalize, clamped_swiglu; docs/config.md, section 1.4):
// their defaults, canonical form and rules in the native format, what each Hugging Face family's reader sets, and
// the export that writes them back or names what a family cannot hold.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "smelt/config_io.hpp"
#include "smelt/error.hpp"
#include "smelt/export.hpp"
#include "smelt/file_io.hpp"

using namespace smelt;

namespace {

nlohmann::json native_moe(const nlohmann::json& moe = nlohmann::json::object()) {
  nlohmann::json j = {{"schema_version", 1},
                      {"vocab_size", 64},
                      {"num_layers", 2},
                      {"hidden_size", 32},
                      {"attention", {{"num_heads", 4}, {"num_kv_heads", 2}, {"head_dim", 8}}},
                      {"moe", {{"num_experts", 4}, {"top_k", 2}, {"expert_width", 16}}}};
  j["moe"].update(moe);
  return j;
}

std::vector<std::string> routing_errors(const nlohmann::json& j) {
  try {
    (void)parse_native_config(j.dump(), "t.json");
  } catch (const config_error& e) {
    return e.lines();
  }
  return {};
}

std::string hf_example(const char* name) {
  return read_text_file(std::string(SMELT_SOURCE_DIR "/examples/hf/") + name);
}

ModelConfig hf_edited(const char* name, const char* key, const nlohmann::json& value) {
  nlohmann::json j = nlohmann::json::parse(hf_example(name));
  j[key] = value;
  return parse_hf_config(j.dump());
}

}  // namespace

TEST_CASE("a native config without routing fields reads the form its scores and bias had", "[routing]") {
  const MoeConfig plain = parse_native_config(native_moe().dump()).moe;
  CHECK(plain.router_form == RouterForm::plain);
  CHECK(plain.renormalize);
  CHECK_FALSE(plain.clamped_swiglu);
  const MoeConfig llama4 = parse_native_config(native_moe({{"router_score", "sigmoid"}}).dump()).moe;
  CHECK(llama4.router_form == RouterForm::llama4);
  CHECK_FALSE(llama4.renormalize);  // Llama 4's router never renormalises
  const MoeConfig deepseek =
      parse_native_config(native_moe({{"router_score", "sigmoid"}, {"router_bias", true}}).dump()).moe;
  CHECK(deepseek.router_form == RouterForm::deepseek);
  CHECK(deepseek.renormalize);
  // ... and writes none of them back: every config written before reads and writes the same bytes.
  CHECK(to_json(parse_native_config(native_moe({{"router_score", "sigmoid"}}).dump())).find("router_form") ==
        std::string::npos);
}

TEST_CASE("a routing field that differs from its default is written, and reads back to the same config", "[routing]") {
  const ModelConfig c = parse_native_config(
      native_moe({{"renormalize", false}, {"clamped_swiglu", {{"alpha", 1.702}, {"limit", 7.0}}}}).dump());
  CHECK_FALSE(c.moe.renormalize);
  REQUIRE(c.moe.clamped_swiglu);
  CHECK(c.moe.clamped_swiglu->alpha == 1.702);
  const std::string text = to_json(c);
  CHECK(text.find("    \"router_score\": \"softmax\",\n    \"renormalize\": false,\n    \"clamped_swiglu\": {\n"
                  "      \"alpha\": 1.702,\n      \"limit\": 7.0\n    },\n    \"layers\"") != std::string::npos);
  CHECK(parse_native_config(text) == c);
  CHECK(to_json(parse_native_config(text)) == text);
}

TEST_CASE("each router form names the scores and bias it needs", "[routing]") {
  CHECK(routing_errors(native_moe({{"router_score", "sigmoid"}, {"router_form", "plain"}})) ==
        std::vector<std::string>{"moe.router_form = \"plain\": routes softmax scores only: with moe.router_score "
                                 "\"sigmoid\" use \"deepseek\" or \"llama4\""});
  CHECK(routing_errors(native_moe({{"router_form", "deepseek"}})) ==
        std::vector<std::string>{"moe.router_form = \"deepseek\": without moe.router_bias, softmax scores route as "
                                 "\"plain\" (the same choice and weights): say \"plain\""});
  CHECK(routing_errors(native_moe({{"router_score", "sigmoid"}, {"router_form", "llama4"}, {"renormalize", true}})) ==
        std::vector<std::string>{"moe.router_form = \"llama4\": needs moe.router_score \"sigmoid\", moe.router_bias "
                                 "false and moe.renormalize false (Llama 4's router; they are \"sigmoid\", false, "
                                 "true)"});
  CHECK(routing_errors(native_moe({{"router_form", "gpt"}})) ==
        std::vector<std::string>{"moe.router_form = \"gpt\": must be one of plain, deepseek, llama4"});
}

TEST_CASE("a clamped SwiGLU needs two finite numbers above 0 and a gated FFN", "[routing]") {
  nlohmann::json j = native_moe({{"clamped_swiglu", {{"alpha", 0}, {"limit", -1.5}}}});
  j["ffn"] = {{"type", "plain"}};
  CHECK(routing_errors(j) == std::vector<std::string>{
                                 "moe.clamped_swiglu.alpha = 0: must be a finite number above 0",
                                 "moe.clamped_swiglu.limit = -1.5: must be a finite number above 0",
                                 "moe.clamped_swiglu: needs ffn.type \"gated\" (a SwiGLU to clamp)",
                             });
  CHECK(routing_errors(native_moe({{"clamped_swiglu", {{"alpha", 1}, {"lmit", 2}}}})) ==
        std::vector<std::string>{"moe.clamped_swiglu.limit: missing (required)",
                                 "moe.clamped_swiglu.lmit: unknown key (did you mean \"limit\"?)"});
}

TEST_CASE("each family's reader sets the routing its transformers router computes", "[routing]") {
  // Qwen-MoE and OLMoE: norm_topk_prob, default false (the examples say false; Qwen3-30B-A3B true).
  CHECK_FALSE(read_config(std::string(SMELT_SOURCE_DIR "/examples/hf/olmoe-1b-7b-0924.json")).moe.renormalize);
  CHECK(read_config(std::string(SMELT_SOURCE_DIR "/examples/hf/qwen3-30b-a3b.json")).moe.renormalize);
  CHECK(hf_edited("olmoe-1b-7b-0924.json", "norm_topk_prob", true).moe.renormalize);
  // DeepSeek-V3: the correction bias in the deepseek form, norm_topk_prob default true; V2 never renormalises.
  const MoeConfig v3 = read_config(std::string(SMELT_SOURCE_DIR "/examples/hf/deepseek-v3.json")).moe;
  CHECK(v3.router_form == RouterForm::deepseek);
  CHECK(v3.renormalize);
  CHECK_FALSE(hf_edited("deepseek-v3.json", "norm_topk_prob", false).moe.renormalize);
  CHECK_FALSE(hf_edited("deepseek-v2-lite.json", "norm_topk_prob", true).moe.renormalize);
  // gpt-oss: the clamp, alpha the modeling code's 1.702, the limit its swiglu_limit.
  const MoeConfig gpt = hf_edited("gpt-oss-20b.json", "swiglu_limit", 5.5).moe;
  REQUIRE(gpt.clamped_swiglu);
  CHECK(gpt.clamped_swiglu->alpha == 1.702);
  CHECK(gpt.clamped_swiglu->limit == 5.5);
  CHECK(gpt.router_form == RouterForm::plain);
  // Llama 4: sigmoid of the chosen logits on the expert's input, never renormalised.
  const MoeConfig l4 = read_config(std::string(SMELT_SOURCE_DIR "/examples/hf/llama4-scout.json")).moe;
  CHECK(l4.router_form == RouterForm::llama4);
  CHECK_FALSE(l4.renormalize);
}

TEST_CASE("DBRX renormalises by moe_normalize_expert_weights: 1, null, and no other p-norm", "[routing]") {
  nlohmann::json j = nlohmann::json::parse(hf_example("dbrx.json"));
  CHECK(parse_hf_config(j.dump()).moe.renormalize);  // absent: DbrxFFNConfig's 1
  j["ffn_config"]["moe_normalize_expert_weights"] = nullptr;
  CHECK_FALSE(parse_hf_config(j.dump()).moe.renormalize);
  j["ffn_config"]["moe_normalize_expert_weights"] = 2;
  try {
    (void)parse_hf_config(j.dump(), "config.json");
    FAIL("a p-norm of 2 was read");
  } catch (const config_error& e) {
    CHECK(e.lines() == std::vector<std::string>{
                           "ffn_config.moe_normalize_expert_weights = 2: must be 1 (the weights divided by their sum) "
                           "or null (not divided): smelt has no other p-norm"});
  }
}

TEST_CASE("the export writes the routing back, or names what a family cannot hold", "[routing]") {
  const ModelConfig olmoe = hf_edited("olmoe-1b-7b-0924.json", "norm_topk_prob", true);
  CHECK(nlohmann::json::parse(export_hf(olmoe, "olmoe")).at("norm_topk_prob") == true);
  const ModelConfig qwen3 = hf_edited("qwen3-30b-a3b.json", "norm_topk_prob", false);
  CHECK(nlohmann::json::parse(export_hf(qwen3, "qwen3_moe")).at("norm_topk_prob") == false);
  const ModelConfig gpt = hf_edited("gpt-oss-20b.json", "swiglu_limit", 5.5);
  CHECK(nlohmann::json::parse(export_hf(gpt, "gpt_oss")).at("swiglu_limit") == 5.5);
  const ModelConfig qwen = read_config(std::string(SMELT_SOURCE_DIR "/examples/hf/qwen1.5-moe-a2.7b.json"));
  try {
    (void)export_hf(qwen, "mixtral");
    FAIL("Qwen1.5-MoE exported to mixtral");
  } catch (const config_error& e) {
    CHECK(std::string(e.what()).find("moe.renormalize = false: the Hugging Face mixtral schema cannot express it "
                                     "(it reads back as true)") != std::string::npos);
  }
}
