/* Topology of a plan: the node (shared-memory domain, or virtual node) of
 * this rank. A node is named by its lowest plan rank, its leader. */
#ifndef HALO_PLAN_TOPOLOGY_H
#define HALO_PLAN_TOPOLOGY_H

#include "halo_impl.h"

typedef struct {
  MPI_Comm node_comm; /* ranks of this node, ordered by plan rank */
  int node_id;        /* lowest plan rank on this node (its leader): the same on all its ranks */
  int node_index;     /* the node's place among the nodes, 0 .. n_nodes-1, by their leaders */
  int host_id;        /* lowest plan rank of this shared-memory machine (MPI's node) */
  int node_rank, node_size;
  int n_nodes;
  int max_node_size; /* most ranks on one node */
  int virtual_nodes; /* ranks_per_node of virtual nodes, 0 for nodes of MPI */
} halo_topology;

/**
 * Collective over comm. ranks_per_node = 0: nodes of MPI_COMM_TYPE_SHARED
 * (ranks of a node need not be consecutive, nodes may differ in size);
 * K > 0: virtual nodes of K consecutive ranks, the last possibly smaller.
 */
halo_status halo_topology_create(MPI_Comm comm, int ranks_per_node, halo_topology *t);
void halo_topology_destroy(halo_topology *t);

/** The node id of plan rank r under virtual nodes of K ranks. */
static inline int halo_virtual_node(int r, int K) { return (r / K) * K; }

#endif
