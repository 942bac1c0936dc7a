// Megatron-LM export: the exact arguments for one example, Megatron's own FLOP
// formula (megatron_reference.hpp, an independent transliteration) evaluated
// on the exported arguments against --convention megatron, and every refusal.
#include <catch2/catch.hpp>

#include <algorithm>
#include <sstream>
#include <string>

#include "megatron_reference.hpp"
#include "smelt/config.hpp"
#include "smelt/config_io.hpp"
#include "smelt/convention.hpp"
#include "smelt/error.hpp"
#include "smelt/export.hpp"

namespace {

using smelt::ModelConfig;
using smelt::test::megatron::i64;
using smelt::test::megatron::MegatronArgs;

ModelConfig example(const std::string& path) { return smelt::read_config(std::string(SMELT_SOURCE_DIR) + "/" + path); }

// "[0,1,1]" or "3" as Megatron's moe_freq_type reads it.
std::variant<i64, std::vector<i64>> freq(const std::string& text) {
  if (text.front() != '[') return std::stoll(text);
  std::vector<i64> out;
  std::stringstream in(text.substr(1, text.size() - 2));
  for (std::string item; std::getline(in, item, ',');) out.push_back(std::stoll(item));
  return out;
}

// Reads the exported argument list back into transformer_flops()'s args, as
// Megatron's argparse would (defaults where an argument is absent).
MegatronArgs parse(const smelt::MegatronArguments& exported, i64 vocab) {
  MegatronArgs a;
  a.padded_vocab_size = vocab;  // from the tokenizer: a comment line, not an argument
  for (const auto& argument : exported.arguments) {
    const std::string& flag = argument.first;
    const std::string& value = argument.second;  // a plain reference: clang 14 cannot capture a structured binding
    const auto n = [&] { return std::stoll(value); };
    if (flag == "--num-layers")
      a.num_layers = n();
    else if (flag == "--hidden-size")
      a.hidden_size = n();
    else if (flag == "--num-attention-heads")
      a.num_attention_heads = n();
    else if (flag == "--group-query-attention")
      a.group_query_attention = true;
    else if (flag == "--num-query-groups")
      a.num_query_groups = n();
    else if (flag == "--kv-channels")
      a.kv_channels = n();
    else if (flag == "--seq-length")
      a.seq_length = n();
    else if (flag == "--ffn-hidden-size")
      a.ffn_hidden_size = n();
    else if (flag == "--swiglu")
      a.swiglu = true;
    else if (flag == "--num-experts")
      a.num_experts = n();
    else if (flag == "--moe-layer-freq")
      a.moe_layer_freq = freq(value);
    else if (flag == "--moe-router-topk")
      a.moe_router_topk = n();
    else if (flag == "--moe-ffn-hidden-size")
      a.moe_ffn_hidden_size = n();
    else if (flag == "--moe-shared-expert-intermediate-size")
      a.moe_shared_expert_intermediate_size = n();
    else if (flag == "--mtp-num-layers")
      a.mtp_num_layers = n();
    else if (flag == "--multi-latent-attention")
      a.multi_latent_attention = true;
    else if (flag == "--q-lora-rank")
      a.q_lora_rank = n();
    else if (flag == "--kv-lora-rank")
      a.kv_lora_rank = n();
    else if (flag == "--qk-head-dim")
      a.qk_head_dim = n();
    else if (flag == "--qk-pos-emb-head-dim")
      a.qk_pos_emb_head_dim = n();
    else if (flag == "--v-head-dim")
      a.v_head_dim = n();
  }
  return a;
}

double per_token(const MegatronArgs& a) {
  constexpr double batch = 4;
  return smelt::test::megatron::transformer_flops(a, batch) / (batch * static_cast<double>(a.seq_length));
}

}  // namespace

TEST_CASE("Megatron export of smelt-baseline-54b is the argument list checked by hand", "[export]") {
  // 30 layers of H 2304; 24 query heads in 6 groups of head_dim 96 (not 2304 / 24 = 96 by chance: written
  // anyway); 336 experts of width 768, top 8, every layer MoE (freq 1); no dense layer, so --ffn-hidden-size
  // takes the expert width; no biases; context 4096; untied head.
  const auto out = smelt::export_megatron(example("examples/smelt-baseline-54b.json"));
  CHECK(out.text() ==
        "# Megatron-LM arguments for \"smelt-baseline-54b\" (the physical model: 30 stored layers)\n"
        "# vocabulary: 50304 (from the tokenizer; Megatron-LM pads it to --make-vocab-size-divisible-by)\n"
        "# no layer is a dense FFN: --ffn-hidden-size (unused) is the expert width\n"
        "# positions: rotary (no parameters); the rotary base and scaling are not in the config: add "
        "--rotary-base (Megatron-LM's default 10000) and --rotary-scaling-factor as the model has them\n"
        "--num-layers 30\n--hidden-size 2304\n--num-attention-heads 24\n--group-query-attention\n"
        "--num-query-groups 6\n--kv-channels 96\n--ffn-hidden-size 768\n--swiglu\n--normalization RMSNorm\n"
        "--disable-bias-linear\n--num-experts 336\n--moe-ffn-hidden-size 768\n--moe-router-topk 8\n"
        "--moe-layer-freq 1\n--moe-router-score-function softmax\n--position-embedding-type rope\n"
        "--seq-length 4096\n"
        "--max-position-embeddings 4096\n--untie-embeddings-and-output-weights\n");
}

TEST_CASE("Megatron export always writes --kv-channels, the head size Megatron would take as hidden / heads",
          "[export]") {
  // Qwen3-30B-A3B: H 2048, 32 heads, head_dim 128; Megatron's default would be 2048 / 32 = 64.
  const auto out = smelt::export_megatron(example("examples/hf/qwen3-30b-a3b.json"));
  const auto has = [&](const std::string& flag, const std::string& value) {
    return std::find(out.arguments.begin(), out.arguments.end(), std::pair{flag, value}) != out.arguments.end();
  };
  CHECK(has("--kv-channels", "128"));
  CHECK(has("--moe-ffn-hidden-size", "768"));
  CHECK(has("--qk-layernorm", ""));
  CHECK(has("--num-query-groups", "4"));
}

TEST_CASE("Megatron's FLOP formula on the exported arguments gives --convention megatron", "[export]") {
  for (const char* path :
       {"examples/smelt-baseline-54b.json", "examples/deepseek-v3-mla.json", "examples/mixtral-8x7b.json",
        "examples/hf/deepseek-v3.json", "examples/hf/deepseek-v2-lite.json", "examples/hf/qwen3-30b-a3b.json",
        "examples/hf/qwen1.5-moe-a2.7b.json", "examples/hf/gpt-oss-20b.json", "examples/hf/llama-3.1-8b.json",
        "examples/hf/dbrx.json", "examples/paper/paper-1p6b-e64-kv9x64.json"}) {
    INFO(path);
    const ModelConfig c = example(path);
    const MegatronArgs a = parse(smelt::export_megatron(c), c.vocab_size);
    CHECK(per_token(a) == Approx(smelt::megatron_flops(c).training()).epsilon(1e-12));
  }
}

TEST_CASE("A looped config exports its stored layers and the comment that says how to loop them", "[export]") {
  const ModelConfig c = example("examples/smelt-looped-12l.json");  // 12 layers, 4-9 twice, scale 0.5
  const auto out = smelt::export_megatron(c);
  REQUIRE(out.comments.size() == 6);  // name, loop, executed order, vocabulary, no dense FFN, positions
  CHECK(out.comments[1] ==
        "Megatron-LM has no shared-weight layer loop: these arguments train the 12 layers once each. Run layers "
        "4-9 (1-based) 2 times with the same weights, scaling their residual updates by 0.5, in your own change to "
        "the model");
  // 3 + 6 x 2 + 3 = 18 visits.
  CHECK(out.comments[2] ==
        "executed order (1-based, Megatron's layer_number): 1-3, 4-9 x 2, 10-12: 18 layer visits (docs/export.md, "
        "\"Running a loop in Megatron-Core\")");
  // Two spans (examples/loops/block-repeat-two-spans.json): 1 + 3 x 2 + 3 + 3 x 3 + 2 = 21 visits.
  const auto two = smelt::export_megatron(example("examples/loops/block-repeat-two-spans.json"));
  CHECK(std::find(two.comments.begin(), two.comments.end(),
                  "executed order (1-based, Megatron's layer_number): 1, 2-4 x 2, 5-7, 8-10 x 3, 11-12: 21 layer "
                  "visits (docs/export.md, \"Running a loop in Megatron-Core\")") != two.comments.end());
  MegatronArgs a = parse(out, c.vocab_size);
  CHECK(a.num_layers == 12);
  // Unrolled as the comment says (6 more layer visits, all MoE), Megatron's formula gives smelt's number,
  // which counts every visit.
  a.num_layers = 12 + 6;
  CHECK(per_token(a) == Approx(smelt::megatron_flops(c).training()).epsilon(1e-12));
}

TEST_CASE("Megatron export writes per-layer patterns as lists and sliding windows with their skip frequency",
          "[export]") {
  ModelConfig c = example("examples/tiny-moe.json");  // 4 layers, the first dense
  c.loops = {};
  c.attention.pattern = {smelt::LayerAttention::sliding, smelt::LayerAttention::full};
  c.attention.window = 4;
  const auto out = smelt::export_megatron(c);
  const auto value = [&](const std::string& flag) {
    for (const auto& [f, v] : out.arguments)
      if (f == flag) return v;
    return std::string("(absent)");
  };
  CHECK(value("--moe-layer-freq") == "[0,1,1,1]");
  CHECK(value("--ffn-hidden-size") == "128");
  CHECK(value("--moe-shared-expert-intermediate-size") == "32");  // 1 shared expert of width 32
  CHECK(value("--window-size") == "4,0");
  CHECK(value("--window-attn-skip-freq") == "2");  // layer_number % 2 == 0 is full: sliding, full, ...
  c.attention.pattern = {smelt::LayerAttention::full, smelt::LayerAttention::sliding, smelt::LayerAttention::sliding,
                         smelt::LayerAttention::sliding};
  CHECK(smelt::export_megatron(c).arguments.size() == out.arguments.size());
  for (const auto& [f, v] : smelt::export_megatron(c).arguments)
    if (f == "--window-attn-skip-freq") CHECK(v == "[0,1,1,1]");
}

TEST_CASE("Megatron export names what Megatron-LM cannot express", "[export]") {
  const auto message = [](const ModelConfig& c) {
    try {
      smelt::export_megatron(c);
    } catch (const smelt::config_error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  CHECK(message(example("examples/hf/olmoe-1b-7b-0924.json")) ==
        "attention.qk_norm = \"full\": Megatron-LM cannot express it (--qk-layernorm normalises each head, "
        "\"per_head\"; none spans all heads)");
  CHECK(message(example("examples/hf/llama4-scout.json")) ==
        "attention.pattern = [\"chunked\", \"chunked\", \"chunked\", \"full\"]: Megatron-LM cannot express chunked "
        "attention (it has sliding windows only)");
  ModelConfig c = example("examples/smelt-baseline-54b.json");
  c.attention.out_bias = true;
  CHECK(message(c) ==
        "attention.out_bias, ffn.bias = true, false: Megatron-LM cannot express them apart (--disable-bias-linear "
        "switches the output projection's and the FFN's biases together, and with them q, k and v's)");
  // The looped families: what stores parameters is refused, every field at once.
  CHECK(message(example("examples/hf/ouro-1.4b.json")) ==
        "norm_placement = \"sandwich\": Megatron-LM's layers are pre-norm: its arguments build two norms a layer, "
        "not four\n"
        "loop.exit_gate = true: Megatron-LM's arguments build no such module");
  CHECK(message(example("examples/hf/huginn-0125.json")) ==
        "norm_placement = \"sandwich_residual\": Megatron-LM's layers are pre-norm: its arguments build two norms a "
        "layer, not four\n"
        "attention.qk_bias = true: Megatron-LM's arguments build no such module (--add-qkv-bias biases v too)\n"
        "loop.injection = \"linear\": Megatron-LM's arguments build no such module");
  // What changes a pass's run and stores nothing is said beside the loop.
  ModelConfig kept = example("examples/smelt-looped-12l.json");
  kept.loops.front().kv_policy = smelt::KvPolicy::shared;
  CHECK(smelt::export_megatron(kept).text().find("# layers 4-9: KV cache policy \"shared\" across passes\n") !=
        std::string::npos);
}

TEST_CASE("Megatron export writes rotary positions: its default would add a context x hidden table", "[export]") {
  // Megatron-LM's --position-embedding-type defaults to learned_absolute: for DeepSeek-V3 a 163,840 x 7168 =
  // 1,174,405,120 parameter table that smelt's count does not hold, and which Megatron refuses beside MTP.
  const auto out = smelt::export_megatron(example("examples/hf/deepseek-v3.json"));
  const auto has = [&](const std::string& flag, const std::string& value) {
    return std::find(out.arguments.begin(), out.arguments.end(), std::pair{flag, value}) != out.arguments.end();
  };
  CHECK(has("--position-embedding-type", "rope"));
  CHECK(has("--mtp-num-layers", "1"));
}

TEST_CASE("Megatron export puts the router bias where Megatron holds it", "[export]") {
  const auto flags = [](const ModelConfig& c) {
    std::vector<std::string> out;
    for (const auto& [flag, value] : smelt::export_megatron(c).arguments) out.push_back(flag);
    return out;
  };
  const auto has = [&](const ModelConfig& c, const std::string& flag) {
    const auto all = flags(c);
    return std::find(all.begin(), all.end(), flag) != all.end();
  };
  // gpt-oss: softmax scores and every linear layer biased; the router linear's bias is its router bias, and
  // --moe-router-enable-expert-bias (sigmoid only: TransformerConfig raises ValueError) is not written.
  const ModelConfig gpt_oss = example("examples/hf/gpt-oss-20b.json");
  CHECK_FALSE(has(gpt_oss, "--moe-router-enable-expert-bias"));
  CHECK_FALSE(has(gpt_oss, "--disable-bias-linear"));
  // DeepSeek-V3: sigmoid scores, no linear biases, the correction bias: Megatron's expert bias.
  CHECK(has(example("examples/hf/deepseek-v3.json"), "--moe-router-enable-expert-bias"));

  const auto message = [](const ModelConfig& c) {
    try {
      smelt::export_megatron(c);
    } catch (const smelt::config_error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  ModelConfig softmax_bias = example("examples/smelt-baseline-54b.json");
  softmax_bias.moe.router_bias = true;
  CHECK(message(softmax_bias) ==
        "moe.router_bias = true: Megatron-LM cannot express it with moe.router_score = \"softmax\" and no "
        "linear-layer biases (its expert bias, --moe-router-enable-expert-bias, is for sigmoid scores only)");
  ModelConfig biased_no_router_bias = gpt_oss;
  biased_no_router_bias.moe.router_bias = false;
  CHECK(message(biased_no_router_bias) ==
        "moe.router_bias = false: Megatron-LM cannot express it beside linear-layer biases (add_bias_linear gives "
        "the router a bias too)");
}

TEST_CASE("Megatron export keeps a hostile name inside one comment line", "[export]") {
  ModelConfig c = example("examples/smelt-baseline-54b.json");
  c.name = std::string("x\n--num-layers 999\r\n#\0 \"q\" 'a' $(id) `id`; a|b & c > d \\ \xe2\x80\xa8 \xc2\x85 end", 67);
  const std::string text = smelt::export_megatron(c).text();
  // An ASCII JSON literal: the newline, CR, NUL, quotes, backslash and line separators escaped; shell
  // metacharacters kept (a comment line is never run).
  CHECK(text.substr(0, text.find('\n')) ==
        "# Megatron-LM arguments for \"x\\n--num-layers 999\\r\\n#\\u0000 \\\"q\\\" 'a' $(id) `id`; a|b & c > d "
        "\\\\ \\u2028 \\u0085 end\" (the physical model: 30 stored layers)");
  CHECK(text.find("\n--num-layers 999") == std::string::npos);
  CHECK(text.find('\0') == std::string::npos);
  CHECK(text.find("\n--num-layers 30\n") != std::string::npos);

  c.name = "gpt\xff";  // not UTF-8: not text
  CHECK_THROWS_WITH(smelt::export_megatron(c), "name: must be UTF-8 text");
}

TEST_CASE("MegatronArguments::text() keeps each comment on one line and refuses a value that is not a word",
          "[export]") {
  smelt::MegatronArguments a;
  a.comments = {"one\ntwo\x7f\xe2\x80\xa8three"};
  a.arguments = {{"--num-layers", "2"}, {"--moe-layer-freq", "[0,1]"}, {"--swiglu", ""}};
  CHECK(a.text() == "# one\\x0atwo\\x7f\\u2028three\n--num-layers 2\n--moe-layer-freq [0,1]\n--swiglu\n");
  a.arguments = {{"--num-layers", "2\n--hidden-size 9"}, {"--Num layers", "2"}};
  CHECK_THROWS_WITH(
      a.text(),
      "MegatronArguments::arguments[0].value = \"2\\n--hidden-size 9\": must be letters, digits and , . - _ "
      "[ ] (a number, a word or a list)\nMegatronArguments::arguments[1].flag = \"--Num layers\": must be -- "
      "and lower-case letters, digits and hyphens");
}
