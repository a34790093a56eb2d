/* Strategy AUTO: the model's parameters of a plan, every candidate modeled,
 * the ones the model cannot tell apart timed (or all of them, with
 * autotune N), and the choice kept by the communicator's context for the
 * next plan of the same pattern and options. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "interface/plan.h"
#include "model/wisdom.h"

/* The model is within a factor 2 of the measured exchange for most plans
 * (bench/results/model.md): candidates modeled within this factor of the
 * best are timed, at most HALO_AUTO_TRIAL of them, with the best of every
 * other transport. */
#define HALO_AUTO_BAND  2.0
#define HALO_AUTO_TRIAL 4
/* ... and the lowest of every other transport within this factor: the model knows least about
 * how transports compare, but one it prices 15 times the best (staged against ipc on 2 H200,
 * irregular:2000000,1) costs the trial on the program's calls 100 SpMVs to confirm it */
#define HALO_AUTO_OTHER_BAND 4.0

/* ---- the parameters ------------------------------------------------------ */

/* params "measure" and no file of the machine yet: halo_params_measure on
 * the plan's communicator (quick sizes), the set written to the machine's
 * file on rank 0 when it can be (a later run then reads it). Collective. */
static halo_status measure_and_save(halo_plan P, halo_params *prm) {
  halo_params_measure_options o = halo_params_measure_options_default();
  halo_params_measured m;
  if (P->ctx->size < 2) /* no message to measure */
    return halo_params_builtin(
        halo_params_builtin_for(P->memory == HALO_MEMORY_DEVICE ? halo_device_name(P->dev) : NULL),
        prm);
  o.ranks_per_node = P->set.opts.ranks_per_node;
  o.iterations = 20;
  o.max_bytes = 1 << 20;
  HALO_CHECK(halo_params_measure(P->ctx->comm, &o, &m));
  *prm = m.params;
  if (P->ctx->rank == 0) { /* kept when it can be; a plan does not fail for it */
    char path[HALO_CONTEXT_PARAMS_KEY];
    FILE *f = NULL;
    if (halo_params_cache_open(path, sizeof path, &f) == HALO_SUCCESS) {
      (void)halo_params_write_measured(
          &m,
          "measured by the first plan of a run with params = measure (20 round trips, up to 1 MiB)",
          f);
      fclose(f);
    }
  }
  return HALO_SUCCESS;
}

halo_status halo_plan_params(halo_plan P, const char *name, halo_params *prm) {
  halo_status st = HALO_SUCCESS;
  halo_context *ctx = P->ctx;
  char source[HALO_CONTEXT_PARAMS_KEY] = "";
  /* what names the set, decided on rank 0: the machine's file may exist on
   * its file system alone */
  if (ctx->rank == 0) {
    const int measure =
        (name && strcmp(name, "measure") == 0) ||
        (!(name && *name) && P->set.params && strcmp(P->set.params, "measure") == 0);
    const int have_file = P->set.params_file[0] && access(P->set.params_file, R_OK) == 0;
    if (measure)
      snprintf(source, sizeof source, "%s", have_file ? P->set.params_file : "measure");
    else if (name && *name)
      snprintf(source, sizeof source, "%s", name);
    else if (P->set.params)
      snprintf(source, sizeof source, "%s", P->set.params);
    else if (have_file)
      snprintf(source, sizeof source, "%s", P->set.params_file);
    else
      snprintf(source, sizeof source, "%s",
               halo_params_builtin_for(P->memory == HALO_MEMORY_DEVICE ? halo_device_name(P->dev)
                                                                       : NULL));
  }
  HALO_MPI(MPI_Bcast(source, (int)sizeof source, MPI_CHAR, 0, ctx->comm));
  source[sizeof source - 1] = '\0';
  for (int i = 0; i < ctx->n_params; i++)
    if (strcmp(ctx->params[i].key, source) == 0) {
      *prm = ctx->params[i].p;
      return HALO_SUCCESS;
    }
  if (strcmp(source, "measure") == 0) /* measured here, and saved for the next run */
    HALO_CHECK(measure_and_save(P, prm));
  else if (ctx->rank == 0)
    st = halo_params_load(source, prm);
  HALO_CHECK(halo_agree(ctx->comm, st));
  HALO_MPI(MPI_Bcast(prm, (int)sizeof *prm, MPI_BYTE, 0, ctx->comm));
  if (ctx->n_params < HALO_CONTEXT_PARAMS) { /* kept: later plans read no file */
    snprintf(ctx->params[ctx->n_params].key, sizeof ctx->params[0].key, "%s", source);
    ctx->params[ctx->n_params++].p = *prm;
  }
  return HALO_SUCCESS;
}

/* ---- the choices a context keeps ----------------------------------------- */

static uint64_t fnv(uint64_t h, const void *data, size_t n) {
  const unsigned char *b = data;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * UINT64_C(1099511628211);
  return h;
}

#define FNV(h, v) ((h) = fnv((h), &(v), sizeof(v)))

/* This rank's key of a choice: its pattern's messages and every setting the
 * choice depends on (the parameters by their name). */
static uint64_t memo_key(const halo_plan P, const halo_pattern *pattern, const halo_settings *s,
                         const halo_params *prm) {
  uint64_t h = UINT64_C(1469598103934665603);
  const halo_plan_options *o = &s->opts;
  const int has_matrix = P->A != NULL, memory = (int)P->memory;
  FNV(h, has_matrix), FNV(h, memory), FNV(h, pattern->n_local), FNV(h, pattern->n_ghost);
  FNV(h, o->ranks_per_node), FNV(h, o->message_cap), FNV(h, o->remove_duplicates);
  FNV(h, o->transport), FNV(h, o->autotune), FNV(h, s->gpu_aware_mpi);
  FNV(h, o->expected_uses), FNV(h, P->ctx->transport_made); /* the set-ups still to pay */
  FNV(h, s->local_kernel), FNV(h, s->spmv_group), FNV(h, s->spmv_long_row);
  FNV(h, s->max_count); /* which candidates can run (a transport's schedule_check) */
  h = fnv(h, prm, sizeof *prm);
  FNV(h, pattern->n_recv);
  for (int i = 0; i < pattern->n_recv; i++)
    FNV(h, pattern->recv[i].peer), FNV(h, pattern->recv[i].count);
  FNV(h, pattern->n_send);
  for (int i = 0; i < pattern->n_send; i++)
    FNV(h, pattern->send[i].peer), FNV(h, pattern->send[i].count);
  return h;
}

/* The context's choice for this key on every rank, or 0. Collective. */
static halo_status memo_find(halo_context *ctx, uint64_t key, halo_choice *ch, int *hit_p) {
  int seq = -1, at = -1;
  for (int i = 0; i < ctx->n_memo; i++)
    if (ctx->memo[i].key == key) seq = ctx->memo[i].seq, at = i;
  int v[2] = {seq, -seq}, r[2];
  HALO_MPI(MPI_Allreduce(v, r, 2, MPI_INT, MPI_MIN, ctx->comm));
  *hit_p = r[0] >= 0 && r[0] == -r[1]; /* every rank holds the same choice */
  if (*hit_p) *ch = ctx->memo[at].choice;
  return HALO_SUCCESS;
}

/* Keep a choice (the oldest goes when the context holds HALO_CONTEXT_MEMO). */
static void memo_keep(halo_context *ctx, uint64_t key, const halo_choice *ch) {
  int at = ctx->n_memo < HALO_CONTEXT_MEMO ? ctx->n_memo++ : ctx->memo_seq % HALO_CONTEXT_MEMO;
  ctx->memo[at].key = key;
  ctx->memo[at].seq = ctx->memo_seq++;
  ctx->memo[at].choice = *ch;
}

/* A choice remembered in the wisdom file (rank 0 writes); a file that cannot be written keeps
 * what it had, and the choice's note says why. */
static void wisdom_remember(halo_plan P, const char *path, uint64_t wkey, int64_t measured) {
  halo_choice *ch = &P->choice;
  const halo_candidate *b = &ch->c[ch->best];
  const halo_wisdom_entry we = {b->strategy, b->transport, b->message_cap, ch->uses, measured};
  if (halo_wisdom_store(P->ctx->rank, path, wkey, &we) != HALO_SUCCESS) {
    snprintf(ch->note, sizeof ch->note, "not remembered: %.200s", halo_last_error());
    halo_error_clear();
  }
}

/* The trial on the program's calls decided P->choice: kept by the context for its key and
 * remembered in the wisdom file (halo_online_settle). */
static void choice_settled(halo_plan P, uint64_t key, int64_t measured) {
  for (int i = 0; i < P->ctx->n_memo; i++)
    if (P->ctx->memo[i].key == key) P->ctx->memo[i].choice = P->choice;
  if (P->wisdom) wisdom_remember(P, P->wisdom, P->wisdom_key, measured);
}

/* ---- the timed trial ------------------------------------------------------ */

/* One call of a candidate's plan: an SpMV when the plan has a matrix, else
 * an exchange. */
static int64_t trial_calls;
int64_t halo_debug_trial_calls(void) { return trial_calls; }

static halo_status trial_call(halo_plan sub, const double *x, double *y) {
  trial_calls++;
  if (sub->A) return halo_spmv(sub, 1.0, x, 0.0, y);
  HALO_CHECK(halo_exchange_begin(sub, x, NULL));
  return halo_exchange_end(sub);
}

/* Seconds of n calls, each completed on the device before the next, as a
 * solver's iteration waits for its product (calls left to run back to back
 * overlap one's host work with the last's device work, which hides the
 * host's share of a transport: ipc was timed 28 us against nccl's 31 us so,
 * and took 42 against 37 us a completed call); the most of any rank.
 * Collective. */
static halo_status trial_batch(halo_plan sub, const double *x, double *y, int n, double *t_p) {
  halo_status st = HALO_SUCCESS;
  const MPI_Comm comm = sub->ctx->comm;
  HALO_MPI(MPI_Barrier(comm));
  const double t0 = halo_wtime();
  for (int i = 0; i < n && st == HALO_SUCCESS; i++) {
    st = trial_call(sub, x, y);
    if (st == HALO_SUCCESS) st = halo_plan_synchronize(sub);
  }
  double t = halo_wtime() - t0;
  HALO_CHECK(halo_agree(comm, st));
  HALO_MPI(MPI_Allreduce(&t, t_p, 1, MPI_DOUBLE, MPI_MAX, comm));
  return HALO_SUCCESS;
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* A plan of candidate c, with the options of the plan being made. */
static halo_status trial_plan(halo_plan P, const halo_plan_input *in, const halo_pattern *pattern,
                              const halo_settings *s, const halo_candidate *c, halo_plan *sub_p) {
  halo_plan_options co = s->opts;
  halo_plan_input sin = *in;
  co.strategy = c->strategy, co.transport = c->transport, co.message_cap = c->message_cap;
  co.autotune = 0;
  co.max_exchanges = 1;
  co.reverse = 0;
  sin.pattern = pattern; /* learned once */
  sin.trial = 1;         /* no timings */
  sin.choose = NULL;     /* a named strategy */
  sin.switcher = NULL;   /* its transport's state made with it */
  return halo_plan_build(P->ctx, P->A, &sin, &co, sub_p);
}

/*
 * Time the candidates idx[0..n) of ch: each plan runs 2 calls to warm up,
 * then `rounds` rounds in which every candidate runs `batch` calls back to
 * back (0: as many as fill 2 ms, 3 to 100); a candidate's time per call is
 * the median of its rounds, each the most of any rank. With one round the
 * plans are made one at a time, else all are alive at once and the rounds
 * interleave them. Collective.
 */
static halo_status trial(halo_plan P, const halo_plan_input *in, const halo_pattern *pattern,
                         const halo_settings *s, halo_choice *ch, const int *idx, int n, int batch,
                         int rounds) {
  halo_status st = HALO_SUCCESS;
  const int device = P->memory == HALO_MEMORY_DEVICE, alive = rounds > 1 ? n : 1;
  const int64_t n_rows = P->A ? P->A->row_end - P->A->row_begin : 0;
  const MPI_Comm comm = P->ctx->comm;
  halo_plan sub[HALO_MAX_CANDIDATES] = {0};
  double *x = NULL, *y = NULL, *t = NULL;
  int *calls = NULL;
  if (device) {
    st = halo_dev_malloc((void **)&x, (size_t)(in->n_local + 1) * sizeof *x);
    if (st == HALO_SUCCESS) st = halo_dev_malloc((void **)&y, (size_t)(n_rows + 1) * sizeof *y);
    if (st == HALO_SUCCESS) st = HALO_CALLOC(t, in->n_local + 1); /* zeros for x */
    if (st == HALO_SUCCESS) st = halo_host_to_dev(x, t, (size_t)(in->n_local + 1) * sizeof *x);
    halo_free(t);
    t = NULL;
  } else {
    st = HALO_CALLOC(x, in->n_local + 1);
    if (st == HALO_SUCCESS) st = HALO_CALLOC(y, n_rows + 1);
  }
  if (st == HALO_SUCCESS) st = HALO_ALLOC(t, (int64_t)n * rounds);
  if (st == HALO_SUCCESS) st = HALO_ALLOC(calls, n);
  HALO_TRY(halo_agree(comm, st));
  for (int first = 0; first < n; first += alive) {
    const int last = first + alive < n ? first + alive : n;
    for (int j = first; j < last; j++) {
      double w;
      HALO_TRY(trial_plan(P, in, pattern, s, &ch->c[idx[j]], &sub[j]));
      HALO_TRY(trial_batch(sub[j], x, y, 2, &w));
      calls[j] = batch;
      if (batch == 0) {
        const double per = w / 2 > 1e-7 ? w / 2 : 1e-7;
        calls[j] = (int)ceil(2e-3 / per);
        calls[j] = calls[j] < 3 ? 3 : calls[j] > 100 ? 100 : calls[j];
      }
    }
    for (int r = 0; r < rounds; r++)
      for (int j = first; j < last; j++) {
        double w;
        HALO_TRY(trial_batch(sub[j], x, y, calls[j], &w));
        t[(int64_t)j * rounds + r] = w / calls[j];
      }
    for (int j = first; j < last; j++) halo_plan_destroy(&sub[j]);
  }
  for (int j = 0; j < n; j++) {
    double *tj = t + (int64_t)j * rounds;
    qsort(tj, (size_t)rounds, sizeof *tj, cmp_double);
    ch->c[idx[j]].timed = rounds % 2 ? tj[rounds / 2] : 0.5 * (tj[rounds / 2 - 1] + tj[rounds / 2]);
  }
cleanup:
  for (int j = 0; j < n; j++) halo_plan_destroy(&sub[j]);
  if (device) {
    halo_dev_free(x);
    halo_dev_free(y);
  } else {
    halo_free(x);
    halo_free(y);
  }
  halo_free(t);
  halo_free(calls);
  return st;
}

/* The candidates to time with autotune's default: the lowest modeled ones
 * within HALO_AUTO_BAND of the best, one of each set modeled alike on one
 * transport (their schedules are, as a rule, the same messages), at most
 * HALO_AUTO_TRIAL; and the lowest modeled of every other transport within
 * HALO_AUTO_OTHER_BAND, whose costs the model knows least (GPUs shared by
 * several ranks, copies that overlap). Returns how many (1: the model alone
 * decides). */
static int close_candidates(const halo_choice *ch, int *idx) {
  int order[HALO_MAX_CANDIDATES], n = 0;
  double cost[HALO_MAX_CANDIDATES];
  for (int i = 0; i < ch->n; i++) order[i] = i, cost[i] = halo_candidate_cost(ch, &ch->c[i]);
  for (int i = 1; i < ch->n; i++) /* by modeled cost (set-up + uses x time), stable */
    for (int j = i; j > 0 && cost[order[j]] < cost[order[j - 1]]; j--) {
      const int w = order[j];
      order[j] = order[j - 1], order[j - 1] = w;
    }
  const double best = cost[order[0]];
  for (int i = 0; i < ch->n && n < HALO_AUTO_TRIAL; i++) {
    const halo_candidate *c = &ch->c[order[i]];
    if (cost[order[i]] > HALO_AUTO_BAND * best || !isfinite(c->seconds)) break;
    int alike = 0;
    for (int k = 0; k < n && !alike; k++) {
      const halo_candidate *d = &ch->c[idx[k]];
      alike = d->transport == c->transport &&
              fabs(d->seconds - c->seconds) <= 1e-9 * (c->seconds > 0 ? c->seconds : 1);
    }
    if (!alike) idx[n++] = order[i];
  }
  for (int i = 0; i < ch->n; i++) { /* the best of each transport not yet in */
    const halo_candidate *c = &ch->c[order[i]];
    if (!isfinite(c->seconds)) continue; /* it cannot run this plan */
    if (cost[order[i]] > HALO_AUTO_OTHER_BAND * best) break; /* in order: the rest cost more */
    /* a set-up the expected uses cannot repay: not tried (a trial would pay it) */
    if (c->setup_seconds > HALO_AUTO_BAND * best) continue;
    int seen = 0;
    for (int k = 0; k < n && !seen; k++) seen = ch->c[idx[k]].transport == c->transport;
    if (!seen) idx[n++] = order[i];
  }
  return n;
}

/* Whether the candidates may be timed on the program's own first calls (setting auto.trial =
 * calls): not for a plan whose timings the program reads (device.timeline); as many of them as
 * the expected uses can host in half their calls (at least 2, else the model decides). */
static int online_allowed(const halo_settings *s, const halo_plan_input *in, const halo_choice *ch,
                          int *n_p) {
  if (s->auto_trial != 1 || s->timeline || in->trial) return 0; /* timed at plan time */
  const int64_t fit = ch->uses / 2 / halo_online_calls();
  if (fit < 2) return -1; /* too few uses to time any: the model decides */
  if (*n_p > fit) *n_p = (int)fit;
  return 1;
}

/* ---- the choice ----------------------------------------------------------- */

/* A candidate whose transport cannot run its schedule on some rank (the
 * descriptor's schedule_check, e.g. a count past an int) is modeled at infinity:
 * never chosen, never timed. Collective. */
static halo_status candidate_runs(MPI_Comm comm, halo_transport t, const halo_schedule *sched,
                                  int64_t max_count, halo_candidate *c) {
  const halo_transport_desc *d = halo_transport_find(t);
  if (!d || !d->schedule_check) return HALO_SUCCESS;
  int bad = d->schedule_check(sched, max_count) != HALO_SUCCESS;
  HALO_MPI(MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, comm));
  if (bad) c->seconds = HUGE_VAL;
  return HALO_SUCCESS;
}

halo_status halo_plan_choose(halo_plan P, const halo_plan_input *in, const halo_pattern *pattern,
                             halo_settings *s, int transport_deferred) {
  halo_status st = HALO_SUCCESS;
  halo_plan_options *o = &s->opts;
  halo_params prm;
  halo_choice *ch = &P->choice;
  halo_model_rank *ranks = NULL;
  halo_schedule scheds[HALO_MAX_CANDIDATES]; /* of each strategy and message_cap */
  int made[HALO_MAX_CANDIDATES] = {0};        /* ... made and not given away */
  memset(scheds, 0, sizeof scheds);
  const MPI_Comm comm = P->ctx->comm;
  const int device = P->memory == HALO_MEMORY_DEVICE;
  const int rpg = device ? halo_device_ranks_per_gpu(P->dev) : 1;
  HALO_CHECK(halo_plan_params(P, NULL, &prm));
  const uint64_t key = memo_key(P, pattern, s, &prm);
  int hit = 0, online = 0, n_online = 0;
  HALO_CHECK(memo_find(P->ctx, key, ch, &hit));
  /* the key of the wisdom file: where the choice is remembered, and the plan's measured
   * uses written at its destroy */
  uint64_t wkey = 0;
  if (s->wisdom) {
    const halo_wisdom_where ww = {&prm, P->topo, (int)P->memory, rpg, P->A != NULL, o};
    HALO_CHECK(halo_wisdom_key(comm, pattern, &ww, &wkey));
    const size_t len = strlen(s->wisdom) + 1;
    st = HALO_ALLOC(P->wisdom, len);
    if (st == HALO_SUCCESS) memcpy(P->wisdom, s->wisdom, len), P->wisdom_key = wkey;
    HALO_CHECK(halo_agree(comm, st));
  }
  if (!hit) {
    snprintf(ch->params, sizeof ch->params, "%s", prm.name);
    ch->uses = o->expected_uses;
    halo_transport tr[HALO_N_TRANSPORTS];
    int n_tr = 0;
    if (transport_deferred) {
      /* the registry's candidates of the plan's memory whose needs are met: those AUTO always
       * weighs, and those it weighs where this machine's parameters price them (their own
       * pairs: halo params measure; an nvshmem candidate initialises NVSHMEM, which a
       * program should ask for) */
      const halo_transport_where where = {
          .own_gpu = rpg == 1,
          .gpu_aware_mpi = device && halo_device_mpi_aware(P->dev, s->gpu_aware_mpi),
          .compiled_only = 1};
      n_tr = halo_transport_candidates(P->memory, &where, halo_model_priced, &prm, tr);
    } else {
      tr[n_tr++] = P->transport;
    }
    /* a choice remembered in the wisdom file, for a transport this plan can use */
    int from_wisdom = 0;
    int64_t measured = 0;
    ch->note[0] = '\0';
    if (s->wisdom) {
      halo_wisdom_entry we;
      memset(&we, 0, sizeof we);
      HALO_TRY(halo_wisdom_find(comm, s->wisdom, wkey, &we, &from_wisdom, ch->note,
                                sizeof ch->note));
      int usable = 0;
      for (int a = 0; a < n_tr; a++) usable |= tr[a] == we.transport;
      if (from_wisdom && !usable) {
        snprintf(ch->note, sizeof ch->note,
                 "wisdom file's choice for this key ignored: transport %s cannot serve it",
                 halo_transport_name(we.transport));
        from_wisdom = 0;
      }
      /* the uses the plans of this key served replace the expected ones: a choice made
       * for uses of another power of two is made again, for them */
      if (from_wisdom && we.measured > 0) ch->uses = measured = we.measured;
      if (from_wisdom && !halo_wisdom_same_uses(ch->uses, we.uses)) {
        snprintf(ch->note, sizeof ch->note,
                 "chosen again: the wisdom file's choice was for %lld uses, its plans served "
                 "%lld",
                 (long long)we.uses, (long long)ch->uses);
        from_wisdom = 0;
      }
      if (from_wisdom) {
        ch->how = 4, ch->n = 1, ch->n_timed = 0, ch->best = 0;
        ch->c[0] = (halo_candidate){we.strategy, we.transport, we.message_cap, 0.0, 0.0, 0.0};
        snprintf(ch->note, sizeof ch->note, "%.180s", s->wisdom);
      }
    }
    if (!from_wisdom) {
      int64_t caps[5];
      const int n_caps = halo_choose_caps(o->message_cap, caps);
      const int per_tr = HALO_N_STRATEGIES - 1 + n_caps; /* candidates of one transport */
      const size_t size = (size_t)P->ctx->size;
      if (n_tr * per_tr > HALO_MAX_CANDIDATES) HALO_FAIL(HALO_ERR_INTERNAL, "too many candidates");
      st = HALO_ALLOC(ranks, (size_t)n_tr * size);
      HALO_TRY(halo_agree(comm, st));
      for (int a = 0; a < n_tr; a++)
        HALO_TRY(halo_choose_ranks(comm, P->topo, &prm, device, halo_plan_is_helper(P), rpg, tr[a],
                                   ranks + (size_t)a * size));
      /* a schedule does not depend on the transport: each is built once and modeled on every
       * transport; the candidates stay in the order transport, strategy, message_cap */
      ch->n = n_tr * per_tr;
      /* one node, or one rank a node: the node-aware strategies have nothing to gather, and
       * send the standard exchange's messages (bench/results/time-to-solution.md): modeled as
       * standard, without making their schedules (on an irregular pattern each takes several
       * SpMVs' time) */
      const int flat = P->topo->n_nodes == 1 || P->topo->max_node_size == 1;
      if (flat) {
        const size_t used = strlen(ch->note);
        snprintf(ch->note + used, sizeof ch->note - used,
                 "%s%s: the node-aware strategies send standard's messages, modeled as it",
                 used ? "; " : "", P->topo->n_nodes == 1 ? "one node" : "one rank a node");
      }
      for (int sg = 0, j = 0; sg < HALO_N_STRATEGIES; sg++)
        for (int b = 0; b < (sg == HALO_STRATEGY_SPLIT ? n_caps : 1); b++, j++) {
          halo_settings cs = *s;
          halo_schedule *const sched = &scheds[j]; /* kept for the plans of the choice */
          cs.opts.strategy = (halo_strategy)sg, cs.opts.message_cap = caps[b];
          if (flat && sg != HALO_STRATEGY_STANDARD) { /* standard's (j 0) model, no schedule */
            for (int a = 0; a < n_tr; a++) {
              halo_candidate *c = &ch->c[a * per_tr + j];
              *c = ch->c[a * per_tr];
              c->strategy = (halo_strategy)sg, c->message_cap = caps[b];
            }
            continue;
          }
          HALO_TRY(halo_plan_schedule(P, in, pattern, &cs, sched));
          made[j] = 1;
          for (int a = 0; a < n_tr && st == HALO_SUCCESS; a++) {
            halo_candidate *c = &ch->c[a * per_tr + j];
            double phase[HALO_MAX_PHASES];
            *c = (halo_candidate){(halo_strategy)sg, tr[a], caps[b], 0.0, 0.0, 0.0};
            /* the transport's state, where this communicator has none yet */
            if (!P->ctx->transport_made[tr[a]])
              c->setup_seconds = halo_model_setup(&prm, tr[a], P->ctx->size);
            st = halo_choose_model(comm, P->topo, &prm, tr[a], sched, ranks + (size_t)a * size,
                                   phase, &c->seconds);
            st = halo_agree(comm, st);
            if (st == HALO_SUCCESS) st = candidate_runs(comm, tr[a], sched, s->max_count, c);
          }
          HALO_TRY(st);
        }
      int idx[HALO_MAX_CANDIDATES], n_timed = 0;
      if (o->autotune > 0) { /* every candidate that can run */
        for (int i = 0; i < ch->n; i++)
          if (isfinite(ch->c[i].seconds)) idx[n_timed++] = i;
        HALO_TRY(trial(P, in, pattern, s, ch, idx, n_timed, o->autotune, 1));
      } else if (o->autotune == HALO_AUTOTUNE_CLOSE && P->ctx->size > 1) {
        n_timed = close_candidates(ch, idx);
        const int how = n_timed > 1 ? online_allowed(s, in, ch, &n_timed) : -1;
        if (how > 0)
          online = 1; /* the candidates are timed on the program's first calls */
        else if (how == 0)
          HALO_TRY(trial(P, in, pattern, s, ch, idx, n_timed, 0, 5));
        else
          n_timed = 0;
      }
      ch->how = o->autotune > 0 ? 2 : n_timed > 1 && !online ? 3 : 1;
      ch->n_timed = n_timed > 1 && !online ? n_timed : 0;
      halo_choice_best(ch); /* with the online trial, the model's best (idx[0]): made first */
      if (s->wisdom && !online) /* remembered for later plans, runs and re-set-ups */
        wisdom_remember(P, s->wisdom, wkey, measured);
      if (online) { /* the plan is made for the model's best: the trial's first */
        int j = 0;
        while (j < n_timed && idx[j] != ch->best) j++;
        if (j == n_timed) j = n_timed - 1, idx[j] = ch->best;
        idx[j] = idx[0], idx[0] = ch->best;
        HALO_TRY(
            halo_online_create(P, in, pattern, s, idx, n_timed, key, measured, choice_settled));
        n_online = n_timed;
      }
      /* the plan's own schedule, made already (halo_plan_build takes it); then each trial
       * candidate's, where no other took it (candidates of one strategy and message_cap on
       * several transports share one: the later ones make their own) */
      if (made[ch->best % per_tr]) {
        P->sched = scheds[ch->best % per_tr];
        memset(&scheds[ch->best % per_tr], 0, sizeof scheds[0]);
        P->sched_made = 1;
        made[ch->best % per_tr] = 0;
      }
      for (int k = 1; k < n_online; k++)
        if (made[idx[k] % per_tr]) {
          halo_online_give_schedule(P, k, &scheds[idx[k] % per_tr]);
          made[idx[k] % per_tr] = 0;
        }
    }
    memo_keep(P->ctx, key, ch); /* with the online trial, the model's choice until it settles */
    if (online) ch->how = 6, ch->n_timed = n_online;
  }
  o->strategy = ch->c[ch->best].strategy;
  o->message_cap = ch->c[ch->best].message_cap;
  if (transport_deferred && device) {
    HALO_TRY(halo_device_transport_later(P->dev, ch->c[ch->best].transport, s->gpu_aware_mpi,
                                         NULL, s->nccl_background && in->switcher != NULL,
                                         &P->transport, &P->later));
    P->ctx->transport_made[P->transport] = 1;
    if (P->later != HALO_TRANSPORT_AUTO && P->online) { /* the switch comes first */
      halo_online_release(P);
      ch->how = 1, ch->n_timed = 0;
    }
  } else if (transport_deferred)
    P->transport = ch->c[ch->best].transport;
cleanup:
  for (int j = 0; j < HALO_MAX_CANDIDATES; j++) halo_schedule_free(&scheds[j]);
  halo_free(ranks);
  return st;
}
