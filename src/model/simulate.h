/* Private part of the simulator: every rank's schedule, for tests. */
#ifndef HALO_MODEL_SIMULATE_H
#define HALO_MODEL_SIMULATE_H

#include "halo/sim.h"
#include "plan/node.h"
#include "model/params.h"
#include "plan/schedule.h"

/** Most modeled paths kept with one plan: host, or staged, ipc, nccl and
 *  the one asked for (mpi-device). */
#define HALO_SIM_MAX_MODELS 8

/** A plan's modeled time on one path, with what it depends on beyond the plan. */
typedef struct {
  halo_params prm;
  int gpus_per_node, device;
  halo_transport transport; /* resolved */
  double phase[HALO_MAX_PHASES];
  double seconds;
} halo_sim_model_result;

/** A plan the simulation has built: its options, statistics and models, so
 *  that halo_sim_run, halo_sim_model and halo_sim_choose build each plan
 *  once. */
typedef struct {
  halo_strategy strategy;
  int ranks_per_node, remove_duplicates;
  int64_t message_cap;
  halo_stats_full stats; /* as halo_sim_run returns them, less the transports */
  int n_models;
  halo_sim_model_result model[HALO_SIM_MAX_MODELS];
} halo_sim_result;

/** The nodes' links for one ranks_per_node and duplicate removal: what every
 *  node-aware plan of these options starts from, kept for the next one (its
 *  pieces are decided again by each plan). */
typedef struct {
  int ranks_per_node, remove_duplicates;
  int *ranks;                   /* P: r at r (the ranks of each node, in order) */
  int **recv_node, **send_node; /* per rank: node of each receive and send peer */
  halo_node_links *L;           /* per node */
} halo_sim_links;

struct halo_sim_s {
  int P;
  int64_t *col_ranges; /* P+1 */
  int64_t *row_ranges; /* P+1 */
  int64_t **ghost_ids; /* per rank */
  halo_pattern *pat;   /* per rank */
  int n_results;       /* the plans built so far */
  halo_sim_result *results;
  halo_sim_links *links; /* of the last node-aware plan, or NULL */
  int have_last;         /* a halo_sim_run succeeded: */
  halo_stats_full last;  /* ... its statistics (halo_sim_phase_stats) */
};

/** The schedules of all P ranks (sched[r], to free with halo_schedule_free). */
halo_status halo_sim_schedules(halo_sim sim, const halo_plan_options *opts, halo_schedule *sched);

#endif
