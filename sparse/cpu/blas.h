// Internal to sparse/ (the CPU kernels and sparse/kge): a typed row-major GEMM over OpenBLAS,
// C = alpha op(A) op(B) + beta C.
#pragma once
#include <cblas.h>

#include <algorithm>
#include <cstdint>

namespace nodeweave::sparse::cpu::detail {

inline void gemm_call(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, blasint m, blasint n, blasint k,
                      const float* a, blasint lda, const float* b, blasint ldb, float beta,
                      float* c, blasint ldc) {
  cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);
}
inline void gemm_call(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, blasint m, blasint n, blasint k,
                      const double* a, blasint lda, const double* b, blasint ldb, double beta,
                      double* c, blasint ldc) {
  cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, 1.0, a, lda, b, ldb, beta, c, ldc);
}

// C (m x n, ld n) = op(A) op(B) + beta C with op(A) m x k and op(B) k x n, both stored dense
// (lda/ldb their stored row lengths). Empty inner dimensions are handled here rather than trusted
// to the BLAS: k == 0 must still scale C by beta.
template <typename T>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const T* a, const T* b,
          T beta, T* c) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < m * n; ++i) c[i] = beta == T(0) ? T(0) : c[i] * beta;
    return;
  }
  const blasint lda = static_cast<blasint>(trans_a ? m : k);
  const blasint ldb = static_cast<blasint>(trans_b ? k : n);
  gemm_call(trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
            static_cast<blasint>(m), static_cast<blasint>(n), static_cast<blasint>(k), a, lda, b,
            ldb, beta, c, static_cast<blasint>(n));
}

}  // namespace nodeweave::sparse::cpu::detail
