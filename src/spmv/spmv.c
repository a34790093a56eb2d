/* Distributed product: the diagonal block while the exchange is in flight. */
#include "plan/plan.h"
#include "spmv/csr.h"

halo_status halo_spmv(halo_plan plan, double alpha, const double *x, double beta, double *y) {
  if (!plan) return HALO_ERROR(HALO_ERR_INVALID_ARG, "plan is NULL");
  const halo_matrix A = plan->A;
  if (!y && A->diag.n_rows > 0)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "y is NULL but this rank owns %lld rows",
                      (long long)A->diag.n_rows);
  HALO_CHECK(halo_exchange_begin(plan, x, NULL));
  halo_csr_block_mult(&A->diag, alpha, x, beta, y);
  HALO_CHECK(halo_exchange_end(plan));
  halo_csr_rows_multadd(&A->offd, alpha, plan->exec.ghost, y);
  return HALO_SUCCESS;
}
