/* The Matrix Market reader.
 *
 * The reader loads the whole file into one buffer, walks it line by line with
 * a hand-written tokenizer, collects the entries in coordinate form and
 * builds CSR (mm_csr.c). Every format error names the line and the problem.
 * Before the CSR arrays are allocated by the declared sizes, the sizes are
 * checked against the entries the file holds (input_limit.c). Line numbers
 * of entries are not stored: a duplicate entry is located by a second scan of
 * the file, on the error path only. */
#define _POSIX_C_SOURCE 200809L /* fileno, fstat */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "input_limit.h"
#include "mm_csr.h"
#include "progress.h"
#include "settings.h"

halo_mm_options halo_mm_options_default(void) {
  halo_mm_options o;
  memset(&o, 0, sizeof o);
  o.sum_duplicates = 0;
  return o;
}

/* ---- the file ------------------------------------------------------------ */

enum { MM_REAL, MM_INTEGER, MM_PATTERN };

#define MM_BANNER     "'%%%%MatrixMarket matrix coordinate <field> <symmetry>'"
#define MM_TOKEN_SHOW 64 /* characters of a token quoted in a message */

typedef struct {
  const char *path;
  const char *text; /* the whole file, NUL-terminated; NULL once the entries are read */
  char *owned;      /* the buffer of text when the reader read the file, else NULL */
  size_t len;       /* bytes of the file */
  int field, symmetry;
  int64_t m, n, nnz;    /* size line */
  int64_t size_line;    /* its line number */
  size_t entries_off;   /* offset of the line after the size line */
  int64_t entries_line; /* its line number */
} mm_file;

typedef struct {
  const char *s;
  size_t len;
} mm_token;

/* A format error at @p line (0: none) of the file, prefixed with its path. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static halo_status
mm_fail(const mm_file *f, int64_t line, const char *fmt, ...) {
  char msg[HALO_ERROR_LEN];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (line > 0)
    return HALO_ERROR(HALO_ERR_FORMAT, "%s: line %lld: %s", f->path, (long long)line, msg);
  return HALO_ERROR(HALO_ERR_FORMAT, "%s: %s", f->path, msg);
}

/* mm_fail in a function with a cleanup label. */
#define MM_FAIL(...)                                                                               \
  do {                                                                                             \
    st = mm_fail(__VA_ARGS__);                                                                     \
    goto cleanup;                                                                                  \
  } while (0)

/* The most bytes of text one entry of a valid file takes (the reader of a
 * stream bounds what it reads by them), and of a header (banner, comments and
 * the size line). */
#define MM_STREAM_ENTRY_BYTES 256
#define MM_STREAM_HEADER_BYTES (64 * 1024)

/* Whether the n bytes at s hold word, in any case. */
static int holds_word(const char *s, size_t n, const char *word) {
  const size_t w = strlen(word);
  for (size_t i = 0; i + w <= n; i++) {
    size_t k = 0;
    while (k < w && tolower((unsigned char)s[i + k]) == word[k]) k++;
    if (k == w) return 1;
  }
  return 0;
}

/* A stream (a pipe, a device: no length to trust), from its first len bytes
 * (at_end: all it holds): the most bytes a Matrix Market file with the
 * entries its size line declares can hold, into *bound_p; 0 while the size
 * line has not come yet. Refuses a stream that does not start with the
 * banner, whose header is longer than MM_STREAM_HEADER_BYTES, or whose
 * declared entries may need more text than HALO_INPUT_LIMIT. */
static halo_status stream_bound(const char *path, const char *buf, size_t len, int at_end,
                                int64_t *bound_p) {
  static const char banner[] = "%%MatrixMarket";
  const size_t nb = sizeof banner - 1; /* the banner's word, matched in any case */
  *bound_p = 0;
  if (len < nb && !at_end) return HALO_SUCCESS;
  if (len < nb || !holds_word(buf, nb, "%%matrixmarket"))
    return HALO_ERROR(HALO_ERR_FORMAT,
                      "'%s' is not a regular file (a pipe or a device) and does not start like a "
                      "Matrix Market file ('%s')",
                      path, banner);
  const char *nl = memchr(buf, '\n', len), *end = buf + len;
  const int array = nl && holds_word(buf, (size_t)(nl - buf), "array");
  for (const char *p = nl ? nl + 1 : end; p < end;) { /* comments, blank lines, the size line */
    const char *e = memchr(p, '\n', (size_t)(end - p));
    if (!e) break;
    const char *q = p;
    while (q < e && (*q == ' ' || *q == '\t' || *q == '\r')) q++;
    if (q < e && *q != '%') {
      long long v[3] = {0, 0, 0};
      int n = 0;
      char *stop;
      for (const char *r = q; n < 3 && r < e; n++) {
        errno = 0;
        v[n] = strtoll(r, &stop, 10);
        if (stop == r || errno) break;
        r = stop;
      }
      if (n < (array ? 2 : 3)) /* read no further: nothing bounds it */
        return HALO_ERROR(HALO_ERR_FORMAT,
                          "'%s' is not a regular file (a pipe or a device) and its size line "
                          "'%.*s' is not %s integers",
                          path, (int)(e - q < 60 ? e - q : 60), q, array ? "two" : "three");
      const long long entries = array ? (v[0] > 0 && v[1] > 0 && v[0] <= INT64_MAX / v[1]
                                             ? v[0] * v[1]
                                             : INT64_MAX)
                                      : v[2];
      if (entries < 0) return HALO_SUCCESS; /* the parser says what is wrong with it */
      int64_t limit = 0;
      HALO_CHECK(halo_settings_input_limit(&limit));
      const int64_t head = (int64_t)(e + 1 - buf);
      const int64_t bound = entries > (INT64_MAX - head) / MM_STREAM_ENTRY_BYTES
                                ? INT64_MAX
                                : head + (int64_t)entries * MM_STREAM_ENTRY_BYTES;
      if (bound > limit)
        return HALO_ERROR(HALO_ERR_OUT_OF_RANGE,
                          "'%s' is not a regular file (a pipe or a device) and declares %lld "
                          "entries, which may take up to %lld bytes of text (%d an entry), past "
                          "HALO_INPUT_LIMIT (%lld bytes): read it from a regular file, or raise "
                          "HALO_INPUT_LIMIT (none: no limit)",
                          path, entries, (long long)bound, MM_STREAM_ENTRY_BYTES,
                          (long long)limit);
      *bound_p = bound;
      return HALO_SUCCESS;
    }
    p = e + 1;
  }
  if (len >= MM_STREAM_HEADER_BYTES)
    return HALO_ERROR(HALO_ERR_FORMAT,
                      "'%s' is not a regular file (a pipe or a device) and has no size line in "
                      "its first %d bytes",
                      path, MM_STREAM_HEADER_BYTES);
  return HALO_SUCCESS; /* at its end without one: the parser says so */
}

/* Read the whole file into a NUL-terminated buffer. A regular file is read
 * to its end (its length is what it is); a stream only as far as the entries
 * its header declares can reach (stream_bound). */
static halo_status read_file(const char *path, char **buf_p, size_t *len_p) {
  halo_status st = HALO_SUCCESS;
  char *buf = NULL;
  size_t cap, len = 0, hint = 0;
  *buf_p = NULL;
  *len_p = 0;
  FILE *fp;
  HALO_CHECK(halo_file_open_read(path, &fp));
  struct stat sb;
  /* a directory goes the regular way, whose read fails with its own message */
  const int regular =
      fstat(fileno(fp), &sb) == 0 && (S_ISREG(sb.st_mode) || S_ISDIR(sb.st_mode));
  int64_t bound = 0; /* a stream: what its header allows, once known */
  if (regular && fseek(fp, 0, SEEK_END) == 0) {
    long size = ftell(fp);
    if (size > 0) hint = (size_t)size;
  }
  if (regular) rewind(fp);
  halo_progress_stage pr;
  halo_progress_begin(&pr, "reading", HALO_PROGRESS_BYTES, (int64_t)hint);
  /* The size is trusted only once a first read has succeeded (a directory
   * reports a huge one); then the buffer grows to it plus one byte, so that
   * the read ends short at the end of the file, plus one for the NUL. Reads
   * of at most 64 MiB, for the progress reports. */
  cap = (size_t)1 << 16;
  buf = halo_malloc(cap);
  if (!buf) HALO_FAIL(HALO_ERR_OUT_OF_MEMORY, "out of memory reading '%s'", path);
  for (;;) {
    if (cap - len < 2) {
      char *bigger = NULL;
      if (hint > len && hint < SIZE_MAX - 2) bigger = halo_realloc(buf, hint + 2);
      if (bigger) {
        cap = hint + 2;
      } else {
        if (cap > SIZE_MAX / 2) HALO_FAIL(HALO_ERR_OUT_OF_MEMORY, "'%s' is too large", path);
        bigger = halo_realloc(buf, cap * 2);
        if (!bigger)
          HALO_FAIL(HALO_ERR_OUT_OF_MEMORY, "out of memory reading '%s' (%zu bytes so far)", path,
                    len);
        cap *= 2;
      }
      buf = bigger;
      hint = 0;
    }
    size_t want = cap - 1 - len;
    if (want > (size_t)1 << 26) want = (size_t)1 << 26;
    errno = 0;
    size_t got = fread(buf + len, 1, want, fp);
    len += got;
    halo_progress_tick(&pr, (int64_t)len);
    if (!regular && bound == 0) HALO_TRY(stream_bound(path, buf, len, got < want, &bound));
    if (!regular && bound > 0 && (int64_t)len > bound)
      HALO_FAIL(HALO_ERR_FORMAT,
                "'%s' is not a regular file (a pipe or a device) and holds more than the "
                "entries its header declares can fill (%lld bytes of text read)",
                path, (long long)len);
    if (got < want) {
      if (ferror(fp)) {
        int err = errno;
        HALO_FAIL(HALO_ERR_IO, "cannot read '%s': %s", path, err ? strerror(err) : "read error");
      }
      break;
    }
  }
  buf[len] = '\0';
  halo_progress_end(&pr);
  *buf_p = buf;
  *len_p = len;
  buf = NULL;
cleanup:
  halo_free(buf);
  fclose(fp);
  return st;
}

/* ---- tokens -------------------------------------------------------------- */

static inline int is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Split the line at *pp into tokens (the first max kept in tok) and move *pp
 * to the start of the next line. Returns the number of tokens of the line. */
static inline int split_line(const char **pp, const char *end, mm_token *tok, int max) {
  const char *p = *pp;
  int n = 0;
  for (;;) {
    while (p < end && is_blank(*p)) p++;
    if (p >= end || *p == '\n') break;
    const char *s = p;
    while (p < end && *p != '\n' && !is_blank(*p)) p++;
    if (n < max) {
      tok[n].s = s;
      tok[n].len = (size_t)(p - s);
    }
    n++;
  }
  if (p < end) p++; /* the newline */
  *pp = p;
  return n;
}

/* A token for a message: at most MM_TOKEN_SHOW characters, bytes that are
 * not printable ASCII as \xNN. One token per message (a single buffer). */
static const char *tok_str(mm_token t) {
  static _Thread_local char buf[4 * MM_TOKEN_SHOW + 8];
  size_t w = 0;
  for (size_t k = 0; k < t.len && k < MM_TOKEN_SHOW; k++) {
    unsigned char c = (unsigned char)t.s[k];
    if (c >= 0x20 && c < 0x7f)
      buf[w++] = (char)c;
    else
      w += (size_t)snprintf(buf + w, sizeof buf - w, "\\x%02x", c);
  }
  if (t.len > MM_TOKEN_SHOW) buf[w++] = '.', buf[w++] = '.', buf[w++] = '.';
  buf[w] = '\0';
  return buf;
}

/* Case-insensitive comparison of a token with a keyword. */
static int token_is(mm_token t, const char *word) {
  size_t n = strlen(word);
  if (t.len != n) return 0;
  for (size_t k = 0; k < n; k++)
    if (tolower((unsigned char)t.s[k]) != tolower((unsigned char)word[k])) return 0;
  return 1;
}

enum { MM_NUM_OK = 0, MM_NUM_MALFORMED = 1, MM_NUM_TOO_LARGE = 2 };

/* A decimal integer with an optional sign, the whole token. */
static inline int parse_i64(mm_token t, int64_t *out) {
  size_t k = 0;
  int neg = 0, big = 0;
  if (t.len > 0 && (t.s[0] == '+' || t.s[0] == '-')) {
    neg = t.s[0] == '-';
    k = 1;
  }
  if (k == t.len) return MM_NUM_MALFORMED;
  int64_t v = 0;
  for (; k < t.len; k++) {
    unsigned d = (unsigned)((unsigned char)t.s[k] - '0');
    if (d > 9) return MM_NUM_MALFORMED;
    if (v > (INT64_MAX - (int64_t)d) / 10)
      big = 1;
    else
      v = 10 * v + (int64_t)d;
  }
  if (big) return MM_NUM_TOO_LARGE;
  *out = neg ? -v : v;
  return MM_NUM_OK;
}

/* ---- header -------------------------------------------------------------- */

static halo_status parse_banner(mm_file *f, int64_t line, const mm_token *tok, int nt) {
  if (nt >= 1 && tok[0].len >= 2 && (unsigned char)tok[0].s[0] == 0x1f &&
      (unsigned char)tok[0].s[1] == 0x8b)
    return mm_fail(f, line, "the file is gzip-compressed: decompress it first");
  if (nt < 1 || !token_is(tok[0], "%%MatrixMarket"))
    return mm_fail(f, line, "missing or garbled banner: expected " MM_BANNER ", found '%s'",
                   tok_str(tok[0]));
  if (nt > 1 && !token_is(tok[1], "matrix"))
    return mm_fail(f, line, "unsupported object '%s' in the banner: expected 'matrix'",
                   tok_str(tok[1]));
  if (nt > 2 && !token_is(tok[2], "coordinate")) {
    if (token_is(tok[2], "array"))
      return mm_fail(f, line, "dense array format is not supported: convert to coordinate");
    return mm_fail(f, line, "unknown format '%s' in the banner: expected 'coordinate'",
                   tok_str(tok[2]));
  }
  if (nt > 3) {
    if (token_is(tok[3], "real") || token_is(tok[3], "double"))
      f->field = MM_REAL;
    else if (token_is(tok[3], "integer"))
      f->field = MM_INTEGER;
    else if (token_is(tok[3], "pattern"))
      f->field = MM_PATTERN;
    else if (token_is(tok[3], "complex"))
      return mm_fail(f, line, "complex matrices are not supported");
    else
      return mm_fail(f, line, "unknown field '%s' in the banner: expected real, integer or pattern",
                     tok_str(tok[3]));
  }
  if (nt > 4) {
    if (token_is(tok[4], "general"))
      f->symmetry = MM_GENERAL;
    else if (token_is(tok[4], "symmetric"))
      f->symmetry = MM_SYMMETRIC;
    else if (token_is(tok[4], "skew-symmetric"))
      f->symmetry = MM_SKEW;
    else if (token_is(tok[4], "hermitian"))
      return mm_fail(f, line, "hermitian symmetry: complex matrices are not supported");
    else
      return mm_fail(f, line,
                     "unknown symmetry '%s' in the banner: expected general, symmetric or "
                     "skew-symmetric",
                     tok_str(tok[4]));
  }
  if (nt < 5) return mm_fail(f, line, "incomplete banner: expected " MM_BANNER);
  if (nt > 5)
    return mm_fail(f, line, "unexpected '%s' after the symmetry in the banner", tok_str(tok[5]));
  if (f->field == MM_PATTERN && f->symmetry == MM_SKEW)
    return mm_fail(f, line, "a pattern matrix cannot be skew-symmetric");
  return HALO_SUCCESS;
}

static halo_status parse_size_line(mm_file *f, int64_t line, const mm_token *tok, int nt) {
  static const char *const what[3] = {"rows", "columns", "entries"};
  int64_t v[3];
  if (nt != 3)
    return mm_fail(f, line, "size line: expected 3 integers (rows columns entries), found %d", nt);
  for (int k = 0; k < 3; k++) {
    int rc = parse_i64(tok[k], &v[k]);
    if (rc == MM_NUM_MALFORMED)
      return mm_fail(f, line, "size line: malformed number '%s' for the %s", tok_str(tok[k]),
                     what[k]);
    /* Sizes are bounded so that offsets and byte counts never overflow. */
    if (rc == MM_NUM_TOO_LARGE || v[k] > INT64_MAX / 32)
      return HALO_ERROR(HALO_ERR_OUT_OF_RANGE, "%s: line %lld: size line: %s %s: too large",
                        f->path, (long long)line, tok_str(tok[k]), what[k]);
    if (v[k] < 0)
      return mm_fail(f, line, "size line: negative number of %s %lld", what[k], (long long)v[k]);
  }
  f->m = v[0];
  f->n = v[1];
  f->nnz = v[2];
  f->size_line = line;
  if (f->symmetry != MM_GENERAL && f->m != f->n)
    return mm_fail(f, line, "a %s matrix must be square, but the size line declares %lld x %lld",
                   f->symmetry == MM_SKEW ? "skew-symmetric" : "symmetric", (long long)f->m,
                   (long long)f->n);
  return HALO_SUCCESS;
}

/* Banner, comments and size line; leaves f->entries_* at the first entry. */
static halo_status parse_header(mm_file *f) {
  const char *p = f->text, *end = f->text + f->len;
  mm_token tok[6];
  int64_t line = 0;
  int nt = 0;
  if (f->len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0) p += 3; /* UTF-8 byte order mark */
  while (nt == 0) {
    if (p >= end) return mm_fail(f, 0, "empty file: expected the banner " MM_BANNER);
    line++;
    nt = split_line(&p, end, tok, 6);
  }
  HALO_CHECK(parse_banner(f, line, tok, nt));
  for (;;) {
    if (p >= end) return mm_fail(f, 0, "file ends before the size line (rows columns entries)");
    line++;
    nt = split_line(&p, end, tok, 6);
    if (nt == 0 || tok[0].s[0] == '%') continue;
    break;
  }
  HALO_CHECK(parse_size_line(f, line, tok, nt));
  f->entries_off = (size_t)(p - f->text);
  f->entries_line = line + 1;
  return HALO_SUCCESS;
}

/* ---- entries ------------------------------------------------------------- */

static const char *entry_expected(const mm_file *f) {
  return f->field == MM_PATTERN ? "2 values (row column) in a pattern matrix"
                                : "3 values (row column value)";
}

/* Row or column index of an entry: 1-based in the file, 0-based out. */
static inline halo_status parse_index(const mm_file *f, int64_t line, mm_token t, int64_t hi,
                                      const char *what, int64_t *out) {
  int64_t v = 0;
  int rc = parse_i64(t, &v);
  if (rc == MM_NUM_OK && v >= 1 && v <= hi) {
    *out = v - 1;
    return HALO_SUCCESS;
  }
  if (rc == MM_NUM_MALFORMED)
    return mm_fail(f, line, "malformed number '%s' for the %s index", tok_str(t), what);
  return mm_fail(f, line, "%s index %s out of range [1, %lld]", what, tok_str(t), (long long)hi);
}

static halo_status parse_value(const mm_file *f, int64_t line, mm_token t, double *out) {
  if (f->field == MM_INTEGER) {
    int64_t v = 0;
    int rc = parse_i64(t, &v);
    if (rc == MM_NUM_MALFORMED)
      return mm_fail(f, line, "malformed number '%s' in an integer matrix", tok_str(t));
    if (rc == MM_NUM_TOO_LARGE)
      return mm_fail(f, line, "integer value %s is too large", tok_str(t));
    *out = (double)v;
    return HALO_SUCCESS;
  }
  /* The token ends with a blank, a newline or the final NUL, where strtod
   * stops; it must consume the whole token. */
  char *e = NULL;
  double v = strtod(t.s, &e);
  if (e != t.s + t.len) return mm_fail(f, line, "malformed number '%s'", tok_str(t));
  if (!isfinite(v)) return mm_fail(f, line, "value '%s' is not a finite number", tok_str(t));
  *out = v;
  return HALO_SUCCESS;
}

static halo_status parse_entries(const mm_file *f, mm_coo *e) {
  halo_status st = HALO_SUCCESS;
  const char *p = f->text + f->entries_off, *end = f->text + f->len;
  const int want = f->field == MM_PATTERN ? 2 : 3;
  int64_t line = f->entries_line, count = 0;
  /* An entry takes at least 4 bytes ("1 1" and a newline): a size line that
   * declares more than the file can hold does not allocate them. */
  int64_t cap = (int64_t)((size_t)(end - p) / 4 + 1);
  if (cap > f->nnz) cap = f->nnz;
  memset(e, 0, sizeof *e);
  HALO_TRY(HALO_ALLOC(e->rows, cap));
  HALO_TRY(HALO_ALLOC(e->cols, cap));
  if (f->field != MM_PATTERN) HALO_TRY(HALO_ALLOC(e->vals, cap));
  const char *const first = p;
  halo_progress_stage pr;
  halo_progress_begin(&pr, "parsing", HALO_PROGRESS_BYTES, (int64_t)(end - first));
  for (; p < end; line++) {
    mm_token tok[4];
    halo_progress_tick(&pr, (int64_t)(p - first));
    int nt = split_line(&p, end, tok, 4);
    if (nt == 0 || tok[0].s[0] == '%') continue;
    if (count == f->nnz)
      MM_FAIL(f, line, "more entries than the %lld declared on line %lld", (long long)f->nnz,
              (long long)f->size_line);
    if (nt != want) MM_FAIL(f, line, "expected %s, found %d", entry_expected(f), nt);
    if (count >= cap) HALO_FAIL(HALO_ERR_INTERNAL, "entry capacity %lld exceeded", (long long)cap);
    int64_t i = 0, j = 0;
    HALO_TRY(parse_index(f, line, tok[0], f->m, "row", &i));
    HALO_TRY(parse_index(f, line, tok[1], f->n, "column", &j));
    if (want == 3) HALO_TRY(parse_value(f, line, tok[2], &e->vals[count]));
    if (f->symmetry == MM_SKEW && i == j)
      MM_FAIL(f, line, "diagonal entry (%lld, %lld) in a skew-symmetric matrix", (long long)i + 1,
              (long long)j + 1);
    e->rows[count] = i;
    e->cols[count] = j;
    count++;
  }
  if (count < f->nnz)
    MM_FAIL(f, 0, "file ends after %lld of %lld entries declared on line %lld", (long long)count,
            (long long)f->nnz, (long long)f->size_line);
  e->count = count;
  halo_progress_end(&pr);
cleanup:
  if (st != HALO_SUCCESS) mm_coo_free(e);
  return st;
}

/* ---- duplicates (error path) --------------------------------------------- */

/* Name the lines of the first two entries of the file that give (r, c)
 * (0-based), reading the file again when its text is gone. */
static halo_status report_duplicate(mm_file *f, int64_t r, int64_t c) {
  const int sym = f->symmetry != MM_GENERAL;
  int64_t lines[2], fi[2], fj[2];
  int found = 0;
  if (!f->text && read_file(f->path, &f->owned, &f->len) == HALO_SUCCESS) f->text = f->owned;
  if (f->text && f->entries_off <= f->len) {
    const char *p = f->text + f->entries_off, *end = f->text + f->len;
    for (int64_t line = f->entries_line; p < end && found < 2; line++) {
      mm_token tok[4];
      int64_t i = 0, j = 0;
      int nt = split_line(&p, end, tok, 4);
      if (nt < 2 || tok[0].s[0] == '%') continue;
      if (parse_i64(tok[0], &i) != MM_NUM_OK || parse_i64(tok[1], &j) != MM_NUM_OK) continue;
      if ((i - 1 == r && j - 1 == c) || (sym && i - 1 == c && j - 1 == r)) {
        lines[found] = line;
        fi[found] = i;
        fj[found] = j;
        found++;
      }
    }
  }
  if (found < 2)
    return mm_fail(f, 0, "duplicate entry (%lld, %lld)", (long long)r + 1, (long long)c + 1);
  if (fi[0] == fi[1] && fj[0] == fj[1])
    return mm_fail(f, lines[1], "duplicate entry (%lld, %lld), first on line %lld",
                   (long long)fi[1], (long long)fj[1], (long long)lines[0]);
  return mm_fail(f, lines[1],
                 "entry (%lld, %lld) duplicates entry (%lld, %lld) of line %lld: a %s file "
                 "stores one entry of each off-diagonal pair",
                 (long long)fi[1], (long long)fj[1], (long long)fi[0], (long long)fj[0],
                 (long long)lines[0], f->symmetry == MM_SKEW ? "skew-symmetric" : "symmetric");
}

/* ---- the reader ---------------------------------------------------------- */

/* Parse f->text (freed once the entries are read, when the reader owns it):
 * header, entries, the sizes against the entries, CSR. */
static halo_status mm_parse_file(mm_file *f, const halo_mm_options *opts, halo_csr *A) {
  halo_status st = HALO_SUCCESS;
  mm_coo e;
  halo_csr out;
  int64_t dup[2];
  memset(&e, 0, sizeof e);
  memset(&out, 0, sizeof out);
  const halo_mm_options o = opts ? *opts : halo_mm_options_default();
  HALO_TRY(parse_header(f));
  HALO_TRY(parse_entries(f, &e));
  HALO_TRY(halo_io_check_sizes(f->path, f->m, f->n, e.count, (int64_t)f->len));
  if (f->owned) { /* the entries are all in e now */
    HALO_FREE(f->owned);
    f->text = NULL;
  }
  HALO_TRY(mm_build_csr(f->m, f->n, f->symmetry, &e, o.sum_duplicates != 0, &out, dup));
  if (dup[0] >= 0) HALO_TRY(report_duplicate(f, dup[0], dup[1]));
  *A = out;
  memset(&out, 0, sizeof out);
cleanup:
  halo_csr_free(&out);
  mm_coo_free(&e);
  return st;
}

halo_status halo_mm_read(const char *path, const halo_mm_options *opts, halo_csr *A) {
  halo_status st = HALO_SUCCESS;
  mm_file f;
  memset(&f, 0, sizeof f);
  if (!A) return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_mm_read: the output matrix is NULL");
  memset(A, 0, sizeof *A);
  if (!path) return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_mm_read: the path is NULL");
  f.path = path;
  HALO_TRY(read_file(path, &f.owned, &f.len));
  f.text = f.owned;
  HALO_TRY(mm_parse_file(&f, opts, A));
cleanup:
  halo_free(f.owned);
  return st;
}

halo_status halo_mm_parse(const char *name, const char *text, size_t len,
                          const halo_mm_options *opts, halo_csr *A) {
  mm_file f;
  memset(&f, 0, sizeof f);
  if (!A) return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_mm_parse: the output matrix is NULL");
  memset(A, 0, sizeof *A);
  if (!text || text[len] != '\0')
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_mm_parse: no NUL-terminated text");
  f.path = name ? name : "(memory)";
  f.text = text;
  f.len = len;
  return mm_parse_file(&f, opts, A);
}
