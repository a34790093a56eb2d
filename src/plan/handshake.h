/* The schedules of all ranks of a plan, checked against each other, and
 * their statistics over all ranks. Collective over the plan's
 * communicator. */
#ifndef HALO_PLAN_HANDSHAKE_H
#define HALO_PLAN_HANDSHAKE_H

#include "plan/schedule.h"
#include "plan/topology.h"

/**
 * Every receiver tells each of its senders, per message, the phase, its
 * node, the count it expects and the message's ordinal among those between
 * the two ranks (a sparse data exchange), so that a sender whose schedule
 * disagrees with its peer's finds out instead of waiting. The sender checks
 * every message (and that a node phase stays on one node) and learns the
 * node of each of its peers: node_of_send[k][i] for send i of phase k
 * (allocated here; the caller frees). HALO_ERR_INTERNAL naming the message.
 */
halo_status halo_schedule_handshake(MPI_Comm comm, const halo_topology *t, const halo_schedule *s,
                                    int *node_of_send[HALO_MAX_PHASES]);

/** The statistics of the schedules of all ranks (what halo_plan_stats and
 *  halo_plan_phase_stats report; remove_duplicates, the transport and the
 *  set-up times are the caller's to fill). */
halo_status halo_schedule_stats(MPI_Comm comm, const halo_topology *t, const halo_schedule *s,
                                int *node_of_send[HALO_MAX_PHASES], halo_stats_full *stats);

#endif
