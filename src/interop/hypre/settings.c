/* halo for hypre: the adapter's settings, from the environment (hypre has no
 * options database: its own run-time choices are environment variables and
 * function calls, and so are the adapter's), and its warnings. The variables
 * of the plans' options that the core reads itself (HALO_RANKS_PER_NODE,
 * HALO_PARAMS, HALO_TRANSPORT's default) are checked here through
 * halo_plan_options_resolve; this file is the adapter's one reader of the
 * environment. */
#include <ctype.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "hypre_impl.h"

static hh_settings settings;
static int warned_once;

/* The loaded libHYPRE's integer sizes and version, probed once. hypre comes in three builds of
 * one release (Debian: libhypre-dev, libhypre64-dev, libhypre64m-dev) whose structures differ
 * and whose version numbers do not:
 *   plain      HYPRE_Int 4 bytes, HYPRE_BigInt 4
 *   bigint     HYPRE_Int 8,       HYPRE_BigInt 8 (--enable-bigint)
 *   mixed-int  HYPRE_Int 4,       HYPRE_BigInt 8 (--enable-mixedint)
 * Two calls that write through pointers tell them apart, each into slots of 8 bytes filled with
 * a pattern first, so that a library whose integer is wider than the headers' writes no further
 * than its slots:
 *  - HYPRE_VersionNumber writes four HYPRE_Ints (major, minor, patch, single): a 4-byte
 *    HYPRE_Int leaves the upper half of each slot as it was;
 *  - hypre_GenerateLocalPartitioning(length, 1 rank, rank 0, part) writes part[0] = 0 and
 *    part[1] = length, two HYPRE_BigInts: 4-byte ones fill the first slot and leave the second
 *    as it was. Its arguments are passed as 64-bit integers, which both sizes read right (the
 *    lower half of each register is the 4-byte value; x86-64 and AArch64 pass these in
 *    registers), through a type of our own, not the headers' (whose sizes may be the wrong
 *    ones). Neither call touches MPI or hypre's state. */
static int abi_probed, loaded_int_size, loaded_bigint_size;
static long long loaded_version[3];

typedef void (*hh_partition_probe_fn)(long long length, long long num_procs, long long myid,
                                      void *part);

/* Whether the upper half of an 8-byte slot still holds the pattern (a 4-byte integer was
 * written into it). */
static int upper_half_kept(const int64_t *slot)
{
  static const unsigned char pattern[4] = {0xA5, 0xA5, 0xA5, 0xA5};
  return !memcmp((const char *)slot + 4, pattern, sizeof pattern);
}

/* The size of the integers that wrote 0 and then v into two pattern-filled 8-byte slots: 8
 * (one a slot), 4 (both in the first slot, the second kept), 0 when the bytes fit neither. */
static int pair_size(const int64_t slot[2], long long v)
{
  int32_t first, second;
  memcpy(&first, &slot[0], sizeof first);
  memcpy(&second, (const char *)&slot[0] + 4, sizeof second);
  if (slot[0] == 0 && slot[1] == v) return 8;
  if (first == 0 && second == v && upper_half_kept(&slot[1])) {
    int32_t low;
    memcpy(&low, &slot[1], sizeof low);
    if (low == (int32_t)0xA5A5A5A5) return 4;
  }
  return 0;
}

static void probe_abi(void)
{
  abi_probed = 1;
  /* HYPRE_Int: the version's four numbers, each in a slot of its own */
  int64_t slot[4];
  memset(slot, 0xA5, sizeof slot);
  HYPRE_VersionNumber((HYPRE_Int *)(void *)&slot[0], (HYPRE_Int *)(void *)&slot[1],
                      (HYPRE_Int *)(void *)&slot[2], (HYPRE_Int *)(void *)&slot[3]);
  loaded_int_size = upper_half_kept(&slot[0]) ? 4 : 8;
  for (int i = 0; i < 3; i++) {
    if (loaded_int_size == 4) {
      int32_t v;
      memcpy(&v, &slot[i], sizeof v);
      loaded_version[i] = v;
    } else {
      loaded_version[i] = (long long)slot[i];
    }
  }
  /* HYPRE_BigInt: a partition of 1000003 rows over one rank is [0, 1000003) */
  const long long length = 1000003;
  int64_t part[2];
  memset(part, 0xA5, sizeof part);
  hh_partition_probe_fn partition =
      (hh_partition_probe_fn)(void (*)(void))hypre_GenerateLocalPartitioning;
  partition(length, 1, 0, part);
  loaded_bigint_size = pair_size(part, length);
  /* another build: said once, now (the settings' reading turns halo off with the reason) */
  if (loaded_int_size != (int)sizeof(HYPRE_Int) || loaded_bigint_size != (int)sizeof(HYPRE_BigInt))
    (void)hh_settings_get();
}

int hh_abi_ok(void)
{
  if (!abi_probed) probe_abi();
  return loaded_int_size == (int)sizeof(HYPRE_Int) &&
         loaded_bigint_size == (int)sizeof(HYPRE_BigInt);
}

/* The name of a build of hypre by its integer sizes, and the adapter's library for it. */
static const char *build_name(int int_size, int bigint_size)
{
  return int_size == 4 && bigint_size == 4   ? "plain"
         : int_size == 8 && bigint_size == 8 ? "bigint"
         : int_size == 4 && bigint_size == 8 ? "mixed-int"
                                             : "unknown";
}

static const char *adapter_for(int int_size, int bigint_size)
{
  return int_size == 4 && bigint_size == 4   ? "libhalo_hypre.so"
         : int_size == 8 && bigint_size == 8 ? "libhalo_hypre64.so"
         : int_size == 4 && bigint_size == 8 ? "libhalo_hypre64m.so"
                                             : NULL;
}

void hh_warn(int every_rank, const char *fmt, ...)
{
  int rank = 0, init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (init && !fin) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (!every_rank && rank != 0) return;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (every_rank)
    fprintf(stderr, "halo-hypre: [%d] %s\n", rank, msg);
  else
    fprintf(stderr, "halo-hypre: %s\n", msg);
  fflush(stderr);
}

/* Turn routing off for good, with the reason (printed on rank 0). */
static void turn_off(const char *why)
{
  settings.ok = 0;
  settings.on = 0;
  snprintf(settings.why_off, sizeof settings.why_off, "%s", why);
  if (!warned_once) {
    warned_once = 1;
    hh_warn(0, "%s; every exchange is left to hypre", why);
  }
}

/* A variable's value without the white space around it (as libhalo reads its
 * own), in buf; NULL when unset or empty. */
static const char *env_text(const char *name, char *buf, size_t len)
{
  const char *v = getenv(name);
  if (!v) return NULL;
  while (isspace((unsigned char)*v)) v++;
  size_t n = strlen(v);
  while (n > 0 && isspace((unsigned char)v[n - 1])) n--;
  if (n == 0) return NULL;
  if (n >= len) n = len - 1;
  memcpy(buf, v, n);
  buf[n] = '\0';
  return buf;
}

static int env_flag(const char *name, int dflt, int *ok)
{
  char buf[64];
  const char *v = env_text(name, buf, sizeof buf);
  if (!v || !*v) return dflt;
  if (!strcmp(v, "1") || !strcmp(v, "on") || !strcmp(v, "yes") || !strcmp(v, "true")) return 1;
  if (!strcmp(v, "0") || !strcmp(v, "off") || !strcmp(v, "no") || !strcmp(v, "false")) return 0;
  char why[160];
  snprintf(why, sizeof why, "%s=%s is not 0 or 1", name, v);
  turn_off(why);
  *ok = 0;
  return dflt;
}

static void read_settings(void)
{
  settings.read = 1;
  settings.ok = 1;
  settings.opts = halo_plan_options_default();
  int ok = 1;
  int on = env_flag("HALO_HYPRE", 1, &ok);
  settings.view = env_flag("HALO_HYPRE_VIEW", 0, &ok);
  if (!ok) return; /* turned off, with the message */
  settings.on = on;
  char why[256], text[256];
  const char *v = env_text("HALO_STRATEGY", text, sizeof text);
  if (v && *v && halo_strategy_from_name(v, &settings.opts.strategy) != HALO_SUCCESS) {
    snprintf(why, sizeof why, "HALO_STRATEGY=%s: %s", v, halo_last_error());
    turn_off(why);
    return;
  }
  v = env_text("HALO_TRANSPORT", text, sizeof text);
  if (v && *v && halo_transport_from_name(v, &settings.opts.transport) != HALO_SUCCESS) {
    snprintf(why, sizeof why, "HALO_TRANSPORT=%s: %s", v, halo_last_error());
    turn_off(why);
    return;
  }
  v = env_text("HALO_MESSAGE_CAP", text, sizeof text);
  if (v && *v) {
    char *end = NULL;
    long long cap = strtoll(v, &end, 10);
    if (!end || *end || cap < 8) {
      snprintf(why, sizeof why, "HALO_MESSAGE_CAP=%s is not a number of bytes of at least 8", v);
      turn_off(why);
      return;
    }
    settings.opts.message_cap = cap;
  }
  /* The packages hypre makes inside its set-ups for a product or two (the
   * matrices between a hierarchy's levels) are used once or twice: a plan
   * costs them more than it saves (0.25-2.8 ms each, against 0.04-0.6 ms of
   * hypre's exchange, lap3d27 160^3 on 2 H200; bench/results/
   * time-to-solution.md), so a package's first exchanges stay hypre's. */
  settings.plan_after = 1;
  v = env_text("HALO_HYPRE_PLAN_AFTER", text, sizeof text);
  if (v && *v) {
    char *end = NULL;
    long n = strtol(v, &end, 10);
    if (!end || *end || n < 0 || n > 1000000) {
      snprintf(why, sizeof why,
               "HALO_HYPRE_PLAN_AFTER=%s is not a number of exchanges from 0 to 1000000", v);
      turn_off(why);
      return;
    }
    settings.plan_after = (int)n;
  }
  settings.opts.memory = HALO_MEMORY_HOST;
  /* auto chooses by the model alone unless HALO_AUTOTUNE asks for the timed
   * trial: an AMG hierarchy has tens of packages, and timing the candidates
   * of each costs more than a solve (measured: bench/results/amg-gpu.md) */
  v = env_text("HALO_AUTOTUNE", text, sizeof text);
  if (!v || !*v) settings.opts.autotune = 0;
  /* The options the core reads itself (HALO_RANKS_PER_NODE, HALO_PARAMS)
   * are checked here too, so that a bad value turns halo off at once. */
  halo_plan_options resolved;
  if (halo_plan_options_resolve(&settings.opts, &resolved) != HALO_SUCCESS) {
    snprintf(why, sizeof why, "%s", halo_last_error());
    turn_off(why);
    return;
  }
  if (!HH_SCALAR_OK) {
    turn_off("hypre's HYPRE_Complex is not double (halo moves doubles)");
    return;
  }
  if (!hh_abi_ok()) {
    const int hi = (int)sizeof(HYPRE_Int), hb = (int)sizeof(HYPRE_BigInt);
    const char *other = adapter_for(loaded_int_size, loaded_bigint_size);
    char bigint[32];
    if (loaded_bigint_size)
      snprintf(bigint, sizeof bigint, "%d bytes", loaded_bigint_size);
    else
      snprintf(bigint, sizeof bigint, "an unknown size");
    snprintf(why, sizeof why,
             "the loaded libHYPRE's HYPRE_Int has %d bytes and its HYPRE_BigInt %s (a %s build "
             "of hypre); %s was built for %d and %d (a %s build): %s%s%s",
             loaded_int_size, bigint, build_name(loaded_int_size, loaded_bigint_size),
             HH_LIBNAME, hi, hb, build_name(hi, hb), other ? "load " : "",
             other ? other : "rebuild halo against the hypre the program loads",
             other ? " instead" : "");
    turn_off(why);
    return;
  }
  HYPRE_Int major = loaded_version[0], minor = loaded_version[1], patch = loaded_version[2];
  int loaded = (int)(major * 10000 + minor * 100 + patch);
  if (loaded != HYPRE_RELEASE_NUMBER) {
    snprintf(why, sizeof why,
             "%s was built against hypre %s but libHYPRE %d.%d.%d is loaded "
             "(rebuild halo against it)",
             HH_LIBNAME, HYPRE_RELEASE_VERSION, (int)major, (int)minor, (int)patch);
    turn_off(why);
    return;
  }
}

int hh_launcher_rank(void)
{
  const char *r = getenv("OMPI_COMM_WORLD_RANK");
  if (!r) r = getenv("PMI_RANK");
  return r ? atoi(r) : -1;
}

hh_settings *hh_settings_get(void)
{
  if (!settings.read) read_settings();
  return &settings;
}

void halo_hypre_set_enabled(int on)
{
  hh_settings *s = hh_settings_get();
  if (s->ok) s->on = on ? 1 : 0;
}

int halo_hypre_enabled(void) { return hh_settings_get()->on; }

halo_status halo_hypre_set_options(const halo_plan_options *opts)
{
  hh_settings *s = hh_settings_get();
  if (!s->ok) return HALO_ERR_UNSUPPORTED;
  halo_plan_options o, resolved;
  if (opts) {
    o = *opts;
  } else { /* the environment's again */
    const int on = s->on;
    settings.read = 0;
    read_settings();
    if (!settings.ok) return HALO_ERR_UNSUPPORTED;
    settings.on = on;
    o = settings.opts;
  }
  o.memory = HALO_MEMORY_HOST; /* each plan's is hypre's buffers' (plan_options) */
  o.stream = NULL;
  halo_status st = halo_plan_options_resolve(&o, &resolved);
  if (st != HALO_SUCCESS) return st;
  s->opts = o;
  hh_pkg_drop_plans();
  return HALO_SUCCESS;
}

