/* The schedule: the one intermediate form every strategy compiles to, and
 * every executor interprets. Pure data; nothing here calls MPI.
 *
 * A schedule of one rank is a list of phases. A phase has a scope (global or
 * node-local), sends and receives. Each send is a message (peer, offset,
 * count) of a send buffer that is packed, value i from source index pack[i];
 * each receive is a message of a receive buffer that is unpacked, value i to
 * destination index unpack[i].
 *
 *   source space:      [0, n_local)  x_local   | [n_local, n_local+n_work)  work
 *   destination space: [0, n_ghost)  x_ghost   | [n_ghost, n_ghost+n_work)  work
 *
 * work holds the values that a rank forwards (node-aware strategies): written
 * by the receives of one phase, read by the sends of a later one. A message
 * whose peer is the rank itself is a copy, not a transfer. In a schedule
 * that writes (add = 0, every builder's), every ghost is written exactly
 * once.
 *
 * A reversed schedule (halo_schedule_reverse, add = 1) moves the ghosts'
 * contributions back to their owners and adds them (PetscSF Reduce with sum,
 * the transpose product): its source space is the forward destination space
 * (the contributions, then work) and its destination space the forward
 * source space (the owner's entries, then work). It is not reversed again
 * (an error): the original is the forward schedule. Its summation order is
 * part of the contract, so that a result is the same to the bit on every
 * run:
 *
 *   - the work buffer starts at zero; the destinations [0, n_ghost) hold the
 *     owner's values before the exchange;
 *   - phases run in order; a phase's sends are packed before any of its
 *     receives is applied (a phase never reads what it adds);
 *   - once all receives of a phase are in, their values are added into their
 *     destinations in the order of the phase's receive list: message by
 *     message, and within a message value by value (unpack order); copies to
 *     itself are messages of that list like any other.
 *
 * So an owner's entry i ends as ((x_i + c_1) + c_2) + ..., the c_j in that
 * fixed order, whatever order the messages arrive in.
 */
#ifndef HALO_PLAN_SCHEDULE_H
#define HALO_PLAN_SCHEDULE_H

#include "plan/pattern.h"
#include "vec.h"

typedef struct {
  halo_scope scope;
  int n_send;
  halo_msg *send; /* offsets tile [0, send_total) in order */
  int64_t send_total;
  int64_t *pack; /* send_total source indices */
  int n_recv;
  halo_msg *recv; /* offsets tile [0, recv_total) in order */
  int64_t recv_total;
  int64_t *unpack; /* recv_total destination indices */
} halo_phase;

typedef struct {
  halo_strategy strategy;
  int rank, size;
  int64_t n_local, n_ghost, n_work;
  int64_t message_cap_used; /* bytes, 0 when no message is split */
  /* 1: receives are added into their destination, as a reversed schedule
   * does; 0: written */
  int add;
  int n_phases;
  halo_phase phase[HALO_MAX_PHASES];
} halo_schedule;

void halo_schedule_free(halo_schedule *s);

/** Check one rank's schedule on its own: peers in range, messages non-empty
 *  with offsets that tile the buffers, copies to itself matched, indices in
 *  range, and then
 *  - add = 0: work read only after a phase wrote it, every ghost and work
 *    entry written exactly once;
 *  - add = 1: a destination entry added into any number of times (or none),
 *    a work entry read at most once and only in a phase after every phase
 *    that adds into it.
 *  HALO_ERR_INTERNAL with the first problem. */
halo_status halo_schedule_check(const halo_schedule *s);

/**
 * The reverse of a schedule: ghosts' contributions back to their owners,
 * added (see the summation order above). Not collective; no MPI.
 *
 * r->phase[k] is s->phase[n_phases-1-k] with its directions swapped: the
 * same scope, r's sends are s's receives (same peers, offsets and counts, in
 * the same order) packed by s's unpack map, r's receives are s's sends
 * unpacked by s's pack map. r->n_local = s->n_ghost, r->n_ghost = s->n_local,
 * the same n_work, rank, size, strategy, message_cap_used and phases, and
 * r->add = 1. The reverses of matching schedules match.
 *
 * @param s  a schedule with add = 0 (reversing a reversed schedule is an
 *           error, HALO_ERR_INTERNAL: reverse the original instead)
 * @param r  the reversed schedule, new (free with halo_schedule_free); not s
 */
halo_status halo_schedule_reverse(const halo_schedule *s, halo_schedule *r);

/** Check that the schedules of all ranks (s[r] for rank r) match: the same
 *  phases, scopes and add flag, and for every phase, a send of c values from
 *  r to q is a receive of c values at q from r. For the simulator and tests. */
halo_status halo_schedules_check_matching(const halo_schedule *s, int P);

/** Per-rank statistics of one phase (what this rank sends). */
typedef struct {
  int64_t messages, bytes;
  int64_t inter_node_messages, inter_node_bytes;
  int64_t max_message_bytes;
} halo_phase_counts;

/** Count what this rank sends in phase ph; node_of_send[i] is the node of the
 *  peer of send i, my_node the node of this rank. Copies to itself are not
 *  messages. */
void halo_phase_count(const halo_phase *ph, int rank, int my_node, const int *node_of_send,
                      halo_phase_counts *c);

/** Append a schedule to a flat int64 list (to move it between ranks). */
halo_status halo_schedule_pack(const halo_schedule *s, halo_vec *out);
/** Read a schedule from buf[*pos...], advancing *pos; checks the bounds. */
halo_status halo_schedule_unpack(const int64_t *buf, int64_t n, int64_t *pos, halo_schedule *s);

#endif
