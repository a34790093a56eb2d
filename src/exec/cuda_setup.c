/* Set-up of the CUDA executor: everything an exchange uses is made here, at
 * plan time (the run is in cuda_exec.c). */
#include "halo_impl.h"

#if HALO_HAVE_CUDA
#include <stdlib.h>
#include <string.h>

#include "exec/cuda_exec.h"

static halo_status check_int32(int64_t v, const char *what) {
  if (v > INT32_MAX)
    return HALO_ERROR(HALO_ERR_OUT_OF_RANGE, "%s of %lld entries: device maps hold 32-bit indices",
                      what, (long long)v);
  return HALO_SUCCESS;
}

/* Whether n unpack indices land on consecutive entries of one region; the
 * first entry (of the destination space) if so, else -1 (never in an add
 * schedule). */
static int64_t run_target(const halo_exec *ex, const int64_t *idx, int64_t n) {
  return halo_exec_is_run(S(ex), idx, n) ? idx[0] : -1;
}

/* The set-up's temporaries in the device's scratch (halo_device_scratch): a
 * later plan writes them into pages the last one faulted in. */
enum { SCRATCH_IDX, SCRATCH_SRC, SCRATCH_MAPS }; /* the maps' pinned, for their upload */

/* The index maps of an executor, gathered on the host while it is set up
 * and uploaded at its end in one allocation and one copy: each map's device
 * pointer is set then (set-up time is mostly such calls). */
typedef struct {
  int32_t *host;
  int64_t n, cap;
  int borrowed; /* host is the device's scratch (not freed here) */
  int n_fix, cap_fix;
  struct {
    int32_t **at;
    int64_t off;
  } * fix;
} map_batch;

/* Room for n more values, without moving the batch again below that. */
static halo_status map_reserve(map_batch *b, int64_t n) {
  if (b->n + n <= b->cap) return HALO_SUCCESS;
  int64_t cap = b->cap ? 2 * b->cap : 4096;
  while (cap < b->n + n) cap *= 2;
  int32_t *q = halo_realloc(b->borrowed ? NULL : b->host, (size_t)cap * sizeof *q);
  if (!q) return HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "out of memory gathering index maps");
  if (b->borrowed && b->n) memcpy(q, b->host, (size_t)b->n * sizeof *q); /* out of the scratch */
  b->host = q, b->cap = cap, b->borrowed = 0;
  return HALO_SUCCESS;
}

/* A map of the n values v (NULL: room for n, filled on the device), at *d
 * once uploaded. */
static halo_status map_add(map_batch *b, int32_t **d, const int64_t *v, int64_t n) {
  *d = NULL;
  if (n == 0) return HALO_SUCCESS;
  HALO_CHECK(map_reserve(b, n));
  if (b->n_fix == b->cap_fix) {
    int cap = b->cap_fix ? 2 * b->cap_fix : 16;
    void *q = halo_realloc(b->fix, (size_t)cap * sizeof *b->fix);
    if (!q) return HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "out of memory gathering index maps");
    b->fix = q, b->cap_fix = cap;
  }
  if (v)
    for (int64_t i = 0; i < n; i++) b->host[b->n + i] = (int32_t)v[i];
  b->fix[b->n_fix].at = d;
  b->fix[b->n_fix++].off = b->n;
  b->n += n;
  return HALO_SUCCESS;
}

/* A map of n values the caller writes at *host (valid until the next map
 * added), at *d once uploaded. */
static halo_status map_take(map_batch *b, int32_t **d, int64_t n, int32_t **host) {
  *host = NULL;
  HALO_CHECK(map_add(b, d, NULL, n));
  if (n) *host = b->host + b->fix[b->n_fix - 1].off;
  return HALO_SUCCESS;
}

/* The last map added, taken back (*d: its pointer, NULL again). */
static void map_drop_last(map_batch *b, int32_t **d) {
  if (!b->n_fix || b->fix[b->n_fix - 1].at != d) return;
  b->n = b->fix[--b->n_fix].off;
  *d = NULL;
}

/* One allocation (*dev_p), one copy, and every map's pointer into it. */
static halo_status map_upload(map_batch *b, int32_t **dev_p) {
  HALO_CHECK(halo_dev_malloc((void **)dev_p, (size_t)b->n * sizeof(int32_t)));
  HALO_CHECK(halo_host_to_dev(*dev_p, b->host, (size_t)b->n * sizeof(int32_t)));
  for (int i = 0; i < b->n_fix; i++) *b->fix[i].at = *dev_p + b->fix[i].off;
  return HALO_SUCCESS;
}

static void map_batch_free(map_batch *b) {
  if (!b->borrowed) halo_free(b->host);
  halo_free(b->fix);
  memset(b, 0, sizeof *b);
}

/* The transport that gives the plan's messages their channels: the one that
 * serves the plan's transport, else the first (staged, on the host). */
static const cuda_transport *plan_transport(halo_transport t) {
  for (int i = 0; i < HALO_CUDA_N_TRANSPORTS; i++)
    for (int j = 0; j < 2; j++)
      if (halo_cuda_transports[i]->serves[j] && halo_cuda_transports[i]->serves[j] == t)
        return halo_cuda_transports[i];
  return halo_cuda_transports[0];
}

/* Each transport's private state: one allocation, the executor's part, then
 * each phase's (zeroed). */
static halo_status state_alloc(cuda_data *d) {
  for (int t = 0; t < HALO_CUDA_N_TRANSPORTS; t++) {
    const cuda_transport *tr = halo_cuda_transports[t];
    const size_t a = 16, eb = (tr->exec_bytes + a - 1) / a * a,
                 pb = (tr->phase_bytes + a - 1) / a * a;
    d->tx_of[t] = tr;
    if (eb + pb == 0) continue;
    char *b = halo_calloc(1, eb + HALO_MAX_PHASES * pb);
    if (!b) return HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "out of memory creating the CUDA executor");
    d->tx[t] = b;
    for (int k = 0; k < HALO_MAX_PHASES; k++) d->ph[k].tp[t] = pb ? b + eb + k * pb : NULL;
  }
  return HALO_SUCCESS;
}

void halo_cuda_exec_destroy(halo_exec *ex) {
  cuda_data *d = ex->data;
  if (!d) return;
  for (int t = 0; t < HALO_CUDA_N_TRANSPORTS; t++)
    if (halo_cuda_transports[t]->destroy) halo_cuda_transports[t]->destroy(ex, d);
  for (int t = 0; t < HALO_CUDA_N_TRANSPORTS; t++) halo_free(d->tx[t]);
  for (int k = 0; k < HALO_MAX_PHASES; k++) {
    cphase *p = &d->ph[k];
    halo_free(p->send);
    halo_free(p->recv);
    halo_free(p->h_add_src);
    halo_free(p->h_add_dst);
    halo_dev_free(p->d_recv);
  }
  if (d->ev_start) cudaEventDestroy(d->ev_start);
  if (d->ev_end) cudaEventDestroy(d->ev_end);
  if (d->ev_dst) cudaEventDestroy(d->ev_dst);
  halo_free(d->peer_host_fwd);
  halo_device_ipc_release(ex->cfg.dev, d->arena, d->arena_bytes);
  halo_dev_free(d->maps);
  if (d->host_fwd)
    halo_device_pinned_release(ex->cfg.dev, d->work,
                               (size_t)(S(ex)->n_work * d->W) * sizeof(double));
  else
    halo_dev_free(d->work);
  halo_dev_free(d->fadd);
  if (ex->slots != ex->ghost) halo_dev_free(ex->slots);
  halo_dev_free(ex->ghost);
  ex->ghost = ex->slots = NULL;
  halo_free(d);
  ex->data = NULL;
}

/* Each receive's place in its phase's receive buffer (n_recv of them, at
 * least one allocated). */
static halo_status recv_offsets(const cphase *p, const halo_phase *ph, int64_t **off_p) {
  HALO_CHECK(HALO_ALLOC(*off_p, ph->n_recv > 0 ? ph->n_recv : 1));
  for (int i = 0; i < ph->n_recv; i++) (*off_p)[i] = p->recv[i].buf_off;
  return HALO_SUCCESS;
}

/* Reverse, on a GPU rank: phase k's additions, in receive list order (the
 * position of each value in the receive buffer, d_recv, or -1 - its source
 * index for a copy to itself), written into the maps' batch, to be grouped by
 * destination on the device once uploaded (group_adds; each destination's
 * values kept in receive list order). */
static halo_status setup_adds_device(const halo_exec *ex, cphase *p, const halo_phase *ph,
                                     map_batch *mb) {
  halo_status st = HALO_SUCCESS;
  int64_t *off = NULL;
  int32_t *src = NULL, *dst = NULL;
  const int64_t n = ph->recv_total;
  if (n == 0) return HALO_SUCCESS;
  HALO_TRY(check_int32(n, "a phase's additions"));
  HALO_TRY(recv_offsets(p, ph, &off));
  HALO_TRY(map_reserve(mb, 3 * n + 1));           /* the three maps' pointers stay put */
  HALO_TRY(map_take(mb, &p->d_add_dst, n, &dst)); /* grouped: the first n_add_u */
  HALO_TRY(map_take(mb, &p->d_add_ref, n, &src));
  int64_t most = 0;
  HALO_TRY(halo_exec_add_order32(S(ex), ph, off, src, dst, &most));
  p->add_end_bit = 1;
  while (p->add_end_bit < 31 && (most >> p->add_end_bit) != 0) p->add_end_bit++;
  p->n_add_group = n;
  HALO_TRY(map_add(mb, &p->d_add_ptr, NULL, n + 1)); /* room: n_add_u + 1 <= n + 1 */
cleanup:
  halo_free(off);
  return st;
}

/* ... and grouped: the distinct destinations, their offsets, the references
 * in that order (a stable sort on the device). */
static halo_status group_adds(halo_exec *ex, cuda_data *d) {
  for (int k = 0; k < S(ex)->n_phases; k++) {
    cphase *p = &d->ph[k];
    if (!p->n_add_group) continue;
    HALO_CUDA(halo_cuda_group_adds(p->d_add_dst, p->d_add_ref, p->n_add_group, p->add_end_bit,
                                   p->d_add_ptr, &p->n_add_u, d->xs));
    p->n_add_group = 0;
  }
  return HALO_SUCCESS;
}

/* The ghost slots, when they are not the schedule's ghosts: forward, the
 * executor's own slots and the gather map; reverse, the sums' maps. */
static halo_status setup_slots(halo_exec *ex, cuda_data *d, map_batch *mb) {
  halo_status st = HALO_SUCCESS;
  const halo_leaves *L = ex->cfg.leaves;
  if (halo_leaves_identity(L)) return HALO_SUCCESS;
  HALO_CHECK(check_int32(L->n, "the ghost slots"));
  if (!S(ex)->add) {
    HALO_CHECK(halo_dev_malloc((void **)&ex->slots, (size_t)(L->n * d->W) * sizeof(double)));
    return map_add(mb, &d->d_to_ghost, L->to_ghost, L->n);
  }
  HALO_TRY(halo_dev_malloc((void **)&ex->ghost, (size_t)(L->n_ghost * d->W) * sizeof(double)));
  HALO_TRY(map_add(mb, &d->d_slot_ptr, L->ptr, L->n_ghost + 1));
  HALO_TRY(map_add(mb, &d->d_slot, L->slot, L->n));
cleanup:
  return st;
}

static int pair_cmp(const void *a, const void *b) {
  const int64_t *x = a, *y = b;
  return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : (x[1] < y[1] ? -1 : x[1] > y[1]);
}

/* The slots of the rank's own entries (leaves.h): forward, a map from each
 * to its entry; reverse, the entries they add into, each once, with their
 * slots in slot order (grouped here, on the host: the order the host's
 * executor adds them in). */
static halo_status setup_own(halo_exec *ex, cuda_data *d, map_batch *mb) {
  halo_status st = HALO_SUCCESS;
  const halo_leaves *L = ex->cfg.leaves;
  int64_t *order = NULL, *u = NULL, *ptr = NULL, *ref = NULL;
  const int64_t n = L ? L->n_own : 0;
  if (n == 0) return HALO_SUCCESS;
  HALO_CHECK(check_int32(L->n, "the ghost slots"));
  if (!S(ex)->add) {
    HALO_TRY(map_add(mb, &d->d_own_slot, L->own_slot, n));
    HALO_TRY(map_add(mb, &d->d_own_index, L->own_index, n));
    return HALO_SUCCESS;
  }
  HALO_TRY(HALO_ALLOC(order, 2 * n));
  HALO_TRY(HALO_ALLOC(u, n));
  HALO_TRY(HALO_ALLOC(ptr, n + 1));
  HALO_TRY(HALO_ALLOC(ref, n));
  for (int64_t t = 0; t < n; t++) order[2 * t] = L->own_index[t], order[2 * t + 1] = t;
  qsort(order, (size_t)n, 2 * sizeof *order, pair_cmp); /* by entry, then slot order */
  int64_t m = 0;
  for (int64_t t = 0; t < n; t++) {
    const int64_t e = order[2 * t];
    if (m == 0 || u[m - 1] != e) ptr[m] = t, u[m++] = e;
    ref[t] = (int64_t)(-1 - L->own_slot[order[2 * t + 1]]); /* a source of add_by_dst: the slots */
  }
  ptr[m] = n;
  d->n_own_u = m;
  HALO_TRY(map_add(mb, &d->d_own_u, u, m));
  HALO_TRY(map_add(mb, &d->d_own_ptr, ptr, m + 1));
  HALO_TRY(map_add(mb, &d->d_own_ref, ref, n));
cleanup:
  halo_free(order), halo_free(u), halo_free(ptr), halo_free(ref);
  return st;
}

/* What makes the host wait in an exchange, on any rank: a helper's phases
 * on the host, and what each transport says (host MPI, signals through
 * events); and whether a transport's signals carry the exchange's number. */
static halo_status host_waits_agree(const halo_exec *ex, cuda_data *d) {
  int mine[2] = {d->host_fwd ? HOST_WAIT_HELPER : 0, 0}, all[2];
  for (int t = 0; t < HALO_CUDA_N_TRANSPORTS; t++)
    if (halo_cuda_transports[t]->host_waits)
      mine[0] |= halo_cuda_transports[t]->host_waits(ex, d, &mine[1]);
  HALO_MPI(MPI_Allreduce(mine, all, 2, MPI_INT, MPI_BOR, ex->cfg.comm));
  d->host_waits = all[0];
  d->numbered = all[1];
  return HALO_SUCCESS;
}

/* Run hook h (plan time, this rank alone) of every transport that has it. */
#define EACH_LOCAL(h, ...)                                                                         \
  do {                                                                                             \
    for (int t_ = 0; t_ < HALO_CUDA_N_TRANSPORTS; t_++)                                            \
      if (halo_cuda_transports[t_]->h) HALO_TRY(halo_cuda_transports[t_]->h(__VA_ARGS__));         \
  } while (0)

/* The executor's state made on this rank alone: buffers, channels, layouts,
 * maps, requests' counts (the transports' set-up and the agreements come
 * after, in halo_cuda_exec_setup). */
static halo_status setup_local(halo_exec *ex, cuda_data *d) {
  halo_status st = HALO_SUCCESS;
  const halo_schedule *s = S(ex);
  int64_t *idx = NULL, *src = NULL;
  map_batch mb;
  cuda_groups g = {MPI_GROUP_NULL, MPI_GROUP_NULL};
  memset(&mb, 0, sizeof mb);
  /* the batch, in the scratch, sized once for all maps: the slots' (at most a
   * gather map, or the sums' two), then at most a pack and a copy map of the
   * sends, and an unpack pair or the additions' three maps of the receives, a
   * phase */
  int64_t most = 0;
  if (!halo_leaves_identity(ex->cfg.leaves))
    most += ex->cfg.leaves->n + ex->cfg.leaves->n_ghost + 1 + 3 * ex->cfg.leaves->n_own + 1;
  for (int k = 0; k < s->n_phases; k++)
    most += 2 * s->phase[k].send_total + 3 * s->phase[k].recv_total + 1;
  HALO_TRY(halo_device_scratch(ex->cfg.dev, SCRATCH_MAPS, (size_t)most * sizeof *mb.host, 1,
                               (void **)&mb.host));
  mb.cap = most, mb.borrowed = 1;
  if (!s->add) {
    HALO_TRY(halo_dev_malloc((void **)&ex->ghost, (size_t)(s->n_ghost * d->W) * sizeof(double)));
    ex->slots = ex->ghost;
  }
  HALO_TRY(setup_slots(ex, d, &mb));
  HALO_TRY(setup_own(ex, d, &mb));
  if (d->host_fwd)
    HALO_TRY(halo_device_pinned_alloc(ex->cfg.dev, (size_t)(s->n_work * d->W) * sizeof(double),
                                      (void **)&d->work));
  else
    HALO_TRY(halo_dev_malloc((void **)&d->work, (size_t)(s->n_work * d->W) * sizeof(double)));
  HALO_TRY_MPI(MPI_Comm_group(ex->cfg.comm, &g.plan));
  HALO_TRY_MPI(MPI_Comm_group(halo_device_machine_comm(ex->cfg.dev), &g.machine));

  /* channels, buffer layouts */
  int64_t arena_total = 0;
  for (int k = 0; k < s->n_phases; k++) {
    const halo_phase *ph = &s->phase[k];
    cphase *p = &d->ph[k];
    HALO_TRY(HALO_CALLOC(p->send, ph->n_send));
    HALO_TRY(HALO_CALLOC(p->recv, ph->n_recv));
    int64_t per_ch[HALO_CUDA_N_CH] = {0};
    for (int i = 0; i < ph->n_send; i++) {
      cmsg *m = &p->send[i];
      m->index = i;
      if (ph->send[i].peer == s->rank) {
        if (!s->add) p->n_copy += ph->send[i].count; /* reverse: added in receive order */
        continue;
      }
      HALO_TRY(d->tr->channel(ex, d, &g, ph->send[i].peer, 1, &m->ch));
      if (m->ch < 0 || m->ch >= HALO_CUDA_N_CH)
        HALO_FAIL(HALO_ERR_INTERNAL, "transport %s: channel %d", d->tr->name, (int)m->ch);
      per_ch[m->ch] += ph->send[i].count;
    }
    int64_t off[HALO_CUDA_N_CH];
    off[0] = 0;
    for (int c = 1; c < HALO_CUDA_N_CH; c++) off[c] = off[c - 1] + per_ch[c - 1];
    p->n_pack = off[HALO_CUDA_N_CH - 1] + per_ch[HALO_CUDA_N_CH - 1];
    p->n_staged_send = per_ch[CH_STAGED];
    for (int i = 0; i < ph->n_send; i++)
      if (ph->send[i].peer != s->rank) {
        p->send[i].buf_off = off[p->send[i].ch];
        off[p->send[i].ch] += ph->send[i].count;
      }
    if (!d->host_fwd) arena_total += p->n_pack;
    /* receives: staged ones first in the receive buffer, the others in place
     * when they land on consecutive entries (forward) */
    int64_t staged = 0, other = 0;
    p->staged_run_at = -1;
    for (int i = 0; i < ph->n_recv; i++) {
      cmsg *m = &p->recv[i];
      m->index = i;
      m->direct_at = -1;
      if (ph->recv[i].peer == s->rank) continue;
      HALO_TRY(d->tr->channel(ex, d, &g, ph->recv[i].peer, 0, &m->ch));
      if (m->ch < 0 || m->ch >= HALO_CUDA_N_CH)
        HALO_FAIL(HALO_ERR_INTERNAL, "transport %s: channel %d", d->tr->name, (int)m->ch);
      /* a helper receives everything in host memory */
      if (m->ch == CH_STAGED || d->host_fwd) staged += ph->recv[i].count;
    }
    p->n_staged_recv = staged;
    other = staged;
    int64_t so = 0;
    for (int i = 0; i < ph->n_recv; i++) {
      cmsg *m = &p->recv[i];
      const halo_msg *r = &ph->recv[i];
      if (r->peer == s->rank) continue;
      if (m->ch == CH_STAGED || d->host_fwd) { /* a helper receives everything on the host */
        m->buf_off = so;
        so += r->count;
        continue;
      }
      /* a transport that puts into memory of its own (symmetric memory, a
       * window): the receive buffer, in receive order */
      m->direct_at = d->tr->recv_buffered ? -1 : run_target(ex, ph->unpack + r->offset, r->count);
      if (m->direct_at < 0) {
        m->buf_off = other;
        other += r->count;
      }
    }
    p->n_recvbuf = other;
  }
  EACH_LOCAL(layout, ex, d); /* the transports' counts, peers, requests */
  /* the send and receive buffers are the transport's, made by its set-up */
  const int symmetric = d->tr->symmetric;
  d->arena_bytes = symmetric ? 0 : (size_t)(arena_total * d->W) * sizeof(double);
  HALO_TRY(halo_device_ipc_alloc(ex->cfg.dev, d->arena_bytes, (void **)&d->arena, &d->arena_chunk,
                                 &d->arena_off));

  /* maps, buffers, requests; the maps' host temporaries in the scratch, sized
   * for the largest phase */
  int64_t n_map = 0;
  for (int k = 0; k < s->n_phases && !d->host_fwd; k++) {
    const halo_phase *ph = &s->phase[k];
    const int64_t n = d->ph[k].n_pack > ph->send_total ? d->ph[k].n_pack : ph->send_total;
    if (n > n_map) n_map = n;
    if (ph->recv_total > n_map) n_map = ph->recv_total;
  }
  HALO_TRY(halo_device_scratch(ex->cfg.dev, SCRATCH_IDX, (size_t)(n_map + 1) * sizeof *idx, 0,
                               (void **)&idx));
  HALO_TRY(halo_device_scratch(ex->cfg.dev, SCRATCH_SRC, (size_t)(n_map + 1) * sizeof *src, 0,
                               (void **)&src));
  int64_t arena_off = 0;
  for (int k = 0; k < s->n_phases; k++) {
    const halo_phase *ph = &s->phase[k];
    cphase *p = &d->ph[k];
    if (d->host_fwd) {
      /* packed, copied and unpacked on the host from the schedule's maps */
      EACH_LOCAL(phase_local, ex, d, k); /* the transports' buffers of the phase */
      if (s->add) {
        p->n_add = ph->recv_total;
        HALO_TRY(HALO_ALLOC(p->h_add_src, p->n_add));
        HALO_TRY(HALO_ALLOC(p->h_add_dst, p->n_add));
        int64_t *off = NULL; /* a helper's additions, on the host (h_recv) */
        st = recv_offsets(p, ph, &off);
        if (st == HALO_SUCCESS) st = halo_exec_add_order(s, ph, off, p->h_add_src, p->h_add_dst);
        halo_free(off);
        HALO_TRY(st);
      }
      continue;
    }
    p->d_send = d->arena ? d->arena + arena_off * d->W : NULL;
    arena_off += p->n_pack;
    /* pack map in channel order, written into the batch (taken back if the
     * values are one run); copies to itself (forward) */
    int32_t *pk = NULL;
    int64_t nc = 0;
    HALO_TRY(map_take(&mb, &p->d_pack, p->n_pack, &pk));
    for (int i = 0; i < ph->n_send; i++) {
      const halo_msg *m = &ph->send[i];
      if (m->peer == s->rank) {
        if (!s->add)
          for (int64_t t = 0; t < m->count; t++) src[nc++] = ph->pack[m->offset + t];
        continue;
      }
      int32_t *to = pk + p->send[i].buf_off;
      const int64_t *from = ph->pack + m->offset;
      for (int64_t t = 0; t < m->count; t++) to[t] = (int32_t)from[t];
    }
    p->pack_run = p->n_pack > 0;
    for (int64_t t = 1; t < p->n_pack && p->pack_run; t++) p->pack_run = pk[t] == pk[0] + t;
    if (p->pack_run) {
      p->run_from_work = pk[0] >= s->n_local;
      if (!p->run_from_work && pk[0] + p->n_pack > s->n_local) p->pack_run = 0;
      p->run_off = p->run_from_work ? pk[0] - s->n_local : pk[0];
    }
    if (p->pack_run) map_drop_last(&mb, &p->d_pack);
    if (p->n_copy) {
      HALO_TRY(map_add(&mb, &p->d_copy_src, src, p->n_copy));
      nc = 0;
      for (int i = 0; i < ph->n_recv; i++) {
        const halo_msg *m = &ph->recv[i];
        if (m->peer != s->rank) continue;
        for (int64_t t = 0; t < m->count; t++) idx[nc++] = ph->unpack[m->offset + t];
      }
      if (nc != p->n_copy)
        HALO_FAIL(HALO_ERR_INTERNAL, "phase %d: copies to itself do not match", k);
      HALO_TRY(map_add(&mb, &p->d_copy_dst, idx, p->n_copy));
    }
    if (s->add) {
      HALO_TRY(setup_adds_device(ex, p, ph, &mb));
    } else {
      /* unpack map: the staged receives (unless they land in one run), then
       * the other receives that are not in place */
      int64_t nu = 0, ns = 0;
      for (int i = 0; i < ph->n_recv; i++) {
        const halo_msg *m = &ph->recv[i];
        if (m->peer == s->rank || p->recv[i].ch != CH_STAGED) continue;
        for (int64_t t = 0; t < m->count; t++) idx[ns++] = ph->unpack[m->offset + t];
      }
      p->staged_run_at = ns ? run_target(ex, idx, ns) : -1;
      if (ns && p->staged_run_at < 0) {
        for (int64_t t = 0; t < ns; t++) src[t] = t;
        nu = ns;
      }
      for (int i = 0; i < ph->n_recv; i++) {
        const halo_msg *m = &ph->recv[i];
        const cmsg *c = &p->recv[i];
        if (m->peer == s->rank || c->ch == CH_STAGED || c->direct_at >= 0) continue;
        for (int64_t t = 0; t < m->count; t++) {
          src[nu] = c->buf_off + t;
          idx[nu++] = ph->unpack[m->offset + t];
        }
      }
      p->n_unpack = nu;
      HALO_TRY(map_add(&mb, &p->d_unpack_src, src, nu));
      HALO_TRY(map_add(&mb, &p->d_unpack_dst, idx, nu));
    }
    if (!symmetric)
      HALO_TRY(
          halo_dev_malloc((void **)&p->d_recv, (size_t)(p->n_recvbuf * d->W) * sizeof(double)));
    EACH_LOCAL(phase_local, ex, d, k); /* the transports' buffers of the phase */
  }
  HALO_TRY(map_upload(&mb, &d->maps));
  HALO_TRY(group_adds(ex, d));
cleanup:
  map_batch_free(&mb);
  if (g.machine != MPI_GROUP_NULL) MPI_Group_free(&g.machine);
  if (g.plan != MPI_GROUP_NULL) MPI_Group_free(&g.plan);
  return st;
}

/* Collective over the plan's communicator. What can fail on one rank alone
 * is agreed before each collective and each exchange of set-up messages, so
 * that a failure anywhere ends every rank's set-up with its message and none
 * waits for another. */
halo_status halo_cuda_exec_setup(halo_exec *ex) {
  halo_status st = HALO_SUCCESS;
  const halo_schedule *s = S(ex);
  const MPI_Comm comm = ex->cfg.comm;
  cuda_data *d = halo_calloc(1, sizeof *d);
  ex->data = d;
  if (!d) st = HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "out of memory creating the CUDA executor");
  if (st == HALO_SUCCESS) st = state_alloc(d);
  if (st == HALO_SUCCESS) {
    d->xs = (cudaStream_t)halo_device_exchange_stream(ex->cfg.dev);
    d->comp = (cudaStream_t)ex->cfg.comp;
    d->tr = plan_transport(ex->cfg.transport);
    d->host_fwd = s->n_local == 0 && s->n_ghost == 0 && !d->tr->device_helpers;
    d->W = ex->cfg.unit_max > 8 ? (ex->cfg.unit_max + 7) / 8 : 1;
    d->eb = 8, d->ws = 8;
    st = check_int32(s->n_local + s->n_work, "a source space");
  }
  if (st == HALO_SUCCESS) st = check_int32(s->n_ghost + s->n_work, "a destination space");
  if (st == HALO_SUCCESS) st = halo_event_create(&d->ev_start, cudaEventDisableTiming);
  if (st == HALO_SUCCESS) st = halo_event_create(&d->ev_end, cudaEventDisableTiming);
  if (st == HALO_SUCCESS && s->add) st = halo_event_create(&d->ev_dst, cudaEventDisableTiming);
  if (st == HALO_SUCCESS) st = HALO_ALLOC(d->peer_host_fwd, s->size);
  HALO_TRY(halo_agree(comm, st));
  HALO_TRY_MPI(MPI_Allgather(&d->host_fwd, 1, MPI_INT, d->peer_host_fwd, 1, MPI_INT, comm));
  HALO_TRY(halo_agree(comm, setup_local(ex, d)));
  for (int t = 0; t < HALO_CUDA_N_TRANSPORTS; t++) /* every rank runs every one */
    if (halo_cuda_transports[t]->setup)
      HALO_TRY(halo_agree(comm, halo_cuda_transports[t]->setup(ex, d)));
  HALO_TRY(host_waits_agree(ex, d));
  for (int t = 0; t < HALO_CUDA_N_TRANSPORTS; t++)
    if (halo_cuda_transports[t]->setup_end) HALO_TRY(halo_cuda_transports[t]->setup_end(ex, d));
  HALO_TRY_CUDA(cudaStreamSynchronize(d->xs));
cleanup:
  /* what failed on one rank after the last agreement (the calls above) is
   * every rank's; a failure agreed before reaches here on every rank too */
  st = halo_agree(comm, st);
  if (st != HALO_SUCCESS) halo_cuda_exec_destroy(ex);
  return st;
}

#endif /* HALO_HAVE_CUDA */
