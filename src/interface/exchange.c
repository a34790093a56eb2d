/* Exchanges: the plan's own (set 0) and the handles taken from its other
 * sets, forward and reverse. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "interface/plan.h"

/* ---- a failed exchange's notice ------------------------------------------
 * An exchange has no collective to agree a failure with: the ranks that wait
 * for a rank that failed time out. So the failing rank tells the plan's
 * peers why, in a message on the plan's last tag (never given to another
 * plan: a failed plan keeps its tags), and a rank that times out waits, up to
 * exchange_timeout_ms more, for a notice and says whose failure it waited
 * for. A rank that timed out passes on the first failure it heard of, so a
 * rank that waited for a rank that waited for the failing one hears of it
 * too. The notice is a kind ('F': a failure, its text the failing rank's;
 * 'T': a timeout whose cause this rank did not hear), then the text. */

#define NOTICE_LEN 768

static int add_peer(int *peers, int *n, int peer) {
  for (int i = 0; i < *n; i++)
    if (peers[i] == peer) return 0;
  peers[(*n)++] = peer;
  return 1;
}

static int notice_take(halo_plan P, char *text, char *kind, int *from);

/* Every notice that came, received and dropped (its sender marked heard). */
void halo_plan_notices_drain(halo_plan P) {
  char text[NOTICE_LEN], kind;
  int from;
  if (P->n_tags && P->ctx)
    while (notice_take(P, text, &kind, &from)) {
    }
}

/* The notice (kind, then text) to every peer of the plan, sent once and
 * left to MPI (the plan, and so the text, is kept for ever); not to a peer
 * whose own notice came: its plan failed, and reads no more (a notice
 * nobody receives stays in MPI's queues for ever). */
static void notice_send(halo_plan P, int rank, char kind, const char *text) {
  if (P->notice || !P->n_tags) return;
  halo_plan_notices_drain(P); /* those that came since: their senders heard */
  int n_all = 0, n = 0;
  for (int d = 0; d < 2; d++) {
    const halo_schedule *s = d ? &P->rsched : &P->sched;
    for (int k = 0; k < s->n_phases; k++) n_all += s->phase[k].n_send + s->phase[k].n_recv;
  }
  int *peers = halo_malloc((size_t)(n_all + 1) * sizeof *peers);
  P->notice = halo_malloc(NOTICE_LEN);
  if (!peers || !P->notice) {
    halo_free(peers);
    return;
  }
  snprintf(P->notice, NOTICE_LEN, "%c%.*s", kind, NOTICE_LEN - 2, text);
  for (int d = 0; d < 2; d++) {
    const halo_schedule *s = d ? &P->rsched : &P->sched;
    for (int k = 0; k < s->n_phases; k++) {
      for (int i = 0; i < s->phase[k].n_send; i++) add_peer(peers, &n, s->phase[k].send[i].peer);
      for (int i = 0; i < s->phase[k].n_recv; i++) add_peer(peers, &n, s->phase[k].recv[i].peer);
    }
  }
  const int tag = P->tag_base + P->n_tags - 1;
  for (int i = 0; i < n; i++) {
    MPI_Request r;
    if (peers[i] != rank && !(P->heard && P->heard[peers[i]]) &&
        MPI_Isend(P->notice, (int)strlen(P->notice) + 1, MPI_CHAR, peers[i], tag, P->ctx->comm,
                  &r) == MPI_SUCCESS)
      MPI_Request_free(&r);
  }
  halo_free(peers);
}

/* One notice that came, into text (its kind in *kind, its sender in *from);
 * 0: none. */
static int notice_take(halo_plan P, char *text, char *kind, int *from) {
  int flag = 0, count = 0;
  MPI_Status stat;
  const int tag = P->tag_base + P->n_tags - 1;
  if (MPI_Iprobe(MPI_ANY_SOURCE, tag, P->ctx->comm, &flag, &stat) != MPI_SUCCESS || !flag) return 0;
  if (MPI_Get_count(&stat, MPI_CHAR, &count) != MPI_SUCCESS || count < 2 || count > NOTICE_LEN)
    return 0;
  char buf[NOTICE_LEN];
  if (MPI_Recv(buf, count, MPI_CHAR, stat.MPI_SOURCE, tag, P->ctx->comm, MPI_STATUS_IGNORE) !=
      MPI_SUCCESS)
    return 0;
  buf[count - 1] = '\0';
  if (P->heard) P->heard[stat.MPI_SOURCE] = 1;
  *kind = buf[0];
  snprintf(text, NOTICE_LEN, "%s", buf + 1);
  *from = stat.MPI_SOURCE;
  return 1;
}

/* The peers' notices, for up to wait_ms until one tells of a failure: 'F'
 * (text the failing rank's, *from its sender), else 'T' (a peer that timed
 * out without hearing why), else 0. */
static char notice_read(halo_plan P, int64_t wait_ms, char *text, int *from) {
  char got = 0, kind = 0, t[NOTICE_LEN];
  int f = -1;
  if (!P->n_tags) return 0;
  const double until = halo_wtime() + 1e-3 * (double)wait_ms;
  for (;;) {
    while (notice_take(P, t, &kind, &f)) {
      if (kind == 'F' || !got) {
        snprintf(text, NOTICE_LEN, "%s", t);
        *from = f;
        got = kind == 'F' ? 'F' : 'T';
      }
      if (got == 'F') return got;
    }
    if (halo_wtime() >= until) return got;
    const struct timespec nap = {0, 200000}; /* 0.2 ms: the peers' ranks may share its core */
    nanosleep(&nap, NULL);
  }
}

static atomic_llong slow_release_ms; /* halo_debug_slow_release */

void halo_debug_slow_release(int64_t ms) { atomic_store(&slow_release_ms, ms > 0 ? ms : 0); }

/* An exchange of P failed with st (its message the last error): no more
 * exchanges; in device memory whatever its streams wait for from peers is
 * released, so that they drain, and an rma window whose epoch may be open is
 * never freed (halo_exec_unblock; *released: whether every wait was). A
 * timeout waits up to exchange_timeout_ms more for the notice of the failure
 * it waited for (into cause: "rank r's exchange failed first: ...", else
 * empty); the peers get this rank's, or the one it heard, before the
 * release: a release may take long (NCCL's abort: 0.1-0.5 s seen on 4 H100),
 * and a rank two hops from the failing one hears of it only if every rank
 * between passes it on within the window all of them share (they time out
 * about together). Returns the status to give. */
static halo_status plan_fail(halo_plan P, halo_status st, int *released, char *cause) {
  int rank = 0, from = -1, origin = -1;
  char why[HALO_ERROR_LEN], theirs[NOTICE_LEN], said[NOTICE_LEN];
  snprintf(why, sizeof why, "%s", halo_last_error()); /* before a release's own */
  const int first = !P->failed;
  P->failed = 1;
  if (!P->heard) { /* best effort: without it, notices go to every peer */
    int size = 0;
    MPI_Comm_size(P->ctx->comm, &size);
    P->heard = halo_calloc((size_t)size, 1);
  }
  MPI_Comm_rank(P->ctx->comm, &rank);
  /* the peers hear of the first failure this rank knows: its own, the one
   * it heard of, else that it timed out too ('T') */
  char kind = 0, mine[NOTICE_LEN];
  if (st == HALO_ERR_TIMEOUT)
    kind = notice_read(P, first && !P->notice ? P->set.timeout_ms : 0, theirs, &from);
  if (kind == 'F')
    notice_send(P, rank, 'F', theirs);
  else {
    snprintf(mine, sizeof mine, "rank %d: %.700s", rank, why);
    notice_send(P, rank, st == HALO_ERR_TIMEOUT ? 'T' : 'F', mine);
  }
  if (first) { /* once: a second release could reach what came since (NCCL's new one) */
    const long long slow = atomic_load(&slow_release_ms);
    if (slow > 0) {
      const struct timespec wait = {(time_t)(slow / 1000), (long)(slow % 1000) * 1000000L};
      nanosleep(&wait, NULL);
    }
    P->released = halo_online_unblock(P, 0);
    for (int i = 0; i < P->n_sets; i++)
      for (int r = 0; r < 2; r++) {
        const int u = halo_exec_unblock(r ? &P->sets[i].rev : &P->sets[i].fwd, 0);
        if (u < P->released) P->released = u;
      }
  }
  if (released) *released = P->released;
  said[0] = '\0';
  if (kind == 'F') {
    if (sscanf(theirs, "rank %d:", &origin) != 1) origin = from;
    if (origin == from)
      snprintf(said, sizeof said, "rank %d's exchange failed first: %.700s", origin, theirs);
    else
      snprintf(said, sizeof said, "rank %d's exchange failed first (heard from rank %d): %.680s",
               origin, from, theirs);
  } else if (kind == 'T') {
    snprintf(said, sizeof said, "rank %d timed out too, not knowing why: %.700s", from, theirs);
  }
  if (kind)
    st = HALO_ERROR(HALO_ERR_TIMEOUT, "%.250s; %s", why, said);
  else if (strcmp(why, halo_last_error()) != 0)
    halo_error_set_message(why); /* the release's words are not the failure's */
  if (cause) snprintf(cause, NOTICE_LEN, "%s", said);
  return st;
}

halo_status halo_plan_fail(halo_plan P, halo_status st) { return plan_fail(P, st, NULL, NULL); }

static struct { /* halo_debug_slow_schedule; tests set it between calls, on one thread */
  halo_transport transport;
  halo_strategy strategy;
  int64_t cap, us;
} slow_schedule;

void halo_debug_slow_schedule(halo_transport t, halo_strategy s, int64_t cap, int64_t us) {
  slow_schedule.transport = t, slow_schedule.strategy = s, slow_schedule.cap = cap;
  slow_schedule.us = us > 0 ? us : 0;
}

static void slow_if_asked(const halo_plan P) {
  if (slow_schedule.us <= 0 || P->transport != slow_schedule.transport ||
      P->sched.strategy != slow_schedule.strategy ||
      (P->sched.strategy == HALO_STRATEGY_SPLIT && P->sched.message_cap_used != slow_schedule.cap))
    return;
  const struct timespec nap = {(time_t)(slow_schedule.us / 1000000),
                               (long)(slow_schedule.us % 1000000) * 1000L};
  nanosleep(&nap, NULL);
}

size_t halo_unit_size(halo_unit u) {
  halo_xunit x;
  return halo_xunit_make(u, HALO_OP_INSERT, 0, &x) == 0 ? (size_t)x.bytes : 0;
}

/* Unit u with op in direction reverse on P: into *x, else the reason. */
static halo_status unit_check(halo_plan P, halo_unit u, halo_op op, int reverse, halo_xunit *x) {
  if (halo_xunit_make(u, op, reverse, x) != 0)
    return HALO_ERROR(HALO_ERR_INVALID_ARG,
                      "unit {type %d, k %d} with op %d: the type is not a halo_type, k is below "
                      "1, the op is not HALO_OP_INSERT or HALO_OP_ADD, or an add of bytes "
                      "(HALO_TYPE_BYTE moves bytes as they are: insert only)",
                      (int)u.type, u.k, (int)op);
  if (reverse && !P->set.opts.reverse)
    return HALO_ERROR(HALO_ERR_STATE, "the plan was made with reverse = 0: no reverse exchange");
  if (x->is_default) return HALO_SUCCESS;
  const halo_exec *ex = &P->sets[0].fwd;
  if (!ex->ops || !ex->ops->units) {
    const halo_transport_desc *t = halo_transport_find(P->transport);
    return HALO_ERROR(HALO_ERR_UNSUPPORTED,
                      "units other than one double (and a forward add or a reverse insert): "
                      "not yet %s memory with transport %s (host memory: transports host, rma, "
                      "neighbor; device memory: staged, ipc, nccl, mpi-device)",
                      P->memory == HALO_MEMORY_DEVICE ? "device" : "host", t ? t->name : "?");
  }
  HALO_CHECK(halo_exec_unit_ok(ex, x));
  if (x->bytes > P->set.unit_max)
    return HALO_ERROR(HALO_ERR_INVALID_ARG,
                      "a unit of %lld bytes ({type %d, k %d}) is larger than the plan's "
                      "buffers' entries, %lld bytes: make the plan with the setting "
                      "exec.unit_max_bytes=%lld or more",
                      (long long)x->bytes, (int)u.type, u.k, (long long)P->set.unit_max,
                      (long long)x->bytes);
  return HALO_SUCCESS;
}

halo_status halo_plan_unit_check(halo_plan plan, halo_unit u, halo_op op, int reverse) {
  if (!plan) return HALO_ERROR(HALO_ERR_INVALID_ARG, "plan is NULL");
  halo_xunit x;
  return unit_check(plan, u, op, reverse, &x);
}

/* The slots of this rank's own entries (leaves.h), while the messages are in
 * flight: forward slot <- entry (insert or add), reverse entry <- slot (add,
 * in slot order, or insert). src and dst as the executor's begin took them
 * (forward dst NULL: the exchange's own slots). */
static void own_copies(halo_plan P, halo_slot *set, int reverse, const halo_xunit *u,
                       const void *src, void *dst) {
  const halo_leaves *L = &P->leaves;
  const halo_xunit one = {8, HALO_TYPE_DOUBLE, 1, reverse ? HALO_OP_ADD : HALO_OP_INSERT, 1};
  if (!u) u = &one;
  const int64_t b = u->bytes;
  const unsigned char *in = src;
  unsigned char *out = reverse ? dst : dst ? dst : (void *)set->fwd.slots;
  for (int64_t t = 0; t < L->n_own; t++) {
    const int64_t slot = L->own_slot[t], entry = L->own_index[t];
    if (reverse)
      halo_xunit_apply(u, out + entry * b, in + slot * b, 1);
    else
      halo_xunit_apply(u, out + slot * b, in + entry * b, 1);
  }
}

halo_status halo_slot_begin(halo_plan P, int slot, int reverse, const double *src, double *dst) {
  return halo_slot_begin_unit(P, slot, reverse, NULL, src, dst);
}

halo_status halo_slot_begin_unit(halo_plan P, int slot, int reverse, const halo_xunit *u,
                                 const void *src_in, void *dst_in) {
  halo_slot *set = &P->sets[slot];
  const double *src = src_in;
  double *dst = dst_in;
  if (u && u->is_default) u = NULL;
  if (P->failed)
    return HALO_ERROR(HALO_ERR_STATE, "an earlier exchange of this plan failed (its messages may "
                                      "still be on their way): destroy the plan");
  if (set->state != HALO_SLOT_IDLE)
    return HALO_ERROR(HALO_ERR_STATE, "%s",
                      slot ? "this exchange is already in flight: call halo_exchange_wait first"
                           : "an exchange of this plan is already in flight: call "
                             "halo_exchange_end (or halo_exchange_reverse_end) first");
  if (reverse && !P->set.opts.reverse)
    return HALO_ERROR(HALO_ERR_STATE, "the plan was made with reverse = 0: no reverse exchange");
  if (!reverse && !src && P->n_local > 0)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "x_local is NULL but this rank owns %lld entries",
                      (long long)P->n_local);
  if (reverse && !dst && P->n_local > 0)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "x_local is NULL but this rank owns %lld entries",
                      (long long)P->n_local);
  if (reverse && !src) src = set->fwd.slots; /* the exchange's own ghost slots */
  if (slot == 0 && !reverse && P->online_ops && !u) {
    /* strategy AUTO's trial on the program's calls, or its winner: the values go where this
     * plan's own exchange delivers them */
    halo_plan Q;
    HALO_CHECK(halo_online_pick(P, &Q));
    HALO_CHECK(halo_online_mark(P, 0));
    if (Q != P) {
      const halo_status st = halo_slot_begin(Q, 0, 0, src, dst ? dst : set->fwd.slots);
      if (st != HALO_SUCCESS) { /* Q failed, and told its peers: so does this plan */
        P->failed = 1;
        return st;
      }
      P->routed = Q;
      set->state = HALO_SLOT_FORWARD;
      P->uses++;
      return halo_online_mark(P, 1);
    }
  }
  if (!reverse && dst == set->fwd.slots) dst = NULL;
  if (!reverse && !u) slow_if_asked(P);
  halo_exec *ex = reverse ? &set->rev : &set->fwd;
  const halo_status st = u ? halo_exec_begin_unit(ex, u, src, dst) : halo_exec_begin(ex, src, dst);
  if (st != HALO_SUCCESS) return plan_fail(P, st, NULL, NULL);
  if (P->leaves.n_own && !ex->ops->own_slots) own_copies(P, set, reverse, u, src, dst);
  set->state = reverse ? HALO_SLOT_REVERSE : HALO_SLOT_FORWARD;
  set->unit_call = u != NULL;
  P->uses++;
  return slot == 0 && !reverse && !u ? halo_online_mark(P, 1) : HALO_SUCCESS;
}

halo_status halo_slot_end(halo_plan P, int slot) {
  halo_slot *set = &P->sets[slot];
  if (set->state == HALO_SLOT_IDLE)
    return HALO_ERROR(HALO_ERR_STATE, "%s",
                      slot ? "this exchange is not in flight: start it first"
                           : "no exchange of this plan is in flight: call halo_exchange_begin (or "
                             "halo_exchange_reverse_begin) first");
  const int reverse = set->state == HALO_SLOT_REVERSE, unit = set->unit_call;
  set->state = HALO_SLOT_IDLE;
  set->unit_call = 0;
  if (unit) { /* run by the plan's own executors, outside AUTO's trial */
    const halo_status st = halo_exec_end(reverse ? &set->rev : &set->fwd);
    return st == HALO_SUCCESS ? st : plan_fail(P, st, NULL, NULL);
  }
  if (slot == 0 && !reverse) HALO_CHECK(halo_online_mark(P, 2));
  if (slot == 0 && P->routed) {
    halo_plan Q = P->routed;
    P->routed = NULL;
    const halo_status st = halo_slot_end(Q, 0);
    if (st != HALO_SUCCESS) {
      P->failed = 1;
      return st;
    }
    return halo_online_done(P);
  }
  const halo_status st = halo_exec_end(reverse ? &set->rev : &set->fwd);
  if (st != HALO_SUCCESS) return plan_fail(P, st, NULL, NULL);
  return slot == 0 && !reverse ? halo_online_done(P) : HALO_SUCCESS;
}

halo_status halo_exchange_begin(halo_plan plan, const double *x_local, double *x_ghost) {
  if (!plan) return HALO_ERROR(HALO_ERR_INVALID_ARG, "plan is NULL");
  return halo_slot_begin(plan, 0, 0, x_local, x_ghost);
}

halo_status halo_exchange_end(halo_plan plan) {
  if (!plan) return HALO_ERROR(HALO_ERR_INVALID_ARG, "plan is NULL");
  if (plan->sets[0].state == HALO_SLOT_REVERSE)
    return HALO_ERROR(HALO_ERR_STATE, "the plan's own exchange in flight is a reverse one: call "
                                      "halo_exchange_reverse_end");
  return halo_slot_end(plan, 0);
}

halo_status halo_exchange_reverse_begin(halo_plan plan, const double *x_ghost, double *x_local) {
  if (!plan) return HALO_ERROR(HALO_ERR_INVALID_ARG, "plan is NULL");
  return halo_slot_begin(plan, 0, 1, x_ghost, x_local);
}

halo_status halo_exchange_reverse_end(halo_plan plan) {
  if (!plan) return HALO_ERROR(HALO_ERR_INVALID_ARG, "plan is NULL");
  if (plan->sets[0].state == HALO_SLOT_FORWARD)
    return HALO_ERROR(HALO_ERR_STATE, "the plan's own exchange in flight is a forward one: call "
                                      "halo_exchange_end");
  return halo_slot_end(plan, 0);
}

/* An exchange of unit u with op: checked (no state changed where it fails)
 * and begun. */
static halo_status unit_begin(halo_plan P, int slot, int reverse, halo_unit u, halo_op op,
                              const void *src, void *dst) {
  halo_xunit x;
  HALO_CHECK(unit_check(P, u, op, reverse, &x));
  return halo_slot_begin_unit(P, slot, reverse, &x, src, dst);
}

halo_status halo_exchange_begin_unit(halo_plan plan, halo_unit u, halo_op op, const void *x_local,
                                     void *x_ghost) {
  if (!plan) return HALO_ERROR(HALO_ERR_INVALID_ARG, "plan is NULL");
  return unit_begin(plan, 0, 0, u, op, x_local, x_ghost);
}

halo_status halo_exchange_reverse_begin_unit(halo_plan plan, halo_unit u, halo_op op,
                                             const void *x_ghost, void *x_local) {
  if (!plan) return HALO_ERROR(HALO_ERR_INVALID_ARG, "plan is NULL");
  return unit_begin(plan, 0, 1, u, op, x_ghost, x_local);
}

halo_status halo_exchange_start_unit(halo_exchange ex, halo_unit u, halo_op op, const void *x_local,
                                     void *x_ghost) {
  if (!ex) return HALO_ERROR(HALO_ERR_INVALID_ARG, "exchange is NULL");
  return unit_begin(ex->plan, ex->slot, 0, u, op, x_local, x_ghost);
}

halo_status halo_exchange_start_reverse_unit(halo_exchange ex, halo_unit u, halo_op op,
                                             const void *x_ghost, void *x_local) {
  if (!ex) return HALO_ERROR(HALO_ERR_INVALID_ARG, "exchange is NULL");
  return unit_begin(ex->plan, ex->slot, 1, u, op, x_ghost, x_local);
}

halo_status halo_plan_get_ghost(halo_plan plan, double **x_ghost_p) {
  if (!plan) return HALO_ERROR(HALO_ERR_INVALID_ARG, "plan is NULL");
  if (!x_ghost_p) return HALO_ERROR(HALO_ERR_INVALID_ARG, "x_ghost_p is NULL");
  *x_ghost_p = plan->sets[0].fwd.slots;
  return HALO_SUCCESS;
}

halo_status halo_plan_synchronize(halo_plan plan) {
  if (!plan) return HALO_ERROR(HALO_ERR_INVALID_ARG, "plan is NULL");
  if (plan->memory != HALO_MEMORY_DEVICE) return HALO_SUCCESS;
  void *const streams[2] = {halo_device_exchange_stream(plan->dev), plan->comp};
  const int64_t limit = plan->set.timeout_ms;
  const halo_status st = halo_device_streams_wait(streams, 2, limit);
  if (st != HALO_ERR_TIMEOUT) return st;
  /* past exchange_timeout_ms: the GPU waits for a peer. The plan fails (its
   * buffers may still be written by a late peer: kept by halo_plan_destroy),
   * its waits are released, and the GPU's work drains */
  int released = 0;
  char cause[NOTICE_LEN];
  (void)plan_fail(plan, st, &released, cause);
  /* the GPU drains within the limit again; the release is written anew every
   * 20 ms meanwhile: ipc's flags are written, not added to, so a peer's
   * write of an earlier exchange landing after the release lowers them */
  const double until = halo_wtime() + 1e-3 * (double)limit;
  halo_status drained;
  for (;;) {
    drained = halo_device_streams_wait(streams, 2, 20);
    if (drained != HALO_ERR_TIMEOUT || halo_wtime() >= until) break;
    if (released > 0) (void)halo_online_unblock(plan, 1);
    if (released > 0)
      for (int i = 0; i < plan->n_sets; i++) {
        (void)halo_exec_unblock(&plan->sets[i].fwd, 1);
        (void)halo_exec_unblock(&plan->sets[i].rev, 1);
      }
  }
  return HALO_ERROR(HALO_ERR_TIMEOUT,
                    "the GPU's work waited %lld ms for an exchange (exchange_timeout_ms): a peer "
                    "failed, stopped or is late%s%.500s%s; %s",
                    (long long)limit, cause[0] ? " (" : "", cause, cause[0] ? ")" : "",
                    drained == HALO_SUCCESS
                        ? "its waits were released and the GPU is idle again (the plan's values "
                          "are not valid: destroy it)"
                    : released > 0 ? "its waits were released, but the GPU's work did not end "
                                     "within the limit again"
                    : released < 0
                        ? "the GPU still waits: the writes that release its waits did not run "
                          "within the limit (they queued behind those waits: the GPU's work "
                          "queues are fewer than its streams, as under MPS, where "
                          "CUDA_DEVICE_MAX_CONNECTIONS=32 in every rank's environment avoids "
                          "it); a late peer still releases it"
                        : "the GPU still waits: this plan forwards values it receives, and "
                          "the word that stops its later phases could not be written; "
                          "releasing its wait would hand its peers values never received; a "
                          "late peer still releases it");
}

/* ---- exchange handles ---------------------------------------------------- */

halo_status halo_exchange_create(halo_plan plan, halo_exchange *ex_p) {
  if (!plan) return HALO_ERROR(HALO_ERR_INVALID_ARG, "plan is NULL");
  if (!ex_p) return HALO_ERROR(HALO_ERR_INVALID_ARG, "ex_p is NULL");
  for (int i = 1; i < plan->n_sets; i++)
    if (!plan->sets[i].taken) {
      plan->sets[i].taken = 1;
      *ex_p = &plan->sets[i].handle;
      return HALO_SUCCESS;
    }
  return HALO_ERROR(HALO_ERR_STATE,
                    "all %d exchanges of the plan are taken (its own and %d handles): raise the "
                    "plan option max_exchanges",
                    plan->n_sets, plan->n_sets - 1);
}

halo_status halo_exchange_start(halo_exchange ex, const double *x_local, double *x_ghost) {
  if (!ex) return HALO_ERROR(HALO_ERR_INVALID_ARG, "exchange is NULL");
  return halo_slot_begin(ex->plan, ex->slot, 0, x_local, x_ghost);
}

halo_status halo_exchange_start_reverse(halo_exchange ex, const double *x_ghost, double *x_local) {
  if (!ex) return HALO_ERROR(HALO_ERR_INVALID_ARG, "exchange is NULL");
  return halo_slot_begin(ex->plan, ex->slot, 1, x_ghost, x_local);
}

halo_status halo_exchange_wait(halo_exchange ex) {
  if (!ex) return HALO_ERROR(HALO_ERR_INVALID_ARG, "exchange is NULL");
  return halo_slot_end(ex->plan, ex->slot);
}

halo_status halo_exchange_get_ghost(halo_exchange ex, double **x_ghost_p) {
  if (!ex) return HALO_ERROR(HALO_ERR_INVALID_ARG, "exchange is NULL");
  if (!x_ghost_p) return HALO_ERROR(HALO_ERR_INVALID_ARG, "x_ghost_p is NULL");
  *x_ghost_p = ex->plan->sets[ex->slot].fwd.slots;
  return HALO_SUCCESS;
}

void halo_exchange_destroy(halo_exchange *ex_p) {
  if (!ex_p || !*ex_p) return;
  halo_exchange ex = *ex_p;
  halo_slot *set = &ex->plan->sets[ex->slot];
  if (set->state != HALO_SLOT_IDLE && !ex->plan->failed) (void)halo_slot_end(ex->plan, ex->slot);
  set->taken = 0;
  *ex_p = NULL;
}
