// Layer runs worked out by hand from the configs' layer rules, and the laws
// every set of runs obeys: each layer in exactly one run, at the run's cost.
#include <filesystem>

#include <fmt/format.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "smelt/config_io.hpp"
#include "smelt/count_report.hpp"
#include "smelt/layer_runs.hpp"
#include "test_configs.hpp"

using namespace smelt;

namespace {

// "first-last/step kind attention xvisits", one per run: a failure shows every run.
std::vector<std::string> shape(const std::vector<LayerRun>& runs) {
  std::vector<std::string> out;
  for (const auto& r : runs)
    out.push_back(fmt::format("{}-{}/{} {} {} x{}", r.first, r.last, r.step, r.cost.moe ? "moe" : "dense",
                              to_string(r.cost.attention), r.cost.visits));
  return out;
}

std::vector<LayerRun> runs_of(const ModelConfig& c) { return layer_runs(c, count(c)); }

// Every layer lies in exactly one run and costs what the run says; runs are in
// order of their first layer and a single layer has step 1.
void check_partition(const ModelConfig& c) {
  const CostReport r = count(c);
  const std::vector<LayerRun> runs = layer_runs(c, r);
  std::vector<int> seen(r.layers.size(), 0);
  for (std::size_t k = 0; k < runs.size(); ++k) {
    const LayerRun& run = runs[k];
    REQUIRE(run.first >= 1);
    REQUIRE(run.last <= c.num_layers);
    REQUIRE((run.last - run.first) % run.step == 0);
    if (run.count() == 1) CHECK(run.step == 1);
    if (k > 0) CHECK(runs[k - 1].first < run.first);
    for (std::int64_t layer = run.first; layer <= run.last; layer += run.step) {
      const auto i = static_cast<std::size_t>(layer - 1);
      ++seen[i];
      CHECK(same_cost(r.layers[i], run.cost));
    }
  }
  CHECK(std::count(seen.begin(), seen.end(), 1) == c.num_layers);
}

}  // namespace

TEST_CASE("a looped span splits one run of identical layers in three", "[layer_runs]") {
  // examples/smelt-looped-12l.json: 12 MoE layers (first_dense 0, every 1), all full attention (pattern
  // [full]), layers 4-9 looped twice. Layers 1-3 (before the loop) and 10-12 (after it) cost the same, one
  // visit each, but are not consecutive; 4-9 differ from them only in visits (2). The only step is 1: the
  // pattern's length and moe.every are both 1.
  const ModelConfig c = read_config(SMELT_SOURCE_DIR "/examples/smelt-looped-12l.json");
  CHECK(shape(runs_of(c)) == std::vector<std::string>{"1-3/1 moe full x1", "4-9/1 moe full x2", "10-12/1 moe full x1"});
  CHECK(runs_of(c)[1].count() == 6);
}

TEST_CASE("an alternating pattern gives runs of every second layer, cut by the dense layer and the loop",
          "[layer_runs]") {
  // 16 layers; pattern [sliding, full]: odd layers slide, even ones are full. MoE from 0-based layer 1 on
  // (first_dense 1, every 1): layer 1 is dense. Layers 5-12 looped twice. Steps: 1 and the pattern's length 2.
  //   dense sliding x1: {1}                      one run
  //   moe full x1:      {2, 4, 14, 16}           step 1: 4 runs; step 2: 2-4/2 and 14-16/2 (12 is looped)
  //   moe sliding x1:   {3, 13, 15}              step 2: 3 (1 is dense) and 13-15/2 (11 is looped)
  //   moe sliding x2:   {5, 7, 9, 11}            step 2: one run 5-11/2
  //   moe full x2:      {6, 8, 10, 12}           step 2: one run 6-12/2
  ModelConfig c = test::tiny_moe();
  c.num_layers = 16;
  c.attention.pattern = {LayerAttention::sliding, LayerAttention::full};
  c.attention.window = 4;
  c.loops = {{5, 12, 2, 0.5}};
  CHECK(shape(runs_of(c)) == std::vector<std::string>{
                                 "1-1/1 dense sliding x1",
                                 "2-4/2 moe full x1",
                                 "3-3/1 moe sliding x1",
                                 "5-11/2 moe sliding x2",
                                 "6-12/2 moe full x2",
                                 "13-15/2 moe sliding x1",
                                 "14-16/2 moe full x1",
                             });
  check_partition(c);
}

TEST_CASE("MoE every second layer with a phase, a pattern of three and a loop", "[layer_runs]") {
  // 12 layers; pattern [sliding, sliding, full]: layers 3, 6, 9, 12 are full. MoE when the 0-based layer i
  // is >= first_dense 2 and i % 2 == phase 1: i = 3, 5, 7, 9, 11, so 1-based layers 4, 6, 8, 10, 12.
  // Layers 4-9 looped twice. Steps: 1, 2 (moe.every), 3 (the pattern), 6 (both).
  //   layer:  1  2  3  4  5  6  7  8  9  10 11 12
  //   kind:   d  d  d  m  d  m  d  m  d  m  d  m
  //   attn:   s  s  f  s  s  f  s  s  f  s  s  f
  //   visits: 1  1  1  2  2  2  2  2  2  1  1  1
  //   dense sliding x1 {1, 2, 11}: step 1 gives 1-2 and 11 (2 runs, the fewest; steps 2, 3, 6 give 3)
  //   moe sliding x2 {4, 8}: 2 runs whatever the step (8 - 2 = 6 is full, 8 - 3 = 5 dense, 8 - 6 = 2 dense)
  //   dense sliding x2 {5, 7}: step 2, one run 5-7/2
  //   the others are single layers: 3, 6, 9, 10, 12
  ModelConfig c = test::tiny_moe();
  c.num_layers = 12;
  c.attention.pattern = {LayerAttention::sliding, LayerAttention::sliding, LayerAttention::full};
  c.attention.window = 4;
  c.moe.first_dense = 2;
  c.moe.every = 2;
  c.moe.phase = 1;
  c.loops = {{4, 9, 2, 0.5}};
  CHECK(shape(runs_of(c)) == std::vector<std::string>{
                                 "1-2/1 dense sliding x1",
                                 "3-3/1 dense full x1",
                                 "4-4/1 moe sliding x2",
                                 "5-7/2 dense sliding x2",
                                 "6-6/1 moe full x2",
                                 "8-8/1 moe sliding x2",
                                 "9-9/1 dense full x2",
                                 "10-10/1 moe sliding x1",
                                 "11-11/1 dense sliding x1",
                                 "12-12/1 moe full x1",
                             });
  check_partition(c);
}

TEST_CASE("a six-layer sliding pattern is six runs of every sixth layer, not one per repeat", "[layer_runs]") {
  // 60 dense layers, pattern five sliding then one full (Gemma 3's). Step 1 cuts the sliding layers into 10
  // runs of five (1-5, 7-11, ...); step 6 into 5 runs (1-55/6, ..., 5-59/6): 5 runs and 6-60/6.
  ModelConfig c = test::tiny_dense(60);
  c.attention.pattern = std::vector<LayerAttention>(5, LayerAttention::sliding);
  c.attention.pattern.push_back(LayerAttention::full);
  c.attention.window = 4;
  CHECK(shape(runs_of(c)) == std::vector<std::string>{
                                 "1-55/6 dense sliding x1",
                                 "2-56/6 dense sliding x1",
                                 "3-57/6 dense sliding x1",
                                 "4-58/6 dense sliding x1",
                                 "5-59/6 dense sliding x1",
                                 "6-60/6 dense full x1",
                             });
  check_partition(c);
}

TEST_CASE("65,536 layers alternating MoE and dense are two runs and a 3 KB report", "[layer_runs]") {
  // tests/data/qwen-65536-layers.json: moe.layers {first_dense 0, every 2, phase 0}: 0-based even layers are
  // MoE, so 1-based 1, 3, ..., 65535; the dense ones 2, 4, ..., 65536. No loop, pattern [full].
  const ModelConfig c = read_config(SMELT_SOURCE_DIR "/tests/data/qwen-65536-layers.json");
  const CostReport r = count(c);
  CHECK(shape(layer_runs(c, r)) == std::vector<std::string>{"1-65535/2 moe full x1", "2-65536/2 dense full x1"});
  CHECK(layer_runs(c, r)[0].count() == 32768);
  const std::string runs = count_report_json({count_model(c)});
  CHECK(runs.size() == 3439);  // 3,389 before the loop_extras terms, 3,057 before the sparsity block; was 51,599,860
                               // bytes with one object per layer
  const auto j = nlohmann::ordered_json::parse(runs);
  CHECK(j["schema_version"] == 2);
  CHECK(j["layer_runs"].size() == 2);
  CHECK_FALSE(j.contains("layers"));
}

TEST_CASE("every_layer adds one object per layer, as version 1 wrote them", "[layer_runs]") {
  // The same layers 8 deep (65,536 objects take seconds to write in a Debug build): runs 1-7/2 and 2-8/2.
  ModelConfig c = read_config(SMELT_SOURCE_DIR "/tests/data/qwen-65536-layers.json");
  c.num_layers = 8;
  const auto j = nlohmann::ordered_json::parse(count_report_json({count_model(c)}));
  const auto every = nlohmann::ordered_json::parse(count_report_json({count_model(c)}, Convention::smelt, {true}));
  REQUIRE(every.contains("layers"));
  REQUIRE(every["layers"].size() == 8);
  CHECK(every["layer_runs"] == j["layer_runs"]);
  CHECK(every["layer_runs"].size() == 2);
  // Layer 2 (dense), H 2304, 24 query and 6 KV heads of 96 (widths 2304 and 576), FFN 768, T 4096. Params:
  // attention Q and O 2304 x 2304 = 5,308,416 each, K and V 2304 x 576 = 1,327,104 each, q and k norms per head
  // 2 x 96: 13,271,232; norms 2 x 2304 = 4,608; FFN 3 x 2304 x 768 = 5,308,416; active = their sum 18,584,256.
  // FLOPs: QKV 2 x 2304 x (2304 + 2 x 576) = 15,925,248; O 2 x 2304 x 2304 = 10,616,832; scores = values =
  // 2 x 2304 x 4097 / 2 = 9,439,488; FFN 2 x 5,308,416 = 10,616,832; total 56,037,888. KV 2 x 576 = 1,152
  // elements, 2,304 bytes, all 4,096 tokens held.
  CHECK(every["layers"][1].dump() ==
        R"({"layer":2,"kind":"dense","attention":"full","visits":1,"params":{"attention":13271232,"norms":4608,)"
        R"("router":0,"experts":0,"shared_experts":0,"dense_ffn":5308416},"active_params":18584256,)"
        R"("flops_per_visit":{"attention_qkv":15925248.0,"attention_out":10616832.0,)"
        R"("attention_scores":9439488.0,"attention_values":9439488.0,"router":0.0,"experts":0.0,)"
        R"("shared_experts":0.0,"dense_ffn":10616832.0,"elementwise":0.0,"total":56037888.0},)"
        R"("kv_elements_per_token_held":1152,"kv_tokens_held":4096,"kv_bytes_per_visit":2304.0})");
  // A run's entry is the layer's, its "layer" replaced by first, last, step and count.
  auto run = j["layer_runs"][1];
  CHECK(run["first"] == 2);
  CHECK(run["last"] == 8);
  CHECK(run["step"] == 2);
  CHECK(run["count"] == 4);
  for (const char* key : {"first", "last", "step", "count"}) run.erase(key);
  auto layer = every["layers"][1];
  layer.erase("layer");
  CHECK(run == layer);
}

TEST_CASE("every example's runs hold each layer once, at its cost", "[layer_runs]") {
  for (const char* folder : {"/examples", "/examples/hf", "/examples/paper"})
    for (const auto& entry : std::filesystem::directory_iterator(std::string(SMELT_SOURCE_DIR) + folder)) {
      if (entry.path().extension() != ".json") continue;
      INFO(entry.path().string());
      check_partition(read_config(entry.path()));
    }
}
