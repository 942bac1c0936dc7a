// The CUDA backend's correctness check: a short copy of the plan run through
// both expert-product paths into NaN-poisoned outputs, and the relative error
// of each against the CPU reference replaying the same expert choices.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backend/layer_runner.hpp"
#include "device/device_buffer.hpp"
#include "device/gemm.hpp"
#include "smelt/bench_reference.hpp"
#include "smelt/bench_weights.hpp"

namespace smelt::kernels {

// An input [tokens x H] as fp32 and bf16 on the device, `copies` times side by
// side (timed runs rotate them so that the L2 never serves a run's input).
struct Inputs {
  DeviceBuffer f32, b16;
  std::int64_t elements = 0;
  const float* f(std::int64_t i) const { return f32.as<float>() + i * elements; }
  const bf16* b(std::int64_t i) const { return b16.as<bf16>() + i * elements; }
};
Inputs upload_inputs(const std::vector<float>& input, std::int64_t copies);

// The check plan's outputs and expert choices through each path; `grouped`
// stays empty when the plan has no MoE layer or this cuBLAS refused the
// grouped product (grouped_error says why).
struct CheckOutputs {
  std::vector<float> streams, grouped;
  Routing chosen_streams, chosen_grouped;
  std::string grouped_error;
};
CheckOutputs run_check(LayerRunner& runner, BlasContext& blas, const LayerPlan& check, const Inputs& input,
                       bool has_moe);

// The worst relative L2 error of the outputs against the float32 reference
// (infinity when the device wrote a non-finite value). float32, not float64:
// its own error (under 1e-4, tests/unit/bench/bench_cpu_test.cpp) is far below
// the bf16 tolerance, and a float64 run would first copy every layer's weights
// to double (tens of GB and tens of seconds at realistic sizes).
double reference_error(const LayerPlan& check, const std::vector<float>& host_input,
                       const std::vector<LayerWeights>& weights, bool balanced, const CheckOutputs& outputs);

}  // namespace smelt::kernels
