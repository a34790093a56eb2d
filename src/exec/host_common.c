/* What the host transports share: see host_common.h. */
#include <string.h>

#include "exec/host_common.h"

/* A pack from x copies runs of consecutive entries when they are this
 * long on average, else gathers entry by entry. */
#define HOST_PACK_RUN 4

/* A pack from x alone, the common case: 32-bit indices, and the runs of
 * HOST_PACK_RUN or more consecutive entries copied whole (messages of a
 * few long runs are packed at memory speed). */
halo_status halo_host_pack_setup(const halo_schedule *s, halo_host_pack *p) {
  const int64_t n = p->n, *idx = p->src;
  int from_x = n > 0 && s->n_local <= INT32_MAX;
  for (int64_t i = 0; from_x && i < n; i++) from_x = idx[i] < s->n_local;
  if (!from_x) return HALO_SUCCESS;
  HALO_CHECK(HALO_ALLOC(p->x, n));
  for (int64_t i = 0; i < n; i++) p->x[i] = (int32_t)idx[i];
  for (int pass = 0; pass < 2; pass++) {
    int64_t m = 0, gather = 0; /* pieces so far; entries of the open gather piece */
    for (int64_t i = 0, len; i < n; i += len) {
      for (len = 1; i + len < n && idx[i + len] == idx[i] + len;) len++;
      if (len < HOST_PACK_RUN) {
        gather += len;
        continue;
      }
      if (gather && pass) p->piece[m] = (halo_host_piece){-1, gather};
      m += gather > 0;
      gather = 0;
      if (pass) p->piece[m] = (halo_host_piece){idx[i], len};
      m++;
    }
    if (gather && pass) p->piece[m] = (halo_host_piece){-1, gather};
    m += gather > 0;
    if (!pass) {
      p->n_piece = m;
      HALO_CHECK(HALO_ALLOC(p->piece, m));
    }
  }
  HALO_FREE(p->src); /* the pack reads x alone */
  return HALO_SUCCESS;
}

void halo_host_pack_run(const halo_schedule *s, const halo_host_pack *p, const double *x,
                        const double *work, double *buf) {
  if (!p->x) {
    for (int64_t i = 0; i < p->n; i++) buf[i] = halo_host_src_value(s, x, work, p->src[i]);
    return;
  }
  const int32_t *idx = p->x;
  for (int64_t j = 0; j < p->n_piece; j++) {
    const int64_t src = p->piece[j].src, len = p->piece[j].len;
    if (src >= 0) {
      memcpy(buf, x + src, (size_t)len * sizeof *buf);
    } else {
      for (int64_t i = 0; i < len; i++) buf[i] = x[idx[i]];
    }
    buf += len;
    idx += len;
  }
}

void halo_host_pack_free(halo_host_pack *p) {
  halo_free(p->src);
  halo_free(p->x);
  halo_free(p->piece);
  memset(p, 0, sizeof *p);
}

/* The add order of the receive list, cut into runs of consecutive sources
 * (receive buffer, or one side of the source space) and consecutive
 * destinations (one side of the destination space): the adds are the same,
 * in the same order, in tight loops. */
halo_status halo_host_adds_setup(const halo_schedule *s, const halo_phase *ph,
                                 const int64_t *recv_off, halo_host_adds *a) {
  halo_status st = HALO_SUCCESS;
  const int64_t n = ph->recv_total;
  int64_t *src = NULL, *dst = NULL;
  HALO_TRY(HALO_ALLOC(src, n));
  HALO_TRY(HALO_ALLOC(dst, n));
  HALO_TRY(halo_exec_add_order(s, ph, recv_off, src, dst));
  a->n = 0;
  for (int pass = 0; pass < 2; pass++) {
    int64_t m = 0;
    halo_host_seg cur = {0, 0, 0};
    for (int64_t i = 0; i < n; i++) {
      const int64_t x = src[i], y = dst[i];
      const int same_dst = y == cur.dst + cur.len && (y < s->n_ghost) == (cur.dst < s->n_ghost);
      const int same_src = cur.src >= 0 ? x == cur.src + cur.len
                                        : x == cur.src - cur.len &&
                                              (-1 - x < s->n_local) == (-1 - cur.src < s->n_local);
      if (cur.len && same_dst && same_src && (x >= 0) == (cur.src >= 0)) {
        cur.len++;
        continue;
      }
      if (cur.len && pass) a->seg[m] = cur;
      if (cur.len) m++;
      cur = (halo_host_seg){x, y, 1};
    }
    if (cur.len && pass) a->seg[m] = cur;
    if (cur.len) m++;
    if (!pass) {
      a->n = m;
      HALO_TRY(HALO_ALLOC(a->seg, m));
    }
  }
cleanup:
  halo_free(src);
  halo_free(dst);
  return st;
}

void halo_host_adds_run(const halo_schedule *s, const halo_host_adds *a, const double *recvbuf,
                        const double *x, double *to, double *work) {
  for (int64_t g = 0; g < a->n; g++) {
    const halo_host_seg *r = &a->seg[g];
    double *o = halo_host_dst_ptr(s, to, work, r->dst);
    const double *in = r->src >= 0 ? recvbuf + r->src : halo_host_src_ptr(s, x, work, -1 - r->src);
    for (int64_t i = 0; i < r->len; i++) o[i] += in[i];
  }
}

void halo_host_adds_free(halo_host_adds *a) {
  halo_free(a->seg);
  memset(a, 0, sizeof *a);
}

halo_status halo_host_slots_setup(halo_exec *ex) {
  const halo_schedule *s = ex->sched;
  const halo_leaves *L = ex->cfg.leaves;
  const int64_t w = halo_host_words(ex);
  if (!s->add) {
    HALO_CHECK(HALO_CALLOC(ex->ghost, s->n_ghost * w));
    ex->slots = ex->ghost;
    if (!halo_leaves_identity(L)) HALO_CHECK(HALO_CALLOC(ex->slots, L->n * w));
  } else if (!halo_leaves_identity(L)) {
    HALO_CHECK(HALO_CALLOC(ex->ghost, s->n_local * w)); /* the contributions summed per ghost */
  }
  return HALO_SUCCESS;
}

void halo_host_slots_free(halo_exec *ex) {
  if (ex->slots != ex->ghost) halo_free(ex->slots);
  halo_free(ex->ghost);
  ex->ghost = ex->slots = NULL;
}

void halo_host_begin(halo_exec *ex, const double *src, double *dst, double *work,
                     const double **x_p, double **to_p) {
  const halo_schedule *s = ex->sched;
  *x_p = src;
  if (s->add) {
    *x_p = halo_host_slots_sum(ex, src);
    if (s->n_work) memset(work, 0, (size_t)s->n_work * sizeof *work);
  }
  *to_p = !s->add && dst && halo_leaves_identity(ex->cfg.leaves) ? dst : ex->ghost;
}

const double *halo_host_slots_sum(halo_exec *ex, const double *src) {
  const halo_leaves *L = ex->cfg.leaves;
  if (halo_leaves_identity(L)) return src;
  for (int64_t j = 0; j < L->n_ghost; j++) { /* each ghost: the sum of its slots, in slot order */
    double sum = 0.0;
    for (int64_t t = L->ptr[j]; t < L->ptr[j + 1]; t++) sum += src[L->slot[t]];
    ex->ghost[j] = sum;
  }
  return ex->ghost;
}

void halo_host_deliver(halo_exec *ex, const double *ghosts, double *dst) {
  const halo_leaves *L = ex->cfg.leaves;
  double *out = dst ? dst : ex->slots;
  if (!halo_leaves_identity(L)) {
    for (int64_t i = 0; i < L->n; i++) /* a slot of this rank's own entry: the plan's copy */
      if (L->to_ghost[i] >= 0) out[i] = ghosts[L->to_ghost[i]];
  } else if (out != ghosts && ex->sched->n_ghost) {
    memcpy(out, ghosts, (size_t)ex->sched->n_ghost * sizeof *out);
  }
}

/* ---- any unit --------------------------------------------------------------- */

/* Entry i of the source space (x, then the work buffer) and of the
 * destination space (the ghosts, then the work buffer). */
static inline const unsigned char *src_at(const halo_schedule *s, const void *x, const void *work,
                                          int64_t i, int64_t b) {
  return i < s->n_local ? (const unsigned char *)x + i * b
                        : (const unsigned char *)work + (i - s->n_local) * b;
}

static inline unsigned char *dst_at(const halo_schedule *s, void *to, void *work, int64_t i,
                                    int64_t b) {
  return i < s->n_ghost ? (unsigned char *)to + i * b
                        : (unsigned char *)work + (i - s->n_ghost) * b;
}

void halo_host_pack_run_unit(const halo_schedule *s, const halo_host_pack *p, const void *x,
                             const void *work, void *buf, const halo_xunit *u) {
  const int64_t b = u->bytes;
  unsigned char *o = buf;
  if (!p->x) {
    for (int64_t i = 0; i < p->n; i++)
      memcpy(o + i * b, src_at(s, x, work, p->src[i], b), (size_t)b);
    return;
  }
  const int32_t *idx = p->x;
  const unsigned char *xb = x;
  for (int64_t j = 0; j < p->n_piece; j++) {
    const int64_t src = p->piece[j].src, len = p->piece[j].len;
    if (src >= 0) {
      memcpy(o, xb + src * b, (size_t)(len * b));
    } else {
      for (int64_t i = 0; i < len; i++) memcpy(o + i * b, xb + (int64_t)idx[i] * b, (size_t)b);
    }
    o += len * b;
    idx += len;
  }
}

void halo_host_copies_unit(const halo_schedule *s, int64_t n, const int64_t *src,
                           const int64_t *dst, const void *x, void *to, void *work,
                           const halo_xunit *u) {
  const int64_t b = u->bytes;
  for (int64_t i = 0; i < n; i++)
    memcpy(dst_at(s, to, work, dst[i], b), src_at(s, x, work, src[i], b), (size_t)b);
}

void halo_host_unpack_unit(const halo_schedule *s, int64_t n, const int64_t *dst,
                           const void *recvbuf, void *to, void *work, const halo_xunit *u) {
  const int64_t b = u->bytes;
  const unsigned char *in = recvbuf;
  for (int64_t i = 0; i < n; i++) memcpy(dst_at(s, to, work, dst[i], b), in + i * b, (size_t)b);
}

/* A phase's adds of scalars of type T, inline: most runs are one entry long
 * (the owners' entries are scattered), where a call per run would cost as much
 * as the adds. */
#define ADDS_RUN(T)                                                                                \
  for (int64_t g = 0; g < a->n; g++) {                                                             \
    const halo_host_seg *r = &a->seg[g];                                                           \
    const T *in = (const T *)(r->src >= 0 ? (const unsigned char *)recvbuf + r->src * b            \
                                          : src_at(s, x, work, -1 - r->src, b));                   \
    T *o = (T *)dst_at(s, to, work, r->dst, b);                                                    \
    const int64_t m = r->len * per;                                                                \
    for (int64_t i = 0; i < m; i++) o[i] += in[i];                                                 \
  }

void halo_host_adds_run_unit(const halo_schedule *s, const halo_host_adds *a, const void *recvbuf,
                             const void *x, void *to, void *work, const halo_xunit *u) {
  const int64_t b = u->bytes, per = u->per;
  if (u->op == HALO_OP_INSERT) {
    for (int64_t g = 0; g < a->n; g++) {
      const halo_host_seg *r = &a->seg[g];
      const void *in = r->src >= 0 ? (const unsigned char *)recvbuf + r->src * b
                                   : src_at(s, x, work, -1 - r->src, b);
      memcpy(dst_at(s, to, work, r->dst, b), in, (size_t)(r->len * b));
    }
    return;
  }
  switch (u->scalar) {
  case HALO_TYPE_FLOAT: ADDS_RUN(float) break;
  case HALO_TYPE_INT32: ADDS_RUN(int32_t) break;
  case HALO_TYPE_INT64: ADDS_RUN(int64_t) break;
  default: ADDS_RUN(double) break;
  }
}

const void *halo_host_slots_sum_unit(halo_exec *ex, const void *src) {
  const halo_leaves *L = ex->cfg.leaves;
  const halo_xunit *u = &ex->unit;
  const int64_t b = u->bytes;
  if (halo_leaves_identity(L)) return src;
  unsigned char *g = (unsigned char *)ex->ghost;
  const unsigned char *in = src;
  for (int64_t j = 0; j < L->n_ghost; j++) { /* each ghost: its slots in slot order */
    unsigned char *o = g + j * b;
    if (u->op == HALO_OP_ADD) memset(o, 0, (size_t)b);
    for (int64_t t = L->ptr[j]; t < L->ptr[j + 1]; t++)
      halo_xunit_apply(u, o, in + L->slot[t] * b, 1);
  }
  return ex->ghost;
}

void halo_host_deliver_unit(halo_exec *ex, const void *ghosts, void *dst) {
  const halo_leaves *L = ex->cfg.leaves;
  const halo_xunit *u = &ex->unit;
  const int64_t b = u->bytes;
  unsigned char *out = dst ? dst : (void *)ex->slots;
  const unsigned char *in = ghosts;
  if (!halo_leaves_identity(L)) {
    for (int64_t i = 0; i < L->n; i++)
      if (L->to_ghost[i] >= 0) halo_xunit_apply(u, out + i * b, in + L->to_ghost[i] * b, 1);
  } else if (out != in) {
    halo_xunit_apply(u, out, in, ex->sched->n_ghost);
  }
}

/* ---- an exchange's steps, for the unit in flight ---------------------------- */

halo_status halo_host_start(halo_exec *ex, const void *src, void *dst, double *work,
                            double **addbuf_p, const double **x_p, double **to_p) {
  const halo_schedule *s = ex->sched;
  const halo_xunit *u = &ex->unit;
  if (u->is_default) {
    halo_host_begin(ex, src, dst, work, x_p, to_p);
    return HALO_SUCCESS;
  }
  if (s->add) {
    *x_p = halo_host_slots_sum_unit(ex, src);
    if (s->n_work) memset(work, 0, (size_t)(s->n_work * u->bytes));
    *to_p = ex->ghost;
    return HALO_SUCCESS;
  }
  *x_p = src;
  if (u->op == HALO_OP_ADD) {
    if (!*addbuf_p && s->n_ghost)
      HALO_CHECK(HALO_CALLOC(*addbuf_p, s->n_ghost * halo_host_words(ex)));
    *to_p = *addbuf_p;
  } else {
    *to_p = dst && halo_leaves_identity(ex->cfg.leaves) ? dst : ex->ghost;
  }
  return HALO_SUCCESS;
}

void halo_host_send(const halo_exec *ex, const halo_host_pack *p, double *sendbuf, int64_t n_copy,
                    const int64_t *copy_src, const int64_t *copy_dst, const double *x, double *to,
                    double *work) {
  const halo_schedule *s = ex->sched;
  if (ex->unit.is_default) {
    halo_host_pack_run(s, p, x, work, sendbuf);
    halo_host_copies(s, n_copy, copy_src, copy_dst, x, to, work);
  } else {
    halo_host_pack_run_unit(s, p, x, work, sendbuf, &ex->unit);
    halo_host_copies_unit(s, n_copy, copy_src, copy_dst, x, to, work, &ex->unit);
  }
}

void halo_host_receive(const halo_exec *ex, const halo_host_adds *a, int64_t n,
                       const int64_t *unpack, const void *recvbuf, const double *x, double *to,
                       double *work) {
  const halo_schedule *s = ex->sched;
  if (!ex->unit.is_default) {
    if (s->add)
      halo_host_adds_run_unit(s, a, recvbuf, x, to, work, &ex->unit);
    else
      halo_host_unpack_unit(s, n, unpack, recvbuf, to, work, &ex->unit);
  } else if (s->add) {
    halo_host_adds_run(s, a, recvbuf, x, to, work);
  } else {
    const double *in = recvbuf;
    for (int64_t i = 0; i < n; i++) *halo_host_dst_ptr(s, to, work, unpack[i]) = in[i];
  }
}

void halo_host_finish(halo_exec *ex, const double *ghosts, double *dst) {
  if (ex->sched->add) return;
  if (ex->unit.is_default)
    halo_host_deliver(ex, ghosts, dst);
  else
    halo_host_deliver_unit(ex, ghosts, dst);
}

halo_status halo_host_entry_type(int64_t b, MPI_Datatype *dt) {
  halo_host_entry_type_free(dt);
  *dt = MPI_DOUBLE;
  if (b == 8) return HALO_SUCCESS;
  HALO_MPI(MPI_Type_contiguous((int)b, MPI_BYTE, dt)); /* freed by the next call or _free */
  HALO_MPI(MPI_Type_commit(dt));
  return HALO_SUCCESS;
}

void halo_host_entry_type_free(MPI_Datatype *dt) {
  if (*dt != MPI_DOUBLE && *dt != MPI_DATATYPE_NULL) MPI_Type_free(dt);
  *dt = MPI_DATATYPE_NULL;
}
