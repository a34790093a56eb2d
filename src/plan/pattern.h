/* The communication pattern of a matrix: which entries of x a rank receives
 * from whom (its ghosts, grouped by owner) and which it sends to whom. */
#ifndef HALO_PLAN_PATTERN_H
#define HALO_PLAN_PATTERN_H

#include "halo_impl.h"

/** One message of a pattern or a schedule: a peer (rank of the plan), an
 *  offset into the packed buffer and a count, in values. */
typedef struct {
  int peer;
  int64_t offset;
  int64_t count;
} halo_msg;

typedef struct {
  int rank, size;
  int64_t n_local;   /* entries of x owned */
  int64_t n_ghost;   /* entries of x needed from others */
  int n_recv;        /* owners of my ghosts, increasing rank */
  halo_msg *recv;    /* offset/count into the ghost array, which they tile */
  int n_send;        /* ranks that need my entries, increasing rank */
  halo_msg *send;    /* offset/count into send_idx */
  int64_t *send_idx; /* local indices of x to send, message after message */
} halo_pattern;

/**
 * Receive side of the pattern, without MPI: owner of every ghost by binary
 * search in col_ranges (size+1 entries), grouped into one message per owner.
 */
halo_status halo_pattern_recv_side(int rank, int size, const int64_t *col_ranges,
                                   const int64_t *ghost_ids, int64_t n_ghost, halo_pattern *p);

/**
 * Full pattern (collective over comm): the receive side, then the send side
 * learned by a sparse data exchange (NBX: MPI_Issend of the wanted ids to
 * each owner, MPI_Ibarrier once they are all matched). Nothing of size P is
 * allocated besides col_ranges.
 */
halo_status halo_pattern_create(MPI_Comm comm, const int64_t *col_ranges, const int64_t *ghost_ids,
                                int64_t n_ghost, halo_pattern *p);

/**
 * The send side from explicit lists, without MPI: to ranks[j], the entries
 * indices[starts[j] .. starts[j+1]) of this rank, each once and in
 * increasing order (the order of the receiver's ghosts, sorted by id);
 * messages by increasing rank. For the ranks and the list of a receiver that
 * learned these entries' ids from this rank.
 */
halo_status halo_pattern_set_send(halo_pattern *p, int n_send, const int *ranks,
                                  const int64_t *starts, const int64_t *indices);

void halo_pattern_free(halo_pattern *p);

/**
 * The ranges of every rank from this rank's [begin, end), checked to tile
 * 0..N in rank order (size+1 offsets in *ranges_p). st: the caller's local
 * status, agreed first. Collective; every rank fails together.
 */
halo_status halo_layout_gather(MPI_Comm comm, int64_t begin, int64_t end, halo_status st,
                               int64_t **ranges_p);

#endif
