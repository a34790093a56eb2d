/* Unit tests of the core: status codes and messages, names, sorting, range
 * search, partitions, generators. No MPI communication. */
#include "halo/io.h"
#include "halo_impl.h"
#include "test_util.h"

static void test_status(void) {
  const halo_status codes[] = {
      HALO_SUCCESS,         HALO_ERR_INVALID_ARG, HALO_ERR_OUT_OF_MEMORY, HALO_ERR_MPI,
      HALO_ERR_IO,          HALO_ERR_FORMAT,      HALO_ERR_INCONSISTENT,  HALO_ERR_NOT_COMPILED,
      HALO_ERR_UNSUPPORTED, HALO_ERR_STATE,       HALO_ERR_INTERNAL,      HALO_ERR_CUDA,
      HALO_ERR_CUSPARSE,    HALO_ERR_NCCL,        HALO_ERR_OUT_OF_RANGE,  HALO_ERR_TIMEOUT};
  const int n = (int)(sizeof codes / sizeof codes[0]);
  /* stable numeric values */
  CHECK(HALO_SUCCESS == 0 && HALO_ERR_INVALID_ARG == -1 && HALO_ERR_STATE == -9 &&
        HALO_ERR_OUT_OF_RANGE == -14 && HALO_ERR_TIMEOUT == -15);
  for (int i = 0; i < n; i++) {
    CHECK(strcmp(halo_status_string(codes[i]), "unknown status") != 0);
    for (int j = 0; j < i; j++)
      CHECK(strcmp(halo_status_string(codes[i]), halo_status_string(codes[j])) != 0);
  }
  CHECK(strcmp(halo_status_string((halo_status)-999), "unknown status") == 0);
  halo_error_clear();
  CHECK(halo_last_error()[0] == '\0');
  CHECK(HALO_ERROR(HALO_ERR_FORMAT, "line %d: bad", 7) == HALO_ERR_FORMAT);
  CHECK(strcmp(halo_last_error(), "line 7: bad") == 0);
  /* library failures carry their place */
  CHECK(HALO_ERROR(HALO_ERR_INTERNAL, "oops") == HALO_ERR_INTERNAL);
  CHECK(strstr(halo_last_error(), "oops [test_core.c:") != NULL);
  /* a long message is cut, not overflowed */
  char big[3000];
  memset(big, 'a', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  HALO_ERROR(HALO_ERR_IO, "%s", big);
  CHECK(strlen(halo_last_error()) == HALO_ERROR_LEN - 1);
  CHECK(strcmp(halo_version(), HALO_VERSION_STRING) == 0);
}

static void test_names(void) {
  halo_strategy s;
  halo_memory m;
  CHECK_OK(halo_strategy_from_name("standard", &s));
  CHECK(s == HALO_STRATEGY_STANDARD);
  CHECK(strcmp(halo_strategy_name(HALO_STRATEGY_STANDARD), "standard") == 0);
  CHECK_ERR(halo_strategy_from_name("bogus", &s), HALO_ERR_INVALID_ARG,
            "unknown strategy 'bogus' (known: standard");
  CHECK_ERR(halo_strategy_from_name(NULL, &s), HALO_ERR_INVALID_ARG, "NULL");
  CHECK_OK(halo_memory_from_name("device", &m));
  CHECK(m == HALO_MEMORY_DEVICE);
  CHECK_ERR(halo_memory_from_name("gpu", &m), HALO_ERR_INVALID_ARG, "known: auto, host, device");
  CHECK(strcmp(halo_scope_name(HALO_SCOPE_NODE), "node") == 0);
  halo_plan_options o = halo_plan_options_default();
  CHECK(o.strategy == HALO_STRATEGY_AUTO);
}

static uint64_t rng_state = 12345;
static uint64_t rng(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static void test_sort(void) {
  const int64_t sizes[] = {0, 1, 2, 63, 64, 65, 1000, 100003};
  for (int t = 0; t < (int)(sizeof sizes / sizeof sizes[0]); t++) {
    int64_t n = sizes[t];
    int64_t *a = malloc((size_t)(n + 1) * sizeof *a), *b = malloc((size_t)(n + 1) * sizeof *b);
    int64_t *v = malloc((size_t)(n + 1) * sizeof *v);
    for (int64_t i = 0; i < n; i++) {
      /* small and large keys, with repeats */
      a[i] = (t % 2) ? (int64_t)(rng() % 100) : (int64_t)(rng() >> 2);
      b[i] = a[i];
      v[i] = i;
    }
    qsort(b, (size_t)n, sizeof *b, cmp_i64);
    CHECK_OK(halo_sort_i64_pairs(a, v, n));
    for (int64_t i = 0; i < n; i++) CHECK(a[i] == b[i]);
    /* stable: equal keys keep their original order */
    for (int64_t i = 1; i < n; i++) CHECK(a[i - 1] < a[i] || v[i - 1] < v[i]);
    free(a), free(b), free(v);
  }
  int64_t neg[70];
  for (int i = 0; i < 70; i++) neg[i] = 70 - i;
  neg[5] = -1;
  CHECK_ERR(halo_sort_i64(neg, 70), HALO_ERR_INTERNAL, "negative");
}

static void test_find_range(void) {
  /* ranks 1 and 3 own nothing */
  const int64_t r[] = {0, 4, 4, 9, 9, 12};
  const int expect[] = {0, 0, 0, 0, 2, 2, 2, 2, 2, 4, 4, 4};
  for (int64_t x = 0; x < 12; x++) CHECK(halo_find_range(r, 5, x) == expect[x]);
  CHECK(halo_find_range(r, 5, -1) == -1);
  CHECK(halo_find_range(r, 5, 12) == -1);
  const int64_t e[] = {0, 0, 0};
  CHECK(halo_find_range(e, 2, 0) == -1);
}

static void test_partitions(void) {
  int64_t rb[9];
  CHECK_OK(halo_partition_rows(10, 4, rb));
  const int64_t want[] = {0, 2, 5, 7, 10};
  for (int r = 0; r <= 4; r++) CHECK(rb[r] == want[r]);
  CHECK_OK(halo_partition_rows(3, 8, rb)); /* more ranks than rows */
  CHECK(rb[0] == 0 && rb[8] == 3);
  for (int r = 0; r < 8; r++) CHECK(rb[r] <= rb[r + 1]);
  CHECK_ERR(halo_partition_rows(10, 0, rb), HALO_ERR_INVALID_ARG, "partition");
  /* by entries: one dense row of 100 and 10 rows of 1 */
  int64_t ptr[12];
  ptr[0] = 0;
  ptr[1] = 100;
  for (int i = 2; i <= 11; i++) ptr[i] = ptr[i - 1] + 1;
  CHECK_OK(halo_partition_nnz(11, ptr, 4, rb));
  CHECK(rb[0] == 0 && rb[4] == 11);
  for (int r = 0; r < 4; r++) CHECK(rb[r] <= rb[r + 1]);
  CHECK(rb[1] == 1); /* the dense row alone on rank 0 */
  /* every row's first entry lies in its rank's share */
  for (int r = 0; r < 4; r++)
    for (int64_t i = rb[r]; i < rb[r + 1]; i++) CHECK(ptr[i] * 4 >= r * ptr[11] || i == rb[r]);
  halo_partition_kind k;
  CHECK_OK(halo_partition_from_name("nnz", &k));
  CHECK(k == HALO_PARTITION_NNZ);
  CHECK_ERR(halo_partition_from_name("scotch", &k), HALO_ERR_INVALID_ARG,
            "known: rows, nnz, metis");
}

/* Structure of a generated matrix: sorted unique columns in range, the
 * values a Laplacian has, row counts equal to halo_gen_row_ptr. */
static void check_gen(const char *spec, int64_t want_rows, double diag, int symmetric) {
  halo_gen g;
  halo_csr A;
  int64_t N, M;
  CHECK_OK(halo_gen_parse(spec, &g));
  CHECK_OK(halo_gen_size(&g, &N, &M));
  CHECK(N == want_rows && M == N);
  CHECK_OK(halo_gen_rows(&g, 0, N, &A));
  int64_t *ptr = malloc((size_t)(N + 1) * sizeof *ptr);
  CHECK_OK(halo_gen_row_ptr(&g, 0, N, ptr));
  for (int64_t i = 0; i <= N; i++) CHECK(ptr[i] == A.row_ptr[i]);
  for (int64_t i = 0; i < N; i++) {
    int has_diag = 0;
    double sum = 0.0;
    for (int64_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; k++) {
      CHECK(A.col_ids[k] >= 0 && A.col_ids[k] < N);
      if (k > A.row_ptr[i]) CHECK(A.col_ids[k] > A.col_ids[k - 1]);
      if (A.col_ids[k] == i) {
        has_diag = 1;
        if (diag > 0) CHECK(A.values[k] == diag);
      } else if (diag > 0)
        CHECK(A.values[k] == -1.0);
      sum += A.col_ids[k] == i ? A.values[k] : -fabs(A.values[k]);
    }
    CHECK(has_diag);
    CHECK(sum >= 0.0); /* diagonally dominant */
  }
  if (symmetric) { /* a(i,j) present iff a(j,i) present */
    for (int64_t i = 0; i < N; i++)
      for (int64_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; k++) {
        int64_t j = A.col_ids[k], found = 0;
        for (int64_t q = A.row_ptr[j]; q < A.row_ptr[j + 1]; q++) found |= A.col_ids[q] == i;
        CHECK(found);
      }
  }
  /* a middle slice equals the same rows of the whole */
  halo_csr S;
  CHECK_OK(halo_gen_rows(&g, N / 3, N / 2, &S));
  for (int64_t i = 0; i < S.row_end - S.row_begin; i++) {
    int64_t a = A.row_ptr[N / 3 + i];
    CHECK(S.row_ptr[i + 1] - S.row_ptr[i] == A.row_ptr[N / 3 + i + 1] - a);
    for (int64_t k = S.row_ptr[i]; k < S.row_ptr[i + 1]; k++) {
      CHECK(S.col_ids[k] == A.col_ids[a + k - S.row_ptr[i]]);
      CHECK(S.values[k] == A.values[a + k - S.row_ptr[i]]);
    }
  }
  halo_csr_free(&S);
  free(ptr);
  halo_csr_free(&A);
}

static void test_generators(void) {
  check_gen("lap2d:7", 49, 4.0, 1);
  check_gen("lap3d:5", 125, 6.0, 1);
  check_gen("lap3d27:4", 64, 26.0, 1);
  check_gen("lap3d27:1", 1, 26.0, 1);
  check_gen("irregular:500,3", 500, 0.0, 0);
  check_gen("irregular:10", 10, 0.0, 0);
  /* entry counts: interior rows of the 27-point stencil have 27 */
  halo_gen g;
  CHECK_OK(halo_gen_parse("lap3d27:3", &g));
  int64_t ptr[28];
  CHECK_OK(halo_gen_row_ptr(&g, 0, 27, ptr));
  CHECK(ptr[14] - ptr[13] == 27 && ptr[1] - ptr[0] == 8);
  /* irregular: the dense rows are dense, the seed matters */
  halo_gen g1, g2;
  halo_csr A1, A2;
  CHECK_OK(halo_gen_parse("irregular:20000,1", &g1));
  CHECK_OK(halo_gen_parse("irregular:20000,2", &g2));
  CHECK_OK(halo_gen_rows(&g1, 0, 20000, &A1));
  CHECK_OK(halo_gen_rows(&g2, 0, 20000, &A2));
  int64_t longest = 0;
  for (int64_t i = 0; i < 20000; i++)
    if (A1.row_ptr[i + 1] - A1.row_ptr[i] > longest) longest = A1.row_ptr[i + 1] - A1.row_ptr[i];
  CHECK(longest > 300);
  CHECK(halo_csr_nnz(&A1) != halo_csr_nnz(&A2) ||
        memcmp(A1.col_ids, A2.col_ids, (size_t)halo_csr_nnz(&A1) * sizeof(int64_t)) != 0);
  halo_csr_free(&A1);
  halo_csr_free(&A2);
  /* bad specs */
  CHECK_ERR(halo_gen_parse("lap3d", &g), HALO_ERR_INVALID_ARG, "expected KIND:N");
  CHECK_ERR(halo_gen_parse("cube:4", &g), HALO_ERR_INVALID_ARG, "unknown kind");
  CHECK_ERR(halo_gen_parse("lap2d:0", &g), HALO_ERR_INVALID_ARG, "positive integer");
  CHECK_ERR(halo_gen_parse("lap2d:-3", &g), HALO_ERR_INVALID_ARG, "positive integer");
  CHECK_ERR(halo_gen_parse("lap2d:12x", &g), HALO_ERR_INVALID_ARG, "positive integer");
  CHECK_ERR(halo_gen_parse("lap3d:4,2", &g), HALO_ERR_INVALID_ARG, "only irregular");
  CHECK_ERR(halo_gen_parse("irregular:4,x", &g), HALO_ERR_INVALID_ARG, "SEED");
  CHECK_ERR(halo_gen_parse("lap3d:100000", &g), HALO_ERR_INVALID_ARG, "larger than");
  CHECK_ERR(halo_gen_parse("lap3d:99999999999999999999", &g), HALO_ERR_INVALID_ARG, "positive");
  halo_csr B;
  CHECK_ERR(halo_gen_rows(&g1, 5, 20001, &B), HALO_ERR_INVALID_ARG, "not rows");
}

static void test_alloc_counter(void) {
  int64_t before = halo_debug_alloc_count();
  double *p = NULL;
  CHECK_OK(HALO_ALLOC(p, 10));
  CHECK(halo_debug_alloc_count() == before + 1);
  halo_free(p);
  CHECK_OK(HALO_ALLOC(p, 0));
  CHECK(p == NULL && halo_debug_alloc_count() == before + 1);
  CHECK_ERR(halo_alloc_array((void **)&p, SIZE_MAX / 2, 8, 0), HALO_ERR_OUT_OF_MEMORY, "overflows");
}

/* Each transport's entry in the registry against what the build offers
 * (halo/config.h), its memory and what it needs; AUTO and unknown values
 * have none. */
static void test_transports(void) {
  static const struct {
    halo_transport t;
    const char *name;
    int compiled, host, device, own_gpu, aware;
  } want[] = {
      {HALO_TRANSPORT_HOST, "host", 1, 1, 0, 0, 0},
      {HALO_TRANSPORT_STAGED, "staged", HALO_HAVE_CUDA, 0, 1, 0, 0},
      {HALO_TRANSPORT_NCCL, "nccl", HALO_HAVE_NCCL, 0, 1, 1, 0},
      {HALO_TRANSPORT_MPI_DEVICE, "mpi-device", HALO_HAVE_CUDA, 0, 1, 0, 1},
      {HALO_TRANSPORT_IPC, "ipc", HALO_HAVE_CUDA, 0, 1, 0, 0},
      {HALO_TRANSPORT_RMA, "rma", 1, 1, 1, 0, 0},
      {HALO_TRANSPORT_NVSHMEM, "nvshmem", HALO_HAVE_NVSHMEM, 0, 1, 0, 0},
      {HALO_TRANSPORT_NEIGHBOR, "neighbor", HALO_HAVE_NEIGHBOR, 1, 0, 0, 0},
  };
  CHECK((int)(sizeof want / sizeof want[0]) == HALO_N_TRANSPORTS - 1); /* all but auto */
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    halo_transport_info info;
    halo_transport back;
    CHECK_OK(halo_transport_get_info(want[i].t, &info));
    CHECK_MSG(strcmp(info.name, want[i].name) == 0, "transport %d is '%s'", (int)want[i].t,
              info.name);
    CHECK_MSG(info.compiled == want[i].compiled, "%s: compiled %d, the build says %d", info.name,
              info.compiled, want[i].compiled);
    CHECK_MSG(info.host_memory == want[i].host && info.device_memory == want[i].device,
              "%s: memory", info.name);
    CHECK_MSG(info.needs_own_gpu == want[i].own_gpu && info.needs_gpu_aware_mpi == want[i].aware,
              "%s: needs", info.name);
    CHECK(info.summary && *info.summary);
    CHECK(strcmp(halo_transport_name(want[i].t), want[i].name) == 0);
    CHECK_OK(halo_transport_from_name(want[i].name, &back));
    CHECK(back == want[i].t);
  }
  halo_transport_info info;
  CHECK_ERR(halo_transport_get_info(HALO_TRANSPORT_AUTO, &info), HALO_ERR_INVALID_ARG,
            "transport auto is no transport of its own");
  CHECK_ERR(halo_transport_get_info((halo_transport)42, &info), HALO_ERR_INVALID_ARG,
            "no descriptor is registered");
  halo_transport t;
  CHECK_ERR(halo_transport_from_name("carrier-pigeon", &t), HALO_ERR_INVALID_ARG,
            "known: auto, host, staged, ipc, nccl, mpi-device, nvshmem, rma, neighbor");
}

int main(void) {
  test_status();
  test_transports();
  test_names();
  test_sort();
  test_find_range();
  test_partitions();
  test_generators();
  test_alloc_counter();
  return 0;
}
