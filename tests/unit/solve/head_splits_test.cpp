// Distinct candidates and their head splits (docs/solver.md section 6): no two
// candidates share H, E, the FFN widths, the attention width heads x head_dim
// and the KV width kv_heads x head_dim; each lists every split of the space
// with its five values, counted here by hand.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "smelt/config_io.hpp"
#include "smelt/count.hpp"
#include "smelt/match_report.hpp"
#include "smelt/solve.hpp"
#include "test_configs.hpp"

using namespace smelt;

namespace {

using test::example;

bool same_but_heads(const Candidate& a, const Candidate& b) {
  const Knobs& x = a.knobs;
  const Knobs& y = b.knobs;
  return x.hidden == y.hidden && x.experts == y.experts && x.expert_width == y.expert_width &&
         x.shared_width == y.shared_width && x.dense_width == y.dense_width &&
         x.heads * x.head_dim == y.heads * y.head_dim && x.kv_heads * x.head_dim == y.kv_heads * y.head_dim;
}

}  // namespace

TEST_CASE("the 12-layer Baseline at attention ratio 1: the best has 4 head splits, the next candidate 5", "[solve]") {
  // smelt-baseline-12l: H 1280, 10/2/128 attention, 192 experts of 320; layers 4-9 looped twice.
  // With the attention width pinned to H (--attention-ratio 1) the best is H 960, 360 experts, 12/2/80:
  // attention width 12 x 80 = 960, KV width 2 x 80 = 160. Its splits are the head_dims d that divide both widths,
  // so d | gcd(960, 160) = 160, a multiple of 8 (align_head_dim) in [32, 256]: d = 32, 40, 80, 160, giving
  // 30/5/32, 24/4/40, 12/2/80, 6/1/160, and in each the KV heads divide the query heads (30/5, 24/4, 12/2, 6/1):
  // 4 splits. In the tie-break order after the shown one (|heads - 10|, then |kv - 2|, then |d - 128|):
  // 6/1/160 (4), 24/4/40 (14), 30/5/32 (20).
  const MatchResult r = solve(example("smelt-baseline-12l.json"), {}, {.attention_ratio = {1, 1}}, {.top = 3});
  REQUIRE(r.candidates.size() == 3);
  const Candidate& best = r.candidates[0];
  CHECK(best.knobs == Knobs{960, 360, 12, 2, 80, 240, 0, 0});
  CHECK(best.head_splits == std::vector<HeadSplit>{{12, 2, 80}, {6, 1, 160}, {24, 4, 40}, {30, 5, 32}});
  // The next distinct candidate, at the same H and E: 10/2/96, widths 960 and 192. d | gcd(960, 192) = 192, a
  // multiple of 8 in [32, 256]: 32, 48, 64, 96, 192, giving 30/6, 20/4, 15/3, 10/2, 5/1 (each KV count divides):
  // 5 splits. Tie-break: 10/2/96 (0), then 15/3/64 and 5/1/192 (|heads - 10| = 5, |kv - 2| = 1, |d - 128| = 64
  // for both: fewer heads first), 20/4/48 (10), 30/6/32 (20).
  const Candidate& next = r.candidates[1];
  CHECK(next.knobs == Knobs{960, 360, 10, 2, 96, 240, 0, 0});
  CHECK(next.head_splits == std::vector<HeadSplit>{{10, 2, 96}, {5, 1, 192}, {15, 3, 64}, {20, 4, 48}, {30, 6, 32}});
  CHECK(next.max_abs_mismatch_pct == 12.5);  // KV 2 x 96 x 18 / (2 x 128 x 12) = 1.125: +12.5%
  // The third: H 1088, 8/1/136 (widths 1088 and 136: d | 136 in [32, 256], a multiple of 8: only 136).
  CHECK(r.candidates[2].knobs.hidden == 1088);
  CHECK(r.candidates[2].head_splits == std::vector<HeadSplit>{{8, 1, 136}});

  // Every split of the best counts the same: the widths decide every budget (no per-head norm, no sinks here).
  const CostReport shown = count(best.config);
  for (const HeadSplit& h : best.head_splits) {
    ModelConfig c = best.config;
    c.attention.num_heads = h.heads;
    c.attention.num_kv_heads = h.kv_heads;
    c.attention.head_dim = h.head_dim;
    const CostReport other = count(c);
    CHECK(other.params.non_embedding == shown.params.non_embedding);
    CHECK(other.flops.forward == shown.flops.forward);
    CHECK(other.kv.bytes_at_context == shown.kv.bytes_at_context);
  }

  const std::string json = match_report_json(r);
  CHECK(json.rfind("{\n  \"schema_version\": 3,\n  \"kind\": \"match\",", 0) == 0);
  CHECK(json.find(
            "      \"dense_width\": 0\n    },\n    \"equivalent_head_splits\": 4,\n    \"head_splits\": [\n"
            "      {\n        \"num_heads\": 12,\n        \"num_kv_heads\": 2,\n        \"head_dim\": 80\n      },\n"
            "      {\n        \"num_heads\": 6,\n") != std::string::npos);
}

TEST_CASE("no two candidates are head splits of one another, and the best is unchanged by it", "[solve]") {
  // Before candidates were made distinct, the 1.6B paper cell listed four more splits of its best (28/4/96,
  // 21/3/128, 56/8/48, 14/2/192, all at 0.475%) as its alternatives. Widths 42 x 64 = 2688 and 6 x 64 = 384:
  // d | gcd(2688, 384) = 384, a multiple of 8 in [32, 256]: 32, 48, 64, 96, 128, 192 (6 splits; 84/12, 56/8,
  // 42/6, 28/4, 21/3, 14/2, each KV count dividing).
  const MatchResult r = solve(example("paper/paper-1p6b-e192-kv9x64.json"), {});
  REQUIRE(r.candidates.size() == 5);
  CHECK(r.candidates[0].knobs == Knobs{1600, 400, 42, 6, 64, 400, 0, 0});
  CHECK(r.candidates[0].head_splits ==
        std::vector<HeadSplit>{{42, 6, 64}, {28, 4, 96}, {21, 3, 128}, {56, 8, 48}, {14, 2, 192}, {84, 12, 32}});
  for (const std::string name : {"smelt-baseline-12l.json", "paper/paper-1p6b-e192-kv9x64.json",
                                 "paper/paper-600m-e8-kv7x64.json", "paper/paper-100m-e64-kv3x56.json"}) {
    const MatchResult m = solve(example(name), {});
    for (std::size_t i = 0; i < m.candidates.size(); ++i) {
      CHECK(!m.candidates[i].head_splits.empty());
      CHECK(m.candidates[i].head_splits.front() ==
            HeadSplit{m.candidates[i].knobs.heads, m.candidates[i].knobs.kv_heads, m.candidates[i].knobs.head_dim});
      for (std::size_t j = 0; j < i; ++j) CHECK(!same_but_heads(m.candidates[i], m.candidates[j]));
    }
    // The best is the answer of a top-1 solve (where distinctness cannot matter).
    const MatchResult one = solve(example(name), {}, {}, {.top = 1});
    CHECK(m.candidates[0].knobs == one.candidates[0].knobs);
    CHECK(m.candidates[0].max_abs_mismatch_pct == one.candidates[0].max_abs_mismatch_pct);
  }
}

TEST_CASE("an MLA Baseline keeps its attention: one split per candidate", "[solve]") {
  const MatchResult r = solve(example("deepseek-v3-mla.json"), {}, {}, {.match = {Budget::flops, Budget::params}});
  for (const Candidate& c : r.candidates) CHECK(c.head_splits == std::vector<HeadSplit>{{c.knobs.heads, 0, 0}});
}
