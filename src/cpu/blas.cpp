// OpenBLAS behind the two products and the thread guard of blas.hpp.
#include "cpu/blas.hpp"

#include <algorithm>

#include <cblas.h>

namespace smelt::detail {
namespace {

// cblas takes int dimensions (blasint: 32-bit in Debian's OpenBLAS). The plan's
// bounds (8 GiB of float64 working set) keep every dimension far below 2^31.
blasint dim(std::int64_t v) { return static_cast<blasint>(v); }

}  // namespace

void gemm(std::int64_t m, std::int64_t n, std::int64_t k, const float* a, const float* b, float* c) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) return std::fill(c, c + m * n, 0.0f);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, dim(m), dim(n), dim(k), 1.0f, a, dim(k), b, dim(n), 0.0f, c,
              dim(n));
}

void gemm(std::int64_t m, std::int64_t n, std::int64_t k, const double* a, const double* b, double* c) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) return std::fill(c, c + m * n, 0.0);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, dim(m), dim(n), dim(k), 1.0, a, dim(k), b, dim(n), 0.0, c,
              dim(n));
}

namespace {

template <class T, class F>
void general(F f, bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, const T* a, std::int64_t lda,
             const T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    if (beta == T(0))
      for (std::int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, T(0));
    return;
  }
  f(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, dim(m), dim(n), dim(k), T(1), a,
    dim(lda), b, dim(ldb), beta, c, dim(ldc));
}

// One row (m = 1) as a matrix-vector product: C^T = op(B)^T op(A)^T. OpenBLAS's gemm packs B first even for one
// row (0.3.21, Debian 12's, does not hand m = 1 to gemv), which reads and writes a decode step's weights twice
// more; gemv streams them once, as a serving kernel does.
template <class T, class F, class V>
void general_or_row(F f, V gemv, bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, const T* a,
                    std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc) {
  if (m != 1 || n <= 0 || k <= 0) return general(f, ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc);
  // op(A) is 1 x k: A's row (stride 1), or A's column (stride lda) when transposed.
  const blasint incx = ta ? dim(lda) : 1;
  if (tb)  // B is n x k: y = B x
    gemv(CblasRowMajor, CblasNoTrans, dim(n), dim(k), T(1), b, dim(ldb), a, incx, beta, c, 1);
  else  // B is k x n: y = B^T x
    gemv(CblasRowMajor, CblasTrans, dim(k), dim(n), T(1), b, dim(ldb), a, incx, beta, c, 1);
}

}  // namespace

void gemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, const float* a, const float* b, float beta,
          float* c) {
  general_or_row(cblas_sgemm, cblas_sgemv, ta, tb, m, n, k, a, ta ? m : k, b, tb ? k : n, beta, c, n);
}

void gemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, const double* a, const double* b,
          double beta, double* c) {
  general_or_row(cblas_dgemm, cblas_dgemv, ta, tb, m, n, k, a, ta ? m : k, b, tb ? k : n, beta, c, n);
}

void gemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, const float* a, std::int64_t lda,
          const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  general_or_row(cblas_sgemm, cblas_sgemv, ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc);
}

void gemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, const double* a, std::int64_t lda,
          const double* b, std::int64_t ldb, double beta, double* c, std::int64_t ldc) {
  general_or_row(cblas_dgemm, cblas_dgemv, ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc);
}

SingleThreadedBlas::SingleThreadedBlas() : previous_(openblas_get_num_threads()) { openblas_set_num_threads(1); }
SingleThreadedBlas::~SingleThreadedBlas() { openblas_set_num_threads(previous_); }

std::string blas_name() {
  const char* core = openblas_get_corename();
  return std::string("openblas (") + (core ? core : "unknown kernels") + ")";
}

}  // namespace smelt::detail
