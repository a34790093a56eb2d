/* Pattern: owners of the ghosts by binary search, send lists by NBX. */
#include <stdlib.h>
#include <string.h>

#include "plan/pattern.h"
#include "tags.h"


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
  st = halo_pattern_recv_side(rank, size, col_ranges, ghost_ids, n_ghost, p);
  if (st == HALO_SUCCESS) st = HALO_ALLOC(sreq, p->n_recv);
  /* a failure here is agreed before the NBX, where the other ranks would
   * wait for this one's requests */
  HALO_TRY(halo_agree(comm, st));

  /* NBX: ask every owner for its entries with a synchronous send; once all
   * of them are matched, enter a non-blocking barrier; keep receiving
   * requests until the barrier completes. A rank that cannot keep a request
   * (out of memory) still receives it, into nothing (the truncated receive
   * matches it), and stays in the NBX to the end: the failure is agreed
   * after it. */
  halo_status kept = HALO_SUCCESS;
  for (int i = 0; i < p->n_recv; i++)
    HALO_TRY_MPI(MPI_Issend(ghost_ids + p->recv[i].offset, (int)p->recv[i].count, MPI_INT64_T,
                            p->recv[i].peer, HALO_TAG_PATTERN, comm, &sreq[i]));
  for (int done = 0, in_barrier = 0; !done;) {
    int flag = 0;
    MPI_Status status;
    HALO_TRY_MPI(MPI_Iprobe(MPI_ANY_SOURCE, HALO_TAG_PATTERN, comm, &flag, &status));
    if (flag) {
      int count;
      HALO_TRY_MPI(MPI_Get_count(&status, MPI_INT64_T, &count));
      if (n_in == cap_in && kept == HALO_SUCCESS) {
        int cap = cap_in ? 2 * cap_in : 16;
        nbx_request *q = halo_realloc(in, (size_t)cap * sizeof *in);
        if (q) {
          in = q;
          cap_in = cap;
        } else {
          kept = HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "out of memory receiving ghost requests");
        }
      }
      int64_t *ids = NULL;
      if (kept == HALO_SUCCESS) kept = HALO_ALLOC(ids, count);
      if (kept != HALO_SUCCESS) { /* matched and dropped (MPI_ERR_TRUNCATE, returned) */
        int64_t none;
        MPI_Recv(&none, 0, MPI_INT64_T, status.MPI_SOURCE, HALO_TAG_PATTERN, comm,
                 MPI_STATUS_IGNORE);
        continue;
      }
      nbx_request *r = &in[n_in];
      r->source = status.MPI_SOURCE;
      r->count = count;
      r->ids = ids;
      n_in++;
      HALO_TRY_MPI(MPI_Recv(r->ids, count, MPI_INT64_T, r->source, HALO_TAG_PATTERN, comm,
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
  HALO_TRY(halo_agree(comm, kept));

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
  /* every rank comes here once, past the NBX: a failure of the send side
   * (out of memory, a request for an entry not owned) is agreed too */
  st = halo_agree(comm, st);
  for (int i = 0; i < n_in; i++) halo_free(in[i].ids);
  halo_free(in);
  halo_free(sreq);
  if (st != HALO_SUCCESS) halo_pattern_free(p);
  return st;
}

typedef struct {
  int rank, j;
} rank_list;

static int cmp_rank_list(const void *a, const void *b) {
  const rank_list *x = a, *y = b;
  return (x->rank > y->rank) - (x->rank < y->rank);
}

halo_status halo_pattern_set_send(halo_pattern *p, int n_send, const int *ranks,
                                  const int64_t *starts, const int64_t *indices) {
  halo_status st = HALO_SUCCESS;
  rank_list *order = NULL;
  int64_t total = starts && n_send > 0 ? starts[n_send] : 0;
  HALO_TRY(HALO_ALLOC(order, n_send));
  for (int j = 0; j < n_send; j++) order[j] = (rank_list){ranks[j], j};
  if (n_send > 1) qsort(order, (size_t)n_send, sizeof *order, cmp_rank_list);
  HALO_TRY(HALO_ALLOC(p->send, n_send));
  HALO_TRY(HALO_ALLOC(p->send_idx, total));
  int64_t off = 0;
  int n = 0;
  for (int t = 0; t < n_send; t++) {
    const int j = order[t].j;
    const int64_t c = starts[j + 1] - starts[j];
    if (c == 0) continue; /* no message */
    int64_t *m = p->send_idx + off;
    memcpy(m, indices + starts[j], (size_t)c * sizeof *m);
    HALO_TRY(halo_sort_i64(m, c));
    int64_t u = 0;
    for (int64_t k = 0; k < c; k++)
      if (u == 0 || m[k] != m[u - 1]) m[u++] = m[k];
    p->send[n++] = (halo_msg){order[t].rank, off, u};
    off += u;
  }
  p->n_send = n;
cleanup:
  halo_free(order);
  return st;
}

halo_status halo_layout_gather(MPI_Comm comm, int64_t begin, int64_t end, halo_status st,
                               int64_t **ranges_p) {
  int size;
  int64_t *all = NULL, *ranges = NULL;
  *ranges_p = NULL;
  HALO_TRY_MPI(MPI_Comm_size(comm, &size));
  if (st == HALO_SUCCESS && (begin < 0 || end < begin))
    st = HALO_ERROR(HALO_ERR_INVALID_ARG, "range [%lld, %lld) is not a range of entries",
                    (long long)begin, (long long)end);
  if (st == HALO_SUCCESS && end - begin > INT32_MAX)
    st = HALO_ERROR(HALO_ERR_OUT_OF_RANGE, "%lld entries: at most %d per rank",
                    (long long)(end - begin), INT32_MAX);
  if (st == HALO_SUCCESS) st = HALO_ALLOC(all, 2 * (size_t)size);
  if (st == HALO_SUCCESS) st = HALO_ALLOC(ranges, size + 1);
  HALO_TRY(halo_agree(comm, st));
  {
    int64_t mine[2] = {begin, end};
    HALO_TRY_MPI(MPI_Allgather(mine, 2, MPI_INT64_T, all, 2, MPI_INT64_T, comm));
  }
  if (all[0] != 0)
    HALO_FAIL(HALO_ERR_INCONSISTENT, "ranges must start at 0: rank 0 begins at %lld",
              (long long)all[0]);
  for (int r = 1; r < size; r++)
    if (all[2 * r] != all[2 * r - 1])
      HALO_FAIL(HALO_ERR_INCONSISTENT,
                "ranges do not follow each other: rank %d ends at %lld but rank %d begins at %lld",
                r - 1, (long long)all[2 * r - 1], r, (long long)all[2 * r]);
  for (int r = 0; r < size; r++) ranges[r] = all[2 * r];
  ranges[size] = all[2 * size - 1];
  *ranges_p = ranges;
  ranges = NULL;
cleanup:
  halo_free(ranges);
  halo_free(all);
  return st;
}
