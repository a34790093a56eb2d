/* halo spmv: load or generate a matrix, plan its halo exchange with each
 * strategy asked for, time the product and the exchange, check that every
 * strategy gives bit for bit the ghosts and the product of the standard
 * exchange, optionally check the product against a serial reference, print
 * a table and write JSON. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

static void usage(void) {
  printf("usage: mpirun -n P halo spmv (--matrix FILE | --gen SPEC) [options]\n"
         "\n"
         "Distributed y = A*x with halo's planned exchange, for each strategy: the time\n"
         "per product and per exchange (for each rank the average over the iterations,\n"
         "then the maximum over ranks), the messages and bytes of every phase, whether\n"
         "the ghosts and y are bit for bit those of the standard exchange, and\n"
         "optionally a check against a serial product on rank 0.\n"
         "\n"
         "input (one of):\n"
         "  --matrix FILE          Matrix Market file (coordinate; real, integer or pattern;\n"
         "                         general, symmetric or skew-symmetric), read on rank 0\n"
         "  --gen SPEC             generated matrix, made in parallel:\n"
         "                           lap2d:N           2-D 5-point Laplacian, N^2 rows\n"
         "                           lap3d:N           3-D 7-point Laplacian, N^3 rows\n"
         "                           lap3d27:N         3-D 27-point Laplacian, N^3 rows\n"
         "                           irregular:N,SEED  random N-row matrix with dense rows and\n"
         "                                             columns (SEED defaults to 1)\n"
         "options:\n"
         "  --partition rows|nnz   contiguous rows balanced by count or by entries [rows]\n"
         "  --strategy NAME        standard, 2step, 3step, split, or all [all]\n"
         "  --ranks-per-node K     virtual nodes of K consecutive ranks [0: the nodes of MPI,\n"
         "                         or HALO_RANKS_PER_NODE when set]\n"
         "  --message-cap B        largest inter-node message of split, in bytes [16384]\n"
         "  --no-dedup             send a value needed by several ranks of a node once per\n"
         "                         rank (default: once per node)\n"
         "  --iterations N         timed products (and exchanges) [100]\n"
         "  --warmup N             untimed products first [10]\n"
         "  --check                compare y with a serial product on rank 0\n"
         "  --tol X                largest accepted error of --check [1e-12]; the error of\n"
         "                         row i is |y_i - ref_i| / sum_j |a_ij x_j|\n"
         "  --sum-duplicates       sum repeated entries of the file (default: reject it)\n"
         "  --json FILE            write the report as JSON\n"
         "  --quiet                print nothing but errors\n"
         "  --help                 this text\n"
         "\n"
         "exit status: 0 ok, 1 error, 2 bad command line, 3 a check failed (--tol, or a\n"
         "strategy that differs from standard)\n");
}

/* Time iters calls of one kind; the per-rank average, max over ranks. */
static halo_status time_loop(MPI_Comm comm, halo_plan plan, int exchange_only, int64_t iters,
                             const double *x, double *y, double *t_p) {
  halo_status st = HALO_SUCCESS;
  MPI_Barrier(comm);
  double t0 = MPI_Wtime();
  for (int64_t it = 0; it < iters && st == HALO_SUCCESS; it++) {
    if (exchange_only) {
      st = halo_exchange_begin(plan, x, NULL);
      if (st == HALO_SUCCESS) st = halo_exchange_end(plan);
    } else {
      st = halo_spmv(plan, 1.0, x, 0.0, y);
    }
  }
  double t = iters > 0 ? (MPI_Wtime() - t0) / (double)iters : 0.0;
  MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, comm);
  *t_p = t;
  return st;
}

/* Ghosts (into g) and y = A*x (into y, first set to NaN) of one plan. */
static halo_status ghosts_and_product(halo_plan plan, const double *x, double *g, double *y,
                                      int64_t n_rows) {
  halo_status st = halo_exchange_begin(plan, x, g);
  if (st == HALO_SUCCESS) st = halo_exchange_end(plan);
  for (int64_t i = 0; i < n_rows; i++) y[i] = NAN; /* every entry must be written */
  if (st == HALO_SUCCESS) st = halo_spmv(plan, 1.0, x, 0.0, y);
  return st;
}

int cmd_spmv(int argc, char **argv, MPI_Comm comm) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  input_opts in = {NULL, NULL, HALO_PARTITION_ROWS, 0};
  halo_plan_options opts = halo_plan_options_default();
  const char *json_path = NULL, *strategy_name = "all";
  int64_t iters = 100, warmup = 10, v;
  int check = 0, quiet = 0;
  double tol = 1e-12;
  args_t a = {argc, 1, argv, "spmv", NULL, rank};
  for (; a.i < argc; a.i++) {
    int m;
    if (args_flag(&a, "--help") || args_flag(&a, "-h")) {
      if (rank == 0) usage();
      return EXIT_OK;
    } else if ((m = args_take(&a, "--matrix"))) {
      if (m < 0) return EXIT_USAGE;
      in.matrix_path = a.value;
    } else if ((m = args_take(&a, "--gen"))) {
      if (m < 0) return EXIT_USAGE;
      in.gen_spec = a.value;
    } else if ((m = args_take(&a, "--partition"))) {
      if (m < 0) return EXIT_USAGE;
      if (halo_partition_from_name(a.value, &in.partition) != HALO_SUCCESS) {
        driver_error(rank, "spmv", "%s", halo_last_error());
        return EXIT_USAGE;
      }
    } else if ((m = args_take(&a, "--strategy"))) {
      if (m < 0) return EXIT_USAGE;
      strategy_name = a.value;
    } else if ((m = args_take(&a, "--ranks-per-node"))) {
      if (m < 0 || !args_int(&a, "--ranks-per-node", 0, 1 << 30, &v)) return EXIT_USAGE;
      opts.ranks_per_node = (int)v;
    } else if ((m = args_take(&a, "--message-cap"))) {
      if (m < 0 || !args_int(&a, "--message-cap", 8, INT64_C(1) << 40, &v)) return EXIT_USAGE;
      opts.message_cap = v;
    } else if ((m = args_take(&a, "--iterations"))) {
      if (m < 0 || !args_int(&a, "--iterations", 0, 1000000000, &iters)) return EXIT_USAGE;
    } else if ((m = args_take(&a, "--warmup"))) {
      if (m < 0 || !args_int(&a, "--warmup", 0, 1000000000, &warmup)) return EXIT_USAGE;
    } else if ((m = args_take(&a, "--tol"))) {
      if (m < 0 || !args_double(&a, "--tol", 0.0, &tol)) return EXIT_USAGE;
    } else if ((m = args_take(&a, "--json"))) {
      if (m < 0) return EXIT_USAGE;
      json_path = a.value;
    } else if (args_flag(&a, "--no-dedup")) {
      opts.remove_duplicates = 0;
    } else if (args_flag(&a, "--check")) {
      check = 1;
    } else if (args_flag(&a, "--sum-duplicates")) {
      in.sum_duplicates = 1;
    } else if (args_flag(&a, "--quiet")) {
      quiet = 1;
    } else {
      driver_error(rank, "spmv", "unknown option '%s' (see halo spmv --help)", argv[a.i]);
      return EXIT_USAGE;
    }
  }
  if (!!in.matrix_path == !!in.gen_spec) {
    driver_error(rank, "spmv", "give one of --matrix FILE or --gen SPEC (see halo spmv --help)");
    return EXIT_USAGE;
  }
  halo_strategy strategies[HALO_N_STRATEGIES];
  int n_strategies;
  if (!parse_strategies(&a, strategy_name, strategies, &n_strategies)) return EXIT_USAGE;

  int code = EXIT_OK;
  input_matrix M;
  halo_matrix A = NULL;
  halo_plan std_plan = NULL;
  double *x = NULL, *y = NULL, *g = NULL, *y_std = NULL, *g_std = NULL;
  report_row rows[HALO_N_STRATEGIES];
  report rep = {.command = "spmv",
                .M = &M,
                .ranks = size,
                .in = &in,
                .opts = &opts,
                .iterations = iters,
                .warmup = warmup,
                .checked = check,
                .tol = tol,
                .rows = rows};
  int64_t n_ghost = 0;
  double t0 = MPI_Wtime();
  halo_status st = input_load(comm, &in, check, &M);
  rep.t_load = MPI_Wtime() - t0;
  if (st != HALO_SUCCESS) {
    driver_error(rank, "spmv", "%s", halo_last_error());
    return EXIT_ERROR;
  }
  const int64_t rb = M.row_begin[rank], re = M.row_begin[rank + 1], n_rows = re - rb;
  const int64_t cb = M.col_begin[rank], ce = M.col_begin[rank + 1];
  t0 = MPI_Wtime();
  st = halo_matrix_create_csr(comm, rb, re, cb, ce, M.local.row_ptr, M.local.col_ids,
                              M.local.values, HALO_MEMORY_HOST, &A);
  rep.t_matrix = MPI_Wtime() - t0;
  double times[2] = {rep.t_load, rep.t_matrix};
  MPI_Allreduce(MPI_IN_PLACE, times, 2, MPI_DOUBLE, MPI_MAX, comm);
  rep.t_load = times[0], rep.t_matrix = times[1];
  if (st != HALO_SUCCESS) goto done;
  halo_matrix_get_local_sizes(A, NULL, NULL, &n_ghost);
  x = malloc((size_t)(ce - cb + 1) * sizeof *x);
  y = malloc((size_t)(n_rows + 1) * sizeof *y);
  y_std = malloc((size_t)(n_rows + 1) * sizeof *y_std);
  g = malloc((size_t)(n_ghost + 1) * sizeof *g);
  g_std = malloc((size_t)(n_ghost + 1) * sizeof *g_std);
  if (!x || !y || !y_std || !g || !g_std) {
    st = HALO_ERR_OUT_OF_MEMORY;
    goto done;
  }
  for (int64_t j = cb; j < ce; j++) x[j - cb] = input_x(j);

  /* the standard exchange's ghosts and product: the reference of the others */
  {
    halo_plan_options o = opts;
    o.strategy = HALO_STRATEGY_STANDARD;
    if ((st = halo_plan_create(A, &o, &std_plan)) != HALO_SUCCESS) goto done;
    if ((st = ghosts_and_product(std_plan, x, g_std, y_std, n_rows)) != HALO_SUCCESS) goto done;
  }
  if (check) {
    if ((st = check_spmv(comm, &M, y_std, &rep.check_err)) != HALO_SUCCESS) goto done;
    if (!(rep.check_err <= tol)) code = EXIT_CHECK;
  }
  for (int s = 0; s < n_strategies; s++) {
    report_row *r = &rows[rep.n_rows];
    halo_plan plan = NULL;
    halo_plan_options o = opts;
    o.strategy = strategies[s];
    memset(r, 0, sizeof *r);
    r->strategy = strategies[s];
    r->timed = 1;
    if ((st = halo_plan_create(A, &o, &plan)) != HALO_SUCCESS) goto done;
    halo_plan_stats(plan, &r->stats);
    st = ghosts_and_product(plan, x, g, y, n_rows);
    if (st == HALO_SUCCESS) {
      int same = (n_ghost == 0 || memcmp(g, g_std, (size_t)n_ghost * sizeof *g) == 0) &&
                 (n_rows == 0 || memcmp(y, y_std, (size_t)n_rows * sizeof *y) == 0);
      MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_MIN, comm);
      r->compared = 1;
      r->identical = same;
      if (!same) code = EXIT_CHECK;
    }
    if (st == HALO_SUCCESS) st = time_loop(comm, plan, 0, warmup, x, y, &r->t_spmv);
    if (st == HALO_SUCCESS) st = time_loop(comm, plan, 0, iters, x, y, &r->t_spmv);
    if (st == HALO_SUCCESS) st = time_loop(comm, plan, 1, iters, x, y, &r->t_exchange);
    halo_plan_destroy(&plan);
    if (st != HALO_SUCCESS) goto done;
    rep.n_rows++;
  }
  if (rank == 0 && !quiet) report_print(&rep);
  if (json_path && rank == 0) {
    FILE *f = fopen(json_path, "w");
    if (!f) {
      driver_error(rank, "spmv", "cannot write %s", json_path);
      code = EXIT_ERROR;
    } else {
      report_json(f, &rep);
      fclose(f);
    }
  }
  if (code == EXIT_CHECK && rank == 0) {
    if (check && !(rep.check_err <= tol))
      fprintf(stderr, "halo spmv: check failed: error %.3e above --tol %.1e\n", rep.check_err, tol);
    for (int i = 0; i < rep.n_rows; i++)
      if (!rows[i].identical)
        fprintf(stderr, "halo spmv: %s differs from the standard exchange\n",
                halo_strategy_name(rows[i].strategy));
  }
done:
  if (st != HALO_SUCCESS) {
    driver_error(rank, "spmv", "%s",
                 halo_last_error()[0] ? halo_last_error() : halo_status_string(st));
    code = EXIT_ERROR;
  }
  free(g_std), free(g), free(y_std), free(y), free(x);
  halo_plan_destroy(&std_plan);
  halo_matrix_destroy(&A);
  input_free(&M);
  MPI_Bcast(&code, 1, MPI_INT, 0, comm);
  return code;
}
