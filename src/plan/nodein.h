/* The incoming half of a node's schedules, built by the node's ranks
 * themselves once the node knows its pieces (nodeaware.c carries the data
 * between them). Pure functions, no MPI. The node's incoming half makes a
 * table of the pieces and a list of their entries, which every rank of the
 * node reads; each rank then finds, for each of its ghosts from another node,
 * the piece that holds it and the value's place in that piece's receiver's
 * work array, and sends each receiver the places it asks of it, in the order
 * of its ghosts: that list is the receiver's redistribution message. The
 * schedules are those of the node-wide build (nodebuild.c: pieces in,
 * redistribution), byte for byte:
 *
 *   - a receiver's pieces take its work array's entries in the table's order
 *     (links by increasing node, pieces by increasing index), one message per
 *     piece, messages ordered by (sender, piece);
 *   - a reader receives from each receiver its ghosts in increasing order, and
 *     the receiver sends their places in that order: one message per pair. */
#ifndef HALO_PLAN_NODEIN_H
#define HALO_PLAN_NODEIN_H

#include "plan/strategy.h"
#include "vec.h"

/** The pieces a node receives, as every rank of the node reads them. */
typedef struct {
  int64_t message_cap_used; /* the receive decision's (Split), else 0 */
  int n_links;
  int *node;  /* per link: the sending node, increasing */
  int *first; /* n_links+1: the pieces of link c are [first[c], first[c+1]) */
  int n_pieces;
  int *k;            /* per piece: its index in its link */
  int64_t *size;     /* its entries (at least 1) */
  int *receiver;     /* plan rank on this node */
  int *sender;       /* plan rank on the sending node */
  int64_t *key_gid;  /* its first entry's global id */
  int64_t *key_rank; /* and destination rank (without duplicate removal; else -1) */
} halo_in_table;

/** The table of a node's incoming links, decided (pieces, receivers, senders), as a
 *  flat list. */
halo_status halo_in_table_pack(const halo_node_links *L, int dedup, halo_vec *out);

/** The table from its flat list; size is the plan's ranks. */
halo_status halo_in_table_unpack(const int64_t *buf, int64_t n, int size, halo_in_table *t);

void halo_in_table_free(halo_in_table *t);

/** Append the entries of all the node's pieces, in the table's order: per piece, its
 *  global ids, then (without duplicate removal) their destination ranks. */
halo_status halo_in_entries_pack(const halo_node_links *L, int dedup, halo_vec *out);

/** A rank's requests (plan rank me; the entries of the node's pieces from
 *  halo_in_entries_pack, n_entries words; its pattern, ghost ids and the node of each
 *  receive peer): for each local receiver i (node_ranks[i], R ranks, increasing),
 *  req[i] gets the places in that receiver's work array of this rank's ghosts it
 *  holds, in the order of the ghosts, and ghosts[i] the indices of those ghosts. */
halo_status halo_in_requests(const halo_in_table *t, int dedup, int me, int my_node,
                             const int64_t *entries, int64_t n_entries, const halo_pattern *p,
                             const int64_t *ghost_ids, const int *recv_node, const int *node_ranks,
                             int R, halo_vec *req, halo_vec *ghosts);

/** This rank's incoming half of its schedule (plan rank me of size ranks; its n_local
 *  and n_ghost): the pieces it receives into its work array from entry 0, and the
 *  redistribution: to each local rank i, the values at the n_req[i] places that rank
 *  asked for (its halo_in_requests), and from each local rank i the ghosts in
 *  ghosts[i] (this rank's own halo_in_requests). *places holds the places asked of this
 *  rank, local rank by local rank; the schedule takes it as its redistribution's pack
 *  (*places is NULL after, even on failure). s->n_work counts the work entries. */
halo_status halo_in_build(const halo_in_table *t, const halo_strategy_desc *d, int me, int size,
                          int64_t n_local, int64_t n_ghost, const int *node_ranks, int R,
                          int64_t **places, const int64_t *n_req, const halo_vec *ghosts,
                          halo_schedule *s);

#endif
