/* Distributed product: the diagonal block while the exchange is in flight,
 * on the host or on the device (cuSPARSE, on the plan's compute stream). */
#include "plan/plan.h"
#include "spmv/csr.h"

static halo_status check_vectors(halo_plan plan, const double *x, const double *y) {
  if (!plan) return HALO_ERROR(HALO_ERR_INVALID_ARG, "plan is NULL");
  const halo_matrix A = plan->A;
  if (!y && A->diag.n_rows > 0)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "y is NULL but this rank owns %lld rows",
                      (long long)A->diag.n_rows);
  if (!x && A->col_end > A->col_begin)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "x is NULL but this rank owns %lld entries of x",
                      (long long)(A->col_end - A->col_begin));
  return HALO_SUCCESS;
}

halo_status halo_spmv(halo_plan plan, double alpha, const double *x, double beta, double *y) {
  HALO_CHECK(check_vectors(plan, x, y));
  const halo_matrix A = plan->A;
  if (plan->memory == HALO_MEMORY_DEVICE && !plan->in_flight && halo_gpu_product_first(plan->gpu)) {
    /* the local product first, from the exchange's starting point: it need
     * not wait for the host work of the exchange's start */
    HALO_CHECK(halo_gpu_mark_start(plan->gpu, 1));
    halo_status st = halo_gpu_spmv_diag(plan->gsp, alpha, x, beta, y);
    if (st == HALO_SUCCESS) st = halo_gpu_timeline_mark(plan->gpu, 1);
    if (st == HALO_SUCCESS) st = halo_exchange_begin(plan, x, NULL);
    if (st != HALO_SUCCESS) {
      (void)halo_gpu_mark_start(plan->gpu, 0);
      return st;
    }
    HALO_CHECK(halo_exchange_end(plan));
    return halo_gpu_spmv_offd(plan->gsp, alpha, plan->exec.ghost, y);
  }
  HALO_CHECK(halo_exchange_begin(plan, x, NULL));
  if (plan->memory == HALO_MEMORY_DEVICE) {
    halo_status st = halo_gpu_spmv_diag(plan->gsp, alpha, x, beta, y);
    halo_status st2 = halo_exchange_end(plan); /* end what began, whatever happened */
    HALO_CHECK(st);
    HALO_CHECK(st2);
    return halo_gpu_spmv_offd(plan->gsp, alpha, plan->exec.ghost, y);
  }
  halo_csr_block_mult(&A->diag, alpha, x, beta, y);
  HALO_CHECK(halo_exchange_end(plan));
  halo_csr_rows_multadd(&A->offd, alpha, plan->exec.ghost, y);
  return HALO_SUCCESS;
}

halo_status halo_spmv_diag(halo_plan plan, double alpha, const double *x, double beta, double *y) {
  HALO_CHECK(check_vectors(plan, x, y));
  if (plan->memory == HALO_MEMORY_DEVICE) return halo_gpu_spmv_diag(plan->gsp, alpha, x, beta, y);
  halo_csr_block_mult(&plan->A->diag, alpha, x, beta, y);
  return HALO_SUCCESS;
}
