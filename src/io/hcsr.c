/* The binary CSR format (.hcsr): its checksums, the checks of its header and
 * parts, and the serial reader. The writer is hcsr_write.c, the collective
 * reader, in which every rank reads its own rows with MPI-IO, hcsr_mpi.c.
 *
 * The layout and the checksum are in include/halo/io.h and docs/input.md. A
 * part's checksum is a sum over its elements of a hash of (index, element),
 * so a rank adds up the elements it reads, whatever its slice, and one
 * MPI_Allreduce gives the checksum of the whole part.
 *
 * Checks run in the order that names the real problem: the header (length,
 * magic, version, header checksum, flags, sizes against the file length and
 * the readers' limit), then each part's checksum before its contents (a
 * corrupted file says "bad checksum", a well-formed file with bad contents
 * names the bad entry). */
#define _POSIX_C_SOURCE 200809L /* fseeko, ftello */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "hcsr_format.h"
#include "input_limit.h"
#include "progress.h"

static const char *const part_name[3] = {"row pointers", "column indices", "values"};

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
uint64_t hcsr_sum(const void *p, int esize, int64_t first, int64_t n) {
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

uint64_t hcsr_fnv1a64(const unsigned char *p, size_t n) {
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

halo_status hcsr_no_big_endian(void) {
  return HALO_ERROR(HALO_ERR_UNSUPPORTED, "hcsr files are read and written on little-endian "
                                          "hosts only");
}

halo_status hcsr_check_regular(const char *path) {
  struct stat sb; /* a path that does not exist is open's to report */
  if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode) && !S_ISDIR(sb.st_mode))
    return HALO_ERROR(HALO_ERR_IO,
                      "cannot read '%s': not a regular file (a pipe or a device): a .hcsr file "
                      "is read at the offsets its header gives",
                      path);
  return HALO_SUCCESS;
}

/* A read that ended early: the file changed after its length was taken. */
halo_status hcsr_short_read(const char *path, int64_t off) {
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

/* Where the parts lie and how long the file is, from the sizes; 0 if the
 * sizes are too large for a file. */
int hcsr_layout(hcsr_header *h) {
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
halo_status hcsr_decode_header(const char *path, const unsigned char *b, int64_t length,
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
  const uint64_t stored = load_u64(b + 64), computed = hcsr_fnv1a64(b, 64);
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
  if (!hcsr_layout(h))
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
  /* the row pointers are in the file, but the columns are not */
  return halo_io_check_sizes(path, h->n_rows, h->n_cols, h->nnz, length);
}

/* ---- contents ------------------------------------------------------------ */

halo_status hcsr_check_sum(const char *path, const hcsr_header *h, int part, uint64_t sum) {
  if (sum == h->sum[part]) return HALO_SUCCESS;
  return hcsr_fail(HALO_ERR_FORMAT, path,
                   "bad checksum of the %s: stored 0x%016llx, computed 0x%016llx", part_name[part],
                   (unsigned long long)h->sum[part], (unsigned long long)sum);
}

/* Row pointers ptr[0..n] of rows row0 .. row0+n: within [0, nnz], never
 * decreasing, 0 first and nnz last where they are the file's first and last. */
halo_status hcsr_check_row_ptr(const char *path, const hcsr_header *h, const int64_t *ptr,
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
void hcsr_widen(int64_t *cols, int64_t n) {
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
halo_status hcsr_check_entries(const char *path, const hcsr_header *h, const int64_t *ptr,
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

halo_status hcsr_check_padding(const char *path, const hcsr_header *h, const unsigned char *pad) {
  for (int64_t k = 0; k < h->pad_bytes; k++)
    if (pad[k] != 0)
      return hcsr_fail(HALO_ERR_FORMAT, path, "padding byte %lld after the column indices is not 0",
                       (long long)(h->val_off - h->pad_bytes + k));
  return HALO_SUCCESS;
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
      return hcsr_short_read(path, off + done);
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
  struct stat sb; /* a pipe's first bytes, once read, are gone: a stream is not probed */
  if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode) && !S_ISDIR(sb.st_mode)) return HALO_SUCCESS;
  FILE *fp;
  HALO_CHECK(halo_file_open_read(path, &fp));
  unsigned char b[HCSR_MAGIC_LEN];
  *is_hcsr_p = fread(b, 1, sizeof b, fp) == sizeof b && memcmp(b, HCSR_MAGIC, sizeof b) == 0;
  fclose(fp);
  return HALO_SUCCESS;
}

halo_status halo_hcsr_read_stream(FILE *fp, const char *name, halo_csr *A) {
  halo_status st = HALO_SUCCESS;
  halo_csr out;
  memset(&out, 0, sizeof out);
  memset(A, 0, sizeof *A);
  const char *path = name; /* for the messages */
  if (HCSR_BIG_ENDIAN_HOST) return hcsr_no_big_endian();
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
  HALO_TRY(hcsr_decode_header(path, head, length, &h));
  const int64_t n = h.n_rows, nnz = h.nnz;
  HALO_TRY(HALO_ALLOC(out.row_ptr, n + 1));
  HALO_TRY(HALO_ALLOC(out.col_ids, nnz > 0 ? nnz : 1));
  HALO_TRY(HALO_ALLOC(out.values, nnz > 0 ? nnz : 1));
  halo_progress_stage pr;
  halo_progress_begin(&pr, "reading", HALO_PROGRESS_BYTES, length);
  HALO_TRY(read_bytes(fp, path, h.ptr_off, out.row_ptr, 8 * (n + 1), &pr));
  HALO_TRY(hcsr_check_sum(path, &h, PART_PTR, hcsr_sum(out.row_ptr, 8, 0, n + 1)));
  HALO_TRY(hcsr_check_row_ptr(path, &h, out.row_ptr, 0, n));
  HALO_TRY(read_bytes(fp, path, h.col_off, out.col_ids, h.col_bytes * nnz, &pr));
  unsigned char pad[8];
  HALO_TRY(read_bytes(fp, path, h.val_off - h.pad_bytes, pad, h.pad_bytes, &pr));
  HALO_TRY(read_bytes(fp, path, h.val_off, out.values, 8 * nnz, &pr));
  halo_progress_end(&pr);
  HALO_TRY(hcsr_check_sum(path, &h, PART_COL, hcsr_sum(out.col_ids, h.col_bytes, 0, nnz)));
  HALO_TRY(hcsr_check_sum(path, &h, PART_VAL, hcsr_sum(out.values, 8, 0, nnz)));
  HALO_TRY(hcsr_check_padding(path, &h, pad));
  if (h.col_bytes == 4) hcsr_widen(out.col_ids, nnz);
  HALO_TRY(hcsr_check_entries(path, &h, out.row_ptr, 0, n, out.col_ids, out.values));
  out.n_rows = n;
  out.n_cols = h.n_cols;
  out.row_begin = 0;
  out.row_end = n;
  *A = out;
  memset(&out, 0, sizeof out);
cleanup:
  halo_csr_free(&out);
  return st;
}

halo_status halo_hcsr_read(const char *path, halo_csr *A) {
  if (!A) return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_hcsr_read: the output matrix is NULL");
  memset(A, 0, sizeof *A);
  if (!path) return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_hcsr_read: the path is NULL");
  if (HCSR_BIG_ENDIAN_HOST) return hcsr_no_big_endian();
  FILE *fp;
  HALO_CHECK(hcsr_check_regular(path));
  HALO_CHECK(halo_file_open_read(path, &fp));
  halo_status st = halo_hcsr_read_stream(fp, path, A);
  fclose(fp);
  return st;
}
