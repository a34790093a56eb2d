/* The hypre adapter's API against hypre itself, on a rectangular ParCSR
 * matrix (rows and columns split differently, as an interpolation P):
 *  - halo_hypre_plan_create_from_comm_pkg: the forward exchange equals
 *    hypre's job 1 and the reverse (into zeros) hypre's job 2, bit for bit,
 *    with every strategy and virtual nodes of 2;
 *  - halo_hypre_plan_create: halo_spmv equals hypre_ParCSRMatrixMatvec and
 *    halo_spmv_transpose hypre_ParCSRMatrixMatvecT to rounding.
 *  - halo_hypre_matvec(_t), every strategy: hypre's products bit for bit,
 *    each exchange through halo's plan of the package (counted); bad
 *    arguments refused.
 * Run with 1-4 ranks; prints "plan_cases: ok" on rank 0. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <HYPRE.h>
#include <HYPRE_IJ_mv.h>

#include "halo/hypre.h"
#include "rect.h"

static int failures;

static void check(int ok, const char *what, int rank)
{
  if (!ok) {
    fprintf(stderr, "plan_cases: [%d] %s\n", rank, what);
    failures++;
  }
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  HYPRE_Init();
  halo_hypre_set_enabled(0); /* hypre's own exchanges in this process */

  /* rows 0..M-1 split evenly; columns 0..N-1 split with the last rank owning
   * none (an empty coarse rank) when there are several */
  const HYPRE_BigInt M = 97, N = 41;
  HYPRE_BigInt rlo, rhi, clo, chi;
  rect_ranges(rank, size, M, N, &rlo, &rhi, &clo, &chi);
  HYPRE_IJMatrix ij;
  hypre_ParCSRMatrix *A = rect_matrix(rank, size, M, N, 4, 1.0, &ij);
  if (!hypre_ParCSRMatrixCommPkg(A)) hypre_MatvecCommPkgCreate(A);
  hypre_ParCSRCommPkg *pkg = hypre_ParCSRMatrixCommPkg(A);
  HYPRE_Int ns = hypre_ParCSRCommPkgNumSends(pkg), nr = hypre_ParCSRCommPkgNumRecvs(pkg);
  HYPRE_Int n_send = hypre_ParCSRCommPkgSendMapStart(pkg, ns);
  HYPRE_Int n_recv = hypre_ParCSRCommPkgRecvVecStart(pkg, nr);

  /* the exchange-only plan against hypre's handle */
  double *send = malloc((size_t)(n_send + 1) * sizeof *send);
  double *recv_h = malloc((size_t)(n_recv + 1) * sizeof *recv_h);
  double *recv_x = malloc((size_t)(n_recv + 1) * sizeof *recv_x);
  double *back_h = malloc((size_t)(n_send + 1) * sizeof *back_h);
  double *back_x = malloc((size_t)(n_send + 1) * sizeof *back_x);
  for (HYPRE_Int i = 0; i < n_send; i++) send[i] = 1e6 * rank + i + 0.25;
  for (HYPRE_Int i = 0; i < n_recv; i++) recv_x[i] = -1.0;
  hypre_ParCSRCommHandleDestroy(hypre_ParCSRCommHandleCreate(1, pkg, send, recv_h));
  for (HYPRE_Int i = 0; i < n_recv; i++) recv_h[i] = recv_h[i] * 3.0 + 1.0 / 3.0;
  hypre_ParCSRCommHandleDestroy(hypre_ParCSRCommHandleCreate(2, pkg, recv_h, back_h));
  const char *strategies[] = {"standard", "2step", "3step", "split"};
  for (int s = 0; s < 4; s++) {
    halo_plan_options o = halo_plan_options_default();
    halo_strategy_from_name(strategies[s], &o.strategy);
    o.ranks_per_node = 2;
    o.message_cap = 16;
    halo_plan plan = NULL;
    halo_status st = halo_hypre_plan_create_from_comm_pkg(pkg, &o, &plan);
    check(st == HALO_SUCCESS, halo_last_error(), rank);
    if (st != HALO_SUCCESS) continue;
    halo_exchange_begin(plan, send, recv_x);
    halo_exchange_end(plan);
    double *fw = malloc((size_t)(n_recv + 1) * sizeof *fw);
    hypre_ParCSRCommHandleDestroy(hypre_ParCSRCommHandleCreate(1, pkg, send, fw));
    check(!memcmp(fw, recv_x, (size_t)n_recv * sizeof *fw), "forward differs from hypre's job 1",
          rank);
    for (HYPRE_Int i = 0; i < n_recv; i++) recv_x[i] = recv_x[i] * 3.0 + 1.0 / 3.0;
    for (HYPRE_Int i = 0; i < n_send; i++) back_x[i] = 0.0;
    halo_exchange_reverse_begin(plan, recv_x, back_x);
    halo_exchange_reverse_end(plan);
    check(!memcmp(back_h, back_x, (size_t)n_send * sizeof *back_x),
          "reverse differs from hypre's job 2", rank);
    free(fw);
    halo_plan_destroy(&plan);
  }

  /* the matrix's plan: y = A x and x = A^T y against hypre's products */
  HYPRE_ParVector x, y, yh, xt, xth;
  HYPRE_BigInt *cs = hypre_ParCSRMatrixColStarts(A), *rs = hypre_ParCSRMatrixRowStarts(A);
  x = (HYPRE_ParVector)hypre_ParVectorCreate(MPI_COMM_WORLD, N, cs);
  xt = (HYPRE_ParVector)hypre_ParVectorCreate(MPI_COMM_WORLD, N, cs);
  xth = (HYPRE_ParVector)hypre_ParVectorCreate(MPI_COMM_WORLD, N, cs);
  y = (HYPRE_ParVector)hypre_ParVectorCreate(MPI_COMM_WORLD, M, rs);
  yh = (HYPRE_ParVector)hypre_ParVectorCreate(MPI_COMM_WORLD, M, rs);
  HYPRE_ParVector vs[5] = {x, xt, xth, y, yh};
  for (int v = 0; v < 5; v++) hypre_ParVectorInitialize((hypre_ParVector *)vs[v]);
  double *xd = hypre_VectorData(hypre_ParVectorLocalVector((hypre_ParVector *)x));
  double *yd = hypre_VectorData(hypre_ParVectorLocalVector((hypre_ParVector *)y));
  double *yhd = hypre_VectorData(hypre_ParVectorLocalVector((hypre_ParVector *)yh));
  double *xtd = hypre_VectorData(hypre_ParVectorLocalVector((hypre_ParVector *)xt));
  double *xthd = hypre_VectorData(hypre_ParVectorLocalVector((hypre_ParVector *)xth));
  for (HYPRE_BigInt j = clo; j < chi; j++) xd[j - clo] = sin((double)j);
  halo_plan_options o = halo_plan_options_default();
  o.strategy = HALO_STRATEGY_3STEP;
  o.ranks_per_node = 2;
  halo_plan plan = NULL;
  halo_status st = halo_hypre_plan_create(A, &o, &plan);
  check(st == HALO_SUCCESS, halo_last_error(), rank);
  double err = 0.0, errt = 0.0;
  if (st == HALO_SUCCESS) {
    hypre_ParCSRMatrixMatvec(1.0, A, (hypre_ParVector *)x, 0.0, (hypre_ParVector *)yh);
    halo_spmv(plan, 1.0, xd, 0.0, yd);
    for (HYPRE_BigInt i = 0; i < rhi - rlo; i++)
      err = fmax(err, fabs(yd[i] - yhd[i]) / (fabs(yhd[i]) + 1e-300));
    hypre_ParCSRMatrixMatvecT(1.0, A, (hypre_ParVector *)yh, 0.0, (hypre_ParVector *)xth);
    halo_spmv_transpose(plan, 1.0, yhd, 0.0, xtd);
    for (HYPRE_BigInt j = 0; j < chi - clo; j++)
      errt = fmax(errt, fabs(xtd[j] - xthd[j]) / (fabs(xthd[j]) + 1e-300));
    halo_plan_destroy(&plan);
  }
  /* halo_hypre_matvec(_t) with every strategy: hypre's products bit for bit
   * (alpha, beta not 0 or 1; y holding values), each through halo */
  for (int s = 0; s < 4; s++) {
    for (HYPRE_BigInt i = 0; i < rhi - rlo; i++) yd[i] = yhd[i] = cos((double)(i + rlo));
    for (HYPRE_BigInt j = 0; j < chi - clo; j++) xtd[j] = xthd[j] = 0.5 - sin((double)(3 * j));
    halo_hypre_set_enabled(0);
    hypre_ParCSRMatrixMatvec(0.7, A, (hypre_ParVector *)x, 0.3, (hypre_ParVector *)yh);
    hypre_ParCSRMatrixMatvecT(-1.3, A, (hypre_ParVector *)yh, 0.6, (hypre_ParVector *)xth);
    halo_plan_options mo = halo_plan_options_default();
    halo_strategy_from_name(strategies[s], &mo.strategy);
    mo.ranks_per_node = 2;
    mo.message_cap = 16;
    check(halo_hypre_set_options(&mo) == HALO_SUCCESS, "halo_hypre_set_options", rank);
    halo_hypre_set_enabled(1);
    halo_hypre_view_reset();
    check(halo_hypre_matvec(0.7, A, (hypre_ParVector *)x, 0.3, (hypre_ParVector *)y) == 0,
          "halo_hypre_matvec failed", rank);
    check(halo_hypre_matvec_t(-1.3, A, (hypre_ParVector *)yh, 0.6, (hypre_ParVector *)xt) == 0,
          "halo_hypre_matvec_t failed", rank);
    halo_hypre_set_enabled(0);
    /* a rank without rows or columns has no data (NULL), which memcmp may not get */
    check(rhi == rlo || !memcmp(yd, yhd, (size_t)(rhi - rlo) * sizeof *yd),
          "halo_hypre_matvec differs from hypre_ParCSRMatrixMatvec", rank);
    check(chi == clo || !memcmp(xtd, xthd, (size_t)(chi - clo) * sizeof *xtd),
          "halo_hypre_matvec_t differs from hypre_ParCSRMatrixMatvecT", rank);
    halo_hypre_record *recs = NULL;
    int n_recs = 0, through = 0;
    check(halo_hypre_records(MPI_COMM_WORLD, &recs, &n_recs) == HALO_SUCCESS, "records", rank);
    for (int i = 0; i < n_recs; i++)
      through += recs[i].forward == 1 && recs[i].reverse == 1 && recs[i].planned &&
                 recs[i].stats.strategy == mo.strategy;
    check(through == 1, "the products' exchanges did not go through halo's plan", rank);
    halo_hypre_records_free(&recs);
  }
  HYPRE_ClearAllErrors();
  /* hypre's code for a bad argument: HYPRE_ERROR_ARG with its number (the matrix: 2) */
  check(halo_hypre_matvec(1.0, NULL, (hypre_ParVector *)x, 0.0, (hypre_ParVector *)y) ==
            (HYPRE_ERROR_ARG | (2 << 3)),
        "halo_hypre_matvec did not refuse a NULL matrix as argument 2", rank);
  HYPRE_ClearAllErrors();
  check(halo_hypre_matvec(1.0, A, (hypre_ParVector *)y, 0.0, (hypre_ParVector *)y) != 0,
        "halo_hypre_matvec accepted an x that does not fit", rank);
  HYPRE_ClearAllErrors();

  check(err <= 1e-14, "halo_spmv differs from hypre's product", rank);
  check(errt <= 1e-14, "halo_spmv_transpose differs from hypre's transpose product", rank);
  double e[2] = {err, errt}, E[2];
  MPI_Reduce(e, E, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  { /* the report's communicator is checked: MPI_COMM_NULL and an intercommunicator refused */
    halo_hypre_record *recs = NULL;
    int n_recs = -1;
    check(halo_hypre_records(MPI_COMM_NULL, &recs, &n_recs) == HALO_ERR_INVALID_ARG && !recs,
          "halo_hypre_records(MPI_COMM_NULL) is not refused", rank);
    check(halo_hypre_view(MPI_COMM_NULL, stdout) == HALO_ERR_INVALID_ARG,
          "halo_hypre_view(MPI_COMM_NULL) is not refused", rank);
    if (size >= 2) {
      MPI_Comm half, inter;
      MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
      MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 77, &inter);
      check(halo_hypre_records(inter, &recs, &n_recs) == HALO_ERR_INVALID_ARG,
            "halo_hypre_records(an intercommunicator) is not refused", rank);
      check(halo_hypre_view(inter, stdout) == HALO_ERR_INVALID_ARG,
            "halo_hypre_view(an intercommunicator) is not refused", rank);
      MPI_Comm_free(&inter);
      MPI_Comm_free(&half);
    }
  }
  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("plan_cases: %d ranks, %d packed sends on rank 0, product rel diff %.3g, transpose %.3g\n",
           size, (int)n_send, E[0], E[1]);
    printf("plan_cases: %s\n", all ? "FAILED" : "ok");
  }
  for (int v = 0; v < 5; v++) hypre_ParVectorDestroy((hypre_ParVector *)vs[v]);
  free(send);
  free(recv_h);
  free(recv_x);
  free(back_h);
  free(back_x);
  HYPRE_IJMatrixDestroy(ij);
  HYPRE_Finalize();
  MPI_Finalize();
  return all ? 1 : 0;
}
