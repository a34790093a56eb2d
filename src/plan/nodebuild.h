/* The node-aware part of a plan, from a strategy's descriptor: its two
 * decisions, checked, and the schedules of all ranks of a node. Pure
 * functions, no MPI: the distributed set-up (nodeaware.c) gathers a node's
 * input on its leader and carries the decisions between nodes; the
 * simulator (simulate.c) calls the same functions for every node in one
 * process. */
#ifndef HALO_PLAN_NODEBUILD_H
#define HALO_PLAN_NODEBUILD_H

#include "plan/strategy.h"

/** Decision 1, on the receiving node: pieces of every incoming link and
 *  their receivers, by d->decide_receive. message_cap in bytes (Split).
 *  HALO_ERR_INTERNAL for a strategy without decisions (Standard). */
halo_status halo_node_decide_receive(const halo_strategy_desc *d, const halo_node_input *in,
                                     halo_node_links *L, int64_t message_cap);

/** Decision 2, on the sending node, once every outgoing link has its pieces
 *  and receivers from the receiving node: the sender of each piece, by
 *  d->decide_send. Checks first that the pieces cover each link. */
halo_status halo_node_decide_send(const halo_strategy_desc *d, const halo_node_input *in,
                                  halo_node_links *L);

/** The schedules of all ranks of the node (sched[i] for in->ranks[i]), in
 *  the phases d lays out, once both decisions are known on every link. */
halo_status halo_node_build_schedules(const halo_strategy_desc *d, const halo_node_input *in,
                                      const halo_node_links *L, halo_schedule *sched);

#endif
