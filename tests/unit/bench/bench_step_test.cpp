// The measured training step (bench step): its gradients against central
// differences of its own loss in float64, its FLOPs by hand, one AdamW update by
// hand, and its refusals.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "cpu/blas.hpp"
#include "property_cases.hpp"
#include "smelt/bench_plan.hpp"
#include "smelt/bench_step.hpp"
#include "smelt/error.hpp"
#include "smelt/hardware.hpp"
#include "step/model.hpp"
#include "test_configs.hpp"

using namespace smelt;
using step_detail::Slice;
using step_detail::StepModel;

namespace {

// Every tensor of the model: the embedding, each layer's, the final norm, the head.
std::vector<Slice> all_slices(const StepModel<double>& m) {
  std::vector<Slice> out{m.embedding(), m.final_norm(), m.head()};
  for (const auto& l : m.layers()) {
    for (const Slice s : {l.norm1, l.norm2, l.wq, l.wk, l.wv, l.wo, l.router, l.shared_gate}) out.push_back(s);
    std::vector<step_detail::FfnSlices> ffns = l.experts;
    ffns.insert(ffns.end(), l.shared.begin(), l.shared.end());
    ffns.push_back(l.dense);
    for (const auto& f : ffns)
      for (const Slice s : {f.gate, f.up, f.down}) out.push_back(s);
  }
  return out;
}

// Central differences of the loss at each tensor's largest gradient and at one
// random element (of about 30 tensors under the sanitizers), against backward()'s gradient. float64: with a step of
// 1e-6 the difference is good to about 1e-8 absolute.
void require_gradients(const ModelConfig& c, std::int64_t tokens, bool balanced) {
  const LayerPlan plan = make_layer_plan(c, {.tokens = tokens});
  StepModel<double> m(plan, 7, balanced);
  (void)m.forward();
  m.backward();
  const std::vector<double> grad = m.grads();
  std::mt19937_64 rng(1);
  int checked = 0;
  const std::vector<Slice> slices = all_slices(m);
  // The sanitizer build checks about 30 tensors, evenly spread: each check runs two more forwards, which add nothing
  // the sanitizers see, and the Release build checks them all.
  const std::size_t stride = test::every_case ? 1 : std::max<std::size_t>(1, slices.size() / 30);
  for (std::size_t n = 0; n < slices.size(); n += stride) {
    const Slice s = slices[n];
    if (s.size == 0) continue;
    const auto first = grad.begin() + s.offset;
    const auto largest =
        std::max_element(first, first + s.size, [](double a, double b) { return std::abs(a) < std::abs(b); });
    for (const std::int64_t i : {static_cast<std::int64_t>(largest - grad.begin()),
                                 s.offset + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(s.size))}) {
      const double eps = 1e-6, p0 = m.params()[static_cast<std::size_t>(i)];
      m.params()[static_cast<std::size_t>(i)] = p0 + eps;
      const double up = m.forward();
      m.params()[static_cast<std::size_t>(i)] = p0 - eps;
      const double down = m.forward();
      m.params()[static_cast<std::size_t>(i)] = p0;
      const double numeric = (up - down) / (2 * eps);
      INFO(c.name << " parameter " << i << ": backward " << grad[static_cast<std::size_t>(i)] << ", numeric "
                  << numeric);
      CHECK(std::abs(numeric - grad[static_cast<std::size_t>(i)]) <= 1e-7 + 1e-5 * std::abs(numeric));
      ++checked;
    }
  }
  CHECK(checked >= 20);
}

}  // namespace

TEST_CASE("bench step: one-row products go through gemv, in every layout, as the naive sum", "[bench][step]") {
  // C (1 x 3) = op(A) (1 x 2) op(B) (2 x 3), A and B stored as the flags say; beta 1 adds C's 1, 1, 1. A = [1 2],
  // B = [[1 2 3], [4 5 6]]: A B = [1 + 8, 2 + 10, 3 + 12] = [9 12 15].
  const double a[] = {1, 2};               // 1 x 2, or 2 x 1 transposed: the same numbers either way
  const double b[] = {1, 2, 3, 4, 5, 6};   // 2 x 3
  const double bt[] = {1, 4, 2, 5, 3, 6};  // its transpose, 3 x 2
  for (const bool ta : {false, true})
    for (const bool tb : {false, true}) {
      double c[] = {1, 1, 1};
      detail::gemm(ta, tb, 1, 3, 2, a, tb ? bt : b, 1.0, c);
      INFO("ta " << ta << ", tb " << tb);
      CHECK((c[0] == 10 && c[1] == 13 && c[2] == 16));
    }
  // A strided column (lda 3: the A^T of a 2 x 3 block whose first column is 1, 2) through the explicit-stride form.
  const double wide[] = {1, 0, 0, 2, 0, 0};
  double c[] = {0, 0, 0};
  detail::gemm(true, false, 1, 3, 2, wide, 3, b, 3, 0.0, c, 3);
  CHECK((c[0] == 9 && c[1] == 12 && c[2] == 15));
}

TEST_CASE("bench step: gradients equal central differences of the loss", "[bench][step]") {
  // tiny_moe: a dense first layer, then MoE with a gated shared expert, layers 2-3 looped twice at 1/2.
  ModelConfig moe = test::tiny_moe();
  moe.moe.shared_gate = true;
  require_gradients(moe, 16, false);  // two sequences of 8, routed by score
  // Plain (gelu) FFNs, a sigmoid router, MQA, sliding and chunked attention, tied embeddings, balanced routing;
  // then 80 tokens a sequence: two attention tiles, the second masked within.
  ModelConfig other = test::tiny_moe();
  other.name = "tiny-moe-plain";
  other.ffn.type = FfnType::plain;
  other.moe.router_score = RouterScore::sigmoid;
  other.moe.router_form = default_router_form(other.moe);  // the form a file with these scores and bias reads
  other.moe.renormalize = default_renormalize(other.moe.router_form);
  other.attention.num_kv_heads = 1;
  other.attention.pattern = {LayerAttention::sliding, LayerAttention::chunked};
  other.attention.window = 3;
  other.attention.chunk = 4;
  other.tie_embeddings = true;
  // A sanitizer build checks the 80-token case alone of these (its first tile runs the code the 8-token one does).
  if (test::every_case) require_gradients(other, 8, true);
  other.context_length = 80;
  other.attention.window = 70;
  other.attention.chunk = 72;
  require_gradients(other, 80, true);
  if (test::every_case) require_gradients(test::tiny_dense(2), 8, false);
}

TEST_CASE("bench step: FLOPs as executed, by hand", "[bench][step]") {
  // tiny_dense(1) at 8 tokens: the layer's weight GEMMs are 589,824 (bench_cpu_test's hand count); the head adds
  // 2 x 8 x 64 x 1000 = 1,024,000. Attention runs in tiles of 64 queries against every key the tile's queries
  // see, masked within the tile as flash attention masks: one tile of 8 x 8 pairs (not the 36 causal ones),
  // 4 d per pair and head: 4 x 64 x 16 x 4 = 16,384 (count()'s causal sum is 9,216).
  const LayerPlan plan = make_layer_plan(test::tiny_dense(1), {});
  StepModel<float> m(plan, 1, false);
  (void)m.forward();
  m.backward();
  CHECK(m.flops().forward_gemm == 589824.0 + 1024000.0);
  CHECK(m.flops().forward_attention == 16384.0);
  // Backward: twice the GEMMs (input and weight gradients); attention 10 d per pair and head (scores again, then
  // dP, dQ, dK, dV) against the forward's 4 d: 16,384 x 10 / 4 = 40,960.
  CHECK(m.flops().backward_gemm == 2 * (589824.0 + 1024000.0));
  CHECK(m.flops().backward_attention == 40960.0);

  // 128 tokens: tiles of queries 0-63 against keys 0-63 and queries 64-127 against keys 0-127, 4,096 + 8,192 =
  // 12,288 pairs: 4 x 12,288 x 16 x 4 = 3,145,728. Sliding window 5: the second tile starts at key 64 - 5 + 1 =
  // 60, 64 x 68 = 4,352 pairs: (4,096 + 4,352) x 256 = 2,162,688.
  ModelConfig wide = test::tiny_dense(1);
  wide.context_length = 128;
  StepModel<float> full(make_layer_plan(wide, {}), 1, false);
  (void)full.forward();
  CHECK(full.flops().forward_attention == 3145728.0);
  wide.attention.pattern = {LayerAttention::sliding};
  wide.attention.window = 5;
  StepModel<float> sliding(make_layer_plan(wide, {}), 1, false);
  (void)sliding.forward();
  CHECK(sliding.flops().forward_attention == 2162688.0);
}

TEST_CASE("bench step: decoding against the cache gives the forward's last positions", "[bench][step]") {
  // tiny_moe (a loop, routed MoE, a shared expert) and the plain, sliding, chunked, tied variant: three sequences of
  // 8; each decoded last token, against its sequence's cache of the first 7, ends in the same hidden state as the
  // forward's at that position (float64, to 1e-12).
  ModelConfig other = test::tiny_moe();
  other.ffn.type = FfnType::plain;
  other.moe.router_score = RouterScore::sigmoid;
  other.moe.router_form = default_router_form(other.moe);  // the form a file with these scores and bias reads
  other.moe.renormalize = default_renormalize(other.moe.router_form);
  other.attention.pattern = {LayerAttention::sliding, LayerAttention::chunked};
  other.attention.window = 3;
  other.attention.chunk = 4;
  other.tie_embeddings = true;
  for (const ModelConfig& c : {test::tiny_moe(), other}) {
    const LayerPlan plan = make_layer_plan(c, {.tokens = 24});
    StepModel<double> m(plan, 5, false);
    (void)m.forward();
    const std::vector<double> full = m.final_hidden();
    m.prepare_decode();
    m.decode();
    const std::vector<double>& last = m.final_hidden();
    REQUIRE(last.size() == 3 * 64u);
    for (std::size_t b = 0; b < 3; ++b)
      for (std::size_t j = 0; j < 64; ++j) CHECK(last[b * 64 + j] == Approx(full[(b * 8 + 7) * 64 + j]).margin(1e-12));
  }
  // tiny_dense(1), one sequence of 8: the decoded token's weight products are one row of the layer's, 73,728, and
  // the head's 2 x 64 x 1000 = 128,000; its attention 4 d per head and key, 8 keys: 4 x 16 x 8 x 4 = 2,048.
  StepModel<float> dense(make_layer_plan(test::tiny_dense(1), {}), 1, false);
  (void)dense.forward();
  dense.prepare_decode();
  dense.decode();
  CHECK(dense.flops().forward_gemm == 73728.0 + 128000.0);
  CHECK(dense.flops().forward_attention == 2048.0);
}

TEST_CASE("bench step: one AdamW update by hand", "[bench][step]") {
  // First step from zero moments: m = 0.1 g, v = 0.001 g^2, bias-corrected to g and g^2, so
  // p1 = p0 (1 - 1e-4 x 1e-2) - 1e-4 g / (|g| + 1e-8).
  const LayerPlan plan = make_layer_plan(test::tiny_dense(1), {});
  StepModel<double> m(plan, 3, false);
  (void)m.forward();
  m.backward();
  const std::vector<double> p0 = m.params(), g = m.grads();
  m.update();
  std::size_t moved = 0;
  for (std::size_t i = 0; i < p0.size(); i += 97) {
    const double want = p0[i] * (1 - 1e-6) - 1e-4 * g[i] / (std::abs(g[i]) + 1e-8);
    CHECK(m.params()[i] == Approx(want).epsilon(1e-12).margin(1e-15));
    moved += g[i] != 0 ? 1u : 0u;
  }
  CHECK(moved > 100);
}

TEST_CASE("bench step: the result, and what it refuses", "[bench][step]") {
  const ModelConfig c = test::tiny_moe();
  const StepResult r = run_step(c, {.tokens = 16, .warmup = 1, .repetitions = 2});
  // Parameters: embedding and head 2 x 1000 x 64 = 128,000, final norm 64; per layer norms 128 and attention
  // 2 x 64 x 64 + 2 x 64 x 32 = 12,288; the dense layer 3 x 64 x 128 = 24,576; each MoE layer the router 512 and
  // 3 x 64 x (8 + 1) x 32 = 55,296. 128,064 + 4 x 12,416 + 24,576 + 3 x 55,808 = 369,728.
  CHECK(r.parameters == 369728);
  const LayerPlan plan = make_layer_plan(c, {.tokens = 16});
  StepModel<float> m(plan, 1, false);
  CHECK(static_cast<std::int64_t>(m.params().size()) == r.parameters);
  CHECK(r.layer_visits == 6);
  CHECK(r.sequences == 2);
  CHECK(r.first_loss == Approx(std::log(1000.0)).margin(0.5));
  CHECK(r.last_loss < r.first_loss);
  CHECK(r.measured.training_seconds_per_token > r.measured.forward_seconds_per_token);
  CHECK(r.measured.decode_seconds_per_token > 0);
  CHECK(!r.predicted);
  const HardwareSpec h100 = hardware_spec("h100");
  CHECK(run_step(c, {.tokens = 8, .warmup = 0, .repetitions = 1}, &h100).predicted->training_seconds_per_token > 0);

  const auto message = [&](const ModelConfig& config, const BenchOptions& o) -> std::string {
    try {
      (void)run_step(config, o);
    } catch (const config_error& e) {
      return e.what();
    }
    return "no error";
  };
  CHECK_THAT(message(c, {.moe_only = true}),
             Catch::Contains("BenchOptions::moe_only = true: a training step runs whole blocks"));
  CHECK_THAT(message(c, {.backend = BenchBackendKind::cuda}),
             Catch::Contains("BenchOptions::backend = \"cuda\": the measured step runs on the cpu backend"));
  ModelConfig mtp = c;
  mtp.mtp_modules = 1;
  CHECK_THAT(message(mtp, {}), Catch::Contains("mtp_modules = 1: the measured step has no multi-token-prediction "
                                               "modules yet: set it to 0"));
}
