/* halo params: the machine parameters of the performance model (DESIGN.md
 * §6, src/plan/params.h). `measure` measures and fits them on the ranks it
 * runs on, BenchPress-style; `show` prints a set and so checks a file. */
#define _GNU_SOURCE /* sched_getcpu */
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "driver.h"
#include "params_gpu.h" /* no CUDA type: its functions exist only with CUDA */
#include "halo/model.h"

static void usage(void) {
  printf("usage: mpirun -n P halo params COMMAND [options]\n"
         "\n"
         "The machine parameters of halo's performance model: postal alpha and beta of\n"
         "messages by locality and protocol, of host-device copies, and a node's injection\n"
         "limit. A set is a file of 'key = value' lines or a built-in name (lassen).\n"
         "\n"
         "commands:\n"
         "  measure   measure and fit them on this machine, write a parameter file\n"
         "  show      print a set (a built-in name or a file): checks a file\n"
         "\n"
         "  halo params COMMAND --help   options of a command\n"
         "  halo params -h, --help       this text\n");
}

static void usage_show(void) {
  printf("usage: halo params show NAME|FILE\n"
         "\n"
         "Reads a parameter set, a built-in one by name (lassen) or a file, and prints it\n"
         "as a parameter file: every key, with the values it read. A file with an error\n"
         "(a missing, unknown or repeated key, a bad value) is named with its line.\n"
         "\n"
         "  -h, --help             this text\n"
         "\n"
         "exit status: 0 ok, 1 the set cannot be read, 2 bad command line\n");
}

static void usage_measure(void) {
  printf("usage: mpirun -n P halo params measure [-o FILE] [options]\n"
         "\n"
         "Measures the parameters of halo's performance model on the ranks it runs on\n"
         "and writes a parameter file (to stdout without -o, the report then as '#' lines):\n"
         "  - ping-pong of rank 0 with a partner on its socket, on the other socket of\n"
         "    its node and on another node, the other ranks waiting: per size the median\n"
         "    half round trip; cpu.<protocol>.<locality> fitted per protocol range;\n"
         "  - injection (max-rate): k = 1, 2, 4, ..., K ranks of rank 0's node ping-pong\n"
         "    large messages with k ranks of another node at once; injection.beta is the\n"
         "    fitted s/byte of the node's total at the largest k;\n"
         "  - with CUDA and a device on every rank: cudaMemcpyAsync sweeps by 1 process\n"
         "    and by 4 at once (copy.*), and device-aware messages through halo's own\n"
         "    exchange (gpu.*): nccl when each rank has its own GPU, else ipc.\n"
         "A locality with no pair of ranks is copied from the nearest measured one; what\n"
         "cannot be measured here comes from --base. The file says so next to those keys.\n"
         "\n"
         "  -o, --output FILE      write the parameter file there [stdout]\n"
         "  --ranks-per-node K     virtual nodes of K consecutive ranks, for off-node pairs\n"
         "                         when all ranks share one machine [unset: the nodes of\n"
         "                         MPI, MPI_COMM_TYPE_SHARED]\n"
         "  --min-bytes N          smallest message [8]\n"
         "  --max-bytes N          largest message [16777216]; the sizes: the smallest,\n"
         "                         the largest, and the powers of two and their midpoints\n"
         "                         (1.5 x) in between\n"
         "  --iterations N         timed round trips per size, after 1 + N/10 untimed\n"
         "                         ones [100]\n"
         "  --short-max B          protocol switch short -> eager, in bytes [256]\n"
         "  --eager-max B          protocol switch eager -> rendezvous, in bytes [16384]\n"
         "  --fit relative|absolute\n"
         "                         least squares of the relative or absolute errors\n"
         "                         [relative]; a negative alpha or beta is set to 0 and\n"
         "                         the other refitted\n"
         "  --base NAME|FILE       the set the unmeasured keys come from [lassen]\n"
         "  --name WORD            name of the measured set [measured]\n"
         "  --quiet                no report lines: only the parameter file (on stdout\n"
         "                         without -o), and errors\n"
         "  -h, --help             this text\n"
         "\n"
         "Every protocol range ([min, short-max), [short-max, eager-max), [eager-max, max])\n"
         "must hold two sizes. A rank's socket is the physical package of the CPU it runs\n"
         "on (bind the ranks, e.g. mpirun --bind-to core, for a stable answer).\n"
         "\n"
         "exit status: 0 ok, 1 error, 2 bad command line\n");
}

/* ---- halo params show ---------------------------------------------------- */

static int cmd_show(int argc, char **argv, MPI_Comm comm) {
  int rank, code = EXIT_OK;
  MPI_Comm_rank(comm, &rank);
  const char *what = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      if (rank == 0) usage_show();
      return EXIT_OK;
    }
    if (argv[i][0] == '-' || what) {
      driver_error(rank, "params show", "%s '%s' (usage: halo params show NAME|FILE)",
                   argv[i][0] == '-' ? "unknown option" : "one set at a time, not also", argv[i]);
      return EXIT_USAGE;
    }
    what = argv[i];
  }
  if (!what) {
    driver_error(rank, "params show", "give a set: halo params show NAME|FILE (built-in: lassen)");
    return EXIT_USAGE;
  }
  if (rank == 0) {
    halo_params p;
    halo_status st = halo_params_load(what, &p);
    if (st == HALO_SUCCESS) st = halo_params_write(&p, stdout);
    if (st != HALO_SUCCESS) {
      driver_error(0, "params show", "%s", halo_last_error());
      code = EXIT_ERROR;
    }
  }
  MPI_Bcast(&code, 1, MPI_INT, 0, comm);
  return code;
}

/* ---- halo params measure: options ---------------------------------------- */

typedef struct {
  const char *out, *base, *name;
  int64_t ranks_per_node; /* 0: the nodes of MPI */
  int64_t min_bytes, max_bytes, iterations, short_max, eager_max;
  halo_fit_weighting fit;
  int quiet; /* no report lines */
} measure_opts;

#define MAX_SIZES 128
#define MAX_NOTES 16
#define MSG_LEN   512

/* Keys not measured as such, and why: a '#' line before them in the file. */
typedef struct {
  char pattern[48]; /* fnmatch() pattern of the keys */
  char text[300];
} note;

typedef struct {
  MPI_Comm comm;
  int rank, size;
  measure_opts o;
  int argc;
  char **argv;
  const char *prefix; /* of report lines: "# " when the file goes to stdout */
  FILE *out;          /* rank 0: the parameter file */
  halo_params base, res;
  int64_t sizes[MAX_SIZES];
  double dsizes[MAX_SIZES];
  int n_sizes;
  int warmup;
  char *buf; /* max_bytes, for messages */
  note notes[MAX_NOTES];
  int n_notes;
  /* topology */
  int node_id, n_nodes, sockets_per_node, packages_known;
  int shm_rank, shm_size, shm_leader; /* the machine (MPI_COMM_TYPE_SHARED) */
  int partner[HALO_N_LOC];            /* rank 0's partner by locality, -1: none */
  int inj_k;                          /* pairs of ranks between two nodes */
  int *inj_a, *inj_b;                 /* inj_k ranks of rank 0's node, of the other node */
} ctx_t;

static const char *const loc_names[HALO_N_LOC] = {"on_socket", "on_node", "off_node"};
static const char *const proto_names[HALO_N_PROTO] = {"short", "eager", "rendezvous"};

/* One line of the report, on rank 0. */
static void say(const ctx_t *c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void say(const ctx_t *c, const char *fmt, ...) {
  if (c->rank != 0 || c->o.quiet) return;
  va_list ap;
  va_start(ap, fmt);
  fputs(c->prefix, stdout);
  vprintf(fmt, ap);
  va_end(ap);
  fflush(stdout);
}

static void add_note(ctx_t *c, const char *pattern, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void add_note(ctx_t *c, const char *pattern, const char *fmt, ...) {
  if (c->n_notes == MAX_NOTES) return;
  note *n = &c->notes[c->n_notes++];
  snprintf(n->pattern, sizeof n->pattern, "%s", pattern);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(n->text, sizeof n->text, fmt, ap);
  va_end(ap);
}

/* Collective: whether any rank failed. Rank 0 then holds in msg the message
 * of the lowest failing rank, as "rank R: ..." (msg: MSG_LEN chars). */
static int agree(const ctx_t *c, int failed, char *msg) {
  int first = failed ? c->rank : c->size;
  MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, c->comm);
  if (first == c->size) return 0;
  if (first != 0) {
    char m[MSG_LEN];
    if (c->rank == first) MPI_Send(msg, MSG_LEN, MPI_CHAR, 0, 9, c->comm);
    if (c->rank == 0) {
      MPI_Recv(m, MSG_LEN, MPI_CHAR, first, 9, c->comm, MPI_STATUS_IGNORE);
      m[MSG_LEN - 1] = '\0';
      snprintf(msg, MSG_LEN, "rank %d: %.480s", first, m);
    }
  }
  return 1;
}

/* Collective: agree() on an allocation that failed on some rank. */
static int agree_alloc(const ctx_t *c, int failed, char *msg, const char *what) {
  if (failed) snprintf(msg, MSG_LEN, "out of memory (%s)", what);
  return agree(c, failed, msg);
}

/* Collective: wait for every rank; the ones not measuring sleep between
 * tests, so that they leave the cores to the ranks that measure. */
static void wait_all(const ctx_t *c, int active) {
  MPI_Request r;
  MPI_Ibarrier(c->comm, &r);
  if (active) {
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    return;
  }
  int done = 0;
  const struct timespec nap = {0, 200000}; /* 0.2 ms */
  MPI_Test(&r, &done, MPI_STATUS_IGNORE);
  while (!done) {
    nanosleep(&nap, NULL);
    MPI_Test(&r, &done, MPI_STATUS_IGNORE);
  }
}



/* min, max, and the powers of two and their midpoints strictly between. */
static int make_sizes(int64_t lo, int64_t hi, int64_t *s) {
  int n = 0;
  s[n++] = lo;
  for (int64_t p = 1; p <= hi; p *= 2) {
    if (p > lo && p < hi) s[n++] = p;
    if (p >= 2 && p + p / 2 > lo && p + p / 2 < hi) s[n++] = p + p / 2;
  }
  if (hi > lo) s[n++] = hi;
  return n;
}

static int is_word(const char *w) {
  size_t n = strlen(w);
  if (n == 0 || n > 63) return 0;
  for (size_t i = 0; i < n; i++)
    if (!(w[i] >= 'a' && w[i] <= 'z') && !(w[i] >= 'A' && w[i] <= 'Z') &&
        !(w[i] >= '0' && w[i] <= '9') && w[i] != '-' && w[i] != '_' && w[i] != '.')
      return 0;
  return 1;
}

/* Parse the options (the same on every rank, so every rank returns the same
 * code; messages on rank 0). Returns -1 to go on, else the exit code. */
static int parse_measure(ctx_t *c) {
  measure_opts *o = &c->o;
  *o = (measure_opts){.base = "lassen",
                      .name = "measured",
                      .min_bytes = 8,
                      .max_bytes = 16 << 20,
                      .iterations = 100,
                      .short_max = 256,
                      .eager_max = 16384,
                      .fit = HALO_FIT_RELATIVE};
  args_t a = {c->argc, 1, c->argv, "params measure", NULL, c->rank};
  const int64_t big = INT64_C(1) << 30;
  for (; a.i < c->argc; a.i++) {
    int m;
    if (args_flag(&a, "--help") || args_flag(&a, "-h")) {
      if (c->rank == 0) usage_measure();
      return EXIT_OK;
    } else if ((m = args_take(&a, "-o")) || (m = args_take(&a, "--output"))) {
      if (m < 0) return EXIT_USAGE;
      o->out = a.value;
    } else if ((m = args_take(&a, "--ranks-per-node"))) {
      if (m < 0 || !args_int(&a, "--ranks-per-node", 1, 1 << 30, &o->ranks_per_node))
        return EXIT_USAGE;
    } else if ((m = args_take(&a, "--min-bytes"))) {
      if (m < 0 || !args_int(&a, "--min-bytes", 1, big, &o->min_bytes)) return EXIT_USAGE;
    } else if ((m = args_take(&a, "--max-bytes"))) {
      if (m < 0 || !args_int(&a, "--max-bytes", 1, big, &o->max_bytes)) return EXIT_USAGE;
    } else if ((m = args_take(&a, "--iterations"))) {
      if (m < 0 || !args_int(&a, "--iterations", 1, 1000000, &o->iterations)) return EXIT_USAGE;
    } else if ((m = args_take(&a, "--short-max"))) {
      if (m < 0 || !args_int(&a, "--short-max", 1, big, &o->short_max)) return EXIT_USAGE;
    } else if ((m = args_take(&a, "--eager-max"))) {
      if (m < 0 || !args_int(&a, "--eager-max", 1, big, &o->eager_max)) return EXIT_USAGE;
    } else if ((m = args_take(&a, "--fit"))) {
      if (m < 0) return EXIT_USAGE;
      if (strcmp(a.value, "relative") == 0)
        o->fit = HALO_FIT_RELATIVE;
      else if (strcmp(a.value, "absolute") == 0)
        o->fit = HALO_FIT_ABSOLUTE;
      else {
        args_error(&a, "--fit '%s': expected relative or absolute", a.value);
        return EXIT_USAGE;
      }
    } else if (args_flag(&a, "--quiet")) {
      o->quiet = 1;
    } else if ((m = args_take(&a, "--base"))) {
      if (m < 0) return EXIT_USAGE;
      o->base = a.value;
    } else if ((m = args_take(&a, "--name"))) {
      if (m < 0) return EXIT_USAGE;
      if (!is_word(a.value)) {
        args_error(&a,
                   "--name '%s': expected a word of at most 63 letters, digits, '-', '_' or '.'",
                   a.value);
        return EXIT_USAGE;
      }
      o->name = a.value;
    } else {
      args_error(&a, "unknown option '%s'", c->argv[a.i]);
      return EXIT_USAGE;
    }
  }
  if (o->min_bytes >= o->max_bytes) {
    args_error(&a, "--min-bytes %lld must be below --max-bytes %lld", (long long)o->min_bytes,
               (long long)o->max_bytes);
    return EXIT_USAGE;
  }
  if (o->short_max >= o->eager_max) {
    args_error(&a, "--short-max %lld must be below --eager-max %lld", (long long)o->short_max,
               (long long)o->eager_max);
    return EXIT_USAGE;
  }
  c->n_sizes = make_sizes(o->min_bytes, o->max_bytes, c->sizes);
  int count[HALO_N_PROTO] = {0};
  for (int k = 0; k < c->n_sizes; k++) {
    c->dsizes[k] = (double)c->sizes[k];
    count[c->sizes[k] < o->short_max ? 0 : c->sizes[k] < o->eager_max ? 1 : 2]++;
  }
  for (int p = 0; p < HALO_N_PROTO; p++)
    if (count[p] < 2) {
      driver_error(c->rank, a.cmd,
                   "the %s range of sizes holds %d of the %d sizes from %lld to %lld bytes; every "
                   "protocol range needs two (see --min-bytes, --max-bytes, --short-max, "
                   "--eager-max)",
                   proto_names[p], count[p], c->n_sizes, (long long)o->min_bytes,
                   (long long)o->max_bytes);
      return EXIT_USAGE;
    }
  if (c->size < 2) {
    driver_error(c->rank, a.cmd,
                 "needs at least 2 ranks (mpirun -n 2 or more): it measures "
                 "messages between ranks");
    return EXIT_USAGE;
  }
  c->warmup = 1 + (int)(o->iterations / 10);
  return -1;
}

/* ---- topology ------------------------------------------------------------ */

/* Physical package of the CPU this rank runs on; known_p = 0 when it cannot tell. */
static int my_package(int *known_p) {
  *known_p = 0;
  const int cpu = sched_getcpu();
  if (cpu < 0) return 0;
  char path[128];
  snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", cpu);
  FILE *f = fopen(path, "r");
  int pkg = 0;
  if (!f) return 0;
  if (fscanf(f, "%d", &pkg) == 1 && pkg >= 0) *known_p = 1;
  fclose(f);
  return *known_p ? pkg : 0;
}

static int cmp_pair(const void *a, const void *b) {
  const int *x = a, *y = b;
  return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : (x[1] > y[1]) - (x[1] < y[1]);
}

/* Collective: nodes, sockets, the partners of rank 0 and the injection pairs. */
static int find_topology(ctx_t *c, char *msg) {
  MPI_Comm shm;
  MPI_Comm_split_type(c->comm, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &shm);
  MPI_Comm_rank(shm, &c->shm_rank);
  MPI_Comm_size(shm, &c->shm_size);
  c->shm_leader = c->rank;
  MPI_Bcast(&c->shm_leader, 1, MPI_INT, 0, shm);
  MPI_Comm_free(&shm);
  const int K = (int)c->o.ranks_per_node;
  c->node_id = K > 0 ? c->rank / K * K : c->shm_leader;
  int known, mine[3];
  mine[0] = c->node_id;
  mine[1] = my_package(&known);
  mine[2] = known;
  int *all = NULL, failed = 0;
  if (c->rank == 0) {
    all = malloc((size_t)c->size * 3 * sizeof *all);
    failed = !all;
  }
  if (failed) snprintf(msg, MSG_LEN, "out of memory");
  MPI_Bcast(&failed, 1, MPI_INT, 0, c->comm);
  if (failed) return 1;
  MPI_Gather(mine, 3, MPI_INT, all, 3, MPI_INT, 0, c->comm);
  int hdr[7] = {-1, -1, -1, 0, 1, 1, 1};
  int *a = NULL, *b = NULL;
  if (c->rank == 0) {
    const int n0 = all[0], p0 = all[1];
    int off = -1, na = 0, nb = 0;
    for (int r = 1; r < c->size; r++) {
      const int *x = &all[3 * r];
      const int loc = x[0] != n0   ? HALO_LOC_OFF_NODE
                      : x[1] == p0 ? HALO_LOC_ON_SOCKET
                                   : HALO_LOC_ON_NODE;
      if (hdr[loc] < 0) hdr[loc] = r;
    }
    off = hdr[HALO_LOC_OFF_NODE];
    for (int r = 0; r < c->size; r++) {
      na += all[3 * r] == n0;
      nb += off >= 0 && all[3 * r] == all[3 * off];
      hdr[6] &= all[3 * r + 2];
    }
    hdr[3] = off >= 0 ? (na < nb ? na : nb) : 0;
    /* nodes and the most packages seen on one: sort (node, package) */
    int *np = malloc((size_t)c->size * 2 * sizeof *np);
    a = malloc((size_t)(hdr[3] + 1) * sizeof *a);
    b = malloc((size_t)(hdr[3] + 1) * sizeof *b);
    if (!np || !a || !b) {
      free(np), free(a), free(b), free(all);
      hdr[0] = -2; /* out of memory */
    } else {
      for (int r = 0; r < c->size; r++) np[2 * r] = all[3 * r], np[2 * r + 1] = all[3 * r + 1];
      qsort(np, (size_t)c->size, 2 * sizeof *np, cmp_pair);
      int nodes = 0, most = 0, here = 0;
      for (int r = 0; r < c->size; r++) {
        if (r == 0 || np[2 * r] != np[2 * r - 2]) nodes++, here = 0;
        if (r == 0 || np[2 * r] != np[2 * r - 2] || np[2 * r + 1] != np[2 * r - 1]) here++;
        if (here > most) most = here;
      }
      hdr[4] = most, hdr[5] = nodes;
      na = nb = 0;
      for (int r = 0; r < c->size && (na < hdr[3] || nb < hdr[3]); r++) {
        if (all[3 * r] == n0 && na < hdr[3]) a[na++] = r;
        if (off >= 0 && all[3 * r] == all[3 * off] && nb < hdr[3]) b[nb++] = r;
      }
      free(np);
      free(all);
    }
  }
  MPI_Bcast(hdr, 7, MPI_INT, 0, c->comm);
  if (hdr[0] == -2) {
    snprintf(msg, MSG_LEN, "out of memory");
    return 1;
  }
  for (int l = 0; l < HALO_N_LOC; l++) c->partner[l] = hdr[l];
  c->inj_k = hdr[3], c->sockets_per_node = hdr[4], c->n_nodes = hdr[5], c->packages_known = hdr[6];
  if (c->rank != 0) {
    a = malloc((size_t)(c->inj_k + 1) * sizeof *a);
    b = malloc((size_t)(c->inj_k + 1) * sizeof *b);
  }
  if (agree_alloc(c, !a || !b, msg, "injection pairs")) {
    free(a), free(b);
    return 1;
  }
  MPI_Bcast(a, c->inj_k, MPI_INT, 0, c->comm);
  MPI_Bcast(b, c->inj_k, MPI_INT, 0, c->comm);
  c->inj_a = a, c->inj_b = b;
  return 0;
}

/* ---- measurements --------------------------------------------------------- */

/* Rank 0 and peer ping-pong every size; the others wait. med (rank 0): the
 * median half round trip of each size. */
static void pingpong(ctx_t *c, int peer, double *med, double *work) {
  const int active = c->rank == 0 || c->rank == peer, iters = (int)c->o.iterations;
  for (int k = 0; k < c->n_sizes && active; k++) {
    const int bytes = (int)c->sizes[k];
    for (int it = -c->warmup; it < iters; it++) {
      if (c->rank == 0) {
        const double t0 = MPI_Wtime();
        MPI_Send(c->buf, bytes, MPI_BYTE, peer, 1, c->comm);
        MPI_Recv(c->buf, bytes, MPI_BYTE, peer, 1, c->comm, MPI_STATUS_IGNORE);
        if (it >= 0) work[it] = (MPI_Wtime() - t0) / 2;
      } else {
        MPI_Recv(c->buf, bytes, MPI_BYTE, 0, 1, c->comm, MPI_STATUS_IGNORE);
        MPI_Send(c->buf, bytes, MPI_BYTE, 0, 1, c->comm);
      }
    }
    if (c->rank == 0) med[k] = driver_median(work, iters);
  }
  wait_all(c, active);
}

/* "[8, 256)", or "[16384, 65536]" for the last range. */
static void range_text(const ctx_t *c, int p, char *buf, size_t len) {
  const int64_t lo[HALO_N_PROTO] = {c->o.min_bytes, c->o.short_max, c->o.eager_max};
  const int64_t hi[HALO_N_PROTO] = {c->o.short_max, c->o.eager_max, c->o.max_bytes};
  snprintf(buf, len, "[%lld, %lld%c", (long long)lo[p], (long long)hi[p],
           p == HALO_PROTO_RENDEZVOUS ? ']' : ')');
}

static const char *clamp_text(const halo_fit *f) {
  return f->clamped & HALO_FIT_ALPHA_CLAMPED  ? "  (alpha < 0 set to 0)"
         : f->clamped & HALO_FIT_BETA_CLAMPED ? "  (beta < 0 set to 0)"
                                              : "";
}

static void say_fit(const ctx_t *c, const char *what, const char *range, const halo_fit *f) {
  say(c, "  %-11s %-19s %2lld sizes  alpha %9.3e s  beta %9.3e s/B  R^2 %7.4f  worst %5.1f%%%s\n",
      what, range, (long long)f->n, f->alpha, f->beta, f->r2, 100 * f->max_rel_err, clamp_text(f));
}

/* The locality measured nearest to loc, among those with measured[l]. */
static int nearest(int loc, const int *measured) {
  static const int order[HALO_N_LOC][2] = {{HALO_LOC_ON_NODE, HALO_LOC_OFF_NODE},
                                           {HALO_LOC_ON_SOCKET, HALO_LOC_OFF_NODE},
                                           {HALO_LOC_ON_NODE, HALO_LOC_ON_SOCKET}};
  for (int i = 0; i < 2; i++)
    if (measured[order[loc][i]]) return order[loc][i];
  return -1;
}

static const char *no_pair_reason(int loc) {
  return loc == HALO_LOC_ON_SOCKET ? "no other rank on rank 0's node and socket"
         : loc == HALO_LOC_ON_NODE ? "no rank on rank 0's node and another socket"
                                   : "no rank on another node";
}

/* Collective: cpu.* by ping-pong, per locality. Returns 1 on failure (msg on rank 0). */
static int measure_cpu(ctx_t *c, char *msg) {
  double med[MAX_SIZES], work_fixed[1];
  double *work = c->rank == 0 ? malloc((size_t)c->o.iterations * sizeof *work) : work_fixed;
  if (agree_alloc(c, !work, msg, "times")) {
    if (c->rank == 0) free(work);
    return 1;
  }
  int measured[HALO_N_LOC] = {0}, failed = 0;
  for (int l = 0; l < HALO_N_LOC; l++) {
    const int peer = c->partner[l];
    if (peer < 0) continue;
    pingpong(c, peer, med, work);
    if (c->rank != 0 || failed) continue; /* the others go on measuring with rank 0 */
    halo_fit f[HALO_N_PROTO];
    if (halo_fit_protocols(c->dsizes, med, c->n_sizes, c->o.short_max, c->o.eager_max, c->o.fit,
                           f) != HALO_SUCCESS) {
      snprintf(msg, MSG_LEN, "cpu.*.%s: %s", loc_names[l], halo_last_error());
      failed = 1;
      continue;
    }
    say(c, "cpu.*.%s: ping-pong of ranks 0 and %d, median half round trip\n", loc_names[l], peer);
    for (int p = 0; p < HALO_N_PROTO; p++) {
      char r[64];
      range_text(c, p, r, sizeof r);
      say_fit(c, proto_names[p], r, &f[p]);
      c->res.cpu[p][l] = (halo_postal){f[p].alpha, f[p].beta};
    }
    measured[l] = 1;
  }
  if (c->rank == 0) free(work);
  MPI_Bcast(&failed, 1, MPI_INT, 0, c->comm);
  if (failed) return 1;
  for (int l = 0; l < HALO_N_LOC; l++) {
    if (measured[l] || c->partner[l] >= 0) continue;
    const int from = nearest(l, measured);
    if (from < 0) continue; /* every locality has a pair when P >= 2 */
    for (int p = 0; p < HALO_N_PROTO; p++) c->res.cpu[p][l] = c->res.cpu[p][from];
    char pat[48];
    snprintf(pat, sizeof pat, "cpu.*.%s.*", loc_names[l]);
    add_note(c, pat, "cpu.*.%s: copied from cpu.*.%s (%s)", loc_names[l], loc_names[from],
             no_pair_reason(l));
    say(c, "cpu.*.%s: copied from cpu.*.%s (%s)\n", loc_names[l], loc_names[from],
        no_pair_reason(l));
  }
  return 0;
}

/* Collective: injection.beta by node-pong, k = 1, 2, 4, ..., inj_k pairs at once. */
static int measure_injection(ctx_t *c, char *msg) {
  if (c->inj_k == 0) {
    c->res.injection_beta = c->base.injection_beta;
    const char *why = c->o.ranks_per_node ? "one node of --ranks-per-node ranks holds them all"
                                          : "one node, and no --ranks-per-node";
    add_note(c, "injection.*", "injection.beta: from %s (%s)", c->o.base, why);
    say(c, "injection.beta: from %s (%s)\n", c->o.base, why);
    return 0;
  }
  /* message sizes: 1, 2, 4 MiB, or max/4, max/2, max below 4 MiB */
  int64_t m[3];
  const int64_t top = c->o.max_bytes < (4 << 20) ? c->o.max_bytes : (4 << 20);
  m[0] = top / 4 > 0 ? top / 4 : 1, m[1] = top / 2 > m[0] ? top / 2 : m[0] + 1, m[2] = top;
  const int nm = m[2] > m[1] ? 3 : 2, iters = (int)c->o.iterations;
  if (nm == 2) m[1] = m[2];
  int ia = -1, ib = -1;
  for (int i = 0; i < c->inj_k; i++) {
    if (c->inj_a[i] == c->rank) ia = i;
    if (c->inj_b[i] == c->rank) ib = i;
  }
  double *work = malloc((size_t)iters * sizeof *work);
  if (agree_alloc(c, !work, msg, "times")) {
    free(work);
    return 1;
  }
  say(c,
      "injection: k ranks of rank 0's node ping-pong with k ranks of rank %d's node at once, %lld "
      "to %lld bytes each; time of the slowest vs the node's bytes\n",
      c->inj_b[0], (long long)m[0], (long long)m[nm - 1]);
  halo_fit last = {0};
  int failed = 0;
  for (int k = 1;; k = k * 2 < c->inj_k ? k * 2 : c->inj_k) {
    const int active = (ia >= 0 && ia < k) || (ib >= 0 && ib < k);
    double t[3] = {0}, x[3] = {0};
    if (active) {
      MPI_Comm sub;
      MPI_Comm_split(c->comm, 0, c->rank, &sub);
      for (int j = 0; j < nm; j++) {
        const int bytes = (int)m[j];
        for (int it = -c->warmup; it < iters; it++) {
          MPI_Barrier(sub);
          const double t0 = MPI_Wtime();
          double dt = 0, mx = 0;
          if (ia >= 0) {
            MPI_Send(c->buf, bytes, MPI_BYTE, c->inj_b[ia], 2, c->comm);
            MPI_Recv(c->buf, bytes, MPI_BYTE, c->inj_b[ia], 2, c->comm, MPI_STATUS_IGNORE);
            dt = (MPI_Wtime() - t0) / 2;
          } else {
            MPI_Recv(c->buf, bytes, MPI_BYTE, c->inj_a[ib], 2, c->comm, MPI_STATUS_IGNORE);
            MPI_Send(c->buf, bytes, MPI_BYTE, c->inj_a[ib], 2, c->comm);
          }
          MPI_Reduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, 0, sub);
          if (it >= 0) work[it] = mx;
        }
        t[j] = driver_median(work, iters); /* meaningful on rank 0 (rank 0 of sub) */
        x[j] = (double)k * (double)m[j];
      }
      MPI_Comm_free(&sub);
    } else {
      MPI_Comm sub;
      MPI_Comm_split(c->comm, MPI_UNDEFINED, c->rank, &sub);
    }
    wait_all(c, active);
    if (c->rank == 0 && !failed) {
      halo_fit f;
      if (halo_fit_postal(x, t, nm, c->o.fit, &f) != HALO_SUCCESS) {
        snprintf(msg, MSG_LEN, "injection, k = %d: %s", k, halo_last_error());
        failed = 1;
      } else {
        say(c,
            "  k = %-4d alpha %9.3e s  beta %9.3e s/B of the node (%7.2f GB/s)  R^2 %7.4f  "
            "worst %5.1f%%%s\n",
            k, f.alpha, f.beta, f.beta > 0 ? 1e-9 / f.beta : INFINITY, f.r2, 100 * f.max_rel_err,
            clamp_text(&f));
        last = f;
      }
    }
    if (k == c->inj_k) break;
  }
  free(work);
  MPI_Bcast(&failed, 1, MPI_INT, 0, c->comm);
  if (failed) return 1;
  c->res.injection_beta = last.beta;
  say(c, "  injection.beta = %.3e s/B (k = %d)\n", last.beta, c->inj_k);
  return 0;
}

/* Every key of a group from the base set, with a note. */
static void from_base(ctx_t *c, const char *pattern, const char *why) {
  add_note(c, pattern, "%s: from %s (%s)", pattern, c->o.base, why);
  say(c, "%s: from %s (%s)\n", pattern, c->o.base, why);
}

#if HALO_HAVE_CUDA
/* Collective: halo's exchange of one message each way between rank 0 and
 * peer, transport tr, nodes of rpn ranks, at the n sizes gs; t on rank 0. */
static int pair_messages(ctx_t *c, int peer, halo_transport tr, int rpn, const int64_t *gs, int n,
                         double *t, char *msg) {
  const int active = c->rank == 0 || c->rank == peer;
  MPI_Comm pair;
  MPI_Comm_split(c->comm, active ? 0 : MPI_UNDEFINED, c->rank, &pair);
  int failed = 0;
  if (active) {
    failed =
        params_gpu_messages(pair, tr, rpn, gs, n, (int)c->o.iterations, c->warmup, t, msg, MSG_LEN);
    MPI_Comm_free(&pair);
  }
  wait_all(c, active);
  return agree(c, failed, msg);
}

/* Collective, after copy.* and cpu.* are known: staged.alpha, the staged
 * path's exchange of one message each way less what the model already
 * counts for it (a copy down, the message, a copy up), the median over the
 * sizes below eager_max; ipc.*, a fit of the ipc exchange of one message
 * each way between two ranks of one node. Returns 1 on failure. */
static int measure_staged_ipc(ctx_t *c, const int64_t *gs, const double *gd, int ng, char *msg) {
  /* staged: the farthest partner rank 0 has */
  int l = HALO_LOC_OFF_NODE;
  while (l > 0 && c->partner[l] < 0) l--;
  int ns = 0;
  while (ns < ng && gs[ns] < c->o.eager_max) ns++;
  if (c->partner[l] < 0 || ns == 0) {
    from_base(c, "staged.*", c->partner[l] < 0 ? "one rank" : "no size below eager_max");
  } else {
    const int rpn = c->o.ranks_per_node ? (l == HALO_LOC_OFF_NODE ? 1 : 2) : 0;
    double t[MAX_SIZES];
    if (pair_messages(c, c->partner[l], HALO_TRANSPORT_STAGED, rpn, gs, ns, t, msg)) return 1;
    if (c->rank == 0) {
      double rest[MAX_SIZES];
      for (int k = 0; k < ns; k++) {
        const halo_postal *m = &c->res.cpu[halo_params_protocol(&c->res, gs[k])][l];
        rest[k] = t[k] - (c->res.d2h[0].alpha + c->res.d2h[0].beta * gd[k]) -
                  (m->alpha + m->beta * gd[k]) - (c->res.h2d[0].alpha + c->res.h2d[0].beta * gd[k]);
      }
      const double med = driver_median(rest, ns);
      c->res.staged_alpha = med > 0 ? med : 0;
      say(c,
          "staged.alpha: transport staged, one message each way between ranks 0 and %d "
          "(%s), %lld to %lld bytes, less copy.*.1 and cpu.*.%s: median %.3g s%s\n",
          c->partner[l], loc_names[l], (long long)gs[0], (long long)gs[ns - 1], loc_names[l], med,
          med > 0 ? "" : " (taken as 0)");
      add_note(c, "staged.*",
               "staged.alpha: halo's staged exchange of one message each way (%s), %lld to %lld "
               "bytes, less the copies and the message the model counts: median %.3g s",
               loc_names[l], (long long)gs[0], (long long)gs[ns - 1], med);
    }
  }
  /* ipc: two ranks of rank 0's node */
  const int peer = c->partner[HALO_LOC_ON_SOCKET] >= 0 ? c->partner[HALO_LOC_ON_SOCKET]
                                                       : c->partner[HALO_LOC_ON_NODE];
  if (peer < 0) {
    from_base(c, "ipc.*", "no other rank on rank 0's node");
    return 0;
  }
  double t[MAX_SIZES];
  if (pair_messages(c, peer, HALO_TRANSPORT_IPC, c->o.ranks_per_node ? 2 : 0, gs, ng, t, msg))
    return 1;
  int failed = 0;
  if (c->rank == 0) {
    halo_fit f;
    if (halo_fit_postal(gd, t, ng, c->o.fit, &f) != HALO_SUCCESS) {
      snprintf(msg, MSG_LEN, "ipc.*: %s", halo_last_error());
      failed = 1;
    } else {
      char r[64];
      snprintf(r, sizeof r, "[%lld, %lld]", (long long)gs[0], (long long)gs[ng - 1]);
      say(c, "ipc.*: transport ipc, one message each way between ranks 0 and %d\n", peer);
      say_fit(c, "ipc", r, &f);
      c->res.ipc = (halo_postal){f.alpha, f.beta};
      c->res.have_ipc = 1;
      add_note(c, "ipc.*",
               "ipc.*: halo_exchange_begin/end + halo_plan_synchronize of one message each way, "
               "transport ipc, ranks 0 and %d",
               peer);
    }
  }
  MPI_Bcast(&failed, 1, MPI_INT, 0, c->comm);
  return failed;
}

/* Collective: copy.* and gpu.* on the devices. Returns 1 on failure. */
static int measure_gpu(ctx_t *c, char *msg) {
  char err[MSG_LEN] = "";
  const int count = params_gpu_count(err, sizeof err);
  int first_none = count > 0 ? c->size : c->rank;
  MPI_Allreduce(MPI_IN_PLACE, &first_none, 1, MPI_INT, MPI_MIN, c->comm);
  if (first_none < c->size) {
    char why[MSG_LEN + 64];
    if (c->rank == first_none && c->rank != 0) MPI_Send(err, MSG_LEN, MPI_CHAR, 0, 9, c->comm);
    if (c->rank == 0 && first_none != 0)
      MPI_Recv(err, MSG_LEN, MPI_CHAR, first_none, 9, c->comm, MPI_STATUS_IGNORE);
    err[MSG_LEN - 1] = '\0';
    snprintf(why, sizeof why, "no CUDA device visible on rank %d%s%s", first_none,
             err[0] ? ": " : "", err);
    from_base(c, "gpu.*", why);
    from_base(c, "copy.*", why);
    from_base(c, "staged.*", why);
    return 0;
  }
  int dev = -1;
  if (agree(c, params_gpu_select(c->shm_rank, &dev, msg, MSG_LEN), msg)) return 1;
  const int iters = (int)c->o.iterations;

  /* copies: rank 0 alone, then the first 4 ranks of its machine at once */
  int n4 = 0;
  if (c->rank == 0) n4 = c->shm_size >= 4;
  MPI_Bcast(&n4, 1, MPI_INT, 0, c->comm);
  for (int procs = 1; procs <= 4; procs += 3) {
    if (procs == 4 && !n4) {
      from_base(c, "copy.*.4.*", "fewer than 4 ranks on rank 0's machine");
      break;
    }
    int leader0 = c->shm_leader;
    MPI_Bcast(&leader0, 1, MPI_INT, 0, c->comm);
    const int active = procs == 1 ? c->rank == 0 : c->shm_leader == leader0 && c->shm_rank < 4;
    MPI_Comm sub;
    MPI_Comm_split(c->comm, active ? 0 : MPI_UNDEFINED, c->rank, &sub);
    double h2d[MAX_SIZES], d2h[MAX_SIZES];
    int failed = 0;
    if (active) {
      failed =
          params_gpu_copies(sub, c->sizes, c->n_sizes, iters, c->warmup, h2d, d2h, msg, MSG_LEN);
      MPI_Comm_free(&sub);
    }
    wait_all(c, active);
    if (agree(c, failed, msg)) return 1;
    if (c->rank == 0) {
      halo_fit fh, fd;
      if (halo_fit_postal(c->dsizes, h2d, c->n_sizes, c->o.fit, &fh) != HALO_SUCCESS ||
          halo_fit_postal(c->dsizes, d2h, c->n_sizes, c->o.fit, &fd) != HALO_SUCCESS) {
        snprintf(msg, MSG_LEN, "copies: %s", halo_last_error());
        failed = 1;
      } else {
        char r[64];
        snprintf(r, sizeof r, "[%lld, %lld]", (long long)c->o.min_bytes, (long long)c->o.max_bytes);
        say(c, "copy.*.%d: cudaMemcpyAsync with pinned host memory, %s (rank 0 on device %d)\n",
            procs, procs == 1 ? "1 process" : "4 processes at once", dev);
        say_fit(c, "h2d", r, &fh);
        say_fit(c, "d2h", r, &fd);
        c->res.h2d[procs == 4] = (halo_postal){fh.alpha, fh.beta};
        c->res.d2h[procs == 4] = (halo_postal){fd.alpha, fd.beta};
      }
    }
    MPI_Bcast(&failed, 1, MPI_INT, 0, c->comm);
    if (failed) return 1;
  }

  /* device-aware messages through halo: nccl when no two ranks of a machine
   * share a device, else ipc */
  int own = c->shm_size <= count;
  MPI_Allreduce(MPI_IN_PLACE, &own, 1, MPI_INT, MPI_MIN, c->comm);
  const halo_transport tr = HALO_HAVE_NCCL && own ? HALO_TRANSPORT_NCCL : HALO_TRANSPORT_IPC;
  int64_t gs[MAX_SIZES];
  double gd[MAX_SIZES];
  int ng = 0;
  for (int k = 0; k < c->n_sizes; k++)
    if (c->sizes[k] % 8 == 0) gs[ng] = c->sizes[k], gd[ng] = (double)c->sizes[k], ng++;
  int measured[HALO_N_LOC] = {0};
  char twhy[200];
  snprintf(twhy, sizeof twhy, "%s",
           tr == HALO_TRANSPORT_NCCL ? "each rank has its own GPU"
           : HALO_HAVE_NCCL          ? "ranks share a GPU"
                                     : "NCCL not compiled in");
  for (int l = 0; l < HALO_N_LOC; l++) {
    const int peer = c->partner[l];
    if (peer < 0) continue;
    const int rpn = c->o.ranks_per_node ? (l == HALO_LOC_OFF_NODE ? 1 : 2) : 0;
    double t[MAX_SIZES];
    if (pair_messages(c, peer, tr, rpn, gs, ng, t, msg)) return 1;
    if (c->rank != 0) continue;
    halo_fit fe, fr;
    const double eager = (double)c->o.eager_max;
    if (halo_fit_range(gd, t, ng, 0, eager, "eager", c->o.fit, &fe) != HALO_SUCCESS ||
        halo_fit_range(gd, t, ng, eager, INFINITY, "rendezvous", c->o.fit, &fr) != HALO_SUCCESS) {
      say(c, "gpu.*.%s: cannot fit the sizes measured (multiples of 8 bytes): %s\n", loc_names[l],
          halo_last_error());
      continue;
    }
    say(c,
        "gpu.*.%s: halo exchange of one message each way between ranks 0 and %d, transport %s "
        "(%s)\n",
        loc_names[l], peer, halo_transport_name(tr), twhy);
    char r[64];
    snprintf(r, sizeof r, "[%lld, %lld)", (long long)gs[0], (long long)c->o.eager_max);
    say_fit(c, "eager", r, &fe);
    range_text(c, HALO_PROTO_RENDEZVOUS, r, sizeof r);
    say_fit(c, "rendezvous", r, &fr);
    c->res.gpu[HALO_PROTO_EAGER][l] = (halo_postal){fe.alpha, fe.beta};
    c->res.gpu[HALO_PROTO_SHORT][l] = c->res.gpu[HALO_PROTO_EAGER][l];
    c->res.gpu[HALO_PROTO_RENDEZVOUS][l] = (halo_postal){fr.alpha, fr.beta};
    measured[l] = 1;
  }
  MPI_Bcast(measured, HALO_N_LOC, MPI_INT, 0, c->comm);
  for (int l = 0; l < HALO_N_LOC; l++) {
    if (measured[l]) continue;
    const int from = nearest(l, measured);
    char pat[48];
    snprintf(pat, sizeof pat, "gpu.*.%s.*", loc_names[l]);
    if (from < 0) {
      for (int p = 0; p < HALO_N_PROTO; p++) c->res.gpu[p][l] = c->base.gpu[p][l];
      from_base(c, pat, "could not be measured");
      continue;
    }
    for (int p = 0; p < HALO_N_PROTO; p++) c->res.gpu[p][l] = c->res.gpu[p][from];
    const char *why = c->partner[l] < 0 ? no_pair_reason(l) : "could not be fitted";
    add_note(c, pat, "gpu.*.%s: copied from gpu.*.%s (%s)", loc_names[l], loc_names[from], why);
    say(c, "gpu.*.%s: copied from gpu.*.%s (%s)\n", loc_names[l], loc_names[from], why);
  }
  add_note(c, "gpu.*",
           "gpu.*: halo_exchange_begin/end + halo_plan_synchronize of one message each way, "
           "transport %s (%s)",
           halo_transport_name(tr), twhy);
  return measure_staged_ipc(c, gs, gd, ng, msg);
}
#endif

/* ---- the file ------------------------------------------------------------ */

/* Rank 0: the set with its provenance: a header, then halo_params_write's
 * lines with each note before the keys it is about. */
static int write_file(const ctx_t *c, char *msg) {
  FILE *tmp = tmpfile();
  if (!tmp) {
    snprintf(msg, MSG_LEN, "cannot create a temporary file: %s", strerror(errno));
    return 1;
  }
  if (halo_params_write(&c->res, tmp) != HALO_SUCCESS) {
    snprintf(msg, MSG_LEN, "%s", halo_last_error());
    fclose(tmp);
    return 1;
  }
  rewind(tmp);
  char host[256] = "unknown", date[64] = "";
  gethostname(host, sizeof host);
  host[sizeof host - 1] = '\0';
  const time_t now = time(NULL);
  struct tm tm_utc;
  if (gmtime_r(&now, &tm_utc)) strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", &tm_utc);
  FILE *f = c->out;
  fprintf(f, "# measured by halo params measure on %s, %s: %d ranks, %d nodes", host, date, c->size,
          c->n_nodes);
  if (c->o.ranks_per_node)
    fprintf(f, " (virtual, %lld rank%s each)", (long long)c->o.ranks_per_node,
            c->o.ranks_per_node == 1 ? "" : "s");
  fprintf(f, "\n# command: halo params");
  for (int i = 0; i < c->argc; i++) fprintf(f, " %s", c->argv[i]);
  fprintf(f,
          "\n# fits: least squares of the %s errors per protocol range, sizes %lld to %lld "
          "bytes, median of %lld round trips each\n",
          c->o.fit == HALO_FIT_RELATIVE ? "relative" : "absolute", (long long)c->o.min_bytes,
          (long long)c->o.max_bytes, (long long)c->o.iterations);
  char line[1024];
  int last = -1;
  while (fgets(line, sizeof line, tmp)) {
    int which = -1;
    if (line[0] != '#') {
      char key[64];
      size_t k = 0;
      while (line[k] && line[k] != ' ' && line[k] != '=' && line[k] != '\n' && k + 1 < sizeof key)
        key[k] = line[k], k++;
      key[k] = '\0';
      for (int n = 0; n < c->n_notes && which < 0; n++)
        if (fnmatch(c->notes[n].pattern, key, 0) == 0) which = n;
    }
    if (which >= 0 && which != last) fprintf(f, "# %s\n", c->notes[which].text);
    last = which;
    fputs(line, f);
  }
  fclose(tmp);
  if (fflush(f) != 0 || ferror(f)) {
    snprintf(msg, MSG_LEN, "cannot write %s: %s", c->o.out ? c->o.out : "stdout", strerror(errno));
    return 1;
  }
  return 0;
}

/* ---- halo params measure ---------------------------------------------------- */

static int measure(ctx_t *c) {
  char msg[MSG_LEN] = "";
  int code = parse_measure(c);
  if (code >= 0) return code;
  c->prefix = c->o.out ? "" : "# ";
  /* the base set and the output file, before anything is measured */
  int failed = 0;
  if (c->rank == 0) {
    if (halo_params_load(c->o.base, &c->base) != HALO_SUCCESS) {
      snprintf(msg, MSG_LEN, "--base: %s", halo_last_error());
      failed = 1;
    } else if (c->o.out && !(c->out = fopen(c->o.out, "w"))) {
      snprintf(msg, MSG_LEN, "cannot write %s: %s", c->o.out, strerror(errno));
      failed = 1;
    } else if (!c->o.out) {
      c->out = stdout;
    }
  }
  MPI_Bcast(&failed, 1, MPI_INT, 0, c->comm);
  if (failed) {
    driver_error(c->rank, "params measure", "%s", msg);
    return EXIT_ERROR;
  }
  MPI_Bcast(&c->base, (int)sizeof c->base, MPI_BYTE, 0, c->comm);
  c->res = c->base;
  snprintf(c->res.name, sizeof c->res.name, "%s", c->o.name);
  c->res.short_max = c->o.short_max;
  c->res.eager_max = c->o.eager_max;
  add_note(c, "*_max",
           "short_max, eager_max: the protocol switches the fits assumed (--short-max, "
           "--eager-max), not measured");

  c->buf = malloc((size_t)c->o.max_bytes);
  if (c->buf) memset(c->buf, 1, (size_t)c->o.max_bytes);
  if (agree_alloc(c, !c->buf, msg, "a message buffer of --max-bytes")) goto fail;
  if (find_topology(c, msg)) goto fail;
  c->res.sockets_per_node = c->sockets_per_node;
  if (!c->packages_known)
    add_note(c, "sockets_per_node",
             "sockets_per_node: the socket of some rank is unknown (sched_getcpu or "
             "/sys/devices/system/cpu/cpuN/topology); one socket assumed for it");
  char virt[64] = "";
  if (c->o.ranks_per_node)
    snprintf(virt, sizeof virt, " (virtual: %lld consecutive rank%s each)",
             (long long)c->o.ranks_per_node, c->o.ranks_per_node == 1 ? "" : "s");
  say(c, "halo params measure: %d ranks on %d node%s%s, %d socket%s per node seen%s\n", c->size,
      c->n_nodes, c->n_nodes == 1 ? "" : "s", virt, c->sockets_per_node,
      c->sockets_per_node == 1 ? "" : "s", c->packages_known ? "" : " (some unknown)");
  say(c,
      "sizes: %d from %lld to %lld bytes; per size the median of %lld timed round trips "
      "after %d untimed; fits: %s least squares\n",
      c->n_sizes, (long long)c->o.min_bytes, (long long)c->o.max_bytes, (long long)c->o.iterations,
      c->warmup, c->o.fit == HALO_FIT_RELATIVE ? "relative" : "absolute");
  if (measure_cpu(c, msg)) goto fail;
  if (measure_injection(c, msg)) goto fail;
#if HALO_HAVE_CUDA
  if (measure_gpu(c, msg)) goto fail;
#else
  from_base(c, "gpu.*", "halo built without CUDA");
  from_base(c, "copy.*", "halo built without CUDA");
  from_base(c, "staged.*", "halo built without CUDA");
#endif
  failed = c->rank == 0 && write_file(c, msg);
  MPI_Bcast(&failed, 1, MPI_INT, 0, c->comm);
  if (failed) goto fail;
  if (c->o.out) say(c, "wrote %s (parameter set '%s')\n", c->o.out, c->o.name);
  code = EXIT_OK;
  goto done;
fail:
  driver_error(c->rank, "params measure", "%s", msg);
  code = EXIT_ERROR;
done:
  if (c->rank == 0 && c->out && c->out != stdout) {
    if (fclose(c->out) != 0 && code == EXIT_OK) {
      driver_error(0, "params measure", "cannot write %s: %s", c->o.out, strerror(errno));
      code = EXIT_ERROR;
    }
  }
  MPI_Bcast(&code, 1, MPI_INT, 0, c->comm);
  free(c->buf);
  free(c->inj_a);
  free(c->inj_b);
  return code;
}

int cmd_params(int argc, char **argv, MPI_Comm comm) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    if (rank == 0) usage();
    return argc < 2 ? EXIT_USAGE : EXIT_OK;
  }
  if (strcmp(argv[1], "show") == 0) return cmd_show(argc - 1, argv + 1, comm);
  if (strcmp(argv[1], "measure") == 0) {
    ctx_t c;
    memset(&c, 0, sizeof c);
    c.comm = comm;
    c.prefix = "";
    MPI_Comm_rank(comm, &c.rank);
    MPI_Comm_size(comm, &c.size);
    c.argc = argc - 1, c.argv = argv + 1;
    return measure(&c);
  }
  driver_error(rank, "params",
               "unknown command '%s' (commands: measure, show; see halo params "
               "--help)",
               argv[1]);
  return EXIT_USAGE;
}
