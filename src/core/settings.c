/* Settings: the options of a plan, the environment variables that may give
 * them (read through env.c, the one file of the library that reads the
 * environment), their checks and their agreement across ranks. */
#define _GNU_SOURCE /* gethostname */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "halo/model.h"
#include "env.h"
#include "settings.h"

static const char *const kernel_words[] = {"halo", "cusparse", NULL};
static const char *const stream_words[] = {"blocking", "nonblocking", NULL};
static const char *const signal_words[] = {"host", "device", "auto", NULL};
static const char *const trial_words[] = {"plan", "calls", NULL};
/* HALO_AUTOTUNE: "model" (0), or a number of timed calls; "close" is the
 * default, kept as a value no caller can give (HALO_AUTOTUNE_CLOSE) */
static const char *const autotune_words[] = {"model", NULL};

/* ---- the components' settings ---------------------------------------------
 * Each declared once: its name, the component that reads it, the variable
 * that gives it alone, its default, range and words, what it does, and where
 * the resolved value goes in halo_settings. */
typedef struct {
  const char *name, *component, *env;
  int64_t deflt, lo, hi;
  int pow2;
  const char *const *words;
  const char *deflt_text, *doc;
  size_t offset; /* in halo_settings */
  int wide;      /* an int64_t there (else an int) */
} setting_decl;

#define AT(field) offsetof(halo_settings, field), sizeof(((halo_settings *)0)->field) == 8
static const setting_decl settings_decl[] = {
    {"spmv.kernel", "spmv", "HALO_LOCAL_KERNEL", HALO_LOCAL_KERNEL_HALO, 0, 1, 0, kernel_words,
     "halo",
     "device memory: the local product's kernel, halo's CSR kernel (a group of threads per row) "
     "or cuSPARSE's cusparseSpMV (CSR, preprocessed at plan time)",
     AT(local_kernel)},
    {"spmv.cusparse_alg", "spmv", "HALO_CUSPARSE_ALG", 2, 1, 2, 0, NULL, "2",
     "kernel cusparse: CUSPARSE_SPMV_CSR_ALG1 (1) or ALG2 (2, the same bits on every run)",
     AT(cusparse_alg)},
    {"spmv.group", "spmv", "HALO_SPMV_GROUP", 0, 0, 32, 1, NULL, "0 (from the mean row length)",
     "halo's kernel: threads per row; 0 chooses from the mean row length", AT(spmv_group)},
    {"spmv.unroll", "spmv", "HALO_SPMV_UNROLL", 4, 1, 4, 1, NULL, "4",
     "halo's kernel: entries each thread loads per step (the bits of the result do not depend "
     "on it)",
     AT(spmv_unroll)},
    {"spmv.max_blocks", "spmv", "HALO_SPMV_MAX_BLOCKS", 0, 0, INT32_MAX, 0, NULL, "0 (no cap)",
     "halo's kernel: at most this many 256-thread blocks for the diagonal product (they stride "
     "over the rows), leaving room on the GPU for the exchange's kernels",
     AT(spmv_max_blocks)},
    {"spmv.carveout", "spmv", "HALO_SPMV_CARVEOUT", -1, 0, 100, 0, NULL, "the driver's choice",
     "halo's kernel: its preferred shared-memory carveout in percent (an experiment on overlap)",
     AT(spmv_carveout)},
    {"spmv.long_row", "spmv", "HALO_SPMV_LONG_ROW", 0, 0, INT64_MAX, 0, NULL,
     "0 (rows of more than 32 steps of their group)",
     "halo's kernel: rows of more entries are split across warps (the long-row kernel, a fixed "
     "order of sums: the same bits on every run); 0 chooses from the block's rows",
     AT(spmv_long_row)},
    {"spmv.product_first", "spmv", "HALO_SPMV_PRODUCT_FIRST", 1, 0, 1, 0, NULL, "1",
     "device memory: 1 makes halo_spmv enqueue the local product before it starts the exchange, "
     "0 the other order",
     AT(product_first)},
    {"device.compute_stream", "device", "HALO_COMPUTE_STREAM", 0, 0, 1, 0, stream_words,
     "blocking",
     "device memory, without a stream of the caller's: the communicator's blocking compute stream "
     "(ordered with the legacy default stream) or a non-blocking one (an experiment)",
     AT(compute_nonblocking)},
    {"device.timeline", "device", "HALO_TIMELINE", 0, 0, 1, 0, NULL, "0",
     "device memory: 1 records with timing events when the products and the exchange's "
     "transfers start and end on the GPU (halo_plan_timeline needs it)",
     AT(timeline)},
    {"device.gpu_aware_mpi", "device", "HALO_GPU_AWARE_MPI", -1, 0, 1, 0, NULL,
     "what the MPI library says (MPIX_Query_cuda_support)",
     "device memory: 1 treats MPI as CUDA-aware (transport mpi-device), 0 never",
     AT(gpu_aware_mpi)},
    {"staged.copy_timing", "staged", "HALO_EXEC_TIMING", 0, 0, 1, 0, NULL, "0",
     "transport staged: 1 times its copies down and up with events (halo_plan_copy_times needs "
     "it)",
     AT(copy_timing)},
    {"ipc.signal", "ipc", "HALO_IPC_SIGNAL", 2, 0, 2, 0, signal_words, "auto",
     "transport ipc: how a sender and a receiver tell each other that a message is packed and "
     "was read: device (64-bit flags in device memory, written and waited for by the GPUs' "
     "streams: the host never waits for a peer), host (interprocess events and 0-byte MPI "
     "messages; always for a communication helper and its peers, and where a GPU lacks 64-bit "
     "stream memory operations), auto (device where every rank has a GPU of its own, else host)",
     AT(ipc_signal)},
    {"nccl.background", "nccl", "HALO_NCCL_BACKGROUND", 1, 0, 1, 0, NULL, "1",
     "transport nccl on a communicator without NCCL's communicator yet: 1 makes it in the "
     "background (a thread of each rank runs ncclCommInitRank) while the plan exchanges over "
     "ipc, and the plan's own forward exchanges switch to nccl at one exchange on every rank "
     "once every rank's is made (agreed every 8 of its exchanges; values the same either way); "
     "0 makes it when the plan is made, which waits for it",
     AT(nccl_background)},
    {"auto.trial", "auto", "HALO_AUTO_TRIAL", 1, 0, 1, 0, trial_words, "calls",
     "strategy auto, where the model cannot tell candidates apart (autotune's default): calls "
     "times them on the program's own first exchanges (each candidate serves some of its real "
     "calls, with right values, interleaved; a candidate's executors are made at its first turn; "
     "then the fastest is kept, with no extra call), plan times them at plan time with extra "
     "calls. A plan's own forward exchanges alone are timed (halo_spmv, halo_exchange_begin/end); "
     "every rank must make them in the same order, as solvers do",
     AT(auto_trial)},
    {"exec.max_message_count", "exec", "HALO_DEBUG_MAX_COUNT", INT_MAX, 1, INT_MAX, 0, NULL,
     "INT_MAX",
     "the largest count of one MPI message, in values: larger messages travel in pieces (a test "
     "of the path of counts past 2^31)",
     AT(max_count)},
    {"exec.unit_max_bytes", "exec", "HALO_UNIT_MAX_BYTES", 8, 8, 1 << 20, 0, NULL,
     "8 (one double)",
     "the bytes of the largest entry the plan's exchange buffers hold: an exchange of a unit "
     "(halo_exchange_begin_unit) up to this size runs on them, a larger one is refused; each "
     "exchange buffer and the ghost slots grow by this over 8 bytes per entry",
     AT(unit_max)},
};
#undef AT
enum { N_SETTINGS = sizeof settings_decl / sizeof settings_decl[0] };

static void setting_store(halo_settings *s, const setting_decl *d, int64_t v) {
  char *p = (char *)s + d->offset;
  if (d->wide)
    memcpy(p, &v, sizeof v);
  else {
    const int i = (int)v;
    memcpy(p, &i, sizeof i);
  }
}

static int64_t setting_load(const halo_settings *s, const setting_decl *d) {
  const char *p = (const char *)s + d->offset;
  if (d->wide) {
    int64_t v;
    memcpy(&v, p, sizeof v);
    return v;
  }
  int i;
  memcpy(&i, p, sizeof i);
  return i;
}

static int setting_find(const char *name, size_t len) {
  for (int i = 0; i < N_SETTINGS; i++)
    if (strlen(settings_decl[i].name) == len && strncmp(settings_decl[i].name, name, len) == 0)
      return i;
  return -1;
}

/* A settings string's values by setting: the text of each (NULL where not
 * named; a name given twice: its last). source names the string in messages. */
static halo_status settings_parse(const char *text, const char *source, const char **val,
                                  size_t *len) {
  for (int i = 0; i < N_SETTINGS; i++) val[i] = NULL, len[i] = 0;
  if (!text) return HALO_SUCCESS;
  if (strlen(text) > HALO_SETTINGS_MAX)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "%s: longer than %d characters", source,
                      HALO_SETTINGS_MAX);
  for (const char *p = text; *p;) {
    const char *e = strchr(p, ',');
    if (!e) e = p + strlen(p);
    const char *a = p, *b = e;
    while (a < b && isspace((unsigned char)*a)) a++;
    while (b > a && isspace((unsigned char)b[-1])) b--;
    if (a < b) { /* an empty item (",,", a trailing comma) is nothing */
      const char *eq = memchr(a, '=', (size_t)(b - a));
      if (!eq)
        return HALO_ERROR(HALO_ERR_INVALID_ARG, "%s: '%.*s' is not NAME=VALUE", source,
                          (int)(b - a < 64 ? b - a : 64), a);
      const char *ne = eq, *v = eq + 1;
      while (ne > a && isspace((unsigned char)ne[-1])) ne--;
      while (v < b && isspace((unsigned char)*v)) v++;
      const int k = setting_find(a, (size_t)(ne - a));
      if (k < 0) {
        char known[1024];
        size_t n = 0;
        for (int i = 0; i < N_SETTINGS && n < sizeof known; i++) {
          const int w = snprintf(known + n, sizeof known - n, "%s%s", i ? ", " : "",
                                 settings_decl[i].name);
          if (w > 0) n += (size_t)w;
        }
        return HALO_ERROR(HALO_ERR_INVALID_ARG, "%s: unknown setting '%.*s' (known: %s)", source,
                          (int)(ne - a < 64 ? ne - a : 64), a, known);
      }
      val[k] = v;
      len[k] = (size_t)(b - v);
    }
    p = *e ? e + 1 : e;
  }
  return HALO_SUCCESS;
}

/* Every setting of s: the caller's string, else HALO_SETTINGS, else the
 * setting's variable, else its default. */
static halo_status settings_resolve(const char *given, halo_settings *s) {
  const char *val[N_SETTINGS], *env_val[N_SETTINGS];
  size_t len[N_SETTINGS], env_len[N_SETTINGS];
  HALO_CHECK(settings_parse(given, "settings", val, len));
  HALO_CHECK(settings_parse(halo_env_value("HALO_SETTINGS"), "HALO_SETTINGS", env_val, env_len));
  for (int i = 0; i < N_SETTINGS; i++) {
    const setting_decl *d = &settings_decl[i];
    char what[96];
    int64_t v;
    snprintf(what, sizeof what, "setting %s", d->name);
    if (val[i])
      HALO_CHECK(halo_setting_value("settings", d->name, val[i], len[i], d->lo, d->hi, d->pow2,
                                    d->words, &v));
    else if (env_val[i])
      HALO_CHECK(halo_setting_value("HALO_SETTINGS", d->name, env_val[i], env_len[i], d->lo, d->hi,
                                    d->pow2, d->words, &v));
    else
      HALO_CHECK(halo_env_int(what, -1, d->env, d->deflt, d->lo, d->hi, d->pow2, d->words, &v));
    setting_store(s, d, v);
  }
  return HALO_SUCCESS;
}

int halo_setting_count(void) { return N_SETTINGS; }

halo_status halo_setting_get_info(int i, halo_setting_info *info) {
  if (!info) return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_setting_get_info: info is NULL");
  if (i < 0 || i >= N_SETTINGS)
    return HALO_ERROR(HALO_ERR_OUT_OF_RANGE, "setting %d: there are %d (0 to %d)", i, N_SETTINGS,
                      N_SETTINGS - 1);
  const setting_decl *d = &settings_decl[i];
  memset(info, 0, sizeof *info);
  info->name = d->name;
  info->component = d->component;
  info->env = d->env;
  info->deflt = d->deflt_text;
  info->doc = d->doc;
  halo_setting_describe(d->lo, d->hi, d->pow2, d->words, info->values, sizeof info->values);
  return HALO_SUCCESS;
}

halo_status halo_plan_options_setting(const halo_plan_options *opts, const char *name,
                                      int64_t *value_p) {
  if (!name || !value_p)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_plan_options_setting: the %s is NULL",
                      name ? "output" : "name");
  const int k = setting_find(name, strlen(name));
  if (k < 0) return HALO_ERROR(HALO_ERR_INVALID_ARG, "unknown setting '%s'", name);
  halo_settings s;
  HALO_CHECK(halo_settings_resolve(opts, &s));
  *value_p = setting_load(&s, &settings_decl[k]);
  return HALO_SUCCESS;
}

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
    HALO_CHECK(halo_env_int("option ranks_per_node", -1, "HALO_RANKS_PER_NODE", 0, 1, INT_MAX, 0,
                            NULL, &v));
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
  HALO_CHECK(halo_env_int("option autotune", o.autotune, "HALO_AUTOTUNE", HALO_AUTOTUNE_CLOSE, 0,
                          1000000, 0, autotune_words, &v));
  o.autotune = (int)v;
  HALO_CHECK(halo_env_int("option expected_uses", o.expected_uses, "HALO_EXPECTED_USES",
                          HALO_DEFAULT_EXPECTED_USES, 1, INT64_MAX, 0, NULL, &v));
  o.expected_uses = v;
  HALO_CHECK(halo_env_int("option max_exchanges", o.max_exchanges, NULL, 1, 1, HALO_MAX_EXCHANGES,
                          0, NULL, &v));
  o.max_exchanges = (int)v;
  HALO_CHECK(halo_env_int("option reverse", o.reverse, NULL, 1, 0, 1, 0, NULL, &v));
  o.reverse = (int)v;
  s->params = o.params && *o.params ? o.params : halo_env_word("HALO_PARAMS");
  s->wisdom = o.wisdom && *o.wisdom ? o.wisdom : halo_env_word("HALO_WISDOM");
  o.wisdom = s->wisdom;
  if (halo_params_cache_path(s->params_file, sizeof s->params_file) != HALO_SUCCESS)
    s->params_file[0] = '\0'; /* a path too long: no file of the machine */
  HALO_CHECK(settings_resolve(o.settings, s));
  HALO_CHECK(halo_env_int("option exchange_timeout_ms", o.exchange_timeout_ms,
                          "HALO_EXCHANGE_TIMEOUT", 0, 0, INT64_C(1) << 40, 0, NULL,
                          &s->timeout_ms));
  o.exchange_timeout_ms = s->timeout_ms;
  o.params = s->params;
  s->opts = o;
  return HALO_SUCCESS;
}

/* The parameter set's name as a number, to compare across ranks. */
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
  /* each option, and the environment variable that may give it; then each setting */
  const char *names[][2] = {{"strategy", NULL},
                            {"ranks_per_node", "HALO_RANKS_PER_NODE"},
                            {"message_cap", NULL},
                            {"remove_duplicates", NULL},
                            {"memory", NULL},
                            {"transport", "HALO_TRANSPORT"},
                            {"autotune", "HALO_AUTOTUNE"},
                            {"expected_uses", "HALO_EXPECTED_USES"},
                            {"max_exchanges", NULL},
                            {"reverse", NULL},
                            {"exchange_timeout_ms", "HALO_EXCHANGE_TIMEOUT"},
                            {"wisdom", "HALO_WISDOM"},
                            {"params", "HALO_PARAMS"}};
  enum { N_OPT = sizeof names / sizeof names[0], N = N_OPT + N_SETTINGS };
  int64_t v[N] = {o->strategy,         o->ranks_per_node, o->message_cap,
                  o->remove_duplicates, o->memory,         o->transport,
                  o->autotune,         o->expected_uses,  o->max_exchanges,  o->reverse,
                  s->timeout_ms,       hash_string(s->wisdom ? s->wisdom : ""),
                  hash_string(s->params ? s->params : "(the machine's file)")};
  for (int i = 0; i < N_SETTINGS; i++) v[N_OPT + i] = setting_load(s, &settings_decl[i]);
  int64_t lo[N], hi[N];
  HALO_MPI(MPI_Allreduce(v, lo, N, MPI_INT64_T, MPI_MIN, comm));
  HALO_MPI(MPI_Allreduce(v, hi, N, MPI_INT64_T, MPI_MAX, comm));
  for (int i = 0; i < N; i++) {
    if (lo[i] == hi[i]) continue;
    if (i == N_OPT - 1) return params_differ(comm, s);
    char from[96] = "", a[128], b[128];
    if (i >= N_OPT) { /* a setting: its words where it has them */
      const setting_decl *d = &settings_decl[i - N_OPT];
      for (int k = 0; k < 2; k++) {
        const int64_t x = k ? hi[i] : lo[i];
        int n_words = 0;
        while (d->words && d->words[n_words]) n_words++;
        if (x >= 0 && x < n_words)
          snprintf(k ? b : a, sizeof a, "%s", d->words[x]);
        else
          snprintf(k ? b : a, sizeof a, "%lld", (long long)x);
      }
      if (d->env) snprintf(from, sizeof from, " (settings, HALO_SETTINGS or %s)", d->env);
      return HALO_ERROR(HALO_ERR_INCONSISTENT,
                        "plan settings differ across ranks: %s is %s on some ranks and %s on "
                        "others%s",
                        d->name, a, b, from);
    }
    if (names[i][1]) snprintf(from, sizeof from, " (the option, or %s)", names[i][1]);
    if (strcmp(names[i][0], "wisdom") == 0)
      return HALO_ERROR(HALO_ERR_INCONSISTENT,
                        "plan options differ across ranks: wisdom names another file (or none) "
                        "on some ranks%s",
                        from);
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
