/* Private part of the simulator: every rank's schedule, for tests. */
#ifndef HALO_PLAN_SIMULATE_H
#define HALO_PLAN_SIMULATE_H

#include "halo/sim.h"
#include "plan/schedule.h"

struct halo_sim_s {
  int P;
  int64_t *col_ranges; /* P+1 */
  int64_t *row_ranges; /* P+1 */
  int64_t **ghost_ids; /* per rank */
  halo_pattern *pat;   /* per rank */
};

/** The schedules of all P ranks (sched[r], to free with halo_schedule_free). */
halo_status halo_sim_schedules(halo_sim sim, const halo_plan_options *opts, halo_schedule *sched);

#endif
