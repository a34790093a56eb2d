/* Local CSR kernels on the host. */
#ifndef HALO_SPMV_CSR_H
#define HALO_SPMV_CSR_H

#include "plan/matrix.h"

/** y = alpha*D*x + beta*y; with beta = 0, y is not read. */
void halo_csr_block_mult(const halo_csr_block *D, double alpha, const double *x, double beta,
                         double *y);

/** y[rows[k]] += alpha * (row k of O) . x_ghost for every non-empty row. */
void halo_csr_rows_multadd(const halo_csr_rows *O, double alpha, const double *x_ghost, double *y);

#endif
