// The CPU backend's matrix products, through OpenBLAS (cblas). Private to the
// bench module.
//
// Why a BLAS, and why cblas rather than Eigen's EIGEN_USE_BLAS: the library is
// built for baseline x86-64 (no host sniffing), so Eigen's own kernels run on
// SSE2; OpenBLAS picks its kernels at run time (Debian builds it with
// DYNAMIC_ARCH), so the same binary runs AVX2 or AVX-512 kernels where the
// machine has them. EIGEN_USE_BLAS would swap Eigen's product templates in
// this module only, while the scaling module instantiates the same templates
// without it: two definitions of one inline function, one picked by the
// linker. Explicit calls avoid that and keep each product beside the line
// that counts its FLOPs.
#pragma once

#include <cstdint>
#include <string>

namespace smelt::detail {

// C = A B, row-major and contiguous: A is m x k, B is k x n, C is m x n (its
// previous contents are ignored). Any of m, n, k may be 0 (C is then zero).
void gemm(std::int64_t m, std::int64_t n, std::int64_t k, const float* a, const float* b, float* c);
void gemm(std::int64_t m, std::int64_t n, std::int64_t k, const double* a, const double* b, double* c);

// C = op(A) op(B) + beta C, row-major: op(A) is m x k (A stored k x m when
// `ta`), op(B) is k x n (B stored n x k when `tb`); beta 0 ignores C's previous
// contents. The backward pass's products (the step of bench_step.hpp).
void gemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, const float* a, const float* b, float beta,
          float* c);
void gemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, const double* a, const double* b,
          double beta, double* c);
// The same with explicit leading dimensions (row strides), for blocks of wider
// matrices: one head's columns of Q, K, V.
void gemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, const float* a, std::int64_t lda,
          const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc);
void gemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, const double* a, std::int64_t lda,
          const double* b, std::int64_t ldb, double beta, double* c, std::int64_t ldc);

// Holds OpenBLAS to one thread while alive and restores its previous count
// after. The CPU backend times one core, as it did with Eigen, and a product
// then runs the same kernel on the same blocking every time (bitwise
// repeatable runs, whatever OPENBLAS_NUM_THREADS says). The thread count is
// process-wide state of OpenBLAS: two of these alive in two threads at once
// restore in either order.
class SingleThreadedBlas {
 public:
  SingleThreadedBlas();
  ~SingleThreadedBlas();
  SingleThreadedBlas(const SingleThreadedBlas&) = delete;
  SingleThreadedBlas& operator=(const SingleThreadedBlas&) = delete;

 private:
  int previous_;
};

// "openblas (<kernel set chosen at run time>)", e.g. "openblas (SkylakeX)".
std::string blas_name();

}  // namespace smelt::detail
