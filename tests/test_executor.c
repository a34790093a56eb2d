/* The host executor runs any schedule, not only the standard one: a two-phase
 * "relay" schedule, built here by hand, sends the values rank q needs to rank
 * relay(q) = (q+1) % P in a global phase (received into work, in reverse
 * order so that they must be unpacked; a copy when the relay is the owner),
 * and the relay forwards them to q in a node-local phase (all ranks of this
 * test share a node). Every ghost must arrive exactly, again and again.
 * Reversed (halo_schedule_reverse), the same schedule carries each ghost's
 * contribution back through the relay's work buffer and adds it into its
 * owner's entry: every owner must end with its entries plus the sum of the
 * contributions of every rank that has them as ghosts, added in the order
 * of the schedule (bit for bit the same on every run). */
#include "exec/exec.h"
#include "plan/topology.h"
#include "settings.h"
#include "world.h"

static int relay_of(int q, int P) { return (q + 1) % P; }

/* Schedule of rank me from the patterns of all ranks. */
static void build_relay(const world *w, int me, halo_schedule *s) {
  const int P = w->P, client = (me - 1 + P) % P; /* the rank I forward to */
  const halo_pattern *mine = &w->pat[me], *cl = &w->pat[client];
  memset(s, 0, sizeof *s);
  s->rank = me, s->size = P, s->n_phases = 2;
  s->n_local = mine->n_local, s->n_ghost = mine->n_ghost;
  s->n_work = P > 1 ? cl->n_ghost : 0;
  halo_phase *a = &s->phase[0], *b = &s->phase[1];
  a->scope = HALO_SCOPE_GLOBAL;
  b->scope = HALO_SCOPE_NODE;
  /* phase 0 sends: what each q needs from me goes to relay(q); one relay
   * serves one client, so peers stay unique */
  int64_t n_pack = 0;
  for (int i = 0; i < mine->n_send; i++) n_pack += mine->send[i].count;
  a->send = halo_malloc((size_t)(mine->n_send + 1) * sizeof(halo_msg));
  a->pack = halo_malloc((size_t)(n_pack + 1) * sizeof(int64_t));
  for (int i = 0; i < mine->n_send; i++) {
    const halo_msg *m = &mine->send[i];
    a->send[a->n_send++] = (halo_msg){relay_of(m->peer, P), m->offset, m->count};
    memcpy(a->pack + m->offset, mine->send_idx + m->offset, (size_t)m->count * sizeof(int64_t));
    a->send_total += m->count;
  }
  /* phase 0 receives: the client's ghosts, owner by owner, into work reversed */
  if (s->n_work > 0) {
    a->recv = halo_malloc((size_t)(cl->n_recv + 1) * sizeof(halo_msg));
    a->unpack = halo_malloc((size_t)s->n_work * sizeof(int64_t));
    for (int i = 0; i < cl->n_recv; i++) {
      const halo_msg *m = &cl->recv[i];
      a->recv[a->n_recv++] = (halo_msg){m->peer, m->offset, m->count};
      for (int64_t k = 0; k < m->count; k++)
        a->unpack[m->offset + k] = s->n_ghost + (s->n_work - 1 - (m->offset + k));
    }
    a->recv_total = s->n_work;
    /* phase 1 send: all of the client's ghosts, in ghost order */
    b->send = halo_malloc(sizeof(halo_msg));
    b->pack = halo_malloc((size_t)s->n_work * sizeof(int64_t));
    b->send[0] = (halo_msg){client, 0, s->n_work};
    b->n_send = 1, b->send_total = s->n_work;
    for (int64_t g = 0; g < s->n_work; g++) b->pack[g] = s->n_local + (s->n_work - 1 - g);
  }
  /* phase 1 receive: my ghosts from my relay, straight into x_ghost */
  if (mine->n_ghost > 0) {
    b->recv = halo_malloc(sizeof(halo_msg));
    b->unpack = halo_malloc((size_t)mine->n_ghost * sizeof(int64_t));
    b->recv[0] = (halo_msg){relay_of(me, P), 0, mine->n_ghost};
    b->n_recv = 1, b->recv_total = mine->n_ghost;
    for (int64_t g = 0; g < mine->n_ghost; g++) b->unpack[g] = g;
  }
}

static void run(MPI_Comm comm, const char *spec) {
  int me, P;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &P);
  halo_gen g;
  halo_csr A;
  int64_t N;
  world w;
  CHECK_OK(halo_gen_parse(spec, &g));
  CHECK_OK(halo_gen_size(&g, &N, NULL));
  CHECK_OK(halo_gen_rows(&g, 0, N, &A));
  make_world(&A, P, &w);
  for (int r = 0; r < P; r++) {
    build_relay(&w, r, &w.sch[r]);
    CHECK_OK(halo_schedule_check(&w.sch[r]));
  }
  CHECK_OK(halo_schedules_check_matching(w.sch, P));
  halo_topology topo;
  halo_schedule rev;
  halo_exec ex, rx;
  halo_exec_config cfg;
  MPI_Comm dup;
  MPI_Comm_dup(comm, &dup);
  CHECK_OK(halo_topology_create(dup, 0, &topo));
  CHECK(topo.n_nodes == 1); /* the node phase needs every rank on one node */
  CHECK_OK(halo_schedule_reverse(&w.sch[me], &rev));
  CHECK(rev.add == 1 && rev.n_phases == 2 && rev.phase[0].scope == HALO_SCOPE_NODE);
  memset(&cfg, 0, sizeof cfg);
  cfg.transport = HALO_TRANSPORT_HOST;
  cfg.comm = dup;
  cfg.node_comm = topo.node_comm;
  CHECK_OK(halo_settings_max_count(&cfg.max_count)); /* HALO_DEBUG_MAX_COUNT splits messages */
  int stride = halo_exec_tag_stride(&w.sch[me], cfg.max_count);
  MPI_Allreduce(MPI_IN_PLACE, &stride, 1, MPI_INT, MPI_MAX, dup);
  cfg.tag_stride = stride;
  cfg.tag_base = 64;
  CHECK_OK(halo_exec_create(&halo_exec_host_ops, &w.sch[me], &cfg, &ex));
  cfg.tag_base = 64 + 2 * stride;
  CHECK_OK(halo_exec_create(&halo_exec_host_ops, &rev, &cfg, &rx));
  const int64_t cb = w.ranges[me], n = w.ranges[me + 1] - cb;
  double *x = malloc((size_t)(n + 1) * sizeof *x), *y = malloc((size_t)(n + 1) * sizeof *y);
  double *c = malloc((size_t)(w.n_ghost[me] + 1) * sizeof *c), *y1 = NULL;
  for (int it = 1; it <= 3; it++) {
    for (int64_t j = 0; j < n; j++) x[j] = it * test_x(cb + j);
    for (int64_t k = 0; k < w.n_ghost[me]; k++) ex.ghost[k] = NAN;
    CHECK_OK(halo_exec_begin(&ex, x, NULL));
    CHECK_OK(halo_exec_end(&ex));
    for (int64_t k = 0; k < w.n_ghost[me]; k++)
      CHECK_MSG(ex.ghost[k] == it * test_x(w.ghosts[me][k]), "%s: ghost %lld is %g, not %g", spec,
                (long long)k, ex.ghost[k], it * test_x(w.ghosts[me][k]));
    /* reverse: ghost k of rank r contributes contrib(r, gid); owners add */
    for (int64_t k = 0; k < w.n_ghost[me]; k++)
      c[k] = test_x(w.ghosts[me][k] + it) * (me + 1) / (double)P;
    for (int64_t j = 0; j < n; j++) y[j] = x[j];
    CHECK_OK(halo_exec_begin(&rx, c, y));
    CHECK_OK(halo_exec_end(&rx));
    for (int64_t j = 0; j < n; j++) {
      double ref = x[j], mag = fabs(x[j]);
      for (int r = 0; r < P; r++)
        for (int64_t k = 0; k < w.n_ghost[r]; k++)
          if (w.ghosts[r][k] == cb + j) {
            const double v = test_x(cb + j + it) * (r + 1) / (double)P;
            ref += v, mag += fabs(v);
          }
      CHECK_MSG(fabs(y[j] - ref) <= 1e-14 * mag, "%s: reverse entry %lld is %.17g, not %.17g",
                spec, (long long)j, y[j], ref);
    }
    if (it == 1) { /* the same bits on a second run */
      y1 = malloc((size_t)(n + 1) * sizeof *y1);
      memcpy(y1, y, (size_t)n * sizeof *y);
      for (int64_t j = 0; j < n; j++) y[j] = x[j];
      CHECK_OK(halo_exec_begin(&rx, c, y));
      CHECK_OK(halo_exec_end(&rx));
      CHECK(n == 0 || memcmp(y1, y, (size_t)n * sizeof *y) == 0);
    }
  }
  free(y1), free(c), free(y), free(x);
  halo_exec_destroy(&rx);
  halo_exec_destroy(&ex);
  halo_schedule_free(&rev);
  halo_topology_destroy(&topo);
  MPI_Comm_free(&dup);
  free_world(&w);
  halo_csr_free(&A);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  run(MPI_COMM_WORLD, "lap2d:9");
  run(MPI_COMM_WORLD, "lap3d27:5");
  run(MPI_COMM_WORLD, "irregular:400,9");
  MPI_Finalize();
  return 0;
}
