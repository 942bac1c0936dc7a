// cuBLAS wrappers: bf16 operands, fp32 accumulation (CUBLAS_COMPUTE_32F), every
// call checked. Each wrapper returns the FLOPs it launched, 2 m n k per
// product, so the caller's "accounted" count is the sum over what really ran.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <cublas_v2.h>

#include "device_buffer.hpp"
#include "layer_kernels.hpp"

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

// Row-major C[M x N] = alpha A[M x K] B[K x N] + beta C, with leading
// dimensions lda, ldb, ldc (row strides). A and B bf16; C is c_type (bf16 or
// fp32). Returns 2 M N K (0 and nothing launched when a dimension is 0).
std::int64_t gemm_rm(cublasHandle_t handle, std::int64_t M, std::int64_t N, std::int64_t K, const bf16* A,
                     std::int64_t lda, const bf16* B, std::int64_t ldb, void* C, cudaDataType_t c_type,
                     std::int64_t ldc, float alpha = 1.f, float beta = 0.f);

// cublasGemmStridedBatchedEx in cuBLAS's own column-major terms, bf16 inputs.
// Returns 2 m n k batch.
std::int64_t gemm_strided_batched(cublasHandle_t handle, cublasOperation_t op_a, cublasOperation_t op_b, std::int64_t m,
                                  std::int64_t n, std::int64_t k, float alpha, const bf16* A, std::int64_t lda,
                                  std::int64_t stride_a, const bf16* B, std::int64_t ldb, std::int64_t stride_b,
                                  void* C, cudaDataType_t c_type, std::int64_t ldc, std::int64_t stride_c,
                                  std::int64_t batch);

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
  std::int64_t hidden = 0;
  std::int64_t width = 0;  // F
  bool gated = true;
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
  void up(ExpertPath path, BlasContext& blas) const { run(0, path, blas); }
  void down(ExpertPath path, BlasContext& blas) const { run(1, path, blas); }

 private:
  struct Problem {
    int expert = 0;
    int rows = 0;
    std::int64_t offset = 0;
  };
  void run(int phase, ExpertPath path, BlasContext& blas) const;
  std::vector<int> counts_;
  ExpertOperands operands_;
  std::vector<Problem> problems_;  // experts with rows, sorted by row count
  std::vector<int> group_rows_, group_size_;
  std::vector<const void*> host_ptrs_;  // per phase: A of every problem, then B, then C
  DeviceBuffer device_ptrs_;
  std::int64_t flops_ = 0;
};

}  // namespace smelt::kernels
