/* The report of `halo spmv` and `halo simulate`: one table and one JSON
 * document, the same for both commands (simulate has no times). */
#ifndef HALO_TOOLS_REPORT_H
#define HALO_TOOLS_REPORT_H

#include <stdio.h>

#include "driver.h"
#include "halo/sim.h"

/** Most phases a row keeps (halo_plan_phase_stats, halo_sim_phase_stats): as
 *  many as a schedule of halo has today; a plan of more is refused with a
 *  message. */
#define REPORT_MAX_PHASES 8

typedef struct {
  halo_strategy strategy;
  halo_transport transport;
  halo_stats stats;
  halo_phase_stats phase[REPORT_MAX_PHASES]; /* each phase (stats.n_phases) */
  int timed;                          /* spmv: times below are measured */
  double t_spmv, t_exchange, t_local; /* per call: max over ranks of the per-rank average
                                         (--rounds: the median over the rounds) */
  double t_spmv_lo, t_spmv_hi;        /* --rounds > 1: the fastest and slowest round's t_spmv */
  double t_plan;                      /* spmv: halo_plan_create's wall time, max over ranks */
  int compared;                       /* spmv: compared with standard */
  double t_unit;                      /* spmv --unit: the exchange of that unit, per call */
  int unit_right;                     /* ... its ghosts bit for bit the entries' values */
  int unit_refused;                   /* ... not run: the plan's transport has no units */
  int identical;                      /* ghosts and y bit for bit those of standard */
  int n_model;                        /* --params: paths modeled */
  int asked_auto;                     /* --strategy auto: the plan chose (describe says how) */
  char describe[1024];                /* halo_plan_describe of an auto plan */
  struct {
    halo_transport transport;
    double seconds;                /* the exchange */
    double phase[REPORT_MAX_PHASES]; /* each phase */
  } model[HALO_N_TRANSPORTS];
} report_row;

typedef struct {
  const char *command; /* "spmv" or "simulate" */
  const input_matrix *M;
  int ranks;
  const input_opts *in;
  const halo_plan_options *opts; /* as asked (ranks_per_node 0: nodes of MPI) */
  halo_memory memory;
  double t_load, t_matrix; /* spmv: set-up times, max over ranks; simulate: t_load */
  double t_patterns;       /* simulate: the patterns of all ranks */
  /* spmv: the reference plan (standard), made first: halo_plan_create's wall time, and its
   * parts that later plans of the matrix reuse (pattern and context: the pattern, the
   * communicator's nodes, device and loaded modules), max over ranks */
  double t_first_plan, t_first_shared;
  int64_t iterations, warmup, rounds;
  int checked;
  double check_err, tol;
  const report_row *rows;
  int n_rows;
  const char *params; /* --params: the machine parameters of the model */
  int gpus_per_node;  /* simulate --gpus-per-node (spmv: 0) */
  int ranks_per_gpu;  /* most ranks sharing a GPU (gpus_per_node > 0) */
  const char *unit;   /* spmv --unit: the unit's name ("double:4"); NULL: none */
  int64_t unit_bytes; /* ... its bytes an entry */
} report;

/* The phases of the row's plan (stats set), or of the simulation's last
 * halo_sim_run, into w->phase. */
halo_status report_row_plan_phases(report_row *w, halo_plan plan);
halo_status report_row_sim_phases(report_row *w, halo_sim sim);

void report_print(const report *r);
void report_json(FILE *f, const report *r);
/* One header line, then a line per strategy row, or per modeled path of a
 * row with --params (docs/driver.md gives the columns). */
void report_csv(FILE *f, const report *r);
/* Rank 0: write --json and --csv; EXIT_ERROR (the reason printed) when a
 * file cannot be written, else EXIT_OK. */
int report_save(const report *r, const output_opts *out);

/* Strategies named by --strategy: a comma-separated list of names and "all"
 * (the four), at most HALO_N_STRATEGIES + 1 entries. 0 on error (reported). */
int parse_strategies(args_t *a, const char *name, halo_strategy *list, int *n);
/* Transports named by --transport: one name or "all" (every device transport). */
int parse_transports(args_t *a, const char *name, int device, halo_transport *list, int *n);

#endif
