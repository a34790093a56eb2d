/* The collective reader of the binary CSR format (.hcsr): every rank reads
 * its own rows with MPI-IO. Rank r reads row pointers [b_r, e_r] (entry e_r
 * is also the next rank's first) and counts entries [b_r, e_r), the last
 * rank entry n_rows as well; the checksums are added over the ranks. */
#include <limits.h>
#include <string.h>

#include "hcsr_format.h"
#include "progress.h"
#include "settings.h"

/* An MPI-IO failure on path, with MPI's reason. */
static halo_status hcsr_mpi_io(int rc, const char *what, const char *path) {
  char reason[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, reason, &len) != MPI_SUCCESS)
    snprintf(reason, sizeof reason, "MPI error %d", rc);
  return HALO_ERROR(HALO_ERR_IO, "cannot %s '%s': %s", what, path, reason);
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
    if (got != count) return hcsr_short_read(path, off + done + got);
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
    if (got != count && st == HALO_SUCCESS) st = hcsr_short_read(path, off + done + got);
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
  /* the same bytes everywhere, but the limit comes from each rank's environment */
  st = halo_agree(comm, hcsr_decode_header(path, head.bytes, head.length, h));
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
      if (st == HALO_SUCCESS)
        st = hcsr_check_sum(path, h, PART_PTR, hcsr_sum(ptr, 8, 0, h->n_rows + 1));
      if (st == HALO_SUCCESS) st = hcsr_check_row_ptr(path, h, ptr, 0, h->n_rows);
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
  st = hcsr_check_sum(path, h, PART_PTR, total[PART_PTR]);
  if (st == HALO_SUCCESS) st = hcsr_check_row_ptr(path, h, out->row_ptr, b, n);
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
  st = hcsr_check_sum(path, h, PART_COL, total[PART_COL]);
  if (st == HALO_SUCCESS) st = hcsr_check_sum(path, h, PART_VAL, total[PART_VAL]);
  if (st == HALO_SUCCESS && pad > 0) st = hcsr_check_padding(path, h, raw + h->col_bytes * cnt);
  if (st == HALO_SUCCESS && h->col_bytes == 4) hcsr_widen(out->col_ids, cnt);
  if (st == HALO_SUCCESS)
    st = hcsr_check_entries(path, h, out->row_ptr, b, n, out->col_ids, out->values);
  HALO_TRY(halo_agree(comm, st));
  halo_progress_end(&pr);
  for (int64_t i = 0; i <= n; i++) out->row_ptr[i] -= base;
cleanup:
  return st;
}

halo_status halo_hcsr_read_distributed(MPI_Comm comm, int root, const char *path,
                                       halo_partition_kind part, const int *holds_rows,
                                       int64_t **row_begin_p, halo_csr *local, halo_csr *global_p) {
  HALO_CHECK(halo_comm_check(comm, "halo_hcsr_read_distributed: the communicator"));
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
    st = hcsr_no_big_endian();
  HALO_TRY(halo_agree(comm, st));
  /* Every rank opens the file with stdio first, and the ranks agree: a rank
   * that cannot (a file on one node's disk only) would fail in the collective
   * MPI_File_open while the others go on (Open MPI 4.1 hangs there). */
  FILE *fp = NULL;
  st = hcsr_check_regular(path); /* a FIFO: one rank's open would wait, the others read */
  if (st == HALO_SUCCESS) st = halo_file_open_read(path, &fp);
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
