/* Remembered choices of strategy AUTO (issue 42 item 4): a plan on a new
 * communicator (no choice kept in memory) takes the choice its wisdom file
 * holds for its key with no trial call (counted); another pattern or other
 * machine parameters miss the key; a truncated, corrupt, other-version,
 * oversized or hostile file is ignored and the plan's description says why;
 * ranks that name different files are refused on every rank; processes
 * writing the file at once leave a readable file. Every plan's ghosts are
 * the standard exchange's, bit for bit. Host memory. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "halo_impl.h"
#include "interface/plan.h"
#include "model/wisdom.h"
#include "verify.h"

static int rank, P;

typedef struct {
  halo_csr rows;
  int64_t *rb;
} local_rows;

static void rows_of(MPI_Comm comm, const char *spec, local_rows *r) {
  halo_gen gen;
  CHECK_OK(halo_gen_parse(spec, &gen));
  CHECK_OK(halo_gen_distributed(comm, &gen, HALO_PARTITION_NNZ, NULL, &r->rb, &r->rows));
}

/* A plan of the rows on comm with options o that serves n exchanges: its description, its
 * ghosts checked against the standard exchange's; the trial calls it made. */
static int64_t plan_uses(MPI_Comm comm, const local_rows *r, const halo_plan_options *o,
                         int n_uses, char *text, size_t len, halo_candidate *chosen) {
  halo_matrix A;
  halo_plan plan, std;
  const int64_t *rb = r->rb;
  CHECK_OK(halo_matrix_create_csr(comm, rb[rank], rb[rank + 1], rb[rank], rb[rank + 1],
                                  r->rows.row_ptr, r->rows.col_ids, r->rows.values,
                                  HALO_MEMORY_HOST, &A));
  int64_t n = rb[rank + 1] - rb[rank], ng;
  CHECK_OK(halo_matrix_get_local_sizes(A, NULL, NULL, &ng));
  double *x = malloc((size_t)(n + 1) * sizeof *x), *g = malloc((size_t)(ng + 1) * sizeof *g);
  double *g_std = malloc((size_t)(ng + 1) * sizeof *g);
  for (int64_t i = 0; i < n; i++) x[i] = test_x(rb[rank] + i);
  halo_plan_options so = halo_plan_options_default();
  so.strategy = HALO_STRATEGY_STANDARD;
  so.transport = HALO_TRANSPORT_HOST;
  CHECK_OK(halo_plan_create(A, &so, &std));
  CHECK_OK(halo_exchange_begin(std, x, g_std));
  CHECK_OK(halo_exchange_end(std));
  halo_plan_destroy(&std);
  const int64_t t0 = halo_debug_trial_calls();
  CHECK_OK(halo_plan_create(A, o, &plan));
  const int64_t calls = halo_debug_trial_calls() - t0;
  CHECK_OK(halo_plan_describe(plan, text, len));
  halo_candidate c[64];
  int n_c = 0, best = -1;
  CHECK_OK(halo_plan_get_candidates(plan, 64, c, &n_c, &best));
  CHECK(n_c > 0 && best >= 0 && best < n_c && n_c <= 64);
  *chosen = c[best];
  for (int use = 0; use < n_uses; use++) {
    for (int64_t k = 0; k < ng; k++) g[k] = -1.0;
    CHECK_OK(halo_exchange_begin(plan, x, g));
    CHECK_OK(halo_exchange_end(plan));
    CHECK_MSG(ng == 0 || memcmp(g, g_std, (size_t)ng * sizeof *g) == 0,
              "ghosts differ from standard's: %.600s", text);
  }
  halo_plan_destroy(&plan);
  halo_matrix_destroy(&A);
  free(x), free(g), free(g_std);
  return calls;
}

/* The same, one exchange. */
static int64_t plan_once(MPI_Comm comm, const local_rows *r, const halo_plan_options *o,
                         char *text, size_t len, halo_candidate *chosen) {
  return plan_uses(comm, r, o, 1, text, len, chosen);
}

/* On rank 0, the file's text is text. */
static void write_file(MPI_Comm comm, const char *path, const char *text) {
  if (rank == 0) {
    FILE *f = fopen(path, "w");
    CHECK(f && fputs(text, f) >= 0 && fclose(f) == 0);
  }
  MPI_Barrier(comm);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm world = MPI_COMM_WORLD;
  MPI_Comm_rank(world, &rank);
  MPI_Comm_size(world, &P);
  char dir[64] = "/tmp/halo_test_wisdom_XXXXXX", path[128], text[4096];
  if (rank == 0) CHECK(mkdtemp(dir) != NULL);
  MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, world);
  snprintf(path, sizeof path, "%s/wisdom", dir);
  local_rows lap, irr;
  rows_of(world, "lap3d27:8", &lap);
  rows_of(world, "irregular:2000,5", &irr);
  halo_plan_options o = halo_plan_options_default();
  o.ranks_per_node = 1;
  o.params = "lassen";
  o.autotune = 2;      /* every candidate timed: the first plan makes trial calls */
  o.expected_uses = 1; /* what plan_once serves: its measured uses keep the choice */
  o.wisdom = path;
  halo_candidate first, again;

  /* the first plan chooses (timing candidates on several ranks) and writes the file */
  MPI_Comm c1;
  MPI_Comm_dup(world, &c1);
  const int64_t calls1 = plan_once(c1, &lap, &o, text, sizeof text, &first);
  CHECK_MSG(!strstr(text, "remembered"), "a first plan remembered: %.600s", text);
  CHECK_MSG(calls1 > 0, "the first plan timed nothing: %.600s", text);
  if (rank == 0) {
    FILE *f = fopen(path, "r");
    char line[64] = "";
    CHECK_MSG(f && fgets(line, sizeof line, f) && strcmp(line, "halo-wisdom 1\n") == 0,
              "the wisdom file starts '%s'", line);
    if (f) fclose(f);
  }
  /* a new communicator (nothing kept in memory): the file's choice, no trial call */
  MPI_Comm c2;
  MPI_Comm_dup(world, &c2);
  const int64_t calls2 = plan_once(c2, &lap, &o, text, sizeof text, &again);
  CHECK_MSG(calls2 == 0, "%lld trial calls with wisdom: %.600s", (long long)calls2, text);
  CHECK_MSG(strstr(text, "remembered in the wisdom file"), "not remembered: %.600s", text);
  CHECK(again.strategy == first.strategy && again.transport == first.transport &&
        again.message_cap == first.message_cap);
  /* another pattern, other machine parameters: the key misses */
  MPI_Comm c3;
  MPI_Comm_dup(world, &c3);
  plan_once(c3, &irr, &o, text, sizeof text, &again);
  /* (on one rank neither matrix has a message: one signature) */
  CHECK_MSG(P == 1 || !strstr(text, "remembered"), "another pattern remembered: %.600s", text);
  o.params = "h200";
  plan_once(c3, &lap, &o, text, sizeof text, &again);
  CHECK_MSG(!strstr(text, "remembered"), "other parameters remembered: %.600s", text);
  o.params = "lassen";
  /* bad files: ignored, the description says why, the plan is made by the model */
  const struct {
    const char *text, *why;
  } bad[] = {
      {"halo-wisdom 2\n", "another version"},
      {"", "line 1: not 'halo-wisdom 1'"},
      {"halo-wisdom 1\n0123456789abcdef standard\n", "line 2: not KEY"},
      {"halo-wisdom 1\n0123456789abcdef nearest host 16384 100 0\n", "unknown strategy 'nearest'"},
      {"halo-wisdom 1\n0123456789abcdef standard pigeon 16384 100 0\n",
       "unknown transport 'pigeon'"},
      {"halo-wisdom 1\n0123456789abcdef standard host 0 100 0\n", "out of range"},
      {"halo-wisdom 1\n0123456789abcdef standard host 16384 100 -1\n", "out of range"},
      {"halo-wisdom 1\n0123456789abcdef standard host 16384 100 0 extra\n", "line 2: not KEY"},
      {"halo-wisdom 1\n0123456789abcdef standard host 16384 100\n", "line 2: not KEY"},
      {"halo-wisdom 1\nzz\n", "line 2"},
  };
  for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
    MPI_Comm cb;
    MPI_Comm_dup(world, &cb);
    write_file(world, path, bad[b].text);
    plan_once(cb, &lap, &o, text, sizeof text, &again);
    CHECK_MSG(strstr(text, "ignored") && strstr(text, bad[b].why), "bad file %zu: %.600s", b,
              text);
    MPI_Comm_free(&cb);
  }
  { /* a line past the bound, and a file past its size */
    char *big = malloc(HALO_WISDOM_MAX_BYTES + 64);
    snprintf(big, 64, "halo-wisdom 1\n");
    memset(big + 14, '7', HALO_WISDOM_MAX_LINE + 5);
    big[14 + HALO_WISDOM_MAX_LINE + 5] = '\0';
    MPI_Comm cb;
    MPI_Comm_dup(world, &cb);
    write_file(world, path, big);
    plan_once(cb, &lap, &o, text, sizeof text, &again);
    CHECK_MSG(strstr(text, "longer than"), "a long line: %.600s", text);
    MPI_Comm_free(&cb);
    MPI_Comm_dup(world, &cb); /* a new context: nothing kept in memory */
    memset(big + 14, '\n', HALO_WISDOM_MAX_BYTES + 10);
    big[14 + HALO_WISDOM_MAX_BYTES + 10] = '\0';
    write_file(world, path, big);
    plan_once(cb, &lap, &o, text, sizeof text, &again);
    CHECK_MSG(strstr(text, "bytes, more than"), "a large file: %.600s", text);
    MPI_Comm_free(&cb);
    free(big);
  }
  /* the ignored file was replaced by the last plan's choice: readable again */
  {
    MPI_Comm cb;
    MPI_Comm_dup(world, &cb);
    write_file(world, path, "halo-wisdom 1\n");
    plan_once(cb, &lap, &o, text, sizeof text, &first);
    MPI_Comm_free(&cb);
    MPI_Comm_dup(world, &cb);
    plan_once(cb, &lap, &o, text, sizeof text, &again);
    CHECK_MSG(strstr(text, "remembered"), "not remembered after a rewrite: %.600s", text);
    MPI_Comm_free(&cb);
  }
  /* measured uses replace the expected ones: a plan that served 40 exchanges makes the next
   * plan of its key choose again for 40 (its choice was for 1); the one after takes it */
  {
    write_file(world, path, "halo-wisdom 1\n");
    MPI_Comm ca, cb2, cc;
    MPI_Comm_dup(world, &ca);
    CHECK(plan_uses(ca, &lap, &o, 40, text, sizeof text, &first) > 0);
    halo_wisdom_entry e;
    int found = 0;
    char why[256];
    uint64_t key = 0;
    { /* the key, as the plans make it */
      halo_matrix A;
      halo_plan plan;
      const int64_t *rb = lap.rb;
      CHECK_OK(halo_matrix_create_csr(ca, rb[rank], rb[rank + 1], rb[rank], rb[rank + 1],
                                      lap.rows.row_ptr, lap.rows.col_ids, lap.rows.values,
                                      HALO_MEMORY_HOST, &A));
      CHECK_OK(halo_plan_create(A, &o, &plan)); /* in memory: no trial, no write */
      key = plan->wisdom_key;
      halo_plan_destroy(&plan); /* measured 0 uses: nothing written */
      halo_matrix_destroy(&A);
    }
    CHECK_OK(halo_wisdom_find(world, path, key, &e, &found, why, sizeof why));
    CHECK_MSG(found && e.uses == 1 && e.measured == 40, "found %d uses %lld measured %lld %s",
              found, (long long)e.uses, (long long)e.measured, why);
    MPI_Comm_dup(world, &cb2);
    CHECK(plan_uses(cb2, &lap, &o, 40, text, sizeof text, &again) > 0);
    CHECK_MSG(strstr(text, "chosen again") && strstr(text, "its plans served 40"),
              "measured uses did not replace the expected: %.600s", text);
    CHECK_OK(halo_wisdom_find(world, path, key, &e, &found, why, sizeof why));
    CHECK_MSG(found && e.uses == 40 && e.measured == 40, "found %d uses %lld measured %lld %s",
              found, (long long)e.uses, (long long)e.measured, why);
    MPI_Comm_dup(world, &cc);
    CHECK(plan_uses(cc, &lap, &o, 40, text, sizeof text, &again) == 0);
    CHECK_MSG(strstr(text, "remembered") && strstr(text, "for 40 uses"), "%.600s", text);
    MPI_Comm_free(&ca), MPI_Comm_free(&cb2), MPI_Comm_free(&cc);
  }
  /* ranks that name different files: refused on every rank */
  if (P > 1) {
    halo_plan_options d = o;
    char other[160];
    snprintf(other, sizeof other, "%s/other", dir);
    if (rank == P - 1) d.wisdom = other;
    halo_matrix A;
    const int64_t *rb = lap.rb;
    CHECK_OK(halo_matrix_create_csr(world, rb[rank], rb[rank + 1], rb[rank], rb[rank + 1],
                                    lap.rows.row_ptr, lap.rows.col_ids, lap.rows.values,
                                    HALO_MEMORY_HOST, &A));
    halo_plan plan;
    CHECK_ERR(halo_plan_create(A, &d, &plan), HALO_ERR_INCONSISTENT, "wisdom names another file");
    halo_matrix_destroy(&A);
  }
  /* every process writes at once, 20 times: the file stays whole, with one key per writer
   * that wrote last (a key's newer entry wins; entries of a writer whose rename lost go) */
  for (int it = 0; it < 20; it++) {
    const halo_wisdom_entry e = {HALO_STRATEGY_3STEP, HALO_TRANSPORT_HOST, 4096, 1 + it, 0};
    CHECK_OK(halo_wisdom_store(0, path, UINT64_C(0x1000) + (uint64_t)rank, &e));
  }
  MPI_Barrier(world);
  {
    halo_wisdom_entry e;
    int found = 0;
    char why[256];
    CHECK_OK(halo_wisdom_find(world, path, UINT64_C(0x1000), &e, &found, why, sizeof why));
    CHECK_MSG(why[0] == '\0', "after writers at once: %s", why);
    int any = found, all;
    for (int r = 1; r < P; r++) {
      CHECK_OK(halo_wisdom_find(world, path, UINT64_C(0x1000) + (uint64_t)r, &e, &found, why,
                                sizeof why));
      CHECK_MSG(why[0] == '\0', "after writers at once: %s", why);
      any |= found;
      if (found) CHECK(e.strategy == HALO_STRATEGY_3STEP && e.uses >= 1 && e.uses <= 20);
    }
    MPI_Allreduce(&any, &all, 1, MPI_INT, MPI_MIN, world);
    CHECK_MSG(all, "no writer's key in the file");
  }
  MPI_Comm_free(&c1);
  MPI_Comm_free(&c2);
  MPI_Comm_free(&c3);
  MPI_Barrier(world);
  if (rank == 0) {
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
  }
  halo_csr_free(&lap.rows), halo_csr_free(&irr.rows);
  halo_io_free(lap.rb), halo_io_free(irr.rb);
  MPI_Finalize();
  return 0;
}
