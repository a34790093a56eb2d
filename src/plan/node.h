/* Node-aware strategies: the input of a node, its links to other nodes, the
 * decisions of each strategy, and the builder of the node's schedules. Pure
 * functions, no MPI: the distributed set-up (nodeaware.c) gathers a node's
 * input on its leader and carries decisions between nodes; the simulator
 * (simulate.c) calls the same functions for every node in one process.
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
 *
 * The schedules then have these phases:
 *   2-Step:          global (pieces, sent by their owners, and on-node
 *                    messages, direct), node (redistribution);
 *   3-Step, Split:   node (gather to the senders, and on-node messages,
 *                    direct), global (pieces), node (redistribution).
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
  int64_t message_cap_used; /* Split: the cap this node used for its incoming links */
} halo_node_links;

/** Whether a strategy is node-aware (built by the functions below). */
static inline int halo_strategy_node_aware(halo_strategy s) {
  return s == HALO_STRATEGY_2STEP || s == HALO_STRATEGY_3STEP || s == HALO_STRATEGY_SPLIT;
}

/** Local index of plan rank r in the node, or -1. */
int halo_node_local(const halo_node_input *in, int r);

/** Build the incoming and outgoing links of a node. */
halo_status halo_node_links_build(const halo_node_input *in, int remove_duplicates,
                                  halo_node_links *L);
void halo_node_links_free(halo_node_links *L);

/** Find the link with another node in a list sorted by node, or NULL. */
halo_link *halo_link_find(halo_link *links, int n, int node);

/** Decision 1, on the receiving node: pieces of every incoming link and
 *  their receivers. message_cap in bytes (Split). */
halo_status halo_decide_receive(halo_strategy s, const halo_node_input *in, halo_node_links *L,
                                int64_t message_cap);
/** Decision 2, on the sending node, once every outgoing link has its pieces
 *  and receivers from the receiving node: the sender of each piece. */
halo_status halo_decide_send(halo_strategy s, const halo_node_input *in, halo_node_links *L);

/** The schedules of all ranks of the node (sched[i] for in->ranks[i]) once
 *  both decisions are known on every link. */
halo_status halo_build_node(halo_strategy s, const halo_node_input *in, const halo_node_links *L,
                            halo_schedule *sched);

/* ---- per strategy (2step.c, 3step.c, split.c) ---- */
halo_status halo_2step_receive(const halo_node_input *in, halo_node_links *L);
halo_status halo_2step_send(const halo_node_input *in, halo_node_links *L);
halo_status halo_3step_receive(const halo_node_input *in, halo_node_links *L);
halo_status halo_3step_send(const halo_node_input *in, halo_node_links *L);
halo_status halo_split_receive(const halo_node_input *in, halo_node_links *L, int64_t message_cap);
halo_status halo_split_send(const halo_node_input *in, halo_node_links *L);

/** Shared by the strategies: order n items by decreasing size (ties by
 *  increasing index) and deal them to local ranks round-robin, starting at
 *  local rank `first` and stepping by `step` (+1 or -1). local[i] receives
 *  the local rank of item i. */
halo_status halo_deal_round_robin(int n, const int64_t *size, int n_ranks, int first, int step,
                                  int *local);

/** The receiving side of 3-Step and 2-Step: the local rank paired with each
 *  source node (links dealt by decreasing volume from local rank 0). */
halo_status halo_pair_sources(const halo_node_input *in, const halo_node_links *L, int *local);

/** Allocate the pieces of a link (n_pieces, start, receiver, sender). */
halo_status halo_link_alloc_pieces(halo_link *l, int n_pieces);

#endif
