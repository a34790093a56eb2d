/* Load time of the Matrix Market reader: write a generated matrix as a
 * Matrix Market file (once), then read it REPEAT times and print the
 * median, min and max read time.
 * usage: bench_mm_load SPEC FILE [REPEAT] */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

#include "halo/io.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s SPEC FILE [REPEAT]\n", argv[0]);
    return 2;
  }
  int repeat = argc > 3 ? atoi(argv[3]) : 5;
  if (repeat < 1) repeat = 1;
  struct stat sb;
  if (stat(argv[2], &sb) != 0) {
    halo_gen g;
    halo_csr A;
    int64_t N;
    if (halo_gen_parse(argv[1], &g) || halo_gen_size(&g, &N, NULL) || halo_gen_rows(&g, 0, N, &A) ||
        halo_mm_write(argv[2], &A)) {
      fprintf(stderr, "%s\n", halo_last_error());
      return 1;
    }
    halo_csr_free(&A);
    stat(argv[2], &sb);
  }
  double *t = malloc((size_t)repeat * sizeof *t);
  int64_t nnz = 0;
  for (int i = 0; i < repeat; i++) {
    halo_csr A;
    double t0 = now();
    if (halo_mm_read(argv[2], NULL, &A) != HALO_SUCCESS) {
      fprintf(stderr, "%s\n", halo_last_error());
      return 1;
    }
    t[i] = now() - t0;
    nnz = halo_csr_nnz(&A);
    halo_csr_free(&A);
  }
  qsort(t, (size_t)repeat, sizeof *t, cmp);
  printf("file %s: %.1f MB, %lld entries; read %d times: median %.3f s, min %.3f s, max %.3f s "
         "(%.0f MB/s)\n",
         argv[2], (double)sb.st_size / 1e6, (long long)nnz, repeat, t[repeat / 2], t[0],
         t[repeat - 1], (double)sb.st_size / 1e6 / t[repeat / 2]);
  free(t);
  return 0;
}
