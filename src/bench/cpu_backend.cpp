// The CPU backend: the reference in float32 (Eigen, its weight products through
// OpenBLAS), timed, and checked against one float64 run of the same weights,
// inputs and expert choices.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include <Eigen/Dense>

#include "cpu/blas.hpp"
#include "cpu/cpu_name.hpp"
#include "smelt/bench_backend.hpp"
#include "smelt/bench_reference.hpp"
#include "util/median.hpp"

namespace smelt {
namespace {

using i64 = std::int64_t;
using Clock = std::chrono::steady_clock;

// float32 against float64 over a few dozen accumulations of width H: errors
// stay near 1e-6; 1e-4 leaves room for deep looped stacks without hiding a bug.
constexpr double kTolerance = 1e-4;
constexpr const char* kNoCounter = "unavailable: the CPU backend has no hardware counter reading";

using detail::median;

template <class F>
double seconds(F&& f) {
  const auto t0 = Clock::now();
  f();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// ||a - b|| / ||b|| over the whole tensor: one number that does not blow up
// on elements that happen to be near zero.
double rel_error(const std::vector<double>& a, const std::vector<double>& b) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) diff += (a[i] - b[i]) * (a[i] - b[i]), norm += b[i] * b[i];
  if (a.size() != b.size()) return INFINITY;
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

using cpu::cpu_name;

// The machine's dense float32 rate through the same products (OpenBLAS sgemm),
// one thread like the runs: a square GEMM of 512 (268 MFLOP, large enough for
// the blocked kernel to reach its speed, small enough to cost milliseconds).
double dense_tflops(i64 reps) {
  constexpr i64 n = 512;
  const detail::SingleThreadedBlas one_thread;
  const Eigen::MatrixXf a = Eigen::MatrixXf::Random(n, n), b = Eigen::MatrixXf::Random(n, n);
  Eigen::MatrixXf c(n, n);
  detail::gemm(n, n, n, a.data(), b.data(), c.data());  // warm-up
  std::vector<double> times;
  for (i64 r = 0; r < reps; ++r) times.push_back(seconds([&] { detail::gemm(n, n, n, a.data(), b.data(), c.data()); }));
  return 2.0 * static_cast<double>(n * n * n) / median(times) / 1e12;
}

class CpuBackend final : public BenchBackend {
 public:
  std::string name() const override { return "cpu"; }
  std::optional<std::string> unavailable() const override { return std::nullopt; }

  BenchResult run(const LayerPlan& plan, const BenchOptions& options) override {
    std::vector<LayerWeights> weights;
    for (i64 l = 0; l < plan.config.num_layers; ++l) weights.push_back(make_layer_weights(plan, l, options.seed));
    const std::vector<float> input = make_input(plan, options.seed);

    const auto once = [&] { return reference_forward(plan, input, weights, {.balanced = options.balanced}); };
    for (i64 w = 0; w < options.warmup; ++w) (void)once();
    ReferenceRun last;
    std::vector<double> times;
    for (i64 r = 0; r < std::max<i64>(options.repetitions, 1); ++r) {
      ReferenceRun run;
      times.push_back(seconds([&] { run = once(); }));
      last = std::move(run);
    }
    // The check replays the float32 choices: a near tie rounded the other way
    // would send a token to another expert and read as an error of order 1.
    const ReferenceRun check = reference_forward(
        plan, input, weights, {.balanced = options.balanced, .precision = Precision::float64}, &last.routing);

    BenchResult r;
    r.model = plan.config.name;
    r.backend = name();
    r.device = cpu_name();
    r.expert_gemm_path = detail::blas_name();
    r.tokens = plan.tokens;
    r.context = plan.context;
    r.layer_visits = static_cast<i64>(plan.visits.size());
    r.moe_only = plan.moe_only;
    r.seconds = median(times);
    r.seconds_per_token = r.seconds / static_cast<double>(plan.tokens);
    r.tflops = last.accounted_flops / r.seconds / 1e12;
    r.dense_tflops = dense_tflops(5);
    r.pct_of_dense = r.dense_tflops > 0 ? 100.0 * r.tflops / r.dense_tflops : 0;
    r.flops = {plan.analytic_flops, last.accounted_flops, std::nullopt, kNoCounter};
    r.gemm_flops = {plan.analytic_gemm_flops, last.accounted_gemm_flops, std::nullopt, kNoCounter};
    r.expert_tokens = last.expert_tokens;
    if (!r.expert_tokens.empty()) {
      const double total = static_cast<double>(std::accumulate(r.expert_tokens.begin(), r.expert_tokens.end(), i64{0}));
      const double most = static_cast<double>(*std::max_element(r.expert_tokens.begin(), r.expert_tokens.end()));
      r.load_imbalance = most / (total / static_cast<double>(r.expert_tokens.size()));
    }
    r.max_rel_error = rel_error(last.output, check.output);
    r.tolerance = kTolerance;
    r.correct = r.max_rel_error <= kTolerance;
    return r;
  }
};

}  // namespace

std::shared_ptr<BenchBackend> make_cpu_backend() { return std::make_shared<CpuBackend>(); }

}  // namespace smelt
