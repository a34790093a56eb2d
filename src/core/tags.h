/* Every MPI tag the library uses, in one place.
 *
 * The plans of a communicator share its context (src/interface/context.h)
 * and its one copy of the communicator. Set-up protocols run one at a time
 * (matrix and plan creation are collective) and use the fixed tags below.
 * Exchanges run concurrently, many plans and several exchanges per plan at
 * once: each executor takes a block of tags from the context's allocator at
 * plan time, from HALO_TAG_EXCHANGE_FIRST up to the communicator's
 * MPI_TAG_UB, so that no two live exchanges share a tag and no exchange
 * meets a set-up message (exec.h: halo_exec_tag). */
#ifndef HALO_CORE_TAGS_H
#define HALO_CORE_TAGS_H

enum {
  HALO_TAG_PATTERN = 1,         /* NBX: the ids a rank needs, to their owner (pattern.c) */
  HALO_TAG_HANDSHAKE = 2,       /* NBX: the messages a rank expects, to their sender (plan.c) */
  HALO_TAG_NODE_TO_OWNER = 3,   /* a rank's node, to the owners of its ghosts (nodeaware.c) */
  HALO_TAG_NODE_TO_READER = 4,  /* an owner's node, to the ranks that read its entries */
  HALO_TAG_RECEIVE_DECISION = 5, /* a node's pieces and receivers, to the sending node */
  HALO_TAG_SEND_DECISION = 6,   /* a node's senders, to the receiving node */
  HALO_TAG_IPC_SETUP = 7,       /* CUDA IPC: a message's buffer handle and ready event */
  HALO_TAG_IPC_DONE_SETUP = 8,  /* CUDA IPC: a receiver's done event */
  HALO_TAG_LIST_IDS = 9,        /* explicit lists: the global ids of a message's entries */
  HALO_TAG_SETUP_LAST = 9,
  HALO_TAG_EXCHANGE_FIRST = 64 /* the allocator's first tag */
};

#endif
