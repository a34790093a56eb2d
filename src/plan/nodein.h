/* The incoming half of a node's schedules, built by the node's ranks
 * themselves once the node knows its pieces (nodeaware.c carries the data
 * between them). Pure functions, no MPI. The node's incoming half makes a
 * table of the pieces every rank of the node reads, and gives each receiver
 * the entries of its pieces; each rank then finds, for each of its ghosts
 * from another node, the piece that holds it, and asks that piece's receiver
 * for it (requests, in the order of its ghosts); each receiver answers in
 * that order with the value's place in its work array. The schedules are
 * those of the node-wide build (nodebuild.c: pieces in, redistribution),
 * byte for byte:
 *
 *   - a receiver's pieces take its work array's entries in the table's order
 *     (links by increasing node, pieces by increasing index), one message per
 *     piece, messages ordered by (sender, piece);
 *   - a reader receives from each receiver its ghosts in increasing order, and
 *     the receiver sends their places in that order: one message per pair. */
#ifndef HALO_PLAN_NODEIN_H
#define HALO_PLAN_NODEIN_H

#include "plan/strategy.h"

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

/** Append the entries of the pieces plan rank r receives, for each of its pieces in
 *  the table's order: their global ids, then (without duplicate removal) their
 *  destination ranks. */
halo_status halo_in_entries_pack(const halo_node_links *L, int dedup, int r, halo_vec *out);

/** A rank's requests (plan rank me; its pattern, ghost ids and the node of each receive
 *  peer): for each local receiver i (node_ranks[i], R ranks, increasing), req[i]
 *  gets runs of (piece, count, count global ids), in the order of the ghosts, and
 *  ghosts[i] the indices of those ghosts, increasing. */
halo_status halo_in_requests(const halo_in_table *t, int dedup, int me, int my_node,
                             const halo_pattern *p, const int64_t *ghost_ids, const int *recv_node,
                             const int *node_ranks, int R, halo_vec *req, halo_vec *ghosts);

/** This rank's incoming half of its schedule (plan rank me of size ranks; its n_local
 *  and n_ghost): the pieces it receives (entries: from halo_in_entries_pack) into its
 *  work array from entry 0, and the redistribution: to each local rank i, the places
 *  of the values asked in req[i] (n_req[i] words, from that rank's
 *  halo_in_requests), and from each local rank i the ghosts in ghosts[i] (this
 *  rank's own halo_in_requests). s->n_work counts the work entries. */
halo_status halo_in_build(const halo_in_table *t, const halo_strategy_desc *d, int dedup, int me,
                          int size, int64_t n_local, int64_t n_ghost, const int64_t *entries,
                          int64_t n_entries, const int *node_ranks, int R,
                          const int64_t *const *req, const int64_t *n_req, const halo_vec *ghosts,
                          halo_schedule *s);

#endif
