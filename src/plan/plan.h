/* Private layout of a plan. */
#ifndef HALO_PLAN_PLAN_H
#define HALO_PLAN_PLAN_H

#include "exec/exec.h"
#include "plan/choose.h"
#include "plan/matrix.h"

struct halo_plan_s {
  halo_matrix A; /* a reference */
  MPI_Comm comm; /* duplicate of the matrix's communicator */
  halo_topology topo;
  halo_pattern pattern; /* during set-up only */
  halo_schedule sched;
  halo_exec exec;
  halo_stats stats;
  int remove_duplicates; /* the option the plan was made with */
  halo_memory memory;    /* where x, y and the ghosts live */
  halo_transport transport;
  halo_gpu *gpu;      /* device plans: device, streams, NCCL */
  halo_gpu_spmv *gsp; /* device plans: the cuSPARSE product */
  int in_flight;      /* an exchange was begun and not ended */
  double *user_ghost; /* where the exchange in flight delivers, NULL: exec.ghost */
  halo_choice choice; /* strategy AUTO: the candidates and the one chosen */
};

#endif
