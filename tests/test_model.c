/* Unit tests of the performance model, without MPI: the built-in Lassen set
 * against the paper's table, parameter files (exact round trip, every kind
 * of error with the key in its message), the modeled time of hand-built
 * schedules against formulas written out with the Lassen numbers for every
 * transport, and the simulator's model (transport resolution, helpers,
 * errors). */
#include "halo/io.h"
#include "halo/sim.h"
#include "halo_impl.h"
#include "model/model.h"
#include "model/simulate.h"
#include "test_util.h"

/* relative agreement (sums may be taken in another order) */
#define CHECK_NEAR(got, want)                                                                      \
  do {                                                                                             \
    double g_ = (got), w_ = (want);                                                                \
    CHECK_MSG(fabs(g_ - w_) <= 1e-12 * fabs(w_) + 1e-300, "%s = %.17g, expected %.17g", #got, g_,  \
              w_);                                                                                 \
  } while (0)

#define SAME_BITS(a, b) (memcmp(&(a), &(b), sizeof(a)) == 0)

/* ---- parameter sets ------------------------------------------------------- */

static void check_postal(halo_postal m, double alpha, double beta) {
  CHECK_MSG(m.alpha == alpha && m.beta == beta, "(%g, %g), expected (%g, %g)", m.alpha, m.beta,
            alpha, beta);
}

static void test_lassen(void) {
  halo_params p;
  CHECK_OK(halo_params_builtin("lassen", &p));
  CHECK(strcmp(p.name, "lassen") == 0);
  CHECK(p.sockets_per_node == 2 && p.short_max == 256 && p.eager_max == 16384);
  /* inter-CPU: on-socket, on-node, off-node */
  check_postal(p.cpu[HALO_PROTO_SHORT][HALO_LOC_ON_SOCKET], 3.67e-07, 1.32e-10);
  check_postal(p.cpu[HALO_PROTO_SHORT][HALO_LOC_ON_NODE], 9.25e-07, 1.19e-09);
  check_postal(p.cpu[HALO_PROTO_SHORT][HALO_LOC_OFF_NODE], 1.89e-06, 6.88e-10);
  check_postal(p.cpu[HALO_PROTO_EAGER][HALO_LOC_ON_SOCKET], 4.61e-07, 7.12e-11);
  check_postal(p.cpu[HALO_PROTO_EAGER][HALO_LOC_ON_NODE], 1.17e-06, 2.18e-10);
  check_postal(p.cpu[HALO_PROTO_EAGER][HALO_LOC_OFF_NODE], 2.44e-06, 3.79e-10);
  check_postal(p.cpu[HALO_PROTO_RENDEZVOUS][HALO_LOC_ON_SOCKET], 3.15e-06, 3.40e-11);
  check_postal(p.cpu[HALO_PROTO_RENDEZVOUS][HALO_LOC_ON_NODE], 6.77e-06, 1.49e-10);
  check_postal(p.cpu[HALO_PROTO_RENDEZVOUS][HALO_LOC_OFF_NODE], 7.76e-06, 7.97e-11);
  /* inter-GPU; short mirrors eager */
  for (int q = HALO_PROTO_SHORT; q <= HALO_PROTO_EAGER; q++) {
    check_postal(p.gpu[q][HALO_LOC_ON_SOCKET], 1.87e-06, 5.79e-11);
    check_postal(p.gpu[q][HALO_LOC_ON_NODE], 2.02e-05, 2.15e-10);
    check_postal(p.gpu[q][HALO_LOC_OFF_NODE], 8.95e-06, 1.72e-10);
  }
  check_postal(p.gpu[HALO_PROTO_RENDEZVOUS][HALO_LOC_ON_SOCKET], 1.82e-05, 1.46e-11);
  check_postal(p.gpu[HALO_PROTO_RENDEZVOUS][HALO_LOC_ON_NODE], 1.93e-05, 2.39e-11);
  check_postal(p.gpu[HALO_PROTO_RENDEZVOUS][HALO_LOC_OFF_NODE], 1.10e-05, 1.72e-10);
  /* cudaMemcpyAsync, 1 and 4 processes */
  check_postal(p.h2d[0], 1.30e-05, 1.85e-11);
  check_postal(p.d2h[0], 1.27e-05, 1.96e-11);
  check_postal(p.h2d[1], 1.52e-05, 5.52e-10);
  check_postal(p.d2h[1], 1.47e-05, 1.50e-10);
  CHECK(p.injection_beta == 4.19e-11);
  /* protocols by size, and one message */
  CHECK(halo_params_protocol(&p, 0) == HALO_PROTO_SHORT);
  CHECK(halo_params_protocol(&p, 255) == HALO_PROTO_SHORT);
  CHECK(halo_params_protocol(&p, 256) == HALO_PROTO_EAGER);
  CHECK(halo_params_protocol(&p, 16383) == HALO_PROTO_EAGER);
  CHECK(halo_params_protocol(&p, 16384) == HALO_PROTO_RENDEZVOUS);
  CHECK_NEAR(halo_params_message(&p, 0, HALO_LOC_OFF_NODE, 1000), 2.44e-06 + 3.79e-10 * 1000);
  CHECK_NEAR(halo_params_message(&p, 1, HALO_LOC_ON_NODE, 100), 2.02e-05 + 2.15e-10 * 100);
  CHECK_ERR(halo_params_builtin("summit", &p), HALO_ERR_INVALID_ARG,
            "'summit' (built-in: lassen, h200)");
}

/* The text of a parameter set (halo_params_write to a temporary file). */
static char *params_text(const halo_params *p) {
  FILE *f = tmpfile();
  CHECK(f != NULL);
  CHECK_OK(halo_params_write(p, f));
  long n = ftell(f);
  CHECK(n > 0);
  rewind(f);
  char *text = malloc((size_t)n + 1);
  CHECK(fread(text, 1, (size_t)n, f) == (size_t)n);
  text[n] = '\0';
  fclose(f);
  return text;
}

static void check_same_params(const halo_params *a, const halo_params *b) {
  CHECK(strcmp(a->name, b->name) == 0);
  CHECK(a->sockets_per_node == b->sockets_per_node);
  CHECK(a->short_max == b->short_max && a->eager_max == b->eager_max);
  for (int q = 0; q < HALO_N_PROTO; q++)
    for (int l = 0; l < HALO_N_LOC; l++) {
      CHECK_MSG(SAME_BITS(a->cpu[q][l], b->cpu[q][l]), "cpu[%d][%d] differs", q, l);
      CHECK_MSG(SAME_BITS(a->gpu[q][l], b->gpu[q][l]), "gpu[%d][%d] differs", q, l);
    }
  for (int c = 0; c < 2; c++) {
    CHECK_MSG(SAME_BITS(a->h2d[c], b->h2d[c]), "h2d[%d] differs", c);
    CHECK_MSG(SAME_BITS(a->d2h[c], b->d2h[c]), "d2h[%d] differs", c);
  }
  CHECK(SAME_BITS(a->injection_beta, b->injection_beta));
  CHECK(SAME_BITS(a->staged_alpha, b->staged_alpha));
  CHECK(a->have_ipc == b->have_ipc);
  if (a->have_ipc) CHECK(SAME_BITS(a->ipc, b->ipc));
  CHECK(a->have_own[HALO_TRANSPORT_NVSHMEM] == b->have_own[HALO_TRANSPORT_NVSHMEM]);
  if (a->have_own[HALO_TRANSPORT_NVSHMEM])
    CHECK(SAME_BITS(a->own[HALO_TRANSPORT_NVSHMEM], b->own[HALO_TRANSPORT_NVSHMEM]));
  CHECK(a->have_own[HALO_TRANSPORT_RMA] == b->have_own[HALO_TRANSPORT_RMA]);
  if (a->have_own[HALO_TRANSPORT_RMA])
    CHECK(SAME_BITS(a->own[HALO_TRANSPORT_RMA], b->own[HALO_TRANSPORT_RMA]));
}

static char *edit(const char *key, const char *line);

static void test_round_trip(void) {
  halo_params p, q;
  CHECK_OK(halo_params_builtin("lassen", &p));
  char *text = params_text(&p);
  CHECK_OK(halo_params_parse(text, "lassen.params", &q));
  check_same_params(&p, &q);
  free(text);
  /* values that need all 17 digits, a subnormal, zero */
  snprintf(p.name, sizeof p.name, "odd-values_1.0");
  p.sockets_per_node = 3;
  p.short_max = 0;
  p.eager_max = 1;
  p.cpu[HALO_PROTO_SHORT][HALO_LOC_ON_SOCKET].alpha = 0.1;
  p.cpu[HALO_PROTO_EAGER][HALO_LOC_ON_NODE].beta = 1.0 / 3.0;
  p.gpu[HALO_PROTO_RENDEZVOUS][HALO_LOC_OFF_NODE].alpha = 5e-324;
  p.gpu[HALO_PROTO_EAGER][HALO_LOC_ON_SOCKET].beta = 0.0;
  p.gpu[HALO_PROTO_SHORT][HALO_LOC_ON_SOCKET].beta = 0.0;
  p.d2h[1].beta = 2.2250738585072014e-308 * 3.0 / 7.0;
  p.injection_beta = 1.7976931348623157e308;
  p.staged_alpha = 1.1e-5;
  p.have_ipc = 1;
  p.ipc = (halo_postal){0.7, 1e-300};
  p.have_own[HALO_TRANSPORT_NVSHMEM] = 1;
  p.own[HALO_TRANSPORT_NVSHMEM] = (halo_postal){1.9e-5, 1.0 / 7.0 * 1e-11};
  p.have_own[HALO_TRANSPORT_RMA] = 1;
  p.own[HALO_TRANSPORT_RMA] = (halo_postal){2.5e-6, 3.0 / 7.0 * 1e-10};
  text = params_text(&p);
  CHECK(strstr(text, "staged.alpha = ") && strstr(text, "ipc.alpha = ") &&
        strstr(text, "ipc.beta = ") && strstr(text, "nvshmem.alpha = ") &&
        strstr(text, "nvshmem.beta = ") && strstr(text, "rma.alpha = ") &&
        strstr(text, "rma.beta = "));
  CHECK_OK(halo_params_parse(text, "odd.params", &q));
  check_same_params(&p, &q);
  /* and through a file, by halo_params_read and halo_params_load */
  const char *path = "test_model.params";
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  fputs(text, f);
  fclose(f);
  memset(&q, 0, sizeof q);
  CHECK_OK(halo_params_read(path, &q));
  check_same_params(&p, &q);
  memset(&q, 0, sizeof q);
  CHECK_OK(halo_params_load(path, &q));
  check_same_params(&p, &q);
  CHECK_OK(halo_params_load("lassen", &q));
  CHECK(strcmp(q.name, "lassen") == 0);
  remove(path);
  free(text);
  /* the optional keys: lassen has none of ipc.* and staged.alpha = 0 */
  CHECK_OK(halo_params_builtin("lassen", &p));
  CHECK(p.staged_alpha == 0.0 && !p.have_ipc);
  text = params_text(&p);
  CHECK(strstr(text, "staged.alpha = 0\n") && !strstr(text, "ipc.") && !strstr(text, "nvshmem.") &&
        !strstr(text, "rma."));
  CHECK(!p.have_own[HALO_TRANSPORT_NVSHMEM] && !p.have_own[HALO_TRANSPORT_RMA]);
  free(text);
  char *no_staged = edit("staged.alpha", NULL);
  CHECK_OK(halo_params_parse(no_staged, "no-staged.params", &q));
  CHECK(q.staged_alpha == 0.0 && !q.have_ipc);
  free(no_staged);
  /* comments, blank lines, spaces and CRLF are fine */
  CHECK_OK(halo_params_builtin("lassen", &p));
  text = params_text(&p);
  size_t n = strlen(text);
  char *loose = malloc(3 * n + 64);
  size_t m = 0;
  m += (size_t)sprintf(loose, "\n   # a comment\n\n");
  for (size_t i = 0; i < n; i++) {
    if (text[i] == '=') {
      m += (size_t)sprintf(loose + m, "  =\t ");
    } else if (text[i] == '\n') {
      m += (size_t)sprintf(loose + m, "   # trailing comment\r\n");
    } else {
      loose[m++] = text[i];
    }
  }
  loose[m] = '\0';
  CHECK_OK(halo_params_parse(loose, "loose.params", &q));
  check_same_params(&p, &q);
  free(loose);
  free(text);
}

/* The lassen text with the line of key replaced by line (NULL: removed). */
static char *edit(const char *key, const char *line) {
  halo_params p;
  CHECK_OK(halo_params_builtin("lassen", &p));
  char *text = params_text(&p);
  char *out = malloc(strlen(text) + (line ? strlen(line) : 0) + 2);
  size_t klen = strlen(key), m = 0;
  int found = 0;
  for (const char *s = text; *s;) {
    const char *nl = strchr(s, '\n');
    size_t len = nl ? (size_t)(nl - s) + 1 : strlen(s);
    if (strncmp(s, key, klen) == 0 && s[klen] == ' ') {
      found = 1;
      if (line) m += (size_t)sprintf(out + m, "%s\n", line);
    } else {
      memcpy(out + m, s, len);
      m += len;
    }
    s += len;
  }
  out[m] = '\0';
  CHECK_MSG(found, "no line of key %s", key);
  free(text);
  return out;
}

/* Parsing the edited text fails with HALO_ERR_FORMAT, and the message holds
 * each of the texts. */
static void expect_format_error(char *text, const char *t1, const char *t2) {
  halo_params p;
  memset(&p, 0, sizeof p);
  CHECK_ERR(halo_params_parse(text, "bad.params", &p), HALO_ERR_FORMAT, t1);
  CHECK_MSG(strstr(halo_last_error(), t2), "'%s' not in '%s'", t2, halo_last_error());
  CHECK(p.name[0] == '\0'); /* untouched on failure */
  free(text);
}

static void test_errors(void) {
  /* the lines of the written file: 2 comment lines, then name (3),
   * sockets_per_node (4), short_max (5), eager_max (6), ... */
  expect_format_error(edit("cpu.short.on_socket.beta", "cpu.short.off_socket.beta = 1e-10"),
                      "bad.params:", "unknown key 'cpu.short.off_socket.beta'");
  expect_format_error(edit("name", "nmae = lassen"), "bad.params:3: unknown key 'nmae'", "nmae");
  expect_format_error(edit("eager_max", "eager_max = 16384\nshort_max = 128"),
                      "bad.params:7: duplicate key 'short_max'", "line 5");
  expect_format_error(edit("gpu.eager.on_node.beta", NULL), "missing key",
                      "gpu.eager.on_node.beta");
  expect_format_error(edit("copy.h2d.4.alpha", "copy.h2d.4.alpha = 1.2.3"), "copy.h2d.4.alpha",
                      "not a number");
  expect_format_error(edit("copy.d2h.1.beta", "copy.d2h.1.beta = 2e-11 s"), "copy.d2h.1.beta",
                      "not a number");
  expect_format_error(edit("short_max", "short_max = 2.5e2"), "short_max", "not an integer");
  expect_format_error(edit("cpu.eager.on_node.beta", "cpu.eager.on_node.beta = -2.18e-10"),
                      "cpu.eager.on_node.beta", "negative");
  expect_format_error(edit("eager_max", "eager_max = -1"), "eager_max", "negative");
  expect_format_error(edit("injection.beta", "injection.beta = inf"), "injection.beta",
                      "not a finite number");
  expect_format_error(edit("gpu.rendezvous.off_node.alpha", "gpu.rendezvous.off_node.alpha = nan"),
                      "gpu.rendezvous.off_node.alpha", "not a finite number");
  expect_format_error(edit("short_max", "short_max = 16384"), "bad.params:5: short_max = 16384",
                      "eager_max = 16384");
  expect_format_error(edit("sockets_per_node", "sockets_per_node = 0"),
                      "bad.params:4: sockets_per_node", "at least 1");
  expect_format_error(edit("name", "name = two words"), "bad.params:3: name 'two words'", "word");
  expect_format_error(edit("injection.beta", "injection.beta"), "expected 'key = value'",
                      "injection.beta");
  expect_format_error(edit("injection.beta", "injection.beta ="), "injection.beta", "has no value");
  expect_format_error(edit("staged.alpha", "staged.alpha = 1e-5\nipc.alpha = 2e-6"),
                      "ipc.alpha given without ipc.beta", "both or neither");
  expect_format_error(edit("staged.alpha", "ipc.beta = 1e-11"), "ipc.beta given without ipc.alpha",
                      "both or neither");
  expect_format_error(edit("staged.alpha", "rma.alpha = 2e-6"), "rma.alpha given without rma.beta",
                      "both or neither");
  expect_format_error(edit("staged.alpha", "staged.alpha = -1e-6"), "staged.alpha", "negative");
  /* files and names */
  halo_params p;
  CHECK_ERR(halo_params_read("/nonexistent-dir/x.params", &p), HALO_ERR_IO, "cannot open");
  CHECK_ERR(halo_params_load("lasen", &p), HALO_ERR_IO,
            "'lasen': not a built-in one (lassen, h200)");
  CHECK_ERR(halo_params_parse(NULL, "x", &p), HALO_ERR_INVALID_ARG, "NULL");
}

/* ---- hand-built schedules ------------------------------------------------- */

/* 4 ranks on 2 nodes: ranks 0 and 1 on socket 0 of node 0, rank 2 on its
 * socket 1, rank 3 alone on node 3. Values (8 bytes each) of each message:
 *
 *   phase 0 (node):   0->1 10 (80 B, short, on-socket)   0->2 100 (800 B, eager, on-node)
 *                     0->0 5 (a copy)                    1->0 3000 (24000 B, rendezvous,
 *                     2->0 7 (56 B, short, on-node)                 on-socket)
 *   phase 1 (global): 0->3 2048 (16384 B, rendezvous, off-node)
 *                     2->3 20 (160 B, short, off-node)   1->2 50 (400 B, eager, on-node)
 *                     3->0 31 (248 B, short, off-node)   3->1 32 (256 B, eager, off-node)
 *
 * Node 0 sends 16384 + 160 = 16544 bytes off-node in phase 1, node 3 504. */
#define NP   4
#define MAXM 4

typedef struct {
  halo_schedule s[NP];
  halo_msg send[NP][2][MAXM], recv[NP][2][MAXM];
} hand;

static void msg(hand *h, int k, int from, int to, int64_t count) {
  halo_phase *a = &h->s[from].phase[k], *b = &h->s[to].phase[k];
  CHECK(a->n_send < MAXM && b->n_recv < MAXM);
  a->send[a->n_send++] = (halo_msg){to, a->send_total, count};
  a->send_total += count;
  b->recv[b->n_recv++] = (halo_msg){from, b->recv_total, count};
  b->recv_total += count;
}

static void make_hand(hand *h) {
  memset(h, 0, sizeof *h);
  for (int r = 0; r < NP; r++) {
    h->s[r].rank = r;
    h->s[r].size = NP;
    h->s[r].n_phases = 2;
    for (int k = 0; k < 2; k++) {
      h->s[r].phase[k].scope = k == 0 ? HALO_SCOPE_NODE : HALO_SCOPE_GLOBAL;
      h->s[r].phase[k].send = h->send[r][k];
      h->s[r].phase[k].recv = h->recv[r][k];
    }
  }
  msg(h, 0, 0, 1, 10);
  msg(h, 0, 0, 2, 100);
  msg(h, 0, 0, 0, 5);
  msg(h, 0, 1, 0, 3000);
  msg(h, 0, 2, 0, 7);
  msg(h, 1, 0, 3, 2048);
  msg(h, 1, 2, 3, 20);
  msg(h, 1, 1, 2, 50);
  msg(h, 1, 3, 0, 31);
  msg(h, 1, 3, 1, 32);
}

static const int64_t node_inter[2][NP] = {{0, 0, 0, 0}, {16544, 16544, 16544, 504}};

/* The model of every rank and phase against want[k][r], and the plan's
 * phase times and total against the maxima. */
static void check_model(const halo_params *p, halo_transport t, const hand *h,
                        const halo_model_rank *ranks, double want[2][NP]) {
  for (int k = 0; k < 2; k++)
    for (int r = 0; r < NP; r++) {
      double got = halo_model_phase(p, t, &h->s[r], k, ranks, node_inter[k][r]);
      CHECK_MSG(fabs(got - want[k][r]) <= 1e-12 * want[k][r],
                "%s, phase %d, rank %d: %.17g s, expected %.17g s", halo_transport_name(t), k, r,
                got, want[k][r]);
    }
  double phases[HALO_MAX_PHASES], total;
  CHECK_OK(halo_model_schedules(p, t, h->s, NP, ranks, phases, &total));
  double sum = 0;
  for (int k = 0; k < 2; k++) {
    double most = 0;
    for (int r = 0; r < NP; r++)
      if (want[k][r] > most) most = want[k][r];
    CHECK_MSG(fabs(phases[k] - most) <= 1e-12 * most, "%s phase %d: %.17g, expected %.17g",
              halo_transport_name(t), k, phases[k], most);
    sum += most;
  }
  for (int k = 2; k < HALO_MAX_PHASES; k++) CHECK(phases[k] == 0);
  CHECK_NEAR(total, sum);
  CHECK_OK(halo_model_schedules(p, t, h->s, NP, ranks, NULL, &total));
  CHECK_NEAR(total, sum);
}

static void test_hand_schedules(void) {
  halo_params p;
  hand h;
  CHECK_OK(halo_params_builtin("lassen", &p));
  make_hand(&h);
  /*                         host node socket on_gpu ranks_per_gpu */
  halo_model_rank host[NP] = {{0, 0, 0, 0, 1}, {0, 0, 0, 0, 1}, {0, 0, 1, 0, 1}, {3, 3, 0, 0, 1}};
  CHECK(halo_model_locality(&host[0], &host[1]) == HALO_LOC_ON_SOCKET);
  CHECK(halo_model_locality(&host[0], &host[2]) == HALO_LOC_ON_NODE);
  CHECK(halo_model_locality(&host[2], &host[3]) == HALO_LOC_OFF_NODE);

  /* HOST: inter-CPU postal in the node phase, max-rate in the global one */
  const double inj0 = 16544 * 4.19e-11, inj3 = 504 * 4.19e-11;
  CHECK(inj0 > 160 * 6.88e-10 && inj0 < 16384 * 7.97e-11 && inj0 > 400 * 2.18e-10);
  CHECK(inj3 < 248 * 6.88e-10 + 256 * 3.79e-10);
  const double cpu0[NP] = {(3.67e-07 + 1.32e-10 * 80) +
                               (1.17e-06 + 2.18e-10 * 800), /* short on-socket, eager on-node */
                           3.15e-06 + 3.40e-11 * 24000,     /* rendezvous on-socket */
                           9.25e-07 + 1.19e-09 * 56,        /* short on-node */
                           0};
  const double cpu1[NP] = {7.76e-06 +
                               16384 * 7.97e-11, /* its bytes dominate the node's injection */
                           1.17e-06 + inj0,      /* the node's injection dominates */
                           1.89e-06 + inj0,      /* the node's injection dominates */
                           (1.89e-06 + 2.44e-06) + (248 * 6.88e-10 + 256 * 3.79e-10)};
  double want[2][NP];
  for (int r = 0; r < NP; r++) want[0][r] = cpu0[r], want[1][r] = cpu1[r];
  check_model(&p, HALO_TRANSPORT_HOST, &h, host, want);
  /* RMA: priced as HOST without rma.*; with them, every put costs rma.* (here 0: every
   * rank-phase that sends to another rank gets cheaper, the others not) */
  check_model(&p, HALO_TRANSPORT_RMA, &h, host, want);
  {
    halo_params q = p;
    q.have_own[HALO_TRANSPORT_RMA] = 1;
    q.own[HALO_TRANSPORT_RMA] = (halo_postal){0.0, 0.0};
    int cheaper = 0;
    for (int k = 0; k < 2; k++)
      for (int r = 0; r < NP; r++) {
        const halo_phase *ph = &h.s[r].phase[k];
        int within = 0;
        for (int i = 0; i < ph->n_send; i++) within |= ph->send[i].peer != r;
        const double a =
            halo_model_phase(&p, HALO_TRANSPORT_RMA, &h.s[r], k, host, node_inter[k][r]);
        const double b =
            halo_model_phase(&q, HALO_TRANSPORT_RMA, &h.s[r], k, host, node_inter[k][r]);
        CHECK_MSG(within ? b < a : b == a, "rma.* phase %d rank %d: %g against %g", k, r, b, a);
        cheaper += within;
      }
    CHECK(cheaper > 0);
  }

  /* device plan: ranks 0, 1 and 3 on GPUs, rank 2 a helper; node 0 shares
   * its GPUs two ranks at a time (copies of 4 processes), rank 3 has one */
  halo_model_rank dev[NP] = {{0, 0, 0, 1, 2}, {0, 0, 0, 1, 2}, {0, 0, 1, 0, 2}, {3, 3, 0, 1, 1}};
#define D2H4(s) (1.47e-05 + 1.50e-10 * (s))
#define H2D4(s) (1.52e-05 + 5.52e-10 * (s))
#define D2H1(s) (1.27e-05 + 1.96e-11 * (s))
#define H2D1(s) (1.30e-05 + 1.85e-11 * (s))

  /* STAGED: the host's messages, plus a copy of all sent and of all received
   * bytes on the GPU ranks (the copy to itself is neither) */
  want[0][0] = cpu0[0] + D2H4(80 + 800) + H2D4(24000 + 56);
  want[0][1] = cpu0[1] + D2H4(24000) + H2D4(80);
  want[0][2] = cpu0[2];
  want[0][3] = 0;
  want[1][0] = cpu1[0] + D2H4(16384) + H2D4(248);
  want[1][1] = cpu1[1] + D2H4(400) + H2D4(256);
  want[1][2] = cpu1[2];
  want[1][3] = cpu1[3] + D2H1(248 + 256) + H2D1(16384 + 160);
  check_model(&p, HALO_TRANSPORT_STAGED, &h, dev, want);

  /* MPI_DEVICE: inter-GPU postal per message (short costs eager); NCCL: one
   * group, the largest alpha and every beta */
  halo_model_rank gpus[NP] = {{0, 0, 0, 1, 1}, {0, 0, 0, 1, 1}, {0, 0, 1, 1, 1}, {3, 3, 0, 1, 1}};
  want[0][0] = (1.87e-06 + 5.79e-11 * 80) + (2.02e-05 + 2.15e-10 * 800);
  want[0][1] = 1.82e-05 + 1.46e-11 * 24000;
  want[0][2] = 2.02e-05 + 2.15e-10 * 56;
  want[0][3] = 0;
  want[1][0] = 1.10e-05 + 1.72e-10 * 16384;
  want[1][1] = 2.02e-05 + 2.15e-10 * 400;
  want[1][2] = 8.95e-06 + 1.72e-10 * 160;
  want[1][3] = (8.95e-06 + 1.72e-10 * 248) + (8.95e-06 + 1.72e-10 * 256);
  check_model(&p, HALO_TRANSPORT_MPI_DEVICE, &h, gpus, want);
  /* NVSHMEM: priced as MPI_DEVICE without nvshmem.*; with them, a message
   * between ranks of one host costs nvshmem.* (rank 3 is on a host of its own) */
  check_model(&p, HALO_TRANSPORT_NVSHMEM, &h, gpus, want);
  {
    halo_params q = p;
    q.have_own[HALO_TRANSPORT_NVSHMEM] = 1;
    q.own[HALO_TRANSPORT_NVSHMEM] = (halo_postal){3e-6, 2e-11};
    double wn[2][NP];
    for (int k = 0; k < 2; k++)
      for (int r = 0; r < NP; r++) {
        const halo_phase *ph = &h.s[r].phase[k];
        wn[k][r] = 0;
        for (int i = 0; i < ph->n_send; i++) {
          const int q_ = ph->send[i].peer;
          const int64_t bytes = ph->send[i].count * 8;
          if (q_ == r) continue;
          wn[k][r] +=
              gpus[r].host == gpus[q_].host
                  ? 3e-6 + 2e-11 * (double)bytes
                  : halo_params_message(&p, 1, halo_model_locality(&gpus[r], &gpus[q_]), bytes);
        }
      }
    CHECK(wn[0][0] != want[0][0]); /* the case tells the two apart */
    check_model(&q, HALO_TRANSPORT_NVSHMEM, &h, gpus, wn);
  }
  want[0][0] = 2.02e-05 + 5.79e-11 * 80 + 2.15e-10 * 800;
  want[1][3] = 8.95e-06 + 1.72e-10 * (248 + 256);
  check_model(&p, HALO_TRANSPORT_NCCL, &h, gpus, want);

  /* IPC: on one host, a message from a GPU rank is read by its receiver
   * (inter-GPU postal on a GPU, a device-to-host copy on a helper); a
   * helper's message to a GPU rank and off-node messages are staged */
  want[0][0] = (1.82e-05 + 1.46e-11 * 24000) /* reads 1's 24000 B, rendezvous on-socket */
               + H2D4(56);                   /* the helper's 56 B, staged */
  want[0][1] = 1.87e-06 + 5.79e-11 * 80;     /* reads 0's 80 B (short as eager), on-socket */
  want[0][2] = (9.25e-07 + 1.19e-09 * 56)    /* sends 56 B to 0 over the CPU */
               + D2H4(800);                  /* a helper reads 0's 800 B from its GPU */
  want[0][3] = 0;
  want[1][0] = cpu1[0] + D2H4(16384) + H2D4(248); /* off-node: staged */
  want[1][1] = H2D4(256);           /* its 400 B to 2 are read by 2; 3's 256 B staged */
  want[1][2] = cpu1[2] + D2H4(400); /* sends 160 B off-node, reads 1's 400 B */
  want[1][3] = cpu1[3] + D2H1(248 + 256) + H2D1(16384 + 160);
  check_model(&p, HALO_TRANSPORT_IPC, &h, dev, want);

  /* with staged.alpha and ipc.*: a GPU rank that sends or receives through
   * host memory pays staged.alpha once per phase; a GPU rank's IPC read
   * costs ipc.* whatever the locality; a helper's read is still a copy */
  {
    halo_params q = p;
    const double sa = 3e-6;
    q.staged_alpha = sa;
    q.have_ipc = 1;
    q.ipc = (halo_postal){4e-6, 1e-11};
    double ws[2][NP] = {{cpu0[0] + D2H4(80 + 800) + H2D4(24000 + 56) + sa,
                         cpu0[1] + D2H4(24000) + H2D4(80) + sa, cpu0[2], 0},
                        {cpu1[0] + D2H4(16384) + H2D4(248) + sa,
                         cpu1[1] + D2H4(400) + H2D4(256) + sa, cpu1[2],
                         cpu1[3] + D2H1(248 + 256) + H2D1(16384 + 160) + sa}};
    check_model(&q, HALO_TRANSPORT_STAGED, &h, dev, ws);
    double wi[2][NP] = {{(4e-6 + 1e-11 * 24000) + H2D4(56) + sa, 4e-6 + 1e-11 * 80,
                         (9.25e-07 + 1.19e-09 * 56) + D2H4(800), 0},
                        {cpu1[0] + D2H4(16384) + H2D4(248) + sa, H2D4(256) + sa,
                         cpu1[2] + D2H4(400), cpu1[3] + D2H1(248 + 256) + H2D1(16384 + 160) + sa}};
    check_model(&q, HALO_TRANSPORT_IPC, &h, dev, wi);
    /* neither touches the inter-GPU paths */
    double wg[2][NP];
    for (int k = 0; k < 2; k++)
      for (int r = 0; r < NP; r++)
        wg[k][r] = halo_model_phase(&p, HALO_TRANSPORT_NCCL, &h.s[r], k, gpus, node_inter[k][r]);
    check_model(&q, HALO_TRANSPORT_NCCL, &h, gpus, wg);
  }

  /* hosts decide the reach of IPC, not nodes: on two hosts everything is staged */
  halo_model_rank split_host[NP];
  memcpy(split_host, dev, sizeof dev);
  split_host[1].host = 1;
  split_host[2].host = 2;
  const double staged_0_0 = cpu0[0] + D2H4(80 + 800) + H2D4(24000 + 56);
  CHECK_NEAR(halo_model_phase(&p, HALO_TRANSPORT_IPC, &h.s[0], 0, split_host, 0), staged_0_0);

  /* errors */
  double total;
  CHECK_ERR(halo_model_schedules(&p, HALO_TRANSPORT_AUTO, h.s, NP, host, NULL, &total),
            HALO_ERR_INVALID_ARG, "resolved transport");
  host[3].node = NP;
  CHECK_ERR(halo_model_schedules(&p, HALO_TRANSPORT_HOST, h.s, NP, host, NULL, &total),
            HALO_ERR_INVALID_ARG, "node 4 outside");
  host[3].node = 3;
  host[2].ranks_per_gpu = 0;
  CHECK_ERR(halo_model_schedules(&p, HALO_TRANSPORT_HOST, h.s, NP, host, NULL, &total),
            HALO_ERR_INVALID_ARG, "ranks_per_gpu = 0");
  host[2].ranks_per_gpu = 1;
  h.s[2].rank = 1;
  CHECK_ERR(halo_model_schedules(&p, HALO_TRANSPORT_HOST, h.s, NP, host, NULL, &total),
            HALO_ERR_INVALID_ARG, "schedule 2 is that of rank 1");
  h.s[2].rank = 2;
  /* phases a schedule lacks cost nothing */
  CHECK(halo_model_phase(&p, HALO_TRANSPORT_HOST, &h.s[0], 2, host, 0) == 0);
}

/* ---- the simulator's model -------------------------------------------------- */

/* The model of a simulation against halo_model_schedules on ranks set here. */
static double sim_by_hand(halo_sim sim, const halo_plan_options *o, const int64_t *row_begin, int G,
                          halo_transport t) {
  const int P = sim->P, K = o->ranks_per_node;
  halo_schedule *sched = calloc((size_t)P, sizeof *sched);
  halo_model_rank *ranks = calloc((size_t)P, sizeof *ranks);
  halo_params p;
  double total;
  CHECK_OK(halo_params_builtin("lassen", &p));
  for (int r = 0; r < P; r++) {
    const int node = r / K * K, n = node + K <= P ? K : P - node;
    ranks[r].host = ranks[r].node = node;
    ranks[r].socket = (r - node) * 2 / n;
    ranks[r].on_gpu =
        o->memory == HALO_MEMORY_DEVICE && (row_begin[r + 1] > row_begin[r] || sim->pat[r].n_ghost);
  }
  for (int r = 0; r < P; r++) { /* staged: only the GPU ranks copy, helpers use host MPI */
    const int node = r / K * K, n = node + K <= P ? K : P - node;
    int copiers = n;
    if (t == HALO_TRANSPORT_STAGED) {
      copiers = 0;
      for (int q = node; q < node + n; q++) copiers += ranks[q].on_gpu;
    }
    ranks[r].ranks_per_gpu = G && copiers > G ? (copiers + G - 1) / G : 1;
  }
  CHECK_OK(halo_sim_schedules(sim, o, sched));
  CHECK_OK(halo_model_schedules(&p, t, sched, P, ranks, NULL, &total));
  for (int r = 0; r < P; r++) halo_schedule_free(&sched[r]);
  free(sched);
  free(ranks);
  return total;
}

static void test_sim_model(void) {
  halo_gen g;
  halo_csr A;
  halo_sim sim = NULL;
  const int P = 8;
  /* rank 3 and 7 hold no rows: helpers of a device plan */
  const int64_t row_begin[9] = {0, 150, 300, 400, 400, 550, 700, 900, 900};
  CHECK_OK(halo_gen_parse("lap2d:30", &g));
  CHECK_OK(halo_gen_rows(&g, 0, 900, &A));
  CHECK_OK(halo_sim_create(&A, P, row_begin, NULL, &sim));
  CHECK(sim->pat[3].n_ghost == 0 && sim->pat[7].n_ghost == 0);
  halo_plan_options o = halo_plan_options_default();
  o.ranks_per_node = 4;
  double phases[HALO_MAX_PHASES + 2], t, t2;
  for (int s = 0; s < HALO_N_STRATEGIES; s++) {
    o.strategy = (halo_strategy)s;
    o.message_cap = 64;
    /* host plan: auto is host; gpus_per_node does not matter */
    o.memory = HALO_MEMORY_AUTO;
    o.transport = HALO_TRANSPORT_AUTO;
    for (int k = 0; k < HALO_MAX_PHASES + 2; k++) phases[k] = -1.0;
    CHECK_OK(halo_sim_model(sim, &o, 0, "lassen", HALO_MAX_PHASES + 2, phases, &t));
    CHECK(t > 0);
    CHECK_NEAR(t, sim_by_hand(sim, &o, row_begin, 0, HALO_TRANSPORT_HOST));
    double sum = 0;
    for (int k = 0; k < HALO_MAX_PHASES + 2; k++) sum += phases[k];
    CHECK_NEAR(sum, t);
    CHECK(phases[HALO_MAX_PHASES] == 0 && phases[HALO_MAX_PHASES + 1] == 0); /* past the last */
    /* room for one phase: the first, nothing written past it */
    const double first = phases[0];
    phases[1] = -1.0;
    CHECK_OK(halo_sim_model(sim, &o, 0, "lassen", 1, phases, &t2));
    CHECK(t2 == t && phases[0] == first && phases[1] == -1.0);
    CHECK_ERR(halo_sim_model(sim, &o, 0, "lassen", -1, phases, &t2), HALO_ERR_INVALID_ARG,
              "max_phases");
    CHECK_OK(halo_sim_model(sim, &o, 4, "lassen", 0, NULL, &t2));
    CHECK(t2 == t);
    /* device plan, 4 GPUs per node: auto is ipc, which has no set-up to pay on the new
     * communicator the simulator models (nccl's communicator would be one) */
    o.memory = HALO_MEMORY_DEVICE;
    CHECK_OK(halo_sim_model(sim, &o, 4, "lassen", 0, NULL, &t));
    CHECK_NEAR(t, sim_by_hand(sim, &o, row_begin, 4, HALO_TRANSPORT_IPC));
    o.transport = HALO_TRANSPORT_STAGED;
    CHECK_OK(halo_sim_model(sim, &o, 4, "lassen", 0, NULL, &t));
    CHECK_NEAR(t, sim_by_hand(sim, &o, row_begin, 4, HALO_TRANSPORT_STAGED));
    /* 3 GPUs per node: two ranks share a GPU, but under staged the helper
     * copies nothing, and the 3 GPU ranks of a node copy one per GPU */
    CHECK_OK(halo_sim_model(sim, &o, 3, "lassen", 0, NULL, &t));
    CHECK_NEAR(t, sim_by_hand(sim, &o, row_begin, 3, HALO_TRANSPORT_STAGED));
    /* 2 GPUs per node: auto is ipc, two ranks share a GPU */
    o.transport = HALO_TRANSPORT_AUTO;
    CHECK_OK(halo_sim_model(sim, &o, 2, "lassen", 0, NULL, &t));
    CHECK_NEAR(t, sim_by_hand(sim, &o, row_begin, 2, HALO_TRANSPORT_IPC));
    o.transport = HALO_TRANSPORT_NCCL;
    CHECK_ERR(halo_sim_model(sim, &o, 2, "lassen", 0, NULL, &t), HALO_ERR_INVALID_ARG,
              "nccl needs one rank per GPU");
  }
  o = halo_plan_options_default();
  o.ranks_per_node = 4;
  o.memory = HALO_MEMORY_DEVICE;
  CHECK_ERR(halo_sim_model(sim, &o, 0, "lassen", 0, NULL, &t), HALO_ERR_INVALID_ARG,
            "gpus_per_node >= 1");
  o.transport = HALO_TRANSPORT_HOST;
  CHECK_ERR(halo_sim_model(sim, &o, 4, "lassen", 0, NULL, &t), HALO_ERR_INVALID_ARG,
            "transport host is for host memory");
  o.memory = HALO_MEMORY_HOST;
  o.transport = HALO_TRANSPORT_IPC;
  CHECK_ERR(halo_sim_model(sim, &o, 4, "lassen", 0, NULL, &t), HALO_ERR_INVALID_ARG,
            "needs device memory");
  o.transport = HALO_TRANSPORT_AUTO;
  CHECK_ERR(halo_sim_model(sim, &o, 0, "no-such-set", 0, NULL, &t), HALO_ERR_IO, "no-such-set");
  o.ranks_per_node = 0;
  CHECK_ERR(halo_sim_model(sim, &o, 0, "lassen", 0, NULL, &t), HALO_ERR_INVALID_ARG,
            "ranks_per_node > 0");
  halo_sim_destroy(&sim);
  halo_csr_free(&A);
}

/* A simulation keeps the links and the results of the plans it builds: plans
 * weighed in any order, with other nodes in between, give what a fresh
 * simulation gives, bit for bit, and the model node by node gives
 * halo_model_schedules's time exactly. */
static void test_sim_kept(void) {
  halo_gen g;
  halo_csr A;
  halo_sim kept = NULL, fresh = NULL;
  const int P = 12;
  const int64_t row_begin[13] = {0, 80, 160, 240, 300, 380, 460, 540, 600, 680, 760, 840, 900};
  const struct {
    halo_strategy s;
    int K;
    int64_t cap;
  } plan[] = {{HALO_STRATEGY_SPLIT, 4, 64},   {HALO_STRATEGY_3STEP, 4, 64},
              {HALO_STRATEGY_SPLIT, 4, 4096}, {HALO_STRATEGY_2STEP, 3, 64},
              {HALO_STRATEGY_3STEP, 4, 64},   {HALO_STRATEGY_SPLIT, 3, 64},
              {HALO_STRATEGY_STANDARD, 4, 64}};
  CHECK_OK(halo_gen_parse("lap2d:30", &g));
  CHECK_OK(halo_gen_rows(&g, 0, 900, &A));
  CHECK_OK(halo_sim_create(&A, P, row_begin, NULL, &kept));
  halo_phase_stats none;
  CHECK_ERR(halo_sim_phase_stats(kept, 0, &none), HALO_ERR_STATE, "before any halo_sim_run");
  for (size_t i = 0; i < sizeof plan / sizeof plan[0]; i++)
    for (int device = 0; device < 2; device++) {
      halo_plan_options o = halo_plan_options_default();
      halo_stats a, b;
      halo_phase_stats sa[HALO_MAX_PHASES] = {{0}}, sb[HALO_MAX_PHASES] = {{0}};
      double pa[HALO_MAX_PHASES], pb[HALO_MAX_PHASES], ta, tb;
      o.strategy = plan[i].s;
      o.ranks_per_node = plan[i].K;
      o.message_cap = plan[i].cap;
      o.memory = device ? HALO_MEMORY_DEVICE : HALO_MEMORY_HOST;
      CHECK_OK(halo_sim_create(&A, P, row_begin, NULL, &fresh));
      CHECK_OK(halo_sim_model(kept, &o, 2, "lassen", HALO_MAX_PHASES, pa, &ta));
      CHECK_OK(halo_sim_model(fresh, &o, 2, "lassen", HALO_MAX_PHASES, pb, &tb));
      CHECK(ta == tb && memcmp(pa, pb, sizeof pa) == 0);
      if (!device) CHECK(ta == sim_by_hand(fresh, &o, row_begin, 0, HALO_TRANSPORT_HOST));
      CHECK_OK(halo_sim_run(kept, &o, &a));
      for (int k = 0; k < a.n_phases; k++) CHECK_OK(halo_sim_phase_stats(kept, k, &sa[k]));
      CHECK_OK(halo_sim_run(fresh, &o, &b));
      for (int k = 0; k < b.n_phases; k++) CHECK_OK(halo_sim_phase_stats(fresh, k, &sb[k]));
      a.setup_seconds = b.setup_seconds = 0;
      CHECK(a.n_phases == b.n_phases && a.message_cap_used == b.message_cap_used &&
            a.ghosts == b.ghosts && memcmp(sa, sb, sizeof sa) == 0);
      halo_sim_destroy(&fresh);
    }
  halo_sim_destroy(&kept);
  halo_csr_free(&A);
}

/* The built-in h200 is the set measured on two H200 (params-h200x2.txt), key
 * for key; plans take it by the GPU's name. */
static void test_h200(const char *measured) {
  halo_params p, q;
  CHECK_OK(halo_params_builtin("h200", &p));
  CHECK(strcmp(p.name, "h200") == 0 && p.sockets_per_node == 1 && !p.have_ipc);
  CHECK(strcmp(halo_params_builtin_for("NVIDIA H200"), "h200") == 0);
  CHECK(strcmp(halo_params_builtin_for("NVIDIA H100 80GB HBM3"), "lassen") == 0);
  CHECK(strcmp(halo_params_builtin_for(NULL), "lassen") == 0);
  CHECK(strcmp(halo_params_builtin_for(""), "lassen") == 0);
  if (!measured) return;
  CHECK_OK(halo_params_read(measured, &q));
  memset(p.name, 0, sizeof p.name);
  memset(q.name, 0, sizeof q.name);
  CHECK_MSG(memcmp(&p, &q, sizeof p) == 0, "the built-in h200 is not the set of %s", measured);
}

int main(int argc, char **argv) {
  test_h200(argc > 1 ? argv[1] : NULL);
  test_lassen();
  test_round_trip();
  test_errors();
  test_hand_schedules();
  test_sim_model();
  test_sim_kept();
  return 0;
}
