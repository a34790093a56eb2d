/* A strategy as a descriptor: what the node builder (nodebuild.c) and the
 * set-ups (nodeaware.c, simulate.c) need to know of it, so that none of them
 * tests which strategy it is. Each strategy file (standard.c, 2step.c,
 * 3step.c, split.c) defines one `const halo_strategy_desc` with designated
 * initializers and keeps its decisions `static`; the registry (registry.c)
 * lists them. A new strategy is a new file and one line in the registry.
 *
 * Layers, each including only those below it:
 *   node.h       links, dealing, pairing, pieces (shared helpers)
 *   strategy.h   this descriptor; the strategy files fill it
 *   registry.h   halo_strategy -> descriptor
 *   nodebuild.h  the decisions and the schedules of a node, from a descriptor
 */
#ifndef HALO_PLAN_STRATEGY_H
#define HALO_PLAN_STRATEGY_H

#include "plan/node.h"

/** Decision 1, on the receiving node: split every incoming link of L into
 *  pieces and name the receiver of each (message_cap in bytes; a decision
 *  that uses a cap records it in L->message_cap_used). */
typedef halo_status (*halo_node_decide_receive_fn)(const halo_node_input *in, halo_node_links *L,
                                                   int64_t message_cap);

/** Decision 2, on the sending node, once every outgoing link has its pieces
 *  and receivers from the receiving node: name the sender of each piece. */
typedef halo_status (*halo_node_decide_send_fn)(const halo_node_input *in, halo_node_links *L);

/**
 * A strategy. Phases are numbered from 0; a role that a strategy does not
 * have is -1. The node builder fills the phases so:
 *
 *   phase_direct        on-node messages, owner to reader, as Standard sends
 *                       them (they merge with the gather's messages between
 *                       the same ranks when the two phases are one);
 *   phase_gather        owners give the senders of pieces the values they do
 *                       not own (node scope); -1: every piece is sent by the
 *                       rank that owns its values (2-Step), senders gather
 *                       nothing;
 *   phase_global        the pieces cross the network (the one global phase);
 *   phase_redistribute  receivers of pieces give every rank of their node
 *                       the values it needs (node scope).
 *
 * Every phase but phase_global has node scope. Standard has no decisions
 * (decide_receive and decide_send NULL): halo_schedule_build_standard builds
 * its one global phase from a rank's pattern alone.
 */
typedef struct {
  const char *name;       /* as halo_strategy_name() gives it */
  halo_strategy strategy; /* the value that selects it */
  int n_phases;
  int phase_direct, phase_gather, phase_global, phase_redistribute;
  halo_node_decide_receive_fn decide_receive; /* NULL: not node-aware */
  halo_node_decide_send_fn decide_send;
} halo_strategy_desc;

/** Whether the senders of pieces gather values that other ranks of their
 *  node own (3-Step, Split), in phase_gather. */
static inline int halo_strategy_desc_gathers(const halo_strategy_desc *d) {
  return d->phase_gather >= 0;
}

/* ---- Standard's builder (standard.c) --------------------------------------- */

/** Standard exchange: one global phase, the pattern's messages as they are;
 *  receives land in x_ghost in order. Pure function of the pattern. */
halo_status halo_schedule_build_standard(const halo_pattern *p, halo_schedule *s);

#endif
