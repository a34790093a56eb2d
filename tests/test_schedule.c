/* Unit tests of the pattern and the schedule, without MPI: the patterns of
 * all ranks of a matrix are built in one process, the standard schedule of
 * each is checked on its own and against the others, and corrupted
 * schedules are caught with their message. Reversed schedules: their
 * phases and lists are the swap of the original's, they add, the checks
 * accept the reverses of every strategy and catch corrupted ones. */
#include "halo/io.h"
#include "halo_impl.h"
#include "model/simulate.h"
#include "plan/strategy.h"
#include "test_util.h"
#include "world.h"

static void test_pattern_and_standard(const char *spec, int P) {
  halo_gen g;
  halo_csr A;
  world w;
  CHECK_OK(halo_gen_parse(spec, &g));
  CHECK_OK(halo_gen_rows(&g, 0,
                         g.kind == HALO_GEN_IRREGULAR ? g.n
                         : g.kind == HALO_GEN_LAP2D   ? g.n * g.n
                                                      : g.n * g.n * g.n,
                         &A));
  make_world(&A, P, &w);
  for (int r = 0; r < P; r++) {
    const halo_pattern *p = &w.pat[r];
    /* receives tile the ghosts, owners increase, every ghost in its owner's range */
    int64_t off = 0;
    for (int i = 0; i < p->n_recv; i++) {
      CHECK(p->recv[i].offset == off && p->recv[i].count > 0);
      CHECK(p->recv[i].peer != r && (i == 0 || p->recv[i].peer > p->recv[i - 1].peer));
      for (int64_t k = 0; k < p->recv[i].count; k++) {
        int64_t gid = w.ghosts[r][off + k];
        CHECK(gid >= w.ranges[p->recv[i].peer] && gid < w.ranges[p->recv[i].peer + 1]);
      }
      off += p->recv[i].count;
    }
    CHECK(off == w.n_ghost[r]);
    CHECK_OK(halo_schedule_build_standard(p, &w.sch[r]));
    CHECK_OK(halo_schedule_check(&w.sch[r]));
    CHECK(w.sch[r].n_phases == 1 && w.sch[r].phase[0].scope == HALO_SCOPE_GLOBAL);
  }
  CHECK_OK(halo_schedules_check_matching(w.sch, P));
  /* delivering the schedule by hand gives every ghost its value */
  for (int r = 0; r < P; r++) {
    const halo_phase *ph = &w.sch[r].phase[0];
    for (int i = 0; i < ph->n_recv; i++) {
      const halo_msg *m = &ph->recv[i];
      const halo_phase *qs = &w.sch[m->peer].phase[0];
      int j = 0;
      while (qs->send[j].peer != r) j++;
      CHECK(qs->send[j].count == m->count);
      for (int64_t k = 0; k < m->count; k++) {
        int64_t src = qs->pack[qs->send[j].offset + k] + w.ranges[m->peer];
        int64_t dst = ph->unpack[m->offset + k];
        CHECK(w.ghosts[r][dst] == src);
      }
    }
  }
  /* counts: one node per rank pair or all on one node */
  halo_phase_counts c;
  int *nodes = malloc((size_t)(w.sch[0].phase[0].n_send + 1) * sizeof *nodes);
  for (int i = 0; i < w.sch[0].phase[0].n_send; i++) nodes[i] = w.sch[0].phase[0].send[i].peer;
  halo_phase_count(&w.sch[0].phase[0], 0, 0, nodes, &c);
  CHECK(c.messages == w.sch[0].phase[0].n_send);
  CHECK(c.bytes == 8 * w.sch[0].phase[0].send_total);
  CHECK(c.inter_node_messages == c.messages && c.inter_node_bytes == c.bytes);
  for (int i = 0; i < w.sch[0].phase[0].n_send; i++) nodes[i] = 0;
  halo_phase_count(&w.sch[0].phase[0], 0, 0, nodes, &c);
  CHECK(c.inter_node_messages == 0 && c.inter_node_bytes == 0);
  free(nodes);
  free_world(&w);
  halo_csr_free(&A);
}

/* A two-phase schedule by hand for rank 0 of 3: phase 0 receives 2 values
 * from rank 1 into work, phase 1 forwards one of them to rank 2 and copies
 * the other to its own ghost 0 through a message to itself. */
static void make_two_phase(halo_schedule *s) {
  memset(s, 0, sizeof *s);
  s->rank = 0, s->size = 3, s->n_local = 4, s->n_ghost = 1, s->n_work = 2, s->n_phases = 2;
  halo_phase *a = &s->phase[0], *b = &s->phase[1];
  a->scope = HALO_SCOPE_GLOBAL;
  a->n_recv = 1, a->recv_total = 2;
  a->recv = halo_malloc(sizeof(halo_msg));
  a->recv[0] = (halo_msg){1, 0, 2};
  a->unpack = halo_malloc(2 * sizeof(int64_t));
  a->unpack[0] = 1, a->unpack[1] = 2; /* work 0, 1 */
  a->n_send = 1, a->send_total = 1;
  a->send = halo_malloc(sizeof(halo_msg));
  a->send[0] = (halo_msg){2, 0, 1};
  a->pack = halo_malloc(sizeof(int64_t));
  a->pack[0] = 3; /* x_local[3] */
  b->scope = HALO_SCOPE_NODE;
  b->n_send = 2, b->send_total = 2;
  b->send = halo_malloc(2 * sizeof(halo_msg));
  b->send[0] = (halo_msg){0, 0, 1}, b->send[1] = (halo_msg){2, 1, 1};
  b->pack = halo_malloc(2 * sizeof(int64_t));
  b->pack[0] = 4, b->pack[1] = 5; /* work 0, work 1 */
  b->n_recv = 1, b->recv_total = 1;
  b->recv = halo_malloc(sizeof(halo_msg));
  b->recv[0] = (halo_msg){0, 0, 1};
  b->unpack = halo_malloc(sizeof(int64_t));
  b->unpack[0] = 0; /* ghost 0 */
}

static void test_check_catches(void) {
  halo_schedule s;
  make_two_phase(&s);
  CHECK_OK(halo_schedule_check(&s));

#define BREAK_AND_CHECK(mutation, text)                                                            \
  do {                                                                                             \
    make_two_phase(&s);                                                                            \
    mutation;                                                                                      \
    CHECK_ERR(halo_schedule_check(&s), HALO_ERR_INTERNAL, text);                                   \
    halo_schedule_free(&s);                                                                        \
  } while (0)

  halo_schedule_free(&s);
  BREAK_AND_CHECK(s.phase[1].pack[1] = 99, "pack index 99 out of");
  BREAK_AND_CHECK(s.phase[0].unpack[1] = -1, "unpack index -1 out of");
  BREAK_AND_CHECK(s.phase[0].unpack[1] = 1, "writes work entry 0 a second time");
  BREAK_AND_CHECK(s.phase[1].unpack[0] = 2, "writes work entry 1 a second time");
  BREAK_AND_CHECK(s.phase[0].pack[0] = 4, "phase 0 reads work entry 0 before it is written");
  BREAK_AND_CHECK(s.phase[1].send[1].offset = 0, "starts at 0, expected 1");
  BREAK_AND_CHECK(s.phase[1].send[1].peer = 3, "peer 3 outside [0, 3)");
  BREAK_AND_CHECK(s.phase[0].recv[0].count = 0, "is empty");
  BREAK_AND_CHECK(s.phase[0].recv_total = 3, "hold 2 values, buffer has 3");
  BREAK_AND_CHECK(s.phase[1].send[0].peer = 1, "copy to itself has no matching receive");
  BREAK_AND_CHECK((s.n_ghost = 2, s.phase[0].unpack[0] = 2, s.phase[0].unpack[1] = 3),
                  "ghost 1 is never received");
  BREAK_AND_CHECK(s.n_phases = 0, "0 phases");
  BREAK_AND_CHECK(s.phase[1].scope = (halo_scope)7, "scope 7");
#undef BREAK_AND_CHECK
}

static void test_matching_catches(void) {
  halo_gen g;
  halo_csr A;
  world w;
  CHECK_OK(halo_gen_parse("lap2d:6", &g));
  CHECK_OK(halo_gen_rows(&g, 0, 36, &A));
  make_world(&A, 3, &w);
  for (int r = 0; r < 3; r++) CHECK_OK(halo_schedule_build_standard(&w.pat[r], &w.sch[r]));
  CHECK_OK(halo_schedules_check_matching(w.sch, 3));
  w.sch[1].phase[0].send[0].count++;
  CHECK_ERR(halo_schedules_check_matching(w.sch, 3), HALO_ERR_INTERNAL, "expects another message");
  w.sch[1].phase[0].send[0].count--;
  w.sch[2].phase[0].scope = HALO_SCOPE_NODE;
  CHECK_ERR(halo_schedules_check_matching(w.sch, 3), HALO_ERR_INTERNAL, "another scope");
  free_world(&w);
  halo_csr_free(&A);
}

/* The reverse of the two-phase schedule, field by field: phase k is the
 * swap of phase 1-k. */
static void test_reverse_fields(void) {
  halo_schedule s, r, rr;
  make_two_phase(&s);
  s.strategy = HALO_STRATEGY_3STEP, s.message_cap_used = 64;
  CHECK_OK(halo_schedule_reverse(&s, &r));
  CHECK(r.add == 1 && s.add == 0 && r.n_phases == 2 && r.rank == 0 && r.size == 3);
  CHECK(r.n_local == 1 && r.n_ghost == 4 && r.n_work == 2);
  CHECK(r.strategy == HALO_STRATEGY_3STEP && r.message_cap_used == 64);
  for (int k = 0; k < 2; k++) {
    const halo_phase *f = &s.phase[1 - k], *g = &r.phase[k];
    CHECK(g->scope == f->scope);
    CHECK(g->n_send == f->n_recv && g->send_total == f->recv_total);
    CHECK(g->n_recv == f->n_send && g->recv_total == f->send_total);
    for (int i = 0; i < g->n_send; i++)
      CHECK(g->send[i].peer == f->recv[i].peer && g->send[i].offset == f->recv[i].offset &&
            g->send[i].count == f->recv[i].count);
    for (int i = 0; i < g->n_recv; i++)
      CHECK(g->recv[i].peer == f->send[i].peer && g->recv[i].offset == f->send[i].offset &&
            g->recv[i].count == f->send[i].count);
    for (int64_t i = 0; i < g->send_total; i++) CHECK(g->pack[i] == f->unpack[i]);
    for (int64_t i = 0; i < g->recv_total; i++) CHECK(g->unpack[i] == f->pack[i]);
  }
  /* the copy to itself of phase 1 is now phase 0's first send and receive */
  CHECK(r.phase[0].send[0].peer == 0 && r.phase[0].recv[0].peer == 0);
  CHECK_OK(halo_schedule_check(&r));
  /* the flat form carries the add flag */
  halo_vec v = {0};
  int64_t pos = 0;
  CHECK_OK(halo_schedule_pack(&r, &v));
  CHECK_OK(halo_schedule_unpack(v.v, v.n, &pos, &rr));
  CHECK(pos == v.n && rr.add == 1 && rr.n_local == 1 && rr.phase[1].unpack[0] == 3);
  CHECK_OK(halo_schedule_check(&rr));
  halo_schedule_free(&rr);
  halo_vec_free(&v);
  /* a reversed schedule is not reversed again */
  CHECK_ERR(halo_schedule_reverse(&r, &rr), HALO_ERR_INTERNAL, "already reversed");
  CHECK_ERR(halo_schedule_reverse(&s, &s), HALO_ERR_INVALID_ARG, "cannot replace");
  halo_schedule_free(&r);
  halo_schedule_free(&s);
}

/* The rules of add schedules, on the reverse of the two-phase schedule:
 * phase 0 adds into work 0 (from itself) and work 1 (from rank 2), phase 1
 * reads both and adds into entry 3 (from rank 2). */
static void test_check_add(void) {
  halo_schedule s, r;
#define REVERSED(mutation)                                                                         \
  do {                                                                                             \
    make_two_phase(&s);                                                                            \
    CHECK_OK(halo_schedule_reverse(&s, &r));                                                       \
    halo_schedule_free(&s);                                                                        \
    mutation;                                                                                      \
  } while (0)
#define BREAK_AND_CHECK(mutation, text)                                                            \
  do {                                                                                             \
    REVERSED(mutation);                                                                            \
    CHECK_ERR(halo_schedule_check(&r), HALO_ERR_INTERNAL, text);                                   \
    halo_schedule_free(&r);                                                                        \
  } while (0)

  /* an entry may be added into several times, or never (owner entries 0-2
   * always; here work 1 too, which then reads as zero) */
  REVERSED(r.phase[0].unpack[1] = 4);
  CHECK_OK(halo_schedule_check(&r));
  halo_schedule_free(&r);
  BREAK_AND_CHECK(r.phase[1].pack[1] = 1, "phase 1 reads work entry 0 a second time");
  BREAK_AND_CHECK(
      r.phase[0].pack[0] = 2,
      "phase 0 reads work entry 1, which phase 0 adds into: reads come after every add");
  BREAK_AND_CHECK((r.phase[1].unpack[0] = 5, r.phase[0].pack[0] = 2),
                  "phase 0 reads work entry 1, which phase 1 adds into");
  BREAK_AND_CHECK(r.phase[1].unpack[0] = 6, "unpack index 6 out of [0, 6)");
  BREAK_AND_CHECK(r.phase[0].pack[0] = 3, "pack index 3 out of [0, 3)");
  BREAK_AND_CHECK(r.add = 2, "add = 2");
  BREAK_AND_CHECK(r.phase[0].recv[0].peer = 1, "copy to itself has no matching receive");
  BREAK_AND_CHECK(r.phase[1].send[0].offset = 1, "starts at 1, expected 0");
  /* the same corruption in a schedule that writes is still an error */
  make_two_phase(&s);
  s.phase[0].unpack[1] = 1;
  CHECK_ERR(halo_schedule_check(&s), HALO_ERR_INTERNAL, "writes work entry 0 a second time");
  halo_schedule_free(&s);
#undef BREAK_AND_CHECK
#undef REVERSED
}

/* The reverses of every strategy's schedules (built by the simulator on
 * virtual nodes) pass the checks and match; a corrupted one is caught. */
static void test_reverse_strategies(const char *spec, int P, int K) {
  halo_gen g;
  halo_csr A;
  halo_sim sim;
  int64_t N, *rb = malloc((size_t)(P + 1) * sizeof *rb);
  CHECK_OK(halo_gen_parse(spec, &g));
  CHECK_OK(halo_gen_size(&g, &N, NULL));
  CHECK_OK(halo_gen_rows(&g, 0, N, &A));
  CHECK_OK(halo_partition_rows(N, P, rb));
  CHECK_OK(halo_sim_create(&A, P, rb, NULL, &sim));
  halo_schedule *s = calloc((size_t)P, sizeof *s), *r = calloc((size_t)P, sizeof *r);
  for (int t = 0; t < HALO_N_STRATEGIES; t++) {
    halo_plan_options o = halo_plan_options_default();
    o.strategy = (halo_strategy)t, o.ranks_per_node = K, o.message_cap = 64;
    CHECK_OK(halo_sim_schedules(sim, &o, s));
    for (int q = 0; q < P; q++) {
      CHECK_OK(halo_schedule_reverse(&s[q], &r[q]));
      CHECK_MSG(halo_schedule_check(&r[q]) == HALO_SUCCESS, "%s, %s: reverse of rank %d: %s", spec,
                halo_strategy_name(o.strategy), q, halo_last_error());
      CHECK(r[q].n_phases == s[q].n_phases && r[q].add == 1);
      for (int k = 0; k < s[q].n_phases; k++)
        CHECK(r[q].phase[k].scope == s[q].phase[s[q].n_phases - 1 - k].scope);
    }
    CHECK_OK(halo_schedules_check_matching(r, P));
    /* mixed flags and one changed count do not match */
    r[P - 1].add = 0;
    CHECK_ERR(halo_schedules_check_matching(r, P), HALO_ERR_INTERNAL, "writes its receives");
    r[P - 1].add = 1;
    int q = 0;
    while (q < P && r[q].phase[0].n_send == 0) q++;
    CHECK(q < P);
    r[q].phase[0].send[0].count++;
    CHECK_ERR(halo_schedules_check_matching(r, P), HALO_ERR_INTERNAL, "expects another message");
    for (q = 0; q < P; q++) halo_schedule_free(&s[q]), halo_schedule_free(&r[q]);
  }
  free(r), free(s), free(rb);
  halo_sim_destroy(&sim);
  halo_csr_free(&A);
}

int main(void) {
  test_pattern_and_standard("lap2d:10", 1);
  test_pattern_and_standard("lap2d:10", 4);
  test_pattern_and_standard("lap3d27:6", 7);
  test_pattern_and_standard("irregular:400,5", 8);
  test_pattern_and_standard("lap2d:3", 16); /* more ranks than rows */
  test_check_catches();
  test_matching_catches();
  test_reverse_fields();
  test_check_add();
  test_reverse_strategies("lap2d:10", 6, 2);
  test_reverse_strategies("irregular:300,4", 7, 3);
  return 0;
}
