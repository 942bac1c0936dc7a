// The sweep: the grid it lays out, that every row is the solver's answer for
// its recipe, its reports, and every bad option at once.
#include <algorithm>
#include <cmath>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "smelt/config_io.hpp"
#include "smelt/error.hpp"
#include "smelt/sweep.hpp"
#include "smelt/sweep_report.hpp"
#include "test_configs.hpp"

using namespace smelt;

namespace {

using test::example;

std::vector<std::string> sweep_errors(const ModelConfig& b, const SweepOptions& o, const SearchSpace& s = {}) {
  try {
    (void)sweep(b, o, s);
  } catch (const config_error& e) {
    return e.lines();
  }
  return {};
}

std::vector<std::string> texts(const std::vector<Violation>& violations) {
  std::vector<std::string> out;
  for (const auto& v : violations) out.push_back(v.text());
  return out;
}

LoopRecipe recipe(std::string span, std::int64_t loops, std::optional<std::int64_t> depth = std::nullopt) {
  LoopRecipe r;
  r.span = parse_loop_span(span, "LoopRecipe::span");
  r.loops = loops;
  r.depth = depth;
  return r;
}

}  // namespace

TEST_CASE("sweep: the default grid of a 12-layer Baseline: 1 + 4 spans x 3 loop counts + 4 depths", "[sweep]") {
  const ModelConfig b = example("smelt-baseline-12l.json");
  const auto rows = sweep(b, {});
  REQUIRE(rows.size() == 17);

  // The baseline row is the Baseline itself, matched exactly.
  CHECK(rows[0].kind == SweepKind::baseline);
  CHECK(rows[0].span == "none");
  CHECK(rows[0].loops == 1);
  CHECK(rows[0].executed_layers == 12);
  CHECK(rows[0].knobs == Knobs{1280, 192, 10, 2, 128, 320, 0, 0});
  CHECK(rows[0].max_abs_mismatch_pct == 0);
  CHECK(rows[0].within_tolerance);
  CHECK(rows[0].depth_to_width == Approx(12.0 / 1280));

  // Centred spans: 0.25 x 12 = 3 layers from 5, 0.5 -> 6 from 4, 0.75 -> 9 from 2, 1 -> all.
  const char* spans[] = {"5-7", "4-9", "2-10", "1-12"};
  const double fractions[] = {0.25, 0.5, 0.75, 1.0};
  const std::int64_t looped[] = {3, 6, 9, 12};
  for (std::size_t s = 0; s < 4; ++s)
    for (std::int64_t n = 2; n <= 4; ++n) {
      const SweepRow& r = rows[1 + 3 * s + static_cast<std::size_t>(n - 2)];
      INFO("span " << fractions[s] << " x" << n);
      CHECK(r.kind == SweepKind::loop);
      CHECK(r.span_fraction == fractions[s]);
      CHECK(r.span == spans[s]);
      CHECK(r.loops == n);
      CHECK(r.config.num_layers == 12);
      CHECK(r.executed_layers == 12 + looped[s] * (n - 1));
      CHECK(r.config.loops.front().count == n);
      CHECK(r.config.loops.front().residual_scale == Approx(1.0 / static_cast<double>(n)));
    }

  // Depth rows: 0.5, 0.75, 1.25 and 1.5 x 12 layers, unlooped.
  const std::int64_t depths[] = {6, 9, 15, 18};
  const double multipliers[] = {0.5, 0.75, 1.25, 1.5};
  for (std::size_t i = 0; i < 4; ++i) {
    const SweepRow& r = rows[13 + i];
    CHECK(r.kind == SweepKind::depth);
    CHECK(r.depth_multiplier == multipliers[i]);
    CHECK(r.span == "none");
    CHECK(r.loops == 1);
    CHECK(r.config.num_layers == depths[i]);
    CHECK(r.executed_layers == depths[i]);
    CHECK(!r.config.looped());
    CHECK(r.recipe.depth == depths[i]);
  }
  // Shallower Baselines widen (the default H domain is [H, 2H]), deeper ones narrow.
  CHECK(rows[13].knobs.hidden > 1280);
  CHECK(rows[14].knobs.hidden > 1280);
  CHECK(rows[15].knobs.hidden <= 1280);
  CHECK(rows[16].knobs.hidden <= 1280);

  // The paper's middle-half x2 (4-9, 18 layers executed): as derive finds it.
  CHECK(rows[4].knobs.hidden == 1152);
  CHECK(rows[4].knobs.experts == 240);
  CHECK(rows[4].knobs.head_dim == 56);
  CHECK(rows[4].kv_mismatch_pct == -1.5625);  // 3 x 56 = 168 against 2 x 128 x 12/18 = 170.67
  CHECK(!rows[4].within_tolerance);           // outside the tolerance is a row, not an error
}

TEST_CASE("sweep: every row is the solver's best candidate for its recipe", "[sweep]") {
  for (const char* name : {"smelt-baseline-12l.json", "tiny-moe.json"}) {
    const ModelConfig b = example(name);
    MatchOptions options;
    options.top = 7;  // ignored: each row is the best
    const auto rows = sweep(b, {}, {}, options);
    REQUIRE(rows.size() == 17);
    for (const SweepRow& r : rows) {
      INFO(name << ": " << to_string(r.kind) << " span " << r.span_fraction << " x" << r.loops << " depth "
                << r.depth_multiplier);
      options.top = 1;
      const MatchResult direct = solve(b, r.recipe, {}, options);
      const Candidate& best = direct.candidates.front();
      CHECK(r.knobs == best.knobs);
      CHECK(r.config == best.config);
      CHECK(r.max_abs_mismatch_pct == best.max_abs_mismatch_pct);
      CHECK(r.within_tolerance == direct.within_tolerance);
      CHECK(r.executed_layers == best.executed_layers);
      CHECK(r.depth_to_width == best.depth_to_width);
      CHECK(r.flops_mismatch_pct == best.budgets.front().flops.mismatch_pct);
      CHECK(r.params_mismatch_pct == best.budgets.front().params.mismatch_pct);
      CHECK(r.kv_mismatch_pct == best.budgets.front().kv.mismatch_pct);
    }
  }
  // The same answers from recipes written as a user would.
  const ModelConfig b = example("smelt-baseline-12l.json");
  const auto rows = sweep(b, {});
  const auto knobs = [&](const LoopRecipe& r) { return solve(b, r).candidates.front().knobs; };
  CHECK(rows[0].knobs == knobs(recipe("0%", 1)));
  CHECK(rows[2].knobs == knobs(recipe("0.25", 3)));
  CHECK(rows[4].knobs == knobs(recipe("middle-half", 2)));
  CHECK(rows[12].knobs == knobs(recipe("full", 4)));
  CHECK(rows[13].knobs == knobs(recipe("0%", 1, 6)));
  CHECK(rows[16].knobs == knobs(recipe("0%", 1, 18)));
}

TEST_CASE("sweep: a looped Baseline: span 0 keeps its loop, depths scale its stored layers", "[sweep]") {
  const ModelConfig b = example("tiny-moe.json");  // 4 layers, 2-3 looped twice: 6 executed
  SweepOptions o;
  o.spans = {0, 0.5};
  o.loops = {2};
  const auto rows = sweep(b, o);
  REQUIRE(rows.size() == 6);
  CHECK(rows[0].kind == SweepKind::baseline);
  CHECK(rows[0].executed_layers == 6);  // the Baseline as it is, its loop kept
  CHECK(rows[0].config.loops == b.loops);
  CHECK(rows[0].max_abs_mismatch_pct == 0.0);
  // Two spans, both kept in the Baseline row; a loop row replaces them with its own loop.
  const ModelConfig two = example("loops/block-repeat-two-spans.json");
  SweepOptions t;
  t.spans = {0, 0.5};
  t.loops = {2};
  t.depths = {};
  const auto kept = sweep(two, t);
  REQUIRE(kept.size() == 2);
  CHECK(kept[0].config.loops == two.loops);
  CHECK(kept[1].config.loops == std::vector<LoopConfig>{{4, 9, 2, 0.5}});
  CHECK(rows[1].span == "2-3");
  CHECK(rows[1].executed_layers == 6);
  std::vector<std::int64_t> depths;
  for (std::size_t i = 2; i < rows.size(); ++i) depths.push_back(rows[i].config.num_layers);
  CHECK(depths == std::vector<std::int64_t>{2, 3, 5, 6});
}

TEST_CASE("sweep: spans of no layers, loop count 1 and duplicates", "[sweep]") {
  const ModelConfig b = example("smelt-baseline-12l.json");
  SweepOptions o;
  o.spans = {0.05, 0.5, 0.5};  // 0.05 x 12 = 0.6: no layer loops
  o.loops = {1, 2, 2};
  o.depths = {};
  const auto rows = sweep(b, o);
  REQUIRE(rows.size() == 4);
  CHECK(rows[0].kind == SweepKind::loop);
  CHECK(rows[0].span == "none");
  CHECK(rows[1].span == "none");
  CHECK(rows[1].loops == 2);
  CHECK(rows[1].executed_layers == 12);
  CHECK(rows[2].span == "none");  // loop count 1: nothing repeats
  CHECK(rows[2].loops == 1);
  CHECK(rows[3].span == "4-9");
  CHECK(rows[1].knobs == rows[2].knobs);
}

TEST_CASE("sweep: several contexts: each budget's mismatch of largest magnitude", "[sweep]") {
  const ModelConfig b = example("tiny-moe.json");
  SweepOptions o;
  o.spans = {1.0};
  o.loops = {3};
  o.depths = {};
  MatchOptions m;
  m.contexts = {4, 64};
  const auto rows = sweep(b, o, {}, m);
  REQUIRE(rows.size() == 1);
  m.top = 1;
  const Candidate best = solve(b, rows[0].recipe, {}, m).candidates.front();
  REQUIRE(best.budgets.size() == 2);
  const auto worst = [](double x, double y) { return std::fabs(x) >= std::fabs(y) ? x : y; };
  CHECK(rows[0].flops_mismatch_pct == worst(best.budgets[0].flops.mismatch_pct, best.budgets[1].flops.mismatch_pct));
  CHECK(rows[0].kv_mismatch_pct == worst(best.budgets[0].kv.mismatch_pct, best.budgets[1].kv.mismatch_pct));
  CHECK(rows[0].max_abs_mismatch_pct == best.max_abs_mismatch_pct);
}

TEST_CASE("sweep: CSV: the header, then one line per row", "[sweep]") {
  const ModelConfig b = example("smelt-baseline-12l.json");
  SweepOptions o;
  o.spans = {0, 0.5};
  o.loops = {2};
  o.depths = {0.5};
  const std::string csv = sweep_report_csv(sweep(b, o));
  const std::string header =
      "kind,span_fraction,depth_multiplier,span,loops,depth,executed_layers,hidden_size,num_experts,num_heads,"
      "num_kv_heads,head_dim,flops_mismatch_pct,params_mismatch_pct,kv_mismatch_pct,max_abs_mismatch_pct,"
      "within_tolerance,depth_to_width,memory_bytes,memory_mismatch_pct,training_seconds_per_token,"
      "training_time_mismatch_pct\n";
  CHECK(std::string(kSweepCsvHeader) + "\n" == header);
  REQUIRE(csv.substr(0, header.size()) == header);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 4);
  // The Baseline re-matched is the Baseline: its memory under the default layout (fp32, micro-batch 1 x 4096) is
  // its own, +0%; no time without a device (two empty cells).
  const std::string base_memory = std::to_string(memory(CheckedConfig(b), {}).total);
  CHECK(csv.find("\nbaseline,0,1,none,1,12,12,1280,192,10,2,128,0,0,0,0,yes,0.009375," + base_memory + ",0,,\n") !=
        std::string::npos);
  CHECK(csv.find("\nloop,0.5,1,4-9,2,12,18,1152,240,12,3,56,") != std::string::npos);
  CHECK(csv.find("\ndepth,0,0.5,none,1,6,6,") != std::string::npos);
}

TEST_CASE("sweep: JSON: schema_version first, one object per row with its native config", "[sweep]") {
  const ModelConfig b = example("smelt-baseline-12l.json");
  SweepOptions o;
  o.spans = {0, 0.25};
  o.loops = {2};
  o.depths = {1.5};
  const auto rows = sweep(b, o);
  const std::string text = sweep_report_json(b, rows);
  CHECK(text.rfind("{\n  \"schema_version\": 1,\n  \"kind\": \"sweep\",\n  \"baseline\": \"smelt-baseline-12l\",", 0) ==
        0);
  const auto j = nlohmann::json::parse(text);
  CHECK(j["match"] == nlohmann::json::array({"flops", "params", "kv"}));
  CHECK(j["contexts"] == nlohmann::json::array({4096}));
  REQUIRE(j["rows"].size() == 3);
  CHECK(j["rows"][0]["kind"] == "baseline");
  CHECK(j["rows"][0]["within_tolerance"] == true);
  CHECK(j["rows"][1]["span"] == "5-7");
  CHECK(j["rows"][1]["executed_layers"] == 15);
  CHECK(j["rows"][1]["residual_scale"] == 0.5);
  CHECK(j["rows"][2]["kind"] == "depth");
  CHECK(j["rows"][2]["depth"] == 18);
  CHECK(j["rows"][2]["depth_multiplier"] == 1.5);
  // The config feeds straight back into count and solve.
  const ModelConfig back = parse_native_config(j["rows"][1]["config"].dump());
  CHECK(back == rows[1].config);
  CHECK(j["rows"][1]["hidden_size"] == back.hidden_size);
}

TEST_CASE("sweep: every bad sweep option at once, naming the option, the value and the rule", "[sweep]") {
  const ModelConfig b = example("smelt-baseline-12l.json");
  SweepOptions o;
  o.spans = {1.5, 0.5, -0.25};
  o.loops = {0, 2};
  o.depths = {0, 0.01, -1, 1.0};
  const std::vector<std::string> expected{
      "SweepOptions::spans = 1.5: must be a fraction of the layers in [0, 1] (0% to 100%)",
      "SweepOptions::spans = -0.25: must be a fraction of the layers in [0, 1] (0% to 100%)",
      "SweepOptions::loops = 0: must be at least 1",
      "SweepOptions::depths = 0: must be a depth multiplier > 0",
      "SweepOptions::depths = 0.01: gives 0.01 x 12 layers, which must round to between 1 and 65536",
      "SweepOptions::depths = -1: must be a depth multiplier > 0"};
  CHECK(texts(sweep_violations(b, o)) == expected);
  CHECK(sweep_errors(b, o) == expected);

  SweepOptions none;
  none.spans = {};
  none.depths = {};
  CHECK(sweep_errors(b, none) ==
        std::vector<std::string>{"SweepOptions::spans, SweepOptions::depths: both empty, so the sweep has no rows"});
  SweepOptions no_loops;
  no_loops.loops = {};
  CHECK(sweep_errors(b, no_loops) ==
        std::vector<std::string>{"SweepOptions::loops = []: must list at least one loop count for the spans above 0"});

  ModelConfig listed = b;  // explicit MoE layers: the depth cannot change
  listed.moe.layers = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  SweepOptions depths;
  depths.spans = {0};
  depths.depths = {1.0, 0.5};
  CHECK(sweep_errors(listed, depths) ==
        std::vector<std::string>{
            "SweepOptions::depths = 0.5: the Baseline lists its MoE layers explicitly, so its depth cannot "
            "change (use SweepOptions::depths = [])"});
}

TEST_CASE("sweep: solver errors: once each, marked with the rows they hit unless they hit all", "[sweep]") {
  const ModelConfig b = example("smelt-baseline-12l.json");
  SweepOptions o;
  o.spans = {0, 0.5};
  o.loops = {2};
  o.depths = {0.5};
  SearchSpace s;
  s.hidden = KnobRange{1000, 1000};
  s.align_experts = 0;
  CHECK(sweep_errors(b, o, s) ==
        std::vector<std::string>{"SearchSpace::align_experts = 0: must be positive",
                                 "SearchSpace::hidden = 1000: must be a multiple of SearchSpace::align_hidden = 64"});
  // Only the narrower models' default H domain [320, 1280] lacks a multiple of 2560.
  SearchSpace wide;
  wide.align_hidden = 2560;
  CHECK(sweep_errors(b, o, wide) ==
        std::vector<std::string>{"SearchSpace::hidden = 320:1280: contains no multiple of SearchSpace::align_hidden = "
                                 "2560 (sweep rows: baseline, span 0.5 x2)"});
}

TEST_CASE("sweep: loop counts are bounded as a config's loop.count", "[sweep]") {
  const ModelConfig b = example("smelt-baseline-12l.json");
  SweepOptions o;
  o.loops = {INT64_MAX, 1025, 1024};
  CHECK(texts(sweep_violations(b, o)) ==
        std::vector<std::string>{"SweepOptions::loops = 9223372036854775807: must be at most 1024",
                                 "SweepOptions::loops = 1025: must be at most 1024"});
  o.spans = {std::nan("")};
  o.loops = {2};
  o.depths = {std::nan(""), HUGE_VAL};
  CHECK(texts(sweep_violations(b, o)) ==
        std::vector<std::string>{"SweepOptions::spans = nan: must be a fraction of the layers in [0, 1] (0% to 100%)",
                                 "SweepOptions::depths = nan: must be a depth multiplier > 0",
                                 "SweepOptions::depths = inf: must be a depth multiplier > 0"});
}

TEST_CASE("sweep: each list holds at most 64 values", "[sweep]") {
  const ModelConfig b = example("smelt-baseline-12l.json");
  SweepOptions o;
  o.spans = std::vector<double>(65, 0.5);  // once deduplicated pairwise: quadratic in the list
  o.loops = std::vector<std::int64_t>(100, 2);
  CHECK(texts(sweep_violations(b, o)) ==
        std::vector<std::string>{"SweepOptions::spans: 65 values listed: at most 64",
                                 "SweepOptions::loops: 100 values listed: at most 64"});
}
