// The solver on real questions: known answers, the objective and tie-break,
// tolerance and its explanations, and every bad option.
#include <catch2/catch.hpp>

#include "../src/exact_budget.hpp"
#include "smelt/cost.hpp"
#include "smelt/error.hpp"
#include "smelt/io.hpp"
#include "smelt/solve.hpp"
#include "test_configs.hpp"

using namespace smelt;

namespace {
ModelConfig example(const char* name) { return read_config(std::string(SMELT_SOURCE_DIR "/examples/") + name); }

std::vector<std::string> errors_of(const ModelConfig& b, const LoopRecipe& r, const SearchSpace& s,
                                   const MatchOptions& o = {}) {
  try {
    (void)solve(b, r, s, o);
  } catch (const config_error& e) {
    return e.violations();
  }
  return {};
}

double pct(double candidate, double baseline) { return 100.0 * (candidate - baseline) / baseline; }
}  // namespace

TEST_CASE("exact fractions compare without rounding or overflow", "[solve]") {
  using detail::compare;
  using detail::Fraction;
  using detail::i128;
  CHECK(compare(Fraction{1, 3}, Fraction{34, 100}) < 0);
  CHECK(compare(Fraction{2, 4}, Fraction{1, 2}) == 0);
  CHECK(compare(Fraction{7, 2}, Fraction{3, 1}) > 0);
  CHECK(compare(Fraction{0, 5}, Fraction{0, 9}) == 0);
  // (2^100 + 1) / 2^100 against (2^100 + 2) / (2^100 + 1): both just above 1; products would overflow 128 bits.
  const i128 big = i128{1} << 100;
  CHECK(compare(Fraction{big + 1, big}, Fraction{big + 2, big + 1}) > 0);
  CHECK(compare(Fraction{big + 2, big + 1}, Fraction{big + 1, big}) < 0);
}

TEST_CASE("without a loop the Baseline itself is the exact optimum", "[solve]") {
  const ModelConfig b = example("smelt-baseline-12l.json");
  const MatchResult r = solve(b, {.loops = 1});
  const Candidate& best = r.candidates.front();
  CHECK(best.max_abs_mismatch_pct == 0.0);
  CHECK(best.knobs == Knobs{1280, 192, 10, 2, 128, 320, 0, 0});
  CHECK(r.within_tolerance);
  CHECK(r.why.empty());
}

TEST_CASE("the 54B-class example matches all three budgets within 0.54%", "[solve]") {
  const ModelConfig b = example("smelt-baseline-54b.json");
  const MatchResult r = solve(b, {});
  const Candidate& best = r.candidates.front();
  CHECK(best.knobs == Knobs{1920, 488, 24, 6, 64, 640, 0, 0});
  CHECK(r.loop.first == 8);
  CHECK(r.loop.last == 22);
  CHECK(best.executed_layers == 45);
  // KV: 30 layers x 2 x 6 x 96 x 2 bytes = 69,120 = 45 visits x 2 x 6 x 64 x 2: exact.
  CHECK(best.budgets[0].kv.baseline == 69120);
  CHECK(best.budgets[0].kv.candidate == 69120);
  // The other two agree with count() of both configs.
  const CostReport base = count(b);
  const CostReport derived = count(best.config);
  CHECK(best.budgets[0].flops.mismatch_pct ==
        Approx(pct(derived.flops.forward_non_embedding(), base.flops.forward_non_embedding())).epsilon(1e-9));
  CHECK(best.budgets[0].params.mismatch_pct ==
        Approx(pct(static_cast<double>(derived.params.non_embedding), static_cast<double>(base.params.non_embedding)))
            .epsilon(1e-9));
  CHECK(best.max_abs_mismatch_pct == Approx(0.534).margin(0.001));
  CHECK(r.within_tolerance);
  CHECK(r.candidates.size() == 5);
  // Memory and work stay far below the space: the answer is found after counting a few hundred configs.
  CHECK(r.space_size == 423360);
  CHECK(r.evaluated < 1000);
}

TEST_CASE("a Baseline the space cannot match within 1% exits with reasons", "[solve]") {
  const MatchResult r = solve(example("smelt-baseline-12l.json"), {});
  CHECK_FALSE(r.within_tolerance);
  const Candidate& best = r.candidates.front();
  CHECK(best.knobs.hidden == 1024);
  CHECK(best.knobs.experts == 312);
  CHECK(best.knobs.head_dim == 88);
  // KV target: 2 KV heads x 128 x 12/18 = 2 x 85.3; head_dim 88 gives +3.125%, 80 gives -6.25%.
  CHECK(best.budgets[0].kv.mismatch_pct == 3.125);
  REQUIRE(r.why.size() == 3);
  CHECK(r.why[0] ==
        "kv_bytes_per_token: +3.12% misses the 1% tolerance: KV cache moves in steps of 9.4% here (head_dim multiple "
        "of 8 with 2 KV heads); allow other --kv-heads or --head-dim values");
  CHECK(r.why[1] ==
        "flops_per_token: -3.55% misses the 1% tolerance (the largest mismatch): FLOPs move in steps of about 7.5% per "
        "64 of hidden size here (--align-hidden)");
  CHECK(r.why[2] ==
        "params_non_embedding: +3.22% misses the 1% tolerance: parameters move in steps of 2.6% per 8 experts at "
        "hidden size 1024");
}

TEST_CASE("matching parameters alone minimises the parameter mismatch alone", "[solve]") {
  const ModelConfig b = example("smelt-baseline-12l.json");
  const MatchResult r = solve(b, {}, {}, {.match = {Budget::params}});
  const Candidate& best = r.candidates.front();
  CHECK(best.max_abs_mismatch_pct == Approx(std::fabs(best.budgets[0].params.mismatch_pct)));
  CHECK(std::fabs(best.budgets[0].params.mismatch_pct) < 0.05);
}

TEST_CASE("several contexts are matched jointly and reported each", "[solve]") {
  const ModelConfig b = example("smelt-baseline-54b.json");
  const MatchResult r = solve(b, {}, {}, {.contexts = {4096, 32768}});
  const Candidate& best = r.candidates.front();
  REQUIRE(best.budgets.size() == 2);
  CHECK(best.budgets[1].context == 32768);
  double worst = 0;
  for (const auto& at : best.budgets)
    for (double m : {at.flops.mismatch_pct, at.params.mismatch_pct, at.kv.mismatch_pct})
      worst = std::max(worst, std::fabs(m));
  CHECK(best.max_abs_mismatch_pct == Approx(worst));
}

TEST_CASE("FLOPs with the head is a different budget", "[solve]") {
  const ModelConfig b = example("smelt-baseline-54b.json");
  const MatchResult r = solve(b, {}, {}, {.flops_with_head = true});
  const BudgetsAt& at = r.candidates.front().budgets[0];
  CHECK(at.flops.mismatch_pct == at.flops_with_head.mismatch_pct);
  CHECK(at.flops.baseline == count(b).flops.forward);
}

TEST_CASE("pinned knobs stay pinned", "[solve]") {
  const ModelConfig b = example("smelt-baseline-54b.json");
  SearchSpace s;
  s.hidden = KnobRange{1984, 1984};
  s.kv_heads = KnobRange{6, 6};
  const MatchResult r = solve(b, {}, s);
  for (const auto& c : r.candidates) {
    CHECK(c.knobs.hidden == 1984);
    CHECK(c.knobs.kv_heads == 6);
  }
}

TEST_CASE("fixed FFN widths keep the Baseline's expert width", "[solve]") {
  const MatchResult r = solve(example("smelt-baseline-54b.json"), {}, {.ffn = FfnScaling::fixed});
  CHECK(r.candidates.front().knobs.expert_width == 768);
}

TEST_CASE("a dense Baseline has no experts to vary", "[solve]") {
  const ModelConfig b = test::tiny_dense(4);
  const MatchResult r = solve(b, {}, {.align_hidden = 16, .align_head_dim = 4, .min_head_dim = 4});
  CHECK(r.candidates.front().knobs.experts == 0);
  CHECK(errors_of(b, {}, {.experts = KnobRange{8, 16}}) ==
        std::vector<std::string>{"--experts: the Baseline has no routed experts to vary"});
}

TEST_CASE("empty or contradictory spaces are errors naming the option and the rule", "[solve]") {
  const ModelConfig b = example("smelt-baseline-12l.json");
  CHECK(errors_of(b, {}, {.align_hidden = 0, .align_experts = 0}) ==
        std::vector<std::string>{"--align-hidden = 0: must be positive", "--align-experts = 0: must be positive"});
  CHECK(errors_of(b, {}, {.hidden = KnobRange{1000, 1000}}) ==
        std::vector<std::string>{"--hidden = 1000: must be a multiple of --align-hidden = 64"});
  CHECK(errors_of(b, {}, {.hidden = KnobRange{1000, 1010}}) ==
        std::vector<std::string>{"--hidden = 1000:1010: contains no multiple of --align-hidden = 64"});
  CHECK(errors_of(b, {}, {.hidden = KnobRange{900, 800}}) ==
        std::vector<std::string>{"--hidden = 900:800: must be a positive value or a range LO:HI with LO <= HI"});
  CHECK(errors_of(b, {}, {.experts = KnobRange{2, 7}}) ==
        std::vector<std::string>{"--experts = 2:7: contains no multiple of --align-experts = 8"});
  CHECK(errors_of(b, {}, {.experts = KnobRange{1, 7}, .align_experts = 1}) ==
        std::vector<std::string>{"--experts = 1:7: must allow at least top_k = 8 experts"});
  CHECK(errors_of(b, {}, {.kv_heads = KnobRange{3, 3}}) ==
        std::vector<std::string>{"--kv-heads = 3: contains no divisor of the query heads (10)"});
  CHECK(errors_of(b, {.span = "10-14", .loops = 0}, {}) ==
        std::vector<std::string>{"--loops = 0: must be at least 1",
                                 "--span = \"10-14\": must satisfy 1 <= first <= last <= 12 (the layers)"});
  CHECK(errors_of(b, {}, {}, {.match = {}, .tolerance_pct = -1, .top = 0}) ==
        std::vector<std::string>{"--top = 0: must be positive", "--tolerance = -1: must be a percentage >= 0",
                                 "--match = \"\": must name at least one of flops, params, kv"});
  CHECK(errors_of(b, {}, {}, {.contexts = {0}}) ==
        std::vector<std::string>{"--context = 0: must be between 1 and 1073741824"});
}
