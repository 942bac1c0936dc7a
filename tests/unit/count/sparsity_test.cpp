// Sparsity S = 1 - (F / F0) N0 / N (the SMELT paper's Eq. 1) of small configs,
// computed by hand from the counts in cost_test.cpp.
#include <catch2/catch.hpp>

#include "smelt/count_report.hpp"
#include "smelt/sparsity.hpp"
#include "test_configs.hpp"

using namespace smelt;

TEST_CASE("the tiny MoE's sparsity against itself with every expert active", "[sparsity]") {
  const ModelConfig c = test::tiny_moe();
  const CountedModel m = count_model(c);
  // F = 392,960 (forward non-embedding, cost_test.cpp). With all 8 experts active
  // each of the 5 MoE visits runs 8 * 2 * 6144 = 98,304 expert FLOPs instead of
  // 2 * 2 * 6144 = 24,576: F0 = 392,960 + 5 * 73,728 = 761,600. N0 = N = 241,728.
  CHECK(m.sparsity.flops == 392960);
  CHECK(m.sparsity.reference_flops == 761600);
  CHECK(m.sparsity.params == 241728);
  CHECK(m.sparsity.reference_params == 241728);
  CHECK(m.sparsity.reference.empty());
  CHECK(m.sparsity.value == Approx(1.0 - 392960.0 / 761600.0).epsilon(1e-15));  // 0.48403...
  CHECK(every_expert_active(c).moe.top_k == 8);
}

TEST_CASE("a dense config, or one with every expert active, has sparsity 0", "[sparsity]") {
  CHECK(count_model(test::tiny_dense(2)).sparsity.value == 0);
  CHECK(count_model(every_expert_active(test::tiny_moe())).sparsity.value == 0);
}

TEST_CASE("a reference config gives N_act^eq = (F / F0) N0", "[sparsity]") {
  const ModelConfig moe = test::tiny_moe();
  ModelConfig dense = test::tiny_dense(4);
  dense.name = "dense control";
  const CountedModel m = count_model(moe, {}, &dense);
  const CostReport d = count(dense);
  CHECK(m.sparsity.reference == "dense control");
  CHECK(m.sparsity.reference_flops == d.flops.forward_non_embedding());
  CHECK(m.sparsity.reference_params == d.params.non_embedding);
  CHECK(m.sparsity.value == Approx(1.0 - (392960.0 / d.flops.forward_non_embedding()) *
                                             (static_cast<double>(d.params.non_embedding) / 241728.0))
                                .epsilon(1e-15));
  // The reference is counted at the model's context, not its own.
  CountOptions at_4;
  at_4.context_length = 4;
  CountOptions ref_at_4 = at_4;
  CHECK(count_model(moe, at_4, &dense).sparsity.reference_flops ==
        count(dense, ref_at_4).flops.forward_non_embedding());
}
