/* Distributed set-up of the node-aware strategies (see nodeaware.c). */
#ifndef HALO_PLAN_NODEAWARE_H
#define HALO_PLAN_NODEAWARE_H

#include "plan/nodebuild.h"
#include "plan/registry.h"
#include "plan/topology.h"

/**
 * The schedule of this rank under a node-aware strategy (collective over
 * comm): gathers the node's patterns on its leader, exchanges decisions
 * between leaders, builds and scatters the node's schedules. o->strategy
 * must be node-aware (halo_strategy_node_aware).
 */
halo_status halo_schedule_build_nodeaware(MPI_Comm comm, const halo_topology *t,
                                          const halo_pattern *p, const int64_t *ghost_ids,
                                          const int64_t *col_ranges, const halo_plan_options *o,
                                          halo_schedule *s);

/** Free a node input whose arrays the library allocated. */
void halo_node_input_free(halo_node_input *in);

#endif
