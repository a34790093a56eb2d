/* What the MPI benchmarks share: a check that aborts with the library's
 * message, the median of a sample, the most of any rank, and a matrix's rows
 * generated or read and spread evenly by rows. Header only. */
#ifndef HALO_BENCH_UTIL_H
#define HALO_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>

#include "halo.h"
#include "halo/io.h"

/* BENCH_NAME: the program's name in its messages (defined before the include). */
#define CK(call)                                                                                   \
  do {                                                                                             \
    halo_status s_ = (call);                                                                       \
    if (s_ != HALO_SUCCESS) {                                                                      \
      fprintf(stderr, "%s: %s: %s\n", BENCH_NAME, #call, halo_last_error());                       \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                                \
    }                                                                                              \
  } while (0)

static int bench_cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median of v[0..n) (v sorted in place). */
static inline double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The most of any rank. */
static inline double most(MPI_Comm comm, double t) {
  double m;
  MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, comm);
  return m;
}

/* The rows of --gen SPEC or --matrix FILE (one of them), spread by rows over
 * MPI_COMM_WORLD: every rank's first row in *rb_p. */
static inline void bench_rows(const char *gen, const char *file, int64_t **rb_p, halo_csr *rows) {
  if (gen) {
    halo_gen g;
    CK(halo_gen_parse(gen, &g));
    CK(halo_gen_distributed(MPI_COMM_WORLD, &g, HALO_PARTITION_ROWS, NULL, rb_p, rows));
  } else {
    CK(halo_mm_read_distributed(MPI_COMM_WORLD, 0, file, NULL, HALO_PARTITION_ROWS, NULL, rb_p,
                                rows, NULL));
  }
}

#endif
