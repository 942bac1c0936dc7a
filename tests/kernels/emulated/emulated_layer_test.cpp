// The CUDA backend's LayerRunner run whole on the CPU: its host code as it is
// (layer_runner.cpp, gemm.cpp, device_weights.cpp, timing.cpp), its kernels
// through the emulation of cuda_emulation.hpp, and the CUDA runtime and cuBLAS
// calls through fake_cuda.cpp. What this checks is the wiring: which buffer
// each product and kernel reads and writes, with which shapes, in which order,
// and the FLOPs tallied on the way; the output must match the CPU reference on
// the same routing within the bf16 tolerance the GPU run uses. What it cannot
// check is anything about the real device (see docs/bench.md).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "backend/device_weights.hpp"
#include "backend/layer_runner.hpp"
#include "device/device.hpp"
#include "device/device_buffer.hpp"
#include "device/gemm.hpp"
#include "smelt/bench_reference.hpp"
#include "test_configs.hpp"

namespace {

using namespace smelt;
namespace k = smelt::kernels;

template <class T>
k::DeviceBuffer to_device(const std::vector<T>& v) {
  k::DeviceBuffer b(v.size() * sizeof(T));
  SMELT_CUDA_CALL(cudaMemcpy(b.as<void>(), v.data(), b.bytes(), cudaMemcpyHostToDevice));
  return b;
}

double relative_error(const std::vector<float>& got, const std::vector<double>& ref) {
  REQUIRE(got.size() == ref.size());
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i])) return std::numeric_limits<double>::infinity();
    diff += (got[i] - ref[i]) * (got[i] - ref[i]);
    norm += ref[i] * ref[i];
  }
  return std::sqrt(diff / norm);
}

void check_plan(const ModelConfig& config, BenchOptions o) {
  const LayerPlan plan = make_layer_plan(config, o);
  std::vector<LayerWeights> weights;
  for (std::int64_t l = 0; l < config.num_layers; ++l) weights.push_back(make_layer_weights(plan, l, o.seed));
  k::BlasContext blas(3);
  k::LayerRunner runner(plan, weights, o.balanced, blas);
  const std::vector<float> input = make_input(plan, o.seed);
  const k::DeviceBuffer x = to_device(input), xb = to_device(k::to_bf16_bits(input.data(), input.size()));
  const auto output = [&] { return std::vector<float>(runner.output(), runner.output() + input.size()); };

  // Both expert paths where there are experts (elsewhere they launch the same products).
  std::vector<k::ExpertPath> paths{k::ExpertPath::streams};
  if (config.is_moe()) paths.push_back(k::ExpertPath::grouped);
  for (const k::ExpertPath path : paths) {
    INFO(k::describe(path, blas.sides()));
    k::fill(runner.output(), input.size(), std::numeric_limits<float>::quiet_NaN());
    k::FlopTally tally;
    Routing chosen;
    runner.forward(plan, x.as<float>(), xb.as<k::bf16>(), k::RoutingMode::sync, path, tally, &chosen);
    const ReferenceRun ref =
        reference_forward(plan, input, weights, {.balanced = o.balanced}, chosen.experts.empty() ? nullptr : &chosen);
    CHECK(relative_error(output(), ref.output) < 2e-2);
    // Exact FLOPs: the weight GEMMs as the analytic count has them; attention
    // launched in full score blocks, of which the masked part is what it counts.
    CHECK(static_cast<double>(tally.gemm) == plan.analytic_gemm_flops);
    CHECK(static_cast<double>(tally.gemm + tally.attention_useful) == plan.analytic_flops);
    if (plan.moe_only) CHECK(tally.attention_launched == 0);
    CHECK(tally.attention_launched >= tally.attention_useful);
  }

  // A recorded pass, then a cached one (the timed mode): same routing, same output.
  if (!config.is_moe()) return;
  k::FlopTally recorded, cached;
  runner.forward(plan, x.as<float>(), xb.as<k::bf16>(), k::RoutingMode::record, k::ExpertPath::grouped, recorded);
  const std::vector<float> first = output();
  runner.forward(plan, x.as<float>(), xb.as<k::bf16>(), k::RoutingMode::cached, k::ExpertPath::grouped, cached);
  CHECK(output() == first);
  CHECK(runner.routing_reproduced());
  CHECK(runner.time_experts(k::ExpertPath::streams, 1, 2).size() == 2);
}

BenchOptions options(std::int64_t tokens, std::int64_t context) {
  BenchOptions o;
  o.tokens = tokens;
  o.context = context;
  return o;
}

// The GPU tests' configs at the emulation's size: every launch here starts
// its block's threads anew and meets them at barriers, so the cost is the
// number of launches (one per expert on the streams path) and the rows each
// runs. 8 experts, top-2 and two sequences of 16 tokens keep every path (both
// expert paths, routing with empty and crowded experts, masks that cut rows,
// GQA and MQA) at a fraction of the time of the GPU size.
ModelConfig emulation_size(ModelConfig c) {
  if (c.is_moe()) {
    c.moe.num_experts = 8;
    c.moe.top_k = 2;
  }
  return c;
}
constexpr std::int64_t kTokens = 32, kContext = 16;

}  // namespace

TEST_CASE("emulated CUDA layer: MoE blocks, GQA", "[emulated_layer]") {
  check_plan(emulation_size(test::bench_moe()), options(kTokens, kContext));
}

TEST_CASE("emulated CUDA layer: dense blocks", "[emulated_layer]") {
  check_plan(test::bench_dense(), options(kTokens, kContext));
}

TEST_CASE("emulated CUDA layer: plain FFNs, sigmoid router, gated shared experts, masks, MQA, a loop",
          "[emulated_layer]") {
  ModelConfig c = emulation_size(test::bench_variety());
  c.attention.window = 5;  // within the 16-token context, so that the masks cut rows
  c.attention.chunk = 6;
  check_plan(c, options(kTokens, kContext));
}

TEST_CASE("emulated CUDA layer: MoE sublayer alone, balanced routing", "[emulated_layer]") {
  BenchOptions o = options(kTokens, kContext);
  o.moe_only = o.balanced = true;
  check_plan(emulation_size(test::bench_moe()), o);
}
