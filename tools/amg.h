/* halo amg: what the command (cmd_amg.c), the hypre problem and solve
 * (amg_solve.c) and the simulated hierarchy (amg_sim.c) share. */
#ifndef HALO_TOOLS_AMG_H
#define HALO_TOOLS_AMG_H

#include "driver.h"
#include "halo/hypre.h"
#include "report.h"

#define AMG_MAX_SIM    8
#define AMG_MAX_LEVELS 96 /* (level, matrix) pairs of a solve */
#define AMG_MAX_REPEAT 1000

typedef struct {
  input_opts in;
  halo_plan_options opts; /* halo's plans (strategy set per run) */
  halo_strategy strategies[HALO_N_STRATEGIES + 1];
  int n_strategies;
  int gmres; /* --solver gmres */
  double tol;
  int maxit;
  int coarsen, interp, relax, pmax; /* relax: 0 l1-gs, 1 hgs, 2 l1-jacobi */
  double theta;
  int repeat;
  int sim_ranks[AMG_MAX_SIM], n_sim;
  int gpus_per_node;
  int view, quiet;
} amg_opts;

void amg_opts_default(amg_opts *o);

/** "halo amg: MSG" on rank 0 (driver_error), and remembered: the command
 *  prints no second message for the failure. */
void amg_error(int rank, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/** Whether amg_error has printed. */
int amg_error_printed(void);

/** One (level, matrix) of a solve's exchanges. */
typedef struct {
  int level;
  char matrix;
  int64_t rows, nonzeros, ranks_with_rows;
  int64_t exchanges; /* forward and reverse, either road */
  double seconds;    /* in the exchange calls, the most of any rank */
  int planned;       /* halo's plan: */
  halo_strategy strategy;
  int64_t messages;
  double modeled;
} amg_level_time;

/** One set-up and solve. */
typedef struct {
  int iterations;
  double residual;
  double setup_seconds, solve_seconds; /* the most of any rank */
  int identical;                       /* x bit for bit the reference's, all ranks */
  int64_t through_halo;                /* exchanges of the solve through halo */
  double plan_seconds;                 /* halo's plans made, summed over packages */
  amg_level_time lt[AMG_MAX_LEVELS];
  int n_levels;
} amg_result;

/** The distributed problem: A as a hypre IJ matrix, b = A x*, x. */
typedef struct {
  MPI_Comm comm;
  int rank, size;
  char name[256];
  char amg_desc[128];
  int64_t n_rows, nnz;
  int64_t n_local;
  double *x, *x_ref; /* this rank's solution, and the reference (hypre's) */
  void *ij_A, *ij_b, *ij_x;
} amg_problem;

/** A hierarchy's levels, whole on rank 0: level l's matrix A[l], its
 *  interpolation P[l] (l + 1 < n), and which of its rows are coarse. */
typedef struct {
  int n;
  halo_csr *A, *P;
  unsigned char **coarse; /* coarse[l][i]: row i of level l is a C-point */
} amg_hierarchy;

/** Read or generate the matrix, distribute it, make the hypre objects.
 *  Collective. */
halo_status amg_problem_create(MPI_Comm comm, const amg_opts *o, amg_problem *pb);
void amg_problem_free(amg_problem *pb);

/** A BoomerAMG set-up and Krylov solve from x = 0 with the exchange of now;
 *  H not NULL: the hierarchy gathered on rank 0 too. Collective. */
halo_status amg_solve(amg_problem *pb, const amg_opts *o, amg_result *r, amg_hierarchy *H);
void amg_hierarchy_free(amg_hierarchy *H);

/** --simulate P: the hierarchy's plans on P ranks, modeled, a table on
 *  rank 0; counts: the exchanges of a solve through the levels (run).
 *  Collective (the work on rank 0). */
halo_status amg_simulate(MPI_Comm comm, const amg_opts *o, const amg_problem *pb,
                         const amg_hierarchy *H, int P, const amg_result *counts);

#endif
