/* Pattern: owners of the ghosts by binary search, send lists by NBX. */
#include <stdlib.h>
#include <string.h>

#include "plan/pattern.h"

enum { TAG_NBX_REQUEST = 101 };

void halo_pattern_free(halo_pattern *p) {
  if (!p) return;
  halo_free(p->send_idx);
  halo_free(p->send);
  halo_free(p->recv);
  memset(p, 0, sizeof *p);
}

halo_status halo_pattern_recv_side(int rank, int size, const int64_t *col_ranges,
                                   const int64_t *ghost_ids, int64_t n_ghost, halo_pattern *p) {
  halo_status st = HALO_SUCCESS;
  memset(p, 0, sizeof *p);
  p->rank = rank;
  p->size = size;
  p->n_local = col_ranges[rank + 1] - col_ranges[rank];
  p->n_ghost = n_ghost;
  /* Ghosts are sorted and ranges contiguous: search only where the owner changes. */
  int n_groups = 0;
  int64_t end_of_owner = -1;
  for (int64_t k = 0; k < n_ghost; k++) {
    if (k > 0 && ghost_ids[k] <= ghost_ids[k - 1])
      HALO_FAIL(HALO_ERR_INTERNAL, "ghost ids are not strictly increasing at %lld", (long long)k);
    if (ghost_ids[k] >= end_of_owner) {
      int owner = halo_find_range(col_ranges, size, ghost_ids[k]);
      if (owner < 0 || owner == rank)
        HALO_FAIL(HALO_ERR_INTERNAL, "ghost %lld has no other owner", (long long)ghost_ids[k]);
      end_of_owner = col_ranges[owner + 1];
      n_groups++;
    }
  }
  HALO_TRY(HALO_ALLOC(p->recv, n_groups));
  p->n_recv = 0;
  end_of_owner = -1;
  for (int64_t k = 0; k < n_ghost; k++) {
    if (ghost_ids[k] >= end_of_owner) {
      int owner = halo_find_range(col_ranges, size, ghost_ids[k]);
      end_of_owner = col_ranges[owner + 1];
      p->recv[p->n_recv].peer = owner;
      p->recv[p->n_recv].offset = k;
      p->recv[p->n_recv].count = 0;
      p->n_recv++;
    }
    p->recv[p->n_recv - 1].count++;
  }
cleanup:
  if (st != HALO_SUCCESS) halo_pattern_free(p);
  return st;
}

typedef struct {
  int source;
  int64_t count;
  int64_t *ids;
} nbx_request;

static int cmp_request(const void *a, const void *b) {
  const nbx_request *x = a, *y = b;
  return (x->source > y->source) - (x->source < y->source);
}

halo_status halo_pattern_create(MPI_Comm comm, const int64_t *col_ranges, const int64_t *ghost_ids,
                                int64_t n_ghost, halo_pattern *p) {
  halo_status st = HALO_SUCCESS;
  int rank, size;
  MPI_Request *sreq = NULL, barrier = MPI_REQUEST_NULL;
  nbx_request *in = NULL;
  int n_in = 0, cap_in = 0;
  memset(p, 0, sizeof *p);
  HALO_TRY_MPI(MPI_Comm_rank(comm, &rank));
  HALO_TRY_MPI(MPI_Comm_size(comm, &size));
  HALO_TRY(halo_pattern_recv_side(rank, size, col_ranges, ghost_ids, n_ghost, p));

  /* NBX: ask every owner for its entries with a synchronous send; once all
   * of them are matched, enter a non-blocking barrier; keep receiving
   * requests until the barrier completes. */
  HALO_TRY(HALO_ALLOC(sreq, p->n_recv));
  for (int i = 0; i < p->n_recv; i++)
    HALO_TRY_MPI(MPI_Issend(ghost_ids + p->recv[i].offset, (int)p->recv[i].count, MPI_INT64_T,
                            p->recv[i].peer, TAG_NBX_REQUEST, comm, &sreq[i]));
  for (int done = 0, in_barrier = 0; !done;) {
    int flag = 0;
    MPI_Status status;
    HALO_TRY_MPI(MPI_Iprobe(MPI_ANY_SOURCE, TAG_NBX_REQUEST, comm, &flag, &status));
    if (flag) {
      int count;
      HALO_TRY_MPI(MPI_Get_count(&status, MPI_INT64_T, &count));
      if (n_in == cap_in) {
        int cap = cap_in ? 2 * cap_in : 16;
        nbx_request *q = halo_realloc(in, (size_t)cap * sizeof *in);
        if (!q) HALO_FAIL(HALO_ERR_OUT_OF_MEMORY, "out of memory receiving ghost requests");
        in = q;
        cap_in = cap;
      }
      nbx_request *r = &in[n_in];
      r->source = status.MPI_SOURCE;
      r->count = count;
      r->ids = NULL;
      HALO_TRY(HALO_ALLOC(r->ids, count));
      n_in++;
      HALO_TRY_MPI(MPI_Recv(r->ids, count, MPI_INT64_T, r->source, TAG_NBX_REQUEST, comm,
                            MPI_STATUS_IGNORE));
    }
    if (!in_barrier) {
      int all_sent = 0;
      HALO_TRY_MPI(MPI_Testall(p->n_recv, sreq, &all_sent, MPI_STATUSES_IGNORE));
      if (all_sent) {
        HALO_TRY_MPI(MPI_Ibarrier(comm, &barrier));
        in_barrier = 1;
      }
    } else {
      HALO_TRY_MPI(MPI_Test(&barrier, &done, MPI_STATUS_IGNORE));
    }
  }

  /* Send side, ordered by rank so that plans do not depend on arrival order. */
  if (n_in > 1) qsort(in, (size_t)n_in, sizeof *in, cmp_request);
  int64_t total = 0;
  for (int i = 0; i < n_in; i++) total += in[i].count;
  HALO_TRY(HALO_ALLOC(p->send, n_in));
  HALO_TRY(HALO_ALLOC(p->send_idx, total));
  p->n_send = n_in;
  const int64_t cb = col_ranges[rank];
  int64_t off = 0;
  for (int i = 0; i < n_in; i++) {
    p->send[i].peer = in[i].source;
    p->send[i].offset = off;
    p->send[i].count = in[i].count;
    for (int64_t k = 0; k < in[i].count; k++) {
      int64_t local = in[i].ids[k] - cb;
      if (local < 0 || local >= p->n_local)
        HALO_FAIL(HALO_ERR_INTERNAL, "rank %d asked for entry %lld, not owned here", in[i].source,
                  (long long)in[i].ids[k]);
      p->send_idx[off++] = local;
    }
  }
cleanup:
  for (int i = 0; i < n_in; i++) halo_free(in[i].ids);
  halo_free(in);
  halo_free(sreq);
  if (st != HALO_SUCCESS) halo_pattern_free(p);
  return st;
}
