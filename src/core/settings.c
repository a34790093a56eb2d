/* Settings: the options of a plan, the environment variables that may give
 * them (read through env.c, the one file of the library that reads the
 * environment), their checks and their agreement across ranks. */
#define _GNU_SOURCE /* gethostname */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "halo/model.h"
#include "env.h"
#include "settings.h"

static const char *const kernel_words[] = {"halo", "cusparse", NULL};
static const char *const stream_words[] = {"blocking", "nonblocking", NULL};
static const char *const signal_words[] = {"host", "device", "auto", NULL};
/* HALO_AUTOTUNE: "model" (0), or a number of timed calls; "close" is the
 * default, kept as a value no caller can give (HALO_AUTOTUNE_CLOSE) */
static const char *const autotune_words[] = {"model", NULL};

halo_status halo_settings_resolve(const halo_plan_options *opts, halo_settings *s) {
  halo_plan_options o = opts ? *opts : halo_plan_options_default();
  int64_t v = 0;
  memset(s, 0, sizeof *s);
  if (!halo_strategy_valid(o.strategy))
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "unknown strategy %d", (int)o.strategy);
  if (o.ranks_per_node < 0)
    return HALO_ERROR(HALO_ERR_INVALID_ARG,
                      "ranks_per_node = %d: must be 0 (nodes of MPI) or positive",
                      o.ranks_per_node);
  if (o.ranks_per_node == 0) {
    HALO_CHECK(halo_env_int("ranks_per_node", -1, "HALO_RANKS_PER_NODE", 0, 1, INT_MAX, 0, NULL,
                           &v));
    o.ranks_per_node = (int)v;
  }
  if (o.message_cap < (int64_t)sizeof(double) || o.message_cap > (INT64_C(1) << 40))
    return HALO_ERROR(HALO_ERR_INVALID_ARG,
                      "message_cap = %lld bytes: must be between 8 (one value) and 2^40",
                      (long long)o.message_cap);
  if (o.remove_duplicates != 0 && o.remove_duplicates != 1)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "remove_duplicates = %d: must be 0 or 1",
                      o.remove_duplicates);
  if (o.memory != HALO_MEMORY_AUTO && o.memory != HALO_MEMORY_HOST &&
      o.memory != HALO_MEMORY_DEVICE)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "unknown memory kind %d", (int)o.memory);
  if ((int)o.transport < 0 || (int)o.transport >= HALO_N_TRANSPORTS)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "unknown transport %d", (int)o.transport);
  const char *tv = o.transport == HALO_TRANSPORT_AUTO ? halo_env_value("HALO_TRANSPORT") : NULL;
  if (tv) { /* the name without the white space around it */
    char name[64], why[320];
    snprintf(name, sizeof name, "%.*s", (int)halo_env_length(tv), tv);
    if (halo_transport_from_name(name, &o.transport) != HALO_SUCCESS) {
      snprintf(why, sizeof why, "%s", halo_last_error()); /* names the registry's transports */
      return HALO_ERROR(HALO_ERR_INVALID_ARG, "HALO_TRANSPORT=%s: %s", tv, why);
    }
    s->transport_env = 1;
  }
  if (o.device_id < -1)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "device_id = %d: -1 (choose) or a device number",
                      o.device_id);
  if (o.autotune < -1)
    return HALO_ERROR(HALO_ERR_INVALID_ARG,
                      "autotune = %d: 0 (choose by the model), the number of timed calls per "
                      "candidate, or -1 (HALO_AUTOTUNE, else time the candidates the model cannot "
                      "tell apart)",
                      o.autotune);
  HALO_CHECK(halo_env_int("autotune", o.autotune, "HALO_AUTOTUNE", HALO_AUTOTUNE_CLOSE, 0, 1000000,
                         0, autotune_words, &v));
  o.autotune = (int)v;
  HALO_CHECK(halo_env_int("max_exchanges", o.max_exchanges, NULL, 1, 1, HALO_MAX_EXCHANGES, 0, NULL,
                         &v));
  o.max_exchanges = (int)v;
  HALO_CHECK(halo_env_int("reverse", o.reverse, NULL, 1, 0, 1, 0, NULL, &v));
  o.reverse = (int)v;
  s->params = o.params && *o.params ? o.params : halo_env_value("HALO_PARAMS");
  if (halo_params_cache_path(s->params_file, sizeof s->params_file) != HALO_SUCCESS)
    s->params_file[0] = '\0'; /* a path too long: no file of the machine */
  HALO_CHECK(halo_env_int("gpu_aware_mpi", o.gpu_aware_mpi, "HALO_GPU_AWARE_MPI", -1, 0, 1, 0, NULL,
                         &v));
  s->gpu_aware_mpi = (int)v;
  HALO_CHECK(halo_env_int("local_kernel", o.local_kernel, "HALO_LOCAL_KERNEL",
                         HALO_LOCAL_KERNEL_HALO, 0, 1, 0, kernel_words, &v));
  s->local_kernel = (int)v;
  HALO_CHECK(halo_env_int("cusparse_alg", o.cusparse_alg, "HALO_CUSPARSE_ALG", 2, 1, 2, 0, NULL, &v));
  s->cusparse_alg = (int)v;
  HALO_CHECK(halo_env_int("spmv_group", o.spmv_group, "HALO_SPMV_GROUP", 0, 0, 32, 1, NULL, &v));
  s->spmv_group = (int)v;
  HALO_CHECK(halo_env_int("spmv_unroll", o.spmv_unroll, "HALO_SPMV_UNROLL", 4, 1, 4, 1, NULL, &v));
  s->spmv_unroll = (int)v;
  HALO_CHECK(halo_env_int("spmv_max_blocks", o.spmv_max_blocks, "HALO_SPMV_MAX_BLOCKS", 0, 0,
                         INT32_MAX, 0, NULL, &s->spmv_max_blocks));
  HALO_CHECK(
      halo_env_int("spmv_carveout", o.spmv_carveout, "HALO_SPMV_CARVEOUT", -1, 0, 100, 0, NULL, &v));
  s->spmv_carveout = (int)v;
  HALO_CHECK(halo_env_int("spmv_long_row", o.spmv_long_row, "HALO_SPMV_LONG_ROW", 0, 0, INT64_MAX,
                         0, NULL, &s->spmv_long_row));
  HALO_CHECK(halo_env_int("product_first", o.product_first, "HALO_SPMV_PRODUCT_FIRST", 1, 0, 1, 0,
                         NULL, &v));
  s->product_first = (int)v;
  HALO_CHECK(halo_env_int("compute_stream", o.compute_stream, "HALO_COMPUTE_STREAM", 0, 0, 1, 0,
                         stream_words, &v));
  s->compute_nonblocking = (int)v;
  HALO_CHECK(halo_env_int("timeline", o.timeline, "HALO_TIMELINE", 0, 0, 1, 0, NULL, &v));
  s->timeline = (int)v;
  HALO_CHECK(halo_env_int("copy_timing", o.copy_timing, "HALO_EXEC_TIMING", 0, 0, 1, 0, NULL, &v));
  s->copy_timing = (int)v;
  HALO_CHECK(halo_env_int("ipc_signal", o.ipc_signal, "HALO_IPC_SIGNAL", 2, 0, 2, 0, signal_words,
                         &v));
  s->ipc_signal = (int)v;
  HALO_CHECK(halo_env_int("max_message_count", o.max_message_count, "HALO_DEBUG_MAX_COUNT",
                         INT_MAX, 1, INT_MAX, 0, NULL, &v));
  s->max_count = (int)v;
  HALO_CHECK(halo_env_int("exchange_timeout_ms", o.exchange_timeout_ms, "HALO_EXCHANGE_TIMEOUT", 0,
                         0, INT64_C(1) << 40, 0, NULL, &s->timeout_ms));
  o.gpu_aware_mpi = s->gpu_aware_mpi;
  o.local_kernel = (halo_local_kernel)s->local_kernel;
  o.cusparse_alg = s->cusparse_alg;
  o.spmv_group = s->spmv_group;
  o.spmv_unroll = s->spmv_unroll;
  o.spmv_max_blocks = s->spmv_max_blocks;
  o.spmv_carveout = s->spmv_carveout;
  o.spmv_long_row = s->spmv_long_row;
  o.product_first = s->product_first;
  o.compute_stream = s->compute_nonblocking;
  o.timeline = s->timeline;
  o.copy_timing = s->copy_timing;
  o.ipc_signal = s->ipc_signal;
  o.max_message_count = s->max_count;
  o.exchange_timeout_ms = s->timeout_ms;
  o.params = s->params;
  s->opts = o;
  return HALO_SUCCESS;
}

/* FNV-1a of a string, for comparing names across ranks. */
static int64_t hash_string(const char *t) {
  uint64_t h = UINT64_C(1469598103934665603);
  for (; *t; t++) h = (h ^ (unsigned char)*t) * UINT64_C(1099511628211);
  return (int64_t)(h >> 1);
}

/* An option's value as the user gives it: a name for the enumerations, a
 * word for autotune's resolved default. */
static void option_value(const char *name, int64_t v, char *buf, size_t len) {
  const char *word = NULL;
  if (strcmp(name, "strategy") == 0)
    word = halo_strategy_name((halo_strategy)v);
  else if (strcmp(name, "memory") == 0)
    word = halo_memory_name((halo_memory)v);
  else if (strcmp(name, "transport") == 0)
    word = halo_transport_name((halo_transport)v);
  else if (strcmp(name, "autotune") == 0 && v == HALO_AUTOTUNE_CLOSE)
    word = "'close' (the default: time the candidates the model cannot tell apart)";
  if (word && strcmp(word, "unknown") != 0)
    snprintf(buf, len, "%s", word);
  else
    snprintf(buf, len, "%lld", (long long)v);
}

/* The parameter sets differ: the same message on every rank, naming rank 0's
 * and the first rank whose set is another. Collective. */
static halo_status params_differ(MPI_Comm comm, const halo_settings *s) {
  enum { LEN = 256 };
  char mine[LEN], first[LEN], other[LEN];
  int rank, size;
  HALO_MPI(MPI_Comm_rank(comm, &rank));
  HALO_MPI(MPI_Comm_size(comm, &size));
  snprintf(mine, LEN, "%s", s->params ? s->params : "the machine's file");
  memcpy(first, mine, LEN);
  HALO_MPI(MPI_Bcast(first, LEN, MPI_CHAR, 0, comm));
  int at = strcmp(first, mine) != 0 ? rank : size, r = size;
  HALO_MPI(MPI_Allreduce(&at, &r, 1, MPI_INT, MPI_MIN, comm));
  if (r == size) r = 0; /* the same text, told apart past its first LEN bytes */
  memcpy(other, mine, LEN);
  HALO_MPI(MPI_Bcast(other, LEN, MPI_CHAR, r, comm));
  return HALO_ERROR(HALO_ERR_INCONSISTENT,
                    "plan options differ across ranks: params is '%s' on rank 0 and '%s' on "
                    "rank %d (the option, or HALO_PARAMS)",
                    first, other, r);
}

halo_status halo_settings_agree(MPI_Comm comm, const halo_settings *s) {
  const halo_plan_options *o = &s->opts;
  /* each option, and the environment variable that may give it */
  const char *names[][2] = {{"strategy", NULL},
                            {"ranks_per_node", "HALO_RANKS_PER_NODE"},
                            {"message_cap", NULL},
                            {"remove_duplicates", NULL},
                            {"memory", NULL},
                            {"transport", "HALO_TRANSPORT"},
                            {"autotune", "HALO_AUTOTUNE"},
                            {"max_exchanges", NULL},
                            {"reverse", NULL},
                            {"gpu_aware_mpi", "HALO_GPU_AWARE_MPI"},
                            {"local_kernel", "HALO_LOCAL_KERNEL"},
                            {"cusparse_alg", "HALO_CUSPARSE_ALG"},
                            {"spmv_group", "HALO_SPMV_GROUP"},
                            {"spmv_unroll", "HALO_SPMV_UNROLL"},
                            {"spmv_max_blocks", "HALO_SPMV_MAX_BLOCKS"},
                            {"spmv_carveout", "HALO_SPMV_CARVEOUT"},
                            {"spmv_long_row", "HALO_SPMV_LONG_ROW"},
                            {"product_first", "HALO_SPMV_PRODUCT_FIRST"},
                            {"compute_stream", "HALO_COMPUTE_STREAM"},
                            {"timeline", "HALO_TIMELINE"},
                            {"copy_timing", "HALO_EXEC_TIMING"},
                            {"ipc_signal", "HALO_IPC_SIGNAL"},
                            {"max_message_count", "HALO_DEBUG_MAX_COUNT"},
                            {"exchange_timeout_ms", "HALO_EXCHANGE_TIMEOUT"},
                            {"params", "HALO_PARAMS"}};
  enum { N = sizeof names / sizeof names[0] };
  const int64_t v[N] = {o->strategy,         o->ranks_per_node,   o->message_cap,
                        o->remove_duplicates, o->memory,          o->transport,
                        o->autotune,         o->max_exchanges,    o->reverse,
                        s->gpu_aware_mpi,    s->local_kernel,     s->cusparse_alg,
                        s->spmv_group,       s->spmv_unroll,      s->spmv_max_blocks,
                        s->spmv_carveout,    s->spmv_long_row,    s->product_first,
                        s->compute_nonblocking,
                        s->timeline,         s->copy_timing,      s->ipc_signal,
                        s->max_count,         s->timeout_ms,
                        hash_string(s->params ? s->params : "(the machine's file)")};
  int64_t lo[N], hi[N];
  HALO_MPI(MPI_Allreduce(v, lo, N, MPI_INT64_T, MPI_MIN, comm));
  HALO_MPI(MPI_Allreduce(v, hi, N, MPI_INT64_T, MPI_MAX, comm));
  for (int i = 0; i < N; i++) {
    if (lo[i] == hi[i]) continue;
    if (i == N - 1) return params_differ(comm, s);
    char from[64] = "", a[128], b[128];
    if (names[i][1]) snprintf(from, sizeof from, " (the option, or %s)", names[i][1]);
    option_value(names[i][0], lo[i], a, sizeof a);
    option_value(names[i][0], hi[i], b, sizeof b);
    return HALO_ERROR(HALO_ERR_INCONSISTENT,
                      "plan options differ across ranks: %s is %s on some ranks and %s on "
                      "others%s",
                      names[i][0], a, b, from);
  }
  return HALO_SUCCESS;
}

/* The machine's name in its parameter file: the host name up to its first
 * '.', without trailing digits, '-' and '_' (lassen708 -> lassen), so that
 * the nodes of one cluster share the file. */
static void machine_name(char *buf, size_t len) {
  char host[256] = "";
  if (gethostname(host, sizeof host) != 0) host[0] = '\0';
  host[sizeof host - 1] = '\0';
  size_t n = strcspn(host, ".");
  while (n > 0 && (isdigit((unsigned char)host[n - 1]) || host[n - 1] == '-' || host[n - 1] == '_'))
    n--;
  host[n] = '\0';
  for (size_t i = 0; i < n; i++)
    if (!isalnum((unsigned char)host[i]) && host[i] != '-' && host[i] != '_') host[i] = '_';
  snprintf(buf, len, "%s", n ? host : "host");
}

halo_status halo_params_cache_path(char *buf, size_t len) {
  if (!buf || len == 0)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_params_cache_path: no buffer");
  char machine[256];
  machine_name(machine, sizeof machine);
  const char *xdg = halo_env_value("XDG_CACHE_HOME"), *home = halo_env_value("HOME");
  int w;
  if (xdg)
    w = snprintf(buf, len, "%s/halo/params-%s", xdg, machine);
  else if (home)
    w = snprintf(buf, len, "%s/.cache/halo/params-%s", home, machine);
  else
    w = snprintf(buf, len, "%s", "");
  if (w < 0 || (size_t)w >= len)
    return HALO_ERROR(HALO_ERR_INVALID_ARG,
                      "the parameter file's path (XDG_CACHE_HOME or HOME) is longer than %zu "
                      "characters",
                      len - 1);
  return HALO_SUCCESS;
}
