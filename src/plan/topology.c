/* Topology from the MPI library's view of shared memory, on the plan's own
 * communicator (never the world communicator, never an environment guess),
 * or virtual nodes of consecutive ranks. */
#include <string.h>

#include "plan/topology.h"

halo_status halo_topology_create(MPI_Comm comm, int ranks_per_node, halo_topology *t) {
  halo_status st = HALO_SUCCESS;
  int rank, leader;
  memset(t, 0, sizeof *t);
  t->node_comm = MPI_COMM_NULL;
  HALO_TRY_MPI(MPI_Comm_rank(comm, &rank));
  if (ranks_per_node > 0) {
    t->virtual_nodes = ranks_per_node;
    HALO_TRY_MPI(MPI_Comm_split(comm, rank / ranks_per_node, rank, &t->node_comm));
  } else {
    HALO_TRY_MPI(
        MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &t->node_comm));
  }
  HALO_TRY_MPI(MPI_Comm_set_errhandler(t->node_comm, MPI_ERRORS_RETURN));
  HALO_TRY_MPI(MPI_Comm_rank(t->node_comm, &t->node_rank));
  HALO_TRY_MPI(MPI_Comm_size(t->node_comm, &t->node_size));
  HALO_TRY_MPI(MPI_Allreduce(&rank, &t->node_id, 1, MPI_INT, MPI_MIN, t->node_comm));
  leader = t->node_rank == 0;
  HALO_TRY_MPI(MPI_Allreduce(&leader, &t->n_nodes, 1, MPI_INT, MPI_SUM, comm));
  HALO_TRY_MPI(MPI_Allreduce(&t->node_size, &t->max_node_size, 1, MPI_INT, MPI_MAX, comm));
  { /* the node's index: the leaders before this node's, in rank order */
    int before = 0;
    HALO_TRY_MPI(MPI_Exscan(&leader, &before, 1, MPI_INT, MPI_SUM, comm));
    if (rank == 0) before = 0; /* MPI_Exscan leaves rank 0's undefined */
    t->node_index = before;
    HALO_TRY_MPI(MPI_Bcast(&t->node_index, 1, MPI_INT, 0, t->node_comm));
  }
  if (ranks_per_node > 0) { /* the machine, for the reach of CUDA IPC in the model */
    MPI_Comm machine = MPI_COMM_NULL;
    HALO_TRY_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &machine));
    st = MPI_Allreduce(&rank, &t->host_id, 1, MPI_INT, MPI_MIN, machine) == MPI_SUCCESS
             ? HALO_SUCCESS
             : HALO_ERROR(HALO_ERR_MPI, "MPI_Allreduce over the machine failed");
    MPI_Comm_free(&machine);
    HALO_TRY(st);
  } else {
    t->host_id = t->node_id;
  }
cleanup:
  if (st != HALO_SUCCESS) halo_topology_destroy(t);
  return st;
}

void halo_topology_destroy(halo_topology *t) {
  if (!t) return;
  if (t->node_comm != MPI_COMM_NULL) MPI_Comm_free(&t->node_comm);
  t->node_comm = MPI_COMM_NULL;
}
