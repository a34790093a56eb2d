/* Every strategy, on hundreds of random cases, without MPI: the simulator
 * builds the schedules of all ranks (the builders halo_plan_create uses), a
 * serial executor written here moves the values between the ranks in
 * memory, and every ghost must be the value of x at its global id; the
 * reversed schedules, executed the same way, must add random contributions
 * of the ghosts into their owners as a sum computed from the pattern does,
 * the same to the bit whatever order the messages arrive in. The
 * structure of the schedules is checked against what each strategy promises:
 *   3-Step   at most one inter-node message per ordered pair of nodes;
 *   2-Step   at most one per (rank, destination node);
 *   Split    no inter-node message above the message_cap its receiving node used;
 *   with duplicate removal, the three move the same inter-node bytes, and
 *   none moves more inter-node bytes than standard.
 * The registry has a descriptor for every strategy, laid out as its
 * schedules are; the builder refuses a descriptor it cannot follow. */
#include "halo/sim.h"
#include "plan/nodebuild.h"
#include "plan/nodein.h"
#include "plan/registry.h"
#include "model/simulate.h"
#include "plan/topology.h"
#include "test_util.h"

static uint64_t rng_state;
static uint64_t rng(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}
static int64_t rnd(int64_t n) { return n > 0 ? (int64_t)(rng() % (uint64_t)n) : 0; }

/* A random sparse matrix: rows of 0..7 random entries, a few dense rows and
 * columns, sometimes a band. */
static void random_matrix(int64_t N, int64_t M, halo_csr *A) {
  memset(A, 0, sizeof *A);
  A->n_rows = N, A->n_cols = M, A->row_begin = 0, A->row_end = N;
  A->row_ptr = halo_malloc((size_t)(N + 1) * sizeof(int64_t));
  int64_t cap = 16 * N + 16, n = 0;
  A->col_ids = halo_malloc((size_t)cap * sizeof(int64_t));
  A->values = halo_malloc((size_t)cap * sizeof(double));
  const int64_t dense_col = rnd(M), dense_row = rnd(N);
  const int band = (int)rnd(2);
  for (int64_t i = 0; i < N; i++) {
    A->row_ptr[i] = n;
    int64_t k = i == dense_row ? (M < 60 ? M : 60) : rnd(8);
    for (int64_t t = 0; t < k && n < cap - 4; t++) A->col_ids[n++] = rnd(M);
    if (band && M == N && i + 1 < N) A->col_ids[n++] = i + 1;
    if (rnd(3) == 0) A->col_ids[n++] = dense_col;
    /* sort and unique the row */
    for (int64_t a = A->row_ptr[i] + 1; a < n; a++)
      for (int64_t b = a; b > A->row_ptr[i] && A->col_ids[b - 1] > A->col_ids[b]; b--) {
        int64_t tmp = A->col_ids[b];
        A->col_ids[b] = A->col_ids[b - 1];
        A->col_ids[b - 1] = tmp;
      }
    int64_t u = A->row_ptr[i];
    for (int64_t a = A->row_ptr[i]; a < n; a++)
      if (u == A->row_ptr[i] || A->col_ids[a] != A->col_ids[u - 1]) A->col_ids[u++] = A->col_ids[a];
    n = u;
  }
  A->row_ptr[N] = n;
  for (int64_t k = 0; k < n; k++) A->values[k] = 1.0;
}

/* Random cut points: some ranks own nothing. */
static void random_layout(int64_t n, int P, int64_t *b) {
  b[0] = 0;
  for (int r = 1; r < P; r++) b[r] = rnd(4) == 0 ? -1 : rnd(n + 1);
  b[P] = n;
  for (int r = 1; r < P; r++) {
    if (b[r] < 0) b[r] = b[r - 1];
    if (b[r] < b[r - 1]) b[r] = b[r - 1];
  }
  for (int r = P - 1; r >= 1; r--)
    if (b[r] > b[r + 1]) b[r] = b[r + 1];
}

typedef struct {
  int from, to, ordinal;
  int64_t offset, count; /* where the values sit in the sender's packed buffer */
} sent_msg;

static int cmp_sent(const void *a, const void *b) {
  const sent_msg *x = a, *y = b;
  if (x->from != y->from) return x->from - y->from;
  if (x->to != y->to) return x->to - y->to;
  return x->ordinal - y->ordinal;
}

/* Buffers of one rank: its source space is src then work, its destination
 * space dst then work. */
typedef struct {
  double *src, *dst, *work;
} rank_bufs;

/* Execute the schedules of all P ranks in memory, phase by phase: every
 * rank packs its sends, then every rank applies its receives in the order
 * of its receive list, writing them or, when the schedules add, adding them
 * (schedule.h's summation order). Ranks take their receives in increasing
 * order, or decreasing with backwards: the order messages arrive in must
 * not matter. */
static void exchange_serial(const halo_schedule *s, int P, rank_bufs *b, int backwards,
                            const char *label) {
  double **packed = calloc((size_t)P, sizeof *packed);
  for (int k = 0; k < s[0].n_phases; k++) {
    int64_t n_msgs = 0;
    for (int r = 0; r < P; r++) n_msgs += s[r].phase[k].n_send;
    sent_msg *sent = malloc((size_t)(n_msgs + 1) * sizeof *sent);
    int64_t m = 0;
    for (int r = 0; r < P; r++) { /* pack everything first */
      const halo_phase *ph = &s[r].phase[k];
      free(packed[r]);
      packed[r] = malloc((size_t)(ph->send_total + 1) * sizeof(double));
      for (int64_t i = 0; i < ph->send_total; i++) {
        int64_t j = ph->pack[i];
        packed[r][i] = j < s[r].n_local ? b[r].src[j] : b[r].work[j - s[r].n_local];
      }
      for (int i = 0; i < ph->n_send; i++) {
        int ord = 0;
        for (int j = 0; j < i; j++) ord += ph->send[j].peer == ph->send[i].peer;
        sent[m++] = (sent_msg){r, ph->send[i].peer, ord, ph->send[i].offset, ph->send[i].count};
      }
    }
    qsort(sent, (size_t)m, sizeof *sent, cmp_sent);
    for (int t = 0; t < P; t++) { /* then deliver */
      const int q = backwards ? P - 1 - t : t;
      const halo_phase *ph = &s[q].phase[k];
      for (int i = 0; i < ph->n_recv; i++) {
        int ord = 0;
        for (int j = 0; j < i; j++) ord += ph->recv[j].peer == ph->recv[i].peer;
        sent_msg key = {ph->recv[i].peer, q, ord, 0, 0};
        sent_msg *f = bsearch(&key, sent, (size_t)m, sizeof *sent, cmp_sent);
        CHECK_MSG(f && f->count == ph->recv[i].count,
                  "%s: phase %d: rank %d's receive %d from %d "
                  "has no matching send",
                  label, k, q, i, ph->recv[i].peer);
        for (int64_t u = 0; u < f->count; u++) {
          int64_t j = ph->unpack[ph->recv[i].offset + u];
          double v = packed[f->from][f->offset + u];
          double *d = j < s[q].n_ghost ? &b[q].dst[j] : &b[q].work[j - s[q].n_ghost];
          if (s[q].add)
            *d += v;
          else
            *d = v;
        }
      }
    }
    free(sent);
  }
  for (int r = 0; r < P; r++) free(packed[r]);
  free(packed);
}

static void free_bufs(rank_bufs *b, int P) {
  for (int r = 0; r < P; r++) free(b[r].src), free(b[r].dst), free(b[r].work);
  free(b);
}

/* Run the schedules of all P ranks in memory; check every ghost. */
static void serial_execute(halo_sim sim, halo_schedule *s, const char *label) {
  const int P = sim->P;
  rank_bufs *b = calloc((size_t)P, sizeof *b);
  for (int r = 0; r < P; r++) {
    b[r].src = malloc((size_t)(s[r].n_local + 1) * sizeof(double));
    b[r].dst = malloc((size_t)(s[r].n_ghost + 1) * sizeof(double));
    b[r].work = malloc((size_t)(s[r].n_work + 1) * sizeof(double));
    for (int64_t i = 0; i < s[r].n_local; i++) b[r].src[i] = test_x(sim->col_ranges[r] + i);
    for (int64_t i = 0; i < s[r].n_ghost; i++) b[r].dst[i] = NAN;
    for (int64_t i = 0; i < s[r].n_work; i++) b[r].work[i] = NAN;
  }
  exchange_serial(s, P, b, 0, label);
  for (int r = 0; r < P; r++)
    for (int64_t i = 0; i < s[r].n_ghost; i++)
      CHECK_MSG(b[r].dst[i] == test_x(sim->ghost_ids[r][i]),
                "%s: rank %d ghost %lld (global %lld) is %g, not %g", label, r, (long long)i,
                (long long)sim->ghost_ids[r][i], b[r].dst[i], test_x(sim->ghost_ids[r][i]));
  free_bufs(b, P);
}

/* Ghost contributions: a generator of its own, so that the cases drawn by
 * rng() stay those of the forward tests. */
static uint64_t contrib_state = 0x2545f4914f6cdd1dULL;
static double contribution(void) {
  contrib_state ^= contrib_state << 13;
  contrib_state ^= contrib_state >> 7;
  contrib_state ^= contrib_state << 17;
  return (double)(contrib_state >> 11) * 0x1.0p-52 - 1.0;
}

/* The reverses of the schedules s of all P ranks: random contributions of
 * every ghost added into their owners' entries (x to begin with), executed
 * twice with the receives taken in opposite rank orders. Each owner's entry
 * must be the sum of x and the contributions of every rank that has it as a
 * ghost, computed from the pattern, within 1e-13 of the sum of the
 * magnitudes, and the two runs must agree to the bit. */
static void serial_reverse(halo_sim sim, const halo_schedule *s, const char *label) {
  const int P = sim->P;
  halo_schedule *r = calloc((size_t)P, sizeof *r);
  rank_bufs *b[2] = {calloc((size_t)P, sizeof *b[0]), calloc((size_t)P, sizeof *b[1])};
  double **ref = calloc((size_t)P, sizeof *ref), **mag = calloc((size_t)P, sizeof *mag);
  for (int q = 0; q < P; q++) {
    CHECK_OK(halo_schedule_reverse(&s[q], &r[q]));
    CHECK_MSG(halo_schedule_check(&r[q]) == HALO_SUCCESS, "%s: reverse of rank %d: %s", label, q,
              halo_last_error());
  }
  CHECK_OK(halo_schedules_check_matching(r, P));
  for (int q = 0; q < P; q++) {
    const int64_t n_c = r[q].n_local, n_x = r[q].n_ghost, n_w = r[q].n_work;
    b[0][q].src = malloc((size_t)(n_c + 1) * sizeof(double));
    for (int64_t g = 0; g < n_c; g++) b[0][q].src[g] = contribution();
    ref[q] = malloc((size_t)(n_x + 1) * sizeof(double));
    mag[q] = malloc((size_t)(n_x + 1) * sizeof(double));
    for (int64_t i = 0; i < n_x; i++) {
      ref[q][i] = test_x(sim->col_ranges[q] + i);
      mag[q][i] = fabs(ref[q][i]);
    }
    for (int t = 0; t < 2; t++) {
      if (t) b[1][q].src = b[0][q].src; /* the same contributions */
      b[t][q].dst = malloc((size_t)(n_x + 1) * sizeof(double));
      memcpy(b[t][q].dst, ref[q], (size_t)n_x * sizeof(double));
      b[t][q].work = calloc((size_t)(n_w + 1), sizeof(double));
    }
  }
  /* the reference, from the pattern: rank q's ghosts from owner o */
  for (int q = 0; q < P; q++) {
    const halo_pattern *p = &sim->pat[q];
    for (int m = 0; m < p->n_recv; m++) {
      const int o = p->recv[m].peer;
      for (int64_t g = p->recv[m].offset; g < p->recv[m].offset + p->recv[m].count; g++) {
        const int64_t i = sim->ghost_ids[q][g] - sim->col_ranges[o];
        CHECK(i >= 0 && i < sim->col_ranges[o + 1] - sim->col_ranges[o]);
        ref[o][i] += b[0][q].src[g];
        mag[o][i] += fabs(b[0][q].src[g]);
      }
    }
  }
  exchange_serial(r, P, b[0], 0, label);
  exchange_serial(r, P, b[1], 1, label);
  for (int q = 0; q < P; q++) {
    for (int64_t i = 0; i < r[q].n_ghost; i++) {
      const double got = b[0][q].dst[i];
      CHECK_MSG(fabs(got - ref[q][i]) <= 1e-13 * mag[q][i],
                "%s: reversed: rank %d entry %lld (global %lld) is %.17g, not %.17g", label, q,
                (long long)i, (long long)(sim->col_ranges[q] + i), got, ref[q][i]);
    }
    CHECK_MSG(memcmp(b[0][q].dst, b[1][q].dst, (size_t)r[q].n_ghost * sizeof(double)) == 0,
              "%s: reversed: rank %d's sums depend on the order of arrival", label, q);
    b[1][q].src = NULL; /* b[0]'s */
    free(ref[q]), free(mag[q]);
    halo_schedule_free(&r[q]);
  }
  free_bufs(b[0], P), free_bufs(b[1], P);
  free(ref), free(mag), free(r);
}

/* The global phase of a schedule. */
static const halo_phase *global_phase(const halo_schedule *s) {
  for (int k = 0; k < s->n_phases; k++)
    if (s->phase[k].scope == HALO_SCOPE_GLOBAL) return &s->phase[k];
  return NULL;
}

static void check_structure(const halo_schedule *s, int P, int K, halo_strategy strategy,
                            const char *label) {
  const int n_nodes = (P + K - 1) / K;
  int *pair = calloc((size_t)n_nodes * (size_t)(strategy == HALO_STRATEGY_2STEP ? P : n_nodes),
                     sizeof *pair);
  for (int r = 0; r < P; r++) {
    const halo_phase *g = global_phase(&s[r]);
    CHECK(g != NULL);
    for (int i = 0; i < g->n_send; i++) {
      const int q = g->send[i].peer, a = r / K, b = q / K;
      if (a == b) continue; /* on-node messages of 2-Step's global phase */
      if (strategy == HALO_STRATEGY_3STEP)
        CHECK_MSG(++pair[a * n_nodes + b] == 1, "%s: 3-Step sends two messages from node %d to %d",
                  label, a, b);
      if (strategy == HALO_STRATEGY_2STEP)
        CHECK_MSG(++pair[r * n_nodes + b] == 1,
                  "%s: 2-Step sends two messages from rank %d to node %d", label, r, b);
      if (strategy == HALO_STRATEGY_SPLIT)
        CHECK_MSG(8 * g->send[i].count <= s[q].message_cap_used,
                  "%s: Split message of %lld bytes above the cap %lld of its node", label,
                  (long long)(8 * g->send[i].count), (long long)s[q].message_cap_used);
    }
  }
  free(pair);
}

/* The inter-node bytes of the last halo_sim_run's plan (of t), all phases. */
static int64_t inter_bytes(halo_sim sim, const halo_stats *t) {
  int64_t b = 0;
  for (int k = 0; k < t->n_phases; k++) {
    halo_phase_stats ps;
    CHECK_OK(halo_sim_phase_stats(sim, k, &ps));
    b += ps.inter_node_bytes;
  }
  return b;
}

static int cases = 0;

static void run_case(const halo_csr *A, int P, const int64_t *rb, const int64_t *cb, int K,
                     int64_t cap, int dedup, const char *what) {
  halo_sim sim = NULL;
  CHECK_OK(halo_sim_create(A, P, rb, cb, &sim));
  halo_schedule *s = calloc((size_t)P, sizeof *s);
  halo_stats st[HALO_N_STRATEGIES];
  int64_t inter[HALO_N_STRATEGIES];
  for (int t = 0; t < HALO_N_STRATEGIES; t++) {
    halo_plan_options o = halo_plan_options_default();
    o.strategy = (halo_strategy)t;
    o.ranks_per_node = K;
    o.message_cap = cap;
    o.remove_duplicates = dedup;
    char label[256];
    snprintf(label, sizeof label, "%s, P=%d, K=%d, cap=%lld, dedup=%d, %s", what, P, K,
             (long long)cap, dedup, halo_strategy_name(o.strategy));
    CHECK_OK(halo_sim_schedules(sim, &o, s));
    for (int r = 0; r < P; r++) CHECK_OK(halo_schedule_check(&s[r]));
    CHECK_OK(halo_schedules_check_matching(s, P));
    serial_execute(sim, s, label);
    serial_reverse(sim, s, label);
    if (t != HALO_STRATEGY_STANDARD) check_structure(s, P, K, o.strategy, label);
    for (int r = 0; r < P; r++) halo_schedule_free(&s[r]);
    CHECK_OK(halo_sim_run(sim, &o, &st[t]));
    CHECK(st[t].ranks == P && st[t].nodes == (P + K - 1) / K);
    inter[t] = inter_bytes(sim, &st[t]);
    if (o.strategy == HALO_STRATEGY_3STEP) {
      halo_phase_stats g;
      CHECK_OK(halo_sim_phase_stats(sim, 1, &g));
      CHECK(g.scope == HALO_SCOPE_GLOBAL && g.max_inter_node_messages_per_node <= st[t].nodes - 1);
    }
    CHECK_ERR(halo_sim_phase_stats(sim, st[t].n_phases, &(halo_phase_stats){0}),
              HALO_ERR_INVALID_ARG, "phases 0 to");
    cases++;
  }
  const int64_t std_bytes = inter[HALO_STRATEGY_STANDARD];
  for (int t = 1; t < HALO_N_STRATEGIES; t++)
    CHECK_MSG(inter[t] <= std_bytes || !dedup, "%s: %s moves %lld inter-node bytes, standard %lld",
              what, halo_strategy_name((halo_strategy)t), (long long)inter[t],
              (long long)std_bytes);
  if (dedup)
    CHECK_MSG(inter[HALO_STRATEGY_2STEP] == inter[HALO_STRATEGY_3STEP] &&
                  inter[HALO_STRATEGY_3STEP] == inter[HALO_STRATEGY_SPLIT],
              "%s: inter-node bytes differ: 2step %lld, 3step %lld, split %lld", what,
              (long long)inter[1], (long long)inter[2], (long long)inter[3]);
  else /* without removal every strategy moves what standard moves */
    for (int t = 1; t < HALO_N_STRATEGIES; t++) CHECK(inter[t] == std_bytes);
  free(s);
  halo_sim_destroy(&sim);
}

/* Every strategy has its descriptor, named and laid out as its schedules
 * are; auto, unknown values and impossible layouts are refused. */
static void test_registry(void) {
  for (int t = 0; t < HALO_N_STRATEGIES; t++) {
    const halo_strategy_desc *d = NULL;
    CHECK_OK(halo_strategy_desc_find((halo_strategy)t, &d));
    CHECK(d->strategy == (halo_strategy)t && strcmp(d->name, halo_strategy_name(d->strategy)) == 0);
    CHECK(d->n_phases >= 1 && d->n_phases <= HALO_MAX_PHASES);
    CHECK(d->phase_global >= 0 && d->phase_global < d->n_phases);
    CHECK(d->phase_direct >= 0 && d->phase_direct < d->n_phases);
    CHECK(halo_strategy_node_aware(d->strategy) == (d->decide_receive != NULL));
    CHECK((d->decide_receive == NULL) == (d->decide_send == NULL));
    CHECK(halo_strategy_node_aware(d->strategy) == (t != HALO_STRATEGY_STANDARD));
  }
  const halo_strategy_desc *d = NULL;
  CHECK_ERR(halo_strategy_desc_find(HALO_STRATEGY_AUTO, &d), HALO_ERR_INVALID_ARG,
            "auto builds no schedule of its own");
  CHECK_ERR(halo_strategy_desc_find((halo_strategy)99, &d), HALO_ERR_INVALID_ARG,
            "strategy 99 is unknown");
  CHECK(!halo_strategy_node_aware(HALO_STRATEGY_AUTO) &&
        !halo_strategy_node_aware((halo_strategy)99));
  /* the node builder and the decisions refuse what they cannot follow */
  halo_node_input in = {0};
  halo_node_links L = {0};
  halo_schedule sched[1];
  CHECK_OK(halo_strategy_desc_find(HALO_STRATEGY_STANDARD, &d));
  CHECK_ERR(halo_node_decide_receive(d, &in, &L, 64), HALO_ERR_INTERNAL,
            "standard is not node-aware");
  CHECK_ERR(halo_node_build_schedules(d, &in, &L, sched), HALO_ERR_INTERNAL,
            "standard has no node-aware decisions");
  CHECK_OK(halo_strategy_desc_find(HALO_STRATEGY_SPLIT, &d));
  halo_strategy_desc bad = *d;
  bad.phase_gather = bad.phase_global; /* values would cross before they are gathered */
  CHECK_ERR(halo_node_build_schedules(&bad, &in, &L, sched), HALO_ERR_INTERNAL,
            "needs gather < global < redistribution < phases");
}

/* Zero-row ranks are helpers: with a small cap, Split gives them messages. */
static void test_helpers(void) {
  halo_gen g;
  halo_csr A;
  CHECK_OK(halo_gen_parse("lap2d:24", &g));
  CHECK_OK(halo_gen_rows(&g, 0, 576, &A));
  const int P = 8, K = 4;
  int64_t rb[9] = {0, 144, 144, 144, 288, 432, 432, 432, 576}; /* ranks 1, 2, 5, 6 own nothing */
  halo_sim sim;
  CHECK_OK(halo_sim_create(&A, P, rb, NULL, &sim));
  halo_schedule s[8];
  halo_plan_options o = halo_plan_options_default();
  o.strategy = HALO_STRATEGY_SPLIT, o.ranks_per_node = K, o.message_cap = 64;
  CHECK_OK(halo_sim_schedules(sim, &o, s));
  int helpers_send = 0, helpers_recv = 0;
  for (int r = 0; r < P; r++) {
    const halo_phase *gp = global_phase(&s[r]);
    if (rb[r] == rb[r + 1]) helpers_send += gp->n_send, helpers_recv += gp->n_recv;
  }
  CHECK_MSG(helpers_send > 0 && helpers_recv > 0,
            "Split gives the zero-row ranks %d sends and %d receives", helpers_send, helpers_recv);
  for (int r = 0; r < P; r++) halo_schedule_free(&s[r]);
  halo_sim_destroy(&sim);
  run_case(&A, P, rb, NULL, K, 64, 1, "lap2d:24 with helpers");
  halo_csr_free(&A);
}

/* The record sort against a stable reference (insertion sort by the fields, then by
 * input position): inputs of 1 to 300 sorted runs, so both the merge of runs (up to 64)
 * and the radix sort are taken, with many equal keys, which must keep their order. */
typedef struct {
  int64_t a, b;
  int64_t pos; /* input position: not a field */
} rec3;
static int64_t rec3_field(const void *r, int64_t i, int f) {
  const rec3 *x = (const rec3 *)r + i;
  return f == 0 ? x->a : x->b;
}
static int rec3_cmp(const void *x_, const void *y_) {
  const rec3 *x = x_, *y = y_;
  if (x->a != y->a) return (x->a > y->a) - (x->a < y->a);
  return (x->b > y->b) - (x->b < y->b);
}
static void test_sort_records(void) {
  const int runs[] = {1, 2, 3, 17, 63, 64, 65, 66, 300};
  for (int c = 0; c < (int)(sizeof runs / sizeof *runs); c++)
    for (int range = 3; range <= 3000; range *= 10) {
      const int64_t n = 2000;
      rec3 *r = malloc((size_t)n * sizeof *r), *ref = malloc((size_t)n * sizeof *ref);
      /* runs[c] runs of random sorted (a, b) keys, each starting below the last's end */
      for (int64_t i = 0, k = 0; k < runs[c]; k++) {
        const int64_t end = (k + 1) * n / runs[c];
        int64_t a = 0, b = 0;
        for (; i < end; i++) {
          if (rnd(3) == 0)
            a += 1 + rnd(range), b = rnd(range); /* rising: one run */
          else
            b += rnd(2);
          r[i] = (rec3){a, b, i};
        }
      }
      memcpy(ref, r, (size_t)n * sizeof *r);
      for (int64_t i = 1; i < n; i++) { /* stable insertion sort */
        const rec3 x = ref[i];
        int64_t j = i - 1;
        while (j >= 0 && rec3_cmp(&ref[j], &x) > 0) ref[j + 1] = ref[j], j--;
        ref[j + 1] = x;
      }
      CHECK_OK(halo_node_sort_records(r, n, sizeof *r, 2, rec3_field, rec3_cmp));
      for (int64_t i = 0; i < n; i++)
        CHECK_MSG(r[i].a == ref[i].a && r[i].b == ref[i].b && r[i].pos == ref[i].pos,
                  "record sort, %d runs, range %d: record %lld is (%lld, %lld) from %lld, the "
                  "stable order has (%lld, %lld) from %lld",
                  runs[c], range, (long long)i, (long long)r[i].a, (long long)r[i].b,
                  (long long)r[i].pos, (long long)ref[i].a, (long long)ref[i].b,
                  (long long)ref[i].pos);
      free(r), free(ref);
    }
}

/* A node's links from patterns written out by hand: node 0 (ranks 0 and 1) with node
 * 2 (ranks 2 and 3), each rank owning 10 ids (or 1000: test_links' wide). Messages
 * that rise are merged as runs, by counting or by their heads; one that does not, or
 * ghosts out of order, take the sort: the links are the same canonical lists every
 * way. */
static void check_link(const halo_link *l, int node, int64_t n, const int64_t *gid,
                       const int *owner, const int64_t *dst_ptr, const int *dst_rank,
                       const int64_t *dst_ghost, const char *what) {
  CHECK_MSG(l->node == node && l->n == n, "%s: link with node %d of %lld entries", what, l->node,
            (long long)l->n);
  if (l->n != n) return;
  for (int64_t e = 0; e < n; e++)
    CHECK_MSG(l->gid[e] == gid[e] && l->owner[e] == owner[e], "%s: entry %lld is %lld of %d", what,
              (long long)e, (long long)l->gid[e], l->owner[e]);
  if (!dst_ptr) return;
  for (int64_t e = 0; e <= n; e++) CHECK_MSG(l->dst_ptr[e] == dst_ptr[e], "%s: dst_ptr", what);
  for (int64_t t = 0; t < dst_ptr[n]; t++)
    CHECK_MSG(l->dst_rank[t] == dst_rank[t] && l->dst_ghost[t] == dst_ghost[t],
              "%s: delivery %lld to %d, ghost %lld", what, (long long)t, l->dst_rank[t],
              (long long)l->dst_ghost[t]);
}

/* 2-Step's redistribution on the node of test_links: rank 0 receives both pieces
 * from node 2 (in entry order: 21, 25, 27, 31, 39 at work 0 to 4) and gives rank 1
 * its ghosts 25, 27, 31, 39; the message is ordered by rank 1's ghost, whose order
 * the swapped ghosts change: pack (n_local 10 + work) and unpack (ghost) expected. */
static void check_redistribution(const halo_node_input *in, halo_node_links *L, const int64_t *pack,
                                 const int64_t *unpack, const char *what) {
  const halo_strategy_desc *d = NULL;
  CHECK_OK(halo_strategy_desc_find(HALO_STRATEGY_2STEP, &d));
  CHECK_OK(halo_node_decide_receive(d, in, L, 0));
  halo_link *o = &L->out[0]; /* node 2's decision: a piece per owner, to rank 2 */
  CHECK_OK(halo_link_pieces_alloc(o, 2));
  o->piece_start[0] = 0, o->piece_start[1] = 4, o->piece_start[2] = o->n;
  o->piece_receiver[0] = o->piece_receiver[1] = 2;
  CHECK_OK(halo_node_decide_send(d, in, L));
  for (int p = 0; p < L->in[0].n_pieces; p++) L->in[0].piece_sender[p] = 2 + p;
  halo_schedule sched[2];
  CHECK_OK(halo_node_build_schedules(d, in, L, sched));
  const halo_phase *s = &sched[0].phase[d->phase_redistribute],
                   *r = &sched[1].phase[d->phase_redistribute];
  int ms = 0, mr = 0;
  while (ms < s->n_send && s->send[ms].peer != 1) ms++;
  while (mr < r->n_recv && r->recv[mr].peer != 0) mr++;
  CHECK_MSG(ms < s->n_send && mr < r->n_recv && s->send[ms].count == 4 && r->recv[mr].count == 4,
            "%s: rank 0 gives rank 1 four values", what);
  if (ms < s->n_send && mr < r->n_recv && s->send[ms].count == 4 && r->recv[mr].count == 4)
    for (int k = 0; k < 4; k++)
      CHECK_MSG(s->pack[s->send[ms].offset + k] == pack[k] &&
                    r->unpack[r->recv[mr].offset + k] == unpack[k],
                "%s: delivery %d from work %lld into ghost %lld", what, k,
                (long long)s->pack[s->send[ms].offset + k],
                (long long)r->unpack[r->recv[mr].offset + k]);
  halo_schedule_free(&sched[0]);
  halo_schedule_free(&sched[1]);
}

/* The incoming half built by the node's ranks (nodein.h), against the node-wide build
 * of the same links (nodebuild.c: pieces in, redistribution), byte for byte, on the node
 * of test_links: the receive decision of strategy s, senders dealt on node 2; then one
 * request changed to a value its receiver does not hold, which the receiver must
 * refuse. */
static void check_in_half(const halo_node_input *in, const halo_node_links *L, halo_strategy s,
                          int dedup, const char *what) {
  enum { R = 2 };
  const halo_strategy_desc *d = NULL;
  CHECK_OK(halo_strategy_desc_find(s, &d));
  halo_pattern pat[R];
  halo_node_input ir = *in; /* the receives alone: no direct messages, no gather */
  for (int i = 0; i < R; i++) pat[i] = in->pat[i], pat[i].n_send = 0;
  ir.pat = pat;
  halo_node_links Li = {.n_in = L->n_in, .in = L->in};
  CHECK_OK(halo_node_decide_receive(d, &ir, &Li, 16)); /* Split: pieces of 2 values */
  for (int c = 0; c < Li.n_in; c++)
    for (int k = 0; k < Li.in[c].n_pieces; k++) Li.in[c].piece_sender[k] = 2 + k % 2;
  halo_schedule ref[R], mine;
  CHECK_OK(halo_node_build_schedules(d, &ir, &Li, ref));
  halo_vec tab = {0}, ent = {0}, req[R][R] = {{{0}}}, ghosts[R][R] = {{{0}}};
  halo_in_table t;
  CHECK_OK(halo_in_table_pack(&Li, dedup, &tab));
  CHECK_OK(halo_in_table_unpack(tab.v, tab.n, in->size, &t));
  CHECK_OK(halo_in_entries_pack(&Li, dedup, &ent));
  for (int i = 0; i < R; i++)
    CHECK_OK(halo_in_requests(&t, dedup, in->ranks[i], in->node_id, ent.v, ent.n, &in->pat[i],
                              in->ghost_ids[i], in->recv_node[i], in->ranks, R, req[i], ghosts[i]));
  for (int r = 0; r < R; r++) {
    for (int bad = 0; bad < 2; bad++) {
      /* what rank r is asked, rank by rank; bad: one place beyond its work array */
      int64_t nq[R], total = 0, *places = NULL, w = 0;
      for (int i = 0; i < R; i++) total += nq[i] = req[i][r].n;
      for (int j = 0; j < t.n_pieces; j++) w += t.receiver[j] == in->ranks[r] ? t.size[j] : 0;
      if (bad && total == 0) continue;
      CHECK_OK(HALO_ALLOC(places, total > 0 ? total : 1));
      for (int i = 0, at = 0; i < R; i++)
        for (int64_t a = 0; a < nq[i]; a++) places[at++] = req[i][r].v[a];
      if (bad) {
        places[total - 1] = w;
        CHECK_ERR(halo_in_build(&t, d, in->ranks[r], in->size, in->pat[r].n_local,
                                in->pat[r].n_ghost, in->ranks, R, &places, nq, ghosts[r], &mine),
                  HALO_ERR_INTERNAL, "work entries");
        CHECK(places == NULL);
        continue;
      }
      CHECK_OK(halo_in_build(&t, d, in->ranks[r], in->size, in->pat[r].n_local, in->pat[r].n_ghost,
                             in->ranks, R, &places, nq, ghosts[r], &mine));
      halo_vec a = {0}, b = {0};
      CHECK_OK(halo_schedule_pack(&ref[r], &a));
      CHECK_OK(halo_schedule_pack(&mine, &b));
      CHECK_MSG(a.n == b.n && !memcmp(a.v, b.v, (size_t)a.n * sizeof(int64_t)),
                "%s, %s, dedup %d: rank %d's incoming half differs from the node-wide build", what,
                d->name, dedup, in->ranks[r]);
      halo_vec_free(&a), halo_vec_free(&b);
      halo_schedule_free(&mine);
    }
  }
  /* a ghost no piece holds: rank 1's last ghost, one more (the next rank's, unasked) */
  {
    halo_vec rq[R] = {{0}}, gh[R] = {{0}};
    int64_t g[8];
    const halo_pattern *q = &in->pat[1];
    CHECK(q->n_ghost <= 8);
    if (q->n_ghost <= 8) {
      memcpy(g, in->ghost_ids[1], (size_t)q->n_ghost * sizeof *g);
      g[q->n_ghost - 1]++;
      CHECK_ERR(halo_in_requests(&t, dedup, in->ranks[1], in->node_id, ent.v, ent.n, q, g,
                                 in->recv_node[1], in->ranks, R, rq, gh),
                HALO_ERR_INTERNAL, "which no piece");
    }
    for (int i = 0; i < R; i++) halo_vec_free(&rq[i]), halo_vec_free(&gh[i]);
  }
  /* entries that do not match the table */
  {
    halo_vec rq[R] = {{0}}, gh[R] = {{0}};
    CHECK_ERR(halo_in_requests(&t, dedup, in->ranks[0], in->node_id, ent.v, ent.n - 1, &in->pat[0],
                               in->ghost_ids[0], in->recv_node[0], in->ranks, R, rq, gh),
              HALO_ERR_INTERNAL, "entries for the node's pieces");
    for (int i = 0; i < R; i++) halo_vec_free(&rq[i]), halo_vec_free(&gh[i]);
  }
  halo_in_table_free(&t);
  halo_vec_free(&tab);
  halo_vec_free(&ent);
  for (int i = 0; i < R; i++) {
    halo_schedule_free(&ref[i]);
    for (int j = 0; j < R; j++) halo_vec_free(&req[i][j]), halo_vec_free(&ghosts[i][j]);
  }
}

/* The ids of test_links with each rank owning 10 * wide of them: an owner's range
 * wide enough (wide 100) makes the runs merge by their heads, a narrow one (wide 1)
 * by counting. */
static int64_t widen(int64_t g, int wide) { return g / 10 * 10 * wide + g % 10; }

static void test_links(int wide) {
  const int64_t cr[] = {0, 10 * wide, 20 * wide, 30 * wide, 40 * wide};
  int ranks[] = {0, 1};
  int64_t send0[] = {1, 3, 5, 3, 4}, send1[] = {0, 9};
  int64_t ghosts0[] = {21, 25, 31}, ghosts1[] = {25, 27, 31, 39};
  halo_msg s0[] = {{2, 0, 3}, {3, 3, 2}}, r0[] = {{2, 0, 2}, {3, 2, 1}};
  halo_msg s1[] = {{2, 0, 2}}, r1[] = {{2, 0, 2}, {3, 2, 2}};
  halo_pattern pat[2];
  memset(pat, 0, sizeof pat);
  pat[0] = (halo_pattern){.rank = 0,
                          .size = 4,
                          .n_local = 10 * wide,
                          .n_ghost = 3,
                          .n_recv = 2,
                          .recv = r0,
                          .n_send = 2,
                          .send = s0,
                          .send_idx = send0};
  pat[1] = (halo_pattern){.rank = 1,
                          .size = 4,
                          .n_local = 10 * wide,
                          .n_ghost = 4,
                          .n_recv = 2,
                          .recv = r1,
                          .n_send = 1,
                          .send = s1,
                          .send_idx = send1};
  for (int k = 0; k < 3; k++) ghosts0[k] = widen(ghosts0[k], wide);
  for (int k = 0; k < 4; k++) ghosts1[k] = widen(ghosts1[k], wide);
  int64_t *gh[] = {ghosts0, ghosts1};
  int nodes0[] = {2, 2}, nodes1[] = {2, 2}, snodes1[] = {2};
  int *rn[] = {nodes0, nodes1}, *sn[] = {nodes0, snodes1};
  halo_node_input in = {.node_id = 0,
                        .size = 4,
                        .n_ranks = 2,
                        .ranks = ranks,
                        .pat = pat,
                        .ghost_ids = gh,
                        .recv_node = rn,
                        .send_node = sn,
                        .col_ranges = cr};
  int64_t out_gid[] = {1, 3, 4, 5, 10, 19}, out_gid_all[] = {1, 3, 3, 4, 5, 10, 19};
  const int out_owner[] = {0, 0, 0, 0, 1, 1}, out_owner_all[] = {0, 0, 0, 0, 0, 1, 1};
  int64_t in_gid[] = {21, 25, 27, 31, 39};
  const int64_t in_ptr[] = {0, 1, 3, 4, 6, 7};
  const int in_owner[] = {2, 2, 2, 3, 3}, in_rank[] = {0, 0, 1, 1, 0, 1, 1};
  const int64_t in_ghost[] = {0, 1, 0, 1, 2, 2, 3};
  int64_t in_gid_all[] = {21, 25, 25, 27, 31, 31, 39};
  const int64_t in_ptr_all[] = {0, 1, 2, 3, 4, 5, 6, 7};
  const int in_owner_all[] = {2, 2, 2, 2, 3, 3, 3};
  for (int k = 0; k < 7; k++) {
    if (k < 6) out_gid[k] = widen(out_gid[k], wide);
    if (k < 5) in_gid[k] = widen(in_gid[k], wide);
    out_gid_all[k] = widen(out_gid_all[k], wide);
    in_gid_all[k] = widen(in_gid_all[k], wide);
  }
  for (int variant = 0; variant < 3; variant++) {
    const char *what = variant == 0   ? (wide == 1 ? "rising messages, counted" : "rising messages")
                       : variant == 1 ? "a falling send"
                                      : "ghosts";
    if (variant == 1) send0[0] = 5, send0[2] = 1; /* rank 0's send to rank 2: 5, 3, 1 */
    if (variant == 2)                             /* rank 1's ghosts from rank 2 swapped */
      ghosts1[0] = widen(27, wide), ghosts1[1] = widen(25, wide);
    for (int dedup = 0; dedup < 2; dedup++) {
      halo_node_links L;
      CHECK_OK(halo_node_links_build(&in, dedup, &L));
      CHECK(L.n_out == 1 && L.n_in == 1);
      if (L.n_out != 1 || L.n_in != 1) continue;
      if (dedup)
        check_link(&L.out[0], 2, 6, out_gid, out_owner, NULL, NULL, NULL, what);
      else
        check_link(&L.out[0], 2, 7, out_gid_all, out_owner_all, NULL, NULL, NULL, what);
      /* swapped ghosts: 25 is rank 1's ghost 1 and 27 its ghost 0 */
      const int64_t sw_ghost[] = {0, 1, 1, 0, 2, 2, 3};
      const int64_t *ghost = variant == 2 ? sw_ghost : in_ghost;
      if (dedup)
        check_link(&L.in[0], 2, 5, in_gid, in_owner, in_ptr, in_rank, ghost, what);
      else
        check_link(&L.in[0], 2, 7, in_gid_all, in_owner_all, in_ptr_all, in_rank, ghost, what);
      { /* lean: the same entries, without destinations where duplicates are removed */
        halo_node_links Ll;
        CHECK_OK(halo_node_links_build_lean(&in, dedup, 0, &Ll));
        CHECK_MSG(Ll.n_in == 1 && Ll.n_out == 1, "%s, lean: %d links in", what, Ll.n_in);
        if (Ll.n_in == 1) {
          if (dedup)
            check_link(&Ll.in[0], 2, 5, in_gid, in_owner, NULL, NULL, NULL, what);
          else
            check_link(&Ll.in[0], 2, 7, in_gid_all, in_owner_all, in_ptr_all, in_rank, ghost, what);
          CHECK_MSG(!dedup == !!Ll.in[0].dst_ptr, "%s, lean, dedup %d: destinations %s", what,
                    dedup, Ll.in[0].dst_ptr ? "kept" : "dropped");
        }
        halo_node_links_free(&Ll);
      }
      if (variant < 2) /* ghosts in order, as patterns have them */
        for (halo_strategy s = HALO_STRATEGY_2STEP; s <= HALO_STRATEGY_SPLIT; s++)
          check_in_half(&in, &L, s, dedup, what);
      if (dedup) { /* swapped ghosts: the message out of the links' order, sorted */
        const int64_t n = 10 * wide, pack[] = {n + 1, n + 2, n + 3, n + 4},
                      pack_sw[] = {n + 2, n + 1, n + 3, n + 4};
        const int64_t unpack[] = {0, 1, 2, 3};
        check_redistribution(&in, &L, variant == 2 ? pack_sw : pack, unpack, what);
      }
      halo_node_links_free(&L);
    }
  }
}

int main(int argc, char **argv) {
  int n_random = argc > 1 ? atoi(argv[1]) : 300;
  rng_state = 0x9e3779b97f4a7c15ULL;
  test_registry();
  test_sort_records();
  test_links(1);
  test_links(100);
  test_helpers();
  /* generated matrices at fixed sizes, every K, both duplicate modes */
  const char *gens[] = {"lap2d:12", "lap3d27:5", "irregular:400,3"};
  for (int i = 0; i < 3; i++) {
    halo_gen g;
    halo_csr A;
    int64_t N, rb[17];
    CHECK_OK(halo_gen_parse(gens[i], &g));
    CHECK_OK(halo_gen_size(&g, &N, NULL));
    CHECK_OK(halo_gen_rows(&g, 0, N, &A));
    for (int P = 2; P <= 16; P += 7)
      for (int K = 1; K <= 4; K++) {
        CHECK_OK(halo_partition_rows(N, P, rb));
        run_case(&A, P, rb, NULL, K, 16384, 1, gens[i]);
        run_case(&A, P, rb, NULL, K, 24, 0, gens[i]);
      }
    halo_csr_free(&A);
  }
  /* random matrices, layouts, ranks, nodes and caps */
  const int64_t caps[] = {8, 16, 40, 64, 256, 16384};
  for (int c = 0; c < n_random; c++) {
    const int P = 1 + (int)rnd(24), K = 1 + (int)rnd(5);
    const int64_t N = 1 + rnd(200), M = rnd(3) ? N : 1 + rnd(300);
    halo_csr A;
    random_matrix(N, M, &A);
    int64_t *rb = malloc((size_t)(P + 1) * sizeof *rb), *cb = malloc((size_t)(P + 1) * sizeof *cb);
    random_layout(N, P, rb);
    if (M == N && rnd(2))
      memcpy(cb, rb, (size_t)(P + 1) * sizeof *cb);
    else
      random_layout(M, P, cb);
    char what[64];
    snprintf(what, sizeof what, "random case %d (%lld x %lld)", c, (long long)N, (long long)M);
    run_case(&A, P, rb, cb, K, caps[rnd(6)], (int)rnd(4) != 0, what);
    free(rb), free(cb);
    halo_csr_free(&A);
  }
  printf("%d (case, strategy) pairs executed\n", cases);
  return 0;
}
