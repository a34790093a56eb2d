/* Load time of a matrix file read onto P ranks: an .hcsr file with
 * halo_hcsr_read_distributed (every rank reads its own rows with MPI-IO), a
 * Matrix Market file with halo_mm_read_distributed (rank 0 reads and parses
 * it, then sends every rank its rows). Reads the file REPEAT times; the time
 * of one read is that of the slowest rank; prints the median, min and max.
 * With --cold, rank 0 asks the kernel to drop the file's pages from the page
 * cache before each read (posix_fadvise DONTNEED), so that it comes from
 * the disk as far as the machine allows.
 * usage: mpirun -n P bench_io_load FILE [REPEAT] [--partition rows|nnz] [--cold] */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "halo/io.h"

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void drop_cache(const char *path) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) return;
  fdatasync(fd);
  posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  close(fd);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, P, repeat = 5, cold = 0;
  const char *path = NULL;
  halo_partition_kind part = HALO_PARTITION_ROWS;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--cold") == 0) {
      cold = 1;
    } else if (strcmp(argv[i], "--partition") == 0 && i + 1 < argc) {
      if (halo_partition_from_name(argv[++i], &part) != HALO_SUCCESS) path = NULL, i = argc;
    } else if (!path) {
      path = argv[i];
    } else {
      repeat = atoi(argv[i]);
    }
  }
  if (!path || repeat < 1) {
    if (rank == 0)
      fprintf(stderr, "usage: bench_io_load FILE [REPEAT] [--partition rows|nnz] [--cold]\n");
    MPI_Finalize();
    return 2;
  }
  int hcsr = 0;
  if (halo_hcsr_probe(path, &hcsr) != HALO_SUCCESS) {
    if (rank == 0) fprintf(stderr, "%s\n", halo_last_error());
    MPI_Finalize();
    return 1;
  }
  struct stat sb;
  stat(path, &sb);
  double *t = malloc((size_t)repeat * sizeof *t);
  int64_t nnz = 0;
  for (int i = 0; i < repeat; i++) {
    halo_csr A;
    int64_t *row_begin;
    if (cold && rank == 0) drop_cache(path);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    halo_status st =
        hcsr ? halo_hcsr_read_distributed(MPI_COMM_WORLD, 0, path, part, NULL, &row_begin, &A, NULL)
             : halo_mm_read_distributed(MPI_COMM_WORLD, 0, path, NULL, part, NULL, &row_begin, &A,
                                        NULL);
    double ti = MPI_Wtime() - t0;
    if (st != HALO_SUCCESS) {
      if (rank == 0) fprintf(stderr, "%s\n", halo_last_error());
      MPI_Finalize();
      return 1;
    }
    MPI_Allreduce(&ti, &t[i], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    int64_t mine = halo_csr_nnz(&A);
    MPI_Allreduce(&mine, &nnz, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    halo_csr_free(&A);
    halo_io_free(row_begin);
  }
  qsort(t, (size_t)repeat, sizeof *t, cmp);
  if (rank == 0)
    printf("%s (%s, %.1f MB, %lld entries) on %d rank%s, %s, %s cache: read %d times: median "
           "%.3f s, min %.3f s, max %.3f s (%.0f MB/s)\n",
           path, hcsr ? "hcsr" : "Matrix Market", (double)sb.st_size / 1e6, (long long)nnz, P,
           P > 1 ? "s" : "", halo_partition_name(part), cold ? "cold" : "warm", repeat,
           t[repeat / 2], t[0], t[repeat - 1], (double)sb.st_size / 1e6 / t[repeat / 2]);
  free(t);
  MPI_Finalize();
  return 0;
}
