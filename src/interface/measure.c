/* halo_params_measure(): the model's machine parameters measured and fitted
 * on the ranks of a communicator, BenchPress-style (include/halo/model.h,
 * DESIGN.md §6), and the measured set written with its provenance. This
 * file: the options, the order of the measurements, the report, the notes
 * and the file; the measurements are measure_mpi.c's, measure_host.c's and
 * measure_cuda.c's, with what they share in measure_util.c. */
#define _POSIX_C_SOURCE 200809L /* fmemopen, nanosleep */
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "interface/measure.h"

/* ---- the options ------------------------------------------------------------ */

halo_params_measure_options halo_params_measure_options_default(void) {
  return (halo_params_measure_options){.ranks_per_node = 0,
                                       .min_bytes = 8,
                                       .max_bytes = 16 << 20,
                                       .iterations = 100,
                                       .short_max = 256,
                                       .eager_max = 16384,
                                       .fit = HALO_FIT_RELATIVE,
                                       .base = NULL,
                                       .name = NULL,
                                       .device = -1,
                                       .report = NULL,
                                       .report_arg = NULL};
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

/* The checks of halo_params_measure_check(); the sizes of the sweep (n_p, sizes). */
static halo_status check_options(const halo_params_measure_options *o, int64_t *sizes, int *n_p) {
  const long long big = (long long)HALO_MEASURE_MAX_BYTES;
  if (!o) return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_params_measure_check: NULL options");
  if (o->ranks_per_node < 0)
    return HALO_ERROR(HALO_ERR_INVALID_ARG,
                      "ranks_per_node %d: expected 0 (the nodes of MPI) or more",
                      o->ranks_per_node);
  if (o->min_bytes < 1 || o->min_bytes > big)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "min_bytes %lld: expected 1 to %lld",
                      (long long)o->min_bytes, big);
  if (o->max_bytes < 1 || o->max_bytes > big)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "max_bytes %lld: expected 1 to %lld",
                      (long long)o->max_bytes, big);
  if (o->iterations < 1)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "iterations %d: expected 1 or more", o->iterations);
  if (o->short_max < 1 || o->eager_max < 1)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "short_max %lld, eager_max %lld: expected 1 or more",
                      (long long)o->short_max, (long long)o->eager_max);
  if (o->fit != HALO_FIT_ABSOLUTE && o->fit != HALO_FIT_RELATIVE)
    return HALO_ERROR(HALO_ERR_INVALID_ARG,
                      "fit %d: expected HALO_FIT_ABSOLUTE or HALO_FIT_RELATIVE", (int)o->fit);
  if (o->device != -1 && o->device != 0)
    return HALO_ERROR(HALO_ERR_INVALID_ARG,
                      "device %d: expected -1 (measure when every rank sees a device) or 0 (never)",
                      o->device);
  if (o->name) {
    const size_t n = strlen(o->name);
    if (n == 0 || n > 63 ||
        strspn(o->name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") != n)
      return HALO_ERROR(HALO_ERR_INVALID_ARG,
                        "name '%s': expected a word of at most 63 letters, digits, '-', '_' or '.'",
                        o->name);
  }
  if (o->min_bytes >= o->max_bytes)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "min_bytes %lld must be below max_bytes %lld",
                      (long long)o->min_bytes, (long long)o->max_bytes);
  if (o->short_max >= o->eager_max)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "short_max %lld must be below eager_max %lld",
                      (long long)o->short_max, (long long)o->eager_max);
  const int n = make_sizes(o->min_bytes, o->max_bytes, sizes);
  int count[HALO_N_PROTO] = {0};
  for (int k = 0; k < n; k++)
    count[sizes[k] < o->short_max ? 0 : sizes[k] < o->eager_max ? 1 : 2]++;
  for (int p = 0; p < HALO_N_PROTO; p++)
    if (count[p] < 2)
      return HALO_ERROR(HALO_ERR_INVALID_ARG,
                        "the %s range of sizes holds %d of the %d sizes from %lld to %lld bytes; "
                        "every protocol range needs two (see min_bytes, max_bytes, short_max, "
                        "eager_max)",
                        halo_measure_proto_names[p], count[p], n, (long long)o->min_bytes,
                        (long long)o->max_bytes);
  *n_p = n;
  return HALO_SUCCESS;
}

halo_status halo_params_measure_check(const halo_params_measure_options *opts) {
  int64_t sizes[HALO_MEASURE_MAX_SIZES];
  int n;
  return check_options(opts, sizes, &n);
}

/* The options every rank must give alike (base and name are rank 0's). */
static halo_status agree_options(const halo_measure *c) {
  enum { N = 8 };
  static const char *const names[N] = {"ranks_per_node", "min_bytes", "max_bytes", "iterations",
                                       "short_max",      "eager_max", "fit",       "device"};
  const halo_params_measure_options *o = &c->o;
  int64_t v[N] = {o->ranks_per_node, o->min_bytes, o->max_bytes,    o->iterations,
                  o->short_max,      o->eager_max, (int64_t)o->fit, o->device};
  int64_t lo[N], hi[N];
  HALO_MPI(MPI_Allreduce(v, lo, N, MPI_INT64_T, MPI_MIN, c->comm));
  HALO_MPI(MPI_Allreduce(v, hi, N, MPI_INT64_T, MPI_MAX, c->comm));
  for (int i = 0; i < N; i++)
    if (lo[i] != hi[i])
      return HALO_ERROR(HALO_ERR_INCONSISTENT,
                        "halo_params_measure: option %s differs across ranks (%lld to %lld)",
                        names[i], (long long)lo[i], (long long)hi[i]);
  return HALO_SUCCESS;
}

/* ---- the measurement ---------------------------------------------------------- */

/* The base set (rank 0 reads it), the measured set's first values and notes,
 * the message buffer. */
static halo_status start(halo_measure *c) {
  halo_status st = HALO_SUCCESS;
  if (c->rank == 0) {
    st = halo_params_load(c->o.base, &c->base);
    if (st != HALO_SUCCESS) st = HALO_ERROR(st, "base: %s", halo_last_error());
  }
  HALO_CHECK(halo_agree(c->comm, st));
  HALO_MPI(MPI_Bcast(&c->base, (int)sizeof c->base, MPI_BYTE, 0, c->comm));
  c->res.params = c->base;
  snprintf(c->res.params.name, sizeof c->res.params.name, "%s", c->o.name);
  c->res.params.short_max = c->o.short_max;
  c->res.params.eager_max = c->o.eager_max;
  halo_measure_note(c, "*_max",
                    "short_max, eager_max: the protocol switches the fits assumed (--short-max, "
                    "--eager-max), not measured");
  st = HALO_ALLOC(c->buf, c->o.max_bytes);
  if (st == HALO_SUCCESS) memset(c->buf, 1, (size_t)c->o.max_bytes);
  return halo_agree(c->comm, st);
}

static void say_start(halo_measure *c) {
  char virt[64] = "";
  if (c->o.ranks_per_node)
    snprintf(virt, sizeof virt, " (virtual: %d consecutive rank%s each)", c->o.ranks_per_node,
             c->o.ranks_per_node == 1 ? "" : "s");
  halo_measure_say(c, "halo params measure: %d ranks on %d node%s%s, %d socket%s per node seen%s\n",
                   c->size, c->n_nodes, c->n_nodes == 1 ? "" : "s", virt, c->sockets_per_node,
                   c->sockets_per_node == 1 ? "" : "s", c->packages_known ? "" : " (some unknown)");
  halo_measure_say(c,
                   "sizes: %d from %lld to %lld bytes; per size the median of %d timed round "
                   "trips after %d untimed; fits: %s least squares\n",
                   c->n_sizes, (long long)c->o.min_bytes, (long long)c->o.max_bytes,
                   c->o.iterations, c->warmup,
                   c->o.fit == HALO_FIT_RELATIVE ? "relative" : "absolute");
}

static halo_status measure(halo_measure *c) {
  HALO_CHECK(start(c));
  HALO_CHECK(halo_measure_topology(c));
  c->res.params.sockets_per_node = c->sockets_per_node;
  c->res.ranks = c->size;
  c->res.nodes = c->n_nodes;
  if (!c->packages_known)
    halo_measure_note(c, "sockets_per_node",
                      "sockets_per_node: the socket of some rank is unknown (sched_getcpu or "
                      "/sys/devices/system/cpu/cpuN/topology); one socket assumed for it");
  say_start(c);
  HALO_CHECK(halo_measure_cpu(c));
  HALO_CHECK(halo_measure_injection(c));
  HALO_CHECK(halo_measure_host_transports(c));
  if (c->o.device == 0) {
    halo_measure_device_from_base(c, "option device = 0");
    return HALO_SUCCESS;
  }
  const halo_status st = halo_measure_device(c);
  if (st != HALO_ERR_NOT_COMPILED) return st;
  /* no CUDA module on some rank (agreed): the device's groups from the base set */
  char why[HALO_ERROR_LEN + 32];
  snprintf(why, sizeof why, "no CUDA module: %s", halo_last_error());
  halo_error_clear();
  halo_measure_device_from_base(c, why);
  return HALO_SUCCESS;
}

halo_status halo_params_measure(MPI_Comm comm, const halo_params_measure_options *opts,
                                halo_params_measured *m) {
  halo_status st = HALO_SUCCESS;
  halo_measure *c = NULL;
  MPI_Comm dup = MPI_COMM_NULL;
  HALO_CHECK(halo_comm_check(comm, "halo_params_measure: the communicator"));
  int rank, size;
  HALO_TRY_MPI(MPI_Comm_dup(comm, &dup));
  HALO_TRY_MPI(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
  HALO_TRY_MPI(MPI_Comm_rank(dup, &rank));
  HALO_TRY_MPI(MPI_Comm_size(dup, &size));
  st = HALO_CALLOC(c, 1); /* the state holds the set: too large for some stacks */
  if (st == HALO_SUCCESS) {
    c->comm = dup;
    c->rank = rank, c->size = size;
    c->o = opts ? *opts : halo_params_measure_options_default();
    if (!c->o.base) c->o.base = "lassen";
    if (!c->o.name) c->o.name = "measured";
    c->partner[0] = c->partner[1] = c->partner[2] = c->ipc_partner = -1;
    st = check_options(&c->o, c->sizes, &c->n_sizes);
  }
  if (st == HALO_SUCCESS && !m)
    st = HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_params_measure: NULL result");
  if (st == HALO_SUCCESS && size < 2)
    st = HALO_ERROR(HALO_ERR_INVALID_ARG,
                    "halo_params_measure needs at least 2 ranks: it measures messages between "
                    "ranks");
  HALO_TRY(halo_agree(dup, st));
  HALO_TRY(halo_agree(dup, agree_options(c)));
  for (int k = 0; k < c->n_sizes; k++) c->dsizes[k] = (double)c->sizes[k];
  c->warmup = 1 + c->o.iterations / 10;
  HALO_TRY(measure(c));
  /* every rank gets rank 0's set, bit for bit */
  HALO_TRY_MPI(MPI_Bcast(&c->res, (int)sizeof c->res, MPI_BYTE, 0, dup));
  *m = c->res;
cleanup:
  if (c) {
    halo_free(c->buf);
    halo_free(c->inj_a);
    halo_free(c->inj_b);
    halo_free(c);
  }
  if (dup != MPI_COMM_NULL) MPI_Comm_free(&dup);
  return st;
}

/* ---- the file ------------------------------------------------------------------ */

/* halo_params_write's lines, in memory: far more than a set's 46 keys need */
#define WRITTEN_MAX (64 << 10)

/* The note about a key line (its first matching note), or -1. */
static int note_of(const halo_params_measured *m, const char *line) {
  if (line[0] == '#') return -1;
  char key[64];
  size_t k = 0;
  while (line[k] && line[k] != ' ' && line[k] != '=' && line[k] != '\n' && k + 1 < sizeof key)
    key[k] = line[k], k++;
  key[k] = '\0';
  for (int n = 0; n < m->n_notes && n < HALO_PARAMS_MAX_NOTES; n++)
    if (fnmatch(m->note[n].keys, key, 0) == 0) return n;
  return -1;
}

halo_status halo_params_write_measured(const halo_params_measured *m, const char *header, FILE *f) {
  halo_status st = HALO_SUCCESS;
  char *text = NULL;
  FILE *mem = NULL;
  if (!m || !f)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_params_write_measured: NULL argument");
  HALO_TRY(HALO_CALLOC(text, WRITTEN_MAX));
  if (!(mem = fmemopen(text, WRITTEN_MAX, "w")))
    HALO_FAIL(HALO_ERR_IO, "cannot open a stream in memory: %s", strerror(errno));
  HALO_TRY(halo_params_write(&m->params, mem));
  const long used = ftell(mem);
  fclose(mem);
  mem = NULL;
  if (used < 0 || used >= WRITTEN_MAX - 1)
    HALO_FAIL(HALO_ERR_INTERNAL, "the parameter set takes more than %d bytes", WRITTEN_MAX);
  text[used] = '\0';
  errno = 0;
  for (const char *h = header; h && *h;) { /* each header line as a comment */
    const size_t n = strcspn(h, "\n");
    if (n)
      fprintf(f, "# %.*s\n", (int)n, h);
    else
      fputs("#\n", f);
    h += n + (h[n] == '\n');
  }
  int last = -1;
  for (char *line = text; *line;) {
    char *end = strchr(line, '\n');
    const size_t n = end ? (size_t)(end - line) + 1 : strlen(line);
    const char keep = line[n];
    line[n] = '\0';
    const int which = note_of(m, line);
    if (which >= 0 && which != last) fprintf(f, "# %s\n", m->note[which].text);
    last = which;
    fputs(line, f);
    line[n] = keep;
    line += n;
  }
  if (fflush(f) != 0 || ferror(f))
    HALO_FAIL(HALO_ERR_IO, "cannot write the parameter set '%s': %s", m->params.name,
              errno ? strerror(errno) : "write error");
cleanup:
  if (mem) fclose(mem);
  halo_free(text);
  return st;
}

halo_status halo_params_cache_open(char *path, size_t len, FILE **f_p) {
  if (!path || len == 0 || !f_p)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_params_cache_open: NULL argument");
  *f_p = NULL;
  HALO_CHECK(halo_params_cache_path(path, len));
  if (!path[0])
    return HALO_ERROR(HALO_ERR_IO,
                      "no file for this machine: neither XDG_CACHE_HOME nor HOME is set");
  for (char *p = path + 1; *p; p++) /* mkdir -p of its directory */
    if (*p == '/') {
      *p = '\0';
      const int bad = mkdir(path, 0755) != 0 && errno != EEXIST;
      *p = '/';
      if (bad)
        return HALO_ERROR(HALO_ERR_IO, "cannot make the directory of %s: %s", path,
                          strerror(errno));
    }
  if (!(*f_p = fopen(path, "w")))
    return HALO_ERROR(HALO_ERR_IO, "cannot write %s: %s", path, strerror(errno));
  return HALO_SUCCESS;
}
