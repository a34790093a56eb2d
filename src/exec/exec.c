/* Executor core: peers per scope, tags, dispatch to the backend. What the
 * transports' executors share (waits, request numbers, additions) is
 * exec_util.c, below the registry. */
#include <string.h>

#include "exec/exec.h"
#include "exec/transport.h"

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
  ex->unit = (halo_xunit){8, HALO_TYPE_DOUBLE, 1, ex->sched->add ? HALO_OP_ADD : HALO_OP_INSERT, 1};
  return ex->ops->begin(ex, src, dst);
}

int halo_xunit_make(halo_unit u, halo_op op, int reverse, halo_xunit *x) {
  static const int64_t size[] = {8, 4, 16, 4, 8, 1};
  static const int scalar[] = {HALO_TYPE_DOUBLE, HALO_TYPE_FLOAT, HALO_TYPE_DOUBLE,
                               HALO_TYPE_INT32,  HALO_TYPE_INT64, HALO_TYPE_BYTE};
  if ((int)u.type < 0 || (int)u.type > HALO_TYPE_BYTE || u.k < 1 ||
      (op != HALO_OP_INSERT && op != HALO_OP_ADD) ||
      (u.type == HALO_TYPE_BYTE && op == HALO_OP_ADD))
    return -1;
  x->bytes = size[u.type] * u.k;
  x->scalar = scalar[u.type];
  x->per = (int64_t)u.k * (u.type == HALO_TYPE_COMPLEX_DOUBLE ? 2 : 1);
  x->op = op;
  x->is_default = u.type == HALO_TYPE_DOUBLE && u.k == 1 && (int)op == (reverse ? 1 : 0);
  return 0;
}

halo_status halo_exec_unit_ok(const halo_exec *ex, const halo_xunit *u) {
  if (u->is_default) return HALO_SUCCESS;
  if (!ex->ops || !ex->ops->units)
    return HALO_ERROR(HALO_ERR_UNSUPPORTED,
                      "the %s executor moves one double per entry, forward inserting and "
                      "reverse adding, only",
                      ex->ops ? ex->ops->name : "?");
  if (u->bytes > ex->cfg.unit_max)
    return HALO_ERROR(HALO_ERR_INVALID_ARG,
                      "a unit of %lld bytes, above the plan's exec.unit_max_bytes (%lld): make the "
                      "plan with a larger exec.unit_max_bytes setting",
                      (long long)u->bytes, (long long)ex->cfg.unit_max);
  return ex->ops->unit_ok ? ex->ops->unit_ok(ex, u) : HALO_SUCCESS;
}

halo_status halo_exec_begin_unit(halo_exec *ex, const halo_xunit *u, const void *src, void *dst) {
  if (u->is_default) return halo_exec_begin(ex, src, dst);
  HALO_CHECK(halo_exec_unit_ok(ex, u));
  ex->unit = *u;
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
