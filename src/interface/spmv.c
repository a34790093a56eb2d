/* The distributed products: y = alpha*A*x + beta*y with the diagonal block
 * multiplied while the exchange is in flight, and y = alpha*A^T*x + beta*y
 * with the off-diagonal block's contributions sent back by the reverse
 * exchange while the diagonal block's transpose is multiplied. The local
 * products are a table, on the host (src/spmv/csr.c) or on the device
 * (src/spmv/device.h, enqueued on the plan's compute stream): the products
 * read the same on both. */
#include "interface/plan.h"
#include "spmv/csr.h"

static int64_t n_rows(const halo_plan P) { return P->A->row_end - P->A->row_begin; }
static int64_t n_cols(const halo_plan P) { return P->A->col_end - P->A->col_begin; }

/* A plan with a matrix, and vectors where the rank has entries: x has the
 * matrix's columns and y its rows (transpose: the other way round). */
static halo_status check_product(halo_plan plan, const double *x, const double *y, int transpose) {
  if (!plan) return HALO_ERROR(HALO_ERR_INVALID_ARG, "plan is NULL");
  if (!plan->A)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "the plan has no matrix (an exchange-only plan): it "
                                            "moves values, the caller multiplies");
  const int64_t n_x = transpose ? n_rows(plan) : n_cols(plan);
  const int64_t n_y = transpose ? n_cols(plan) : n_rows(plan);
  if (!y && n_y > 0)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "y is NULL but this rank owns %lld of its entries",
                      (long long)n_y);
  if (!x && n_x > 0)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "x is NULL but this rank owns %lld of its entries",
                      (long long)n_x);
  return HALO_SUCCESS;
}

/* The local products of a plan's matrix: the diagonal block (y = alpha*D*x +
 * beta*y), the off-diagonal block added (y += alpha*O*ghost), and their
 * transposes (y = alpha*D^T*x + beta*y; g = alpha*O^T*x, per ghost slot). */
typedef struct {
  halo_status (*diag)(halo_plan P, double alpha, const double *x, double beta, double *y);
  halo_status (*offd)(halo_plan P, double alpha, const double *ghost, double *y);
  halo_status (*diag_t)(halo_plan P, double alpha, const double *x, double beta, double *y);
  halo_status (*offd_t)(halo_plan P, double alpha, const double *x, double *g);
  int enqueued; /* the products return once enqueued (on the plan's compute stream) */
} local_ops;

static halo_status host_diag(halo_plan P, double alpha, const double *x, double beta, double *y) {
  halo_csr_block_mult(&P->A->diag, alpha, x, beta, y);
  return HALO_SUCCESS;
}
static halo_status host_offd(halo_plan P, double alpha, const double *ghost, double *y) {
  halo_csr_rows_multadd(&P->A->offd, alpha, ghost, y);
  return HALO_SUCCESS;
}
static halo_status host_diag_t(halo_plan P, double alpha, const double *x, double beta, double *y) {
  halo_csr_block_mult_t(&P->A->diag, n_cols(P), alpha, x, beta, y);
  return HALO_SUCCESS;
}
static halo_status host_offd_t(halo_plan P, double alpha, const double *x, double *g) {
  halo_csr_rows_mult_t(&P->A->offd, P->A->n_ghost, alpha, x, g);
  return HALO_SUCCESS;
}
static halo_status dev_diag(halo_plan P, double alpha, const double *x, double beta, double *y) {
  return halo_spmv_device_diag(P->dsp, alpha, x, beta, y);
}
static halo_status dev_offd(halo_plan P, double alpha, const double *ghost, double *y) {
  return halo_spmv_device_offd(P->dsp, alpha, ghost, y);
}
static halo_status dev_diag_t(halo_plan P, double alpha, const double *x, double beta, double *y) {
  return halo_spmv_device_diag_t(P->dsp, alpha, x, beta, y);
}
static halo_status dev_offd_t(halo_plan P, double alpha, const double *x, double *g) {
  return halo_spmv_device_offd_t(P->dsp, alpha, x, g);
}

static const local_ops host_local = {host_diag, host_offd, host_diag_t, host_offd_t, 0};
static const local_ops device_local = {dev_diag, dev_offd, dev_diag_t, dev_offd_t, 1};

static const local_ops *local_of(const halo_plan P) {
  return P->memory == HALO_MEMORY_DEVICE ? &device_local : &host_local;
}

halo_status halo_spmv(halo_plan plan, double alpha, const double *x, double beta, double *y) {
  HALO_CHECK(check_product(plan, x, y, 0));
  const local_ops *L = local_of(plan);
  double *ghost = halo_plan_own(plan)->slots;
  halo_status st, st2;
  if (L->enqueued && plan->sets[0].state == HALO_SLOT_IDLE && plan->set.product_first) {
    /* the local product first, from the exchange's starting point: it need
     * not wait for the host work of the exchange's start (of the plan that
     * will run it: strategy AUTO's trial on the program's calls picks it) */
    halo_plan Q = plan;
    HALO_CHECK(halo_online_pick(plan, &Q));
    halo_exec *const ex = halo_plan_own(Q);
    st = halo_exec_mark_start(ex, 1);
    if (st == HALO_SUCCESS) st = L->diag(plan, alpha, x, beta, y);
    if (st == HALO_SUCCESS) st = halo_timeline_mark(plan->tl, 1);
    if (st != HALO_SUCCESS) {
      /* the peers wait for this rank's values, which x has: the exchange runs
       * all the same, and the product's error is returned */
      (void)halo_exec_mark_start(ex, 0);
      st2 = halo_slot_begin(plan, 0, 0, x, NULL);
      if (st2 == HALO_SUCCESS) st2 = halo_slot_end(plan, 0);
      return st2 == HALO_SUCCESS ? st : st2;
    }
    st = halo_slot_begin(plan, 0, 0, x, NULL);
    if (st != HALO_SUCCESS) {
      (void)halo_exec_mark_start(ex, 0);
      return st;
    }
    HALO_CHECK(halo_slot_end(plan, 0));
    return L->offd(plan, alpha, ghost, y);
  }
  HALO_CHECK(halo_slot_begin(plan, 0, 0, x, NULL));
  st = L->diag(plan, alpha, x, beta, y);
  st2 = halo_slot_end(plan, 0); /* end what began, whatever happened */
  HALO_CHECK(st);
  HALO_CHECK(st2);
  return L->offd(plan, alpha, ghost, y);
}

halo_status halo_spmv_async(halo_plan plan, void *stream, double alpha, const double *x,
                            double beta, double *y) {
  HALO_CHECK(check_product(plan, x, y, 0));
  if (plan->memory != HALO_MEMORY_DEVICE)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_spmv_async enqueues on a CUDA stream, but the "
                                            "plan is in host memory: halo_spmv");
  if (plan->set.timeline)
    return HALO_ERROR(HALO_ERR_UNSUPPORTED,
                      "the plan records a timeline (setting device.timeline), "
                      "which the host reads between products: halo_spmv");
  int capturing = 0;
  HALO_CHECK(halo_spmv_device_capturing(plan->dsp, stream, &capturing));
  /* strategy AUTO's trial on the program's calls neither times nor counts this call (it would
   * wait for the GPU, or make a candidate's plan): the plan's own executors or the trial's winner
   * run it */
  plan->async = 1;
  halo_plan Q = plan;
  halo_status st = halo_online_pick(plan, &Q);
  if (st == HALO_SUCCESS) st = halo_exec_stream_ordered(halo_plan_own(Q), capturing);
  const int other = stream && stream != plan->comp;
  if (st == HALO_SUCCESS && other) st = halo_spmv_device_stream_in(plan->dsp, stream);
  if (st == HALO_SUCCESS) st = halo_spmv(plan, alpha, x, beta, y);
  if (st == HALO_SUCCESS && other) st = halo_spmv_device_stream_out(plan->dsp, stream);
  plan->async = 0;
  return st;
}

halo_status halo_spmv_transpose(halo_plan plan, double alpha, const double *x, double beta,
                                double *y) {
  HALO_CHECK(check_product(plan, x, y, 1));
  if (!plan->set.opts.reverse)
    return HALO_ERROR(HALO_ERR_STATE, "the plan was made with reverse = 0: no transpose product");
  const local_ops *L = local_of(plan);
  double *g = halo_plan_own(plan)->slots; /* the ghosts' contributions */
  halo_status st = L->offd_t(plan, alpha, x, g);
  /* the contributions are not known: the peers must not add them, and hear why */
  if (st != HALO_SUCCESS) return halo_plan_fail(plan, st);
  HALO_CHECK(halo_slot_begin(plan, 0, 1, g, y));
  st = L->diag_t(plan, alpha, x, beta, y);
  halo_status st2 = halo_slot_end(plan, 0); /* its additions into y follow the product */
  HALO_CHECK(st);
  return st2;
}

halo_status halo_spmv_diag(halo_plan plan, double alpha, const double *x, double beta, double *y) {
  HALO_CHECK(check_product(plan, x, y, 0));
  return local_of(plan)->diag(plan, alpha, x, beta, y);
}
