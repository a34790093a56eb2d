/* What strategy AUTO's choice adds to a program, in SpMVs of the plan it
 * chooses (issue 42's targets): on a fresh communicator each time, the time
 * of making a plan and running U SpMVs with it (each completed on the device
 * before the next, as a solver's iteration waits for its product), for
 *   direct   the plan AUTO chose, made with its strategy, transport and
 *            message_cap named;
 *   auto     strategy AUTO with its defaults (the first plan of a
 *            communicator: no choice kept; its trial, if any, on these calls);
 *   wisdom   strategy AUTO with a wisdom file that holds the key's choice;
 *   plan     strategy AUTO with its trial at plan time (auto.trial = plan),
 *            for comparison;
 * alternated, R repetitions, the most of any rank per run, medians. The
 * extra of each is (its median - direct's) / direct's median time of one SpMV
 * (measured separately, the median of 5 means of 20 calls).
 *
 * With --later 1, every plan is a later plan of one communicator and matrix
 * (its context, device and uploaded matrix warm, as a program's later plans;
 * each with other expected uses, so that the communicator kept no choice for
 * its key): what choosing adds without the noise of making a context.
 *
 * usage: bench_auto_cost (--gen SPEC | --matrix FILE) [--memory host|device]
 *          [--ranks-per-node K] [--uses U] [--reps R] [--wisdom FILE] [--later 0|1] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../tools/devmem.h"
#define BENCH_NAME "bench_auto_cost"
#include "bench_util.h"

typedef struct {
  int64_t b, e;
  halo_csr rows;
  double *x, *y; /* in the plan's memory */
  int device;
} problem;

/* The matrix of --later: made once, its plans later plans of one communicator. */
static halo_matrix later_A;
static int runs; /* runs so far: a later plan's key differs by its expected uses */

/* On a fresh communicator (or, with --later, on the one of later_A): the matrix,
 * then (timed) the plan with o and its `uses` SpMVs; the plan's description
 * into what. Seconds, the most of any rank. */
static double run(const problem *pb, const halo_plan_options *o_in, int uses, char *what,
                  size_t len, halo_candidate *chosen) {
  MPI_Comm comm = MPI_COMM_NULL;
  halo_matrix A = later_A;
  halo_plan plan;
  halo_plan_options o = *o_in;
  if (!A) {
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    CK(halo_matrix_create_csr(comm, pb->b, pb->e, pb->b, pb->e, pb->rows.row_ptr, pb->rows.col_ids,
                              pb->rows.values, HALO_MEMORY_HOST, &A));
  } else { /* a key the communicator has not kept (the wisdom file's key has no uses; in
            * one power of two, they do not make it choose again) */
    o.expected_uses += runs;
  }
  runs++;
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  CK(halo_plan_create(A, &o, &plan));
  for (int i = 0; i < uses; i++) {
    CK(halo_spmv(plan, 1.0, pb->x, 0.0, pb->y));
    CK(halo_plan_synchronize(plan));
  }
  const double t = most(MPI_COMM_WORLD, MPI_Wtime() - t0);
  if (what) CK(halo_plan_describe(plan, what, len));
  if (chosen) {
    halo_candidate c[64];
    int n = 0, best = -1;
    CK(halo_plan_get_candidates(plan, 64, c, &n, &best));
    if (best >= 0) *chosen = c[best];
  }
  halo_plan_destroy(&plan);
  if (A != later_A) {
    halo_matrix_destroy(&A);
    MPI_Comm_free(&comm);
  }
  return t;
}

/* One SpMV of the plan made with o: the median of 5 means of 20 calls. */
static double spmv_time(const problem *pb, const halo_plan_options *o) {
  MPI_Comm comm;
  halo_matrix A;
  halo_plan plan;
  double reps[5];
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  CK(halo_matrix_create_csr(comm, pb->b, pb->e, pb->b, pb->e, pb->rows.row_ptr, pb->rows.col_ids,
                            pb->rows.values, HALO_MEMORY_HOST, &A));
  CK(halo_plan_create(A, o, &plan));
  for (int i = 0; i < 10; i++) CK(halo_spmv(plan, 1.0, pb->x, 0.0, pb->y));
  CK(halo_plan_synchronize(plan));
  for (int r = 0; r < 5; r++) {
    MPI_Barrier(comm);
    const double t0 = MPI_Wtime();
    for (int i = 0; i < 20; i++) {
      CK(halo_spmv(plan, 1.0, pb->x, 0.0, pb->y));
      CK(halo_plan_synchronize(plan));
    }
    reps[r] = most(comm, (MPI_Wtime() - t0) / 20);
  }
  halo_plan_destroy(&plan);
  halo_matrix_destroy(&A);
  MPI_Comm_free(&comm);
  return median(reps, 5);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  const char *gen = NULL, *file = NULL, *wisdom = "bench_auto_cost.wisdom";
  halo_plan_options base = halo_plan_options_default();
  int uses = 100, reps = 7, later = 0, rank, P;
  for (int i = 1; i + 1 < argc; i += 2) {
    const char *a = argv[i], *v = argv[i + 1];
    if (!strcmp(a, "--gen"))
      gen = v;
    else if (!strcmp(a, "--matrix"))
      file = v;
    else if (!strcmp(a, "--memory"))
      CK(halo_memory_from_name(v, &base.memory));
    else if (!strcmp(a, "--ranks-per-node"))
      base.ranks_per_node = atoi(v);
    else if (!strcmp(a, "--uses"))
      uses = atoi(v);
    else if (!strcmp(a, "--reps"))
      reps = atoi(v);
    else if (!strcmp(a, "--wisdom"))
      wisdom = v;
    else if (!strcmp(a, "--later"))
      later = atoi(v);
    else {
      fprintf(stderr, "bench_auto_cost: unknown option %s\n", a);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  if (!gen == !file || uses < 1 || reps < 1 || reps > 99) {
    fprintf(
        stderr,
        "bench_auto_cost: give one of --gen SPEC or --matrix FILE; uses >= 1; 1 <= reps < 100\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  problem pb;
  int64_t *rb;
  bench_rows(gen, file, &rb, &pb.rows);
  pb.b = rb[rank], pb.e = rb[rank + 1];
  const int64_t n = pb.e - pb.b;
  pb.device = base.memory == HALO_MEMORY_DEVICE;
  double *hx = malloc((size_t)(n + 1) * sizeof *hx);
  for (int64_t i = 0; i < n; i++) hx[i] = 1.0 / (double)(pb.b + i + 1);
  if (pb.device) { /* a first device plan sets this rank's GPU: vectors made before it would
                     all be on the current device, read by the other ranks' GPUs over NVLink */
    halo_matrix A0;
    halo_plan p0;
    halo_plan_options o0 = base;
    o0.strategy = HALO_STRATEGY_STANDARD;
    o0.transport = HALO_TRANSPORT_STAGED;
    CK(halo_matrix_create_csr(MPI_COMM_WORLD, pb.b, pb.e, pb.b, pb.e, pb.rows.row_ptr,
                              pb.rows.col_ids, pb.rows.values, HALO_MEMORY_HOST, &A0));
    CK(halo_plan_create(A0, &o0, &p0));
    halo_plan_destroy(&p0);
    halo_matrix_destroy(&A0);
  }
  pb.x = buf_alloc(pb.device, (size_t)(n + 1) * sizeof *pb.x);
  pb.y = buf_alloc(pb.device, (size_t)(n + 1) * sizeof *pb.y);
  if (!pb.x || !pb.y || buf_from_host(pb.device, pb.x, hx, (size_t)n * sizeof *pb.x)) {
    fprintf(stderr, "bench_auto_cost: no memory for the vectors\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  base.expected_uses = uses;
  if (later)
    CK(halo_matrix_create_csr(MPI_COMM_WORLD, pb.b, pb.e, pb.b, pb.e, pb.rows.row_ptr,
                              pb.rows.col_ids, pb.rows.values, HALO_MEMORY_HOST, &later_A));
  halo_plan_options o_auto = base, o_wis = base, o_plan = base, o_direct = base;
  o_wis.wisdom = wisdom;
  o_plan.settings = "auto.trial=plan";
  if (rank == 0) unlink(wisdom);
  MPI_Barrier(MPI_COMM_WORLD);
  /* the first runs: warm the process (libraries, the module), choose, fill the wisdom file */
  char what[2048], what_wis[2048], what_plan[2048];
  halo_candidate chosen;
  memset(&chosen, 0, sizeof chosen);
  (void)run(&pb, &o_auto, uses, NULL, 0, NULL);
  (void)run(&pb, &o_wis, uses, what, sizeof what, &chosen);
  o_direct.strategy = chosen.strategy;
  o_direct.transport = chosen.transport;
  o_direct.message_cap = chosen.message_cap;
  const double t_spmv = spmv_time(&pb, &o_direct);
  double t[4][100];
  const char *name[4] = {"direct", "auto", "wisdom", "plan"};
  const halo_plan_options *opt[4] = {&o_direct, &o_auto, &o_wis, &o_plan};
  for (int r = 0; r < reps; r++)
    for (int j = 0; j < 4; j++) { /* rotated: each variant in each place */
      const int v = (j + r) % 4;
      t[v][r] = run(&pb, opt[v], uses,
                    v == 2   ? what_wis
                    : v == 3 ? what_plan
                             : NULL,
                    sizeof what_wis, NULL);
    }
  if (rank == 0) {
    double med[4];
    for (int v = 0; v < 4; v++) med[v] = median(t[v], reps);
    printf("matrix %s, %d ranks, ranks_per_node %d, %s memory, %d uses, %d reps, %s\n",
           gen ? gen : file, P, base.ranks_per_node, pb.device ? "device" : "host", uses, reps,
           later ? "later plans of one communicator" : "first plans of fresh communicators");
    printf("choice: %.1500s\n", what);
    printf("with wisdom: %.300s\n", what_wis);
    printf("trial at plan time: %.1500s\n", what_plan);
    printf("one SpMV of the chosen plan: %.3g s\n", t_spmv);
    printf("| variant | plan + %d SpMVs (s, median) | extra over direct (s) | extra in SpMVs |\n",
           uses);
    printf("|---|---|---|---|\n");
    for (int v = 0; v < 4; v++)
      printf("| %s | %.4g | %.3g | %.1f |\n", name[v], med[v], med[v] - med[0],
             (med[v] - med[0]) / t_spmv);
  }
  halo_matrix_destroy(&later_A);
  buf_free(pb.device, pb.x);
  buf_free(pb.device, pb.y);
  free(hx);
  halo_csr_free(&pb.rows);
  halo_io_free(rb);
  if (rank == 0) unlink(wisdom);
  MPI_Finalize();
  return 0;
}
