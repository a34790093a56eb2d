/* Schedules: checks, reversal, statistics and the flat form. */
#include <stdlib.h>
#include <string.h>

#include "plan/schedule.h"

void halo_schedule_free(halo_schedule *s) {
  if (!s) return;
  for (int k = 0; k < HALO_MAX_PHASES; k++) {
    halo_phase *ph = &s->phase[k];
    halo_free(ph->send);
    halo_free(ph->pack);
    halo_free(ph->recv);
    halo_free(ph->unpack);
  }
  memset(s, 0, sizeof *s);
}

/* Messages of one direction of phase k: peers in range, non-empty, offsets
 * tiling [0, total). Several messages may share a peer: they match the
 * peer's in order. */
static halo_status check_msgs(const char *dir, int k, const halo_msg *m, int n, int64_t total,
                              int size) {
  int64_t off = 0;
  for (int i = 0; i < n; i++) {
    if (m[i].peer < 0 || m[i].peer >= size)
      return HALO_ERROR(HALO_ERR_INTERNAL, "phase %d: %s %d has peer %d outside [0, %d)", k, dir, i,
                        m[i].peer, size);
    if (m[i].count <= 0)
      return HALO_ERROR(HALO_ERR_INTERNAL, "phase %d: %s %d to %d is empty", k, dir, i, m[i].peer);
    if (m[i].offset != off)
      return HALO_ERROR(HALO_ERR_INTERNAL, "phase %d: %s %d starts at %lld, expected %lld", k, dir,
                        i, (long long)m[i].offset, (long long)off);
    off += m[i].count;
  }
  if (off != total)
    return HALO_ERROR(HALO_ERR_INTERNAL, "phase %d: %ss hold %lld values, buffer has %lld", k, dir,
                      (long long)off, (long long)total);
  return HALO_SUCCESS;
}

_Static_assert(HALO_MAX_PHASES < 255, "a phase (+1) is kept in a byte");

/* Add schedules: the last phase (+1) that adds into each work entry, so
 * that a read can be checked against every later add. Indices out of range
 * are left to the phase loop, which reports them in order. */
static void last_adds(const halo_schedule *s, unsigned char *last) {
  for (int k = 0; k < s->n_phases; k++)
    for (int64_t i = 0; i < s->phase[k].recv_total; i++) {
      const int64_t x = s->phase[k].unpack[i];
      if (x >= s->n_ghost && x < s->n_ghost + s->n_work)
        last[x - s->n_ghost] = (unsigned char)(k + 1);
    }
}

halo_status halo_schedule_check(const halo_schedule *s) {
  halo_status st = HALO_SUCCESS;
  /* a byte per entry (phases are at most HALO_MAX_PHASES): fewer pages to map */
  unsigned char *written = NULL;  /* add = 0: phase+1 that wrote each destination entry, or 0 */
  unsigned char *last_add = NULL; /* add = 1: last phase+1 that adds into each work entry, or 0 */
  char *read = NULL;              /* add = 1: whether each work entry was read */
  const int64_t n_dst = s->n_ghost + s->n_work, n_src = s->n_local + s->n_work;
  if (s->n_phases < 1 || s->n_phases > HALO_MAX_PHASES)
    return HALO_ERROR(HALO_ERR_INTERNAL, "schedule has %d phases", s->n_phases);
  if (s->n_local < 0 || s->n_ghost < 0 || s->n_work < 0)
    return HALO_ERROR(HALO_ERR_INTERNAL, "schedule has negative sizes");
  if (s->rank < 0 || s->rank >= s->size)
    return HALO_ERROR(HALO_ERR_INTERNAL, "schedule of rank %d of %d", s->rank, s->size);
  if (s->add != 0 && s->add != 1)
    return HALO_ERROR(HALO_ERR_INTERNAL, "schedule has add = %d: 0 (write) or 1 (add)", s->add);
  if (s->add) {
    HALO_TRY(HALO_CALLOC(last_add, s->n_work));
    HALO_TRY(HALO_CALLOC(read, s->n_work));
    last_adds(s, last_add);
  } else {
    HALO_TRY(HALO_CALLOC(written, n_dst));
  }
  for (int k = 0; k < s->n_phases; k++) {
    const halo_phase *ph = &s->phase[k];
    if (ph->scope != HALO_SCOPE_GLOBAL && ph->scope != HALO_SCOPE_NODE)
      HALO_FAIL(HALO_ERR_INTERNAL, "phase %d has scope %d", k, (int)ph->scope);
    HALO_TRY(check_msgs("send", k, ph->send, ph->n_send, ph->send_total, s->size));
    HALO_TRY(check_msgs("receive", k, ph->recv, ph->n_recv, ph->recv_total, s->size));
    for (int64_t i = 0; i < ph->send_total; i++) {
      int64_t x = ph->pack[i];
      if (x < 0 || x >= n_src)
        HALO_FAIL(HALO_ERR_INTERNAL, "phase %d: pack index %lld out of [0, %lld)", k, (long long)x,
                  (long long)n_src);
      if (x < s->n_local) continue;
      const int64_t w = x - s->n_local;
      if (s->add) { /* after its last add, once */
        if (last_add[w] > k)
          HALO_FAIL(HALO_ERR_INTERNAL,
                    "phase %d reads work entry %lld, which phase %d adds into: reads come after "
                    "every add",
                    k, (long long)w, last_add[w] - 1);
        if (read[w])
          HALO_FAIL(HALO_ERR_INTERNAL, "phase %d reads work entry %lld a second time", k,
                    (long long)w);
        read[w] = 1;
      } else if (written[s->n_ghost + w] == 0 || written[s->n_ghost + w] > k) {
        HALO_FAIL(HALO_ERR_INTERNAL, "phase %d reads work entry %lld before it is written", k,
                  (long long)w);
      }
    }
    for (int64_t i = 0; i < ph->recv_total; i++) {
      int64_t x = ph->unpack[i];
      if (x < 0 || x >= n_dst)
        HALO_FAIL(HALO_ERR_INTERNAL, "phase %d: unpack index %lld out of [0, %lld)", k,
                  (long long)x, (long long)n_dst);
      if (s->add) continue; /* any number of adds */
      if (written[x])
        HALO_FAIL(HALO_ERR_INTERNAL, "phase %d writes %s entry %lld a second time", k,
                  x < s->n_ghost ? "ghost" : "work",
                  (long long)(x < s->n_ghost ? x : x - s->n_ghost));
      written[x] = (unsigned char)(k + 1);
    }
    /* Copies to itself: the sends and the receives with peer = rank agree. */
    int64_t self_send = 0, self_recv = 0;
    for (int i = 0; i < ph->n_send; i++)
      if (ph->send[i].peer == s->rank) self_send += ph->send[i].count;
    for (int i = 0; i < ph->n_recv; i++)
      if (ph->recv[i].peer == s->rank) self_recv += ph->recv[i].count;
    if (self_send != self_recv)
      HALO_FAIL(HALO_ERR_INTERNAL, "phase %d: the copy to itself has no matching receive", k);
  }
  if (!s->add) /* an add schedule may leave an owner's entry as it is */
    for (int64_t x = 0; x < s->n_ghost; x++)
      if (!written[x]) HALO_FAIL(HALO_ERR_INTERNAL, "ghost %lld is never received", (long long)x);
cleanup:
  halo_free(read);
  halo_free(last_add);
  halo_free(written);
  return st;
}

/* ---- reversal ------------------------------------------------------------- */

/* A new copy of n elements of size bytes each (NULL for none). */
static halo_status copy_array(void **dst_p, const void *src, int64_t n, size_t size) {
  HALO_CHECK(halo_alloc_array(dst_p, (size_t)n, size, 0));
  if (n > 0) memcpy(*dst_p, src, (size_t)n * size);
  return HALO_SUCCESS;
}

halo_status halo_schedule_reverse(const halo_schedule *s, halo_schedule *r) {
  halo_status st = HALO_SUCCESS;
  if (r == s)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_schedule_reverse: the reverse cannot replace "
                                            "its schedule (give another)");
  memset(r, 0, sizeof *r);
  if (s->add)
    return HALO_ERROR(HALO_ERR_INTERNAL,
                      "rank %d: the schedule is already reversed (it adds): reverse the original",
                      s->rank);
  if (s->n_phases < 1 || s->n_phases > HALO_MAX_PHASES)
    return HALO_ERROR(HALO_ERR_INTERNAL, "schedule has %d phases", s->n_phases);
  r->strategy = s->strategy;
  r->rank = s->rank, r->size = s->size;
  r->n_local = s->n_ghost, r->n_ghost = s->n_local, r->n_work = s->n_work;
  r->message_cap_used = s->message_cap_used;
  r->add = 1;
  r->n_phases = s->n_phases;
  for (int k = 0; k < s->n_phases; k++) {
    const halo_phase *f = &s->phase[s->n_phases - 1 - k];
    halo_phase *g = &r->phase[k];
    g->scope = f->scope;
    g->n_send = f->n_recv, g->send_total = f->recv_total;
    g->n_recv = f->n_send, g->recv_total = f->send_total;
    HALO_TRY(copy_array((void **)&g->send, f->recv, f->n_recv, sizeof *f->recv));
    HALO_TRY(copy_array((void **)&g->pack, f->unpack, f->recv_total, sizeof *f->unpack));
    HALO_TRY(copy_array((void **)&g->recv, f->send, f->n_send, sizeof *f->send));
    HALO_TRY(copy_array((void **)&g->unpack, f->pack, f->send_total, sizeof *f->pack));
  }
cleanup:
  if (st != HALO_SUCCESS) halo_schedule_free(r);
  return st;
}

typedef struct {
  int from, to;
  int64_t ordinal; /* list position, then position among the messages of the pair */
  int64_t count;
} edge;

static int cmp_edge(const void *a, const void *b) {
  const edge *x = a, *y = b;
  if (x->from != y->from) return (x->from > y->from) - (x->from < y->from);
  if (x->to != y->to) return (x->to > y->to) - (x->to < y->to);
  if (x->ordinal != y->ordinal) return (x->ordinal > y->ordinal) - (x->ordinal < y->ordinal);
  return (x->count > y->count) - (x->count < y->count);
}

/* Number the messages of each pair in list order: sort by (from, to, list
 * position), then replace the position by the ordinal within the pair. */
static void number_edges(edge *e, int64_t n) {
  if (n > 1) qsort(e, (size_t)n, sizeof *e, cmp_edge);
  for (int64_t i = 0, j = 0; i < n; i++) {
    if (i > 0 && (e[i].from != e[i - 1].from || e[i].to != e[i - 1].to)) j = i;
    e[i].ordinal = i - j;
  }
}

halo_status halo_schedules_check_matching(const halo_schedule *s, int P) {
  halo_status st = HALO_SUCCESS;
  edge *sends = NULL, *recvs = NULL;
  int n_phases = s[0].n_phases;
  for (int r = 0; r < P; r++) {
    if (s[r].n_phases != n_phases || s[r].rank != r || s[r].size != P)
      return HALO_ERROR(HALO_ERR_INTERNAL, "schedule of rank %d: %d phases (rank 0 has %d)", r,
                        s[r].n_phases, n_phases);
    if (s[r].add != s[0].add)
      return HALO_ERROR(HALO_ERR_INTERNAL, "schedule of rank %d %s its receives, rank 0's %s", r,
                        s[r].add ? "adds" : "writes", s[0].add ? "adds" : "writes");
  }
  for (int k = 0; k < n_phases; k++) {
    int64_t ns = 0, nr = 0;
    for (int r = 0; r < P; r++) {
      ns += s[r].phase[k].n_send;
      nr += s[r].phase[k].n_recv;
      if (s[r].phase[k].scope != s[0].phase[k].scope)
        HALO_FAIL(HALO_ERR_INTERNAL, "phase %d: rank %d has another scope than rank 0", k, r);
    }
    if (ns != nr)
      HALO_FAIL(HALO_ERR_INTERNAL, "phase %d: %lld sends but %lld receives", k, (long long)ns,
                (long long)nr);
    HALO_TRY(HALO_ALLOC(sends, ns));
    HALO_TRY(HALO_ALLOC(recvs, nr));
    int64_t a = 0, b = 0;
    for (int r = 0; r < P; r++) {
      const halo_phase *ph = &s[r].phase[k];
      for (int i = 0; i < ph->n_send; i++, a++)
        sends[a] = (edge){r, ph->send[i].peer, a, ph->send[i].count};
      for (int i = 0; i < ph->n_recv; i++, b++)
        recvs[b] = (edge){ph->recv[i].peer, r, b, ph->recv[i].count};
    }
    number_edges(sends, ns);
    number_edges(recvs, nr);
    for (int64_t i = 0; i < ns; i++)
      if (cmp_edge(&sends[i], &recvs[i]) != 0)
        HALO_FAIL(HALO_ERR_INTERNAL,
                  "phase %d: rank %d sends %lld values to rank %d, which expects another message",
                  k, sends[i].from, (long long)sends[i].count, sends[i].to);
    HALO_FREE(sends);
    HALO_FREE(recvs);
  }
cleanup:
  halo_free(recvs);
  halo_free(sends);
  return st;
}

void halo_phase_count(const halo_phase *ph, int rank, int my_node, const int *node_of_send,
                      halo_phase_counts *c) {
  memset(c, 0, sizeof *c);
  for (int i = 0; i < ph->n_send; i++) {
    if (ph->send[i].peer == rank) continue;
    int64_t bytes = ph->send[i].count * (int64_t)sizeof(double);
    c->messages++;
    c->bytes += bytes;
    if (bytes > c->max_message_bytes) c->max_message_bytes = bytes;
    if (node_of_send[i] != my_node) {
      c->inter_node_messages++;
      c->inter_node_bytes += bytes;
    }
  }
}

/* ---- flat form ----------------------------------------------------------- */

static halo_status pack_msgs(const halo_msg *m, int n, halo_vec *out) {
  for (int i = 0; i < n; i++) {
    HALO_CHECK(halo_vec_push(out, m[i].peer));
    HALO_CHECK(halo_vec_push(out, m[i].offset));
    HALO_CHECK(halo_vec_push(out, m[i].count));
  }
  return HALO_SUCCESS;
}

halo_status halo_schedule_pack(const halo_schedule *s, halo_vec *out) {
  const int64_t head[] = {s->strategy,         s->rank,     s->size,
                          s->n_local,          s->n_ghost,  s->n_work,
                          s->message_cap_used, s->n_phases, s->add};
  HALO_CHECK(halo_vec_append(out, head, 9));
  for (int k = 0; k < s->n_phases; k++) {
    const halo_phase *ph = &s->phase[k];
    const int64_t a[] = {ph->scope, ph->n_send, ph->send_total, ph->n_recv, ph->recv_total};
    HALO_CHECK(halo_vec_append(out, a, 5));
    HALO_CHECK(pack_msgs(ph->send, ph->n_send, out));
    HALO_CHECK(halo_vec_append(out, ph->pack, ph->send_total));
    HALO_CHECK(pack_msgs(ph->recv, ph->n_recv, out));
    HALO_CHECK(halo_vec_append(out, ph->unpack, ph->recv_total));
  }
  return HALO_SUCCESS;
}

#define NEED(k)                                                                                    \
  do {                                                                                             \
    if (*pos + (k) > n || (k) < 0)                                                                 \
      HALO_FAIL(HALO_ERR_INTERNAL, "a packed schedule ends too early");                            \
  } while (0)

static halo_status unpack_msgs(const int64_t *buf, int64_t n, int64_t *pos, int count,
                               halo_msg **m_p) {
  halo_status st = HALO_SUCCESS;
  NEED(3 * (int64_t)count);
  HALO_TRY(HALO_ALLOC(*m_p, count));
  for (int i = 0; i < count; i++, *pos += 3)
    (*m_p)[i] = (halo_msg){(int)buf[*pos], buf[*pos + 1], buf[*pos + 2]};
cleanup:
  return st;
}

static halo_status unpack_i64(const int64_t *buf, int64_t n, int64_t *pos, int64_t count,
                              int64_t **v_p) {
  halo_status st = HALO_SUCCESS;
  NEED(count);
  HALO_TRY(HALO_ALLOC(*v_p, count));
  if (count) memcpy(*v_p, buf + *pos, (size_t)count * sizeof **v_p);
  *pos += count;
cleanup:
  return st;
}

halo_status halo_schedule_unpack(const int64_t *buf, int64_t n, int64_t *pos, halo_schedule *s) {
  halo_status st = HALO_SUCCESS;
  memset(s, 0, sizeof *s);
  NEED(9);
  const int64_t *h = buf + *pos;
  if (h[7] < 1 || h[7] > HALO_MAX_PHASES)
    HALO_FAIL(HALO_ERR_INTERNAL, "a packed schedule has %lld phases", (long long)h[7]);
  s->strategy = (halo_strategy)h[0], s->rank = (int)h[1], s->size = (int)h[2];
  s->n_local = h[3], s->n_ghost = h[4], s->n_work = h[5], s->message_cap_used = h[6];
  s->n_phases = (int)h[7];
  s->add = (int)h[8];
  *pos += 9;
  for (int k = 0; k < s->n_phases; k++) {
    halo_phase *ph = &s->phase[k];
    NEED(5);
    const int64_t *a = buf + *pos;
    ph->scope = (halo_scope)a[0];
    ph->n_send = (int)a[1], ph->send_total = a[2], ph->n_recv = (int)a[3], ph->recv_total = a[4];
    *pos += 5;
    HALO_TRY(unpack_msgs(buf, n, pos, ph->n_send, &ph->send));
    HALO_TRY(unpack_i64(buf, n, pos, ph->send_total, &ph->pack));
    HALO_TRY(unpack_msgs(buf, n, pos, ph->n_recv, &ph->recv));
    HALO_TRY(unpack_i64(buf, n, pos, ph->recv_total, &ph->unpack));
  }
cleanup:
  if (st != HALO_SUCCESS) halo_schedule_free(s);
  return st;
}
#undef NEED
