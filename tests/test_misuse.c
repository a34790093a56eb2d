/* Misuse of the API: every rank gets the error status and message, none
 * hangs (ctest's timeout catches a hang), nothing crashes. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>

#include "verify.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank, P;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &P);
  halo_gen g;
  halo_csr rows;
  int64_t *rb;
  CHECK_OK(halo_gen_parse("lap2d:10", &g));
  CHECK_OK(halo_gen_distributed(comm, &g, HALO_PARTITION_ROWS, NULL, &rb, &rows));
  const int64_t b = rb[rank], e = rb[rank + 1], n = e - b;
  halo_matrix A = NULL;
  halo_plan plan = NULL;
  char want[256];
  const int last = P - 1;

  /* NULL handles and outputs (on every rank) */
  CHECK_ERR(halo_plan_create(NULL, NULL, &plan), HALO_ERR_INVALID_ARG, "matrix is NULL");
  CHECK_ERR(halo_exchange_begin(NULL, NULL, NULL), HALO_ERR_INVALID_ARG, "plan is NULL");
  CHECK_ERR(halo_exchange_end(NULL), HALO_ERR_INVALID_ARG, "plan is NULL");
  CHECK_ERR(halo_spmv(NULL, 1.0, NULL, 0.0, NULL), HALO_ERR_INVALID_ARG, "plan is NULL");
  CHECK_ERR(halo_plan_stats(NULL, NULL), HALO_ERR_INVALID_ARG, "plan is NULL");
  CHECK_ERR(halo_matrix_get_local_sizes(NULL, NULL, NULL, NULL), HALO_ERR_INVALID_ARG, "NULL");
  CHECK_ERR(halo_matrix_get_ghost_ids(NULL, NULL), HALO_ERR_INVALID_ARG, "NULL");
  halo_plan_destroy(NULL);
  halo_plan_destroy(&plan);
  halo_matrix_destroy(NULL);
  halo_matrix_destroy(&A);
  CHECK_ERR(halo_matrix_create_csr(MPI_COMM_NULL, b, e, b, e, rows.row_ptr, rows.col_ids,
                                   rows.values, HALO_MEMORY_HOST, &A),
            HALO_ERR_INVALID_ARG, "MPI_COMM_NULL");
  snprintf(want, sizeof want, "rank 0: A_p is NULL");
  CHECK_ERR(halo_matrix_create_csr(comm, b, e, b, e, rows.row_ptr, rows.col_ids, rows.values,
                                   HALO_MEMORY_HOST, rank == 0 ? NULL : &A),
            HALO_ERR_INVALID_ARG, want);
  CHECK(A == NULL);

  /* row ranges that do not tile: the last rank starts one row late */
  if (P > 1) {
    snprintf(want, sizeof want, "rank %d ends at %lld but rank %d begins at %lld", last - 1,
             (long long)rb[last], last, (long long)rb[last] + 1);
    /* the last rank passes its rows but the first */
    int64_t *rp = malloc((size_t)(n + 1) * sizeof *rp), o = rank == last ? rows.row_ptr[1] : 0;
    for (int64_t i = 0; i + (rank == last) <= n; i++) rp[i] = rows.row_ptr[i + (rank == last)] - o;
    CHECK_ERR(halo_matrix_create_csr(comm, rank == last ? b + 1 : b, e, b, e, rp, rows.col_ids + o,
                                     rows.values + o, HALO_MEMORY_HOST, &A),
              HALO_ERR_INCONSISTENT, want);
    free(rp);
    /* overlapping column ranges */
    CHECK_ERR(halo_matrix_create_csr(comm, b, e, rank == last ? b - 1 : b, e, rows.row_ptr,
                                     rows.col_ids, rows.values, HALO_MEMORY_HOST, &A),
              HALO_ERR_INCONSISTENT, "column ranges do not follow each other");
  }
  CHECK_ERR(halo_matrix_create_csr(comm, b + 1, e + 1, b + 1, e + 1, rows.row_ptr, rows.col_ids,
                                   rows.values, HALO_MEMORY_HOST, &A),
            HALO_ERR_INCONSISTENT, "row ranges must start at 0: rank 0 begins at 1");
  /* a range that is no range, on rank 0 only */
  snprintf(want, sizeof want, "rank 0: row range [%lld, %lld) is not a range", (long long)rb[1],
           (long long)rb[0]);
  if (n > 0)
    CHECK_ERR(halo_matrix_create_csr(comm, rank == 0 ? e : b, rank == 0 ? b : e, b, e, rows.row_ptr,
                                     rows.col_ids, rows.values, HALO_MEMORY_HOST, &A),
              HALO_ERR_INVALID_ARG, want);
  /* a column id out of range on the last rank */
  {
    int64_t saved = rows.col_ids[0];
    if (rank == last) rows.col_ids[0] = 100;
    snprintf(want, sizeof want, "rank %d: matrix column 100 in row %lld is out of range [0, 100)",
             last, (long long)rb[last]);
    CHECK_ERR(halo_matrix_create_csr(comm, b, e, b, e, rows.row_ptr, rows.col_ids, rows.values,
                                     HALO_MEMORY_HOST, &A),
              HALO_ERR_INVALID_ARG, want);
    rows.col_ids[0] = saved;
  }
  /* row_ptr that decreases, and a NULL array, on the last rank */
  {
    int64_t saved = rows.row_ptr[2];
    if (rank == last) rows.row_ptr[2] = 1;
    snprintf(want, sizeof want, "rank %d: matrix row_ptr decreases at local row 1", last);
    CHECK_ERR(halo_matrix_create_csr(comm, b, e, b, e, rows.row_ptr, rows.col_ids, rows.values,
                                     HALO_MEMORY_HOST, &A),
              HALO_ERR_INVALID_ARG, want);
    rows.row_ptr[2] = saved;
    snprintf(want, sizeof want, "rank %d: matrix row_ptr is NULL", last);
    CHECK_ERR(halo_matrix_create_csr(comm, b, e, b, e, rank == last ? NULL : rows.row_ptr,
                                     rows.col_ids, rows.values, HALO_MEMORY_HOST, &A),
              HALO_ERR_INVALID_ARG, want);
    int64_t nnz_last = rows.row_ptr[n];
    MPI_Bcast(&nnz_last, 1, MPI_INT64_T, last, comm);
    snprintf(want, sizeof want, "rank %d: matrix has %lld entries but its values array is NULL",
             last, (long long)nnz_last);
    CHECK_ERR(halo_matrix_create_csr(comm, b, e, b, e, rows.row_ptr, rows.col_ids,
                                     rank == last ? NULL : rows.values, HALO_MEMORY_HOST, &A),
              HALO_ERR_INVALID_ARG, want);
  }
  /* device memory that is not (or not compiled in), on every rank; an unknown memory kind
   * on rank 0 */
#if HALO_HAVE_CUDA
  /* host arrays said to be device memory */
  CHECK_ERR(halo_matrix_create_csr(comm, b, e, b, e, rows.row_ptr, rows.col_ids, rows.values,
                                   HALO_MEMORY_DEVICE, &A),
            HALO_ERR_INVALID_ARG,
            "matrix row_ptr is not device memory, but the memory kind is HALO_MEMORY_DEVICE");
#else
  CHECK_ERR(halo_matrix_create_csr(comm, b, e, b, e, rows.row_ptr, rows.col_ids, rows.values,
                                   HALO_MEMORY_DEVICE, &A),
            HALO_ERR_NOT_COMPILED, "not compiled in: rebuild with HALO_ENABLE_CUDA=ON");
#endif
  CHECK_ERR(halo_matrix_create_csr(comm, b, e, b, e, rows.row_ptr, rows.col_ids, rows.values,
                                   rank == 0 ? (halo_memory)42 : HALO_MEMORY_HOST, &A),
            HALO_ERR_INVALID_ARG, "rank 0: unknown memory kind 42");
  CHECK(A == NULL);

  /* a good matrix; then bad plan options on one rank */
  CHECK_OK(halo_matrix_create_csr(comm, b, e, b, e, rows.row_ptr, rows.col_ids, rows.values,
                                  HALO_MEMORY_HOST, &A));
  halo_plan_options o = halo_plan_options_default();
  /* a host transport on device memory, and a device one on host memory: refused before any
   * device is made, on every rank */
  o.memory = HALO_MEMORY_DEVICE, o.transport = HALO_TRANSPORT_NEIGHBOR;
  CHECK_ERR(halo_plan_create(A, &o, &plan), HALO_ERR_INVALID_ARG,
            "transport neighbor is for host memory; device memory takes auto, staged");
  o.memory = HALO_MEMORY_HOST, o.transport = HALO_TRANSPORT_NCCL;
  CHECK_ERR(halo_plan_create(A, &o, &plan), HALO_ERR_INVALID_ARG,
            "transport nccl needs device memory (the plan's memory is host): use auto, host, rma "
            "or neighbor");
  CHECK(plan == NULL);
  o = halo_plan_options_default();
  if (rank == last) o.strategy = (halo_strategy)99;
  snprintf(want, sizeof want, "rank %d: unknown strategy 99", last);
  CHECK_ERR(halo_plan_create(A, &o, &plan), HALO_ERR_INVALID_ARG, want);
  CHECK(plan == NULL);
  snprintf(want, sizeof want, "rank %d: plan_p is NULL", last);
  CHECK_ERR(halo_plan_create(A, NULL, rank == last ? NULL : &plan), HALO_ERR_INVALID_ARG, want);
  CHECK(plan == NULL);
  /* absurd options, on one rank or on all */
  o = halo_plan_options_default();
  if (rank == last) o.ranks_per_node = -2;
  snprintf(want, sizeof want, "rank %d: ranks_per_node = -2", last);
  CHECK_ERR(halo_plan_create(A, &o, &plan), HALO_ERR_INVALID_ARG, want);
  o = halo_plan_options_default();
  o.message_cap = 4;
  CHECK_ERR(halo_plan_create(A, &o, &plan), HALO_ERR_INVALID_ARG,
            "message_cap = 4 bytes: must be between 8 (one value) and 2^40");
  o = halo_plan_options_default();
  o.remove_duplicates = 7;
  CHECK_ERR(halo_plan_create(A, &o, &plan), HALO_ERR_INVALID_ARG, "remove_duplicates = 7");
  /* options that differ between ranks */
  if (P > 1) {
    o = halo_plan_options_default();
    o.strategy = HALO_STRATEGY_SPLIT;
    o.ranks_per_node = rank == 0 ? 1 : 2;
    CHECK_ERR(halo_plan_create(A, &o, &plan), HALO_ERR_INCONSISTENT,
              "plan options differ across ranks: ranks_per_node is 1 on some ranks and 2");
    o = halo_plan_options_default();
    o.strategy = rank == last ? HALO_STRATEGY_3STEP : HALO_STRATEGY_2STEP;
    CHECK_ERR(halo_plan_create(A, &o, &plan), HALO_ERR_INCONSISTENT, "strategy is 2step on some");
  }
  /* a bad HALO_RANKS_PER_NODE on every rank; the option wins over it */
  setenv("HALO_RANKS_PER_NODE", "two", 1);
  CHECK_ERR(halo_plan_create(A, NULL, &plan), HALO_ERR_INVALID_ARG,
            "HALO_RANKS_PER_NODE='two' (option ranks_per_node): expected 1 or more");
  o = halo_plan_options_default();
  o.ranks_per_node = 1;
  CHECK_OK(halo_plan_create(A, &o, &plan));
  halo_stats stats;
  CHECK_OK(halo_plan_stats(plan, &stats));
  CHECK(stats.nodes == P && stats.ranks_per_node == 1);
  halo_plan_destroy(&plan);
  setenv("HALO_RANKS_PER_NODE", "2", 1);
  CHECK_OK(halo_plan_create(A, NULL, &plan));
  CHECK_OK(halo_plan_stats(plan, &stats));
  CHECK(stats.nodes == (P + 1) / 2);
  halo_plan_destroy(&plan);
  unsetenv("HALO_RANKS_PER_NODE");
  CHECK(plan == NULL);
  CHECK_OK(halo_plan_create(A, NULL, &plan));

  /* calls out of order */
  double *x = calloc((size_t)n + 1, sizeof *x), *y = calloc((size_t)n + 1, sizeof *y);
  CHECK_ERR(halo_exchange_end(plan), HALO_ERR_STATE, "no exchange of this plan is in flight");
  CHECK_OK(halo_exchange_begin(plan, x, NULL));
  CHECK_ERR(halo_exchange_begin(plan, x, NULL), HALO_ERR_STATE, "already in flight");
  CHECK_ERR(halo_spmv(plan, 1.0, x, 0.0, y), HALO_ERR_STATE, "already in flight");
  CHECK_OK(halo_exchange_end(plan));
  if (n > 0) {
    CHECK_ERR(halo_exchange_begin(plan, NULL, NULL), HALO_ERR_INVALID_ARG, "x_local is NULL");
    CHECK_ERR(halo_spmv(plan, 1.0, x, 0.0, NULL), HALO_ERR_INVALID_ARG, "y is NULL");
  }
  CHECK_OK(halo_spmv(plan, 1.0, x, 0.0, y));
  /* a host plan's product cannot be enqueued on a stream */
  CHECK_ERR(halo_spmv_async(plan, NULL, 1.0, x, 0.0, y), HALO_ERR_INVALID_ARG,
            "the plan is in host memory: halo_spmv");
  CHECK_ERR(halo_spmv_async(NULL, NULL, 1.0, x, 0.0, y), HALO_ERR_INVALID_ARG, "plan is NULL");
  /* destroying a plan with an exchange in flight completes it first */
  CHECK_OK(halo_exchange_begin(plan, x, NULL));
  halo_plan_destroy(&plan);
  CHECK(plan == NULL);
  halo_matrix_destroy(&A);
  CHECK(A == NULL);
  free(x), free(y);
  halo_csr_free(&rows);
  halo_io_free(rb);
  MPI_Finalize();
  return 0;
}
