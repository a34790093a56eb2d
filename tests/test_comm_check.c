/* Every public function that takes an MPI_Comm, called with MPI_COMM_NULL
 * and (2 ranks or more) with an intercommunicator: HALO_ERR_INVALID_ARG with
 * the message, on every rank, and no abort or hang. `test_comm_check --list`
 * prints the functions it covers; tests/comm_check_all.sh compares them with
 * the public headers, so that a new entry point cannot skip the check.
 * usage: test_comm_check [--list] */
#include <stdio.h>
#include <string.h>

#include "halo.h"
#include "halo/io.h"
#include "halo/model.h"
#include "test_util.h"

typedef halo_status (*call_fn)(MPI_Comm comm);

static int64_t dummy_i64[4] = {0, 0, 0, 0};
static int dummy_int[4] = {0, 0, 0, 0};
static double dummy_dbl[4] = {0, 0, 0, 0};

static halo_status c_node_info(MPI_Comm c) {
  halo_node_info info;
  return halo_comm_get_node_info(c, 0, &info);
}
static halo_status c_csr_distribute(MPI_Comm c) {
  halo_csr g = {0}, l;
  int64_t *rb = NULL, *n1 = NULL, *n2 = NULL;
  return halo_csr_distribute(c, 0, &g, HALO_PARTITION_ROWS, NULL, &rb, &n1, &n2, &l);
}
static halo_status c_csr_scatter(MPI_Comm c) {
  halo_csr g = {0}, l;
  return halo_csr_scatter(c, 0, &g, dummy_i64, &l);
}
static halo_status c_gen_distributed(MPI_Comm c) {
  halo_gen g;
  halo_csr l;
  int64_t *rb = NULL;
  CHECK_OK(halo_gen_parse("lap2d:4", &g));
  return halo_gen_distributed(c, &g, HALO_PARTITION_ROWS, NULL, &rb, &l);
}
static halo_status c_hcsr_read(MPI_Comm c) {
  halo_csr l;
  int64_t *rb = NULL;
  return halo_hcsr_read_distributed(c, 0, "x.hcsr", HALO_PARTITION_ROWS, NULL, &rb, &l, NULL);
}
static halo_status c_mm_read(MPI_Comm c) {
  halo_csr l;
  int64_t *rb = NULL;
  return halo_mm_read_distributed(c, 0, "x.mtx", NULL, HALO_PARTITION_ROWS, NULL, &rb, &l, NULL);
}
static halo_status c_matrix_csr(MPI_Comm c) {
  halo_matrix A = NULL;
  return halo_matrix_create_csr(c, 0, 0, 0, 0, dummy_i64, dummy_i64, dummy_dbl, HALO_MEMORY_HOST,
                                &A);
}
static halo_status c_matrix_split(MPI_Comm c) {
  halo_matrix A = NULL;
  return halo_matrix_create_split(c, 0, 0, 0, 0, dummy_i64, dummy_i64, dummy_dbl, dummy_i64,
                                  dummy_i64, dummy_dbl, 0, dummy_i64, HALO_MEMORY_HOST, &A);
}
static halo_status c_params_measure(MPI_Comm c) {
  halo_params_measure_options o = halo_params_measure_options_default();
  halo_params_measured m;
  return halo_params_measure(c, &o, &m);
}
static halo_status c_from_ids(MPI_Comm c) {
  halo_plan p = NULL;
  return halo_plan_create_from_ids(c, 0, 0, 0, dummy_i64, NULL, &p);
}
static halo_status c_from_lists(MPI_Comm c) {
  halo_plan p = NULL;
  return halo_plan_create_from_lists(c, 0, 0, dummy_int, dummy_i64, 0, dummy_int, dummy_i64,
                                     dummy_i64, NULL, &p);
}
static halo_status c_from_pairs(MPI_Comm c) {
  halo_plan p = NULL;
  return halo_plan_create_from_pairs(c, 0, 0, dummy_int, dummy_i64, NULL, &p);
}
static halo_status c_status_agree(MPI_Comm c) { return halo_status_agree(c, HALO_SUCCESS); }

static const struct {
  const char *name;
  call_fn fn;
} calls[] = {
    {"halo_comm_get_node_info", c_node_info},      {"halo_csr_distribute", c_csr_distribute},
    {"halo_csr_scatter", c_csr_scatter},           {"halo_gen_distributed", c_gen_distributed},
    {"halo_hcsr_read_distributed", c_hcsr_read},   {"halo_matrix_create_csr", c_matrix_csr},
    {"halo_matrix_create_split", c_matrix_split},  {"halo_mm_read_distributed", c_mm_read},
    {"halo_params_measure", c_params_measure},     {"halo_plan_create_from_ids", c_from_ids},
    {"halo_plan_create_from_lists", c_from_lists}, {"halo_plan_create_from_pairs", c_from_pairs},
    {"halo_status_agree", c_status_agree},
};
#define N_CALLS ((int)(sizeof calls / sizeof calls[0]))

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--list") == 0) { /* no MPI needed */
    for (int i = 0; i < N_CALLS; i++) printf("%s\n", calls[i].name);
    return 0;
  }
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm inter = MPI_COMM_NULL;
  if (size >= 2) { /* the even ranks and the odd ones */
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 7, &inter);
    MPI_Comm_free(&half);
  }
  for (int i = 0; i < N_CALLS; i++) {
    char what[128];
    snprintf(what, sizeof what, "%s(MPI_COMM_NULL)", calls[i].name);
    halo_status st = calls[i].fn(MPI_COMM_NULL);
    CHECK_MSG(st == HALO_ERR_INVALID_ARG && strstr(halo_last_error(), "MPI_COMM_NULL"),
              "%s returned %d: %s", what, (int)st, halo_last_error());
    if (inter == MPI_COMM_NULL) continue;
    st = calls[i].fn(inter);
    CHECK_MSG(st == HALO_ERR_INVALID_ARG && strstr(halo_last_error(), "is an intercommunicator"),
              "%s(an intercommunicator) returned %d: %s", calls[i].name, (int)st,
              halo_last_error());
  }
  if (inter != MPI_COMM_NULL) MPI_Comm_free(&inter);
  MPI_Finalize();
  return 0;
}
