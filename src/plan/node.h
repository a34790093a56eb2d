/* Node-aware strategies, the shared bottom layer: the input of a node, its
 * links to other nodes, and the helpers the strategies' decisions share
 * (dealing, pairing, pieces). Pure functions, no MPI. Above this file:
 * strategy.h (the descriptor every strategy fills), the strategies
 * (2step.c, 3step.c, split.c, standard.c), then the registry and the node
 * builder (registry.h, nodebuild.h), which the distributed set-up
 * (nodeaware.c) and the simulator (simulate.c) use. Nothing here knows a
 * strategy.
 *
 * A link is everything one node sends to another (or receives from one):
 * its canonical list of entries, sorted by (global id, destination rank). With
 * duplicate removal an entry is a value (one per global id, however many
 * ranks of the receiving node need it); without, one per (value, destination
 * rank). The owners of consecutive entries are contiguous, because each rank
 * owns a contiguous range of ids. Both nodes of a link build the same list
 * from their own patterns, so only decisions travel between them:
 *
 *   1. the receiving node splits each incoming link into pieces (messages)
 *      and names the rank that receives each piece;
 *   2. the sending node names the rank that sends each piece.
 */
#ifndef HALO_PLAN_NODE_H
#define HALO_PLAN_NODE_H

#include "plan/schedule.h"

/** What a node knows: the patterns of its ranks and the nodes of their peers. */
typedef struct {
  int node_id;               /* lowest plan rank of the node */
  int size;                  /* ranks of the plan */
  int n_ranks;               /* ranks of the node */
  int *ranks;                /* their plan ranks, increasing (ranks[0] == node_id) */
  halo_pattern *pat;         /* pattern of each rank of the node */
  int64_t **ghost_ids;       /* sorted ghost ids of each rank */
  int **recv_node;           /* node of each receive peer of each rank */
  int **send_node;           /* node of each send peer of each rank */
  const int64_t *col_ranges; /* size+1: the entries of x each plan rank owns */
} halo_node_input;

/** Everything one node sends to another, or receives from one. */
typedef struct {
  int node;     /* the other node */
  int64_t n;    /* entries */
  int64_t *gid; /* global id of each entry, sorted */
  int *owner;   /* plan rank that owns each entry */
  /* incoming links: the ranks of this node that need each entry */
  int64_t *dst_ptr;   /* n+1 */
  int *dst_rank;      /* plan rank */
  int64_t *dst_ghost; /* index into that rank's ghosts */
  /* pieces: the messages the entries cross the network in */
  int n_pieces;
  int64_t *piece_start; /* n_pieces+1 offsets into the entries */
  int *piece_receiver;  /* plan rank on the receiving node */
  int *piece_sender;    /* plan rank on the sending node */
} halo_link;

typedef struct {
  int n_out;
  halo_link *out; /* to other nodes, by increasing node */
  int n_in;
  halo_link *in;            /* from other nodes, by increasing node */
  int64_t message_cap_used; /* the cap the receive decision used (Split), else 0 */
} halo_node_links;

/** Local index of plan rank r in the node (its position in in->ranks), or -1. */
int halo_node_local_index(const halo_node_input *in, int r);

/** Build the incoming and outgoing links of a node. */
halo_status halo_node_links_build(const halo_node_input *in, int remove_duplicates,
                                  halo_node_links *L);
/** The same, where destinations is 0 and duplicates are removed: incoming links
 *  without their destinations (dst_ptr, dst_rank, dst_ghost NULL), for a builder that
 *  needs their entries alone (nodein.h). */
halo_status halo_node_links_build_lean(const halo_node_input *in, int dedup, int destinations,
                                       halo_node_links *L);
void halo_node_links_free(halo_node_links *L);

/** Find the link with another node in a list sorted by node, or NULL. */
halo_link *halo_link_find(halo_link *links, int n, int node);

/** Allocate the pieces of a link (n_pieces, start, receiver, sender), the
 *  receivers and senders unset (-1). */
halo_status halo_link_pieces_alloc(halo_link *l, int n_pieces);

/** Order n items by decreasing size (ties by increasing index) and deal them
 *  to local ranks round-robin, starting at local rank `first` and stepping by
 *  `step` (+1 or -1). local[i] receives the local rank of item i. */
halo_status halo_node_deal_round_robin(int n, const int64_t *size, int n_ranks, int first, int step,
                                       int *local);

/** A field of record i of an array: field f (0 most significant) of a
 *  record ordering. */
typedef int64_t (*halo_record_field_fn)(const void *records, int64_t i, int f);

/** Sort n records of `size` bytes in increasing order of their n_fields
 *  fields (field(records, i, f)), as qsort with cmp, the comparison of the
 *  same fields, sorts them; records equal in every field keep their order.
 *  When the fields' ranges fit together in 64 bits, by the packed fields: a
 *  merge of the runs when they come in at most 64 sorted runs (the builders'
 *  inputs, as a rule), else a radix sort (a pass per digit that differs);
 *  else by qsort. */
halo_status halo_node_sort_records(void *records, int64_t n, size_t size, int n_fields,
                                   halo_record_field_fn field,
                                   int (*cmp)(const void *, const void *));

/** Pairing of 3-Step and 2-Step: deal n links (a node's incoming or outgoing
 *  ones) to its local ranks by decreasing volume, from local rank 0. local[i]
 *  receives the local rank paired with the other node of links[i]. */
halo_status halo_node_pair_links(const halo_node_input *in, const halo_link *links, int n,
                                 int *local);

#endif
