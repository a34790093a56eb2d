/* Remembered choices of strategy AUTO in a file; see wisdom.h. */
#define _POSIX_C_SOURCE 200809L /* fileno, getpid */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/wisdom.h"

#define WISDOM_HEADER "halo-wisdom 1"

static uint64_t fnv(uint64_t h, const void *data, size_t n) {
  const unsigned char *b = data;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * UINT64_C(1099511628211);
  return h;
}
#define FNV(h, v) ((h) = fnv((h), &(v), sizeof(v)))

static uint64_t mix64(uint64_t z) { /* splitmix64's finaliser */
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return z ^ (z >> 31);
}


/* floor(log2(v + 1)): the power-of-two bucket of a volume */
static int bucket(int64_t v) {
  int b = 0;
  for (uint64_t u = (uint64_t)(v < 0 ? 0 : v) + 1; u > 1; u >>= 1) b++;
  return b;
}

int halo_wisdom_same_uses(int64_t a, int64_t b) { return bucket(a) == bucket(b); }

halo_status halo_wisdom_key(MPI_Comm comm, const halo_pattern *pattern,
                            const halo_wisdom_where *where, uint64_t *key_p) {
  int rank, size;
  HALO_MPI(MPI_Comm_rank(comm, &rank));
  HALO_MPI(MPI_Comm_size(comm, &size));
  /* this rank's part: its place, its messages and their volumes in buckets */
  int64_t recv = 0, send = 0;
  for (int i = 0; i < pattern->n_recv; i++) recv += pattern->recv[i].count;
  for (int i = 0; i < pattern->n_send; i++) send += pattern->send[i].count;
  const int mine[5] = {rank, pattern->n_recv, bucket(recv), pattern->n_send, bucket(send)};
  uint64_t h = UINT64_C(1469598103934665603), sum = 0;
  h = fnv(h, mine, sizeof mine);
  const uint64_t part = mix64(h);
  HALO_MPI(MPI_Allreduce(&part, &sum, 1, MPI_UINT64_T, MPI_SUM, comm));
  /* what every rank shares: the machine, the layout, the options the choice depends on */
  const halo_plan_options *o = where->opts;
  uint64_t g = UINT64_C(1469598103934665603);
  g = fnv(g, where->params, sizeof *where->params);
  FNV(g, size), FNV(g, where->topo->n_nodes), FNV(g, where->topo->max_node_size);
  FNV(g, where->memory), FNV(g, where->ranks_per_gpu), FNV(g, where->has_matrix);
  FNV(g, o->transport), FNV(g, o->message_cap), FNV(g, o->remove_duplicates);
  FNV(g, o->autotune);
  *key_p = mix64(g ^ sum);
  return HALO_SUCCESS;
}

/* ---- the file ---------------------------------------------------------------- */

typedef struct {
  uint64_t key;
  halo_wisdom_entry e;
} entry;

/* Parse one line into *out; 0 and why where it is not one. */
static int parse_line(const char *line, entry *out, char *why, size_t len) {
  char hex[17], sname[32], tname[32];
  long long cap, uses, measured;
  int used = 0;
  if (sscanf(line, "%16[0-9a-f] %31s %31s %lld %lld %lld %n", hex, sname, tname, &cap, &uses,
             &measured, &used) != 6 ||
      strlen(hex) != 16 || line[used] != '\0') {
    snprintf(why, len, "not KEY STRATEGY TRANSPORT MESSAGE_CAP USES MEASURED");
    return 0;
  }
  out->key = (uint64_t)strtoull(hex, NULL, 16);
  if (halo_strategy_from_name(sname, &out->e.strategy) != HALO_SUCCESS ||
      out->e.strategy == HALO_STRATEGY_AUTO) {
    snprintf(why, len, "unknown strategy '%s'", sname);
    halo_error_clear(); /* the file is ignored, not an error of the call */
    return 0;
  }
  if (halo_transport_from_name(tname, &out->e.transport) != HALO_SUCCESS ||
      out->e.transport == HALO_TRANSPORT_AUTO) {
    snprintf(why, len, "unknown transport '%s'", tname);
    halo_error_clear();
    return 0;
  }
  if (cap < 8 || uses < 1 || measured < 0) {
    snprintf(why, len, "message_cap %lld, uses %lld or measured %lld out of range", cap, uses,
             measured);
    return 0;
  }
  out->e.message_cap = cap, out->e.uses = uses, out->e.measured = measured;
  return 1;
}

/* Read the file's entries (rank 0): HALO_SUCCESS with *n_p of them (0 and
 * why "" where there is no file); HALO_ERR_FORMAT with why where the file is
 * ignored. The caller frees *list_p. */
static halo_status read_entries(const char *path, entry **list_p, int *n_p, char *why, size_t len) {
  halo_status st = HALO_SUCCESS;
  FILE *f = NULL;
  char *text = NULL;
  entry *list = NULL;
  int n = 0, cap = 0;
  *list_p = NULL, *n_p = 0;
  why[0] = '\0';
  f = fopen(path, "r");
  if (!f) {
    if (errno != ENOENT) snprintf(why, len, "cannot open it: %s", strerror(errno));
    return errno == ENOENT ? HALO_SUCCESS : HALO_ERR_IO;
  }
  struct stat sb;
  if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
    snprintf(why, len, "not a regular file");
    st = HALO_ERR_FORMAT;
    goto cleanup;
  }
  if (sb.st_size > HALO_WISDOM_MAX_BYTES) {
    snprintf(why, len, "%lld bytes, more than %d", (long long)sb.st_size, HALO_WISDOM_MAX_BYTES);
    st = HALO_ERR_FORMAT;
    goto cleanup;
  }
  text = halo_malloc((size_t)HALO_WISDOM_MAX_LINE + 2);
  if (!text) {
    snprintf(why, len, "out of memory");
    st = HALO_ERR_OUT_OF_MEMORY;
    goto cleanup;
  }
  int line = 1;
  for (; fgets(text, HALO_WISDOM_MAX_LINE + 2, f); line++) {
    size_t l = strlen(text);
    if (l > 0 && text[l - 1] == '\n')
      text[--l] = '\0';
    else if (!feof(f)) {
      snprintf(why, len, "line %d: longer than %d characters", line, HALO_WISDOM_MAX_LINE);
      st = HALO_ERR_FORMAT;
      goto cleanup;
    }
    if (line == 1) {
      if (strcmp(text, WISDOM_HEADER) != 0) {
        snprintf(why, len, "line 1: not '" WISDOM_HEADER "' (another version, or no wisdom file)");
        st = HALO_ERR_FORMAT;
        goto cleanup;
      }
      continue;
    }
    entry e;
    char what[96];
    if (!parse_line(text, &e, what, sizeof what)) {
      snprintf(why, len, "line %d: %s", line, what);
      st = HALO_ERR_FORMAT;
      goto cleanup;
    }
    int at = -1;
    for (int i = 0; i < n && at < 0; i++)
      if (list[i].key == e.key) at = i; /* a key's later line wins */
    if (at < 0) {
      if (n == HALO_WISDOM_MAX_ENTRIES) {
        snprintf(why, len, "more than %d keys", HALO_WISDOM_MAX_ENTRIES);
        st = HALO_ERR_FORMAT;
        goto cleanup;
      }
      if (n == cap) {
        const int grown = cap ? 2 * cap : 64;
        entry *p = halo_realloc(list, (size_t)grown * sizeof *list);
        if (!p) {
          snprintf(why, len, "out of memory");
          st = HALO_ERR_OUT_OF_MEMORY;
          goto cleanup;
        }
        list = p, cap = grown;
      }
      at = n++;
    }
    list[at] = e;
  }
  if (ferror(f)) {
    snprintf(why, len, "read error");
    st = HALO_ERR_IO;
  } else if (line == 1) {
    snprintf(why, len, "line 1: not '" WISDOM_HEADER "' (an empty file)");
    st = HALO_ERR_FORMAT;
  }
cleanup:
  halo_free(text);
  if (f) fclose(f);
  if (st != HALO_SUCCESS) {
    halo_free(list);
    return st;
  }
  *list_p = list, *n_p = n;
  return HALO_SUCCESS;
}

halo_status halo_wisdom_find(MPI_Comm comm, const char *path, uint64_t key, halo_wisdom_entry *e,
                             int *found_p, char *why, size_t why_len) {
  int rank;
  HALO_MPI(MPI_Comm_rank(comm, &rank));
  /* rank 0's answer: found, strategy, transport, message_cap, uses; then its reason */
  int64_t ans[6] = {0, 0, 0, 0, 0, 0};
  char reason[256] = "";
  if (rank == 0) {
    entry *list = NULL;
    int n = 0;
    char r[200];
    if (read_entries(path, &list, &n, r, sizeof r) != HALO_SUCCESS)
      snprintf(reason, sizeof reason, "wisdom file '%.80s' ignored: %.150s", path, r);
    for (int i = 0; i < n; i++)
      if (list[i].key == key)
        ans[0] = 1, ans[1] = list[i].e.strategy, ans[2] = list[i].e.transport,
        ans[3] = list[i].e.message_cap, ans[4] = list[i].e.uses, ans[5] = list[i].e.measured;
    halo_free(list);
  }
  HALO_MPI(MPI_Bcast(ans, 6, MPI_INT64_T, 0, comm));
  HALO_MPI(MPI_Bcast(reason, (int)sizeof reason, MPI_CHAR, 0, comm));
  *found_p = (int)ans[0];
  if (*found_p)
    *e = (halo_wisdom_entry){(halo_strategy)ans[1], (halo_transport)ans[2], ans[3], ans[4],
                             ans[5]};
  if (why && why_len) snprintf(why, why_len, "%s", reason);
  return HALO_SUCCESS;
}

/* Write list (n entries) to path through a temporary file renamed over it. */
static halo_status write_entries(const char *path, const entry *list, int n) {
  char tmp[4096];
  if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp)
    return HALO_ERROR(HALO_ERR_IO, "wisdom file '%.200s': path too long", path);
  FILE *f = fopen(tmp, "w");
  if (!f)
    return HALO_ERROR(HALO_ERR_IO, "wisdom file '%.200s': cannot write %s: %s", path, tmp,
                      strerror(errno));
  int ok = fprintf(f, WISDOM_HEADER "\n") > 0;
  for (int i = 0; i < n && ok; i++)
    ok = fprintf(f, "%016llx %s %s %lld %lld %lld\n", (unsigned long long)list[i].key,
                 halo_strategy_name(list[i].e.strategy), halo_transport_name(list[i].e.transport),
                 (long long)list[i].e.message_cap, (long long)list[i].e.uses,
                 (long long)list[i].e.measured) > 0;
  ok = fflush(f) == 0 && ok;
  ok = fclose(f) == 0 && ok;
  if (!ok || rename(tmp, path) != 0) {
    const int err = errno;
    remove(tmp);
    return HALO_ERROR(HALO_ERR_IO, "wisdom file '%.200s': cannot write it: %s", path,
                      strerror(err));
  }
  return HALO_SUCCESS;
}

halo_status halo_wisdom_store(int rank, const char *path, uint64_t key, const halo_wisdom_entry *e) {
  if (rank != 0) return HALO_SUCCESS;
  entry *list = NULL;
  int n = 0;
  char why[200];
  /* what the file holds (a file that is ignored is replaced), this key's entry last: the
   * newest wins */
  if (read_entries(path, &list, &n, why, sizeof why) != HALO_SUCCESS) n = 0;
  int m = 0;
  for (int i = 0; i < n; i++)
    if (list[i].key != key) list[m++] = list[i];
  entry *all = halo_realloc(list, (size_t)(m + 1) * sizeof *all);
  if (!all) {
    halo_free(list);
    return HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "wisdom file '%.200s': out of memory", path);
  }
  all[m++] = (entry){key, *e};
  const halo_status st = write_entries(path, all, m);
  halo_free(all);
  return st;
}

halo_status halo_wisdom_note_uses(const char *path, uint64_t key, int64_t uses) {
  entry *list = NULL;
  int n = 0, at = -1;
  char why[200];
  if (read_entries(path, &list, &n, why, sizeof why) != HALO_SUCCESS) {
    halo_free(list);
    return HALO_SUCCESS; /* an ignored file: nothing to note */
  }
  for (int i = 0; i < n && at < 0; i++)
    if (list[i].key == key) at = i;
  halo_status st = HALO_SUCCESS;
  if (at >= 0 && list[at].e.measured != uses) {
    list[at].e.measured = uses;
    st = write_entries(path, list, n);
  }
  halo_free(list);
  return st;
}
