/* Executor core: peers per scope, tags, dispatch to the backend. */
#include <stdlib.h>
#include <string.h>

#include "exec/exec.h"
#include "exec/transport.h"

typedef struct {
  int peer, index;
} peer_index;

static int cmp_peer_index(const void *a, const void *b) {
  const peer_index *x = a, *y = b;
  if (x->peer != y->peer) return (x->peer > y->peer) - (x->peer < y->peer);
  return (x->index > y->index) - (x->index < y->index);
}

/* The most requests between this rank and one peer in one list (several
 * messages may share a peer; each is split at max_count values). */
static int64_t most_per_peer(const halo_msg *m, int n, int max_count) {
  int64_t most = 0;
  for (int i = 0; i < n; i++) {
    int first = 1;
    for (int j = 0; j < i && first; j++) first = m[j].peer != m[i].peer;
    if (!first) continue;
    int64_t sum = 0;
    for (int j = i; j < n; j++)
      if (m[j].peer == m[i].peer) sum += (m[j].count + max_count - 1) / max_count;
    if (sum > most) most = sum;
  }
  return most;
}

int halo_exec_tag_stride(const halo_schedule *s, int max_count) {
  int64_t most = 0;
  for (int k = 0; k < s->n_phases; k++) {
    const halo_phase *ph = &s->phase[k];
    int64_t a = most_per_peer(ph->send, ph->n_send, max_count);
    int64_t b = most_per_peer(ph->recv, ph->n_recv, max_count);
    if (a > most) most = a;
    if (b > most) most = b;
  }
  if (most > INT32_MAX / 4) most = INT32_MAX / 4; /* more than the tag allocator gives */
  return (int)most + 2;
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

int halo_exec_is_run(const halo_schedule *s, const int64_t *idx, int64_t count) {
  if (s->add) return 0;
  for (int64_t i = 1; i < count; i++)
    if (idx[i] != idx[0] + i) return 0;
  return idx[0] + count <= s->n_ghost || idx[0] >= s->n_ghost;
}

static halo_status translate(MPI_Group from, MPI_Group to, const halo_msg *m, int n, int **out) {
  halo_status st = HALO_SUCCESS;
  int *in = NULL;
  HALO_TRY(HALO_ALLOC(*out, n));
  HALO_TRY(HALO_ALLOC(in, n));
  for (int i = 0; i < n; i++) in[i] = m[i].peer;
  if (n) HALO_TRY_MPI(MPI_Group_translate_ranks(from, n, in, to, *out));
  for (int i = 0; i < n; i++)
    if ((*out)[i] == MPI_UNDEFINED)
      HALO_FAIL(HALO_ERR_INTERNAL, "node-local message with rank %d of another node", m[i].peer);
cleanup:
  halo_free(in);
  return st;
}

const halo_exec_ops *halo_exec_backend(halo_memory memory, halo_transport transport) {
  if (memory == HALO_MEMORY_DEVICE) return halo_exec_cuda();
  const halo_transport_desc *t = halo_transport_find(transport);
  return t && t->host_ops ? t->host_ops : &halo_exec_host_ops;
}

halo_status halo_exec_create(const halo_exec_ops *ops, const halo_schedule *s,
                             const halo_exec_config *cfg, halo_exec *ex) {
  halo_status st = HALO_SUCCESS;
  MPI_Group g_all = MPI_GROUP_NULL, g_node = MPI_GROUP_NULL;
  memset(ex, 0, sizeof *ex);
  ex->ops = ops;
  ex->sched = s;
  ex->cfg = *cfg;
  HALO_TRY_MPI(MPI_Comm_group(cfg->comm, &g_all));
  HALO_TRY_MPI(MPI_Comm_group(cfg->node_comm, &g_node));
  for (int k = 0; k < s->n_phases; k++) {
    const halo_phase *ph = &s->phase[k];
    if (ph->scope == HALO_SCOPE_NODE) {
      ex->phase_comm[k] = cfg->node_comm;
      HALO_TRY(translate(g_all, g_node, ph->send, ph->n_send, &ex->peer_send[k]));
      HALO_TRY(translate(g_all, g_node, ph->recv, ph->n_recv, &ex->peer_recv[k]));
    } else {
      ex->phase_comm[k] = cfg->comm;
      HALO_TRY(HALO_ALLOC(ex->peer_send[k], ph->n_send));
      HALO_TRY(HALO_ALLOC(ex->peer_recv[k], ph->n_recv));
      for (int i = 0; i < ph->n_send; i++) ex->peer_send[k][i] = ph->send[i].peer;
      for (int i = 0; i < ph->n_recv; i++) ex->peer_recv[k][i] = ph->recv[i].peer;
    }
  }
  if (!ops->setup) HALO_FAIL(HALO_ERR_INTERNAL, "backend %s does not implement setup", ops->name);
cleanup:
  /* agreed before the backend's set-up, whose agreements and collectives
   * (cuda, rma) a rank that failed above would not join */
  st = halo_agree(cfg->comm, st);
  if (st == HALO_SUCCESS) st = ops->setup(ex);
  if (g_node != MPI_GROUP_NULL) MPI_Group_free(&g_node);
  if (g_all != MPI_GROUP_NULL) MPI_Group_free(&g_all);
  if (st != HALO_SUCCESS) halo_exec_destroy(ex);
  return st;
}

halo_status halo_exec_begin(halo_exec *ex, const double *src, double *dst) {
  if (!ex->ops->begin)
    return HALO_ERROR(HALO_ERR_INTERNAL, "backend %s does not implement begin", ex->ops->name);
  return ex->ops->begin(ex, src, dst);
}

halo_status halo_exec_end(halo_exec *ex) {
  if (!ex->ops->end)
    return HALO_ERROR(HALO_ERR_INTERNAL, "backend %s does not implement end", ex->ops->name);
  return ex->ops->end(ex);
}

halo_status halo_exec_mark_start(halo_exec *ex, int on) {
  return ex->ops->mark_start ? ex->ops->mark_start(ex, on) : HALO_SUCCESS;
}

halo_status halo_exec_stream_ordered(const halo_exec *ex, int capture) {
  if (!ex->ops->stream_ordered)
    return HALO_ERROR(HALO_ERR_UNSUPPORTED, "the %s backend runs its exchanges on the host",
                      ex->ops->name);
  return ex->ops->stream_ordered(ex, capture);
}

int halo_exec_unblock(halo_exec *ex, int again) {
  return ex && ex->ops && ex->ops->unblock && ex->data ? ex->ops->unblock(ex, again) : 1;
}

void halo_exec_destroy(halo_exec *ex) {
  if (!ex) return;
  if (ex->ops && ex->ops->destroy) ex->ops->destroy(ex);
  for (int k = 0; k < HALO_MAX_PHASES; k++) {
    halo_free(ex->peer_send[k]);
    halo_free(ex->peer_recv[k]);
  }
  memset(ex, 0, sizeof *ex);
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
