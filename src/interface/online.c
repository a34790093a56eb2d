/* Strategy AUTO's trial on the program's own calls (setting auto.trial =
 * calls): where the model cannot tell candidates apart, the plan is made
 * for the model's best, and its own forward exchanges (halo_spmv's,
 * halo_exchange_begin/end's) are served in turn by each candidate, with the
 * values delivered where the program asked for them, each timed: the host's
 * seconds in the begin and the end (host memory), the GPU's from the begin
 * to the ghosts' arrival in stream order (device memory). After
 * ONLINE_ROUNDS rounds, the first a warm-up, the candidate of the lowest
 * cost (set-up + expected uses x its mean time, the most of any rank) is
 * kept: the plan's own executors, or another candidate's plan to which the
 * plan's own forward exchanges go from then on (its reverse exchanges and
 * handles stay with its own executors, which also keep the ghost buffer the
 * program may hold). A candidate's plan is made at its first turn; every
 * rank makes the same calls in the same order, so each agrees on its turns
 * and on the decision without a word.
 *
 * The same state, with no candidate, is a switch (nccl.background): the
 * plan exchanges over its own transport until every rank's state of the
 * later one (NCCL's communicator, made by a thread) is made, agreed every
 * SWITCH_EVERY exchanges, then a plan of the later transport serves its own
 * forward exchanges from one exchange on, the same on every rank. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "interface/plan.h"

#define ONLINE_PER_TURN HALO_ONLINE_PER_TURN
#define ONLINE_ROUNDS   HALO_ONLINE_ROUNDS
#define ONLINE_SAMPLES  ((ONLINE_ROUNDS - 1) * ONLINE_PER_TURN)
/* the plan's own candidate is kept unless another is this much faster (a
 * switch costs a plan kept beside it for nothing, and noise is not speed) */
#define ONLINE_MARGIN 0.97

struct halo_online_s {
  int n;                                    /* candidates; 0 is the plan's own */
  int cand[HALO_MAX_CANDIDATES];            /* their index in the plan's choice */
  halo_plan sub[HALO_MAX_CANDIDATES];       /* their plans once made (0: NULL, the plan itself) */
  halo_schedule sched[HALO_MAX_CANDIDATES]; /* their schedules, made by the model, until then */
  int has_sched[HALO_MAX_CANDIDATES];
  int dead[HALO_MAX_CANDIDATES]; /* its plan could not be made: its turns go to the plan's own,
                                    untimed */
  int64_t calls;                 /* timed-trial calls begun */
  int next;                      /* candidate of the call about to begin; -1: not picked yet */
  int serving;                   /* candidate of the call in flight; -1: none counted */
  double t_mark, host;           /* host memory: the clock at the last mark, seconds in halo */
  double *sample;                /* n x ONLINE_SAMPLES seconds */
  halo_stopwatch *sw;            /* device memory: n x ONLINE_SAMPLES intervals */
  uint64_t key;                  /* the choice's key in the context (auto.c) */
  halo_online_settle settle;     /* ... what keeps the decision there */
  int64_t measured;              /* the wisdom file's measured uses, 0: none */
  /* what a candidate's plan is made from (copies: the constructor's input is gone by then) */
  halo_plan_input in;
  int64_t *col_ranges, *ghost_ids;
  halo_pattern pattern;
  halo_plan_options opts;
  /* a switch to a transport whose state comes later (nccl.background): n = 0 candidates */
  halo_transport later; /* HALO_TRANSPORT_AUTO: none */
  int64_t switch_calls; /* own forward exchanges since the plan was made */
  MPI_Request req;      /* the readiness of every rank, agreed in the background */
  int vals[2], res[2];  /* this rank's {made, -failed}, their minimum over the ranks */
};

#define SWITCH_EVERY 8 /* exchanges between two agreements of readiness */

int64_t halo_online_calls(void) { return ONLINE_ROUNDS * ONLINE_PER_TURN; }

static halo_status pattern_copy(const halo_pattern *from, halo_pattern *to) {
  halo_status st = HALO_SUCCESS;
  *to = *from;
  to->recv = NULL, to->send = NULL, to->send_idx = NULL;
  int64_t n_idx = 0;
  for (int i = 0; i < from->n_send; i++)
    if (from->send[i].offset + from->send[i].count > n_idx)
      n_idx = from->send[i].offset + from->send[i].count;
  HALO_TRY(HALO_ALLOC(to->recv, from->n_recv + 1));
  HALO_TRY(HALO_ALLOC(to->send, from->n_send + 1));
  HALO_TRY(HALO_ALLOC(to->send_idx, n_idx + 1));
  if (from->n_recv) memcpy(to->recv, from->recv, (size_t)from->n_recv * sizeof *to->recv);
  if (from->n_send) memcpy(to->send, from->send, (size_t)from->n_send * sizeof *to->send);
  if (n_idx) memcpy(to->send_idx, from->send_idx, (size_t)n_idx * sizeof *to->send_idx);
  return HALO_SUCCESS;
cleanup:
  halo_pattern_free(to);
  return st;
}

/* wait: the agreement under way is waited for (every rank started it at the same exchange, so
 * it ends); 0: left (a failed plan's: a peer that failed before that exchange never starts it,
 * and MPI may not free or cancel it) */
static void online_free_waiting(halo_online **o_p, int wait) {
  halo_online *o = *o_p;
  if (!o) return;
  if (o->req != MPI_REQUEST_NULL && wait) MPI_Wait(&o->req, MPI_STATUS_IGNORE);
  for (int k = 0; k < o->n; k++) halo_plan_destroy(&o->sub[k]), halo_schedule_free(&o->sched[k]);
  halo_stopwatch_destroy(&o->sw);
  halo_free(o->sample);
  halo_free(o->col_ranges);
  halo_free(o->ghost_ids);
  halo_pattern_free(&o->pattern);
  halo_free(o);
  *o_p = NULL;
}

static void online_free(halo_online **o_p) { online_free_waiting(o_p, 1); }

static void online_release(halo_plan P) {
  online_free_waiting(&P->online, !P->failed);
  halo_plan_destroy(&P->delegate);
  P->online_ops = NULL;
}

static const halo_online_ops online_ops;

/* The state of a trial of n candidates (n 0: a switch), with copies of what their plans are
 * made from. Collective. */
static halo_status online_new(halo_plan P, const halo_plan_input *in, const halo_pattern *pattern,
                              const halo_settings *s, int n, halo_online **o_p) {
  halo_status st = HALO_SUCCESS;
  halo_online *o = halo_calloc(1, sizeof *o);
  const int size = P->ctx->size;
  if (!o) st = HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "out of memory for strategy auto's trial");
  if (st == HALO_SUCCESS) {
    o->n = n, o->next = -1, o->serving = -1;
    o->later = HALO_TRANSPORT_AUTO, o->req = MPI_REQUEST_NULL;
    o->in = *in;
    o->opts = s->opts;
    st = HALO_CALLOC(o->sample, (int64_t)n * ONLINE_SAMPLES + 1);
  }
  if (st == HALO_SUCCESS && in->col_ranges && HALO_ALLOC(o->col_ranges, size + 1) == HALO_SUCCESS)
    memcpy(o->col_ranges, in->col_ranges, (size_t)(size + 1) * sizeof *o->col_ranges);
  else if (st == HALO_SUCCESS && in->col_ranges)
    st = HALO_ERR_OUT_OF_MEMORY;
  if (st == HALO_SUCCESS && in->ghost_ids &&
      HALO_ALLOC(o->ghost_ids, in->n_ghost + 1) == HALO_SUCCESS) {
    if (in->n_ghost)
      memcpy(o->ghost_ids, in->ghost_ids, (size_t)in->n_ghost * sizeof *o->ghost_ids);
  } else if (st == HALO_SUCCESS && in->ghost_ids)
    st = HALO_ERR_OUT_OF_MEMORY;
  if (st == HALO_SUCCESS) st = pattern_copy(pattern, &o->pattern);
  if (st == HALO_SUCCESS && P->memory == HALO_MEMORY_DEVICE && n > 0)
    st = halo_stopwatch_create(P->comp, n * ONLINE_SAMPLES, &o->sw);
  st = halo_agree(P->ctx->comm, st);
  if (st != HALO_SUCCESS) {
    online_free(&o);
    return st;
  }
  o->in.col_ranges = o->col_ranges;
  o->in.ghost_ids = o->ghost_ids;
  o->in.pattern = &o->pattern;
  o->in.leaves = halo_leaves_identity(&P->leaves) ? NULL : &P->leaves;
  o->in.trial = 1;       /* no timings of its own */
  o->in.choose = NULL;   /* a named strategy */
  o->in.switcher = NULL; /* its transport's state made with it */
  o->in.schedule = NULL;
  *o_p = o;
  return HALO_SUCCESS;
}

halo_status halo_online_create(halo_plan P, const halo_plan_input *in, const halo_pattern *pattern,
                               const halo_settings *s, const int *idx, int n, uint64_t key,
                               int64_t measured, halo_online_settle settle) {
  halo_online *o;
  HALO_CHECK(online_new(P, in, pattern, s, n, &o));
  o->key = key, o->measured = measured, o->settle = settle;
  for (int k = 0; k < n; k++) o->cand[k] = idx[k];
  P->online = o;
  P->online_ops = &online_ops;
  return HALO_SUCCESS;
}

halo_status halo_online_switch_create(halo_plan P, const halo_plan_input *in,
                                      const halo_pattern *pattern, const halo_settings *s,
                                      halo_transport later) {
  halo_online *o;
  HALO_CHECK(online_new(P, in, pattern, s, 0, &o));
  o->later = later;
  P->online = o;
  P->online_ops = &online_ops;
  return HALO_SUCCESS;
}

/* A plan of strategy s, transport t and message_cap cap, with the plan's other options, and
 * only its own forward exchange (schedule: made already, or NULL). Collective. */
static halo_status forward_plan(halo_plan P, halo_strategy sg, halo_transport t, int64_t cap,
                                halo_schedule *schedule, halo_plan *plan_p) {
  halo_online *o = P->online;
  halo_plan_options co = o->opts;
  co.strategy = sg, co.transport = t, co.message_cap = cap;
  co.autotune = 0;
  co.max_exchanges = 1;
  co.reverse = 0;
  co.memory = P->memory;
  co.wisdom = NULL;
  if (P->memory == HALO_MEMORY_DEVICE) co.stream = P->comp; /* the products' order */
  halo_plan_input in = o->in;
  in.schedule = schedule;
  return halo_plan_build(P->ctx, NULL, &in, &co, plan_p);
}

/* Candidate k's plan, with the plan's options but k's strategy, transport and
 * message_cap, and only its own forward exchange. Collective. */
static halo_status candidate_plan(halo_plan P, int k) {
  halo_online *o = P->online;
  const halo_candidate *c = &P->choice.c[o->cand[k]];
  const int has = o->has_sched[k];
  o->has_sched[k] = 0;
  const halo_status st = forward_plan(P, c->strategy, c->transport, c->message_cap,
                                      has ? &o->sched[k] : NULL, &o->sub[k]);
  halo_schedule_free(&o->sched[k]); /* moved into the plan (empty), or not taken */
  return st;
}

/* A switch's step at each of the plan's own forward exchanges: every SWITCH_EVERY of them,
 * the readiness agreed at the last such exchange is read (its MPI_Iallreduce, started then on
 * every rank, has had those exchanges' time to end) and the next agreement started; once
 * every rank's state is made, the plan of the later transport is made (collective: every rank
 * is at this exchange) and serves the plan's own forward exchanges from this one on; once
 * some rank's failed, the plan keeps its transport, and says why. */
static halo_status switch_step(halo_plan P) {
  halo_online *o = P->online;
  halo_choice *ch = &P->choice;
  if (o->switch_calls++ % SWITCH_EVERY != 0) return HALO_SUCCESS;
  if (o->req != MPI_REQUEST_NULL) {
    HALO_MPI(MPI_Wait(&o->req, MPI_STATUS_IGNORE));
    if (o->res[1] < 0 || o->res[0] == 1) {
      halo_plan later = NULL;
      char why[200] = "";
      halo_status st = HALO_SUCCESS;
      if (o->res[0] == 1) {
        st = forward_plan(P, P->sched.strategy, o->later,
                          P->sched.message_cap_used > 0 ? P->sched.message_cap_used
                                                        : o->opts.message_cap,
                          NULL, &later);
        if (st != HALO_SUCCESS) snprintf(why, sizeof why, "%s", halo_last_error());
        halo_error_clear();
      } else {
        (void)halo_device_transport_state(P->dev, o->later, why, sizeof why);
      }
      const size_t used = strlen(ch->note);
      if (later) {
        P->delegate = later;
        snprintf(ch->note + used, sizeof ch->note - used,
                 "%s%s since exchange %lld; %s before, while its state was made in the background",
                 used ? "; " : "", halo_transport_name(o->later), (long long)o->switch_calls,
                 halo_transport_name(P->transport));
      } else {
        snprintf(ch->note + used, sizeof ch->note - used,
                 "%s%s's state could not be made in the background (%s): %s kept", used ? "; " : "",
                 halo_transport_name(o->later), why[0] ? why : "on another rank",
                 halo_transport_name(P->transport));
      }
      online_free(&P->online); /* the calls stay: the later plan's, or none */
      if (!P->delegate) P->online_ops = NULL;
      return HALO_SUCCESS;
    }
  }
  char why[8];
  const int state = halo_device_transport_state(P->dev, o->later, why, sizeof why);
  o->vals[0] = state == 1, o->vals[1] = state < 0 ? -1 : 0;
  HALO_MPI(MPI_Iallreduce(o->vals, o->res, 2, MPI_INT, MPI_MIN, P->ctx->comm, &o->req));
  return HALO_SUCCESS;
}

void halo_online_give_schedule(halo_plan P, int k, halo_schedule *sched) {
  halo_online *o = P->online;
  o->sched[k] = *sched;
  o->has_sched[k] = 1;
  memset(sched, 0, sizeof *sched);
}

static halo_status online_pick(halo_plan P, halo_plan *serve_p) {
  halo_online *o = P->online;
  if (!o || P->async) { /* decided, or a call the trial does not time (halo_spmv_async) */
    *serve_p = o ? P : P->delegate ? P->delegate : P;
    return HALO_SUCCESS;
  }
  if (o->later != HALO_TRANSPORT_AUTO) { /* a switch: P serves until it happens */
    if (o->next < 0) {
      o->next = 0;
      HALO_CHECK(switch_step(P)); /* may end the switch (P->online freed) */
    }
    *serve_p = P->delegate ? P->delegate : P;
    return HALO_SUCCESS;
  }
  if (o->next < 0) {
    const int64_t turn = o->calls / ONLINE_PER_TURN;
    const int k = (int)(turn % o->n);
    if (k > 0 && !o->sub[k] && !o->dead[k] && candidate_plan(P, k) != HALO_SUCCESS) {
      /* agreed on every rank: the candidate is left out, its turns served untimed */
      o->dead[k] = 1;
      halo_error_clear();
    }
    o->next = k;
  }
  *serve_p = o->next > 0 && !o->dead[o->next] ? o->sub[o->next] : P;
  return HALO_SUCCESS;
}

static halo_status online_mark(halo_plan P, int what) {
  halo_online *o = P->online;
  if (!o || P->async) return HALO_SUCCESS;
  if (what == 0) { /* the begin of a call picked by halo_online_pick */
    o->serving = o->later != HALO_TRANSPORT_AUTO ? -1 : o->next; /* a switch times nothing */
    o->next = -1;
  }
  if (o->serving < 0) return HALO_SUCCESS;
  const int64_t c = o->calls, round = c / ONLINE_PER_TURN / o->n;
  const int timed = round >= 1 && !o->dead[o->serving];
  const int at =
      o->serving * ONLINE_SAMPLES + (int)((round - 1) * ONLINE_PER_TURN + c % ONLINE_PER_TURN);
  if (o->sw) {
    if (timed && (what == 0 || what == 3)) HALO_CHECK(halo_stopwatch_mark(o->sw, at, what == 3));
  } else {
    const double now = halo_wtime();
    if (what == 0) o->host = 0.0;
    if (what == 1 || what == 3) o->host += now - o->t_mark;
    o->t_mark = now;
    if (timed && what == 3) o->sample[at] = o->host;
  }
  return HALO_SUCCESS;
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The trial's end: every candidate's time, the most of any rank; the
 * cheapest kept. Collective (at the same call on every rank). */
static halo_status decide(halo_plan P) {
  halo_status st = HALO_SUCCESS;
  halo_online *o = P->online;
  halo_choice *ch = &P->choice;
  double med[HALO_MAX_CANDIDATES], most[HALO_MAX_CANDIDATES];
  if (o->sw) st = halo_stopwatch_read(o->sw, o->n * ONLINE_SAMPLES, o->sample);
  HALO_CHECK(halo_agree(P->ctx->comm, st));
  /* each rank's mean of its samples but the largest (one hiccup of the machine is not the
   * candidate's): a mean, not a median, as a rank's calls may wait for a late peer every other
   * call (a median then takes half the truth) */
  for (int k = 0; k < o->n; k++) {
    double *s = o->sample + (int64_t)k * ONLINE_SAMPLES, sum = 0.0;
    qsort(s, ONLINE_SAMPLES, sizeof *s, cmp_double);
    for (int j = 0; j < ONLINE_SAMPLES - 1; j++) sum += s[j];
    med[k] = o->dead[k] ? HUGE_VAL : sum / (ONLINE_SAMPLES - 1);
  }
  HALO_MPI(MPI_Allreduce(med, most, o->n, MPI_DOUBLE, MPI_MAX, P->ctx->comm));
  int best = 0, n_timed = 0;
  for (int k = 0; k < o->n; k++) {
    halo_candidate *c = &ch->c[o->cand[k]];
    c->timed = isfinite(most[k]) ? (most[k] > 1e-9 ? most[k] : 1e-9) : 0.0;
    n_timed += c->timed > 0;
  }
  const double own = halo_candidate_cost(ch, &ch->c[o->cand[0]]);
  for (int k = 1; k < o->n; k++) {
    const halo_candidate *c = &ch->c[o->cand[k]];
    if (c->timed > 0 && halo_candidate_cost(ch, c) < ONLINE_MARGIN * own &&
        halo_candidate_cost(ch, c) < halo_candidate_cost(ch, &ch->c[o->cand[best]]))
      best = k;
  }
  ch->how = 5;
  ch->n_timed = n_timed;
  ch->best = o->cand[best];
  if (best > 0) { /* the plan's own forward exchanges go to it from now on */
    P->delegate = o->sub[best];
    o->sub[best] = NULL;
  }
  o->settle(P, o->key, o->measured);
  online_free(&P->online); /* the calls stay: the winner's, or none (P's own) */
  if (!P->delegate) P->online_ops = NULL;
  return HALO_SUCCESS;
}

static halo_status online_done(halo_plan P) {
  halo_online *o = P->online;
  if (!o || P->async || o->serving < 0) return HALO_SUCCESS;
  HALO_CHECK(online_mark(P, 3));
  o->serving = -1;
  if (++o->calls < (int64_t)o->n * ONLINE_ROUNDS * ONLINE_PER_TURN) return HALO_SUCCESS;
  return decide(P);
}

static int online_unblock(halo_plan P, int again) {
  int released = 1;
  halo_plan q[HALO_MAX_CANDIDATES + 1];
  int n = 0;
  if (P->delegate) q[n++] = P->delegate;
  for (int k = 0; P->online && k < P->online->n; k++)
    if (P->online->sub[k]) q[n++] = P->online->sub[k];
  for (int i = 0; i < n; i++) {
    const int u = halo_exec_unblock(&q[i]->sets[0].fwd, again);
    if (u < released) released = u;
  }
  return released;
}

static const halo_online_ops online_ops = {online_pick, online_mark, online_done, online_unblock,
                                           online_release};
