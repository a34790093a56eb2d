/* Topology of a plan: the node (shared-memory domain) of this rank. */
#ifndef HALO_PLAN_TOPOLOGY_H
#define HALO_PLAN_TOPOLOGY_H

#include "halo_impl.h"

typedef struct {
  MPI_Comm node_comm; /* ranks of this node */
  int node_id;        /* lowest plan rank on this node: the same on all its ranks */
  int node_rank, node_size;
  int n_nodes;
} halo_topology;

/** Collective over comm: split by MPI_COMM_TYPE_SHARED. */
halo_status halo_topology_create(MPI_Comm comm, halo_topology *t);
void halo_topology_destroy(halo_topology *t);

#endif
