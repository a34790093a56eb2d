/* Settings: every environment variable the library reads maps to a plan
 * option, is checked (a malformed value fails on every rank with a message
 * that names the variable and what it takes), gives way to an option the
 * caller sets, shows in halo_plan_options_resolve, and must agree across
 * ranks (a value on one rank only fails on every rank, naming the option and
 * the variable). */
#define _POSIX_C_SOURCE 200809L
#include "verify.h"

typedef struct {
  const char *env;  /* the variable */
  const char *good; /* a value it takes */
  const char *bad;  /* one it refuses */
  const char *want; /* what the refusal says */
} setting;

static const setting settings[] = {
    {"HALO_RANKS_PER_NODE", "2", "0", "HALO_RANKS_PER_NODE='0' (option ranks_per_node): expected 1 or more"},
    {"HALO_GPU_AWARE_MPI", "0", "yes", "HALO_GPU_AWARE_MPI='yes' (option gpu_aware_mpi): expected 0 or 1"},
    {"HALO_LOCAL_KERNEL", "cusparse", "fast", "HALO_LOCAL_KERNEL='fast' (option local_kernel): expected halo or cusparse"},
    {"HALO_CUSPARSE_ALG", "1", "3", "HALO_CUSPARSE_ALG='3' (option cusparse_alg): expected 1 or 2"},
    {"HALO_SPMV_GROUP", "8", "6", "HALO_SPMV_GROUP='6' (option spmv_group): expected 0 to 32, a power of 2 or 0"},
    {"HALO_SPMV_UNROLL", "2", "3", "HALO_SPMV_UNROLL='3' (option spmv_unroll): expected 1 to 4, a power of 2"},
    {"HALO_SPMV_MAX_BLOCKS", "64", "-5", "HALO_SPMV_MAX_BLOCKS='-5' (option spmv_max_blocks): expected 0 or more"},
    {"HALO_SPMV_CARVEOUT", "50", "101", "HALO_SPMV_CARVEOUT='101' (option spmv_carveout): expected 0 to 100"},
    {"HALO_SPMV_LONG_ROW", "4096", "-3", "HALO_SPMV_LONG_ROW='-3' (option spmv_long_row): expected 0 or more"},
    {"HALO_SPMV_PRODUCT_FIRST", "0", "2x", "HALO_SPMV_PRODUCT_FIRST='2x' (option product_first): expected 0 or 1"},
    {"HALO_COMPUTE_STREAM", "nonblocking", "async", "HALO_COMPUTE_STREAM='async' (option compute_stream): expected blocking or nonblocking"},
    {"HALO_TIMELINE", "1", "on", "HALO_TIMELINE='on' (option timeline): expected 0 or 1"},
    {"HALO_EXEC_TIMING", "1", "-1", "HALO_EXEC_TIMING='-1' (option copy_timing): expected 0 or 1"},
    {"HALO_IPC_SIGNAL", "host", "gpu", "HALO_IPC_SIGNAL='gpu' (option ipc_signal): expected host, device or auto"},
    {"HALO_AUTOTUNE", "model", "fast", "HALO_AUTOTUNE='fast' (option autotune): expected model or a number, 0 to 1000000"},
    {"HALO_DEBUG_MAX_COUNT", "7", "0", "HALO_DEBUG_MAX_COUNT='0' (option max_message_count): expected 1 or more"},
};

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank, P;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &P);
  halo_gen g;
  halo_csr rows;
  int64_t *rb;
  CHECK_OK(halo_gen_parse("lap2d:10", &g));
  CHECK_OK(halo_gen_distributed(comm, &g, HALO_PARTITION_ROWS, NULL, &rb, &rows));
  const int64_t b = rb[rank], e = rb[rank + 1];
  halo_matrix A;
  halo_plan plan;
  CHECK_OK(halo_matrix_create_csr(comm, b, e, b, e, rows.row_ptr, rows.col_ids, rows.values,
                                  HALO_MEMORY_HOST, &A));
  const halo_plan_options d = halo_plan_options_default();
  halo_plan_options r;
  /* the defaults, resolved */
  CHECK_OK(halo_plan_options_resolve(&d, &r));
  CHECK(r.max_exchanges == 1 && r.reverse == 1 && r.local_kernel == HALO_LOCAL_KERNEL_HALO);
  CHECK(r.cusparse_alg == 2 && r.spmv_group == 0 && r.spmv_unroll == 4 && r.spmv_max_blocks == 0);
  CHECK(r.spmv_carveout == -1 && r.product_first == 1 && r.compute_stream == 0);
  CHECK(r.spmv_long_row == 0);
  CHECK(r.timeline == 0 && r.copy_timing == 0 && r.max_message_count == INT32_MAX);
  CHECK(r.ipc_signal == 2);
  CHECK(r.gpu_aware_mpi == -1 && r.params == NULL && r.ranks_per_node == 0);
  CHECK(r.strategy == HALO_STRATEGY_AUTO && r.autotune == HALO_AUTOTUNE_CLOSE);
  for (int i = 0; i < (int)(sizeof settings / sizeof settings[0]); i++) {
    const setting *s = &settings[i];
    /* refused on every rank, with its message */
    setenv(s->env, s->bad, 1);
    CHECK_ERR(halo_plan_create(A, NULL, &plan), HALO_ERR_INVALID_ARG, s->want);
    CHECK_ERR(halo_plan_options_resolve(&d, &r), HALO_ERR_INVALID_ARG, s->want);
    /* a good value is taken, and a plan made with it */
    setenv(s->env, s->good, 1);
    CHECK_OK(halo_plan_options_resolve(&d, &r));
    CHECK_OK(halo_plan_create(A, NULL, &plan));
    halo_plan_destroy(&plan);
    /* on one rank only: every rank fails, naming the option and the variable */
    if (P > 1) {
      if (rank == P - 1) unsetenv(s->env);
      char want[160];
      snprintf(want, sizeof want, "on others (the option, or %s)", s->env);
      CHECK_ERR(halo_plan_create(A, NULL, &plan), HALO_ERR_INCONSISTENT, want);
    }
    unsetenv(s->env);
  }
  /* what the variables give shows in the resolved options */
  setenv("HALO_SPMV_UNROLL", "2", 1);
  setenv("HALO_LOCAL_KERNEL", "cusparse", 1);
  setenv("HALO_COMPUTE_STREAM", "nonblocking", 1);
  setenv("HALO_PARAMS", "lassen", 1);
  setenv("HALO_AUTOTUNE", "7", 1);
  CHECK_OK(halo_plan_options_resolve(&d, &r));
  CHECK(r.autotune == 7);
  unsetenv("HALO_AUTOTUNE");
  CHECK(r.spmv_unroll == 2 && r.local_kernel == HALO_LOCAL_KERNEL_CUSPARSE && r.compute_stream == 1);
  CHECK(strcmp(r.params, "lassen") == 0);
  /* an option the caller sets wins over its variable, even a bad one */
  setenv("HALO_SPMV_GROUP", "6", 1);
  halo_plan_options o = d;
  o.spmv_group = 4;
  CHECK_OK(halo_plan_options_resolve(&o, &r));
  CHECK(r.spmv_group == 4);
  CHECK_OK(halo_plan_create(A, &o, &plan));
  halo_plan_destroy(&plan);
  unsetenv("HALO_SPMV_GROUP");
  unsetenv("HALO_SPMV_UNROLL");
  unsetenv("HALO_LOCAL_KERNEL");
  unsetenv("HALO_COMPUTE_STREAM");
  unsetenv("HALO_PARAMS");
  /* white space around a value is not part of it (issue 44 item 6: trailing white space was
   * refused while leading was taken) */
  setenv("HALO_SPMV_GROUP", " 8 ", 1);
  setenv("HALO_AUTOTUNE", "model\t", 1);
  setenv("HALO_TRANSPORT", "  rma \n", 1);
  CHECK_OK(halo_plan_options_resolve(&d, &r));
  CHECK(r.spmv_group == 8 && r.autotune == 0 && r.transport == HALO_TRANSPORT_RMA);
  unsetenv("HALO_SPMV_GROUP");
  unsetenv("HALO_AUTOTUNE");
  /* a transport of the other memory from HALO_TRANSPORT: the message names the variable */
  setenv("HALO_TRANSPORT", "nccl", 1);
  CHECK_ERR(halo_plan_create(A, NULL, &plan), HALO_ERR_INVALID_ARG,
            "HALO_TRANSPORT=nccl: transport nccl needs device memory");
  unsetenv("HALO_TRANSPORT");
  /* bad options, named */
  o = d;
  o.spmv_group = 12;
  CHECK_ERR(halo_plan_create(A, &o, &plan), HALO_ERR_INVALID_ARG,
            "option spmv_group = 12: expected 0 to 32, a power of 2 or 0");
  o = d;
  o.max_exchanges = 0;
  CHECK_ERR(halo_plan_create(A, &o, &plan), HALO_ERR_INVALID_ARG,
            "option max_exchanges = 0: expected 1 to 64");
  o = d;
  o.reverse = 2;
  CHECK_ERR(halo_plan_create(A, &o, &plan), HALO_ERR_INVALID_ARG, "option reverse = 2");
  o = d;
  o.local_kernel = (halo_local_kernel)5;
  CHECK_ERR(halo_plan_create(A, &o, &plan), HALO_ERR_INVALID_ARG, "option local_kernel = 5");
  /* params: another set on one rank */
  if (P > 1) {
    o = d;
    o.params = rank == 0 ? "lassen" : "/nonexistent/params.txt";
    /* the same message on every rank: rank 0's set and the first other one */
    CHECK_ERR(halo_plan_create(A, &o, &plan), HALO_ERR_INCONSISTENT,
              "params is 'lassen' on rank 0 and '/nonexistent/params.txt' on rank 1 (the option, "
              "or HALO_PARAMS)");
    /* values as a user gives them: names, and autotune's default as a word */
    o = d;
    o.autotune = rank == 0 ? -1 : 5;
    CHECK_ERR(halo_plan_create(A, &o, &plan), HALO_ERR_INCONSISTENT,
              "autotune is 'close' (the default: time the candidates the model cannot tell "
              "apart) on some ranks and 5 on others (the option, or HALO_AUTOTUNE)");
    o = d;
    o.strategy = rank == 0 ? HALO_STRATEGY_STANDARD : HALO_STRATEGY_3STEP;
    CHECK_ERR(halo_plan_create(A, &o, &plan), HALO_ERR_INCONSISTENT,
              "strategy is standard on some ranks and 3step on others");
  }
  halo_matrix_destroy(&A);
  halo_csr_free(&rows);
  halo_io_free(rb);
  MPI_Finalize();
  return 0;
}
