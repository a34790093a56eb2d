/* What the transports' executors share: waits with the exchange timeout,
 * request numbers per peer, chunked persistent requests, runs, the order of a
 * reverse exchange's additions. It calls nothing of the executors or the
 * registry (exec.c dispatches through them), so every transport may call it. */
#include <stdlib.h>
#include <string.h>

#include "exec/exec.h"

typedef struct {
  int peer, index;
} peer_index;

static int cmp_peer_index(const void *a, const void *b) {
  const peer_index *x = a, *y = b;
  if (x->peer != y->peer) return (x->peer > y->peer) - (x->peer < y->peer);
  return (x->index > y->index) - (x->index < y->index);
}

halo_status halo_exec_waitall(const halo_exec *ex, int n, MPI_Request *req) {
  if (n <= 0) return HALO_SUCCESS;
  const int64_t ms = ex->cfg.timeout_ms;
  if (ms <= 0) {
    HALO_MPI(MPI_Waitall(n, req, MPI_STATUSES_IGNORE));
    return HALO_SUCCESS;
  }
  const double deadline = MPI_Wtime() + 1e-3 * (double)ms;
  for (;;) {
    int done = 0;
    HALO_MPI(MPI_Testall(n, req, &done, MPI_STATUSES_IGNORE));
    if (done) return HALO_SUCCESS;
    if (MPI_Wtime() > deadline)
      return HALO_ERROR(HALO_ERR_TIMEOUT,
                        "an exchange waited %lld ms for its messages (exchange_timeout_ms): a "
                        "peer failed or stopped; destroy this plan",
                        (long long)ms);
  }
}

halo_status halo_exec_sequence(const halo_exec *ex, const halo_msg *m, int n, int *seq) {
  halo_status st = HALO_SUCCESS;
  peer_index *o = NULL;
  HALO_TRY(HALO_ALLOC(o, n));
  for (int i = 0; i < n; i++) o[i] = (peer_index){m[i].peer, i};
  if (n > 1) qsort(o, (size_t)n, sizeof *o, cmp_peer_index);
  for (int t = 0, next = 0; t < n; t++) {
    if (t > 0 && o[t].peer != o[t - 1].peer) next = 0;
    seq[o[t].index] = next;
    next += halo_exec_chunks(ex, m[o[t].index].count);
    if (next > ex->cfg.tag_stride - 2)
      HALO_FAIL(HALO_ERR_INTERNAL, "%d requests to rank %d in one phase, beyond the plan's %d tags",
                next, o[t].peer, ex->cfg.tag_stride - 2);
  }
cleanup:
  halo_free(o);
  return st;
}

halo_status halo_exec_init_chunks(const halo_exec *ex, MPI_Request *req, int is_send, double *buf,
                                  int64_t count, int peer, int k, int seq, MPI_Comm comm) {
  int64_t c = ex->cfg.max_count;
  for (int64_t done = 0, j = 0; done < count; done += c, j++) {
    int n = (int)(count - done < c ? count - done : c), tag = halo_exec_tag(ex, k, seq + (int)j);
    if (is_send)
      HALO_MPI(MPI_Send_init(buf + done, n, MPI_DOUBLE, peer, tag, comm, &req[j]));
    else
      HALO_MPI(MPI_Recv_init(buf + done, n, MPI_DOUBLE, peer, tag, comm, &req[j]));
  }
  return HALO_SUCCESS;
}

halo_status halo_exec_init_chunks_typed(const halo_exec *ex, MPI_Request *req, int is_send,
                                        void *buf, int64_t count, MPI_Datatype dt, int64_t bytes,
                                        int peer, int k, int seq, MPI_Comm comm) {
  int64_t c = ex->cfg.max_count;
  char *b = buf;
  for (int64_t done = 0, j = 0; done < count; done += c, j++) {
    int n = (int)(count - done < c ? count - done : c), tag = halo_exec_tag(ex, k, seq + (int)j);
    if (is_send)
      HALO_MPI(MPI_Send_init(b + done * bytes, n, dt, peer, tag, comm, &req[j]));
    else
      HALO_MPI(MPI_Recv_init(b + done * bytes, n, dt, peer, tag, comm, &req[j]));
  }
  return HALO_SUCCESS;
}

int halo_exec_is_run(const halo_schedule *s, const int64_t *idx, int64_t count) {
  if (s->add) return 0;
  for (int64_t i = 1; i < count; i++)
    if (idx[i] != idx[0] + i) return 0;
  return idx[0] + count <= s->n_ghost || idx[0] >= s->n_ghost;
}

/* halo_exec_add_order into 64-bit (src, dst) or 32-bit (src32, dst32) arrays; the
 * largest destination in *most. */
static halo_status add_order(const halo_schedule *s, const halo_phase *ph, const int64_t *recv_off,
                             int64_t *src, int64_t *dst, int32_t *src32, int32_t *dst32,
                             int64_t *most) {
  int64_t n = 0, packed = 0, top = -1;
  int self_send = 0;
#define PUT(a, b)                                                                                  \
  do {                                                                                             \
    const int64_t a_ = (a), b_ = (b);                                                              \
    if (src)                                                                                       \
      src[n] = a_, dst[n] = b_;                                                                    \
    else                                                                                           \
      src32[n] = (int32_t)a_, dst32[n] = (int32_t)b_;                                              \
    if (b_ > top) top = b_;                                                                        \
    n++;                                                                                           \
  } while (0)
  for (int i = 0; i < ph->n_recv; i++) {
    const halo_msg *m = &ph->recv[i];
    const int64_t *to = ph->unpack + m->offset;
    if (m->peer == s->rank) { /* the next copy to itself, in send list order */
      while (self_send < ph->n_send && ph->send[self_send].peer != s->rank) self_send++;
      if (self_send == ph->n_send || ph->send[self_send].count != m->count)
        return HALO_ERROR(HALO_ERR_INTERNAL, "a copy to itself without its send");
      const int64_t *from = ph->pack + ph->send[self_send++].offset;
      for (int64_t t = 0; t < m->count; t++) PUT(-1 - from[t], to[t]);
      continue;
    }
    const int64_t off = recv_off ? recv_off[i] : packed;
    for (int64_t t = 0; t < m->count; t++) PUT(off + t, to[t]);
    packed += m->count;
  }
#undef PUT
  if (most) *most = top;
  return HALO_SUCCESS;
}

halo_status halo_exec_add_order(const halo_schedule *s, const halo_phase *ph,
                                const int64_t *recv_off, int64_t *src, int64_t *dst) {
  return add_order(s, ph, recv_off, src, dst, NULL, NULL, NULL);
}

halo_status halo_exec_add_order32(const halo_schedule *s, const halo_phase *ph,
                                  const int64_t *recv_off, int32_t *src, int32_t *dst,
                                  int64_t *most) {
  return add_order(s, ph, recv_off, NULL, NULL, src, dst, most);
}

#define ADD_LOOP(T)                                                                                \
  do {                                                                                             \
    T *a = o;                                                                                      \
    const T *b = in;                                                                               \
    for (int64_t i = 0; i < m; i++) a[i] += b[i];                                                  \
  } while (0)

void halo_xunit_apply(const halo_xunit *u, void *o, const void *in, int64_t n) {
  if (n <= 0) return;
  if (u->op == HALO_OP_INSERT) {
    memcpy(o, in, (size_t)(n * u->bytes));
    return;
  }
  const int64_t m = n * u->per;
  switch (u->scalar) {
  case HALO_TYPE_FLOAT: ADD_LOOP(float); break;
  case HALO_TYPE_INT32: ADD_LOOP(int32_t); break;
  case HALO_TYPE_INT64: ADD_LOOP(int64_t); break;
  default: ADD_LOOP(double); break;
  }
}
