/* hypre's products with a multivector (k vectors in one hypre_ParVector:
 * hypre_ParMultiVectorCreate) through libhalo_hypre, against hypre's own:
 *  - hypre_ParCSRMatrixMatvec (job 1, packed entries of k interleaved
 *    values) and hypre_ParCSRMatrixMatvecT (job 2, the reverse add) of a
 *    rectangular ParCSR matrix (rows and columns split differently, the last
 *    rank owning no column), for k = 2, 3 and 7 and one vector, with every
 *    strategy on virtual nodes of 2 ranks and a small message cap: the same
 *    bits as hypre's exchange (halo_hypre_set_enabled(0) hands every call to
 *    hypre's own functions), and each exchange counted through halo
 *    (halo_hypre_records: forward, reverse, of several vectors, k);
 *  - hypre's handles on a package set for k vectors: two forward exchanges
 *    in flight at once (the first through halo, the second left to hypre),
 *    then a reverse one: hypre's jobs 1 and 2 bit for bit, counted so.
 * hypre 2.26 sets a package for the vectors of a product in place
 * (num_components) and cannot set it back to fewer, so each k has a package
 * of its own (destroyed and made again). Every exchange gets its plan at once
 * (HALO_HYPRE_PLAN_AFTER=0). Run with 1-4 ranks; prints "multivec: ok" on
 * rank 0, else what differs. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <HYPRE.h>
#include <HYPRE_IJ_mv.h>

#include "halo/hypre.h"
#include "rect.h"

static int failures;

static void check(int ok, const char *what, int rank) {
  if (!ok) {
    fprintf(stderr, "multivec: [%d] %s\n", rank, what);
    failures++;
  }
}

/* The k vectors' local values (hypre stores them one after another). */
static double *data_of(hypre_ParVector *v) {
  return hypre_VectorData(hypre_ParVectorLocalVector(v));
}

static HYPRE_Int local_size(hypre_ParVector *v) {
  return hypre_VectorSize(hypre_ParVectorLocalVector(v));
}

static void fill(hypre_ParVector *v, int k, double seed) {
  double *d = data_of(v);
  const HYPRE_Int n = local_size(v);
  const HYPRE_BigInt first = hypre_ParVectorFirstIndex(v);
  for (int j = 0; j < k; j++)
    for (HYPRE_Int i = 0; i < n; i++)
      d[j * n + i] = sin(seed + 0.37 * (double)(first + i) + 1.3 * j);
}

static int same_bits(hypre_ParVector *a, hypre_ParVector *b, int k) {
  const size_t n = (size_t)local_size(a) * (size_t)k;
  return n == 0 || !memcmp(data_of(a), data_of(b), n * sizeof(double));
}

/* The record of A's package now: the one whose counts moved since the last
 * reset (the package's own; the destroyed ones keep theirs at 0). */
static int record_of(MPI_Comm comm, halo_hypre_record *out, int rank) {
  halo_hypre_record *recs = NULL;
  int n = 0, found = 0;
  check(halo_hypre_records(comm, &recs, &n) == HALO_SUCCESS, "halo_hypre_records failed", rank);
  for (int i = 0; i < n; i++)
    if (recs[i].forward || recs[i].reverse || recs[i].left_to_hypre) {
      *out = recs[i];
      found++;
    }
  halo_hypre_records_free(&recs);
  return found;
}

int main(int argc, char **argv) {
  /* every exchange of a package through halo, its first too */
  setenv("HALO_HYPRE_PLAN_AFTER", "0", 1);
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  HYPRE_Init();

  /* rows 0..M-1 split evenly; columns 0..N-1 split with the last rank owning
   * none (an empty coarse rank) when there are several */
  const HYPRE_BigInt M = 97, N = 41;
  HYPRE_IJMatrix ij;
  hypre_ParCSRMatrix *A = rect_matrix(rank, size, M, N, 5, 1.0 / 3.0, &ij);
  HYPRE_BigInt *cs = hypre_ParCSRMatrixColStarts(A), *rs = hypre_ParCSRMatrixRowStarts(A);

  const char *strategies[] = {"standard", "2step", "3step", "split"};
  const int ks[] = {1, 2, 3, 7};
  int cases = 0;
  for (int c = 0; c < 4; c++) {
    const int k = ks[c];
    /* a package of A's for these k vectors: hypre's, made at the next product */
    if (hypre_ParCSRMatrixCommPkg(A)) {
      hypre_MatvecCommPkgDestroy(hypre_ParCSRMatrixCommPkg(A));
      hypre_ParCSRMatrixCommPkg(A) = NULL;
    }
    hypre_ParVector *x = hypre_ParMultiVectorCreate(MPI_COMM_WORLD, N, cs, k);
    hypre_ParVector *xt_h = hypre_ParMultiVectorCreate(MPI_COMM_WORLD, N, cs, k);
    hypre_ParVector *xt_x = hypre_ParMultiVectorCreate(MPI_COMM_WORLD, N, cs, k);
    hypre_ParVector *y_h = hypre_ParMultiVectorCreate(MPI_COMM_WORLD, M, rs, k);
    hypre_ParVector *y_x = hypre_ParMultiVectorCreate(MPI_COMM_WORLD, M, rs, k);
    hypre_ParVector *vs[5] = {x, xt_h, xt_x, y_h, y_x};
    for (int v = 0; v < 5; v++) hypre_ParVectorInitialize(vs[v]);
    fill(x, k, 0.5);
    /* hypre's own exchanges: y = 0.7 A x + 0.3 y, then xt = -1.3 A^T y + 0.6 xt */
    halo_hypre_set_enabled(0);
    fill(y_h, k, 1.5);
    fill(xt_h, k, 2.5);
    hypre_ParCSRMatrixMatvec(0.7, A, x, 0.3, y_h);
    hypre_ParCSRMatrixMatvecT(-1.3, A, y_h, 0.6, xt_h);
    for (int s = 0; s < 4; s++) {
      halo_plan_options o = halo_plan_options_default();
      halo_strategy_from_name(strategies[s], &o.strategy);
      o.ranks_per_node = 2;
      o.message_cap = 16;
      check(halo_hypre_set_options(&o) == HALO_SUCCESS, "halo_hypre_set_options failed", rank);
      halo_hypre_view_reset();
      halo_hypre_set_enabled(1);
      fill(y_x, k, 1.5);
      fill(xt_x, k, 2.5);
      hypre_ParCSRMatrixMatvec(0.7, A, x, 0.3, y_x);
      hypre_ParCSRMatrixMatvecT(-1.3, A, y_x, 0.6, xt_x);
      halo_hypre_set_enabled(0);
      char what[512];
      snprintf(what, sizeof what, "k %d, %s: the product differs from hypre's", k, strategies[s]);
      check(same_bits(y_h, y_x, k), what, rank);
      snprintf(what, sizeof what, "k %d, %s: the transpose product differs from hypre's", k,
               strategies[s]);
      check(same_bits(xt_h, xt_x, k), what, rank);
      /* both exchanges through halo, of k vectors, on a plan of the strategy */
      halo_hypre_record r;
      memset(&r, 0, sizeof r);
      const int found = record_of(MPI_COMM_WORLD, &r, rank);
      const int ok = found == 1 && r.forward == 1 && r.reverse == 1 && r.left_to_hypre == 0 &&
                     r.multivector == (k > 1 ? 2 : 0) && r.multivector_k == (k > 1 ? k : 0) &&
                     r.planned && r.stats.strategy == o.strategy;
      snprintf(what, sizeof what,
               "k %d, %s: %d record(s), forward %lld, reverse %lld, left to hypre %lld, of "
               "several vectors %lld (k %d), planned %d (%s): expected 1 record, 1, 1, 0, %d "
               "(k %d), a plan of the strategy",
               k, strategies[s], found, (long long)r.forward, (long long)r.reverse,
               (long long)r.left_to_hypre, (long long)r.multivector, r.multivector_k, r.planned,
               r.plan, k > 1 ? 2 : 0, k > 1 ? k : 0);
      check(ok, what, rank);
      cases++;
    }
    /* hypre's handles on the package set for k vectors: two exchanges in flight at once (the
     * first through halo, the second left to hypre: one exchange at a time on a plan), then a
     * reverse one; each gives hypre's values */
    hypre_ParCSRCommPkg *pkg = hypre_ParCSRMatrixCommPkg(A);
    const HYPRE_Int n_send = hypre_ParCSRCommPkgSendMapStart(pkg, hypre_ParCSRCommPkgNumSends(pkg));
    const HYPRE_Int n_recv = hypre_ParCSRCommPkgRecvVecStart(pkg, hypre_ParCSRCommPkgNumRecvs(pkg));
    check(hypre_ParCSRCommPkgNumComponents(pkg) == k, "the package is not set for k vectors", rank);
    double *send = malloc((size_t)(n_send + 1) * sizeof *send);
    double *back_h = malloc((size_t)(n_send + 1) * sizeof *back_h);
    double *back_x = malloc((size_t)(n_send + 1) * sizeof *back_x);
    double *recv_h = malloc((size_t)(n_recv + 1) * sizeof *recv_h);
    double *recv_1 = malloc((size_t)(n_recv + 1) * sizeof *recv_1);
    double *recv_2 = malloc((size_t)(n_recv + 1) * sizeof *recv_2);
    for (HYPRE_Int i = 0; i < n_send; i++) send[i] = 1e3 * rank + i + 0.125;
    hypre_ParCSRCommHandleDestroy(hypre_ParCSRCommHandleCreate(1, pkg, send, recv_h));
    for (HYPRE_Int i = 0; i < n_recv; i++) recv_h[i] = recv_h[i] / 3.0 - 1.0;
    hypre_ParCSRCommHandleDestroy(hypre_ParCSRCommHandleCreate(2, pkg, recv_h, back_h));
    halo_hypre_view_reset();
    halo_hypre_set_enabled(1);
    hypre_ParCSRCommHandle *h1 = hypre_ParCSRCommHandleCreate(1, pkg, send, recv_1);
    hypre_ParCSRCommHandle *h2 = hypre_ParCSRCommHandleCreate(1, pkg, send, recv_2);
    hypre_ParCSRCommHandleDestroy(h2);
    hypre_ParCSRCommHandleDestroy(h1);
    for (HYPRE_Int i = 0; i < n_recv; i++) recv_1[i] = recv_1[i] / 3.0 - 1.0;
    hypre_ParCSRCommHandleDestroy(hypre_ParCSRCommHandleCreate(2, pkg, recv_1, back_x));
    halo_hypre_set_enabled(0);
    for (HYPRE_Int i = 0; i < n_recv; i++) recv_2[i] = recv_2[i] / 3.0 - 1.0;
    check(n_recv == 0 || !memcmp(recv_1, recv_h, (size_t)n_recv * sizeof *recv_1),
          "two exchanges in flight: the first (halo's) differs from hypre's job 1", rank);
    check(n_recv == 0 || !memcmp(recv_2, recv_h, (size_t)n_recv * sizeof *recv_2),
          "two exchanges in flight: the second (hypre's) differs from hypre's job 1", rank);
    check(n_send == 0 || !memcmp(back_x, back_h, (size_t)n_send * sizeof *back_x),
          "the reverse exchange differs from hypre's job 2", rank);
    halo_hypre_record r;
    memset(&r, 0, sizeof r);
    const int found = record_of(MPI_COMM_WORLD, &r, rank);
    check(found == 1 && r.forward == 1 && r.reverse == 1 && r.left_to_hypre == 1 &&
              r.multivector == (k > 1 ? 2 : 0),
          "handles: not 1 forward and 1 reverse exchange through halo and 1 left to hypre", rank);
    free(send);
    free(back_h);
    free(back_x);
    free(recv_h);
    free(recv_1);
    free(recv_2);
    for (int v = 0; v < 5; v++) hypre_ParVectorDestroy(vs[v]);
  }
  HYPRE_ClearAllErrors();
  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("multivec: %d ranks, %d products (k x strategy), %d failure(s)\n", size, cases, all);
    printf("multivec: %s\n", all ? "FAILED" : "ok");
  }
  HYPRE_IJMatrixDestroy(ij);
  HYPRE_Finalize();
  MPI_Finalize();
  return all ? 1 : 0;
}
