/* The binary CSR format (.hcsr): written files have the documented layout
 * and checksums (computed here independently of the library); the serial
 * and the collective reader give bit for bit the matrix of the Matrix
 * Market reader (4- and 8-byte column indices, both partitions, ranks
 * without rows, global_p, a hand-made rectangular matrix with empty rows,
 * an empty matrix, columns beyond 2^32, refused by the readers' limit until
 * HALO_INPUT_LIMIT lifts it); every corrupted file fails
 * with HALO_ERR_FORMAT, its name and the problem, on every rank; and so does
 * a file that only rank 0 can open (HALO_ERR_IO).
 *
 * Usage: test_hcsr OUTDIR MATRIX... (the first matrix is the one corrupted;
 * files go to OUTDIR/np<P>_<pid>, removed on success). */
#define _POSIX_C_SOURCE 200809L /* mkdir, getpid, setenv */
#include <sys/stat.h>
#include <unistd.h>

#include "halo/io.h"
#include "test_util.h"

static MPI_Comm comm;
static int rank, P;
static char dir[512];

/* ---- the documented checksums, written anew ------------------------------ */

static uint64_t mix(uint64_t z) {
  z ^= z >> 30;
  z *= 0xbf58476d1ce4e5b9ULL;
  z ^= z >> 27;
  z *= 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return z;
}

static uint64_t get(const unsigned char *p, int bytes) {
  uint64_t v = 0;
  for (int k = bytes - 1; k >= 0; k--) v = v << 8 | p[k]; /* little-endian */
  return v;
}

static void put(unsigned char *p, uint64_t v, int bytes) {
  for (int k = 0; k < bytes; k++, v >>= 8) p[k] = (unsigned char)v;
}

static uint64_t part_sum(const unsigned char *p, int esize, int64_t n) {
  uint64_t s = 0;
  for (int64_t i = 0; i < n; i++)
    s += mix(get(p + esize * i, esize) ^ (uint64_t)i * 0x9e3779b97f4a7c15ULL);
  return s;
}

static uint64_t fnv1a(const unsigned char *p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ULL;
  return h;
}

/* A file in memory, with its parts located from the header. */
typedef struct {
  unsigned char *b;
  size_t len;
  int64_t n_rows, n_cols, nnz;
  int cb;                           /* column index bytes */
  size_t ptr_off, col_off, val_off; /* parts */
} image;

static void load(const char *path, image *im) {
  FILE *f = fopen(path, "rb");
  CHECK_MSG(f != NULL, "cannot open %s", path);
  fseek(f, 0, SEEK_END);
  im->len = (size_t)ftell(f);
  rewind(f);
  im->b = malloc(im->len + 16);
  CHECK(fread(im->b, 1, im->len, f) == im->len);
  memset(im->b + im->len, 0, 16);
  fclose(f);
  im->n_rows = (int64_t)get(im->b + 16, 8);
  im->n_cols = (int64_t)get(im->b + 24, 8);
  im->nnz = (int64_t)get(im->b + 32, 8);
  im->cb = get(im->b + 12, 4) & 1 ? 8 : 4;
  im->ptr_off = 72;
  im->col_off = im->ptr_off + 8 * (size_t)(im->n_rows + 1);
  im->val_off = (im->col_off + (size_t)(im->cb * im->nnz) + 7) / 8 * 8;
}

static void save(const char *path, const unsigned char *b, size_t len) {
  FILE *f = fopen(path, "wb");
  CHECK_MSG(f != NULL, "cannot write %s", path);
  CHECK(fwrite(b, 1, len, f) == len);
  CHECK(fclose(f) == 0);
}

/* Recompute the parts' checksums and the header's. */
static void reseal(image *im) {
  put(im->b + 40, part_sum(im->b + im->ptr_off, 8, im->n_rows + 1), 8);
  put(im->b + 48, part_sum(im->b + im->col_off, im->cb, im->nnz), 8);
  put(im->b + 56, part_sum(im->b + im->val_off, 8, im->nnz), 8);
  put(im->b + 64, fnv1a(im->b, 64), 8);
}

/* A written file is what README.md (Binary CSR input) says, byte for byte. */
static void check_layout(const char *path, const halo_csr *A, int cb) {
  image im;
  load(path, &im);
  CHECK_MSG(memcmp(im.b, "HALOCSR\0", 8) == 0, "%s: magic", path);
  CHECK(get(im.b + 8, 4) == 1 && get(im.b + 12, 4) == (cb == 8 ? 1u : 0u));
  CHECK(im.n_rows == A->n_rows && im.n_cols == A->n_cols && im.nnz == halo_csr_nnz(A));
  CHECK_MSG(im.len == im.val_off + 8 * (size_t)im.nnz, "%s: length %zu", path, im.len);
  for (int64_t i = 0; i <= A->n_rows; i++)
    CHECK((int64_t)get(im.b + im.ptr_off + 8 * i, 8) == A->row_ptr[i]);
  for (int64_t k = 0; k < im.nnz; k++) {
    uint64_t c = get(im.b + im.col_off + (size_t)(cb * k), cb), v;
    CHECK((int64_t)c == A->col_ids[k]);
    memcpy(&v, &A->values[k], 8);
    CHECK(get(im.b + im.val_off + 8 * k, 8) == v);
  }
  for (size_t p = im.col_off + (size_t)(cb * im.nnz); p < im.val_off; p++) CHECK(im.b[p] == 0);
  unsigned char head[72];
  memcpy(head, im.b, 72);
  reseal(&im);
  CHECK_MSG(memcmp(head, im.b, 72) == 0, "%s: checksums differ from the documented ones", path);
  free(im.b);
}

/* ---- comparisons --------------------------------------------------------- */

static void same_whole(const halo_csr *A, const halo_csr *B, const char *what) {
  CHECK_MSG(A->n_rows == B->n_rows && A->n_cols == B->n_cols && B->row_begin == 0 &&
                B->row_end == B->n_rows,
            "%s: sizes", what);
  const int64_t nnz = halo_csr_nnz(A);
  CHECK_MSG(halo_csr_nnz(B) == nnz, "%s: entries", what);
  CHECK_MSG(memcmp(A->row_ptr, B->row_ptr, (size_t)(A->n_rows + 1) * 8) == 0, "%s: row_ptr", what);
  CHECK_MSG(nnz == 0 || memcmp(A->col_ids, B->col_ids, (size_t)nnz * 8) == 0, "%s: columns", what);
  CHECK_MSG(nnz == 0 || memcmp(A->values, B->values, (size_t)nnz * 8) == 0, "%s: values", what);
}

/* This rank's rows of G (held by every rank) against local. */
static void same_rows(const halo_csr *G, const int64_t *row_begin, const halo_csr *L,
                      const char *what) {
  const int64_t b = row_begin[rank], e = row_begin[rank + 1], base = G->row_ptr[b];
  CHECK_MSG(L->n_rows == G->n_rows && L->n_cols == G->n_cols && L->row_begin == b &&
                L->row_end == e,
            "%s: rank %d: sizes or range", what, rank);
  for (int64_t i = 0; i <= e - b; i++)
    CHECK_MSG(L->row_ptr[i] == G->row_ptr[b + i] - base, "%s: row_ptr[%lld]", what, (long long)i);
  const int64_t nnz = G->row_ptr[e] - base;
  CHECK_MSG(nnz == 0 || memcmp(L->col_ids, G->col_ids + base, (size_t)nnz * 8) == 0,
            "%s: rank %d: columns", what, rank);
  CHECK_MSG(nnz == 0 || memcmp(L->values, G->values + base, (size_t)nnz * 8) == 0,
            "%s: rank %d: values", what, rank);
}

/* Write G (every rank holds it) as path with cb-byte indices, then read it
 * whole and in parallel with both partitions, over all ranks and over the
 * even ones only, and compare. */
static void round_trip(const halo_csr *G, const char *path, int cb, const char *what) {
  halo_hcsr_options o = halo_hcsr_options_default();
  o.index_bytes = cb;
  if (cb == 0) cb = G->n_cols <= INT32_MAX ? 4 : 8; /* the writer's choice */
  halo_status st = HALO_SUCCESS;
  if (rank == 0) {
    st = halo_hcsr_write(path, G, &o);
    if (st == HALO_SUCCESS) check_layout(path, G, cb);
  }
  MPI_Bcast(&st, 1, MPI_INT, 0, comm);
  CHECK_OK(st);
  halo_csr W;
  CHECK_OK(halo_hcsr_read(path, &W));
  same_whole(G, &W, what);
  halo_csr_free(&W);
  int probe = 0;
  CHECK_OK(halo_hcsr_probe(path, &probe));
  CHECK(probe == 1);
  int *holds = malloc((size_t)P * sizeof *holds);
  for (int r = 0; r < P; r++) holds[r] = r % 2 == 0;
  for (int k = 0; k < 4; k++) {
    const halo_partition_kind part = k % 2 ? HALO_PARTITION_NNZ : HALO_PARTITION_ROWS;
    const int *hold = k >= 2 ? holds : NULL;
    int64_t *row_begin = NULL, *expect = malloc((size_t)(P + 1) * sizeof *expect);
    halo_csr L, Gl;
    char label[600];
    snprintf(label, sizeof label, "%s (%d-byte columns, %s%s)", what, cb, halo_partition_name(part),
             hold ? ", odd ranks without rows" : "");
    CHECK_OK(
        halo_hcsr_read_distributed(comm, 0, path, part, hold, &row_begin, &L, k == 0 ? &Gl : NULL));
    CHECK_OK(halo_partition_compute(part, G->n_rows, G->row_ptr, P, hold, expect));
    CHECK_MSG(memcmp(row_begin, expect, (size_t)(P + 1) * 8) == 0, "%s: partition", label);
    same_rows(G, row_begin, &L, label);
    if (k == 0 && rank == 0) same_whole(G, &Gl, label);
    if (k == 0 && rank != 0) CHECK(Gl.row_ptr == NULL && Gl.n_rows == 0);
    if (k == 0) halo_csr_free(&Gl);
    halo_csr_free(&L);
    halo_io_free(row_begin);
    free(expect);
  }
  free(holds);
}

/* ---- corrupted files ----------------------------------------------------- */

static int n_files = 0;
static char files[64][1200];

static const char *file_path(const char *name) {
  CHECK(n_files < 64);
  snprintf(files[n_files], sizeof files[n_files], "%s/%s", dir, name);
  return files[n_files++];
}

/* Both readers fail on every rank with HALO_ERR_FORMAT (or code), the file
 * name and text. */
static void expect_error(const char *path, halo_status code, const char *text) {
  for (int k = 0; k < 2; k++) {
    const halo_partition_kind part = k ? HALO_PARTITION_NNZ : HALO_PARTITION_ROWS;
    int64_t *row_begin = (int64_t *)1;
    halo_csr L;
    memset(&L, 0xab, sizeof L);
    halo_status st = halo_hcsr_read_distributed(comm, 0, path, part, NULL, &row_begin, &L, NULL);
    const char *msg = halo_last_error();
    CHECK_MSG(st == code && strstr(msg, path) && strstr(msg, text),
              "%s (%s): status %d, message '%s'; expected %d with '%s'", path,
              halo_partition_name(part), (int)st, msg, (int)code, text);
    CHECK(row_begin == NULL && L.row_ptr == NULL && L.col_ids == NULL && L.values == NULL);
  }
  halo_csr A;
  halo_status st = halo_hcsr_read(path, &A);
  const char *msg = halo_last_error();
  CHECK_MSG(st == code && strstr(msg, path) && strstr(msg, text),
            "%s (serial): status %d, message '%s'; expected %d with '%s'", path, (int)st, msg,
            (int)code, text);
  CHECK(A.row_ptr == NULL && A.n_rows == 0);
}

/* A copy of the image with one change, resealed or not, checked. */
typedef void (*change_fn)(image *im);

static void corrupt(const image *orig, const char *name, change_fn change, int seal, size_t len,
                    const char *text) {
  const char *path = file_path(name);
  image im = *orig;
  im.b = malloc(orig->len + 16);
  memcpy(im.b, orig->b, orig->len + 16);
  if (change) change(&im);
  if (seal) reseal(&im);
  if (rank == 0) save(path, im.b, len ? len : im.len);
  MPI_Barrier(comm);
  expect_error(path, HALO_ERR_FORMAT, text);
  free(im.b);
}

static void magic(image *im) { im->b[0] = 'X'; }
static void version(image *im) { put(im->b + 8, 2, 4); }
static void flags(image *im) { put(im->b + 12, get(im->b + 12, 4) | 2, 4); }
static void rows(image *im) { put(im->b + 16, (uint64_t)im->n_rows + 1, 8); }
static void value_bit(image *im) { im->b[im->val_off + 8 * (size_t)(im->nnz / 2) + 7] ^= 0x80; }
static void column_bit(image *im) { im->b[im->col_off + (size_t)(im->cb * (im->nnz - 1))] ^= 1; }
static void ptr_bit(image *im) { im->b[im->ptr_off + 8 * (size_t)(im->n_rows / 3)] ^= 4; }
static void column_range(image *im) {
  put(im->b + im->col_off + (size_t)(im->cb * (im->nnz - 1)), (uint64_t)im->n_cols, im->cb);
}
static void column_negative(image *im) {
  put(im->b + im->col_off + (size_t)(im->cb * (im->nnz / 2)), UINT64_MAX, im->cb);
}
/* row pointer of row n/2 raised above the next one */
static void ptr_decrease(image *im) {
  unsigned char *p = im->b + im->ptr_off + 8 * (size_t)(im->n_rows / 2);
  put(p, get(p + 8, 8) + 1, 8);
}
static void ptr_first(image *im) { put(im->b + im->ptr_off, 1, 8); }
/* the first two entries of the first row with two, swapped */
static void column_order(image *im) {
  for (int64_t i = 0; i < im->n_rows; i++) {
    int64_t b = (int64_t)get(im->b + im->ptr_off + 8 * i, 8);
    if ((int64_t)get(im->b + im->ptr_off + 8 * (i + 1), 8) - b < 2) continue;
    unsigned char *c = im->b + im->col_off + (size_t)(im->cb * b), t[8];
    memcpy(t, c, (size_t)im->cb);
    memcpy(c, c + im->cb, (size_t)im->cb);
    memcpy(c + im->cb, t, (size_t)im->cb);
    return;
  }
  CHECK_MSG(0, "no row with two entries");
}
static void value_nan(image *im) {
  double v = NAN;
  memcpy(im->b + im->val_off + 8 * (size_t)(im->nnz - 1), &v, 8);
}
static void padding(image *im) { im->b[im->val_off - 1] = 7; }
static void trailing(image *im) { im->len += 8; }

static void test_corruptions(const halo_csr *G, const halo_csr *odd) {
  image im;
  const char *path = file_path("good.hcsr");
  if (rank == 0) CHECK_OK(halo_hcsr_write(path, G, NULL));
  MPI_Barrier(comm);
  load(path, &im);
  char text[256];
  snprintf(text, sizeof text, "truncated: the file has %zu bytes", im.len - 1);
  corrupt(&im, "truncated.hcsr", NULL, 0, im.len - 1, text);
  corrupt(&im, "truncated_header.hcsr", NULL, 0, 40,
          "truncated: the file has 40 bytes, less than the 72-byte header");
  corrupt(&im, "trailing.hcsr", trailing, 0, 0, "sizes inconsistent with the file length");
  corrupt(&im, "magic.hcsr", magic, 0, 0, "not an hcsr file: wrong magic 'XALOCSR\\x00'");
  corrupt(&im, "version.hcsr", version, 0, 0,
          "unsupported hcsr version 2 (this halo reads version 1)");
  corrupt(&im, "header.hcsr", rows, 0, 0, "bad header checksum");
  corrupt(&im, "flags.hcsr", flags, 1, 0, "unknown flags 0x2");
  corrupt(&im, "rows.hcsr", rows, 1, 0, "truncated: the file has");
  corrupt(&im, "value_bit.hcsr", value_bit, 0, 0, "bad checksum of the values");
  corrupt(&im, "column_bit.hcsr", column_bit, 0, 0, "bad checksum of the column indices");
  corrupt(&im, "ptr_bit.hcsr", ptr_bit, 0, 0, "bad checksum of the row pointers");
  int64_t last = G->n_rows - 1; /* the row of the last entry */
  while (G->row_ptr[last] == G->row_ptr[G->n_rows]) last--;
  snprintf(text, sizeof text, "column index %lld in row %lld is out of range [0, %lld)",
           (long long)G->n_cols, (long long)last, (long long)G->n_cols);
  corrupt(&im, "column_range.hcsr", column_range, 1, 0, text);
  corrupt(&im, "column_negative.hcsr", column_negative, 1, 0, "column index -1 in row");
  snprintf(text, sizeof text, "row pointers decrease at row %lld", (long long)G->n_rows / 2);
  corrupt(&im, "ptr_decrease.hcsr", ptr_decrease, 1, 0, text);
  corrupt(&im, "ptr_first.hcsr", ptr_first, 1, 0, "the first row pointer is 1, must be 0");
  corrupt(&im, "column_order.hcsr", column_order, 1, 0, "do not increase");
  corrupt(&im, "value_nan.hcsr", value_nan, 1, 0, "is not finite");
  free(im.b);

  /* padding after an odd number of 4-byte column indices */
  path = file_path("odd.hcsr");
  if (rank == 0) CHECK_OK(halo_hcsr_write(path, odd, NULL));
  MPI_Barrier(comm);
  load(path, &im);
  CHECK(im.nnz % 2 == 1 && im.cb == 4);
  corrupt(&im, "padding.hcsr", padding, 1, 0, "padding byte");
  free(im.b);

  /* no file; a Matrix Market file is no hcsr */
  path = file_path("missing.hcsr");
  expect_error(path, HALO_ERR_IO, "cannot open");
}

/* A file that rank 0 can open and the others cannot (as one on a disk of
 * rank 0's node only): a relative name, read with the other ranks in an
 * empty directory. Every rank fails with rank 1's message; none waits for
 * the others. */
static void test_open_on_root_only(void) {
  if (P < 2) return;
  char sub[600], cwd[4096];
  snprintf(sub, sizeof sub, "%s/elsewhere", dir);
  CHECK(getcwd(cwd, sizeof cwd) != NULL);
  if (rank == 0) CHECK_MSG(mkdir(sub, 0777) == 0, "cannot make %s", sub);
  MPI_Barrier(comm);
  CHECK(chdir(rank == 0 ? dir : sub) == 0);
  int64_t *rb = (int64_t *)1;
  halo_csr L;
  CHECK_ERR(
      halo_hcsr_read_distributed(comm, 0, "good.hcsr", HALO_PARTITION_ROWS, NULL, &rb, &L, NULL),
      HALO_ERR_IO, "rank 1: cannot open 'good.hcsr'");
  CHECK(rb == NULL && L.row_ptr == NULL);
  CHECK(chdir(cwd) == 0);
  MPI_Barrier(comm);
  if (rank == 0) CHECK(rmdir(sub) == 0);
}

/* ---- hand-made matrices -------------------------------------------------- */

/* 3 x 5 with an empty row and 5 (odd) entries */
static halo_csr small(void) {
  static int64_t ptr[] = {0, 3, 3, 5}, cols[] = {0, 2, 4, 1, 3};
  static double vals[] = {1.5, -2.0, 3.25, 1e300, -0.0};
  halo_csr A = {3, 5, 0, 3, ptr, cols, vals};
  return A;
}

static void test_writer_errors(const halo_csr *G) {
  const char *path = file_path("bad_input.hcsr");
  halo_hcsr_options o = halo_hcsr_options_default();
  halo_csr A = *G;
  int64_t ptr[] = {0, 2}, cols[] = {3, 1}, wide[] = {1, INT64_C(1) << 32};
  double vals[] = {1.0, 2.0}, inf[] = {1.0, INFINITY};
  halo_csr B = {1, 4, 0, 1, ptr, cols, vals};
  CHECK_ERR(halo_hcsr_write(path, &B, NULL), HALO_ERR_INVALID_ARG, "do not increase");
  B.col_ids = wide;
  CHECK_ERR(halo_hcsr_write(path, &B, NULL), HALO_ERR_INVALID_ARG, "out of range [0, 4)");
  B.n_cols = (INT64_C(1) << 32) + 1;
  o.index_bytes = 4;
  CHECK_ERR(halo_hcsr_write(path, &B, &o), HALO_ERR_OUT_OF_RANGE, "do not fit 4-byte");
  o.index_bytes = 3;
  CHECK_ERR(halo_hcsr_write(path, &B, &o), HALO_ERR_INVALID_ARG, "index_bytes 3");
  B.values = inf;
  CHECK_ERR(halo_hcsr_write(path, &B, NULL), HALO_ERR_INVALID_ARG, "not finite");
  A.row_end = A.n_rows / 2;
  CHECK_ERR(halo_hcsr_write(path, &A, NULL), HALO_ERR_INVALID_ARG, "needs the whole matrix");
  CHECK_ERR(halo_hcsr_write("/nonexistent-dir/x.hcsr", G, NULL), HALO_ERR_IO, "cannot open");
  CHECK_ERR(halo_hcsr_read(NULL, &A), HALO_ERR_INVALID_ARG, "path is NULL");
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  comm = MPI_COMM_WORLD;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &P);
  if (argc < 3) {
    if (rank == 0) fprintf(stderr, "usage: test_hcsr OUTDIR MATRIX...\n");
    MPI_Finalize();
    return 2;
  }
  int pid = (int)getpid();
  MPI_Bcast(&pid, 1, MPI_INT, 0, comm);
  snprintf(dir, sizeof dir, "%s/np%d_%d", argv[1], P, pid);
  if (rank == 0) {
    mkdir(argv[1], 0777);
    CHECK_MSG(mkdir(dir, 0777) == 0, "cannot make %s", dir);
  }
  MPI_Barrier(comm);

  halo_csr first;
  memset(&first, 0, sizeof first);
  for (int a = 2; a < argc; a++) {
    halo_csr G;
    char name[600];
    CHECK_OK(halo_mm_read(argv[a], NULL, &G));
    const char *base = strrchr(argv[a], '/');
    for (int cb = 4; cb <= 8; cb += 4) {
      snprintf(name, sizeof name, "%s_%d.hcsr", base ? base + 1 : argv[a], cb);
      round_trip(&G, file_path(name), cb, argv[a]);
    }
    if (a == 2)
      first = G;
    else
      halo_csr_free(&G);
  }

  /* rectangular with an empty row (more ranks than rows from 4 on); empty;
   * columns beyond 2^32 (8-byte indices chosen by the writer) */
  halo_csr S = small(), E = {0, 0, 0, 0, NULL, NULL, NULL}, Wd = small();
  int64_t zero = 0,
          wide_cols[] = {0, INT64_C(1) << 32, (INT64_C(1) << 33) + 5, 7, INT64_C(1) << 34};
  E.row_ptr = &zero;
  Wd.n_cols = (INT64_C(1) << 34) + 1;
  Wd.col_ids = wide_cols;
  round_trip(&S, file_path("small_4.hcsr"), 4, "3 x 5");
  round_trip(&S, file_path("small_8.hcsr"), 8, "3 x 5");
  round_trip(&E, file_path("empty.hcsr"), 0, "0 x 0");
  /* its columns need 137 GB of vectors for 5 entries: past the readers' limit
   * (HALO_INPUT_LIMIT), refused on every rank, then read with the limit lifted */
  const char *wide_path = file_path("wide.hcsr");
  if (rank == 0) CHECK_OK(halo_hcsr_write(wide_path, &Wd, NULL));
  MPI_Barrier(comm);
  int64_t *wide_rb = NULL;
  halo_csr WL, WW;
  CHECK_ERR(halo_hcsr_read(wide_path, &WW), HALO_ERR_OUT_OF_RANGE,
            "declares 3 rows and 17179869185 columns for 5 entries");
  CHECK_ERR(halo_hcsr_read_distributed(comm, 0, wide_path, HALO_PARTITION_ROWS, NULL, &wide_rb, &WL,
                                       NULL),
            HALO_ERR_OUT_OF_RANGE, "beyond its entries (16 bytes each); the limit is 1.07 GB");
  CHECK(wide_rb == NULL && WL.row_ptr == NULL);
  setenv("HALO_INPUT_LIMIT", "none", 1);
  round_trip(&Wd, wide_path, 0, "3 x 2^34+1");
  unsetenv("HALO_INPUT_LIMIT");
  image im;
  load(files[n_files - 1], &im);
  CHECK(im.cb == 8);
  free(im.b);

  test_corruptions(&first, &S);
  test_open_on_root_only();
  int64_t *rb = NULL;
  halo_csr L;
  CHECK_ERR(
      halo_hcsr_read_distributed(comm, 0, files[0], HALO_PARTITION_METIS, NULL, &rb, &L, NULL),
      HALO_ERR_INVALID_ARG, "renumbers the rows");
  CHECK(rb == NULL && L.row_ptr == NULL);
  if (rank == 0) test_writer_errors(&first);
  halo_csr_free(&first);

  MPI_Barrier(comm);
  if (rank == 0) {
    for (int k = 0; k < n_files; k++) remove(files[k]);
    rmdir(dir);
  }
  MPI_Finalize();
  return 0;
}
