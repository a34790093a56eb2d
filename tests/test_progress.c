/* Progress reports of the io functions (halo_io_set_progress): each stage
 * of Matrix Market and .hcsr reads and writes, generations and the
 * distributed reads begins at 0 and ends at its total (the file's bytes, the
 * entries, the rows; a rank's own bytes in the collective .hcsr read), done
 * never decreases, long stages report in between; without a function no
 * report comes, and a failing read ends no stage.
 *
 * Usage: test_progress OUTDIR MATRIX (files go to OUTDIR/np<P>_<pid>,
 * removed on success). */
#define _POSIX_C_SOURCE 200809L /* mkdir, getpid */
#include <sys/stat.h>
#include <unistd.h>

#include "halo/io.h"
#include "test_util.h"

#define MAX_REPORTS 4096

typedef struct {
  char stage[16];
  halo_progress_unit unit;
  int64_t done, total;
} report;

static report reports[MAX_REPORTS];
static int n_reports, calls;

static void record(void *data, const char *stage, halo_progress_unit unit, int64_t done,
                   int64_t total) {
  CHECK(data == &calls);
  calls++;
  if (n_reports == MAX_REPORTS) return;
  report *r = &reports[n_reports++];
  snprintf(r->stage, sizeof r->stage, "%s", stage);
  r->unit = unit;
  r->done = done;
  r->total = total;
}

static void reset(void) { n_reports = calls = 0; }

/* One expected stage: its name, unit and total (-1: any), and the fewest
 * reports strictly between 0 and the total. */
typedef struct {
  const char *stage;
  halo_progress_unit unit;
  int64_t total;
  int between;
} stage;

/* The reports since reset() are exactly these stages, in order, each from 0
 * to its total with done never decreasing (the last one may stop short when
 * complete is 0: a failed call). */
static void check_stages(const char *what, const stage *want, int n, int complete) {
  CHECK_MSG(calls == n_reports, "%s: %d reports, more than recorded", what, calls);
  int k = 0;
  for (int s = 0; s < n; s++) {
    const stage *w = &want[s];
    CHECK_MSG(k < n_reports, "%s: no report of stage %s", what, w->stage);
    const report *first = &reports[k];
    CHECK_MSG(strcmp(first->stage, w->stage) == 0 && first->done == 0 && first->unit == w->unit,
              "%s: stage %d begins with '%s' %lld of %lld (unit %d), expected '%s' at 0 (unit %d)",
              what, s, first->stage, (long long)first->done, (long long)first->total,
              (int)first->unit, w->stage, (int)w->unit);
    CHECK_MSG(w->total < 0 || first->total == w->total, "%s: stage %s of %lld, expected %lld", what,
              w->stage, (long long)first->total, (long long)w->total);
    int between = 0;
    int64_t last = 0;
    for (k++; k < n_reports && strcmp(reports[k].stage, w->stage) == 0 && last < first->total;
         k++) {
      const report *r = &reports[k];
      CHECK_MSG(r->total == first->total && r->done >= last && r->done <= r->total,
                "%s: stage %s: %lld of %lld after %lld of %lld", what, w->stage, (long long)r->done,
                (long long)r->total, (long long)last, (long long)first->total);
      last = r->done;
      between += r->done > 0 && r->done < r->total;
    }
    const int ended = last == first->total;
    CHECK_MSG(ended || (!complete && s == n - 1), "%s: stage %s ends at %lld of %lld", what,
              w->stage, (long long)last, (long long)first->total);
    CHECK_MSG(between >= w->between, "%s: stage %s: %d reports in between, expected %d or more",
              what, w->stage, between, w->between);
  }
  CHECK_MSG(k == n_reports, "%s: %d reports after the stages (the first: '%s')", what,
            n_reports - k, reports[k < n_reports ? k : 0].stage);
}

static int64_t file_bytes(const char *path) {
  struct stat sb;
  CHECK_MSG(stat(path, &sb) == 0, "cannot stat %s", path);
  return (int64_t)sb.st_size;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank, P;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &P);
  CHECK_MSG(argc == 3, "usage: test_progress OUTDIR MATRIX");
  char dir[512], mtx[600], hcsr[600], bad[600];
  snprintf(dir, sizeof dir, "%s/np%d_%d", argv[1], P, rank == 0 ? (int)getpid() : 0);
  MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, comm);
  if (rank == 0) {
    mkdir(argv[1], 0755);
    CHECK_MSG(mkdir(dir, 0755) == 0, "cannot make %s", dir);
  }
  MPI_Barrier(comm);
  snprintf(mtx, sizeof mtx, "%s/g.mtx", dir);
  snprintf(hcsr, sizeof hcsr, "%s/g.hcsr", dir);
  snprintf(bad, sizeof bad, "%s/bad.mtx", dir);
  halo_csr A = {0}, B = {0}, G = {0};

  /* no function: no report */
  reset();
  CHECK_OK(halo_mm_read(argv[2], NULL, &A));
  CHECK(calls == 0);
  halo_csr_free(&A);

  halo_io_set_progress(record, &calls);
  if (rank == 0) {
    /* a small file: reading and parsing, from 0 to the total */
    reset();
    CHECK_OK(halo_mm_read(argv[2], NULL, &A));
    const stage small[] = {{"reading", HALO_PROGRESS_BYTES, file_bytes(argv[2]), 0},
                           {"parsing", HALO_PROGRESS_BYTES, -1, 0}};
    check_stages("halo_mm_read", small, 2, 1);
    CHECK(reports[n_reports - 1].total < file_bytes(argv[2])); /* the entries, not the header */
    halo_csr_free(&A);

    /* a generated matrix of 125000 rows and 860000 entries: counting and
     * generating rows, in steps of 64 Ki rows */
    halo_gen g;
    CHECK_OK(halo_gen_parse("lap3d:50", &g));
    reset();
    CHECK_OK(halo_gen_rows(&g, 0, 125000, &G));
    const int64_t nnz = halo_csr_nnz(&G);
    CHECK(nnz == 7 * 125000 - 6 * 2500);
    const stage gen[] = {{"counting", HALO_PROGRESS_ROWS, 125000, 1},
                         {"generating", HALO_PROGRESS_ROWS, 125000, 1}};
    check_stages("halo_gen_rows", gen, 2, 1);

    /* written as Matrix Market: entries; read back: the file's bytes, then
     * the bytes of its entries in steps of 4 MiB */
    reset();
    CHECK_OK(halo_mm_write(mtx, &G));
    const stage mm_write[] = {{"writing", HALO_PROGRESS_ENTRIES, nnz, 1}};
    check_stages("halo_mm_write", mm_write, 1, 1);
    reset();
    CHECK_OK(halo_mm_read(mtx, NULL, &A));
    const stage mm_read[] = {{"reading", HALO_PROGRESS_BYTES, file_bytes(mtx), 0},
                             {"parsing", HALO_PROGRESS_BYTES, -1, 2}};
    check_stages("halo_mm_read of the generated file", mm_read, 2, 1);
    halo_csr_free(&A);

    /* .hcsr: the file's bytes, written and read */
    reset();
    CHECK_OK(halo_hcsr_write(hcsr, &G, NULL));
    const stage h_write[] = {{"writing", HALO_PROGRESS_BYTES, file_bytes(hcsr), 1}};
    check_stages("halo_hcsr_write", h_write, 1, 1);
    reset();
    CHECK_OK(halo_hcsr_read(hcsr, &A));
    const stage h_read[] = {{"reading", HALO_PROGRESS_BYTES, file_bytes(hcsr), 1}};
    check_stages("halo_hcsr_read", h_read, 1, 1);
    halo_csr_free(&A);

    /* a failing read ends no stage: parsing stops short */
    FILE *f = fopen(bad, "w");
    CHECK(f);
    fputs("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1.0\n2 x 1.0\n", f);
    fclose(f);
    reset();
    CHECK_ERR(halo_mm_read(bad, NULL, &A), HALO_ERR_FORMAT, "malformed number 'x'");
    const stage failed[] = {{"reading", HALO_PROGRESS_BYTES, file_bytes(bad), 0},
                            {"parsing", HALO_PROGRESS_BYTES, -1, 0}};
    check_stages("a failing halo_mm_read", failed, 2, 0);
    CHECK(reports[n_reports - 1].done < reports[n_reports - 1].total);
  }
  MPI_Barrier(comm);

  /* the collective .hcsr read: each rank its own bytes (row pointers, and
   * the padding on the last rank) */
  int64_t *rb = NULL;
  reset();
  CHECK_OK(halo_hcsr_read_distributed(comm, 0, hcsr, HALO_PARTITION_ROWS, NULL, &rb, &B, NULL));
  const int64_t rows = B.row_end - B.row_begin, cnt = halo_csr_nnz(&B);
  const int64_t nnz_all = 7 * 125000 - 6 * 2500;
  const int64_t pad = rank == P - 1 ? (8 - (72 + 8 * (125000 + 1) + 4 * nnz_all) % 8) % 8 : 0;
  const stage h_dist[] = {{"reading", HALO_PROGRESS_BYTES, 8 * (rows + 1) + 12 * cnt + pad, 0}};
  check_stages("halo_hcsr_read_distributed", h_dist, 1, 1);
  halo_csr_free(&B);
  halo_io_free(rb);

  /* the Matrix Market read of the distributed reader: on root alone */
  reset();
  CHECK_OK(
      halo_mm_read_distributed(comm, 0, argv[2], NULL, HALO_PARTITION_ROWS, NULL, &rb, &B, NULL));
  if (rank == 0) {
    const stage root[] = {{"reading", HALO_PROGRESS_BYTES, file_bytes(argv[2]), 0},
                          {"parsing", HALO_PROGRESS_BYTES, -1, 0}};
    check_stages("halo_mm_read_distributed on root", root, 2, 1);
  } else {
    CHECK_MSG(calls == 0, "halo_mm_read_distributed: %d reports on rank %d", calls, rank);
  }
  halo_csr_free(&B);
  halo_io_free(rb);

  /* unset: none again */
  halo_io_set_progress(NULL, NULL);
  reset();
  CHECK_OK(halo_mm_read(argv[2], NULL, &A));
  CHECK(calls == 0);
  halo_csr_free(&A);

  halo_csr_free(&G);
  MPI_Barrier(comm);
  if (rank == 0) {
    remove(mtx);
    remove(hcsr);
    remove(bad);
    rmdir(dir);
  }
  MPI_Finalize();
  return 0;
}
