// The expert width as a searched knob (SearchSpace::ffn = searched): a known
// answer on a Baseline rebuilt from the SMELT paper, and every contradiction.
#include <catch2/catch.hpp>

#include "smelt/config_io.hpp"
#include "smelt/error.hpp"
#include "smelt/solve.hpp"
#include "solve_test_helpers.hpp"
#include "test_configs.hpp"

using namespace smelt;

namespace {

using test::paper_200m;

// The paper's alignment freedom: H and E multiples of 8, head_dim of 4; the
// attention in the box the solver searched before its shape rules (query heads
// kept, KV heads up to 2, head_dim up to 128), so that the width alone moves
// the answer here (the shape rules' answer: attention_space_test.cpp).
SearchSpace paper_space(FfnScaling ffn) {
  return {.head_dim = KnobRange{32, 128},
          .kv_heads = KnobRange{1, 2},
          .align_hidden = 8,
          .align_experts = 8,
          .align_head_dim = 4,
          .free_heads = false,
          .ffn = ffn};
}

using test::space_errors;

}  // namespace

TEST_CASE("searching the expert width brings the paper's 200M E8 cell from 5.79% to 4.40%", "[solve][width]") {
  const ModelConfig b = paper_200m();
  // Today's answer (width tied to H): 1008 / 16 experts of 256 / 10 x 2 x 88, FLOPs -5.793%.
  const MatchResult tied = solve(b, {}, paper_space(FfnScaling::proportional));
  CHECK(tied.candidates.front().knobs.expert_width == 256);
  CHECK(tied.candidates.front().max_abs_mismatch_pct == Approx(5.793).margin(5e-4));

  const MatchResult r = solve(b, {}, paper_space(FfnScaling::searched));
  const Candidate& c = r.candidates.front();
  CHECK(c.knobs == Knobs{1264, 16, 10, 2, 88, 192, 0, 0});
  const BudgetsAt& at = c.budgets.front();
  // Baseline, per layer (H 1280, 10 x 128 queries, 2 x 128 KV, 8 experts of 320, gated):
  //   attention 1280*1280 + 2*1280*256 + 1280*1280 = 3,932,160; norms 2*1280 = 2,560;
  //   router 1280*8 = 10,240; experts 8*3*1280*320 = 9,830,400: 13,775,360 per layer;
  //   x 12 layers + the final norm 1280 = 165,305,600.
  CHECK(at.params.baseline == 165'305'600);
  // Candidate, per layer (H 1264, 10 x 88 = 880 queries, 2 x 88 KV, 16 experts of 192):
  //   attention 1264*880 + 2*1264*176 + 880*1264 = 2,669,568; norms 2*1264 = 2,528;
  //   router 1264*16 = 20,224; experts 16*3*1264*192 = 11,649,024: 14,341,344 per layer;
  //   x 12 stored layers + 1264 = 172,097,392: +6,791,792 / 165,305,600 = +4.1086%.
  CHECK(at.params.candidate == 172'097'392);
  CHECK(at.params.mismatch_pct == Approx(4.10863).margin(5e-5));
  // FLOPs per token at context 4096 (mean attended context 2048.5), 18 executed layers:
  //   2 x (2,669,568 + 20,224 + 8*3*1264*192 = 5,824,512 active) = 17,028,608 matmul,
  //   + 4 x 880 x 2048.5 = 7,210,720 attention, x 18 = 436,307,904;
  //   Baseline 2 x 13,772,800 + 4 x 1280 x 2048.5 = 38,034,240, x 12 = 456,407,040.
  CHECK(at.flops.candidate == 436'307'904);
  CHECK(at.flops.baseline == 456'407'040);
  // -20,099,136 / 456,407,040 = -4.4038%: the largest of the three.
  CHECK(c.max_abs_mismatch_pct == Approx(4.40377).margin(5e-5));
  // KV: 2 x 2 x 88 x 2 bytes x 18 = 12,672 against 2 x 2 x 128 x 2 x 12 = 12,288: +3.125%.
  CHECK(at.kv.candidate == 12'672);
  CHECK(at.kv.mismatch_pct == Approx(3.125));
  // The default domain: multiples of 16 in [320/8, 2 x 320] = [40, 640]: 38 widths.
  CHECK(r.space_size == tied.space_size * 38);
}

TEST_CASE("shared-expert and dense widths keep their ratio to the searched expert width", "[solve][width]") {
  // tiny_moe: routed experts of 32, one shared expert of 32, a dense first layer of 128.
  const ModelConfig b = test::tiny_moe();
  const MatchResult r = solve(b, {}, {.expert_width = KnobRange{48, 48}, .ffn = FfnScaling::searched});
  CHECK(r.candidates.front().knobs.expert_width == 48);
  CHECK(r.candidates.front().knobs.shared_width == 48);
  CHECK(r.candidates.front().knobs.dense_width == 192);
}

TEST_CASE("a searched expert width's contradictions are reported together", "[solve][width]") {
  const ModelConfig b = paper_200m();
  CHECK(
      space_errors(b, {.expert_width = KnobRange{256, 256}, .align_hidden = 0}) ==
      std::vector<std::string>{
          "SearchSpace::align_hidden = 0: must be positive",
          "SearchSpace::expert_width = 256: is searched only with SearchSpace::ffn = searched (ffn is proportional)"});
  CHECK(space_errors(b, {.expert_width = KnobRange{64, 128}, .ffn = FfnScaling::fixed}) ==
        std::vector<std::string>{
            "SearchSpace::expert_width = 64:128: is searched only with SearchSpace::ffn = searched (ffn is fixed)"});
  CHECK(space_errors(b, {.expert_width = KnobRange{305, 318}, .ffn = FfnScaling::searched}) ==
        std::vector<std::string>{
            "SearchSpace::expert_width = 305:318: contains no multiple of SearchSpace::align_ffn = 16"});
  CHECK(space_errors(b, {.expert_width = KnobRange{200, 100}, .ffn = FfnScaling::searched}) ==
        std::vector<std::string>{
            "SearchSpace::expert_width = 200:100: must be a positive value or a range LO:HI with LO <= HI"});
  CHECK(space_errors(test::tiny_dense(4), {.ffn = FfnScaling::searched}) ==
        std::vector<std::string>{
            "SearchSpace::ffn = searched: the Baseline has no routed experts whose width to search"});
}
