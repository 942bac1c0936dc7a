// run_step(): the options checked, the step timed on the CPU backend, and the
// time model's prediction of the same step beside it.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <new>
#include <numeric>

#include <fmt/format.h>

#include "cpu/blas.hpp"
#include "cpu/cpu_name.hpp"
#include "smelt/bench_plan.hpp"
#include "smelt/bench_step.hpp"
#include "smelt/checked_config.hpp"
#include "smelt/detail/excerpt.hpp"
#include "smelt/error.hpp"
#include "smelt/time.hpp"
#include "step/model.hpp"
#include "util/median.hpp"
#include "util/mention.hpp"

namespace smelt {
namespace {

using i64 = std::int64_t;
using Clock = std::chrono::steady_clock;

// The bounds of bench.cpp's CPU runs, for one step (about 3 x a forward). Every product of the step is a BLAS
// call, which runs at 50 to 150 GFLOP/s on one core of a current x86 server (a Debug build too): 20 GFLOP/s leaves
// room for the repetitions.
constexpr double kCpuFlopsPerSecond = 20e9;
constexpr double kCpuSecondsBound = 60;
constexpr double kCpuBytesBound = 8.0 * (1 << 30);
constexpr double kGiB = double(1 << 30);

template <class F>
double seconds(F&& f) {
  const auto t0 = Clock::now();
  f();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double dbl(i64 v) { return static_cast<double>(v); }

// float32 elements the step keeps per token: per visit its inputs, norms,
// Q, K, V, heads and log-sum-exps; an MoE visit's router scores, mixing
// weights, permuted inputs and outputs and hidden activations (3 per expert
// width, top_k of them) and its shared experts'; a dense visit's hidden
// activations; the logits; and the backward's buffers (a few of width H, q, kv).
double kept_elements_per_token(const LayerPlan& plan) {
  const ModelConfig& c = plan.config;
  const auto& a = c.attention;
  const auto& m = c.moe;
  const double h = dbl(c.hidden_size), q = dbl(a.num_heads * a.head_dim), kv = dbl(a.num_kv_heads * a.head_dim);
  double per = 0;
  for (const i64 layer : plan.visits) {
    per += 4 * h + 2 + 2 * q + 2 * kv + dbl(a.num_heads);
    if (c.is_moe_layer(layer))
      per += dbl(m.num_experts) + 2 * dbl(m.top_k) * (1 + h) + 3 * dbl(m.top_k * m.expert_width) +
             3 * dbl(m.num_shared_experts * m.shared_width) + h + 1;
    else
      per += 3 * dbl(c.ffn.dense_width);
  }
  return per + 2 * dbl(c.vocab_size) + 8 * h + 3 * q + 2 * kv;
}

// Weights, gradients and two moments in float32, and what the step keeps.
double step_bytes(const LayerPlan& plan, i64 parameters) {
  return 16 * dbl(parameters) + 4 * kept_elements_per_token(plan) * dbl(plan.tokens);
}

void check(const ModelConfig& c, const BenchOptions& o, const LayerPlan& plan, double flops, i64 parameters) {
  if (o.backend == BenchBackendKind::cuda)
    throw config_error(Violation("BenchOptions::backend", "\"cuda\"",
                                 "the measured step runs on the cpu backend (the CUDA step is not built yet)"));
  if (o.moe_only) throw config_error(Violation("BenchOptions::moe_only", "true", "a training step runs whole blocks"));
  if (c.mtp_modules > 0)
    throw config_error(Violation("mtp_modules", fmt::format("{}", c.mtp_modules),
                                 "the measured step has no multi-token-prediction modules yet: set it to 0"));
  if (o.force) return;
  const double estimate = flops / kCpuFlopsPerSecond;
  if (estimate > kCpuSecondsBound)
    throw config_error(
        fmt::format("estimated CPU time of one step {:.0f} s exceeds {:.0f} s ({:.1f} GFLOP at about {:.0f} GFLOP/s): "
                    "use fewer {} or {}",
                    estimate, kCpuSecondsBound, flops / 1e9, kCpuFlopsPerSecond / 1e9,
                    detail::mention("BenchOptions::tokens"), detail::mention("BenchOptions::force")));
  const double bytes = step_bytes(plan, parameters);
  if (bytes > kCpuBytesBound)
    throw config_error(fmt::format(
        "the step needs about {:.1f} GiB ({} parameters with their gradients and AdamW moments, and the "
        "activations of {}); more than {:.0f} GiB: use fewer {}, a smaller config or {}",
        bytes / kGiB, parameters, detail::mention("BenchOptions::tokens", fmt::format("{}", plan.tokens)),
        kCpuBytesBound / kGiB, detail::mention("BenchOptions::tokens"), detail::mention("BenchOptions::force")));
}

i64 parameter_count(const ModelConfig& c) {
  i64 total = c.vocab_size * c.hidden_size * (c.tie_embeddings ? 1 : 2) + c.hidden_size;
  const auto& a = c.attention;
  const auto& m = c.moe;
  const i64 h = c.hidden_size, q = a.num_heads * a.head_dim, kv = a.num_kv_heads * a.head_dim;
  const i64 ffn = c.ffn.type == FfnType::gated ? 3 : 2;
  for (i64 l = 0; l < c.num_layers; ++l) {
    total += 2 * h + 2 * h * q + 2 * h * kv;
    if (c.is_moe_layer(l))
      total += h * m.num_experts + ffn * h * (m.num_experts * m.expert_width + m.num_shared_experts * m.shared_width) +
               (m.shared_gate ? h : 0);
    else
      total += ffn * h * c.ffn.dense_width;
  }
  return total;
}

// The time model's step: the micro-batch of the run's sequences, float32 throughout, one device.
StepSeconds predict(const ModelConfig& c, const LayerPlan& plan, const HardwareSpec& hw) {
  MemoryLayout layout;
  layout.micro_batch = plan.sequences;
  layout.seq = plan.context;
  layout.param_dtype = layout.grad_dtype = layout.optimizer_dtype = layout.activation_dtype = Dtype::fp32;
  const TimeReport t =
      step_time(CheckedConfig(c), layout, hw, {.decode_batch = plan.sequences, .decode_context = plan.context});
  return {t.forward_seconds_per_token, t.training_seconds_per_token, t.decode_seconds_per_token};
}

StepResult measure(const ModelConfig& config, const BenchOptions& options, const HardwareSpec* hardware);

}  // namespace

StepResult run_step(const ModelConfig& config, const BenchOptions& options, const HardwareSpec* hardware) {
  // Past the bounds (BenchOptions::force) an allocation can fail: the input's fault, as run_bench() says it, not a
  // crash.
  try {
    return measure(config, options, hardware);
  } catch (const std::bad_alloc&) {
    BenchOptions o = options;
    const LayerPlan plan = make_layer_plan(config, o);
    throw config_error(fmt::format(
        "out of memory: the cpu backend could not allocate what {} needs for a training step at {} (about {:.1f} "
        "GiB: the parameters with their gradients and AdamW moments, and the activations): use fewer {} or a "
        "smaller config",
        detail::name_excerpt(config.name), detail::mention("BenchOptions::tokens", fmt::format("{}", plan.tokens)),
        step_bytes(plan, parameter_count(plan.config)) / kGiB, detail::mention("BenchOptions::tokens")));
  }
}

namespace {

StepResult measure(const ModelConfig& config, const BenchOptions& options, const HardwareSpec* hardware) {
  BenchOptions o = options;
  const LayerPlan plan = make_layer_plan(config, o);
  const ModelConfig& c = plan.config;
  const double head_flops = 2 * dbl(plan.tokens) * dbl(c.hidden_size) * dbl(c.vocab_size);
  const double analytic = 3 * (plan.analytic_flops + head_flops);
  const i64 parameters = parameter_count(c);
  check(c, o, plan, analytic, parameters);

  step_detail::StepModel<float> model(plan, o.seed, o.balanced);
  StepResult r;
  r.first_loss = model.forward();
  model.backward();
  model.update();
  for (i64 w = 1; w < o.warmup; ++w) model.forward(), model.backward(), model.update();
  std::vector<double> forward, training;
  for (i64 rep = 0; rep < std::max<i64>(o.repetitions, 1); ++rep) {
    forward.push_back(seconds([&] { model.forward(); }));
    training.push_back(seconds([&] {
      r.last_loss = model.forward();
      model.backward();
      model.update();
    }));
  }
  r.model = c.name;
  r.backend = "cpu";
  r.device = cpu::cpu_name();
  r.blas = detail::blas_name();
  r.tokens = plan.tokens;
  r.context = plan.context;
  r.sequences = plan.sequences;
  r.layer_visits = static_cast<i64>(plan.visits.size());
  r.parameters = parameters;
  r.forward_seconds = detail::median(forward);
  r.training_seconds = detail::median(training);
  r.analytic_training_flops = analytic;
  r.accounted_forward_flops = model.flops().forward();
  r.accounted_training_flops = model.flops().forward() + model.flops().backward();
  r.training_tflops = r.accounted_training_flops / r.training_seconds / 1e12;
  r.expert_tokens = model.expert_tokens();
  // Decoding, once the training step's figures are read: the caches from a forward, then one token for every
  // sequence at a time.
  (void)model.forward();
  model.prepare_decode();
  std::vector<double> decode;
  model.decode();  // warm-up
  // Each decode step starts with cold caches, as one does at scale, where the weights read since the last step
  // far exceed them: a pass over 128 MiB first, untimed. Repeated warm, a small model's weights would stay in the
  // CPU's last-level cache and decode faster than any real step.
  std::vector<char> flush(std::size_t{128} << 20, 1);
  for (i64 rep = 0; rep < std::max<i64>(o.repetitions, 1); ++rep) {
    for (std::size_t i = 0; i < flush.size(); i += 64) flush[i] = static_cast<char>(flush[i] + 1);
    decode.push_back(seconds([&] { model.decode(); }));
  }
  r.decode_seconds = detail::median(decode);
  r.measured = {r.forward_seconds / dbl(plan.tokens), r.training_seconds / dbl(plan.tokens),
                r.decode_seconds / dbl(plan.sequences)};
  if (!r.expert_tokens.empty()) {
    const double total = dbl(std::accumulate(r.expert_tokens.begin(), r.expert_tokens.end(), i64{0}));
    const double most = dbl(*std::max_element(r.expert_tokens.begin(), r.expert_tokens.end()));
    r.load_imbalance = most / (total / dbl(static_cast<i64>(r.expert_tokens.size())));
  }
  if (hardware) {
    r.predicted = predict(c, plan, *hardware);
    r.hardware = hardware->name;
  }
  return r;
}

}  // namespace
}  // namespace smelt
