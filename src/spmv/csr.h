/* Local CSR kernels on the host. */
#ifndef HALO_SPMV_CSR_H
#define HALO_SPMV_CSR_H

#include "plan/matrix.h"

/** y = alpha*D*x + beta*y; with beta = 0, y is not read. */
void halo_csr_block_mult(const halo_csr_block *D, double alpha, const double *x, double beta,
                         double *y);

/** y[rows[k]] += alpha * (row k of O) . x_ghost for every non-empty row. */
void halo_csr_rows_multadd(const halo_csr_rows *O, double alpha, const double *x_ghost, double *y);

/** y = alpha*D^T*x + beta*y: x has D's rows, y its n_cols columns; the rows
 *  in order, so the same bits on every run. With beta = 0, y is not read. */
void halo_csr_block_mult_t(const halo_csr_block *D, int64_t n_cols, double alpha, const double *x,
                           double beta, double *y);

/** g = alpha*O^T*x: one value per ghost (n_ghost), the rows in order. */
void halo_csr_rows_mult_t(const halo_csr_rows *O, int64_t n_ghost, double alpha, const double *x,
                          double *g);

#endif
