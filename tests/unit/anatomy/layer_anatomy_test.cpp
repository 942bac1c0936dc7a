// A layer's anatomy (src/anatomy) by hand: Mixtral-8x7B's MoE layer, its
// tensors, products and shards; DeepSeek's frozen correction bias; the sums
// count() reports. tests/python/test_torch_anatomy.py holds every example's
// tensors to the reference model's own modules.
#include <catch2/catch.hpp>

#include "anatomy/layer_anatomy.hpp"
#include "smelt/anatomy.hpp"
#include "smelt/count.hpp"
#include "smelt/error.hpp"
#include "test_configs.hpp"

using namespace smelt;

TEST_CASE("Mixtral-8x7B's layer: its tensors and their sums by hand", "[anatomy]") {
  // H = 4096, 32 query heads and 8 KV heads of 128, 8 SwiGLU experts of 14,336, top-2, RMSNorm, no biases.
  const ModelConfig c = test::mixtral_8x7b();
  const anatomy::LayerAnatomy a = anatomy::layer_anatomy(c, true);
  REQUIRE(a.tensors.size() == 10);  // 2 norms, q k v o, router, each expert's gate, up and down
  CHECK(std::string(a.tensors[1].name) == "attn.q_proj.weight");
  CHECK(a.tensors[1].elements == 4096LL * 4096);
  CHECK(a.tensors[2].elements == 4096LL * 1024);  // k_proj: 8 x 128 = 1,024 columns
  CHECK(std::string(a.tensors[7].name) == "ffn.experts.*.gate_proj.weight");
  CHECK(a.tensors[7].instances == 8);
  // Attention: 4096 x (4096 + 2 x 1024) + 4096 x 4096 = 25,165,824 + 16,777,216 = 41,943,040.
  CHECK(a.sums.params(anatomy::Term::attention) == 41'943'040);
  // Experts: 8 x 3 x 4096 x 14,336 = 8 x 176,160,768 = 1,409,286,144.
  CHECK(a.sums.params(anatomy::Term::experts) == 1'409'286'144);
  CHECK(a.sums.params(anatomy::Term::norms) == 2 * 4096);
  CHECK(a.sums.params(anatomy::Term::router) == 4096 * 8);
  // Tensors AdamW steps: 2 norms + 4 projections + the router + 8 x 3 expert matrices = 31.
  CHECK(a.sums.trainable_tensors == 31);
  CHECK(a.sums.frozen_params == 0);
  // Per token, top-2: 2 x (4096 x 2 x 14,336 + 14,336 x 4096) = 2 x 176,160,768 = 352,321,536 MACs.
  CHECK(a.sums.macs(anatomy::Op::experts) == 352'321'536);
  // Q, K, V fused: 4096 x (4096 + 2,048) = 25,165,824 MACs.
  CHECK(a.sums.macs(anatomy::Op::attention_qkv) == 25'165'824);
  // count()'s FLOPs are twice these.
  const LayerCost lc = count(c).layers[0];
  CHECK(lc.flops_per_visit.experts == 2.0 * 352'321'536);
  CHECK(lc.params.attention == 41'943'040);
}

TEST_CASE("a layer's products as one rank computes them", "[anatomy]") {
  const ModelConfig c = test::mixtral_8x7b();
  const anatomy::LayerAnatomy a = anatomy::layer_anatomy(c, true);
  const anatomy::Product& qkv = a.products[0];
  REQUIRE(qkv.op == anatomy::Op::attention_qkv);
  // tp = 8: 32 / 8 query heads x 128 + 8 / 8 KV heads x 2 x 128 = 512 + 256 = 768 columns.
  CHECK(qkv.n_on_rank(8, 1) == 768);
  // tp = 16 exceeds the 8 KV heads: each rank keeps one whole (replicated): 2 x 128 + 256 = 512.
  CHECK(qkv.n_on_rank(16, 1) == 512);
  // The experts' gate and up, etp = 2: 14,336 / 2 x 2 = 14,336 columns; tp does not divide them.
  const anatomy::Product& up = a.products[3];
  REQUIRE(up.op == anatomy::Op::experts);
  CHECK(up.n_on_rank(4, 2) == 14'336);
  CHECK(up.times == 2);
  // The KV cache: 8 heads x 2 x 128 = 2,048 elements a token, 1,024 on a rank at tp = 8.
  CHECK(a.sums.core.kv.whole("kv") == 2048);
  CHECK(a.sums.core.kv.on_rank(8, 1) == 256);
}

TEST_CASE("DeepSeek's correction bias is stored and counted but never stepped", "[anatomy]") {
  ModelConfig c = test::mixtral_8x7b();
  c.moe.router_score = RouterScore::sigmoid;
  c.moe.router_bias = true;
  c.moe.router_form = RouterForm::deepseek;
  const anatomy::LayerSums s = anatomy::layer_sums(c, true);
  CHECK(s.params(anatomy::Term::router) == 4096 * 8 + 8);
  CHECK(s.frozen_params == 8);
  CHECK(s.trainable_tensors == 31);
  // The same under softmax scores (a DeepSeek config's bias is its correction bias whatever the score) ...
  c.moe.router_score = RouterScore::softmax;
  CHECK(anatomy::layer_sums(c, true).frozen_params == 8);
  // ... but the plain form's bias is gpt-oss's, on the logits: trained.
  c.moe.router_form = RouterForm::plain;
  CHECK(anatomy::layer_sums(c, true).trainable_tensors == 32);
  CHECK(anatomy::layer_sums(c, true).frozen_params == 0);
}

TEST_CASE("the public anatomy names each term and op, and refuses a layer that is not stored", "[anatomy]") {
  const ModelConfig c = test::mixtral_8x7b();
  const LayerAnatomyReport r = layer_anatomy(c, 31);
  CHECK(r.moe);
  CHECK(r.tensors.back().term == "experts");
  CHECK(r.products.front().op == "attention_qkv");
  CHECK(r.products.front().n == 4096 + 2 * 1024);
  CHECK((r.qk_width == 4096 && r.v_width == 4096 && r.kv_elements == 2048));
  CHECK_THROWS_WITH(layer_anatomy(c, 32), "layer = 32: must be a 0-based stored layer, 0 to 31");
  CHECK_THROWS_WITH(layer_anatomy(c, -1), "layer = -1: must be a 0-based stored layer, 0 to 31");
}
