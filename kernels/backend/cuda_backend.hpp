// The CUDA benchmark backend: runs a LayerPlan's blocks in bf16 with fp32
// accumulation (cuBLAS for every product, this directory's kernels for routing,
// permutation, activations, softmax and combine), times them with CUDA events
// and checks a small copy of the plan against the float64 CPU reference.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "smelt/bench_backend.hpp"

namespace smelt::kernels {

// What a run measured beyond BenchResult.
struct CudaRunDetail {
  // Attention products as launched (full context x context score blocks per
  // sequence, QK^T and AV) and the part the causal/sliding/chunked mask keeps.
  // flops.accounted includes the launched count, flops.analytic the kept part,
  // so for blocks with attention accounted exceeds analytic by
  // (attention_launched - attention_useful), by design; gemm_flops matches exactly.
  double attention_launched = 0;
  double attention_useful = 0;
  double grouped_ms = 0;  // median expert-product time of each path (0: not run)
  double streams_ms = 0;
  std::string grouped_error;       // why cublasGemmGroupedBatchedEx could not run, when it could not
  std::int64_t input_buffers = 0;  // inputs rotated between timed runs
  std::int64_t check_tokens = 0;   // tokens of the plan checked against the reference
  // The timed passes did not route as the recorded one, so they were timed
  // again copying each MoE visit's counts back (a host sync per MoE visit).
  bool timed_with_sync = false;
};

class CudaBackend : public BenchBackend {
 public:
  std::string name() const override { return "cuda"; }
  std::optional<std::string> unavailable() const override;
  BenchResult run(const LayerPlan& plan, const BenchOptions& options) override;

  // Details of the last completed run().
  const CudaRunDetail& last_detail() const noexcept { return detail_; }

 private:
  CudaRunDetail detail_;
};

// Registers a CudaBackend with smelt::register_bench_backend.
void register_cuda_backend();

}  // namespace smelt::kernels
