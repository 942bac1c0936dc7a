#include "device/gemm.hpp"

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

std::int64_t launch(cublasHandle_t handle, const BlasGemm& g, const bf16* a, const bf16* b, void* c,
                    cudaDataType_t c_type, float alpha, float beta) {
  if (g.m == 0 || g.n == 0 || g.k == 0 || g.batch == 0) return 0;
  const cublasOperation_t op_a = g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, op_b = g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const bf16* pa = a + g.offset_a;
  const bf16* pb = b + g.offset_b;
  void* pc = static_cast<char*>(c) + g.offset_c * (c_type == CUDA_R_32F ? 4 : 2);
  const int m = to_int(g.m, "m"), n = to_int(g.n, "n"), k = to_int(g.k, "k");
  const int lda = to_int(g.lda, "lda"), ldb = to_int(g.ldb, "ldb"), ldc = to_int(g.ldc, "ldc");
  if (g.batch == 1)
    SMELT_CUDA_CALL(cublasGemmEx(handle, op_a, op_b, m, n, k, &alpha, pa, CUDA_R_16BF, lda, pb, CUDA_R_16BF, ldb, &beta,
                                 pc, c_type, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  else
    SMELT_CUDA_CALL(cublasGemmStridedBatchedEx(handle, op_a, op_b, m, n, k, &alpha, pa, CUDA_R_16BF, lda, g.stride_a,
                                               pb, CUDA_R_16BF, ldb, g.stride_b, &beta, pc, c_type, ldc, g.stride_c,
                                               to_int(g.batch, "batch"), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  return g.flops();
}

// cuBLAS's first operand is the row-major B (gemm_shapes.hpp).
std::int64_t gemm_rm(cublasHandle_t handle, std::int64_t M, std::int64_t N, std::int64_t K, const bf16* A,
                     std::int64_t lda, const bf16* B, std::int64_t ldb, void* C, cudaDataType_t c_type,
                     std::int64_t ldc, float alpha, float beta) {
  return launch(handle, row_major_gemm(M, N, K, lda, ldb, ldc), B, A, C, c_type, alpha, beta);
}

std::string describe(ExpertPath path, int side_streams) {
  if (path == ExpertPath::grouped) return "cublasGemmGroupedBatchedEx";
  return fmt::format("cublasGemmEx per expert on {} streams", side_streams);
}

ExpertBatch::ExpertBatch(const std::vector<int>& counts, const ExpertOperands& operands)
    : counts_(counts), operands_(operands), groups_(group_experts(counts)) {
  const ExpertShape& s = operands.shape;
  const std::size_t n = groups_.problems.size();
  host_ptrs_.resize(6 * n);
  for (std::size_t i = 0; i < n; ++i) {
    const ExpertGroups::Problem& p = groups_.problems[i];
    const BlasGemm up = expert_gemm(s, ExpertPhase::up, p.expert, p.rows, p.offset);
    const BlasGemm down = expert_gemm(s, ExpertPhase::down, p.expert, p.rows, p.offset);
    host_ptrs_[i] = operands.up_weights + up.offset_a;
    host_ptrs_[n + i] = operands.xp + up.offset_b;
    host_ptrs_[2 * n + i] = operands.up_out + up.offset_c;
    host_ptrs_[3 * n + i] = operands.down_weights + down.offset_a;
    host_ptrs_[4 * n + i] = operands.act + down.offset_b;
    host_ptrs_[5 * n + i] = operands.z + down.offset_c;
    flops_ += up.flops() + down.flops();
  }
  if (n > 0) {
    device_ptrs_ = DeviceBuffer(host_ptrs_.size() * sizeof(void*));
    SMELT_CUDA_CALL(
        cudaMemcpy(device_ptrs_.as<void>(), host_ptrs_.data(), device_ptrs_.bytes(), cudaMemcpyHostToDevice));
  }
}

// Per expert: launch() of expert_gemm. Grouped: the same products, whose lda =
// m, ldb = k and ldc = m are equal for every expert and whose n is the group's
// row count; their pointers were resolved from expert_gemm when the batch was made.
void ExpertBatch::run(ExpertPhase phase, ExpertPath path, BlasContext& blas) const {
  const std::size_t n = groups_.problems.size();
  if (n == 0) return;
  const ExpertShape& s = operands_.shape;
  if (path == ExpertPath::grouped) {
    const int m = to_int(s.out_cols(phase), "m"), k = to_int(s.in_cols(phase), "k");
    const std::size_t base = phase == ExpertPhase::up ? 0 : 3 * n;
    const std::size_t groups = groups_.group_rows.size();
    const std::vector<cublasOperation_t> ops(groups, CUBLAS_OP_N);
    const std::vector<int> ms(groups, m), ks(groups, k);
    const std::vector<float> alphas(groups, 1.f), betas(groups, 0.f);
    void** ptrs = device_ptrs_.as<void*>() + base;
    SMELT_CUDA_CALL(cublasGemmGroupedBatchedEx(
        blas.handle(), ops.data(), ops.data(), ms.data(), groups_.group_rows.data(), ks.data(), alphas.data(), ptrs,
        CUDA_R_16BF, ms.data(), ptrs + n, CUDA_R_16BF, ks.data(), betas.data(), ptrs + 2 * n, CUDA_R_16BF, ms.data(),
        to_int(static_cast<std::int64_t>(groups), "group count"), groups_.group_size.data(), CUBLAS_COMPUTE_32F));
    return;
  }
  const bool up = phase == ExpertPhase::up;
  const bf16* a = up ? operands_.up_weights : operands_.down_weights;
  const bf16* b = up ? operands_.xp : operands_.act;
  bf16* c = up ? operands_.up_out : operands_.z;
  blas.fork();
  for (std::size_t i = 0; i < n; ++i) {
    const ExpertGroups::Problem& p = groups_.problems[i];
    const cublasHandle_t handle = blas.side_handle(static_cast<int>(i % static_cast<std::size_t>(blas.sides())));
    launch(handle, expert_gemm(s, phase, p.expert, p.rows, p.offset), a, b, c, CUDA_R_16BF);
  }
  blas.join();
}

}  // namespace smelt::kernels
