// cuBLAS wrappers: bf16 operands, fp32 accumulation (CUBLAS_COMPUTE_32F), every
// call checked. Each wrapper returns the FLOPs it launched, 2 m n k per
// product, so the caller's "accounted" count is the sum over what really ran.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <cublas_v2.h>

#include "device/device_buffer.hpp"
#include "device/gemm_shapes.hpp"
#include "device/layer_kernels.hpp"

namespace smelt::kernels {

// The main stream and its cuBLAS handle, plus side streams, each with its own
// handle (so that concurrent products never share a cuBLAS workspace), for the
// per-expert path.
class BlasContext {
 public:
  explicit BlasContext(int side_streams);
  ~BlasContext();
  BlasContext(const BlasContext&) = delete;
  BlasContext& operator=(const BlasContext&) = delete;

  cudaStream_t stream() const noexcept { return stream_; }
  cublasHandle_t handle() const noexcept { return handle_; }
  int sides() const noexcept { return static_cast<int>(side_handles_.size()); }
  cublasHandle_t side_handle(int i) const { return side_handles_.at(static_cast<std::size_t>(i)); }
  void fork();  // the side streams wait for the work enqueued so far on the main stream
  void join();  // the main stream waits for everything enqueued on the side streams

 private:
  void destroy() noexcept;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t handle_ = nullptr;
  std::vector<cudaStream_t> side_streams_;
  std::vector<cublasHandle_t> side_handles_;
  cudaEvent_t fork_event_ = nullptr;
  std::vector<cudaEvent_t> join_events_;
};

// Launches g (gemm_shapes.hpp) on bf16 operands: a, b and c are the base
// pointers its offsets index; C is c_type (bf16 or fp32). One cublasGemmEx,
// or one cublasGemmStridedBatchedEx when g.batch > 1. Returns g.flops() (0 and
// nothing launched when a dimension is 0).
std::int64_t launch(cublasHandle_t handle, const BlasGemm& g, const bf16* a, const bf16* b, void* c,
                    cudaDataType_t c_type, float alpha = 1.f, float beta = 0.f);

// Row-major C[M x N] = alpha A[M x K] B[K x N] + beta C, with leading
// dimensions lda, ldb, ldc (row strides): launch(row_major_gemm(...)).
std::int64_t gemm_rm(cublasHandle_t handle, std::int64_t M, std::int64_t N, std::int64_t K, const bf16* A,
                     std::int64_t lda, const bf16* B, std::int64_t ldb, void* C, cudaDataType_t c_type,
                     std::int64_t ldc, float alpha = 1.f, float beta = 0.f);

enum class ExpertPath { grouped, streams };
std::string describe(ExpertPath path, int side_streams);

// What the expert products of one MoE visit read and write. Expert e's rows
// are [offset_e, offset_e + rows_e) of the permuted buffers; U = 2F gated, F plain.
struct ExpertOperands {
  const bf16* up_weights = nullptr;    // experts x [H x U] row-major ([gate | up] per row when gated)
  const bf16* down_weights = nullptr;  // experts x [F x H]
  const bf16* xp = nullptr;            // [rows x H] tokens grouped by expert
  bf16* up_out = nullptr;              // [rows x U]
  const bf16* act = nullptr;           // [rows x F] activation of up_out
  bf16* z = nullptr;                   // [rows x H] expert outputs
  ExpertShape shape;                   // H, F, gated
};

// The expert products of one MoE visit, set up from the routed counts for
// both paths: one cublasGemmGroupedBatchedEx per phase (experts with equal row
// counts share a group), or one cublasGemmEx per expert spread over the side
// streams. Building one uploads its pointer arrays (synchronously).
class ExpertBatch {
 public:
  ExpertBatch(const std::vector<int>& counts, const ExpertOperands& operands);
  const std::vector<int>& counts() const noexcept { return counts_; }
  std::int64_t flops() const noexcept { return flops_; }
  // Enqueue the [H -> U] products, or the [F -> H] products, on blas's streams.
  void up(ExpertPath path, BlasContext& blas) const { run(ExpertPhase::up, path, blas); }
  void down(ExpertPath path, BlasContext& blas) const { run(ExpertPhase::down, path, blas); }

 private:
  void run(ExpertPhase phase, ExpertPath path, BlasContext& blas) const;
  std::vector<int> counts_;
  ExpertOperands operands_;
  ExpertGroups groups_;                 // experts with rows, sorted by row count
  std::vector<const void*> host_ptrs_;  // per phase: A of every problem, then B, then C
  DeviceBuffer device_ptrs_;
  std::int64_t flops_ = 0;
};

}  // namespace smelt::kernels
