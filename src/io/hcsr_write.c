/* The writer of the binary CSR format (.hcsr): the header last, once the
 * checksums of the parts are known. */
#define _POSIX_C_SOURCE 200809L /* fseeko */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hcsr_format.h"
#include "progress.h"

halo_hcsr_options halo_hcsr_options_default(void) {
  halo_hcsr_options o;
  memset(&o, 0, sizeof o);
  o.index_bytes = 0;
  return o;
}

static void store_u64(unsigned char *p, uint64_t v) { memcpy(p, &v, sizeof v); }
static void store_u32(unsigned char *p, uint32_t v) { memcpy(p, &v, sizeof v); }

static void encode_header(const hcsr_header *h, unsigned char *b) {
  memset(b, 0, HCSR_HEADER_BYTES);
  memcpy(b, HCSR_MAGIC, HCSR_MAGIC_LEN);
  store_u32(b + 8, h->version);
  store_u32(b + 12, h->flags);
  store_u64(b + 16, (uint64_t)h->n_rows);
  store_u64(b + 24, (uint64_t)h->n_cols);
  store_u64(b + 32, (uint64_t)h->nnz);
  for (int k = 0; k < 3; k++) store_u64(b + 40 + 8 * k, h->sum[k]);
  store_u64(b + 64, hcsr_fnv1a64(b, 64));
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
  if (HCSR_BIG_ENDIAN_HOST) return hcsr_no_big_endian();
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
  if (!hcsr_layout(&h))
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
