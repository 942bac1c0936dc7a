#include "backend/cuda_backend.hpp"

#include <algorithm>
#include <cmath>
#include <future>
#include <numeric>
#include <set>

#include <fmt/format.h>

#include "backend/correctness.hpp"
#include "backend/counted_flops.hpp"
#include "backend/device_weights.hpp"
#include "backend/layer_runner.hpp"
#include "device/cuda_check.hpp"
#include "device/device.hpp"
#include "device/gemm.hpp"
#include "device/layer_kernels.hpp"
#include "device/timing.hpp"
#include "smelt/bench_registry.hpp"
#include "smelt/error.hpp"
#include "util/checked.hpp"
#include "util/median.hpp"
#include "util/parallel_for.hpp"

namespace smelt::kernels {
namespace {

using i64 = std::int64_t;

constexpr int kSideStreams = 8;                // streams of the per-expert path
constexpr i64 kDenseN = 8192;                  // the dense ceiling: an 8192^3 bf16 product
constexpr i64 kCheckTokens = 256;              // the correctness check runs at most this many tokens
constexpr double kTolerance = 2e-2;            // relative L2 error allowed for bf16 over several layers
constexpr std::size_t kOverhead = 768u << 20;  // cuBLAS workspaces of every handle, allocator slack

// --- Before anything is allocated -------------------------------------------

void check_supported(const LayerPlan& plan) {
  const Dims d = Dims::of(plan.config);
  if (plan.config.attention.type != AttentionType::gqa)
    throw config_error(
        Violation("BenchOptions::backend", "\"cuda\"", "only standard (MHA/GQA/MQA) attention is supported"));
  if (!plan.moe_only && (d.kv_heads <= 0 || d.heads % d.kv_heads != 0))
    throw config_error(
        Violation("BenchOptions::backend", "\"cuda\"",
                  fmt::format("num_heads = {} must be a multiple of num_kv_heads = {}", d.heads, d.kv_heads)));
  if (plan.config.is_moe() && (d.experts > kMaxExperts || d.top_k < 1 || d.top_k > d.experts))
    throw config_error(Violation("BenchOptions::backend", "\"cuda\"",
                                 fmt::format("needs 1 <= top_k <= num_experts <= {}, got top_k {}, experts {}",
                                             kMaxExperts, d.top_k, d.experts)));
}

struct DeviceProps {
  std::string name;
  std::size_t l2_bytes = 0;
};

DeviceProps open_device() {
  SMELT_CUDA_CALL(cudaSetDevice(0));
  cudaDeviceProp prop{};
  SMELT_CUDA_CALL(cudaGetDeviceProperties(&prop, 0));
  return {prop.name, static_cast<std::size_t>(prop.l2CacheSize)};
}

// The correctness check: the same config at one short sequence, forced past
// the CPU time bound because the reference must run for the check to mean anything.
LayerPlan make_check_plan(const LayerPlan& plan, const BenchOptions& options) {
  BenchOptions check_options = options;
  check_options.tokens = check_options.context = std::min(plan.context, kCheckTokens);
  check_options.force = true;
  return make_layer_plan(plan.config, check_options);
}

// Input copies to rotate so that the L2 never serves a timed run's input.
i64 input_copies(const LayerPlan& plan, const DeviceProps& device) {
  const std::size_t input_bytes =
      static_cast<std::size_t>(plan.tokens * plan.config.hidden_size) * (sizeof(float) + sizeof(bf16));
  return rotation_count(input_bytes, device.l2_bytes);
}

// Checked arithmetic, as the CPU reference's bounds (bench_plan.cpp): a sum
// that wrapped would pass the device check it exists for.
std::size_t bytes_needed(const LayerPlan& plan, const LayerPlan& check, i64 copies) {
  using smelt::detail::add;
  using smelt::detail::mul;
  try {
    i64 bytes = LayerRunner::workspace_bytes(plan);
    for (const i64 layer : std::set<i64>(plan.visits.begin(), plan.visits.end()))
      bytes = add(bytes, layer_weight_bytes(plan.config, layer, plan.moe_only), "device bytes");
    const i64 rows = add(mul(copies, plan.tokens, "device bytes"), check.tokens, "device bytes");
    const i64 row_bytes = mul(plan.config.hidden_size, sizeof(float) + sizeof(bf16), "device bytes");
    bytes = add(bytes, mul(rows, row_bytes, "device bytes"), "device bytes");
    return static_cast<std::size_t>(bytes) + dense_rate_bytes(kDenseN) + kOverhead;
  } catch (const smelt::detail::overflow&) {
    throw config_error(Violation("BenchOptions::tokens", fmt::format("{}", plan.tokens),
                                 "the device memory of one run overflows 64-bit integers"));
  }
}

// Refuses before allocating anything when the device is too small.
void require_device_memory(std::size_t needed) {
  std::size_t free_bytes = 0, total_bytes = 0;
  SMELT_CUDA_CALL(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (needed > free_bytes)
    throw cuda_error(fmt::format("config needs {} bytes of device memory, {} available", needed, free_bytes));
}

// Every layer's weights, drawn on several threads: the reference needs all of
// them, the device the visited ones (the check plan's weights are the same).
std::vector<LayerWeights> draw_weights(const LayerPlan& plan, std::uint64_t seed) {
  std::vector<LayerWeights> weights(static_cast<std::size_t>(plan.config.num_layers));
  smelt::detail::parallel_for(weights.size(), 0,
                              [&](std::size_t l) { weights[l] = make_layer_weights(plan, static_cast<i64>(l), seed); });
  return weights;
}

// --- On the device -----------------------------------------------------------

// An untimed pass that records each MoE visit's routed counts (and so the
// expert products the timed passes launch) and returns the FLOPs they account.
FlopTally record(LayerRunner& runner, BlasContext& blas, const LayerPlan& plan, const Inputs& inputs, ExpertPath path) {
  FlopTally tally;
  runner.forward(plan, inputs.f(0), inputs.b(0), RoutingMode::record, path, tally);
  SMELT_CUDA_CALL(cudaStreamSynchronize(blas.stream()));
  return tally;
}

// Both expert-product paths, timed alone on the first MoE visit (the grouped
// one unless its check run failed); keeps the faster and notes both times.
ExpertPath choose_expert_path(LayerRunner& runner, const BenchOptions& options, CudaRunDetail& detail) {
  const i64 expert_reps = std::max<i64>(options.repetitions, 5);
  detail.streams_ms = smelt::detail::median(runner.time_experts(ExpertPath::streams, 2, expert_reps));
  if (!detail.grouped_error.empty()) return ExpertPath::streams;
  detail.grouped_ms = smelt::detail::median(runner.time_experts(ExpertPath::grouped, 2, expert_reps));
  return detail.grouped_ms <= detail.streams_ms ? ExpertPath::grouped : ExpertPath::streams;
}

// The timed passes: the whole plan between events, inputs rotated. All copies
// hold the same input, so every pass routes as recorded; checked after, with a
// fallback that copies the counts back at every MoE visit, inside the timing,
// should it not (detail.timed_with_sync). Milliseconds per pass.
std::vector<double> time_passes(LayerRunner& runner, BlasContext& blas, const LayerPlan& plan, const Inputs& inputs,
                                i64 copies, ExpertPath path, const BenchOptions& options, CudaRunDetail& detail) {
  const auto timed = [&](RoutingMode mode) {
    return time_runs(blas.stream(), options.warmup, options.repetitions, [&](i64 i) {
      FlopTally unused;
      runner.forward(plan, inputs.f(i % copies), inputs.b(i % copies), mode, path, unused);
    });
  };
  std::vector<double> ms = timed(RoutingMode::cached);
  if (!runner.routing_reproduced()) {
    detail.timed_with_sync = true;
    ms = timed(RoutingMode::sync);
  }
  return ms;
}

// Hardware counters over one more pass, routed as the timed ones were.
CountedFlops count_pass(LayerRunner& runner, BlasContext& blas, const LayerPlan& plan, const Inputs& inputs,
                        ExpertPath path, bool with_sync) {
  return counted_tensor_flops(blas.handle(), blas.stream(), [&] {
    FlopTally unused;
    runner.forward(plan, inputs.f(0), inputs.b(0), with_sync ? RoutingMode::sync : RoutingMode::cached, path, unused);
  });
}

// --- The result -------------------------------------------------------------

// Accounted: every product launched. The attention score blocks are launched
// in full (context x context per sequence), while the analytic count keeps the
// exact causal sum, so flops.accounted > flops.analytic by design when the plan
// has attention (CudaRunDetail has both parts); gemm_flops match exactly. With
// attention in the plan the counters also count the launched score blocks, so
// they compare with flops.accounted; in an MoE-only plan every tensor
// operation is a weight GEMM.
void set_flops(BenchResult& r, const LayerPlan& plan, const FlopTally& tally, const CountedFlops& counted) {
  r.flops.analytic = plan.analytic_flops;
  r.flops.accounted = static_cast<double>(tally.gemm + tally.attention_launched);
  r.flops.counter = counted.flops;
  r.flops.counter_note = counted.note;
  r.gemm_flops.analytic = plan.analytic_gemm_flops;
  r.gemm_flops.accounted = static_cast<double>(tally.gemm);
  if (plan.moe_only) {
    r.gemm_flops.counter = counted.flops;
    r.gemm_flops.counter_note = counted.note;
  } else {
    r.gemm_flops.counter_note =
        "counters cannot separate weight GEMMs from attention: see all products, or BenchOptions::moe_only";
  }
}

// The first MoE visit's expert products: their rate on the chosen path, the
// tokens each expert received and the load imbalance (most / mean).
void set_experts(BenchResult& r, const ExpertBatch& first, double expert_ms) {
  r.expert_gemm_tflops = expert_ms > 0 ? static_cast<double>(first.flops()) / (expert_ms * 1e-3) / 1e12 : 0;
  r.expert_tokens.assign(first.counts().begin(), first.counts().end());
  const i64 total = std::accumulate(r.expert_tokens.begin(), r.expert_tokens.end(), i64{0});
  const i64 most = *std::max_element(r.expert_tokens.begin(), r.expert_tokens.end());
  r.load_imbalance =
      total > 0 ? static_cast<double>(most) * static_cast<double>(r.expert_tokens.size()) / static_cast<double>(total)
                : 0;
}

}  // namespace

std::optional<std::string> CudaBackend::unavailable() const {
  const DeviceInfo info = query_device();
  if (!info.available) return info.reason;
  return kernel_image_problem();
}

BenchResult CudaBackend::run(const LayerPlan& plan, const BenchOptions& options) {
  if (const auto why = unavailable())
    throw cuda_error(Violation("BenchOptions::backend", "\"cuda\"", "unavailable: " + *why));
  check_supported(plan);
  detail_ = CudaRunDetail{};
  CudaRunDetail detail;
  const DeviceProps device = open_device();
  const LayerPlan check = make_check_plan(plan, options);
  detail.check_tokens = check.tokens;
  const i64 copies = input_copies(plan, device);
  detail.input_buffers = copies;
  require_device_memory(bytes_needed(plan, check, copies));
  const std::vector<LayerWeights> weights = draw_weights(plan, options.seed);

  BlasContext blas(kSideStreams);
  LayerRunner runner(plan, weights, options.balanced, blas);
  const Inputs inputs = upload_inputs(make_input(plan, options.seed), copies);
  const std::vector<float> check_host_input = make_input(check, options.seed);
  const Inputs check_input = upload_inputs(check_host_input, 1);

  FlopTally tally = record(runner, blas, plan, inputs, ExpertPath::streams);
  const bool has_moe = runner.first_recorded() != nullptr;
  // The check plan through both paths, then the reference in the background
  // while the device is timed.
  const CheckOutputs checked = run_check(runner, blas, check, check_input, has_moe);
  detail.grouped_error = checked.grouped_error;
  std::future<double> rel_error = std::async(
      std::launch::async, [&] { return reference_error(check, check_host_input, weights, options.balanced, checked); });

  const ExpertPath path = has_moe ? choose_expert_path(runner, options, detail) : ExpertPath::streams;
  const DenseRate dense = measure_dense_rate(blas.handle(), blas.stream(), kDenseN, 3, 10);
  // Record again with the chosen path: later MoE visits route on outputs that
  // the two paths round differently.
  if (path != ExpertPath::streams) tally = record(runner, blas, plan, inputs, path);
  const std::vector<double> ms = time_passes(runner, blas, plan, inputs, copies, path, options, detail);
  const CountedFlops counted = count_pass(runner, blas, plan, inputs, path, detail.timed_with_sync);
  const double error = rel_error.get();

  BenchResult r;
  r.model = plan.config.name;
  r.backend = "cuda";
  r.device = device.name;
  r.expert_gemm_path = has_moe ? describe(path, kSideStreams) : "none (no MoE layer)";
  r.tokens = plan.tokens;
  r.context = plan.context;
  r.layer_visits = static_cast<i64>(plan.visits.size());
  r.moe_only = plan.moe_only;
  r.seconds = smelt::detail::median(ms) * 1e-3;
  r.seconds_per_token = r.seconds / static_cast<double>(plan.tokens);
  set_flops(r, plan, tally, counted);
  r.tflops = r.seconds > 0 ? r.flops.accounted / r.seconds / 1e12 : 0;
  r.dense_tflops = dense.tflops;
  r.pct_of_dense = dense.tflops > 0 ? r.tflops / dense.tflops * 100 : 0;
  if (const ExpertBatch* first = runner.first_recorded())
    set_experts(r, *first, path == ExpertPath::grouped ? detail.grouped_ms : detail.streams_ms);
  r.max_rel_error = error;
  r.tolerance = kTolerance;
  r.correct = std::isfinite(error) && error <= kTolerance;

  detail.attention_launched = static_cast<double>(tally.attention_launched);
  detail.attention_useful = static_cast<double>(tally.attention_useful);
  detail_ = detail;
  return r;
}

void register_cuda_backend() { register_bench_backend(std::make_shared<CudaBackend>()); }

}  // namespace smelt::kernels
