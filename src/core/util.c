/* Small utilities: radix sort, range search, large messages, clock. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>

#include "halo_impl.h"
#include "settings.h"

/* LSD radix sort, stable, on 16-bit digits (8-bit below 65536 keys, so that
 * a short sort does not pay for 65536 counters); passes over digits that
 * are the same in every key are skipped, so keys of a narrow range cost few
 * passes. */
static halo_status radix_sort(int64_t *keys, int64_t *vals, int64_t n) {
  halo_status st = HALO_SUCCESS;
  int64_t *tk = NULL, *tv = NULL;
  int64_t *count = NULL;
  if (n < 2) return HALO_SUCCESS;
  if (n < 64) { /* insertion sort, stable */
    for (int64_t i = 1; i < n; i++) {
      int64_t k = keys[i], v = vals ? vals[i] : 0, j = i - 1;
      while (j >= 0 && keys[j] > k) {
        keys[j + 1] = keys[j];
        if (vals) vals[j + 1] = vals[j];
        j--;
      }
      keys[j + 1] = k;
      if (vals) vals[j + 1] = v;
    }
    return HALO_SUCCESS;
  }
  uint64_t all_or = 0, all_and = ~(uint64_t)0;
  for (int64_t i = 0; i < n; i++) {
    if (keys[i] < 0) return HALO_ERROR(HALO_ERR_INTERNAL, "radix sort of a negative key");
    all_or |= (uint64_t)keys[i];
    all_and &= (uint64_t)keys[i];
  }
  const int bits = n < 65536 ? 8 : 16, n_digits = 1 << bits;
  const uint64_t mask = (uint64_t)n_digits - 1;
  HALO_TRY(HALO_ALLOC(tk, n));
  if (vals) HALO_TRY(HALO_ALLOC(tv, n));
  HALO_TRY(HALO_ALLOC(count, n_digits));
  int64_t *src_k = keys, *src_v = vals, *dst_k = tk, *dst_v = tv;
  for (int shift = 0; shift < 64; shift += bits) {
    if ((((all_or ^ all_and) >> shift) & mask) == 0) continue;
    memset(count, 0, (size_t)n_digits * sizeof *count);
    for (int64_t i = 0; i < n; i++) count[((uint64_t)src_k[i] >> shift) & mask]++;
    int64_t sum = 0;
    for (int d = 0; d < n_digits; d++) {
      int64_t c = count[d];
      count[d] = sum;
      sum += c;
    }
    for (int64_t i = 0; i < n; i++) {
      int64_t pos = count[((uint64_t)src_k[i] >> shift) & mask]++;
      dst_k[pos] = src_k[i];
      if (vals) dst_v[pos] = src_v[i];
    }
    int64_t *t = src_k;
    src_k = dst_k;
    dst_k = t;
    t = src_v;
    src_v = dst_v;
    dst_v = t;
  }
  if (src_k != keys) {
    memcpy(keys, src_k, (size_t)n * sizeof *keys);
    if (vals) memcpy(vals, src_v, (size_t)n * sizeof *vals);
  }
cleanup:
  halo_free(count);
  halo_free(tv);
  halo_free(tk);
  return st;
}

halo_status halo_sort_i64(int64_t *keys, int64_t n) { return radix_sort(keys, NULL, n); }

halo_status halo_sort_i64_pairs(int64_t *keys, int64_t *vals, int64_t n) {
  return radix_sort(keys, vals, n);
}

int halo_find_range(const int64_t *ranges, int n_ranges, int64_t x) {
  if (n_ranges <= 0 || x < ranges[0] || x >= ranges[n_ranges]) return -1;
  /* Largest r with ranges[r] <= x; empty ranges share their start with the
   * next one, so taking the largest skips them. */
  int lo = 0, hi = n_ranges - 1;
  while (lo < hi) {
    int mid = lo + (hi - lo + 1) / 2;
    if (ranges[mid] <= x)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

halo_status halo_send_large(const void *buf, int64_t count, MPI_Datatype type, int dest, int tag,
                            MPI_Comm comm) {
  int size, chunk;
  HALO_MPI(MPI_Type_size(type, &size));
  HALO_CHECK(halo_settings_max_count(&chunk));
  const char *p = buf;
  for (int64_t done = 0; done < count; done += chunk) {
    int n = (int)(count - done < chunk ? count - done : chunk);
    HALO_MPI(MPI_Send(p + done * size, n, type, dest, tag, comm));
  }
  return HALO_SUCCESS;
}

halo_status halo_recv_large(void *buf, int64_t count, MPI_Datatype type, int source, int tag,
                            MPI_Comm comm) {
  int size, chunk;
  HALO_MPI(MPI_Type_size(type, &size));
  HALO_CHECK(halo_settings_max_count(&chunk));
  char *p = buf;
  for (int64_t done = 0; done < count; done += chunk) {
    int n = (int)(count - done < chunk ? count - done : chunk);
    HALO_MPI(MPI_Recv(p + done * size, n, type, source, tag, comm, MPI_STATUS_IGNORE));
  }
  return HALO_SUCCESS;
}

double halo_wtime(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}




halo_status halo_file_open_read(const char *path, FILE **fp_p) {
  errno = 0;
  *fp_p = fopen(path, "rb");
  if (!*fp_p) {
    int err = errno;
    return HALO_ERROR(HALO_ERR_IO, "cannot open '%s': %s", path,
                      err ? strerror(err) : "unknown error");
  }
  struct stat sb; /* fopen opens a directory for reading; its first read fails */
  if (fstat(fileno(*fp_p), &sb) == 0 && S_ISDIR(sb.st_mode)) {
    fclose(*fp_p);
    *fp_p = NULL;
    return HALO_ERROR(HALO_ERR_IO, "cannot read '%s': it is a directory", path);
  }
  return HALO_SUCCESS;
}

void halo_file_remove_partial(const char *path) {
  struct stat sb; /* a partial file goes, a device or a link's target stays */
  if (lstat(path, &sb) == 0 && S_ISREG(sb.st_mode)) remove(path);
}

halo_status halo_file_close_written(FILE **fp_p, const char *path, int bad, int err) {
  if (fclose(*fp_p) != 0 && !bad) {
    bad = 1;
    err = errno;
  }
  *fp_p = NULL;
  if (!bad) return HALO_SUCCESS;
  halo_file_remove_partial(path);
  return HALO_ERROR(HALO_ERR_IO, "cannot write '%s': %s", path,
                    err ? strerror(err) : "write error");
}

halo_status halo_comm_check(MPI_Comm comm, const char *what) {
  int inter = 0;
  if (comm == MPI_COMM_NULL) return HALO_ERROR(HALO_ERR_INVALID_ARG, "%s is MPI_COMM_NULL", what);
  const int rc = MPI_Comm_test_inter(comm, &inter);
  if (rc != MPI_SUCCESS) return halo_error_mpi(rc, "MPI_Comm_test_inter", __FILE__, __LINE__);
  if (inter)
    return HALO_ERROR(HALO_ERR_INVALID_ARG,
                      "%s is an intercommunicator: halo needs an intracommunicator "
                      "(MPI_Intercomm_merge makes one of its two groups)",
                      what);
  return HALO_SUCCESS;
}
