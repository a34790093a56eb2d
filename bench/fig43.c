/* The node-aware paper's Figure 4.3 with halo's model: the modeled time of
 * one node's inter-node messages against their size, for every strategy and
 * path, with the machine parameters of a parameter set (lassen by default).
 *
 * Scenario (one panel): node 0 sends M inter-node messages of s bytes each
 * (standard communication), M/4 from each of its 4 GPUs, to D destination
 * nodes of 4 GPUs, M/D messages to each node. Panels M x D: 32 x 4, 32 x 16,
 * 256 x 4, 256 x 16; each without and with 25 % duplicate data.
 *
 * The scenario is a synthetic matrix: the rows of a destination GPU's rank
 * reference the entries of x that node 0's GPU ranks own, so that every
 * standard message is the set of entries a destination rank needs of one
 * source rank. The simulator (halo_sim_create) builds the patterns, and the
 * schedules of every strategy with the builders a real plan uses; the model
 * (DESIGN.md section 6) prices them phase by phase.
 *
 *   - messages of node d: with M/D >= 8, every GPU of node 0 sends M/(4D) to
 *     node d, its j-th to the destination GPU (g M/(4D) + j) mod 4; with
 *     M/D = 2 (32 x 16), GPU d mod 4 sends both, to GPUs 2g and 2g+1 mod 4;
 *   - duplicates: the messages of one source GPU to one node come in pairs
 *     for two different GPUs of that node; with 25 % duplicates the second
 *     message of a pair carries half of the first's values and half new
 *     ones, so that a quarter of the standard inter-node bytes are values a
 *     node already receives (duplicate removal sends them once);
 *   - standard, 2-Step, 3-Step: one rank per GPU, 4 ranks per node. In the
 *     256 x 4 panel each source GPU sends 4 messages to each destination GPU
 *     (64 rank pairs carry the 256 messages), which halo merges into one of
 *     4s bytes; "standard" then models each pair's transfer as the 4
 *     messages of s bytes of the scenario, and "standard-merged" is the
 *     schedule halo builds (64 messages of 4s bytes). The node-aware
 *     strategies gather by node or by owner and do not depend on the merge;
 *   - Split: 40 ranks per node (Lassen's cores), the GPU ranks at local ranks
 *     0, 1, 20, 21 (one per GPU, two per socket), the other 36 communication
 *     helpers (no rows, no ghosts); transport staged is Split+MD, ipc is
 *     Split+DD (helpers copy their part from the GPU);
 *   - paths: staged (through the host) and mpi-device (device-aware), Split
 *     staged and ipc; device plans, 4 GPUs per node; message_cap 16384.
 *
 * Large sizes: a schedule holds every value it moves, so a case of more
 * than --budget values (M s / 8) is built at s / f, with f the smallest power
 * of 2 that fits (Split also with message_cap / f), and every message's
 * count is multiplied by f before the model prices it. For standard, 2-Step
 * and 3-Step the schedules at s and at s / f differ only by that factor; for
 * Split up to the rounding of a raised message_cap to whole values. --check
 * compares every unscaled case with halo_sim_model (all but the 256 x 4
 * panel's standard, whose messages are split here). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "halo/sim.h"
#include "model/model.h"
#include "model/params.h"
#include "model/simulate.h"

#define GPUS          4  /* GPUs per node */
#define SPLIT_RANKS   40 /* ranks per node of the Split layout */
#define MAX_CASE_MSGS 256

typedef struct {
  int messages; /* M: inter-node messages node 0 sends (standard) */
  int nodes;    /* D: destination nodes */
} panel;

static const panel panels[] = {{32, 4}, {32, 16}, {256, 4}, {256, 16}};
#define N_PANELS ((int)(sizeof panels / sizeof panels[0]))

/* One matrix: a panel, duplicates or not, values per standard message, and
 * the ranks of a node. */
typedef struct {
  int M, D, dup;
  int64_t v;           /* values per standard message, as built */
  int K;               /* ranks per node */
  int gpu_local[GPUS]; /* local rank of each GPU's rank, increasing */
} fig_case;

/* One standard message: source GPU g of node 0 to GPU q of destination node
 * d; second: the second of a pair (shares half of the first's values). */
typedef struct {
  int g, d, q, second;
} fig_msg;

static int fail(const char *what) {
  fprintf(stderr, "fig43: %s%s%s\n", what, halo_last_error()[0] ? ": " : "", halo_last_error());
  return 1;
}

/* The messages of a case, in order of (node, source, j); returns how many,
 * or -1 for a panel this layout does not make. *mult_p: messages between one
 * pair of ranks (the same for every pair). */
static int case_messages(int M, int D, fig_msg *out, int *mult_p) {
  if (M <= 0 || D <= 0 || M % D || M > MAX_CASE_MSGS) return -1;
  const int per_node = M / D, all = per_node >= 2 * GPUS;
  const int per_src = all ? per_node / GPUS : per_node;
  if (per_src % 2 || (all && per_node % GPUS) || (!all && D % GPUS) ||
      (per_src > GPUS && per_src % GPUS))
    return -1;
  int n = 0;
  for (int d = 0; d < D; d++)
    for (int gi = 0; gi < (all ? GPUS : 1); gi++) {
      const int g = all ? gi : d % GPUS;
      for (int j = 0; j < per_src; j++) out[n++] = (fig_msg){g, d, (g * per_src + j) % GPUS, j % 2};
    }
  *mult_p = per_src > GPUS ? per_src / GPUS : 1;
  return n;
}

static int cmp_i64(const void *a, const void *b) {
  const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* The simulation of a case: the matrix, the row and column layout of its
 * ranks, and the patterns. */
static halo_status case_sim(const fig_case *c, halo_sim *sim_p) {
  halo_status st = HALO_SUCCESS;
  fig_msg msg[MAX_CASE_MSGS];
  int mult;
  const int n_msg = case_messages(c->M, c->D, msg, &mult);
  const int P = (c->D + 1) * c->K, n_rows = (c->D + 1) * GPUS;
  const int64_t half = c->dup ? c->v / 2 : 0;
  int64_t fresh[GPUS] = {0}, cursor[GPUS] = {0}, begin[MAX_CASE_MSGS];
  int64_t *row_begin = NULL, *col_begin = NULL, *row_ptr = NULL, *col_ids = NULL, *fill = NULL;
  halo_csr A;
  if (n_msg < 0 || c->v < 2 || c->v % 2)
    HALO_FAIL(HALO_ERR_INVALID_ARG, "no layout for %d messages to %d nodes of %lld values", c->M,
              c->D, (long long)c->v);
  HALO_TRY(HALO_CALLOC(row_begin, P + 1));
  HALO_TRY(HALO_CALLOC(col_begin, P + 1));
  HALO_TRY(HALO_CALLOC(row_ptr, n_rows + 1));
  HALO_TRY(HALO_CALLOC(fill, n_rows));
  /* the entries each source GPU owns: every message's new values */
  for (int i = 0; i < n_msg; i++) fresh[msg[i].g] += msg[i].second ? c->v - half : c->v;
  for (int r = 0; r < P; r++) {
    const int node = r / c->K, local = r % c->K;
    int gpu = -1;
    for (int q = 0; q < GPUS; q++)
      if (c->gpu_local[q] == local) gpu = q;
    row_begin[r + 1] = row_begin[r] + (gpu >= 0);
    col_begin[r + 1] = col_begin[r] + (node == 0 && gpu >= 0 ? fresh[gpu] : 0);
    if (node == 0 && gpu >= 0) cursor[gpu] = col_begin[r];
  }
  /* the first value of every message's new values; the rows that need them */
  for (int i = 0; i < n_msg; i++) {
    begin[i] = cursor[msg[i].g];
    cursor[msg[i].g] += msg[i].second ? c->v - half : c->v;
    row_ptr[(msg[i].d + 1) * GPUS + msg[i].q + 1] += c->v;
  }
  for (int i = 0; i < n_rows; i++) row_ptr[i + 1] += row_ptr[i];
  HALO_TRY(HALO_ALLOC(col_ids, row_ptr[n_rows]));
  for (int i = 0; i < n_msg; i++) {
    const int row = (msg[i].d + 1) * GPUS + msg[i].q;
    int64_t *out = col_ids + row_ptr[row] + fill[row], k = 0;
    if (msg[i].second) /* the pair's first message is the one before */
      for (int64_t e = 0; e < half; e++) out[k++] = begin[i - 1] + e;
    for (int64_t e = 0; k < c->v; e++) out[k++] = begin[i] + e;
    fill[row] += c->v;
  }
  for (int i = 0; i < n_rows; i++)
    qsort(col_ids + row_ptr[i], (size_t)(row_ptr[i + 1] - row_ptr[i]), sizeof *col_ids, cmp_i64);
  A = (halo_csr){.n_rows = n_rows,
                 .n_cols = col_begin[P],
                 .row_begin = 0,
                 .row_end = n_rows,
                 .row_ptr = row_ptr,
                 .col_ids = col_ids,
                 .values = NULL};
  HALO_TRY(halo_sim_create(&A, P, row_begin, col_begin, sim_p));
cleanup:
  halo_free(fill);
  halo_free(col_ids);
  halo_free(row_ptr);
  halo_free(col_begin);
  halo_free(row_begin);
  return st;
}

/* Where each rank runs, as halo_sim_model places it (sim.h): K ranks per
 * node, split evenly over the sockets; ranks with rows or ghosts on a GPU;
 * copies by the ranks that share a GPU, under staged by its GPU ranks. */
static void place_ranks(halo_sim sim, int K, const halo_params *prm, halo_transport t,
                        halo_model_rank *ranks) {
  for (int node = 0; node < sim->P; node += K) {
    const int on_node = node + K <= sim->P ? K : sim->P - node;
    int on_gpu = 0;
    for (int r = node; r < node + on_node; r++) {
      halo_model_rank *m = &ranks[r];
      m->host = m->node = node;
      m->socket = (int)((int64_t)(r - node) * prm->sockets_per_node / on_node);
      m->on_gpu = sim->row_ranges[r + 1] > sim->row_ranges[r] || sim->pat[r].n_ghost > 0;
      on_gpu += m->on_gpu;
    }
    const int copiers = t == HALO_TRANSPORT_STAGED ? on_gpu : on_node;
    for (int r = node; r < node + on_node; r++)
      ranks[r].ranks_per_gpu = copiers > GPUS ? (copiers + GPUS - 1) / GPUS : 1;
  }
}

/* Replace every inter-node message of a standard schedule by mult messages
 * of a mult-th of its values each (the scenario's messages that halo merged
 * into one between the same two ranks). */
static halo_status unmerge(halo_schedule *s, int K, int mult) {
  halo_status st = HALO_SUCCESS;
  for (int dir = 0; dir < 2; dir++) {
    halo_phase *ph = &s->phase[0];
    int *n_p = dir ? &ph->n_recv : &ph->n_send;
    halo_msg **m_p = dir ? &ph->recv : &ph->send, *m = *m_p, *out = NULL;
    int n = 0;
    for (int i = 0; i < *n_p; i++) n += m[i].peer / K != s->rank / K ? mult : 1;
    HALO_TRY(HALO_ALLOC(out, n));
    n = 0;
    for (int i = 0; i < *n_p; i++) {
      const int k = m[i].peer / K != s->rank / K ? mult : 1;
      if (m[i].count % k)
        HALO_FAIL(HALO_ERR_INTERNAL, "rank %d: %lld values to rank %d are not %d messages", s->rank,
                  (long long)m[i].count, m[i].peer, k);
      for (int j = 0; j < k; j++)
        out[n++] = (halo_msg){m[i].peer, m[i].offset + j * (m[i].count / k), m[i].count / k};
    }
    halo_free(m);
    *m_p = out;
    *n_p = n;
  }
cleanup:
  return st;
}

/* Multiply every message of a schedule by f values (offsets along). */
static void scale_schedule(halo_schedule *s, int64_t f) {
  for (int k = 0; k < s->n_phases; k++) {
    halo_phase *ph = &s->phase[k];
    for (int i = 0; i < ph->n_send; i++) ph->send[i].offset *= f, ph->send[i].count *= f;
    for (int i = 0; i < ph->n_recv; i++) ph->recv[i].offset *= f, ph->recv[i].count *= f;
    ph->send_total *= f;
    ph->recv_total *= f;
  }
}

typedef struct {
  const char *params;
  halo_params prm;
  int check, checked; /* --check, and the cases it compared */
  int phases;         /* --phases */
} fig_ctx;

/* The modeled time of one strategy on one path, and of each phase. */
typedef struct {
  double seconds;
  double phase[HALO_MAX_PHASES];
} fig_time;

/* Model one strategy of a case on n paths: t[i] on paths[i]. The
 * schedules are built once; unmerge > 1 splits standard's inter-node
 * messages, f scales every message. */
static halo_status model_strategy(fig_ctx *x, halo_sim sim, const fig_case *c, halo_strategy sg,
                                  int64_t cap, int unmerge_mult, int64_t f,
                                  const halo_transport *paths, int n, fig_time *t) {
  halo_status st = HALO_SUCCESS;
  const int P = sim->P;
  halo_schedule *sched = NULL;
  halo_model_rank *ranks = NULL;
  halo_plan_options o = halo_plan_options_default();
  o.strategy = sg;
  o.ranks_per_node = c->K;
  o.remove_duplicates = 1;
  o.message_cap = cap;
  o.memory = HALO_MEMORY_DEVICE;
  HALO_TRY(HALO_CALLOC(sched, P));
  HALO_TRY(HALO_ALLOC(ranks, P));
  HALO_TRY(halo_sim_schedules(sim, &o, sched));
  for (int r = 0; r < P; r++) {
    if (unmerge_mult > 1) HALO_TRY(unmerge(&sched[r], c->K, unmerge_mult));
    if (f > 1) scale_schedule(&sched[r], f);
  }
  for (int i = 0; i < n; i++) {
    place_ranks(sim, c->K, &x->prm, paths[i], ranks);
    HALO_TRY(halo_model_schedules(&x->prm, paths[i], sched, P, ranks, t[i].phase, &t[i].seconds));
    if (x->check && f == 1 && unmerge_mult <= 1) {
      double ref;
      o.transport = paths[i];
      HALO_TRY(halo_sim_model(sim, &o, GPUS, x->params, 0, NULL, &ref));
      if (ref != t[i].seconds)
        HALO_FAIL(HALO_ERR_INTERNAL, "%d x %d, %s on %s: %.17g s here, %.17g s from halo_sim_model",
                  c->M, c->D, halo_strategy_name(sg), halo_transport_name(paths[i]), t[i].seconds,
                  ref);
      x->checked++;
    }
  }
cleanup:
  if (sched)
    for (int r = 0; r < P; r++) halo_schedule_free(&sched[r]);
  halo_free(sched);
  halo_free(ranks);
  return st;
}

/* The smallest power of 2 that brings M v / f values under the budget,
 * keeping v / f even; with a message cap, also cap / f a whole number of
 * values. 0 when there is none. */
static int64_t scale_for(int M, int64_t v, int64_t budget, int64_t cap) {
  int64_t f = 1;
  while ((int64_t)M * (v / f) > budget) f *= 2;
  if (v % f || (v / f) % 2) return 0;
  if (cap && (cap % (f * (int64_t)sizeof(double)))) return 0;
  return f;
}

static void print_row(const fig_ctx *x, const panel *p, int dup, const char *strategy,
                      halo_transport path, int64_t bytes, const fig_time *t, int K, int64_t f) {
  char name[32];
  snprintf(name, sizeof name, "%dmsgs-%dnodes", p->messages, p->nodes);
  printf("%-15s %3d %-15s %-10s %9lld %.6e %14d %5lld", name, dup ? 25 : 0, strategy,
         halo_transport_name(path), (long long)bytes, t->seconds, K, (long long)f);
  int n = 0; /* phases up to the last that costs something */
  for (int k = 0; k < HALO_MAX_PHASES; k++)
    if (t->phase[k] > 0) n = k + 1;
  for (int k = 0; x->phases && k < n; k++) printf("%s%.3e", k ? "," : " ", t->phase[k]);
  printf("\n");
}

static halo_status run_size(fig_ctx *x, const panel *p, int dup, int64_t bytes, int64_t budget) {
  halo_status st = HALO_SUCCESS;
  halo_sim sim = NULL;
  fig_msg msg[MAX_CASE_MSGS];
  int mult;
  const int64_t v = bytes / (int64_t)sizeof(double), cap = HALO_DEFAULT_MESSAGE_CAP;
  const halo_transport direct[2] = {HALO_TRANSPORT_STAGED, HALO_TRANSPORT_MPI_DEVICE};
  const halo_transport split[2] = {HALO_TRANSPORT_STAGED, HALO_TRANSPORT_IPC};
  static const halo_strategy one_per_gpu[3] = {HALO_STRATEGY_STANDARD, HALO_STRATEGY_2STEP,
                                               HALO_STRATEGY_3STEP};
  fig_time t[2];
  if (case_messages(p->messages, p->nodes, msg, &mult) < 0)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "no layout for %d messages to %d nodes", p->messages,
                      p->nodes);
  /* standard, 2-Step, 3-Step: one rank per GPU */
  int64_t f = scale_for(p->messages, v, budget, 0);
  if (!f)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "%lld bytes: no scale keeps messages of whole pairs",
                      (long long)bytes);
  fig_case c = {p->messages, p->nodes, dup, v / f, GPUS, {0, 1, 2, 3}};
  HALO_TRY(case_sim(&c, &sim));
  for (int s = 0; s < 3; s++) {
    const int um = one_per_gpu[s] == HALO_STRATEGY_STANDARD ? mult : 1;
    HALO_TRY(model_strategy(x, sim, &c, one_per_gpu[s], cap, um, f, direct, 2, t));
    for (int i = 0; i < 2; i++)
      print_row(x, p, dup, halo_strategy_name(one_per_gpu[s]), direct[i], bytes, &t[i], c.K, f);
  }
  if (mult > 1) {
    HALO_TRY(model_strategy(x, sim, &c, HALO_STRATEGY_STANDARD, cap, 1, f, direct, 2, t));
    for (int i = 0; i < 2; i++)
      print_row(x, p, dup, "standard-merged", direct[i], bytes, &t[i], c.K, f);
  }
  halo_sim_destroy(&sim);
  /* Split: 40 ranks per node, 4 of them on GPUs */
  f = scale_for(p->messages, v, budget, cap);
  if (!f)
    return HALO_ERROR(HALO_ERR_INVALID_ARG,
                      "%lld bytes: no scale within the budget keeps message_cap whole values; "
                      "raise --budget",
                      (long long)bytes);
  fig_case cs = {p->messages, p->nodes, dup, v / f, SPLIT_RANKS, {0, 1, 20, 21}};
  HALO_TRY(case_sim(&cs, &sim));
  HALO_TRY(model_strategy(x, sim, &cs, HALO_STRATEGY_SPLIT, cap / f, 1, f, split, 2, t));
  print_row(x, p, dup, "split+md", split[0], bytes, &t[0], cs.K, f);
  print_row(x, p, dup, "split+dd", split[1], bytes, &t[1], cs.K, f);
cleanup:
  halo_sim_destroy(&sim);
  return st;
}

static void usage(void) {
  printf("usage: fig43 [--min BYTES] [--max BYTES] [--factor F] [--budget VALUES]\n"
         "             [--params NAME|FILE] [--check] [--phases]\n"
         "\n"
         "The node-aware paper's Figure 4.3 with halo's model: for one node sending 32 or\n"
         "256 inter-node messages of BYTES each to 4 or 16 nodes, with and without 25 %%\n"
         "duplicate data, the modeled time of every strategy and path. Prints one row per\n"
         "panel, duplicates, strategy, path and message size (see the header comment of\n"
         "bench/fig43.c for the layout).\n"
         "\n"
         "  --min BYTES      smallest message, a multiple of 16 [16]\n"
         "  --max BYTES      largest message [16777216]\n"
         "  --factor F       ratio of consecutive sizes, a power of 2 [2]\n"
         "  --budget VALUES  most values a schedule is built with; larger cases are\n"
         "                   built smaller and their counts scaled [1048576]\n"
         "  --params NAME    machine parameters: built-in set or file [lassen]\n"
         "  --check          compare every unscaled case with halo_sim_model\n"
         "  --phases         add a column: the modeled seconds of each phase\n");
}

int main(int argc, char **argv) {
  int64_t lo = 16, hi = 16 << 20, factor = 2, budget = 1 << 20;
  fig_ctx x = {.params = "lassen"};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--check")) {
      x.check = 1;
    } else if (!strcmp(a, "--phases")) {
      x.phases = 1;
    } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage();
      return 0;
    } else if (i + 1 < argc && !strcmp(a, "--params")) {
      x.params = argv[++i];
    } else if (i + 1 < argc && (!strcmp(a, "--min") || !strcmp(a, "--max") ||
                                !strcmp(a, "--factor") || !strcmp(a, "--budget"))) {
      char *end;
      long long n = strtoll(argv[++i], &end, 10);
      if (*end || n < 1) {
        fprintf(stderr, "fig43: %s needs a positive integer, got '%s'\n", a, argv[i]);
        return 2;
      }
      *(a[2] == 'm' ? (a[3] == 'i' ? &lo : &hi) : a[2] == 'f' ? &factor : &budget) = n;
    } else {
      fprintf(stderr, "fig43: unknown argument '%s' (see fig43 --help)\n", a);
      return 2;
    }
  }
  if (lo % 16 || hi < lo || factor < 2 || (factor & (factor - 1)) || budget < 2 * MAX_CASE_MSGS) {
    fprintf(stderr, "fig43: --min a multiple of 16, --max >= --min, --factor a power of 2 "
                    ">= 2, --budget >= 512\n");
    return 2;
  }
  if (halo_params_load(x.params, &x.prm) != HALO_SUCCESS) return fail("parameters");
  printf("# halo's model of the node-aware paper's Figure 4.3, parameters %s\n", x.prm.name);
  printf("# one node sends M messages of `bytes` each (standard), M/4 per GPU, to D nodes of\n");
  printf("# 4 GPUs; dup: %% of the standard inter-node bytes that are duplicates. standard,\n");
  printf("# 2step, 3step: one rank per GPU; split: 40 ranks per node, 4 on GPUs (staged:\n");
  printf("# Split+MD, ipc: Split+DD), message_cap %d. 256msgs-4nodes: standard sends the 4\n",
         HALO_DEFAULT_MESSAGE_CAP);
  printf("# messages of each rank pair, standard-merged the one message halo makes of them.\n");
  printf("# scale: built with bytes/scale values and every count multiplied by scale.\n");
  printf("%-15s %3s %-15s %-10s %9s %-12s %14s %5s%s\n", "panel", "dup", "strategy", "path",
         "bytes", "seconds", "ranks_per_node", "scale", x.phases ? " phases" : "");
  for (int p = 0; p < N_PANELS; p++)
    for (int dup = 0; dup < 2; dup++)
      for (int64_t b = lo; b <= hi; b *= factor)
        if (run_size(&x, &panels[p], dup, b, budget) != HALO_SUCCESS) return fail("model");
  if (x.check) fprintf(stderr, "fig43: %d unscaled cases agree with halo_sim_model\n", x.checked);
  return 0;
}
