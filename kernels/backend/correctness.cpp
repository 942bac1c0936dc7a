#include "backend/correctness.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "backend/device_weights.hpp"
#include "device/cuda_check.hpp"
#include "device/device.hpp"
#include "smelt/error.hpp"

namespace smelt::kernels {
namespace {

// ||gpu - ref|| / ||ref|| over the whole output; infinity when the GPU wrote a
// non-finite value (outputs are poisoned with NaN before the run).
double relative_error(const std::vector<float>& gpu, const std::vector<double>& ref) {
  if (gpu.size() != ref.size()) throw error("reference output has a different size than the CUDA output");
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < gpu.size(); ++i) {
    if (!std::isfinite(gpu[i])) return std::numeric_limits<double>::infinity();
    const double e = static_cast<double>(gpu[i]) - ref[i];
    diff += e * e;
    norm += ref[i] * ref[i];
  }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

// Runs `check` through the CUDA path into a NaN-poisoned output; returns the
// output and appends the expert choices of each MoE visit to `chosen`.
std::vector<float> check_run(LayerRunner& runner, BlasContext& blas, const LayerPlan& check, const Inputs& input,
                             ExpertPath path, Routing& chosen) {
  const std::size_t n = static_cast<std::size_t>(check.tokens * check.config.hidden_size);
  SMELT_CUDA_CALL(cudaStreamSynchronize(blas.stream()));
  fill(runner.output(), n, std::numeric_limits<float>::quiet_NaN());
  FlopTally unused;
  runner.forward(check, input.f(0), input.b(0), RoutingMode::sync, path, unused, &chosen);
  std::vector<float> out(n);
  SMELT_CUDA_CALL(
      cudaMemcpyAsync(out.data(), runner.output(), n * sizeof(float), cudaMemcpyDeviceToHost, blas.stream()));
  SMELT_CUDA_CALL(cudaStreamSynchronize(blas.stream()));
  return out;
}

}  // namespace

Inputs upload_inputs(const std::vector<float>& input, std::int64_t copies) {
  Inputs in;
  in.elements = static_cast<std::int64_t>(input.size());
  in.f32 = DeviceBuffer(input.size() * sizeof(float) * static_cast<std::size_t>(copies));
  in.b16 = DeviceBuffer(input.size() * sizeof(bf16) * static_cast<std::size_t>(copies));
  const std::vector<std::uint16_t> bits = to_bf16_bits(input.data(), input.size());
  for (std::int64_t i = 0; i < copies; ++i) {
    SMELT_CUDA_CALL(cudaMemcpy(in.f32.as<float>() + i * in.elements, input.data(), input.size() * sizeof(float),
                               cudaMemcpyHostToDevice));
    SMELT_CUDA_CALL(cudaMemcpy(in.b16.as<bf16>() + i * in.elements, bits.data(), bits.size() * sizeof(bf16),
                               cudaMemcpyHostToDevice));
  }
  return in;
}

CheckOutputs run_check(LayerRunner& runner, BlasContext& blas, const LayerPlan& check, const Inputs& input,
                       bool has_moe) {
  CheckOutputs out;
  out.streams = check_run(runner, blas, check, input, ExpertPath::streams, out.chosen_streams);
  if (!has_moe) return out;
  try {
    out.grouped = check_run(runner, blas, check, input, ExpertPath::grouped, out.chosen_grouped);
  } catch (const cuda_error& e) {
    out.grouped_error = e.what();
    SMELT_CUDA_CALL(cudaStreamSynchronize(blas.stream()));
  }
  return out;
}

double reference_error(const LayerPlan& check, const std::vector<float>& host_input,
                       const std::vector<LayerWeights>& weights, bool balanced, const CheckOutputs& outputs) {
  // Each run's own expert choices replayed, so that a near tie rounded the
  // other way in bf16 does not read as an error (the router kernel is tested on its own).
  const auto replay = [](const Routing& r) { return r.experts.empty() ? nullptr : &r; };
  const ReferenceRun ref =
      reference_forward(check, host_input, weights, {.balanced = balanced}, replay(outputs.chosen_streams));
  double worst = relative_error(outputs.streams, ref.output);
  if (!outputs.grouped.empty()) {
    const bool same = outputs.chosen_grouped.experts == outputs.chosen_streams.experts;
    const ReferenceRun other =
        same ? ReferenceRun{}
             : reference_forward(check, host_input, weights, {.balanced = balanced}, replay(outputs.chosen_grouped));
    worst = std::max(worst, relative_error(outputs.grouped, same ? ref.output : other.output));
  }
  return worst;
}

}  // namespace smelt::kernels
