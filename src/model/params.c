/* Machine parameters of the performance model: the built-in sets, the
 * parameter file (parse, read, write) and the postal time of one message. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exec/transport.h"
#include "model/params.h"

/* ---- built-in sets ------------------------------------------------------ */

/* The node-aware paper's Tables 2-4 (Lassen: 2 sockets and 4 GPUs per node). */
static void lassen(halo_params *p) {
  memset(p, 0, sizeof *p);
  snprintf(p->name, sizeof p->name, "lassen");
  p->sockets_per_node = 2;
  p->short_max = 256;
  p->eager_max = 16384;
  static const halo_postal cpu[HALO_N_PROTO][HALO_N_LOC] = {
      /*                on-socket            on-node              off-node */
      [HALO_PROTO_SHORT] = {{3.67e-07, 1.32e-10}, {9.25e-07, 1.19e-09}, {1.89e-06, 6.88e-10}},
      [HALO_PROTO_EAGER] = {{4.61e-07, 7.12e-11}, {1.17e-06, 2.18e-10}, {2.44e-06, 3.79e-10}},
      [HALO_PROTO_RENDEZVOUS] = {{3.15e-06, 3.40e-11}, {6.77e-06, 1.49e-10}, {7.76e-06, 7.97e-11}},
  };
  static const halo_postal gpu[HALO_N_PROTO][HALO_N_LOC] = {
      [HALO_PROTO_SHORT] = {{1.87e-06, 5.79e-11}, {2.02e-05, 2.15e-10}, {8.95e-06, 1.72e-10}},
      [HALO_PROTO_EAGER] = {{1.87e-06, 5.79e-11}, {2.02e-05, 2.15e-10}, {8.95e-06, 1.72e-10}},
      [HALO_PROTO_RENDEZVOUS] = {{1.82e-05, 1.46e-11}, {1.93e-05, 2.39e-11}, {1.10e-05, 1.72e-10}},
  };
  memcpy(p->cpu, cpu, sizeof cpu);
  memcpy(p->gpu, gpu, sizeof gpu);
  p->h2d[0] = (halo_postal){1.30e-05, 1.85e-11};
  p->h2d[1] = (halo_postal){1.52e-05, 5.52e-10};
  p->d2h[0] = (halo_postal){1.27e-05, 1.96e-11};
  p->d2h[1] = (halo_postal){1.47e-05, 1.50e-10};
  p->injection_beta = 4.19e-11;
}

/* Two H200 of one host with NVLink (nvidia-h200-x2), measured by halo
 * params measure with virtual nodes of one rank (bench/results/
 * params-h200x2.txt, 2026-11-22): every locality is that of two ranks of one
 * host, the device-aware messages NCCL's; copy.*.4 from lassen (two ranks
 * only); no staged.alpha or ipc.* (measured since: time them by autotune). */
static void h200(halo_params *p) {
  lassen(p);
  snprintf(p->name, sizeof p->name, "h200");
  p->sockets_per_node = 1;
  const halo_postal cpu[HALO_N_PROTO] = {{4.3966232089985673e-07, 7.7973814415631677e-10},
                                         {6.4880689748715095e-07, 3.0396713622602859e-10},
                                         {3.2211044273068686e-06, 8.5367424659161565e-11}};
  const halo_postal gpu[HALO_N_PROTO] = {{1.7736076827861643e-05, 8.8959050539756498e-11},
                                         {1.7736076827861643e-05, 8.8959050539756498e-11},
                                         {1.9328113133301113e-05, 5.8013700224067197e-12}};
  for (int k = 0; k < HALO_N_PROTO; k++)
    for (int l = 0; l < HALO_N_LOC; l++) p->cpu[k][l] = cpu[k], p->gpu[k][l] = gpu[k];
  p->h2d[0] = (halo_postal){6.4302573774320503e-06, 1.9715420700929354e-11};
  p->d2h[0] = (halo_postal){7.0269977690560334e-06, 1.814258219337267e-11};
  p->injection_beta = 9.3085953403072403e-11;
}

typedef struct {
  const char *name;
  void (*fill)(halo_params *p);
} builtin_entry;

static const builtin_entry builtins[] = {{"lassen", lassen}, {"h200", h200}};

#define N_BUILTINS ((int)(sizeof builtins / sizeof builtins[0]))

static const builtin_entry *find_builtin(const char *name) {
  for (int i = 0; i < N_BUILTINS; i++)
    if (strcmp(builtins[i].name, name) == 0) return &builtins[i];
  return NULL;
}

static void builtin_list(char *buf, size_t n) {
  buf[0] = '\0';
  for (int i = 0; i < N_BUILTINS; i++) {
    if (i) strncat(buf, ", ", n - strlen(buf) - 1);
    strncat(buf, builtins[i].name, n - strlen(buf) - 1);
  }
}

halo_status halo_params_builtin(const char *name, halo_params *p) {
  if (!name || !p) return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_params_builtin: NULL argument");
  const builtin_entry *b = find_builtin(name);
  if (!b) {
    char known[256];
    builtin_list(known, sizeof known);
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "unknown parameter set '%s' (built-in: %s)", name,
                      known);
  }
  b->fill(p);
  return HALO_SUCCESS;
}

const char *halo_params_builtin_for(const char *gpu_name) {
  if (gpu_name && strstr(gpu_name, "H200")) return "h200";
  return "lassen";
}

/* ---- the keys of a parameter file --------------------------------------- */

static const char *const proto_names[HALO_N_PROTO] = {"short", "eager", "rendezvous"};
static const char *const loc_names[HALO_N_LOC] = {"on_socket", "on_node", "off_node"};

typedef enum { KEY_NAME, KEY_INT, KEY_INT64, KEY_DOUBLE } key_kind;

typedef struct {
  char key[48];
  key_kind kind;
  void *dst;    /* char[64], int, int64_t or double of the parameter set */
  int line;     /* where the key was given; 0: not yet */
  int optional; /* may be left out */
} key_entry;

/* name, sockets_per_node, short_max, eager_max; cpu 3 protocols x 3
 * localities x 2; gpu 2 x 3 x 2; copy 2 directions x 2 x 2; injection; the
 * optional staged.alpha and ipc.*; the optional pair of each transport whose
 * model has one (NAME.alpha, NAME.beta: rma, nvshmem, ...; unused slots
 * have an empty key) */
#define N_KEYS (4 + 18 + 12 + 8 + 1 + 3 + 4 * HALO_N_TRANSPORTS)

/* The keys in the order a file is written, each bound to its field of p. */
static void key_table(halo_params *p, key_entry *t) {
  int n = 0;
#define KEY(kind_, dst_, ...)                                                                      \
  do {                                                                                             \
    snprintf(t[n].key, sizeof t[n].key, __VA_ARGS__);                                              \
    t[n].kind = (kind_);                                                                           \
    t[n].dst = (dst_);                                                                             \
    t[n].line = 0;                                                                                 \
    t[n].optional = 0;                                                                             \
    n++;                                                                                           \
  } while (0)
  KEY(KEY_NAME, p->name, "name");
  KEY(KEY_INT, &p->sockets_per_node, "sockets_per_node");
  KEY(KEY_INT64, &p->short_max, "short_max");
  KEY(KEY_INT64, &p->eager_max, "eager_max");
  for (int q = 0; q < HALO_N_PROTO; q++)
    for (int l = 0; l < HALO_N_LOC; l++) {
      KEY(KEY_DOUBLE, &p->cpu[q][l].alpha, "cpu.%s.%s.alpha", proto_names[q], loc_names[l]);
      KEY(KEY_DOUBLE, &p->cpu[q][l].beta, "cpu.%s.%s.beta", proto_names[q], loc_names[l]);
    }
  for (int q = HALO_PROTO_EAGER; q < HALO_N_PROTO; q++)
    for (int l = 0; l < HALO_N_LOC; l++) {
      KEY(KEY_DOUBLE, &p->gpu[q][l].alpha, "gpu.%s.%s.alpha", proto_names[q], loc_names[l]);
      KEY(KEY_DOUBLE, &p->gpu[q][l].beta, "gpu.%s.%s.beta", proto_names[q], loc_names[l]);
    }
  for (int c = 0; c < 2; c++) {
    KEY(KEY_DOUBLE, &p->h2d[c].alpha, "copy.h2d.%d.alpha", c ? 4 : 1);
    KEY(KEY_DOUBLE, &p->h2d[c].beta, "copy.h2d.%d.beta", c ? 4 : 1);
  }
  for (int c = 0; c < 2; c++) {
    KEY(KEY_DOUBLE, &p->d2h[c].alpha, "copy.d2h.%d.alpha", c ? 4 : 1);
    KEY(KEY_DOUBLE, &p->d2h[c].beta, "copy.d2h.%d.beta", c ? 4 : 1);
  }
  KEY(KEY_DOUBLE, &p->injection_beta, "injection.beta");
  KEY(KEY_DOUBLE, &p->staged_alpha, "staged.alpha");
  t[n - 1].optional = 1;
  KEY(KEY_DOUBLE, &p->ipc.alpha, "ipc.alpha");
  t[n - 1].optional = 1;
  KEY(KEY_DOUBLE, &p->ipc.beta, "ipc.beta");
  t[n - 1].optional = 1;
  int n_tr;
  const halo_transport_desc *const *tr = halo_transport_all(&n_tr);
  for (int i = 0; i < n_tr; i++) { /* the transports' own pairs, in the registry's order */
    if (!tr[i]->model.own_params) continue;
    KEY(KEY_DOUBLE, &p->own[tr[i]->id].alpha, "%s.alpha", tr[i]->name);
    t[n - 1].optional = 1;
    KEY(KEY_DOUBLE, &p->own[tr[i]->id].beta, "%s.beta", tr[i]->name);
    t[n - 1].optional = 1;
  }
  for (int i = 0; i < n_tr; i++) { /* the transports' set-up, in the registry's order */
    KEY(KEY_DOUBLE, &p->setup[tr[i]->id].alpha, "%s.setup.alpha", tr[i]->name);
    t[n - 1].optional = 1;
    KEY(KEY_DOUBLE, &p->setup[tr[i]->id].beta, "%s.setup.beta", tr[i]->name);
    t[n - 1].optional = 1;
  }
  while (n < N_KEYS) { /* unused */
    KEY(KEY_DOUBLE, NULL, "%s", "");
    t[n - 1].optional = 1;
  }
#undef KEY
}

/* ---- parse -------------------------------------------------------------- */

static int is_name_char(int c) { return isalnum(c) || c == '-' || c == '_' || c == '.'; }

/* One value of a key into its field; the message names the key. */
static halo_status parse_value(const key_entry *e, const char *v, size_t len, const char *src,
                               int line) {
  char buf[128];
  char *end;
  if (len == 0) return HALO_ERROR(HALO_ERR_FORMAT, "%s:%d: %s has no value", src, line, e->key);
  if (e->kind == KEY_NAME) {
    size_t ok = 0;
    while (ok < len && is_name_char((unsigned char)v[ok])) ok++;
    if (ok < len || len >= 64)
      return HALO_ERROR(HALO_ERR_FORMAT,
                        "%s:%d: name '%.*s': expected a word of at most 63 letters, digits, "
                        "'-', '_' or '.'",
                        src, line, (int)(len < 64 ? len : 64), v);
    memcpy(e->dst, v, len);
    ((char *)e->dst)[len] = '\0';
    return HALO_SUCCESS;
  }
  if (len >= sizeof buf)
    return HALO_ERROR(HALO_ERR_FORMAT, "%s:%d: %s = '%.40s...': not a number", src, line, e->key,
                      v);
  memcpy(buf, v, len);
  buf[len] = '\0';
  errno = 0;
  if (e->kind == KEY_DOUBLE) {
    double x = strtod(buf, &end);
    if (end == buf || *end != '\0')
      return HALO_ERROR(HALO_ERR_FORMAT, "%s:%d: %s = '%s': not a number", src, line, e->key, buf);
    if (!isfinite(x))
      return HALO_ERROR(HALO_ERR_FORMAT, "%s:%d: %s = '%s': not a finite number", src, line, e->key,
                        buf);
    if (x < 0)
      return HALO_ERROR(HALO_ERR_FORMAT, "%s:%d: %s = %s: negative (every value is >= 0)", src,
                        line, e->key, buf);
    *(double *)e->dst = x;
    return HALO_SUCCESS;
  }
  long long x = strtoll(buf, &end, 10);
  if (end == buf || *end != '\0' || errno == ERANGE)
    return HALO_ERROR(HALO_ERR_FORMAT, "%s:%d: %s = '%s': not an integer", src, line, e->key, buf);
  if (x < 0)
    return HALO_ERROR(HALO_ERR_FORMAT, "%s:%d: %s = %s: negative (every value is >= 0)", src, line,
                      e->key, buf);
  if (e->kind == KEY_INT) {
    if (x > 1 << 30)
      return HALO_ERROR(HALO_ERR_FORMAT, "%s:%d: %s = %s: too large", src, line, e->key, buf);
    *(int *)e->dst = (int)x;
  } else {
    *(int64_t *)e->dst = (int64_t)x;
  }
  return HALO_SUCCESS;
}

static const char *trim_left(const char *b, const char *e) {
  while (b < e && isspace((unsigned char)*b)) b++;
  return b;
}

static const char *trim_right(const char *b, const char *e) {
  while (e > b && isspace((unsigned char)e[-1])) e--;
  return e;
}

static key_entry *find_key(key_entry *t, const char *k, size_t len) {
  for (int i = 0; i < N_KEYS && len > 0; i++)
    if (strlen(t[i].key) == len && memcmp(t[i].key, k, len) == 0) return &t[i];
  return NULL;
}

static key_entry *key_named(key_entry *t, const char *k) { return find_key(t, k, strlen(k)); }

halo_status halo_params_parse(const char *text, const char *source, halo_params *p) {
  halo_params q;
  key_entry t[N_KEYS];
  const char *src = source ? source : "parameters";
  if (!text || !p) return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_params_parse: NULL argument");
  memset(&q, 0, sizeof q);
  key_table(&q, t);
  int line = 0;
  for (const char *s = text; *s;) {
    const char *nl = strchr(s, '\n');
    const char *e = nl ? nl : s + strlen(s);
    const char *next = nl ? nl + 1 : e;
    const char *hash = memchr(s, '#', (size_t)(e - s));
    line++;
    if (hash) e = hash;
    const char *b = trim_left(s, e);
    e = trim_right(b, e);
    s = next;
    if (b == e) continue;
    const char *eq = memchr(b, '=', (size_t)(e - b));
    if (!eq)
      return HALO_ERROR(HALO_ERR_FORMAT, "%s:%d: expected 'key = value', got '%.*s'", src, line,
                        (int)(e - b < 80 ? e - b : 80), b);
    const char *ke = trim_right(b, eq), *v = trim_left(eq + 1, e);
    key_entry *k = find_key(t, b, (size_t)(ke - b));
    if (!k)
      return HALO_ERROR(HALO_ERR_FORMAT, "%s:%d: unknown key '%.*s'", src, line,
                        (int)(ke - b < 80 ? ke - b : 80), b);
    if (k->line)
      return HALO_ERROR(HALO_ERR_FORMAT, "%s:%d: duplicate key '%s' (first given on line %d)", src,
                        line, k->key, k->line);
    HALO_CHECK(parse_value(k, v, (size_t)(e - v), src, line));
    k->line = line;
  }
  for (int i = 0; i < N_KEYS; i++)
    if (!t[i].line && !t[i].optional)
      return HALO_ERROR(HALO_ERR_FORMAT,
                        "%s: missing key '%s' (every key but staged.alpha, ipc.*, the "
                        "transports' own pairs (rma.*, nvshmem.*, ...) and their set-up "
                        "(NAME.setup.*) is required)",
                        src, t[i].key);
  for (int i = 0; i < N_KEYS; i++) { /* pairs: ipc.* and the transports' own, both or neither */
    const size_t len = strlen(t[i].key);
    if (len < 7 || strcmp(t[i].key + len - 6, ".alpha") != 0) continue;
    char beta[sizeof t[i].key];
    snprintf(beta, sizeof beta, "%.*s.beta", (int)(len - 6), t[i].key);
    const key_entry *ia = &t[i], *ib = key_named(t, beta);
    if (!ib) continue; /* cpu.*, gpu.*, copy.*: required, checked above */
    if (!ia->line != !ib->line)
      return HALO_ERROR(HALO_ERR_FORMAT, "%s:%d: %s given without %s (both or neither)", src,
                        ia->line ? ia->line : ib->line, ia->line ? ia->key : ib->key,
                        ia->line ? ib->key : ia->key);
  }
  q.have_ipc = key_named(t, "ipc.alpha")->line != 0;
  {
    int n_tr;
    const halo_transport_desc *const *tr = halo_transport_all(&n_tr);
    for (int i = 0; i < n_tr; i++)
      if (tr[i]->model.own_params) {
        char key[64];
        snprintf(key, sizeof key, "%s.alpha", tr[i]->name);
        q.have_own[tr[i]->id] = key_named(t, key)->line != 0;
      }
    for (int i = 0; i < n_tr; i++) {
      char key[64];
      snprintf(key, sizeof key, "%s.setup.alpha", tr[i]->name);
      q.have_setup[tr[i]->id] = key_named(t, key)->line != 0;
    }
  }
  if (q.sockets_per_node < 1)
    return HALO_ERROR(HALO_ERR_FORMAT, "%s:%d: sockets_per_node = %d: at least 1", src,
                      key_named(t, "sockets_per_node")->line, q.sockets_per_node);
  if (q.short_max >= q.eager_max)
    return HALO_ERROR(HALO_ERR_FORMAT, "%s:%d: short_max = %lld must be below eager_max = %lld",
                      src, key_named(t, "short_max")->line, (long long)q.short_max,
                      (long long)q.eager_max);
  for (int l = 0; l < HALO_N_LOC; l++) q.gpu[HALO_PROTO_SHORT][l] = q.gpu[HALO_PROTO_EAGER][l];
  *p = q;
  return HALO_SUCCESS;
}

/* ---- files ---------------------------------------------------------------- */

/* Largest parameter file read: a set is about 2 KiB of text. */
#define PARAMS_FILE_MAX (1 << 20)

halo_status halo_params_read(const char *path, halo_params *p) {
  halo_status st = HALO_SUCCESS;
  char *buf = NULL;
  size_t len = 0;
  if (!path || !p) return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_params_read: NULL argument");
  FILE *fp;
  HALO_CHECK(halo_file_open_read(path, &fp));
  HALO_TRY(HALO_ALLOC(buf, PARAMS_FILE_MAX + 1));
  errno = 0;
  len = fread(buf, 1, PARAMS_FILE_MAX + 1, fp);
  if (ferror(fp)) {
    int err = errno;
    HALO_FAIL(HALO_ERR_IO, "cannot read '%s': %s", path, err ? strerror(err) : "read error");
  }
  if (len > PARAMS_FILE_MAX)
    HALO_FAIL(HALO_ERR_FORMAT, "%s: larger than %d bytes: not a parameter file", path,
              PARAMS_FILE_MAX);
  buf[len] = '\0';
  if (strlen(buf) != len) HALO_FAIL(HALO_ERR_FORMAT, "%s: a NUL byte: not a text file", path);
  st = halo_params_parse(buf, path, p);
cleanup:
  halo_free(buf);
  fclose(fp);
  return st;
}

halo_status halo_params_load(const char *name_or_path, halo_params *p) {
  if (!name_or_path || !p)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_params_load: NULL argument");
  if (find_builtin(name_or_path)) return halo_params_builtin(name_or_path, p);
  errno = 0;
  FILE *fp = fopen(name_or_path, "rb");
  if (!fp) {
    int err = errno;
    char known[256];
    builtin_list(known, sizeof known);
    return HALO_ERROR(HALO_ERR_IO,
                      "parameter set '%s': not a built-in one (%s), nor a file that can be "
                      "opened (%s)",
                      name_or_path, known, err ? strerror(err) : "unknown error");
  }
  fclose(fp);
  return halo_params_read(name_or_path, p);
}

/* Whether key k of q is written: every required key and staged.alpha; ipc.*
 * with have_ipc; a transport's own pair with its have_own. */
static int is_given(const halo_params *q, const key_entry *k) {
  if (!k->key[0]) return 0;
  if (k->dst == &q->ipc.alpha || k->dst == &q->ipc.beta) return q->have_ipc;
  for (int t = 0; t < HALO_N_TRANSPORTS; t++)
    if (k->dst == &q->own[t].alpha || k->dst == &q->own[t].beta) return q->have_own[t];
  for (int t = 0; t < HALO_N_TRANSPORTS; t++)
    if (k->dst == &q->setup[t].alpha || k->dst == &q->setup[t].beta) return q->have_setup[t];
  return 1;
}

halo_status halo_params_write(const halo_params *p, FILE *f) {
  halo_params q;
  key_entry t[N_KEYS];
  if (!p || !f) return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_params_write: NULL argument");
  q = *p;
  key_table(&q, t);
  fprintf(f, "# halo performance model parameters: alpha in s, beta in s/byte; a message of\n"
             "# s bytes is short when s < short_max, eager when s < eager_max, else rendezvous\n");
  for (int i = 0; i < N_KEYS; i++) {
    if (!is_given(&q, &t[i])) continue;
    switch (t[i].kind) {
    case KEY_NAME: fprintf(f, "%s = %s\n", t[i].key, (const char *)t[i].dst); break;
    case KEY_INT: fprintf(f, "%s = %d\n", t[i].key, *(const int *)t[i].dst); break;
    case KEY_INT64:
      fprintf(f, "%s = %lld\n", t[i].key, (long long)*(const int64_t *)t[i].dst);
      break;
    case KEY_DOUBLE: fprintf(f, "%s = %.17g\n", t[i].key, *(const double *)t[i].dst); break;
    }
  }
  if (fflush(f) != 0 || ferror(f))
    return HALO_ERROR(HALO_ERR_IO, "cannot write the parameter set '%s'", p->name);
  return HALO_SUCCESS;
}

/* ---- the model's use -------------------------------------------------------- */

halo_protocol halo_params_protocol(const halo_params *p, int64_t bytes) {
  return bytes < p->short_max   ? HALO_PROTO_SHORT
         : bytes < p->eager_max ? HALO_PROTO_EAGER
                                : HALO_PROTO_RENDEZVOUS;
}

double halo_params_message(const halo_params *p, int gpu, halo_locality loc, int64_t bytes) {
  const halo_protocol q = halo_params_protocol(p, bytes);
  const halo_postal *m = gpu ? &p->gpu[q][loc] : &p->cpu[q][loc];
  return m->alpha + m->beta * (double)bytes;
}
