/* Unit test of the Matrix Market reader and writer (no MPI calls).
 *
 * Usage: test_mmio DIR, where DIR is tests/data/mm. Every malformed file of
 * DIR must fail with the expected status and message; the valid files must
 * give the expected CSR arrays; a matrix written and read back must be
 * identical bit for bit. Returns 0 on success, 1 on the first failure. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "halo/io.h"

static const char *data_dir;
static char tmp_path[512];

static int fail(const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "test_mmio: FAILED: ");
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\n");
  return 1;
}

#define CHECK(cond, ...)                                                                           \
  do {                                                                                             \
    if (!(cond)) return fail(__VA_ARGS__);                                                         \
  } while (0)

#define RUN(call)                                                                                  \
  do {                                                                                             \
    if (call) return 1;                                                                            \
  } while (0)

static void data_path(char *buf, size_t len, const char *name) {
  snprintf(buf, len, "%s/%s", data_dir, name);
}

static int is_zeroed(const halo_csr *A) {
  return A->n_rows == 0 && A->n_cols == 0 && A->row_begin == 0 && A->row_end == 0 &&
         A->row_ptr == NULL && A->col_ids == NULL && A->values == NULL;
}

/* ---- malformed files ----------------------------------------------------- */

/* Reading @p name fails with @p code and a message holding the file name and
 * each of the given texts (up to two); the output stays zeroed. */
static int expect_error_in(const char *path, const halo_mm_options *opts, halo_status code,
                           const char *text1, const char *text2) {
  halo_csr A;
  memset(&A, 0xab, sizeof A); /* garbage: the reader must zero it */
  halo_status st = halo_mm_read(path, opts, &A);
  const char *msg = halo_last_error();
  CHECK(st == code, "%s: status %d (%s), expected %d; message: %s", path, (int)st,
        halo_status_string(st), (int)code, msg);
  CHECK(is_zeroed(&A), "%s: output not zeroed after a failure", path);
  CHECK(strstr(msg, path) != NULL, "%s: message does not name the file: %s", path, msg);
  CHECK(!text1 || strstr(msg, text1), "%s: message lacks \"%s\": %s", path, text1, msg);
  CHECK(!text2 || strstr(msg, text2), "%s: message lacks \"%s\": %s", path, text2, msg);
  halo_csr_free(&A);
  return 0;
}

static int expect_error(const char *name, const char *text1, const char *text2) {
  char path[1024];
  data_path(path, sizeof path, name);
  return expect_error_in(path, NULL, HALO_ERR_FORMAT, text1, text2);
}

static int test_malformed(void) {
  RUN(expect_error("bad_banner.mtx", "line 1: missing or garbled banner", NULL));
  RUN(expect_error("empty.mtx", "empty file", NULL));
  RUN(expect_error("array.mtx",
                   "line 1: dense array format is not supported: convert to coordinate", NULL));
  RUN(expect_error("complex.mtx", "line 1: complex matrices are not supported", NULL));
  RUN(expect_error("hermitian.mtx", "line 1: hermitian", "complex matrices are not supported"));
  RUN(expect_error("unknown_symmetry.mtx", "line 1: unknown symmetry 'symetric'", NULL));
  RUN(expect_error("bad_size.mtx", "line 3: size line", "expected 3 integers"));
  RUN(expect_error("negative_size.mtx", "line 2: size line: negative number of columns -2", NULL));
  RUN(expect_error("no_size_line.mtx", "file ends before the size line", NULL));
  RUN(expect_error("too_few.mtx", "file ends after 3 of 4 entries declared on line 2", NULL));
  RUN(expect_error("too_many.mtx", "line 5: more entries than the 2 declared on line 2", NULL));
  RUN(expect_error("index_zero.mtx", "line 4: row index 0 out of range [1, 3]", NULL));
  RUN(expect_error("row_too_large.mtx", "line 5: row index 4 out of range [1, 3]", NULL));
  RUN(expect_error("column_too_large.mtx", "line 4: column index 3 out of range [1, 2]", NULL));
  RUN(expect_error("bad_number.mtx", "line 4: malformed number 'abc'", NULL));
  RUN(expect_error("integer_fraction.mtx", "line 3: malformed number '1.5'", "integer"));
  RUN(expect_error("missing_value.mtx", "line 4: expected 3 values (row column value), found 2",
                   NULL));
  RUN(expect_error("extra_token.mtx", "line 3: expected 3 values (row column value), found 4",
                   NULL));
  RUN(expect_error("pattern_value.mtx", "line 3: expected 2 values (row column)", "found 3"));
  RUN(expect_error("nan_value.mtx", "line 4: value 'nan' is not a finite number", NULL));
  RUN(expect_error("duplicate.mtx", "line 8: duplicate entry (2, 3)", "first on line 5"));
  RUN(expect_error("symmetric_duplicate.mtx", "line 5: entry (1, 2) duplicates entry (2, 1)",
                   "of line 4"));
  RUN(expect_error("good_duplicates.mtx", "line 5: duplicate entry (1, 1)", "first on line 3"));
  RUN(expect_error("symmetric_nonsquare.mtx", "line 2: a symmetric matrix must be square",
                   "3 x 4"));
  RUN(expect_error("skew_diagonal.mtx", "line 4: diagonal entry (3, 3) in a skew-symmetric matrix",
                   NULL));

  /* A missing file, and a directory. */
  char path[1024];
  data_path(path, sizeof path, "no_such_file.mtx");
  RUN(expect_error_in(path, NULL, HALO_ERR_IO, "cannot open", NULL));
  RUN(expect_error_in(data_dir, NULL, HALO_ERR_IO, "cannot read", NULL));

  /* Bad arguments. */
  halo_csr A;
  CHECK(halo_mm_read(NULL, NULL, &A) == HALO_ERR_INVALID_ARG, "NULL path accepted");
  CHECK(is_zeroed(&A), "output not zeroed after a NULL path");
  CHECK(halo_mm_read(path, NULL, NULL) == HALO_ERR_INVALID_ARG, "NULL output accepted");
  return 0;
}

/* ---- valid files --------------------------------------------------------- */

static int expect_csr(const char *what, const halo_csr *A, int64_t m, int64_t n,
                      const int64_t *row_ptr, const int64_t *cols, const double *vals) {
  CHECK(A->n_rows == m && A->n_cols == n, "%s: size %lld x %lld, expected %lld x %lld", what,
        (long long)A->n_rows, (long long)A->n_cols, (long long)m, (long long)n);
  CHECK(A->row_begin == 0 && A->row_end == m, "%s: rows [%lld, %lld), expected [0, %lld)", what,
        (long long)A->row_begin, (long long)A->row_end, (long long)m);
  CHECK(A->row_ptr != NULL, "%s: row_ptr is NULL", what);
  for (int64_t r = 0; r <= m; r++)
    CHECK(A->row_ptr[r] == row_ptr[r], "%s: row_ptr[%lld] = %lld, expected %lld", what,
          (long long)r, (long long)A->row_ptr[r], (long long)row_ptr[r]);
  CHECK(halo_csr_nnz(A) == row_ptr[m], "%s: halo_csr_nnz = %lld, expected %lld", what,
        (long long)halo_csr_nnz(A), (long long)row_ptr[m]);
  for (int64_t k = 0; k < row_ptr[m]; k++) {
    CHECK(A->col_ids[k] == cols[k], "%s: col_ids[%lld] = %lld, expected %lld", what, (long long)k,
          (long long)A->col_ids[k], (long long)cols[k]);
    CHECK(memcmp(&A->values[k], &vals[k], sizeof(double)) == 0,
          "%s: values[%lld] = %.17g, expected %.17g", what, (long long)k, A->values[k], vals[k]);
  }
  return 0;
}

static int read_ok(const char *path, const halo_mm_options *opts, halo_csr *A) {
  halo_status st = halo_mm_read(path, opts, A);
  CHECK(st == HALO_SUCCESS, "%s: status %d (%s): %s", path, (int)st, halo_status_string(st),
        halo_last_error());
  return 0;
}

static int check_file(const char *name, const halo_mm_options *opts, int64_t m, int64_t n,
                      const int64_t *row_ptr, const int64_t *cols, const double *vals) {
  char path[1024];
  halo_csr A;
  data_path(path, sizeof path, name);
  RUN(read_ok(path, opts, &A));
  int bad = expect_csr(name, &A, m, n, row_ptr, cols, vals);
  halo_csr_free(&A);
  CHECK(is_zeroed(&A), "halo_csr_free does not zero the matrix");
  return bad;
}

static int test_valid(void) {
  {
    const int64_t rp[] = {0, 3, 4, 6}, c[] = {0, 1, 2, 1, 0, 3};
    const double v[] = {1.5, -2, 0.5, 3, 1e10, -1e-3};
    RUN(check_file("good_general.mtx", NULL, 3, 4, rp, c, v));
  }
  { /* mirrored; the diagonal once */
    const int64_t rp[] = {0, 3, 4, 6}, c[] = {0, 1, 2, 0, 0, 2};
    const double v[] = {4, -1, 2.5, -1, 2.5, 5};
    RUN(check_file("good_symmetric.mtx", NULL, 3, 3, rp, c, v));
  }
  { /* mirrored with the opposite sign */
    const int64_t rp[] = {0, 2, 3, 4}, c[] = {1, 2, 0, 0};
    const double v[] = {-1.5, -2, 1.5, 2};
    RUN(check_file("good_skew.mtx", NULL, 3, 3, rp, c, v));
  }
  { /* keywords in any case; values 1 */
    const int64_t rp[] = {0, 1, 3}, c[] = {0, 0, 2};
    const double v[] = {1, 1, 1};
    RUN(check_file("good_pattern.mtx", NULL, 2, 3, rp, c, v));
  }
  {
    const int64_t rp[] = {0, 1, 3}, c[] = {0, 0, 1};
    const double v[] = {7, -3, 12};
    RUN(check_file("good_integer.mtx", NULL, 2, 2, rp, c, v));
  }
  { /* summed in file order */
    halo_mm_options o = halo_mm_options_default();
    CHECK(o.sum_duplicates == 0, "duplicates are summed by default");
    o.sum_duplicates = 1;
    const int64_t rp[] = {0, 1, 2}, c[] = {0, 1};
    const double v[] = {1.0 + 0.25 + 4.0, 2};
    RUN(check_file("good_duplicates.mtx", &o, 2, 2, rp, c, v));
  }
  return 0;
}

/* ---- files written here -------------------------------------------------- */

static int write_text(const char *text) {
  FILE *fp = fopen(tmp_path, "wb");
  CHECK(fp != NULL, "cannot create %s", tmp_path);
  fputs(text, fp);
  CHECK(fclose(fp) == 0, "cannot write %s", tmp_path);
  return 0;
}

static int test_generated(void) {
  halo_csr A;
  { /* CRLF line ends, no newline at the end, an empty matrix */
    RUN(write_text("%%MatrixMarket matrix coordinate real general\r\n% c\r\n\r\n2 2 2\r\n"
                   "2 1 0.5\r\n1 2 -4"));
    const int64_t rp[] = {0, 1, 2}, c[] = {1, 0};
    const double v[] = {-4, 0.5};
    RUN(read_ok(tmp_path, NULL, &A));
    RUN(expect_csr("CRLF file", &A, 2, 2, rp, c, v));
    halo_csr_free(&A);
    RUN(write_text("%%MatrixMarket matrix coordinate real general\n0 0 0\n"));
    const int64_t rp0[] = {0};
    RUN(read_ok(tmp_path, NULL, &A));
    RUN(expect_csr("empty matrix", &A, 0, 0, rp0, NULL, NULL));
    halo_csr_free(&A);
    RUN(write_text("%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1e999\n"));
    RUN(expect_error_in(tmp_path, NULL, HALO_ERR_FORMAT, "line 3: value '1e999' is not a finite",
                        NULL));
  }
  { /* long rows in reverse column order (merge sort), symmetric, and summed */
    const int n = 1000;
    size_t cap = (size_t)n * 64 + 256, len = 0;
    char *text = malloc(cap);
    CHECK(text != NULL, "out of memory");
    len += (size_t)snprintf(text + len, cap - len,
                            "%%%%MatrixMarket matrix coordinate real symmetric\n%d %d %d\n", n, n,
                            2 * n);
    for (int j = n; j >= 1; j--) /* column 1 of every row, first row mirrored */
      len += (size_t)snprintf(text + len, cap - len, "%d 1 %d\n", j, j);
    for (int j = n; j >= 1; j--) /* row n of every column */
      len += (size_t)snprintf(text + len, cap - len, "%d %d %d.5\n", n, j, j);
    /* (n, 1) is given twice: on line 3 and on the last line, 2n + 2. */
    int bad = write_text(text);
    free(text);
    RUN(bad);
    char want[64];
    snprintf(want, sizeof want, "line %d: duplicate entry (%d, 1), first on line 3", 2 * n + 2, n);
    RUN(expect_error_in(tmp_path, NULL, HALO_ERR_FORMAT, want, NULL));
    halo_mm_options o = halo_mm_options_default();
    o.sum_duplicates = 1;
    RUN(read_ok(tmp_path, &o, &A));
    /* Row 0: columns 0..n-1 with values 1..n, but (0, n-1) is the sum of
     * the two (n, 1): n + 1.5. Row n-1: column 0 is that sum too, column j
     * (1 <= j < n) is j + 1.5 (the diagonal n.5 included). */
    CHECK(A.n_rows == n && A.row_ptr[1] == n, "row 0 has %lld entries, expected %d",
          (long long)A.row_ptr[1], n);
    for (int j = 0; j < n; j++) {
      double want0 = j == n - 1 ? n + 1.5 : j + 1;
      CHECK(A.col_ids[j] == j && A.values[j] == want0,
            "row 0 entry %d: (%lld, %g), expected "
            "(%d, %g)",
            j, (long long)A.col_ids[j], A.values[j], j, want0);
    }
    int64_t b = A.row_ptr[n - 1];
    CHECK(A.row_ptr[n] - b == n, "row %d has %lld entries, expected %d", n - 1,
          (long long)(A.row_ptr[n] - b), n);
    for (int j = 0; j < n; j++) {
      double wantn = j == 0 ? n + 1.5 : j + 1.5;
      CHECK(A.col_ids[b + j] == j && A.values[b + j] == wantn,
            "row %d entry %d: (%lld, %g), expected (%d, %g)", n - 1, j, (long long)A.col_ids[b + j],
            A.values[b + j], j, wantn);
    }
    for (int r = 1; r < n - 1; r++) {
      int64_t k = A.row_ptr[r];
      CHECK(A.row_ptr[r + 1] - k == 2 && A.col_ids[k] == 0 && A.col_ids[k + 1] == n - 1 &&
                A.values[k] == r + 1 && A.values[k + 1] == r + 1.5,
            "row %d is wrong", r);
    }
    halo_csr_free(&A);
  }
  return 0;
}

/* ---- write and read back ------------------------------------------------- */

static int round_trip(const char *what, const halo_csr *A) {
  halo_csr B;
  halo_status st = halo_mm_write(tmp_path, A);
  CHECK(st == HALO_SUCCESS, "%s: halo_mm_write: %s", what, halo_last_error());
  RUN(read_ok(tmp_path, NULL, &B));
  int bad = expect_csr(what, &B, A->n_rows, A->n_cols, A->row_ptr, A->col_ids, A->values);
  halo_csr_free(&B);
  return bad;
}

static int test_round_trip(void) {
  int64_t row_ptr[] = {0, 4, 4, 7, 10};
  int64_t cols[] = {0, 1, 3, 4, 0, 2, 4, 1, 2, 3};
  double vals[] = {0.1,
                   -1.0 / 3.0,
                   1e-300,
                   4.9406564584124654e-324, /* smallest subnormal */
                   1.7976931348623157e308,  /* largest double */
                   -0.0,
                   3.141592653589793,
                   123456789.12345679,
                   -2.5e-17,
                   2.2250738585072009e-308}; /* largest subnormal */
  halo_csr A = {4, 5, 0, 4, row_ptr, cols, vals};
  RUN(round_trip("round trip", &A));

  /* A larger one with pseudo-random values. */
  enum { M = 300, N = 200, PER = 7 };
  static int64_t rp[M + 1], cc[M * PER];
  static double vv[M * PER];
  uint64_t x = 88172645463325252u;
  rp[0] = 0;
  for (int r = 0; r < M; r++) {
    int k0 = r * PER;
    for (int k = 0; k < PER; k++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      cc[k0 + k] = (r * 13 + k * 29) % N; /* distinct for k < PER */
      double u = (double)(x >> 11) / 9007199254740992.0;
      vv[k0 + k] = (u - 0.5) * (k == 0 ? 1e-200 : k == 1 ? 1e200 : 7.0);
    }
    for (int k = 1; k < PER; k++) /* sort the row */
      for (int q = k; q > 0 && cc[k0 + q - 1] > cc[k0 + q]; q--) {
        int64_t tc = cc[k0 + q];
        double tv = vv[k0 + q];
        cc[k0 + q] = cc[k0 + q - 1], vv[k0 + q] = vv[k0 + q - 1];
        cc[k0 + q - 1] = tc, vv[k0 + q - 1] = tv;
      }
    rp[r + 1] = rp[r] + PER;
  }
  halo_csr R = {M, N, 0, M, rp, cc, vv};
  RUN(round_trip("random round trip", &R));

  /* Only whole matrices; unwritable paths. */
  halo_csr part = A;
  part.row_begin = 1;
  CHECK(halo_mm_write(tmp_path, &part) == HALO_ERR_INVALID_ARG, "a part of a matrix written");
  CHECK(halo_mm_write("/nonexistent-dir/x.mtx", &A) == HALO_ERR_IO, "bad path: %s",
        halo_last_error());
  CHECK(strstr(halo_last_error(), "/nonexistent-dir/x.mtx") != NULL, "IO message lacks the path");
  CHECK(halo_mm_write(tmp_path, NULL) == HALO_ERR_INVALID_ARG, "NULL matrix written");

  /* NULL-safe helpers. */
  halo_csr_free(NULL);
  CHECK(halo_csr_nnz(NULL) == 0, "halo_csr_nnz(NULL) != 0");
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s DIR (tests/data/mm)\n", argv[0]);
    return 1;
  }
  data_dir = argv[1];
  snprintf(tmp_path, sizeof tmp_path, "/tmp/halo_test_mmio_%ld.mtx", (long)getpid());
  int bad = test_malformed();
  if (!bad) bad = test_valid();
  if (!bad) bad = test_generated();
  if (!bad) bad = test_round_trip();
  remove(tmp_path);
  if (!bad) printf("test_mmio: all checks passed\n");
  return bad;
}
