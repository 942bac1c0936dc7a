#include "gemm.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "smelt/error.hpp"

namespace smelt::kernels {
namespace {

int to_int(std::int64_t v, const char* what) {
  if (v < 0 || v > std::numeric_limits<int>::max())
    throw cuda_error(fmt::format("GEMM {} = {} does not fit the cuBLAS int interface", what, v));
  return static_cast<int>(v);
}

}  // namespace

BlasContext::BlasContext(int side_streams) {
  try {
    SMELT_CUDA_CALL(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    SMELT_CUDA_CALL(cublasCreate(&handle_));
    SMELT_CUDA_CALL(cublasSetStream(handle_, stream_));
    SMELT_CUDA_CALL(cudaEventCreateWithFlags(&fork_event_, cudaEventDisableTiming));
    for (int i = 0; i < side_streams; ++i) {
      cudaStream_t s = nullptr;
      SMELT_CUDA_CALL(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      side_streams_.push_back(s);
      cublasHandle_t h = nullptr;
      SMELT_CUDA_CALL(cublasCreate(&h));
      side_handles_.push_back(h);
      SMELT_CUDA_CALL(cublasSetStream(h, s));
      cudaEvent_t e = nullptr;
      SMELT_CUDA_CALL(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
      join_events_.push_back(e);
    }
  } catch (...) {
    destroy();
    throw;
  }
}

BlasContext::~BlasContext() { destroy(); }

// Checked, but a destructor has nowhere to throw to: failures are dropped.
void BlasContext::destroy() noexcept {
  bool ok = true;
  if (stream_ != nullptr) ok &= cudaStreamSynchronize(stream_) == cudaSuccess;
  for (cudaStream_t s : side_streams_) ok &= cudaStreamSynchronize(s) == cudaSuccess;
  for (cublasHandle_t h : side_handles_) ok &= cublasDestroy(h) == CUBLAS_STATUS_SUCCESS;
  for (cudaEvent_t e : join_events_) ok &= cudaEventDestroy(e) == cudaSuccess;
  for (cudaStream_t s : side_streams_) ok &= cudaStreamDestroy(s) == cudaSuccess;
  if (handle_ != nullptr) ok &= cublasDestroy(handle_) == CUBLAS_STATUS_SUCCESS;
  if (fork_event_ != nullptr) ok &= cudaEventDestroy(fork_event_) == cudaSuccess;
  if (stream_ != nullptr) ok &= cudaStreamDestroy(stream_) == cudaSuccess;
  if (!ok) (void)cudaGetLastError();
  side_handles_.clear(), join_events_.clear(), side_streams_.clear();
  handle_ = nullptr, fork_event_ = nullptr, stream_ = nullptr;
}

void BlasContext::fork() {
  SMELT_CUDA_CALL(cudaEventRecord(fork_event_, stream_));
  for (cudaStream_t s : side_streams_) SMELT_CUDA_CALL(cudaStreamWaitEvent(s, fork_event_, 0));
}

void BlasContext::join() {
  for (std::size_t i = 0; i < side_streams_.size(); ++i) {
    SMELT_CUDA_CALL(cudaEventRecord(join_events_[i], side_streams_[i]));
    SMELT_CUDA_CALL(cudaStreamWaitEvent(stream_, join_events_[i], 0));
  }
}

// Row-major C = A B is column-major C^T = B^T A^T: cuBLAS sees m = N, n = M.
std::int64_t gemm_rm(cublasHandle_t handle, std::int64_t M, std::int64_t N, std::int64_t K, const bf16* A,
                     std::int64_t lda, const bf16* B, std::int64_t ldb, void* C, cudaDataType_t c_type,
                     std::int64_t ldc, float alpha, float beta) {
  if (M == 0 || N == 0 || K == 0) return 0;
  SMELT_CUDA_CALL(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, to_int(N, "N"), to_int(M, "M"), to_int(K, "K"), &alpha,
                               B, CUDA_R_16BF, to_int(ldb, "ldb"), A, CUDA_R_16BF, to_int(lda, "lda"), &beta, C, c_type,
                               to_int(ldc, "ldc"), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  return 2 * M * N * K;
}

std::int64_t gemm_strided_batched(cublasHandle_t handle, cublasOperation_t op_a, cublasOperation_t op_b, std::int64_t m,
                                  std::int64_t n, std::int64_t k, float alpha, const bf16* A, std::int64_t lda,
                                  std::int64_t stride_a, const bf16* B, std::int64_t ldb, std::int64_t stride_b,
                                  void* C, cudaDataType_t c_type, std::int64_t ldc, std::int64_t stride_c,
                                  std::int64_t batch) {
  if (m == 0 || n == 0 || k == 0 || batch == 0) return 0;
  const float beta = 0.f;
  SMELT_CUDA_CALL(cublasGemmStridedBatchedEx(
      handle, op_a, op_b, to_int(m, "m"), to_int(n, "n"), to_int(k, "k"), &alpha, A, CUDA_R_16BF, to_int(lda, "lda"),
      stride_a, B, CUDA_R_16BF, to_int(ldb, "ldb"), stride_b, &beta, C, c_type, to_int(ldc, "ldc"), stride_c,
      to_int(batch, "batch"), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  return 2 * m * n * k * batch;
}

std::string describe(ExpertPath path, int side_streams) {
  if (path == ExpertPath::grouped) return "cublasGemmGroupedBatchedEx";
  return fmt::format("cublasGemmEx per expert on {} streams", side_streams);
}

ExpertBatch::ExpertBatch(const std::vector<int>& counts, const ExpertOperands& operands)
    : counts_(counts), operands_(operands) {
  const std::int64_t h = operands.hidden, f = operands.width, u = operands.gated ? 2 * f : f;
  std::int64_t offset = 0;
  for (std::size_t e = 0; e < counts.size(); ++e) {
    if (counts[e] > 0) problems_.push_back({static_cast<int>(e), counts[e], offset});
    offset += counts[e];
    flops_ += 2 * static_cast<std::int64_t>(counts[e]) * (h * u + f * h);
  }
  std::stable_sort(problems_.begin(), problems_.end(),
                   [](const Problem& a, const Problem& b) { return a.rows < b.rows; });
  for (const Problem& p : problems_) {
    if (group_rows_.empty() || group_rows_.back() != p.rows) {
      group_rows_.push_back(p.rows);
      group_size_.push_back(0);
    }
    ++group_size_.back();
  }
  const std::size_t n = problems_.size();
  host_ptrs_.resize(6 * n);
  for (std::size_t i = 0; i < n; ++i) {
    const Problem& p = problems_[i];
    host_ptrs_[i] = operands.up_weights + p.expert * h * u;
    host_ptrs_[n + i] = operands.xp + p.offset * h;
    host_ptrs_[2 * n + i] = operands.up_out + p.offset * u;
    host_ptrs_[3 * n + i] = operands.down_weights + p.expert * f * h;
    host_ptrs_[4 * n + i] = operands.act + p.offset * f;
    host_ptrs_[5 * n + i] = operands.z + p.offset * h;
  }
  if (n > 0) {
    device_ptrs_ = DeviceBuffer(host_ptrs_.size() * sizeof(void*));
    SMELT_CUDA_CALL(
        cudaMemcpy(device_ptrs_.as<void>(), host_ptrs_.data(), device_ptrs_.bytes(), cudaMemcpyHostToDevice));
  }
}

// Column-major view of expert e's row-major product C[rows x m] = X[rows x k] W[k x m]:
// cuBLAS C'(m x rows) = W'(m x k) X'(k x rows), with lda = m, ldb = k, ldc = m.
void ExpertBatch::run(int phase, ExpertPath path, BlasContext& blas) const {
  const std::size_t n = problems_.size();
  if (n == 0) return;
  const std::int64_t h = operands_.hidden, f = operands_.width, u = operands_.gated ? 2 * f : f;
  const int m = to_int(phase == 0 ? u : h, "m"), k = to_int(phase == 0 ? h : f, "k");
  const std::size_t base = static_cast<std::size_t>(phase) * 3 * n;
  if (path == ExpertPath::grouped) {
    const std::size_t groups = group_rows_.size();
    const std::vector<cublasOperation_t> ops(groups, CUBLAS_OP_N);
    const std::vector<int> ms(groups, m), ks(groups, k);
    const std::vector<float> alphas(groups, 1.f), betas(groups, 0.f);
    void** ptrs = device_ptrs_.as<void*>() + base;
    SMELT_CUDA_CALL(cublasGemmGroupedBatchedEx(
        blas.handle(), ops.data(), ops.data(), ms.data(), group_rows_.data(), ks.data(), alphas.data(), ptrs,
        CUDA_R_16BF, ms.data(), ptrs + n, CUDA_R_16BF, ks.data(), betas.data(), ptrs + 2 * n, CUDA_R_16BF, ms.data(),
        to_int(static_cast<std::int64_t>(groups), "group count"), group_size_.data(), CUBLAS_COMPUTE_32F));
    return;
  }
  const float alpha = 1.f, beta = 0.f;
  blas.fork();
  for (std::size_t i = 0; i < n; ++i) {
    const cublasHandle_t handle = blas.side_handle(static_cast<int>(i % static_cast<std::size_t>(blas.sides())));
    SMELT_CUDA_CALL(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, problems_[i].rows, k, &alpha,
                                 host_ptrs_[base + i], CUDA_R_16BF, m, host_ptrs_[base + n + i], CUDA_R_16BF, k, &beta,
                                 const_cast<void*>(host_ptrs_[base + 2 * n + i]), CUDA_R_16BF, m, CUBLAS_COMPUTE_32F,
                                 CUBLAS_GEMM_DEFAULT));
  }
  blas.join();
}

}  // namespace smelt::kernels
