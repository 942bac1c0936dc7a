// The CPU reference backend of the benchmark: executed FLOPs equal the
// analytic count exactly, outputs match a naive float64 implementation, and
// the plan refuses bad options with messages that name them.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "bench_naive.hpp"
#include "smelt/bench.hpp"
#include "smelt/bench_backend.hpp"
#include "smelt/bench_reference.hpp"
#include "smelt/bench_registry.hpp"
#include "smelt/count.hpp"
#include "smelt/error.hpp"
#include "test_configs.hpp"

using namespace smelt;

namespace {

// tiny_moe with a sliding (window 5) / chunked (chunk 6) / full / sliding pattern at context 32.
ModelConfig patterned() {
  ModelConfig c = test::tiny_moe();
  c.context_length = 32;
  c.attention.pattern = {LayerAttention::sliding, LayerAttention::chunked, LayerAttention::full,
                         LayerAttention::sliding};
  c.attention.window = 5;
  c.attention.chunk = 6;
  return c;
}

// tiny_moe with plain (gelu) FFNs, a sigmoid router, two gated shared experts and MQA.
ModelConfig plain_sigmoid() {
  ModelConfig c = test::tiny_moe();
  c.ffn.type = FfnType::plain;
  c.moe.router_score = RouterScore::sigmoid;
  c.moe.router_form = default_router_form(c.moe);  // the form a file with these scores and bias reads
  c.moe.renormalize = default_renormalize(c.moe.router_form);
  c.moe.num_shared_experts = 2;
  c.moe.shared_gate = true;
  c.attention.num_kv_heads = 1;
  return c;
}

double rel_error(const std::vector<double>& a, const std::vector<double>& b) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < b.size(); ++i) diff += (a[i] - b[i]) * (a[i] - b[i]), norm += b[i] * b[i];
  return std::sqrt(diff / norm);
}

// Runs the float32 reference and returns the plan after checking the FLOPs it accounted.
LayerPlan require_exact(const ModelConfig& c, const BenchOptions& o) {
  const LayerPlan plan = make_layer_plan(c, o);
  const ReferenceRun run = reference_forward(plan, make_input(plan, o.seed), o.seed, {.balanced = o.balanced});
  CHECK(run.accounted_flops == plan.analytic_flops);
  CHECK(run.accounted_gemm_flops == plan.analytic_gemm_flops);
  return plan;
}

// The message of the error of type E the run throws. A backend the machine
// cannot offer is a cuda_error (exit 5), not bad input.
template <class E = config_error>
std::string message_of(const ModelConfig& c, const BenchOptions& o) {
  try {
    (void)run_bench(c, o);
  } catch (const E& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("bench: one tiny dense layer by hand", "[bench]") {
  // H = 64, q = 4 x 16 = 64, kv = 2 x 16 = 32, FFN 128 gated, T = context = 8.
  // Per token: 2 (64 (64 + 2 x 32) + 64 x 64 + 3 x 64 x 128) = 2 (8192 + 4096 + 24576) = 73728, x 8 = 589824.
  // Scores and values: 2 (64 + 64) = 256 per attended pair, 8 x 9 / 2 = 36 pairs: 9216. Total 599040.
  const LayerPlan plan = require_exact(test::tiny_dense(1), {});
  CHECK(plan.tokens == 8);
  CHECK(plan.context == 8);
  CHECK(plan.sequences == 1);
  CHECK(plan.analytic_gemm_flops == 589824.0);
  CHECK(plan.analytic_flops == 599040.0);
}

TEST_CASE("bench: the looped tiny MoE runs six visits and accounts their FLOPs exactly", "[bench]") {
  // Layer 1 dense: 73728 per token. Layers 2-4 MoE: attention 2 (8192 + 4096) = 24576, router 2 x 64 x 8 = 1024,
  // top-2 experts 2 x 2 x 3 x 64 x 32 = 24576, shared 2 x 3 x 64 x 32 = 12288: 62464. Visits 1 2 3 2 3 4:
  // 73728 + 5 x 62464 = 386048 per token, x 8 = 3088384; scores 256 x 36 x 6 = 55296; total 3143680.
  const ModelConfig c = test::tiny_moe();
  const LayerPlan plan = require_exact(c, {});
  CHECK(plan.visits == std::vector<std::int64_t>{0, 1, 2, 1, 2, 3});
  CHECK(plan.analytic_gemm_flops == 3088384.0);
  CHECK(plan.analytic_flops == 3143680.0);
  // One sequence of the config's context is count()'s per-token forward (without the head) times the tokens.
  CHECK(plan.analytic_flops == Approx(count(c).flops.forward_non_embedding() * 8).epsilon(1e-12));
}

TEST_CASE("bench: accounted FLOPs equal the analytic count across shapes", "[bench]") {
  SECTION("dense GQA, two layers, two sequences") { require_exact(test::tiny_dense(2), {.tokens = 16}); }
  SECTION("sliding and chunked layers") { require_exact(patterned(), {.tokens = 64}); }
  SECTION("causal attention at several contexts") {
    ModelConfig c = test::tiny_moe();
    c.context_length = 64;
    for (const std::int64_t context : {8, 16, 64}) {
      const LayerPlan plan = require_exact(c, {.tokens = 2 * context, .context = context});
      CHECK(plan.sequences == 2);
    }
  }
  SECTION("the MoE sublayer alone") {
    // 386048 per token less the attention projections of 6 visits (6 x 24576): 238592 x 8 = 1908736, no scores.
    const LayerPlan plan = require_exact(test::tiny_moe(), {.moe_only = true});
    CHECK(plan.analytic_flops == 1908736.0);
    CHECK(plan.analytic_gemm_flops == 1908736.0);
  }
  SECTION("a dense model with moe_only runs its FFNs") { require_exact(test::tiny_dense(2), {.moe_only = true}); }
  SECTION("balanced routing") { require_exact(test::tiny_moe(), {.tokens = 16, .balanced = true}); }
  SECTION("plain FFN, sigmoid router, gated shared experts, MQA") { require_exact(plain_sigmoid(), {.tokens = 16}); }
}

TEST_CASE("bench: the reference matches a naive float64 implementation", "[bench]") {
  struct Case {
    const char* name;
    ModelConfig config;
    BenchOptions options;
  };
  const std::vector<Case> cases{
      {"dense GQA", test::tiny_dense(2), {.tokens = 16}},
      {"looped MoE with a shared expert", test::tiny_moe(), {.tokens = 16}},
      {"sliding/chunked MoE", patterned(), {.tokens = 32}},
      {"plain, sigmoid, shared gate, balanced", plain_sigmoid(), {.tokens = 16, .balanced = true}},
  };
  for (const Case& k : cases) {
    INFO(k.name);
    const LayerPlan plan = make_layer_plan(k.config, k.options);
    const std::vector<float> input = make_input(plan, k.options.seed);
    const std::vector<double> naive = test::Naive(plan, k.options.balanced).run(input, k.options.seed);
    const ReferenceRun f64 = reference_forward(plan, input, k.options.seed,
                                               {.balanced = k.options.balanced, .precision = Precision::float64});
    const ReferenceRun f32 = reference_forward(plan, input, k.options.seed, {.balanced = k.options.balanced});
    REQUIRE(f64.output.size() == static_cast<std::size_t>(plan.tokens * 64));
    CHECK(rel_error(f64.output, naive) < 1e-12);
    CHECK(rel_error(f32.output, naive) < 1e-4);
    CHECK(rel_error(f32.output, naive) > 0);  // float32 really ran in float32
  }
}

TEST_CASE("bench: weights and inputs are determined by the seed", "[bench]") {
  const LayerPlan plan = make_layer_plan(test::tiny_moe(), {});
  const LayerPlan moe_only = make_layer_plan(test::tiny_moe(), {.moe_only = true});
  const LayerWeights a = make_layer_weights(plan, 1, 7), b = make_layer_weights(plan, 1, 7);
  CHECK(a.wq == b.wq);
  CHECK(a.experts[5].down == b.experts[5].down);
  CHECK(a.wq.size() == 64 * 64);
  CHECK(a.experts.size() == 8);
  CHECK(a.shared.size() == 1);
  CHECK(a.experts[0].gate.size() == 64 * 32);
  CHECK(make_layer_weights(plan, 2, 7).router != a.router);  // each layer its own stream
  CHECK(make_layer_weights(plan, 1, 8).router != a.router);
  // --moe-only skips the attention draws without changing the FFN weights.
  const LayerWeights m = make_layer_weights(moe_only, 1, 7);
  CHECK(m.wq.empty());
  CHECK(m.router == a.router);
  CHECK(make_input(plan, 7) == make_input(plan, 7));
  const auto x = make_input(plan, 7);
  CHECK(std::all_of(x.begin(), x.end(), [](float v) { return v >= -1 && v <= 1; }));
  const float bound = 1.0f / 8.0f;  // 1 / sqrt(64)
  CHECK(std::all_of(a.wq.begin(), a.wq.end(), [&](float v) { return std::abs(v) <= bound; }));
}

TEST_CASE("bench: balanced routing evens the load, real routing reports its imbalance", "[bench]") {
  // 16 tokens x top-2 = 32 assignments over 8 experts: 4 each.
  const LayerPlan plan = make_layer_plan(test::tiny_moe(), {.tokens = 16});
  const auto input = make_input(plan, 1);
  CHECK(reference_forward(plan, input, 1, {.balanced = true}).expert_tokens == std::vector<std::int64_t>(8, 4));

  const BenchResult r = run_bench(test::tiny_moe(), {.backend = BenchBackendKind::cpu, .tokens = 64, .repetitions = 3});
  REQUIRE(r.expert_tokens.size() == 8);
  const std::int64_t total = std::accumulate(r.expert_tokens.begin(), r.expert_tokens.end(), std::int64_t{0});
  CHECK(total == 64 * 2);
  const double most = static_cast<double>(*std::max_element(r.expert_tokens.begin(), r.expert_tokens.end()));
  CHECK(r.load_imbalance == Approx(most / (128.0 / 8)));
  CHECK(r.load_imbalance > 1);
}

TEST_CASE("bench: the plan refuses bad options, naming them", "[bench]") {
  const ModelConfig c = test::tiny_moe();  // context_length 8
  // tokens = 0 means the default (one sequence); an explicit 0 is the CLI's to refuse.
  CHECK(message_of(c, {.tokens = -4}) == "BenchOptions::tokens = -4: must be positive");
  CHECK(message_of(c, {.context = 16}) ==
        "BenchOptions::context = 16: must be at most the config's context_length = 8");
  CHECK(message_of(c, {.context = -1}) == "BenchOptions::context = -1: must be positive");
  CHECK(message_of(c, {.tokens = 12}) == "BenchOptions::tokens = 12: must be a multiple of BenchOptions::context = 8");
  CHECK(message_of(c, {.tokens = 12, .context = 5}) ==
        "BenchOptions::tokens = 12: must be a multiple of BenchOptions::context = 5");
  CHECK(message_of(c, {.repetitions = 0}) == "BenchOptions::repetitions = 0: must be positive");
  // Every violation at once.
  CHECK(message_of(c, {.tokens = -1, .context = 9}) ==
        "BenchOptions::tokens = -1: must be positive\nBenchOptions::context = 9: must be at most the config's "
        "context_length = 8");

  ModelConfig mla = c;
  mla.attention.type = AttentionType::mla;
  mla.attention.num_kv_heads = 0;
  mla.attention.head_dim = 0;
  mla.attention.mla = {0, 32, 16, 8, 16};
  CHECK(message_of(mla, {}) == "attention.type = \"mla\": not supported by the benchmark yet");
}

TEST_CASE("bench: a CPU run estimated past 60 s is refused unless forced", "[bench]") {
  // Mixtral at 4096 tokens (one sequence): per token per layer 2 (4096 x 6144 + 4096^2 + 4096 x 8 + 2 x 3 x 4096 x
  // 14336) = 788594688, x 4096 x 32 = 103362682945536; scores 2 (4096 + 4096) x 4096 x 4097 / 2 x 32 =
  // 4399120252928; one run 107761803198464 = 107761.8 GFLOP, at 2 GFLOP/s 53881 s.
  const ModelConfig c = test::mixtral_8x7b();
  CHECK(make_layer_plan(c, {.tokens = 4096}).analytic_flops == 107761803198464.0);
  // Its weights come first: 46,440,644,608 non-embedding parameters x (4 + 8) bytes = 519.0 GiB.
  CHECK(message_of(c, {.backend = BenchBackendKind::cpu, .tokens = 4096}) ==
        "the CPU reference needs about 519.0 GiB for the weights of 4.64e+10 parameters (float32 and float64); more "
        "than 8 GiB: use a smaller config or BenchOptions::force");
  // A small model with many tokens: 3,143,680 FLOPs per 8-token sequence x 131,072 sequences = 412 GFLOP, 206 s.
  CHECK(message_of(test::tiny_moe(), {.backend = BenchBackendKind::cpu, .tokens = 1048576, .context = 8}) ==
        "estimated CPU time 206 s exceeds 60 s (412.0 GFLOP at about 2 GFLOP/s): use fewer BenchOptions::tokens or "
        "BenchOptions::force");
}

TEST_CASE("bench: run_bench on the CPU fills the result", "[bench]") {
  const BenchResult r = run_bench(test::tiny_moe(), {.repetitions = 5});
  CHECK(r.model == "tiny-moe");
  CHECK(r.backend == "cpu");
  CHECK(!r.device.empty());
  // OpenBLAS names the kernels it chose for this machine at run time ("Haswell", "SkylakeX", ...).
  CHECK(r.expert_gemm_path.rfind("openblas (", 0) == 0);
  CHECK(r.tokens == 8);
  CHECK(r.context == 8);
  CHECK(r.layer_visits == 6);
  CHECK(r.seconds > 0);
  CHECK(r.seconds_per_token == Approx(r.seconds / 8));
  CHECK(r.tflops == Approx(3143680.0 / r.seconds / 1e12));
  CHECK(r.dense_tflops > 0);
  CHECK(r.flops.analytic == 3143680.0);
  CHECK(r.flops.accounted == r.flops.analytic);
  CHECK(!r.flops.counter);
  CHECK(r.flops.counter_note == "unavailable: the CPU backend has no hardware counter reading");
  CHECK(r.gemm_flops.analytic == 3088384.0);
  CHECK(r.gemm_flops.accounted == r.gemm_flops.analytic);
  CHECK(!r.gemm_flops.counter);
  CHECK(r.max_rel_error < 1e-4);
  CHECK(r.tolerance == 1e-4);
  CHECK(r.correct);
}

namespace {
class FakeCuda : public BenchBackend {
 public:
  explicit FakeCuda(std::optional<std::string> why) : why_(std::move(why)) {}
  std::string name() const override { return "cuda"; }
  std::optional<std::string> unavailable() const override { return why_; }
  BenchResult run(const LayerPlan& plan, const BenchOptions&) override {
    BenchResult r;
    r.backend = "cuda";
    r.tokens = plan.tokens;
    return r;
  }

 private:
  std::optional<std::string> why_;
};
}  // namespace

TEST_CASE("bench: backends are chosen from the registry", "[bench]") {
  CHECK(parse_bench_backend("cuda", "--backend") == BenchBackendKind::cuda);
  CHECK(to_string(BenchBackendKind::automatic) == "auto");
  CHECK_THROWS_WITH(parse_bench_backend("tpu", "--backend"), "--backend = \"tpu\": must be one of auto, cpu, cuda");
  // Nothing in this test program registers a CUDA backend before this point.
  const ModelConfig c = test::tiny_dense(1);
  CHECK(message_of<cuda_error>(c, {.backend = BenchBackendKind::cuda}) ==
        "BenchOptions::backend = \"cuda\": unavailable: no CUDA backend in this build");
  register_bench_backend(std::make_shared<FakeCuda>("no CUDA device found"));
  CHECK(message_of<cuda_error>(c, {.backend = BenchBackendKind::cuda}) ==
        "BenchOptions::backend = \"cuda\": unavailable: no CUDA device found");
  CHECK(run_bench(c, {.repetitions = 1}).backend == "cpu");
  // An available CUDA backend is the default, with 32768 tokens (4096 sequences of 8).
  register_bench_backend(std::make_shared<FakeCuda>(std::nullopt));
  const BenchResult r = run_bench(c, {});
  CHECK(r.backend == "cuda");
  CHECK(r.tokens == 32768);
  // The CPU time bound is the CPU's: the same Mixtral run goes to the device.
  CHECK(run_bench(test::mixtral_8x7b(), {.tokens = 4096}).backend == "cuda");
  register_bench_backend(std::make_shared<FakeCuda>("restored"));  // leave later tests on the CPU
}

TEST_CASE("bench: the plan bounds its activations, runs and visits before allocating", "[bench]") {
  const ModelConfig c = test::tiny_moe();
  // H 64, q = 4 x 16 = 64, kv = 2 x 16 = 32, E 8, k 2, expert and shared width 32, dense 128.
  // Visits 1,2,3,2,3,4: five MoE, one dense. float64 working sets per token (elements):
  // attention 2q + 2kv + H = 256; MoE E + k + 3H + 2 x 32 + 2k = 270; dense 2 x 128 + H = 320.
  // Bytes per token: input 4H = 256, two outputs 16H = 1024, residual 8H = 512, work 8 x 320 = 2560,
  // choices of two runs 16 x k x 5 = 160: 4512; x 8 tokens = 36,096.
  CHECK(make_layer_plan(c, {}).activation_bytes == 36'096);
  // 10^9 tokens: 4.512e12 bytes = 4202.1 GiB, refused before anything is allocated.
  CHECK(message_of(c, {.backend = BenchBackendKind::cpu, .tokens = 1'000'000'000}) ==
        "the CPU reference needs up to about 4202.1 GiB for the activations of BenchOptions::tokens = 1000000000 (and "
        "0.0 GiB "
        "for the weights); more than 8 GiB: use fewer BenchOptions::tokens or BenchOptions::force");
  CHECK(message_of(c, {.warmup = 1001, .repetitions = 1001}) ==
        "BenchOptions::warmup = 1001: must be at most 1000\nBenchOptions::repetitions = 1001: must be at most 1000");
  ModelConfig deep = test::tiny_dense(65536);
  deep.loops = {{1, 65536, 1024, 1.0 / 1024}};
  CHECK(message_of(deep, {}) ==
        "the config executes 67108864 layers per token: the benchmark runs at most 1048576 block visits");
}

TEST_CASE("bench: a residual scale beyond float32 is refused, not cast", "[bench]") {
  ModelConfig c = test::tiny_moe();
  c.loops.front().residual_scale = 1e300;  // a valid config: positive and finite
  CHECK(message_of(c, {}) ==
        "loop.residual_scale = 1e+300: the benchmark runs in float32, so it must be at most 3.4028235e+38");
}
