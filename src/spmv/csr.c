/* Local CSR kernels on the host.
 *
 * With alpha = 1 a product that adds into y starts each row's sum from y and
 * adds the entries in order, (((y + a1 x1) + a2 x2) + ...), as PETSc's and
 * hypre's CSR kernels do, so that halo's products are theirs bit for bit. */
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
  } else if (alpha == 1.0 && beta == 1.0) {
    for (int64_t i = 0; i < D->n_rows; i++) {
      double sum = y[i];
      for (int64_t k = rp[i]; k < rp[i + 1]; k++) sum += v[k] * x[c[k]];
      y[i] = sum;
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
  if (alpha == 1.0) {
    for (int64_t r = 0; r < O->n_rows; r++) {
      double sum = y[O->rows[r]];
      for (int64_t k = rp[r]; k < rp[r + 1]; k++) sum += v[k] * x_ghost[c[k]];
      y[O->rows[r]] = sum;
    }
    return;
  }
  for (int64_t r = 0; r < O->n_rows; r++) {
    double sum = 0.0;
    for (int64_t k = rp[r]; k < rp[r + 1]; k++) sum += v[k] * x_ghost[c[k]];
    y[O->rows[r]] += alpha * sum;
  }
}

void halo_csr_block_mult_t(const halo_csr_block *D, int64_t n_cols, double alpha, const double *x,
                           double beta, double *y) {
  const int64_t *rp = D->row_ptr;
  const int32_t *c = D->cols;
  const double *v = D->vals;
  for (int64_t j = 0; j < n_cols; j++) y[j] = beta == 0.0 ? 0.0 : beta * y[j];
  for (int64_t i = 0; i < D->n_rows; i++) {
    const double a = alpha * x[i];
    for (int64_t k = rp[i]; k < rp[i + 1]; k++) y[c[k]] += v[k] * a;
  }
}

void halo_csr_rows_mult_t(const halo_csr_rows *O, int64_t n_ghost, double alpha, const double *x,
                          double *g) {
  const int64_t *rp = O->row_ptr;
  const int32_t *c = O->cols;
  const double *v = O->vals;
  for (int64_t j = 0; j < n_ghost; j++) g[j] = 0.0;
  for (int64_t r = 0; r < O->n_rows; r++) {
    const double a = alpha * x[O->rows[r]];
    for (int64_t k = rp[r]; k < rp[r + 1]; k++) g[c[k]] += v[k] * a;
  }
}
