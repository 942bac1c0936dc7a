// The runs of a stage's layer visits (memory/visit_runs.hpp) against the
// visits one by one, and the memory and time reports of stages of millions
// of visits and of 65,536 stages: they grow with the kinds of visits, not
// with the visits.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "memory/visit_runs.hpp"
#include "smelt/config_io.hpp"
#include "smelt/hardware.hpp"
#include "smelt/memory.hpp"
#include "smelt/memory_report.hpp"
#include "smelt/schedule.hpp"
#include "smelt/time.hpp"
#include "tiny_moe_layout.hpp"

using namespace smelt;
using memory_detail::StageVisitOptions;
using memory_detail::StageVisitRun;

namespace {

using i64 = std::int64_t;
using test::small;
using test::term;
using test::tiny;

CheckedConfig data(const std::string& name) {
  return read_checked_config(std::string(SMELT_SOURCE_DIR) + "/tests/data/" + name);
}

// One visit: its layer and pass (0-based), its kind and flags.
using Visit = std::tuple<i64, i64, bool, LayerAttention, bool, bool>;

// The stage's visits one by one from the schedule, in execution order, with the flags they should get.
std::vector<Visit> one_by_one(const ModelConfig& c, i64 lo, i64 hi, const StageVisitOptions& o) {
  std::vector<Visit> out;
  for (const LayerVisit& v : schedule(c).visits()) {
    if (v.layer < lo || v.layer > hi) continue;
    const LoopConfig* span = c.loop_of(v.layer);
    const bool no_grad = o.truncated_backprop && span != nullptr && span->backprop_passes > 0 &&
                         v.visit < span->count - span->backprop_passes;
    const bool recomputed = static_cast<i64>(out.size()) < o.recomputed;
    out.emplace_back(v.layer, v.visit, c.is_moe_layer(v.layer), c.attention_at(v.layer), recomputed, no_grad);
  }
  return out;
}

// The runs' visits, each where its run's ordinals put it: the first and last exactly, those between in the
// order a block runs (pass by pass) after the run's first.
void check_runs(const ModelConfig& c, i64 lo, i64 hi, const StageVisitOptions& o) {
  const LayerSchedule s = schedule(c);
  const std::vector<Visit> expected = one_by_one(c, lo, hi, o);
  const std::vector<StageVisitRun> runs = memory_detail::stage_visit_runs(c, s, lo, hi, o);
  REQUIRE(memory_detail::stage_visits(s, lo, hi) == static_cast<i64>(expected.size()));
  std::vector<int> seen(expected.size(), 0);
  i64 visits = 0, previous = -1;
  for (const StageVisitRun& r : runs) {
    CHECK(r.first_ordinal > previous);  // in order of their first visits
    previous = r.first_ordinal;
    visits += r.visits();
    // The run's visits lie at first_ordinal + (pass - first_pass) x the block's share + (layer - first).
    const auto at = [&](i64 layer, i64 pass) {
      const i64 width =
          (r.last_ordinal - r.first_ordinal - (r.last - r.first)) / std::max<i64>(1, r.last_pass - r.first_pass);
      return r.first_ordinal + (pass - r.first_pass) * width + (layer - r.first);
    };
    for (i64 pass = r.first_pass; pass <= r.last_pass; ++pass)
      for (i64 layer = r.first; layer <= r.last; layer += r.step) {
        const i64 i = at(layer, pass);
        REQUIRE((i >= 0 && i < static_cast<i64>(expected.size())));
        ++seen[static_cast<std::size_t>(i)];
        CHECK(expected[static_cast<std::size_t>(i)] == Visit{layer, pass, r.moe, r.attention, r.recomputed, r.no_grad});
      }
  }
  CHECK(visits == static_cast<i64>(expected.size()));
  CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));  // every visit in exactly one run
}

// `config` with a span looped `count` times (and truncated backprop over its last `backprop` passes).
CheckedConfig looped(ModelConfig c, i64 first, i64 last, i64 count, i64 backprop = 0) {
  LoopConfig l;
  l.first = first;
  l.last = last;
  l.count = count;
  l.residual_scale = 1.0 / static_cast<double>(count);
  l.backprop_passes = backprop;
  c.loops = {l};
  return CheckedConfig(std::move(c));
}

}  // namespace

TEST_CASE("a stage's runs hold each of its visits once, with its kind and flags, on every example", "[memory]") {
  std::vector<CheckedConfig> configs;
  for (const char* dir : {"/examples", "/examples/hf", "/examples/loops"})
    for (const auto& e : std::filesystem::directory_iterator(std::string(SMELT_SOURCE_DIR) + dir))
      if (e.path().extension() == ".json") configs.push_back(read_checked_config(e.path().string()));
  // Periodic layers inside a loop: sliding and full alternating (gpt-oss), MoE every second layer with chunked
  // attention (Llama 4 Maverick), with truncated backprop.
  const CheckedConfig gpt = read_checked_config(std::string(SMELT_SOURCE_DIR) + "/examples/hf/gpt-oss-20b.json");
  const CheckedConfig maverick =
      read_checked_config(std::string(SMELT_SOURCE_DIR) + "/examples/hf/llama4-maverick.json");
  configs.push_back(looped(gpt, 5, 12, 3));
  configs.push_back(looped(maverick, 3, 30, 4, 2));
  for (const CheckedConfig& checked : configs) {
    const ModelConfig& c = checked;
    INFO(c.name);
    const i64 n = c.num_layers;
    for (const auto& [lo, hi] : {std::pair<i64, i64>{0, n - 1}, {0, n / 3}, {n / 3 + 1, n - 1}, {n / 2, n / 2}})
      for (const i64 recomputed : {i64{0}, i64{1}, i64{2}, i64{5}, i64{13}, StageVisitOptions::kAll})
        for (const bool truncated : {false, true}) check_runs(c, lo, hi, {recomputed, truncated});
  }
}

TEST_CASE("runs follow the periods of the layers and the boundaries of a loop and of full recompute", "[memory]") {
  // gpt-oss-20b: 24 layers, sliding and full alternating, every layer MoE; layers 5-12 looped 3 times.
  const CheckedConfig c =
      looped(read_checked_config(std::string(SMELT_SOURCE_DIR) + "/examples/hf/gpt-oss-20b.json"), 5, 12, 3);
  const LayerSchedule s = schedule(c);
  std::vector<StageVisitRun> runs = memory_detail::stage_visit_runs(c, s, 0, 23, {});
  // Before the loop layers 1-4, the loop 5-12 (3 passes), after it 13-24: each a run of each attention kind, step 2.
  REQUIRE(runs.size() == 6);
  CHECK((runs[0].first == 0 && runs[0].last == 2 && runs[0].step == 2 && runs[0].attention == LayerAttention::sliding));
  CHECK((runs[2].first == 4 && runs[2].last == 10 && runs[2].step == 2 && runs[2].last_pass == 2));
  CHECK(runs[2].visits() == 4 * 3);
  // Full recompute of the first 9 visits: layers 1-4, then 5 of the loop's first pass (layers 5-9).
  runs = memory_detail::stage_visit_runs(c, s, 0, 23, {9, false});
  i64 recomputed = 0;
  for (const StageVisitRun& r : runs) recomputed += r.recomputed ? r.visits() : 0;
  CHECK(recomputed == 9);
  CHECK(runs.size() == 2 + 2 + 2 + 2 + 2);  // before; pass 1's layers 5-9 and 10-12; passes 2-3; after
}

TEST_CASE("full recompute's boundary inside a loop's pass: tiny-moe to the byte", "[memory]") {
  // Visits 1, 2, 3, 2, 3, 4: the first two (layer 1, dense; layer 2, MoE) keep their input alone, 32 x 64 x 4 =
  // 8192 bytes; the other four MoE visits 194176 each; 153236 outside the layers.
  MemoryLayout l = small();
  l.recompute = Recompute::full;
  l.recompute_layers = 2;
  const StageMemory s = memory(tiny(), l).stages[0];
  CHECK(s.activations.total == 2 * 8192 + 4 * 194176 + 153236);
  // Layer 1; layer 2 on pass 1 (recomputed); layer 3 on pass 1; layers 2-3 on pass 2; layer 4.
  REQUIRE(s.visit_runs.size() == 5);
  CHECK((s.visit_runs[1].first_layer == 2 && s.visit_runs[1].recompute == Recompute::full));
  CHECK((s.visit_runs[2].first_layer == 3 && s.visit_runs[2].last_visit == 1 &&
         s.visit_runs[2].recompute == Recompute::none));
  CHECK((s.visit_runs[3].first_layer == 2 && s.visit_runs[3].last_layer == 3 && s.visit_runs[3].first_visit == 2));
}

TEST_CASE("4,096 layers looped 1,024 times: one run of 4,194,304 visits, a report of a few KB", "[memory]") {
  // tests/data/hostile/memory-4M-visits.json: tiny-moe's geometry, dense (width 128), layers 1-4096 looped 1,024
  // times. At 2 x 16 tokens in fp32 a visit keeps 158208 bytes (tiny-moe's dense visit, memory_test.cpp), and the
  // embedding, final norm, head and loss 153236.
  const CheckedConfig c = data("hostile/memory-4M-visits.json");
  const MemoryReport r = memory(c, small());
  const StageMemory& s = r.stages[0];
  CHECK(s.layer_visits == 4194304);
  REQUIRE(s.visit_runs.size() == 1);
  const VisitRun& run = s.visit_runs[0];
  CHECK((run.first_layer == 1 && run.last_layer == 4096 && run.step == 1));
  CHECK((run.first_visit == 1 && run.last_visit == 1024 && run.count == 4194304));
  CHECK(run.activations.total == 158208);
  CHECK(s.activations.total == i64{4194304} * 158208 + 153236);
  CHECK(memory_report_json(r).size() < 8192);
  // The time model runs the same visits as one row per op, each run 4,194,304 times.
  const TimeReport t = step_time(c, small(), hardware_spec("h100"));
  for (const Op& op : t.forward.ops)
    if (op.layer > 0) CHECK(op.times == 4194304);  // one micro-batch
  CHECK(t.forward.ops.size() < 32);
}

TEST_CASE("65,536 one-layer stages: every stage counted, the decode step's rows by shape of stage", "[memory]") {
  const CheckedConfig c = data("hostile/dense-65536.json");
  MemoryLayout l = small();
  l.pp = 65536;
  const MemoryReport r = memory(c, l);
  REQUIRE(r.stages.size() == 65536);
  CHECK(r.worst_stage == 0);  // the first holds a micro-batch per stage and the embedding's input
  CHECK(r.stages[1].layer_visits == 1);
  // A middle stage: its weights (one dense layer) and one micro-batch's visit (158208) in flight 65536 - 1 times.
  CHECK(r.stages[1].activations.total == i64{65535} * 158208);
  const TimeReport t = step_time(c, l, hardware_spec("h100"));
  // First, middle and last stages: three shapes of rows, the middle one's times counting 65,534 stages.
  CHECK(t.decode.ops.size() < 64);
  i64 sends = 0;
  for (const Op& op : t.decode.ops)
    if (op.name == "pp_send") sends += op.times;
  CHECK(sends == 65535);
}
