/* Local CSR kernels on the host. */
#include "spmv/csr.h"

void halo_csr_block_mult(const halo_csr_block *D, double alpha, const double *x, double beta,
                         double *y) {
  const int64_t *rp = D->row_ptr;
  const int32_t *c = D->cols;
  const double *v = D->vals;
  if (beta == 0.0) {
    for (int64_t i = 0; i < D->n_rows; i++) {
      double sum = 0.0;
      for (int64_t k = rp[i]; k < rp[i + 1]; k++) sum += v[k] * x[c[k]];
      y[i] = alpha * sum;
    }
  } else {
    for (int64_t i = 0; i < D->n_rows; i++) {
      double sum = 0.0;
      for (int64_t k = rp[i]; k < rp[i + 1]; k++) sum += v[k] * x[c[k]];
      y[i] = alpha * sum + beta * y[i];
    }
  }
}

void halo_csr_rows_multadd(const halo_csr_rows *O, double alpha, const double *x_ghost, double *y) {
  const int64_t *rp = O->row_ptr;
  const int32_t *c = O->cols;
  const double *v = O->vals;
  for (int64_t r = 0; r < O->n_rows; r++) {
    double sum = 0.0;
    for (int64_t k = rp[r]; k < rp[r + 1]; k++) sum += v[k] * x_ghost[c[k]];
    y[O->rows[r]] += alpha * sum;
  }
}
