/* halo amg --simulate P: the plans of an AMG hierarchy on P ranks, built in
 * one process by the simulator (halo/sim.h) and modeled, level by level.
 *
 * The hierarchy is the one BoomerAMG set up on the ranks of the run. On P
 * ranks, the finest level's rows are split as halo spmv splits them, and
 * each coarser level's rows go where hypre puts them: a coarse row stays on
 * the rank of its fine row (its C-point), coarse rows numbered in the order
 * of their fine rows. So level l+1's rows of rank p are the C-points among
 * level l's rows of rank p. (hypre's coarsening of P ranks would choose its
 * C-points a little differently near the ranks' boundaries: the levels'
 * sizes and patterns are those of the run's hierarchy.) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amg.h"
#include "halo/sim.h"

static const halo_strategy fixed[HALO_N_STRATEGIES] = {HALO_STRATEGY_STANDARD, HALO_STRATEGY_2STEP,
                                                       HALO_STRATEGY_3STEP, HALO_STRATEGY_SPLIT};

/* What one (level, matrix) costs on P ranks. */
typedef struct {
  double t[HALO_N_STRATEGIES]; /* modeled seconds per exchange, each strategy */
  double t_auto;               /* ... of auto's choice */
  halo_plan_options chosen;
  int64_t messages, inter_node_bytes; /* the standard plan's, all phases */
  int64_t ranks_with_rows;
} level_model;

/* Exchanges of (level, matrix) in one iteration of the run's solve. */
static double per_iteration(const amg_result *counts, int level, char matrix) {
  for (int i = 0; i < counts->n_levels; i++)
    if (counts->lt[i].level == level && counts->lt[i].matrix == matrix)
      return (double)counts->lt[i].exchanges / (counts->iterations ? counts->iterations : 1);
  return 0;
}

/* The messages and inter-node bytes of the standard plan of o, all phases. */
static halo_status standard_counts(halo_sim sim, const halo_plan_options *o, level_model *lm) {
  halo_stats s;
  halo_status st = halo_sim_run(sim, o, &s);
  lm->messages = lm->inter_node_bytes = 0;
  for (int p = 0; p < s.n_phases && st == HALO_SUCCESS; p++) {
    halo_phase_stats ps;
    st = halo_sim_phase_stats(sim, p, &ps);
    if (st != HALO_SUCCESS) break;
    lm->messages += ps.messages;
    lm->inter_node_bytes += ps.inter_node_bytes;
  }
  return st;
}

static halo_status model_one(const halo_csr *M, int P, const int64_t *rows, const int64_t *cols,
                             const halo_plan_options *base, int G, const char *params,
                             level_model *lm) {
  halo_sim sim = NULL;
  halo_status st = halo_sim_create(M, P, rows, cols, &sim);
  halo_plan_options o = *base;
  o.memory = G > 0 ? HALO_MEMORY_DEVICE : HALO_MEMORY_HOST;
  o.transport = HALO_TRANSPORT_AUTO;
  for (int s = 0; s < HALO_N_STRATEGIES && st == HALO_SUCCESS; s++) {
    o.strategy = fixed[s];
    st = halo_sim_model(sim, &o, G, params, 0, NULL, &lm->t[s]);
    if (st == HALO_SUCCESS && s == 0) st = standard_counts(sim, &o, lm);
  }
  if (st == HALO_SUCCESS) {
    o.strategy = HALO_STRATEGY_AUTO;
    st = halo_sim_choose(sim, &o, G, params, &lm->chosen, NULL, 0);
  }
  if (st == HALO_SUCCESS) st = halo_sim_model(sim, &lm->chosen, G, params, 0, NULL, &lm->t_auto);
  lm->ranks_with_rows = 0;
  for (int p = 0; p < P; p++) lm->ranks_with_rows += rows[p + 1] > rows[p];
  halo_sim_destroy(&sim);
  return st;
}

static void print_row(int level, char matrix, const halo_csr *M, double xchg,
                      const level_model *lm) {
  const int64_t msgs = lm->messages, inter = lm->inter_node_bytes;
  char choice[96];
  int n = snprintf(choice, sizeof choice, "%s", halo_strategy_name(lm->chosen.strategy));
  if (lm->chosen.memory == HALO_MEMORY_DEVICE)
    n += snprintf(choice + n, sizeof choice - (size_t)n, "/%s",
                  halo_transport_name(lm->chosen.transport));
  if (lm->chosen.strategy == HALO_STRATEGY_SPLIT)
    snprintf(choice + n, sizeof choice - (size_t)n, " cap %lld", (long long)lm->chosen.message_cap);
  int best = 0;
  for (int s = 1; s < HALO_N_STRATEGIES; s++)
    if (lm->t[s] < lm->t[best]) best = s;
  printf("%5d %3c %10lld %12lld %6lld %7.2f %9lld %12lld", level, matrix, (long long)M->n_rows,
         (long long)M->row_ptr[M->n_rows], (long long)lm->ranks_with_rows, xchg, (long long)msgs,
         (long long)inter);
  for (int s = 0; s < HALO_N_STRATEGIES; s++) printf(" %9.2f", 1e6 * lm->t[s]);
  printf(" %9.2f  %-8s %s\n", 1e6 * lm->t_auto, halo_strategy_name(fixed[best]), choice);
}

static halo_status simulate_root(const amg_opts *o, const amg_problem *pb, const amg_hierarchy *H,
                                 int P, const amg_result *counts) {
  const int K = o->opts.ranks_per_node, G = o->gpus_per_node, L = H->n;
  halo_plan_options resolved;
  halo_status st = halo_plan_options_resolve(&o->opts, &resolved);
  if (st != HALO_SUCCESS) return st;
  const char *params = resolved.params ? resolved.params : "lassen"; /* a simulated machine */
  int64_t **rows = calloc((size_t)(L ? L : 1), sizeof *rows);
  if (!rows) return HALO_ERR_OUT_OF_MEMORY;
  for (int l = 0; l < L && st == HALO_SUCCESS; l++)
    if (!(rows[l] = malloc((size_t)(P + 1) * sizeof *rows[l]))) st = HALO_ERR_OUT_OF_MEMORY;
  if (st == HALO_SUCCESS && L > 0)
    st = halo_partition_compute(o->in.partition, H->A[0].n_rows, H->A[0].row_ptr, P, NULL, rows[0]);
  /* level l+1's rows of rank p: the C-points among level l's rows of rank p */
  for (int l = 0; l + 1 < L && st == HALO_SUCCESS; l++) {
    int64_t c = 0, i = 0;
    rows[l + 1][0] = 0;
    for (int p = 0; p < P; p++) {
      for (; i < rows[l][p + 1]; i++) c += H->coarse[l][i];
      rows[l + 1][p + 1] = c;
    }
    if (c != H->A[l + 1].n_rows) {
      amg_error(0,
                "level %d has %lld C-points but level %d %lld rows: the coarse grids are not "
                "the C-points of the level above (aggressive coarsening?); --simulate cannot "
                "place them",
                l, (long long)c, l + 1, (long long)H->A[l + 1].n_rows);
      st = HALO_ERR_UNSUPPORTED;
    }
  }
  halo_plan_options base = o->opts;
  base.ranks_per_node = K;
  const int nodes = (P + K - 1) / K;
  if (st == HALO_SUCCESS) {
    printf("\nhalo amg --simulate: the hierarchy of %s (%d levels, set up on %d ranks) on %d "
           "ranks, %d node(s) of %d, %s plans, parameters %s\n",
           pb->name, L, pb->size, P, nodes, K, G > 0 ? "device" : "host", params);
    if (G > 0)
      printf("  %d GPUs per node (%d rank(s) per GPU); the four strategies on the default path "
             "(nccl with one rank per GPU, else ipc), auto over every path\n",
             G, (K + G - 1) / G);
    printf("  coarse rows on the rank of their fine row; xchg/it: exchanges per iteration of "
           "the run's solve; msgs, inter-B: the standard plan's; times: modeled us per "
           "exchange\n");
    printf("%5s %3s %10s %12s %6s %7s %9s %12s %9s %9s %9s %9s %9s  %-8s %s\n", "level", "mat",
           "rows", "nonzeros", "ranks", "xchg/it", "msgs", "inter-B", "standard", "2step", "3step",
           "split", "auto", "best", "auto's choice");
  }
  double total[HALO_N_STRATEGIES] = {0}, total_auto = 0;
  for (int l = 0; l < L && st == HALO_SUCCESS; l++)
    for (int m = 0; m < 2 && st == HALO_SUCCESS; m++) {
      if (m == 1 && l + 1 >= L) break;
      const halo_csr *M = m ? &H->P[l] : &H->A[l];
      const char kind = m ? 'P' : 'A';
      level_model lm;
      memset(&lm, 0, sizeof lm);
      st = model_one(M, P, rows[l], m ? rows[l + 1] : rows[l], &base, G, params, &lm);
      if (st != HALO_SUCCESS) break;
      /* P's reverse exchange (the restriction) is modeled as its forward one */
      const double x = per_iteration(counts, l, kind);
      for (int s = 0; s < HALO_N_STRATEGIES; s++) total[s] += x * lm.t[s];
      total_auto += x * lm.t_auto;
      print_row(l, kind, M, x, &lm);
    }
  if (st == HALO_SUCCESS) {
    int best = 0;
    for (int s = 1; s < HALO_N_STRATEGIES; s++)
      if (total[s] < total[best]) best = s;
    printf("per iteration (modeled us, each level's exchanges times its time):");
    for (int s = 0; s < HALO_N_STRATEGIES; s++)
      printf(" %s %.1f,", halo_strategy_name(fixed[s]), 1e6 * total[s]);
    printf(" auto (per level) %.1f = %.3f x the best single strategy (%s)\n", 1e6 * total_auto,
           total[best] > 0 ? total_auto / total[best] : 1.0, halo_strategy_name(fixed[best]));
    fflush(stdout);
  }
  for (int l = 0; l < L; l++) free(rows[l]);
  free(rows);
  return st;
}

halo_status amg_simulate(MPI_Comm comm, const amg_opts *o, const amg_problem *pb,
                         const amg_hierarchy *H, int P, const amg_result *counts) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  int st = HALO_SUCCESS;
  if (rank == 0) st = simulate_root(o, pb, H, P, counts);
  MPI_Bcast(&st, 1, MPI_INT, 0, comm);
  return (halo_status)st;
}
