/* The binary CSR format (.hcsr): writer, serial reader, and the collective
 * reader in which every rank reads its own rows with MPI-IO.
 *
 * The layout and the checksum are in include/halo/io.h and README.md. A
 * part's checksum is a sum over its elements of a hash of (index, element),
 * so a rank adds up the elements it reads, whatever its slice, and one
 * MPI_Allreduce gives the checksum of the whole part. Rank r reads row
 * pointers [b_r, e_r] (entry e_r is also the next rank's first) and counts
 * entries [b_r, e_r), the last rank entry n_rows as well.
 *
 * Checks run in the order that names the real problem: the header (length,
 * magic, version, header checksum, flags, sizes against the file length),
 * then each part's checksum before its contents (a corrupted file says "bad
 * checksum", a well-formed file with bad contents names the bad entry). */
#define _POSIX_C_SOURCE 200809L /* fseeko, ftello */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "halo/io.h"
#include "halo_impl.h"
#include "settings.h"
#include "progress.h"

#define HCSR_MAGIC        "HALOCSR" /* and its terminating zero: 8 bytes */
#define HCSR_MAGIC_LEN    8
#define HCSR_VERSION      1u
#define HCSR_HEADER_BYTES 72
#define HCSR_FLAG_COL64   1u
#define HCSR_INDEX_STEP   UINT64_C(0x9e3779b97f4a7c15)
#define HCSR_FNV_BASIS    UINT64_C(0xcbf29ce484222325)
#define HCSR_FNV_PRIME    UINT64_C(0x100000001b3)
#define HCSR_MAX_READ     (1 << 30) /* bytes per read call */
#define HCSR_PIECE        (1 << 26) /* bytes per fread or fwrite call (progress reports) */

#if defined(__BYTE_ORDER__) && defined(__ORDER_BIG_ENDIAN__) &&                                    \
    __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define HCSR_BIG_ENDIAN_HOST 1
#else
#define HCSR_BIG_ENDIAN_HOST 0
#endif

enum { PART_PTR = 0, PART_COL = 1, PART_VAL = 2 };
static const char *const part_name[3] = {"row pointers", "column indices", "values"};

/* The header, decoded, and where the parts lie. */
typedef struct {
  uint32_t version, flags;
  int64_t n_rows, n_cols, nnz;
  uint64_t sum[3];   /* stored checksums of the parts */
  int col_bytes;     /* 4 or 8 */
  int64_t ptr_off;   /* offset of the row pointers */
  int64_t col_off;   /* of the column indices */
  int64_t pad_bytes; /* zero bytes after the column indices */
  int64_t val_off;   /* of the values */
  int64_t length;    /* of the whole file */
} hcsr_header;

halo_hcsr_options halo_hcsr_options_default(void) {
  halo_hcsr_options o;
  memset(&o, 0, sizeof o);
  o.index_bytes = 0;
  return o;
}

/* ---- bytes, hashes ------------------------------------------------------- */

static uint64_t load_u64(const unsigned char *p) {
  uint64_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

static uint32_t load_u32(const unsigned char *p) {
  uint32_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

static void store_u64(unsigned char *p, uint64_t v) { memcpy(p, &v, sizeof v); }
static void store_u32(unsigned char *p, uint32_t v) { memcpy(p, &v, sizeof v); }

/* The finalizer of splitmix64: a bijection of 64-bit words. */
static inline uint64_t hcsr_mix(uint64_t z) {
  z ^= z >> 30;
  z *= UINT64_C(0xbf58476d1ce4e5b9);
  z ^= z >> 27;
  z *= UINT64_C(0x94d049bb133111eb);
  z ^= z >> 31;
  return z;
}

/* Sum of H(i, e_i) over elements first .. first+n-1 of a part, at p; elements
 * of esize bytes (4 or 8). */
static uint64_t hcsr_sum(const void *p, int esize, int64_t first, int64_t n) {
  const unsigned char *b = p;
  uint64_t s = 0, key = (uint64_t)first * HCSR_INDEX_STEP;
  if (esize == 8) {
    for (int64_t i = 0; i < n; i++, key += HCSR_INDEX_STEP)
      s += hcsr_mix(load_u64(b + 8 * i) ^ key);
  } else {
    for (int64_t i = 0; i < n; i++, key += HCSR_INDEX_STEP)
      s += hcsr_mix(load_u32(b + 4 * i) ^ key);
  }
  return s;
}

static uint64_t fnv1a64(const unsigned char *p, size_t n) {
  uint64_t h = HCSR_FNV_BASIS;
  for (size_t i = 0; i < n; i++) {
    h ^= p[i];
    h *= HCSR_FNV_PRIME;
  }
  return h;
}

/* ---- errors -------------------------------------------------------------- */

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static halo_status
hcsr_fail(halo_status code, const char *path, const char *fmt, ...) {
  char msg[HALO_ERROR_LEN];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return HALO_ERROR(code, "%s: %s", path, msg);
}

static halo_status no_big_endian(void) {
  return HALO_ERROR(HALO_ERR_UNSUPPORTED, "hcsr files are read and written on little-endian "
                                          "hosts only");
}

/* An MPI-IO failure on path, with MPI's reason. */
static halo_status hcsr_mpi_io(int rc, const char *what, const char *path) {
  char reason[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, reason, &len) != MPI_SUCCESS)
    snprintf(reason, sizeof reason, "MPI error %d", rc);
  return HALO_ERROR(HALO_ERR_IO, "cannot %s '%s': %s", what, path, reason);
}

/* A read that ended early: the file changed after its length was taken. */
static halo_status short_read(const char *path, int64_t off) {
  return HALO_ERROR(HALO_ERR_IO,
                    "cannot read '%s': the file ends before byte %lld (did it change while "
                    "being read?)",
                    path, (long long)off);
}

/* The first bytes of a file that is not hcsr, for a message. */
static void show_bytes(const unsigned char *p, int64_t n, char *buf, size_t len) {
  size_t w = 0;
  for (int64_t k = 0; k < n && w + 5 < len; k++) {
    unsigned char c = p[k];
    if (c >= 0x20 && c < 0x7f && c != '\\')
      buf[w++] = (char)c;
    else
      w += (size_t)snprintf(buf + w, len - w, "\\x%02x", c);
  }
  buf[w] = '\0';
}

/* ---- header -------------------------------------------------------------- */

static void encode_header(const hcsr_header *h, unsigned char *b) {
  memset(b, 0, HCSR_HEADER_BYTES);
  memcpy(b, HCSR_MAGIC, HCSR_MAGIC_LEN);
  store_u32(b + 8, h->version);
  store_u32(b + 12, h->flags);
  store_u64(b + 16, (uint64_t)h->n_rows);
  store_u64(b + 24, (uint64_t)h->n_cols);
  store_u64(b + 32, (uint64_t)h->nnz);
  for (int k = 0; k < 3; k++) store_u64(b + 40 + 8 * k, h->sum[k]);
  store_u64(b + 64, fnv1a64(b, 64));
}

/* Where the parts lie and how long the file is, from the sizes; 0 if the
 * sizes are too large for a file. */
static int layout(hcsr_header *h) {
  const int64_t lim = INT64_C(1) << 58; /* the length stays below 2^63 */
  if (h->n_rows >= lim || h->nnz >= lim) return 0;
  h->ptr_off = HCSR_HEADER_BYTES;
  h->col_off = h->ptr_off + 8 * (h->n_rows + 1);
  const int64_t col_end = h->col_off + h->col_bytes * h->nnz;
  h->pad_bytes = (8 - col_end % 8) % 8;
  h->val_off = col_end + h->pad_bytes;
  h->length = h->val_off + 8 * h->nnz;
  return 1;
}

/* Decode and check the header: b holds the first min(length, 72) bytes of a
 * file of @p length bytes. */
static halo_status decode_header(const char *path, const unsigned char *b, int64_t length,
                                 hcsr_header *h) {
  memset(h, 0, sizeof *h);
  const int64_t have = length < HCSR_HEADER_BYTES ? length : HCSR_HEADER_BYTES;
  const int64_t m = have < HCSR_MAGIC_LEN ? have : HCSR_MAGIC_LEN;
  if (memcmp(b, HCSR_MAGIC, (size_t)m) != 0) {
    char found[64];
    show_bytes(b, m, found, sizeof found);
    return hcsr_fail(HALO_ERR_FORMAT, path,
                     "not an hcsr file: wrong magic '%s' (expected 'HALOCSR\\x00')", found);
  }
  if (length < HCSR_HEADER_BYTES)
    return hcsr_fail(HALO_ERR_FORMAT, path,
                     "truncated: the file has %lld bytes, less than the %d-byte header",
                     (long long)length, HCSR_HEADER_BYTES);
  h->version = load_u32(b + 8);
  if (h->version != HCSR_VERSION)
    return hcsr_fail(HALO_ERR_FORMAT, path,
                     "unsupported hcsr version %u (this halo reads version %u)",
                     (unsigned)h->version, HCSR_VERSION);
  const uint64_t stored = load_u64(b + 64), computed = fnv1a64(b, 64);
  if (stored != computed)
    return hcsr_fail(HALO_ERR_FORMAT, path,
                     "bad header checksum: stored 0x%016llx, computed 0x%016llx",
                     (unsigned long long)stored, (unsigned long long)computed);
  h->flags = load_u32(b + 12);
  if (h->flags & ~HCSR_FLAG_COL64)
    return hcsr_fail(HALO_ERR_FORMAT, path,
                     "unknown flags 0x%x in the header (known: 0x1, 8-byte column indices)",
                     (unsigned)(h->flags & ~HCSR_FLAG_COL64));
  h->col_bytes = h->flags & HCSR_FLAG_COL64 ? 8 : 4;
  h->n_rows = (int64_t)load_u64(b + 16);
  h->n_cols = (int64_t)load_u64(b + 24);
  h->nnz = (int64_t)load_u64(b + 32);
  for (int k = 0; k < 3; k++) h->sum[k] = load_u64(b + 40 + 8 * k);
  if (h->n_rows < 0 || h->n_cols < 0 || h->nnz < 0)
    return hcsr_fail(HALO_ERR_FORMAT, path,
                     "negative size in the header: %lld x %lld, %lld entries", (long long)h->n_rows,
                     (long long)h->n_cols, (long long)h->nnz);
  if (h->col_bytes == 4 && h->n_cols > INT32_MAX)
    return hcsr_fail(HALO_ERR_FORMAT, path, "%lld columns do not fit the file's 4-byte indices",
                     (long long)h->n_cols);
  if (!layout(h))
    return hcsr_fail(HALO_ERR_FORMAT, path,
                     "sizes too large for a file: %lld rows, %lld entries (the length is %lld "
                     "bytes)",
                     (long long)h->n_rows, (long long)h->nnz, (long long)length);
  if (length != h->length)
    return hcsr_fail(HALO_ERR_FORMAT, path,
                     "%s: the file has %lld bytes, the header's sizes (%lld rows, %lld "
                     "columns, %lld entries, %d-byte column indices) need %lld",
                     length < h->length ? "truncated" : "sizes inconsistent with the file length",
                     (long long)length, (long long)h->n_rows, (long long)h->n_cols,
                     (long long)h->nnz, h->col_bytes, (long long)h->length);
  return HALO_SUCCESS;
}

/* ---- contents ------------------------------------------------------------ */

static halo_status check_sum(const char *path, const hcsr_header *h, int part, uint64_t sum) {
  if (sum == h->sum[part]) return HALO_SUCCESS;
  return hcsr_fail(HALO_ERR_FORMAT, path,
                   "bad checksum of the %s: stored 0x%016llx, computed 0x%016llx", part_name[part],
                   (unsigned long long)h->sum[part], (unsigned long long)sum);
}

/* Row pointers ptr[0..n] of rows row0 .. row0+n: within [0, nnz], never
 * decreasing, 0 first and nnz last where they are the file's first and last. */
static halo_status check_row_ptr(const char *path, const hcsr_header *h, const int64_t *ptr,
                                 int64_t row0, int64_t n) {
  if (row0 == 0 && ptr[0] != 0)
    return hcsr_fail(HALO_ERR_FORMAT, path, "the first row pointer is %lld, must be 0",
                     (long long)ptr[0]);
  for (int64_t i = 0; i <= n; i++) {
    if (ptr[i] < 0 || ptr[i] > h->nnz)
      return hcsr_fail(HALO_ERR_FORMAT, path,
                       "row pointer %lld is %lld, outside [0, %lld] (the number of entries)",
                       (long long)(row0 + i), (long long)ptr[i], (long long)h->nnz);
    if (i > 0 && ptr[i] < ptr[i - 1])
      return hcsr_fail(HALO_ERR_FORMAT, path, "row pointers decrease at row %lld: %lld, then %lld",
                       (long long)(row0 + i - 1), (long long)ptr[i - 1], (long long)ptr[i]);
  }
  if (row0 + n == h->n_rows && ptr[n] != h->nnz)
    return hcsr_fail(HALO_ERR_FORMAT, path,
                     "the last row pointer is %lld, must be the number of entries %lld",
                     (long long)ptr[n], (long long)h->nnz);
  return HALO_SUCCESS;
}

/* 4-byte column indices, read into the first half of cols, widened in
 * place (from the end, so that none is overwritten before it is read). */
static void widen(int64_t *cols, int64_t n) {
  const unsigned char *raw = (const unsigned char *)cols;
  for (int64_t k = n - 1; k >= 0; k--) {
    int32_t c;
    memcpy(&c, raw + 4 * k, sizeof c);
    cols[k] = c;
  }
}

/* The entries of rows row0 .. row0+n-1 (row pointers ptr[0..n], entries
 * from ptr[0] on in cols and vals): columns in [0, n_cols), increasing
 * within each row; values finite. */
static halo_status check_entries(const char *path, const hcsr_header *h, const int64_t *ptr,
                                 int64_t row0, int64_t n, const int64_t *cols, const double *vals) {
  const int64_t base = ptr[0];
  for (int64_t i = 0; i < n; i++) {
    for (int64_t k = ptr[i] - base; k < ptr[i + 1] - base; k++) {
      const int64_t c = cols[k];
      if (c < 0 || c >= h->n_cols)
        return hcsr_fail(HALO_ERR_FORMAT, path,
                         "column index %lld in row %lld is out of range [0, %lld)", (long long)c,
                         (long long)(row0 + i), (long long)h->n_cols);
      if (k > ptr[i] - base && c <= cols[k - 1])
        return hcsr_fail(HALO_ERR_FORMAT, path,
                         "the column indices of row %lld do not increase: %lld, then %lld",
                         (long long)(row0 + i), (long long)cols[k - 1], (long long)c);
      if (!isfinite(vals[k]))
        return hcsr_fail(HALO_ERR_FORMAT, path, "the value at (%lld, %lld) is not finite",
                         (long long)(row0 + i), (long long)c);
    }
  }
  return HALO_SUCCESS;
}

static halo_status check_padding(const char *path, const hcsr_header *h, const unsigned char *pad) {
  for (int64_t k = 0; k < h->pad_bytes; k++)
    if (pad[k] != 0)
      return hcsr_fail(HALO_ERR_FORMAT, path, "padding byte %lld after the column indices is not 0",
                       (long long)(h->val_off - h->pad_bytes + k));
  return HALO_SUCCESS;
}

/* ---- writer -------------------------------------------------------------- */

/* The matrix the writer accepts: whole, with what the reader checks. */
static halo_status check_whole(const halo_csr *A) {
  const int64_t m = A->n_rows;
  if (m < 0 || A->n_cols < 0)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_hcsr_write: negative size %lld x %lld",
                      (long long)m, (long long)A->n_cols);
  if (A->row_begin != 0 || A->row_end != m)
    return HALO_ERROR(HALO_ERR_INVALID_ARG,
                      "halo_hcsr_write needs the whole matrix, but rows [%lld, %lld) of %lld "
                      "are given",
                      (long long)A->row_begin, (long long)A->row_end, (long long)m);
  if (!A->row_ptr) return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_hcsr_write: row_ptr is NULL");
  if (A->row_ptr[0] != 0)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_hcsr_write: row_ptr[0] is %lld, must be 0",
                      (long long)A->row_ptr[0]);
  for (int64_t r = 0; r < m; r++)
    if (A->row_ptr[r + 1] < A->row_ptr[r])
      return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_hcsr_write: row_ptr decreases at row %lld",
                        (long long)r);
  const int64_t nnz = A->row_ptr[m];
  if (nnz > 0 && (!A->col_ids || !A->values))
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_hcsr_write: %lld entries but no %s array",
                      (long long)nnz, A->col_ids ? "values" : "column");
  for (int64_t r = 0; r < m; r++)
    for (int64_t k = A->row_ptr[r]; k < A->row_ptr[r + 1]; k++) {
      const int64_t c = A->col_ids[k];
      if (c < 0 || c >= A->n_cols)
        return HALO_ERROR(HALO_ERR_INVALID_ARG,
                          "halo_hcsr_write: column %lld in row %lld is out of range [0, %lld)",
                          (long long)c, (long long)r, (long long)A->n_cols);
      if (k > A->row_ptr[r] && c <= A->col_ids[k - 1])
        return HALO_ERROR(HALO_ERR_INVALID_ARG,
                          "halo_hcsr_write: the columns of row %lld do not increase (%lld, then "
                          "%lld)",
                          (long long)r, (long long)A->col_ids[k - 1], (long long)c);
      if (!isfinite(A->values[k]))
        return HALO_ERROR(HALO_ERR_INVALID_ARG,
                          "halo_hcsr_write: the value at (%lld, %lld) is not finite", (long long)r,
                          (long long)c);
    }
  return HALO_SUCCESS;
}

/* Write n bytes at the current position of fp, which is at offset *off, in
 * pieces; 1 on failure. */
static int write_bytes(FILE *fp, const void *buf, int64_t n, int64_t *off,
                       halo_progress_stage *pr) {
  const char *p = buf;
  for (int64_t done = 0; done < n;) {
    const size_t k = (size_t)(n - done < HCSR_PIECE ? n - done : HCSR_PIECE);
    if (fwrite(p + done, 1, k, fp) != k) return 1;
    done += (int64_t)k;
    *off += (int64_t)k;
    halo_progress_tick(pr, *off);
  }
  return 0;
}

halo_status halo_hcsr_write(const char *path, const halo_csr *A, const halo_hcsr_options *opts) {
  halo_status st = HALO_SUCCESS;
  FILE *fp = NULL;
  int32_t *narrow = NULL;
  int bad = 0, err = 0;
  if (HCSR_BIG_ENDIAN_HOST) return no_big_endian();
  if (!path || !A)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_hcsr_write: the %s is NULL",
                      path ? "matrix" : "path");
  const halo_hcsr_options o = opts ? *opts : halo_hcsr_options_default();
  if (o.index_bytes != 0 && o.index_bytes != 4 && o.index_bytes != 8)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_hcsr_write: index_bytes %d: 0, 4 or 8",
                      o.index_bytes);
  HALO_CHECK(check_whole(A));
  if (o.index_bytes == 4 && A->n_cols > INT32_MAX)
    return HALO_ERROR(HALO_ERR_OUT_OF_RANGE,
                      "halo_hcsr_write: %lld columns do not fit 4-byte column indices",
                      (long long)A->n_cols);
  hcsr_header h;
  memset(&h, 0, sizeof h);
  h.version = HCSR_VERSION;
  h.n_rows = A->n_rows;
  h.n_cols = A->n_cols;
  h.nnz = A->row_ptr[A->n_rows];
  h.col_bytes = o.index_bytes ? o.index_bytes : (A->n_cols <= INT32_MAX ? 4 : 8);
  h.flags = h.col_bytes == 8 ? HCSR_FLAG_COL64 : 0;
  if (!layout(&h))
    return HALO_ERROR(HALO_ERR_OUT_OF_RANGE, "halo_hcsr_write: %lld rows, %lld entries: too large",
                      (long long)h.n_rows, (long long)h.nnz);

  errno = 0;
  fp = fopen(path, "wb");
  if (!fp) {
    err = errno;
    return HALO_ERROR(HALO_ERR_IO, "cannot open '%s' for writing: %s", path,
                      err ? strerror(err) : "unknown error");
  }
  /* The header last, once the checksums are known. */
  halo_progress_stage pr;
  int64_t off = 0;
  halo_progress_begin(&pr, "writing", HALO_PROGRESS_BYTES, h.length);
  unsigned char head[HCSR_HEADER_BYTES];
  memset(head, 0, sizeof head);
  bad = write_bytes(fp, head, sizeof head, &off, &pr);
  h.sum[PART_PTR] = hcsr_sum(A->row_ptr, 8, 0, h.n_rows + 1);
  if (!bad) bad = write_bytes(fp, A->row_ptr, 8 * (h.n_rows + 1), &off, &pr);
  if (h.col_bytes == 8) {
    h.sum[PART_COL] = hcsr_sum(A->col_ids, 8, 0, h.nnz);
    if (!bad) bad = write_bytes(fp, A->col_ids, 8 * h.nnz, &off, &pr);
  } else {
    const int64_t chunk = 1 << 16;
    HALO_TRY(HALO_ALLOC(narrow, chunk));
    for (int64_t k0 = 0; k0 < h.nnz && !bad; k0 += chunk) {
      const int64_t n = h.nnz - k0 < chunk ? h.nnz - k0 : chunk;
      for (int64_t k = 0; k < n; k++) narrow[k] = (int32_t)A->col_ids[k0 + k];
      h.sum[PART_COL] += hcsr_sum(narrow, 4, k0, n);
      bad = write_bytes(fp, narrow, 4 * n, &off, &pr);
    }
  }
  const unsigned char zeros[8] = {0};
  if (!bad) bad = write_bytes(fp, zeros, h.pad_bytes, &off, &pr);
  h.sum[PART_VAL] = hcsr_sum(A->values, 8, 0, h.nnz);
  if (!bad) bad = write_bytes(fp, A->values, 8 * h.nnz, &off, &pr);
  encode_header(&h, head);
  if (!bad) bad = fseeko(fp, 0, SEEK_SET) != 0 || fwrite(head, 1, sizeof head, fp) != sizeof head;
  if (bad) err = errno;
  HALO_TRY(halo_file_close_written(&fp, path, bad, err));
  halo_progress_end(&pr);
cleanup:
  if (fp) {
    fclose(fp);
    halo_file_remove_partial(path);
  }
  halo_free(narrow);
  return st;
}

/* ---- serial reader ------------------------------------------------------- */

/* Read n bytes at the current position of fp, which is at offset off, in
 * pieces (progress reports to pr, NULL: none). */
static halo_status read_bytes(FILE *fp, const char *path, int64_t off, void *buf, int64_t n,
                              halo_progress_stage *pr) {
  char *p = buf;
  for (int64_t done = 0; done < n;) {
    const size_t k = (size_t)(n - done < HCSR_PIECE ? n - done : HCSR_PIECE);
    errno = 0;
    const size_t got = fread(p + done, 1, k, fp);
    done += (int64_t)got;
    if (got != k) {
      if (ferror(fp)) {
        int err = errno;
        return HALO_ERROR(HALO_ERR_IO, "cannot read '%s': %s", path,
                          err ? strerror(err) : "read error");
      }
      return short_read(path, off + done);
    }
    if (pr) halo_progress_tick(pr, off + done);
  }
  return HALO_SUCCESS;
}

halo_status halo_hcsr_probe(const char *path, int *is_hcsr_p) {
  if (!path || !is_hcsr_p)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_hcsr_probe: the %s is NULL",
                      path ? "output" : "path");
  *is_hcsr_p = 0;
  FILE *fp;
  HALO_CHECK(halo_file_open_read(path, &fp));
  unsigned char b[HCSR_MAGIC_LEN];
  *is_hcsr_p = fread(b, 1, sizeof b, fp) == sizeof b && memcmp(b, HCSR_MAGIC, sizeof b) == 0;
  fclose(fp);
  return HALO_SUCCESS;
}

halo_status halo_hcsr_read(const char *path, halo_csr *A) {
  halo_status st = HALO_SUCCESS;
  FILE *fp = NULL;
  halo_csr out;
  memset(&out, 0, sizeof out);
  if (!A) return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_hcsr_read: the output matrix is NULL");
  memset(A, 0, sizeof *A);
  if (!path) return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_hcsr_read: the path is NULL");
  if (HCSR_BIG_ENDIAN_HOST) return no_big_endian();
  HALO_CHECK(halo_file_open_read(path, &fp));
  int64_t length = -1;
  if (fseeko(fp, 0, SEEK_END) == 0) length = (int64_t)ftello(fp);
  if (length < 0 || fseeko(fp, 0, SEEK_SET) != 0) {
    int err = errno;
    HALO_FAIL(HALO_ERR_IO, "cannot read '%s': %s", path, err ? strerror(err) : "cannot seek");
  }
  unsigned char head[HCSR_HEADER_BYTES];
  const int64_t have = length < HCSR_HEADER_BYTES ? length : HCSR_HEADER_BYTES;
  HALO_TRY(read_bytes(fp, path, 0, head, have, NULL));
  hcsr_header h;
  HALO_TRY(decode_header(path, head, length, &h));
  const int64_t n = h.n_rows, nnz = h.nnz;
  HALO_TRY(HALO_ALLOC(out.row_ptr, n + 1));
  HALO_TRY(HALO_ALLOC(out.col_ids, nnz > 0 ? nnz : 1));
  HALO_TRY(HALO_ALLOC(out.values, nnz > 0 ? nnz : 1));
  halo_progress_stage pr;
  halo_progress_begin(&pr, "reading", HALO_PROGRESS_BYTES, length);
  HALO_TRY(read_bytes(fp, path, h.ptr_off, out.row_ptr, 8 * (n + 1), &pr));
  HALO_TRY(check_sum(path, &h, PART_PTR, hcsr_sum(out.row_ptr, 8, 0, n + 1)));
  HALO_TRY(check_row_ptr(path, &h, out.row_ptr, 0, n));
  HALO_TRY(read_bytes(fp, path, h.col_off, out.col_ids, h.col_bytes * nnz, &pr));
  unsigned char pad[8];
  HALO_TRY(read_bytes(fp, path, h.val_off - h.pad_bytes, pad, h.pad_bytes, &pr));
  HALO_TRY(read_bytes(fp, path, h.val_off, out.values, 8 * nnz, &pr));
  halo_progress_end(&pr);
  HALO_TRY(check_sum(path, &h, PART_COL, hcsr_sum(out.col_ids, h.col_bytes, 0, nnz)));
  HALO_TRY(check_sum(path, &h, PART_VAL, hcsr_sum(out.values, 8, 0, nnz)));
  HALO_TRY(check_padding(path, &h, pad));
  if (h.col_bytes == 4) widen(out.col_ids, nnz);
  HALO_TRY(check_entries(path, &h, out.row_ptr, 0, n, out.col_ids, out.values));
  out.n_rows = n;
  out.n_cols = h.n_cols;
  out.row_begin = 0;
  out.row_end = n;
  *A = out;
  memset(&out, 0, sizeof out);
cleanup:
  if (fp) fclose(fp);
  halo_csr_free(&out);
  return st;
}

/* ---- collective reader --------------------------------------------------- */

/* Read len bytes at off on this rank alone. */
static halo_status read_at(MPI_File fh, const char *path, int64_t off, int64_t len, void *buf) {
  int max_count;
  HALO_CHECK(halo_settings_max_count(&max_count));
  const int64_t chunk = max_count < HCSR_MAX_READ ? max_count : HCSR_MAX_READ;
  char *p = buf;
  for (int64_t done = 0; done < len; done += chunk) {
    const int count = (int)(len - done < chunk ? len - done : chunk);
    MPI_Status s;
    int got = 0, rc = MPI_File_read_at(fh, (MPI_Offset)(off + done), p + done, count, MPI_BYTE, &s);
    if (rc != MPI_SUCCESS) return hcsr_mpi_io(rc, "read", path);
    MPI_Get_count(&s, MPI_BYTE, &got);
    if (got != count) return short_read(path, off + done + got);
  }
  return HALO_SUCCESS;
}

/* Read len bytes at off on every rank (each its own range): collective, in
 * rounds of at most halo_settings_max_count() bytes, as many rounds on every
 * rank. A
 * failing rank goes on with the rounds so that no rank is left waiting. The
 * bytes read are added to *done_p and reported to pr (NULL: not). */
static halo_status read_at_all(MPI_Comm comm, MPI_File fh, const char *path, int64_t off,
                               int64_t len, void *buf, halo_progress_stage *pr, int64_t *done_p) {
  int max_count = INT_MAX;
  halo_status st = halo_settings_max_count(&max_count); /* a bad value: INT_MAX, and the error */
  const int64_t chunk = max_count < HCSR_MAX_READ ? max_count : HCSR_MAX_READ;
  int64_t rounds = (len + chunk - 1) / chunk, max_rounds = 0;
  char *p = buf, dummy = 0;
  HALO_MPI(MPI_Allreduce(&rounds, &max_rounds, 1, MPI_INT64_T, MPI_MAX, comm));
  for (int64_t k = 0; k < max_rounds; k++) {
    const int64_t done = k * chunk;
    const int count = done < len ? (int)(len - done < chunk ? len - done : chunk) : 0;
    MPI_Status s;
    int got = 0, rc = MPI_File_read_at_all(fh, (MPI_Offset)(off + (count ? done : 0)),
                                           count ? p + done : &dummy, count, MPI_BYTE, &s);
    if (rc != MPI_SUCCESS) {
      if (st == HALO_SUCCESS) st = hcsr_mpi_io(rc, "read", path);
      continue;
    }
    if (count > 0) MPI_Get_count(&s, MPI_BYTE, &got);
    if (got != count && st == HALO_SUCCESS) st = short_read(path, off + done + got);
    if (pr) {
      *done_p += got;
      halo_progress_tick(pr, *done_p);
    }
  }
  return st;
}

/* The header (and the file's length) on root, broadcast and decoded on
 * every rank. */
static halo_status read_header(MPI_Comm comm, int root, MPI_File fh, const char *path,
                               hcsr_header *h) {
  halo_status st = HALO_SUCCESS;
  int rank;
  struct {
    unsigned char bytes[HCSR_HEADER_BYTES];
    int64_t length;
  } head;
  memset(&head, 0, sizeof head);
  HALO_TRY_MPI(MPI_Comm_rank(comm, &rank));
  if (rank == root) {
    MPI_Offset size = 0;
    int rc = MPI_File_get_size(fh, &size);
    if (rc != MPI_SUCCESS) {
      st = hcsr_mpi_io(rc, "read the length of", path);
    } else {
      head.length = (int64_t)size;
      st = read_at(fh, path, 0, size < HCSR_HEADER_BYTES ? size : HCSR_HEADER_BYTES, head.bytes);
    }
  }
  HALO_TRY(halo_agree(comm, st));
  HALO_TRY_MPI(MPI_Bcast(&head, (int)sizeof head, MPI_BYTE, root, comm));
  st = decode_header(path, head.bytes, head.length, h);
cleanup:
  return st;
}

/* The partition on root (which reads and checks the whole row pointers when
 * the partition needs them), broadcast. */
static halo_status partition(MPI_Comm comm, int root, MPI_File fh, const char *path,
                             const hcsr_header *h, halo_partition_kind part, const int *holds_rows,
                             int64_t *row_begin) {
  halo_status st = HALO_SUCCESS;
  int rank, size;
  int64_t *ptr = NULL;
  HALO_TRY_MPI(MPI_Comm_rank(comm, &rank));
  HALO_TRY_MPI(MPI_Comm_size(comm, &size));
  if (rank == root) {
    if (part == HALO_PARTITION_NNZ) {
      st = HALO_ALLOC(ptr, h->n_rows + 1);
      if (st == HALO_SUCCESS) st = read_at(fh, path, h->ptr_off, 8 * (h->n_rows + 1), ptr);
      if (st == HALO_SUCCESS) st = check_sum(path, h, PART_PTR, hcsr_sum(ptr, 8, 0, h->n_rows + 1));
      if (st == HALO_SUCCESS) st = check_row_ptr(path, h, ptr, 0, h->n_rows);
    }
    if (st == HALO_SUCCESS)
      st = halo_partition_compute(part, h->n_rows, ptr, size, holds_rows, row_begin);
  }
  HALO_TRY(halo_agree(comm, st));
  HALO_TRY_MPI(MPI_Bcast(row_begin, size + 1, MPI_INT64_T, root, comm));
cleanup:
  halo_free(ptr);
  return st;
}

/* This rank's rows [row_begin[rank], row_begin[rank+1]), read and checked. */
static halo_status read_rows(MPI_Comm comm, MPI_File fh, const char *path, const hcsr_header *h,
                             const int64_t *row_begin, halo_csr *out) {
  halo_status st = HALO_SUCCESS;
  int rank, size;
  uint64_t sums[3] = {0, 0, 0}, total[3] = {0, 0, 0};
  HALO_TRY_MPI(MPI_Comm_rank(comm, &rank));
  HALO_TRY_MPI(MPI_Comm_size(comm, &size));
  const int last = rank == size - 1;
  const int64_t b = row_begin[rank], e = row_begin[rank + 1], n = e - b;
  out->n_rows = h->n_rows;
  out->n_cols = h->n_cols;
  out->row_begin = b;
  out->row_end = e;

  /* row pointers b .. e: checksum first, then what they say. The collective
   * read takes [b, e), disjoint between ranks (Open MPI 4.1's OMPIO returns
   * wrong data for some collective reads of overlapping ranges); entry e,
   * the next rank's first, is read on its own. */
  st = HALO_ALLOC(out->row_ptr, n + 1);
  HALO_TRY(halo_agree(comm, st));
  st = read_at_all(comm, fh, path, h->ptr_off + 8 * b, 8 * n, out->row_ptr, NULL, NULL);
  halo_status st_end = read_at(fh, path, h->ptr_off + 8 * e, 8, out->row_ptr + n);
  if (st == HALO_SUCCESS) st = st_end;
  HALO_TRY(halo_agree(comm, st));
  sums[PART_PTR] = hcsr_sum(out->row_ptr, 8, b, n + last);
  HALO_TRY_MPI(MPI_Allreduce(sums, total, 1, MPI_UINT64_T, MPI_SUM, comm));
  st = check_sum(path, h, PART_PTR, total[PART_PTR]);
  if (st == HALO_SUCCESS) st = check_row_ptr(path, h, out->row_ptr, b, n);
  HALO_TRY(halo_agree(comm, st));

  /* entries; the last rank reads the padding after the column indices too */
  const int64_t base = out->row_ptr[0], cnt = out->row_ptr[n] - base;
  const int64_t pad = last ? h->pad_bytes : 0;
  st = HALO_ALLOC(out->col_ids, cnt > 0 ? cnt : 1);
  if (st == HALO_SUCCESS) st = HALO_ALLOC(out->values, cnt > 0 ? cnt : 1);
  HALO_TRY(halo_agree(comm, st));
  unsigned char *raw = (unsigned char *)out->col_ids;
  halo_progress_stage pr; /* this rank's bytes, the row pointers read */
  int64_t done = 8 * (n + 1);
  halo_progress_begin(&pr, "reading", HALO_PROGRESS_BYTES, done + (h->col_bytes + 8) * cnt + pad);
  halo_progress_tick(&pr, done);
  st = read_at_all(comm, fh, path, h->col_off + h->col_bytes * base, h->col_bytes * cnt + pad, raw,
                   &pr, &done);
  halo_status st_val =
      read_at_all(comm, fh, path, h->val_off + 8 * base, 8 * cnt, out->values, &pr, &done);
  if (st == HALO_SUCCESS) st = st_val;
  HALO_TRY(halo_agree(comm, st));
  sums[PART_COL] = hcsr_sum(raw, h->col_bytes, base, cnt);
  sums[PART_VAL] = hcsr_sum(out->values, 8, base, cnt);
  HALO_TRY_MPI(MPI_Allreduce(sums + 1, total + 1, 2, MPI_UINT64_T, MPI_SUM, comm));
  st = check_sum(path, h, PART_COL, total[PART_COL]);
  if (st == HALO_SUCCESS) st = check_sum(path, h, PART_VAL, total[PART_VAL]);
  if (st == HALO_SUCCESS && pad > 0) st = check_padding(path, h, raw + h->col_bytes * cnt);
  if (st == HALO_SUCCESS && h->col_bytes == 4) widen(out->col_ids, cnt);
  if (st == HALO_SUCCESS)
    st = check_entries(path, h, out->row_ptr, b, n, out->col_ids, out->values);
  HALO_TRY(halo_agree(comm, st));
  halo_progress_end(&pr);
  for (int64_t i = 0; i <= n; i++) out->row_ptr[i] -= base;
cleanup:
  return st;
}

halo_status halo_hcsr_read_distributed(MPI_Comm comm, int root, const char *path,
                                       halo_partition_kind part, const int *holds_rows,
                                       int64_t **row_begin_p, halo_csr *local, halo_csr *global_p) {
  halo_status st = HALO_SUCCESS;
  int rank, size, rc;
  MPI_File fh = MPI_FILE_NULL;
  int64_t *row_begin = NULL;
  halo_csr out, G;
  hcsr_header h;
  memset(&out, 0, sizeof out);
  memset(&G, 0, sizeof G);
  if (!row_begin_p || !local)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_hcsr_read_distributed: the %s is NULL",
                      local ? "partition output" : "local matrix");
  memset(local, 0, sizeof *local);
  if (global_p) memset(global_p, 0, sizeof *global_p);
  *row_begin_p = NULL;
  HALO_TRY_MPI(MPI_Comm_rank(comm, &rank));
  HALO_TRY_MPI(MPI_Comm_size(comm, &size));
  if (!path)
    st = HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_hcsr_read_distributed: the path is NULL");
  else if (root < 0 || root >= size)
    st = HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_hcsr_read_distributed: root %d of %d ranks", root,
                    size);
  else if (HCSR_BIG_ENDIAN_HOST)
    st = no_big_endian();
  HALO_TRY(halo_agree(comm, st));
  /* Every rank opens the file with stdio first, and the ranks agree: a rank
   * that cannot (a file on one node's disk only) would fail in the collective
   * MPI_File_open while the others go on (Open MPI 4.1 hangs there). */
  FILE *fp = NULL;
  st = halo_file_open_read(path, &fp);
  if (fp) fclose(fp);
  HALO_TRY(halo_agree(comm, st));
  rc = MPI_File_open(comm, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
  if (rc != MPI_SUCCESS) {
    fh = MPI_FILE_NULL;
    st = hcsr_mpi_io(rc, "open", path);
  }
  HALO_TRY(halo_agree(comm, st));
  HALO_TRY(read_header(comm, root, fh, path, &h));
  st = HALO_ALLOC(row_begin, size + 1);
  HALO_TRY(halo_agree(comm, st));
  HALO_TRY(partition(comm, root, fh, path, &h, part, holds_rows, row_begin));
  HALO_TRY(read_rows(comm, fh, path, &h, row_begin, &out));
  if (global_p) {
    if (rank == root) st = halo_hcsr_read(path, &G);
    HALO_TRY(halo_agree(comm, st));
  }
  *local = out;
  memset(&out, 0, sizeof out);
  if (global_p && rank == root) {
    *global_p = G;
    memset(&G, 0, sizeof G);
  }
  *row_begin_p = row_begin;
  row_begin = NULL;
cleanup:
  if (fh != MPI_FILE_NULL) MPI_File_close(&fh);
  halo_csr_free(&G);
  halo_csr_free(&out);
  halo_free(row_begin);
  return st;
}
