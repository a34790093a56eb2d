/* halo's plans against MPI Advance's persistent neighborhood all-to-all
 * (mpi-advance/locality_aware, MPIL_* functions), on the same pattern, side
 * by side in one run (bench/neighbor_compare.sh; bench/results/components.md).
 *
 * The pattern is that of y = A x with A's rows (and x) in contiguous parts:
 * each rank receives the entries of x its rows need from their owners. The
 * methods, each an exchange of those values, timed in turn, ROUNDS times
 * over, N exchanges a round after a barrier; a method's time is the median
 * over the rounds of the slowest rank's mean:
 *   halo STRATEGY/TRANSPORT   halo_exchange_begin + _end of a plan (host, neighbor)
 *   mpil-standard             MPIL_Neighbor_alltoallv_init, NEIGHBOR_ALLTOALLV_INIT_STANDARD
 *   mpil-locality             the same, NEIGHBOR_ALLTOALLV_INIT_LOCALITY (its nodes of
 *                             ranks_per_node ranks: MPIL_Comm_update_locality), where
 *                             ranks_per_node divides the ranks
 * MPI Advance's exchanges pack the send buffer from x (as halo's do) and
 * receive straight into the ghosts (sources in rank order, ghosts sorted by
 * global id: no unpack). Every method's ghosts are checked against x.
 *
 * usage: bench_neighbor_compare GEN|FILE.mtx RANKS_PER_NODE N ROUNDS */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "halo.h"
#include "halo/io.h"
#include "locality_aware.h"

static double value_of(int64_t gid) { return 1.0 + 1e-3 * (double)(gid % 100003); }

static void die(const char *what) {
  fprintf(stderr, "bench_neighbor_compare: %s: %s\n", what, halo_last_error());
  MPI_Abort(MPI_COMM_WORLD, 1);
}

typedef struct {
  const char *name;
  halo_plan plan;        /* halo */
  MPIL_Request *req;     /* MPI Advance */
  double t[64];
} method;

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank, P;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &P);
  if (argc != 5) {
    if (rank == 0) fprintf(stderr, "usage: bench_neighbor_compare GEN|FILE K N ROUNDS\n");
    MPI_Finalize();
    return 2;
  }
  const int K = atoi(argv[2]), N = atoi(argv[3]), R = atoi(argv[4]) < 64 ? atoi(argv[4]) : 64;
  halo_csr L;
  int64_t *rb = NULL;
  halo_gen g;
  if (halo_gen_parse(argv[1], &g) == HALO_SUCCESS) {
    if (halo_gen_distributed(comm, &g, HALO_PARTITION_ROWS, NULL, &rb, &L)) die("generate");
  } else if (halo_mm_read_distributed(comm, 0, argv[1], NULL, HALO_PARTITION_ROWS, NULL, &rb, &L,
                                      NULL)) {
    die("read");
  }
  if (L.n_rows != L.n_cols) {
    if (rank == 0) printf("%s: not square, skipped\n", argv[1]);
    MPI_Finalize();
    return 0;
  }
  const int64_t b = rb[rank], e = rb[rank + 1], n = e - b;
  halo_matrix A = NULL;
  if (halo_matrix_create_csr(comm, b, e, b, e, L.row_ptr, L.col_ids, L.values, HALO_MEMORY_HOST,
                             &A))
    die("matrix");
  int64_t ng;
  const int64_t *gid;
  halo_matrix_get_local_sizes(A, NULL, NULL, &ng);
  halo_matrix_get_ghost_ids(A, &gid);
  double *x = malloc((size_t)(n + 1) * sizeof *x), *ghost = malloc((size_t)(ng + 1) * sizeof *x);
  for (int64_t j = 0; j < n; j++) x[j] = value_of(b + j);

  /* the pattern: ghosts grouped by owner (sorted by global id), then who sends what */
  int *rcount = calloc((size_t)P, sizeof(int)), *scount = malloc((size_t)P * sizeof(int));
  for (int64_t k = 0, o = 0; k < ng; k++) {
    while (gid[k] >= rb[o + 1]) o++;
    rcount[o]++;
  }
  MPI_Alltoall(rcount, 1, MPI_INT, scount, 1, MPI_INT, comm);
  int *rdis = malloc((size_t)P * sizeof(int)), *sdis = malloc((size_t)P * sizeof(int));
  int ns = 0;
  for (int r = 0, a = 0; r < P; r++) rdis[r] = a, a += rcount[r];
  for (int r = 0; r < P; r++) sdis[r] = ns, ns += scount[r];
  long long *want = malloc((size_t)(ng + 1) * sizeof *want), *asked = malloc((size_t)(ns + 1) * sizeof *asked);
  for (int64_t k = 0; k < ng; k++) want[k] = (long long)gid[k];
  MPI_Alltoallv(want, rcount, rdis, MPI_LONG_LONG, asked, scount, sdis, MPI_LONG_LONG, comm);
  int *sidx = malloc((size_t)(ns + 1) * sizeof *sidx);
  for (int i = 0; i < ns; i++) sidx[i] = (int)(asked[i] - b);
  /* the neighbours, with their counts and displacements */
  int n_src = 0, n_dst = 0;
  int *src = malloc((size_t)P * sizeof(int)), *dst = malloc((size_t)P * sizeof(int));
  int *src_c = malloc((size_t)P * sizeof(int)), *src_d = malloc((size_t)P * sizeof(int));
  int *dst_c = malloc((size_t)P * sizeof(int)), *dst_d = malloc((size_t)P * sizeof(int));
  for (int r = 0; r < P; r++) {
    if (rcount[r]) src[n_src] = r, src_c[n_src] = rcount[r], src_d[n_src++] = rdis[r];
    if (scount[r]) dst[n_dst] = r, dst_c[n_dst] = scount[r], dst_d[n_dst++] = sdis[r];
  }
  double *sendbuf = malloc((size_t)(ns + 1) * sizeof *sendbuf);

  /* the methods */
  method m[16];
  int nm = 0;
  static const char *const sname[] = {"standard", "2step", "3step", "split"};
  static char names[16][32];
  for (int t = 0; t < 2; t++)
    for (int s = 0; s < HALO_N_STRATEGIES; s++) {
      halo_plan_options o = halo_plan_options_default();
      o.strategy = (halo_strategy)s;
      o.transport = t ? HALO_TRANSPORT_NEIGHBOR : HALO_TRANSPORT_HOST;
      o.ranks_per_node = K;
      o.reverse = 0;
      memset(&m[nm], 0, sizeof m[nm]);
      if (halo_plan_create(A, &o, &m[nm].plan)) die("plan");
      snprintf(names[nm], sizeof names[nm], "halo %s/%s", sname[s], t ? "neighbor" : "host");
      m[nm].name = names[nm];
      nm++;
    }
  MPIL_Info *xinfo;
  MPIL_Comm *xcomm;
  MPIL_Info_init(&xinfo);
  MPIL_Dist_graph_create_adjacent(comm, n_src, src, src_c, n_dst, dst, dst_c, xinfo, 0, &xcomm);
  MPIL_Comm_update_locality(xcomm, K);
  /* the locality-aware one only where every node is full: with 3 ranks on nodes of 2 it
   * waits without end in MPIL_Wait (seen at the commit of bench/results/components.md) */
  const int n_mpil = P % K == 0 ? 2 : 1;
  if (n_mpil == 1 && rank == 0)
    printf("%s\t%d\tmpil-locality\tskipped (a node of fewer than %d ranks)\n", argv[1], P, K);
  for (int a = 0; a < n_mpil; a++) {
    memset(&m[nm], 0, sizeof m[nm]);
    MPIL_Set_alltoallv_neighbor_init_alogorithm(a ? NEIGHBOR_ALLTOALLV_INIT_LOCALITY
                                                  : NEIGHBOR_ALLTOALLV_INIT_STANDARD);
    MPIL_Neighbor_alltoallv_init(sendbuf, dst_c, dst_d, MPI_DOUBLE, ghost, src_c, src_d,
                                 MPI_DOUBLE, xcomm, xinfo, &m[nm].req);
    m[nm].name = a ? "mpil-locality" : "mpil-standard";
    nm++;
  }

  /* rounds: every method in turn */
  for (int round = 0; round < R; round++)
    for (int i = 0; i < nm; i++) {
      for (int64_t k = 0; k < ng; k++) ghost[k] = NAN;
      MPI_Barrier(comm);
      const double t0 = MPI_Wtime();
      for (int it = 0; it < N; it++) {
        if (m[i].plan) {
          if (halo_exchange_begin(m[i].plan, x, ghost) || halo_exchange_end(m[i].plan))
            die(m[i].name);
        } else {
          for (int j = 0; j < ns; j++) sendbuf[j] = x[sidx[j]];
          MPIL_Start(m[i].req);
          MPIL_Wait(m[i].req, MPI_STATUS_IGNORE);
        }
      }
      double t = (MPI_Wtime() - t0) / N, most;
      MPI_Allreduce(&t, &most, 1, MPI_DOUBLE, MPI_MAX, comm);
      m[i].t[round] = most;
      int bad = 0, any;
      for (int64_t k = 0; k < ng; k++) bad |= ghost[k] != value_of(gid[k]);
      MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, comm);
      if (any) {
        if (rank == 0) fprintf(stderr, "bench_neighbor_compare: %s: wrong ghosts\n", m[i].name);
        MPI_Abort(comm, 1);
      }
    }
  if (rank == 0) {
    for (int i = 0; i < nm; i++) { /* median of the rounds */
      for (int a = 1; a < R; a++)
        for (int c = a; c > 0 && m[i].t[c] < m[i].t[c - 1]; c--) {
          double w = m[i].t[c];
          m[i].t[c] = m[i].t[c - 1], m[i].t[c - 1] = w;
        }
      printf("%s\t%d\t%s\t%.3f\n", argv[1], P, m[i].name, 1e6 * m[i].t[R / 2]);
    }
  }
  for (int i = 0; i < nm; i++) {
    if (m[i].plan) halo_plan_destroy(&m[i].plan);
    if (m[i].req) MPIL_Request_free(&m[i].req);
  }
  MPIL_Comm_free(&xcomm);
  MPIL_Info_free(&xinfo);
  halo_matrix_destroy(&A);
  halo_csr_free(&L);
  halo_io_free(rb);
  free(x), free(ghost), free(rcount), free(scount), free(rdis), free(sdis), free(want), free(asked);
  free(sidx), free(src), free(dst), free(src_c), free(src_d), free(dst_c), free(dst_d), free(sendbuf);
  MPI_Finalize();
  return 0;
}
