/* Exchanges of any unit (issue 43): every type (double, float, complex
 * double, int32, int64; bytes, inserts only) x k in {1, 2, 3, 4, 7} x every
 * strategy (standard, 2step, 3step, split with a small cap, on virtual nodes
 * of 2 ranks) x every host transport (host, rma, neighbor; one not compiled
 * in is skipped, saying so) x
 * forward insert, forward add, reverse add and reverse insert, against a
 * reference computed here with no communication: every rank regenerates
 * every rank's ghost slots from a seed. Values are small integers, so that
 * every sum is exact in every type and order: the results must be the
 * reference's bytes, whatever the strategy's order of additions.
 *
 * Also: slots naming one entry several times (the plan's leaves) and not,
 * slots naming the rank's own entries (the plan's copies, issue 43 item 2);
 * the plan's own ghost buffer (x_ghost NULL) and an exchange handle;
 * exchanges of one double in between (the requests made again for each
 * size); a unit larger than exec.unit_max_bytes, a bad type, k 0 and a reverse on
 * a plan without one refused on every rank without failing the plan, on every
 * transport; neighbor refuses, at plan time, messages split into pieces
 * (HALO_DEBUG_MAX_COUNT: its counts are one int per peer). */
#include "test_util.h"

#ifdef HALO_TEST_DEVICE /* test_units_gpu: the same in device memory */
#include <cuda_runtime.h>
#endif

static int rank, P;
static halo_memory mem = HALO_MEMORY_HOST; /* of the plans and the exchanges' arrays */

/* The array an exchange takes for the host array h of bytes: h itself, or
 * (device memory) a device copy of it; back() copies the result into h and
 * frees the copy. own_dev: the plan's own ghost buffer, in device memory. */
static void *dev_in(void *h, size_t bytes, void *own_dev) {
#ifdef HALO_TEST_DEVICE
  if (mem == HALO_MEMORY_DEVICE) {
    void *d = own_dev;
    if (!d) CHECK(cudaMalloc(&d, bytes + 16) == cudaSuccess);
    CHECK(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice) == cudaSuccess);
    return d;
  }
#endif
  (void)bytes, (void)own_dev;
  return h;
}
static void dev_back(void *h, void *d, size_t bytes, int own) {
#ifdef HALO_TEST_DEVICE
  if (mem == HALO_MEMORY_DEVICE) {
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    CHECK(cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost) == cudaSuccess);
    if (!own) cudaFree(d);
    return;
  }
#endif
  (void)h, (void)d, (void)bytes, (void)own;
}

/* This rank's entries: n_of(r) at ids first_of(r) ... */
static int64_t n_of(int r) { return 13 + 5 * (int64_t)r; }

/* Rank r's ghost slots (pairs of owner and index), with duplicates or not;
 * every fifth names an entry of r itself (copied by the plan). */
static int64_t slots_of(int r, int dup, int *owner, int64_t *index) {
  uint64_t x = 0x9E3779B97F4A7C15ull * (uint64_t)(r + 1) + (uint64_t)dup;
  const int64_t n = 17 + 3 * (int64_t)r;
  int64_t m = 0;
  for (int64_t i = 0; i < n; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    int o = r;
    if (P > 1 && i % 5 != 2) {
      o = (int)(x % (uint64_t)(P - 1));
      if (o >= r) o++;
    }
    const int64_t j = (int64_t)((x >> 20) % (uint64_t)n_of(o));
    int seen = 0;
    for (int64_t t = 0; t < m && !dup; t++) seen |= owner[t] == o && index[t] == j;
    if (seen) continue;
    owner[m] = o, index[m] = j, m++;
  }
  return m;
}

/* The c-th scalar of an owned entry (rank r, index j) and of a ghost slot's
 * contribution or start value: small integers. */
static int64_t v_owned(int r, int64_t j, int64_t c, int round) {
  return (7 * r + 3 * j + 5 * c + round) % 97 - 40;
}
static int64_t v_slot(int r, int64_t s, int64_t c, int round) {
  return (11 * r + 5 * s + 3 * c + 2 * round) % 89 - 30;
}

static const char *type_name[] = {"double", "float", "complex", "int32", "int64", "byte"};
static const size_t type_size[] = {8, 4, 16, 4, 8, 1};

/* Scalars per entry and their size. */
static int64_t per_entry(halo_unit u) {
  return (int64_t)u.k * (u.type == HALO_TYPE_COMPLEX_DOUBLE ? 2 : 1);
}
static size_t scalar_size(halo_unit u) {
  return u.type == HALO_TYPE_COMPLEX_DOUBLE ? 8 : type_size[u.type];
}

/* Store the integer v as scalar c of entry i of array a. */
static void put(halo_unit u, void *a, int64_t i, int64_t c, int64_t v) {
  const int64_t at = i * per_entry(u) + c;
  switch (u.type) {
  case HALO_TYPE_FLOAT: ((float *)a)[at] = (float)v; break;
  case HALO_TYPE_INT32: ((int32_t *)a)[at] = (int32_t)v; break;
  case HALO_TYPE_INT64: ((int64_t *)a)[at] = v; break;
  case HALO_TYPE_BYTE: ((unsigned char *)a)[at] = (unsigned char)v; break;
  default: ((double *)a)[at] = (double)v; break;
  }
}

static void *alloc_entries(halo_unit u, int64_t n) {
  void *p = calloc((size_t)(n + 1) * (size_t)per_entry(u), scalar_size(u));
  CHECK(p != NULL);
  return p;
}

typedef struct {
  int64_t n, n_slots;
  int *owner;
  int64_t *index;
} pattern;

static void pattern_make(int r, int dup, pattern *p) {
  const int64_t most = 17 + 3 * (int64_t)r;
  p->owner = malloc((size_t)(most + 1) * sizeof *p->owner);
  p->index = malloc((size_t)(most + 1) * sizeof *p->index);
  p->n = n_of(r);
  p->n_slots = slots_of(r, dup, p->owner, p->index);
}

static void pattern_free(pattern *p) { free(p->owner), free(p->index); }

/* One exchange of unit u with op in direction rev on plan (or handle ex),
 * checked against the reference; own: the plan's own ghost buffer. */
static void check_one(halo_plan plan, halo_exchange ex, int dup, halo_unit u, halo_op op, int rev,
                      int own, int round, const char *label) {
  pattern me;
  pattern_make(rank, dup, &me);
  const int64_t per = per_entry(u), sz = (int64_t)scalar_size(u) * per;
  void *x = alloc_entries(u, me.n), *g = alloc_entries(u, me.n_slots);
  void *want = alloc_entries(u, rev ? me.n : me.n_slots);
  double *pg = NULL; /* the plan's (or handle's) own ghost buffer */
  if (own) {
    if (ex)
      CHECK_OK(halo_exchange_get_ghost(ex, &pg));
    else
      CHECK_OK(halo_plan_get_ghost(plan, &pg));
    if (mem == HALO_MEMORY_HOST) {
      free(g);
      g = pg;
    }
  }
  for (int64_t j = 0; j < me.n; j++)
    for (int64_t c = 0; c < per; c++) put(u, x, j, c, v_owned(rank, j, c, round));
  for (int64_t s = 0; s < me.n_slots; s++)
    for (int64_t c = 0; c < per; c++) put(u, g, s, c, v_slot(rank, s, c, round));
  if (!rev) {
    for (int64_t s = 0; s < me.n_slots; s++)
      for (int64_t c = 0; c < per; c++)
        put(u, want, s, c,
            v_owned(me.owner[s], me.index[s], c, round) +
                (op == HALO_OP_ADD ? v_slot(rank, s, c, round) : 0));
    void *dx = dev_in(x, (size_t)(me.n * sz), NULL);
    void *dg = dev_in(g, (size_t)(me.n_slots * sz), own ? pg : NULL);
    if (ex)
      CHECK_OK(halo_exchange_start_unit(ex, u, op, dx, own ? NULL : dg));
    else
      CHECK_OK(halo_exchange_begin_unit(plan, u, op, dx, own ? NULL : dg));
    CHECK_OK(ex ? halo_exchange_wait(ex) : halo_exchange_end(plan));
    dev_back(g, dg, (size_t)(me.n_slots * sz), own);
    dev_back(x, dx, (size_t)(me.n * sz), 0);
    CHECK_MSG(me.n_slots == 0 || memcmp(g, want, (size_t)(me.n_slots * sz)) == 0,
              "%s: forward %s of %s x %d: a ghost differs from the reference", label,
              op == HALO_OP_ADD ? "add" : "insert", type_name[u.type], u.k);
  } else {
    /* the reference: every rank's slots naming this rank's entries; for an
     * insert, each entry's candidates (any of them may win) */
    int64_t *sum = calloc((size_t)(me.n * per + 1), sizeof *sum);
    int64_t *hits = calloc((size_t)(me.n + 1), sizeof *hits);
    for (int r = 0; r < P; r++) {
      pattern o;
      pattern_make(r, dup, &o);
      for (int64_t s = 0; s < o.n_slots; s++)
        if (o.owner[s] == rank) {
          hits[o.index[s]]++;
          for (int64_t c = 0; c < per; c++) sum[o.index[s] * per + c] += v_slot(r, s, c, round);
        }
      pattern_free(&o);
    }
    void *dx = dev_in(x, (size_t)(me.n * sz), NULL);
    void *dg = dev_in(g, (size_t)(me.n_slots * sz), own ? pg : NULL);
    if (ex)
      CHECK_OK(halo_exchange_start_reverse_unit(ex, u, op, own ? NULL : dg, dx));
    else
      CHECK_OK(halo_exchange_reverse_begin_unit(plan, u, op, own ? NULL : dg, dx));
    CHECK_OK(ex ? halo_exchange_wait(ex) : halo_exchange_reverse_end(plan));
    dev_back(g, dg, (size_t)(me.n_slots * sz), own);
    dev_back(x, dx, (size_t)(me.n * sz), 0);
    if (op == HALO_OP_ADD) {
      for (int64_t j = 0; j < me.n; j++)
        for (int64_t c = 0; c < per; c++)
          put(u, want, j, c, v_owned(rank, j, c, round) + sum[j * per + c]);
      CHECK_MSG(memcmp(x, want, (size_t)(me.n * sz)) == 0,
                "%s: reverse add of %s x %d: an entry differs from the reference", label,
                type_name[u.type], u.k);
    } else { /* each entry: its own where no slot names it, else one slot's whole entry */
      void *cand = alloc_entries(u, 1);
      for (int64_t j = 0; j < me.n; j++) {
        int ok = 0;
        if (!hits[j]) {
          for (int64_t c = 0; c < per; c++) put(u, cand, 0, c, v_owned(rank, j, c, round));
          ok = memcmp((char *)x + j * sz, cand, (size_t)sz) == 0;
        }
        for (int r = 0; r < P && !ok && hits[j]; r++) {
          pattern o;
          pattern_make(r, dup, &o);
          for (int64_t s = 0; s < o.n_slots && !ok; s++) {
            if (o.owner[s] != rank || o.index[s] != j) continue;
            for (int64_t c = 0; c < per; c++) put(u, cand, 0, c, v_slot(r, s, c, round));
            ok = memcmp((char *)x + j * sz, cand, (size_t)sz) == 0;
          }
          pattern_free(&o);
        }
        CHECK_MSG(ok,
                  "%s: reverse insert of %s x %d: entry %lld is neither its own nor any "
                  "slot's naming it",
                  label, type_name[u.type], u.k, (long long)j);
      }
      free(cand);
    }
    free(sum), free(hits);
  }
  if (!own || mem == HALO_MEMORY_DEVICE) free(g);
  free(x), free(want);
  pattern_free(&me);
}

/* One double each way, as halo_exchange_begin does, between unit exchanges. */
static void check_double(halo_plan plan, int dup, int round) {
  const halo_unit d = {HALO_TYPE_DOUBLE, 1};
  pattern me;
  pattern_make(rank, dup, &me);
  double *x = calloc((size_t)me.n + 1, sizeof *x), *g = calloc((size_t)me.n_slots + 1, sizeof *g);
  for (int64_t j = 0; j < me.n; j++) x[j] = (double)v_owned(rank, j, 0, round);
  void *dx = dev_in(x, (size_t)me.n * sizeof *x, NULL);
  void *dg = dev_in(g, (size_t)me.n_slots * sizeof *g, NULL);
  CHECK_OK(halo_exchange_begin(plan, dx, dg));
  CHECK_OK(halo_exchange_end(plan));
  dev_back(g, dg, (size_t)me.n_slots * sizeof *g, 0);
  dev_back(x, dx, (size_t)me.n * sizeof *x, 0);
  for (int64_t s = 0; s < me.n_slots; s++)
    CHECK(g[s] == (double)v_owned(me.owner[s], me.index[s], 0, round));
  free(x), free(g);
  pattern_free(&me);
  (void)d;
}

/* A plan on transport t, or 0 where t refuses it as it should: neighbor with
 * messages split into pieces (their counts past exec.max_message_count). */
static int plan_make(const pattern *me, halo_plan_options *o, halo_transport t, halo_plan *plan) {
  o->transport = t;
  o->memory = mem;
  const halo_status st = halo_plan_create_from_pairs(MPI_COMM_WORLD, me->n, me->n_slots, me->owner,
                                                     me->index, o, plan);
  if (st != HALO_SUCCESS && t == HALO_TRANSPORT_NEIGHBOR && getenv("HALO_DEBUG_MAX_COUNT")) {
    CHECK_MSG(st == HALO_ERR_UNSUPPORTED && strstr(halo_last_error(), "MPI_Neighbor_alltoallv"),
              "transport neighbor with split messages: %s", halo_last_error());
    return 0;
  }
  if (st != HALO_SUCCESS && mem == HALO_MEMORY_DEVICE && t == HALO_TRANSPORT_NCCL &&
      strstr(halo_last_error(), "one rank per GPU")) {
    if (rank == 0) printf("test_units: transport nccl not run here: %s\n", halo_last_error());
    return 0; /* several ranks on one GPU */
  }
  CHECK_MSG(st == HALO_SUCCESS, "a plan on transport %s: %s", halo_transport_name(t),
            halo_last_error());
  char what[512];
  CHECK_OK(halo_plan_describe(*plan, what, sizeof what));
  CHECK_MSG(strstr(what, halo_transport_name(t)) != NULL, "asked for transport %s: %s",
            halo_transport_name(t), what);
  return 1;
}

/* 1 where the case ran, 0 where its transport was not made here. */
static int run_case(halo_transport transport, halo_strategy strategy, int dup) {
  char label[128];
  static const char *sname[] = {"standard", "2step", "3step", "split"};
  snprintf(label, sizeof label, "%s, %s, %s slots", halo_transport_name(transport), sname[strategy],
           dup ? "repeated" : "unique");
  pattern me;
  pattern_make(rank, dup, &me);
  halo_plan_options o = halo_plan_options_default();
  o.strategy = strategy;
  o.ranks_per_node = 2;
  o.message_cap = 64; /* split: a few entries a message */
  o.max_exchanges = 2;
  /* complex x 7; nccl's communicator made with the plan (not meanwhile ipc) */
  o.settings = "exec.unit_max_bytes=112,nccl.background=0";
  halo_plan plan;
  if (!plan_make(&me, &o, transport, &plan)) {
    pattern_free(&me);
    return 0;
  }
  halo_exchange ex;
  CHECK_OK(halo_exchange_create(plan, &ex));
  static const int ks[] = {1, 2, 3, 4, 7};
  int round = 0;
  for (int t = 0; t <= HALO_TYPE_BYTE; t++)
    for (int ik = 0; ik < 5; ik++) {
      const halo_unit u = {(halo_type)t, ks[ik]};
      CHECK(halo_unit_size(u) == type_size[t] * (size_t)ks[ik]);
      for (int rev = 0; rev < 2; rev++)
        for (int op = 0; op < 2; op++) {
          if (t == HALO_TYPE_BYTE && op == HALO_OP_ADD) continue; /* bytes: inserts only */
          round++;
          CHECK_OK(halo_plan_unit_check(plan, u, (halo_op)op, rev));
          check_one(plan, NULL, dup, u, (halo_op)op, rev, 0, round, label);
          check_one(plan, NULL, dup, u, (halo_op)op, rev, 1, round + 1, label);
          check_one(plan, ex, dup, u, (halo_op)op, rev, round & 1, round + 2, label);
        }
      if (ik == 2) check_double(plan, dup, round);
    }
  check_double(plan, dup, round + 5);
  halo_exchange_destroy(&ex);
  halo_plan_destroy(&plan);
  pattern_free(&me);
  return 1;
}

/* What is refused, on every rank, without failing the plan. */
static void check_refusals(halo_transport transport) {
  pattern me;
  pattern_make(rank, 1, &me);
  halo_plan_options o = halo_plan_options_default();
  o.strategy = HALO_STRATEGY_STANDARD;
  o.reverse = 0;
  o.settings = "nccl.background=0";
  halo_plan plan;
  if (!plan_make(&me, &o, transport, &plan)) {
    pattern_free(&me);
    return;
  }
  double x[256] = {0}, g[256] = {0};
  CHECK(halo_exchange_begin_unit(plan, (halo_unit){HALO_TYPE_COMPLEX_DOUBLE, 1}, HALO_OP_INSERT, x,
                                 NULL) == HALO_ERR_INVALID_ARG);
  CHECK(strstr(halo_last_error(), "exec.unit_max_bytes") != NULL);
  CHECK(halo_exchange_begin_unit(plan, (halo_unit){(halo_type)9, 1}, HALO_OP_INSERT, x, NULL) ==
        HALO_ERR_INVALID_ARG);
  CHECK(halo_exchange_begin_unit(plan, (halo_unit){HALO_TYPE_FLOAT, 0}, HALO_OP_INSERT, x, NULL) ==
        HALO_ERR_INVALID_ARG);
  CHECK(halo_exchange_begin_unit(plan, (halo_unit){HALO_TYPE_FLOAT, 1}, (halo_op)5, x, NULL) ==
        HALO_ERR_INVALID_ARG);
  CHECK(halo_exchange_reverse_begin_unit(plan, (halo_unit){HALO_TYPE_FLOAT, 1}, HALO_OP_ADD, g,
                                         x) == HALO_ERR_STATE);
  CHECK(halo_unit_size((halo_unit){HALO_TYPE_INT32, 0}) == 0);
  CHECK(halo_plan_unit_check(plan, (halo_unit){HALO_TYPE_BYTE, 3}, HALO_OP_ADD, 0) ==
        HALO_ERR_INVALID_ARG);
  CHECK(strstr(halo_last_error(), "insert only") != NULL);
  check_double(plan, 1, 3); /* the plan still runs */
  /* a unit of 8 bytes fits the default buffers */
  float fx[256], fg[256];
  for (int64_t j = 0; j < me.n; j++) fx[2 * j] = (float)j, fx[2 * j + 1] = (float)rank;
  void *dfx = dev_in(fx, sizeof fx, NULL), *dfg = dev_in(fg, sizeof fg, NULL);
  CHECK_OK(
      halo_exchange_begin_unit(plan, (halo_unit){HALO_TYPE_FLOAT, 2}, HALO_OP_INSERT, dfx, dfg));
  CHECK_OK(halo_exchange_end(plan));
  dev_back(fg, dfg, sizeof fg, 0);
  dev_back(fx, dfx, sizeof fx, 0);
  for (int64_t s = 0; s < me.n_slots; s++)
    CHECK(fg[2 * s] == (float)me.index[s] && fg[2 * s + 1] == (float)me.owner[s]);
  halo_plan_destroy(&plan);
  pattern_free(&me);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  static const halo_transport host_t[] = {HALO_TRANSPORT_HOST, HALO_TRANSPORT_RMA,
                                          HALO_TRANSPORT_NEIGHBOR};
  static const halo_transport dev_t[] = {HALO_TRANSPORT_STAGED, HALO_TRANSPORT_IPC,
                                         HALO_TRANSPORT_NCCL};
#ifdef HALO_TEST_DEVICE
  int n_dev = 0;
  if (cudaGetDeviceCount(&n_dev) != cudaSuccess || n_dev == 0) {
    if (rank == 0) printf("test_units: no CUDA device: skipped\n");
    MPI_Finalize();
    return 77;
  }
  mem = HALO_MEMORY_DEVICE;
#endif
  const halo_transport *transports = mem == HALO_MEMORY_DEVICE ? dev_t : host_t;
  char ran[128] = "";
  for (int t = 0; t < 3; t++) {
    halo_transport_info info;
    CHECK_OK(halo_transport_get_info(transports[t], &info));
    if (!info.compiled) {
      if (rank == 0) printf("test_units: transport %s not compiled in: not tested\n", info.name);
      continue;
    }
    int runs = 0;
    for (int dup = 0; dup < 2; dup++)
      for (int s = HALO_STRATEGY_STANDARD; s <= HALO_STRATEGY_SPLIT; s++)
        runs += run_case(transports[t], (halo_strategy)s, dup);
    check_refusals(transports[t]);
    if (runs)
      snprintf(ran + strlen(ran), sizeof ran - strlen(ran), "%s%s", ran[0] ? ", " : "", info.name);
  }
  if (rank == 0)
    printf("test_units: passed on %d ranks (%s memory: %s)\n", P, halo_memory_name(mem), ran);
  MPI_Finalize();
  return 0;
}
