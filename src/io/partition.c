/* Contiguous row partitions: balanced by rows or by stored entries. The
 * graph partition (metis) is in graph.c. */
#include <string.h>

#include "halo/io.h"
#include "halo_impl.h"

/* The partitions by name, in enum order. */
static const char *const partition_names[] = {"rows", "nnz", "metis"};
enum { N_PARTITIONS = (int)(sizeof partition_names / sizeof partition_names[0]) };

halo_status halo_partition_from_name(const char *name, halo_partition_kind *kind_p) {
  if (!name || !kind_p) return HALO_ERROR(HALO_ERR_INVALID_ARG, "partition name is NULL");
  for (int k = 0; k < N_PARTITIONS; k++)
    if (strcmp(name, partition_names[k]) == 0) {
      *kind_p = (halo_partition_kind)k;
      return HALO_SUCCESS;
    }
  return HALO_ERROR(HALO_ERR_INVALID_ARG, "unknown partition '%s' (known: rows, nnz, metis)", name);
}

const char *halo_partition_name(halo_partition_kind kind) {
  return (int)kind >= 0 && (int)kind < N_PARTITIONS ? partition_names[kind] : "unknown";
}

/* floor(r * n / P) without overflow for n < 2^62, P < 2^31. */
static int64_t share(int64_t n, int r, int P) { return (n / P) * r + ((n % P) * r) / P; }

halo_status halo_partition_rows(int64_t n_rows, int P, int64_t *row_begin) {
  if (P < 1 || n_rows < 0 || !row_begin)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "partition of %lld rows into %d parts",
                      (long long)n_rows, P);
  for (int r = 0; r <= P; r++) row_begin[r] = share(n_rows, r, P);
  return HALO_SUCCESS;
}

halo_status halo_partition_nnz(int64_t n_rows, const int64_t *row_ptr, int P, int64_t *row_begin) {
  if (P < 1 || n_rows < 0 || !row_begin || !row_ptr)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "partition of %lld rows into %d parts",
                      (long long)n_rows, P);
  const int64_t nnz = row_ptr[n_rows];
  row_begin[0] = 0;
  for (int r = 1; r < P; r++) {
    /* first row whose first entry is at or after the share of rank r */
    int64_t t = share(nnz, r, P), lo = row_begin[r - 1], hi = n_rows;
    while (lo < hi) {
      int64_t mid = lo + (hi - lo) / 2;
      if (row_ptr[mid] < t)
        lo = mid + 1;
      else
        hi = mid;
    }
    row_begin[r] = lo;
  }
  row_begin[P] = n_rows;
  return HALO_SUCCESS;
}

halo_status halo_partition_compute(halo_partition_kind kind, int64_t n_rows, const int64_t *row_ptr,
                                   int P, const int *holds_rows, int64_t *row_begin) {
  halo_status st = HALO_SUCCESS;
  int64_t *part = NULL;
  if (P < 1 || !row_begin)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "partition of %lld rows into %d parts",
                      (long long)n_rows, P);
  if (kind == HALO_PARTITION_METIS)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "partition metis renumbers the rows: use "
                                            "halo_partition_metis or halo_csr_distribute");
  if (kind != HALO_PARTITION_ROWS && kind != HALO_PARTITION_NNZ)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "unknown partition kind %d", (int)kind);
  int n_hold = 0;
  for (int r = 0; r < P; r++) n_hold += !holds_rows || holds_rows[r];
  if (n_hold == 0) return HALO_ERROR(HALO_ERR_INVALID_ARG, "no rank of %d holds rows", P);
  HALO_TRY(HALO_ALLOC(part, n_hold + 1));
  HALO_TRY(kind == HALO_PARTITION_NNZ ? halo_partition_nnz(n_rows, row_ptr, n_hold, part)
                                      : halo_partition_rows(n_rows, n_hold, part));
  /* the parts in rank order; a helper's range is empty */
  for (int r = 0, j = 0; r <= P; r++) {
    row_begin[r] = part[j];
    if (r < P && (!holds_rows || holds_rows[r])) j++;
  }
cleanup:
  halo_free(part);
  return st;
}
