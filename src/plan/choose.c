/* The performance model of a real plan; see choose.h. */
#include <stdlib.h>
#include <string.h>

#include "plan/choose.h"

halo_status halo_choose_params(const char *name_or_path, halo_params *p) {
  const char *name = name_or_path;
  if (!name || !*name) name = getenv("HALO_PARAMS");
  if (!name || !*name) name = "lassen";
  return halo_params_load(name, p);
}

halo_status halo_choose_ranks(MPI_Comm comm, const halo_topology *t, const halo_params *p,
                              int device, int helper, int ranks_per_gpu, halo_transport tr,
                              halo_model_rank *ranks) {
  halo_status st = HALO_SUCCESS;
  MPI_Comm shared = MPI_COMM_NULL;
  int rank, size, host;
  HALO_TRY_MPI(MPI_Comm_rank(comm, &rank));
  HALO_TRY_MPI(MPI_Comm_size(comm, &size));
  HALO_TRY_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared));
  HALO_TRY_MPI(MPI_Allreduce(&rank, &host, 1, MPI_INT, MPI_MIN, shared));
  {
    halo_model_rank me;
    me.host = host;
    me.node = t->node_id;
    me.socket = (int)((int64_t)t->node_rank * p->sockets_per_node / t->node_size);
    /* a helper keeps device buffers only under NCCL (the CUDA executor) */
    me.on_gpu = device && !(helper && tr != HALO_TRANSPORT_NCCL);
    me.ranks_per_gpu = device && ranks_per_gpu > 1 ? ranks_per_gpu : 1;
    int mine[5] = {me.host, me.node, me.socket, me.on_gpu, me.ranks_per_gpu};
    int *all = NULL;
    HALO_TRY(HALO_ALLOC(all, 5 * (int64_t)size));
    st = MPI_Allgather(mine, 5, MPI_INT, all, 5, MPI_INT, comm) == MPI_SUCCESS
             ? HALO_SUCCESS
             : HALO_ERROR(HALO_ERR_MPI, "MPI_Allgather of the model's ranks failed");
    for (int r = 0; r < size && st == HALO_SUCCESS; r++)
      ranks[r] = (halo_model_rank){all[5 * r], all[5 * r + 1], all[5 * r + 2], all[5 * r + 3],
                                   all[5 * r + 4]};
    halo_free(all);
  }
cleanup:
  if (shared != MPI_COMM_NULL) MPI_Comm_free(&shared);
  return st;
}

halo_status halo_choose_model(MPI_Comm comm, const halo_topology *t, const halo_params *p,
                              halo_transport tr, const halo_schedule *s,
                              const halo_model_rank *ranks, double *phase, double *total_p) {
  int64_t inter[HALO_MAX_PHASES] = {0}, node_inter[HALO_MAX_PHASES];
  double mine[HALO_MAX_PHASES] = {0};
  const int my_node = ranks[s->rank].node;
  for (int k = 0; k < s->n_phases; k++)
    for (int i = 0; i < s->phase[k].n_send; i++) {
      const halo_msg *m = &s->phase[k].send[i];
      if (m->peer != s->rank && ranks[m->peer].node != my_node)
        inter[k] += m->count * (int64_t)sizeof(double);
    }
  HALO_MPI(MPI_Allreduce(inter, node_inter, HALO_MAX_PHASES, MPI_INT64_T, MPI_SUM, t->node_comm));
  for (int k = 0; k < s->n_phases; k++)
    mine[k] = halo_model_phase(p, tr, s, k, ranks, node_inter[k]);
  HALO_MPI(MPI_Allreduce(mine, phase, HALO_MAX_PHASES, MPI_DOUBLE, MPI_MAX, comm));
  double total = 0.0;
  for (int k = 0; k < HALO_MAX_PHASES; k++) total += phase[k];
  *total_p = total;
  return HALO_SUCCESS;
}
