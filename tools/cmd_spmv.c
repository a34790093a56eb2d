/* halo spmv: load or generate a matrix, plan its halo exchange with each
 * strategy asked for, time the product and the exchange, check the result
 * against a serial reference, print a table and write JSON. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "json.h"

static void usage(void) {
  printf("usage: mpirun -n P halo spmv (--matrix FILE | --gen SPEC) [options]\n"
         "\n"
         "Distributed y = A*x with halo's planned exchange: the time per product and per\n"
         "exchange (for each rank the average over the iterations, then the maximum over\n"
         "ranks), the messages and bytes of every phase, and optionally a check against a\n"
         "serial product on rank 0.\n"
         "\n"
         "input (one of):\n"
         "  --matrix FILE        Matrix Market file (coordinate; real, integer or pattern;\n"
         "                       general, symmetric or skew-symmetric), read on rank 0\n"
         "  --gen SPEC           generated matrix, made in parallel:\n"
         "                         lap2d:N           2-D 5-point Laplacian, N^2 rows\n"
         "                         lap3d:N           3-D 7-point Laplacian, N^3 rows\n"
         "                         lap3d27:N         3-D 27-point Laplacian, N^3 rows\n"
         "                         irregular:N,SEED  random N-row matrix with dense rows and\n"
         "                                           columns (SEED defaults to 1)\n"
         "options:\n"
         "  --partition rows|nnz contiguous rows balanced by count or by entries [rows]\n"
         "  --strategy NAME      standard, or all [all]\n"
         "  --iterations N       timed products (and exchanges) [100]\n"
         "  --warmup N           untimed products first [10]\n"
         "  --check              compare y with a serial product on rank 0\n"
         "  --tol X              largest accepted error of --check [1e-12]; the error of\n"
         "                       row i is |y_i - ref_i| / sum_j |a_ij x_j|\n"
         "  --sum-duplicates     sum repeated entries of the file (default: reject the file)\n"
         "  --json FILE          write the report as JSON\n"
         "  --quiet              print nothing but errors\n"
         "  --help               this text\n"
         "\n"
         "exit status: 0 ok, 1 error, 2 bad command line, 3 check above --tol\n");
}

typedef struct {
  halo_strategy strategy;
  halo_stats stats;
  double t_spmv, t_exchange; /* per call: max over ranks of the per-rank average */
  double check_err;
} result_t;

/* Times of the set-up before any plan: max over ranks. */
typedef struct {
  double load, matrix;
} setup_times;

static void write_json(FILE *f, const input_matrix *M, int size, const input_opts *in,
                       const setup_times *t, int64_t iters, int64_t warmup, int check, double tol,
                       const result_t *res, int n_res) {
  json_writer w;
  json_init(&w, f);
  json_begin_object(&w, NULL);
  json_string(&w, "command", "spmv");
  json_string(&w, "halo_version", halo_version());
  json_begin_object(&w, "matrix");
  json_string(&w, "name", M->name);
  json_string(&w, "source", M->is_gen ? "generated" : "file");
  json_int(&w, "rows", M->n_rows);
  json_int(&w, "cols", M->n_cols);
  json_int(&w, "nnz", M->nnz);
  json_end_object(&w);
  json_int(&w, "ranks", size);
  json_int(&w, "nodes", n_res ? res[0].stats.nodes : 0);
  json_string(&w, "partition", halo_partition_name(in->partition));
  json_begin_array(&w, "row_begin");
  for (int r = 0; r <= size; r++) json_int(&w, NULL, M->row_begin[r]);
  json_end_array(&w);
  json_double(&w, "load_s", t->load);
  json_double(&w, "matrix_s", t->matrix);
  json_int(&w, "iterations", iters);
  json_int(&w, "warmup", warmup);
  if (check) {
    double worst = 0.0;
    for (int i = 0; i < n_res; i++) worst = fmax(worst, res[i].check_err);
    json_begin_object(&w, "check");
    json_double(&w, "max_rel_error", worst);
    json_double(&w, "tol", tol);
    json_bool(&w, "passed", worst <= tol);
    json_end_object(&w);
  }
  json_begin_array(&w, "strategies");
  for (int i = 0; i < n_res; i++) {
    const halo_stats *s = &res[i].stats;
    json_begin_object(&w, NULL);
    json_string(&w, "name", halo_strategy_name(res[i].strategy));
    json_int(&w, "message_cap_used", s->message_cap_used);
    json_double(&w, "setup_s", s->setup_seconds);
    json_double(&w, "spmv_s", res[i].t_spmv);
    json_double(&w, "exchange_s", res[i].t_exchange);
    json_int(&w, "ghosts", s->ghosts);
    if (check) json_double(&w, "max_rel_error", res[i].check_err);
    json_begin_array(&w, "phases");
    for (int k = 0; k < s->n_phases; k++) {
      const halo_phase_stats *p = &s->phase[k];
      json_begin_object(&w, NULL);
      json_string(&w, "scope", halo_scope_name(p->scope));
      json_int(&w, "messages", p->messages);
      json_int(&w, "bytes", p->bytes);
      json_int(&w, "max_messages_per_rank", p->max_messages_per_rank);
      json_int(&w, "max_bytes_per_rank", p->max_bytes_per_rank);
      json_int(&w, "inter_node_messages", p->inter_node_messages);
      json_int(&w, "inter_node_bytes", p->inter_node_bytes);
      if (p->scope == HALO_SCOPE_GLOBAL) {
        json_int(&w, "max_inter_node_messages_per_node", p->max_inter_node_messages_per_node);
        json_int(&w, "max_inter_node_bytes_per_node", p->max_inter_node_bytes_per_node);
      }
      json_end_object(&w);
    }
    json_end_array(&w);
    json_end_object(&w);
  }
  json_end_array(&w);
  json_end_object(&w);
}

static void print_tables(const input_matrix *M, int size, const input_opts *in,
                         const setup_times *t, int64_t iters, const result_t *res, int n_res) {
  printf("halo spmv: %s: %lld x %lld, %lld entries; %d ranks on %d node%s; partition %s; "
         "%lld iterations\n",
         M->name, (long long)M->n_rows, (long long)M->n_cols, (long long)M->nnz, size,
         res[0].stats.nodes, res[0].stats.nodes == 1 ? "" : "s", halo_partition_name(in->partition),
         (long long)iters);
  printf("%s %.3f s, matrix split %.3f s\n\n",
         M->is_gen ? "generated in" : "read and distributed in", t->load, t->matrix);
  printf("%-10s %12s %12s %12s %10s %12s\n", "strategy", "SpMV (s)", "exchange (s)", "setup (s)",
         "messages", "bytes");
  for (int i = 0; i < n_res; i++) {
    const halo_stats *s = &res[i].stats;
    int64_t msgs = 0, bytes = 0;
    for (int k = 0; k < s->n_phases; k++) msgs += s->phase[k].messages, bytes += s->phase[k].bytes;
    printf("%-10s %12.3e %12.3e %12.3e %10lld %12lld\n", halo_strategy_name(res[i].strategy),
           res[i].t_spmv, res[i].t_exchange, s->setup_seconds, (long long)msgs, (long long)bytes);
  }
  printf("\n%-10s %5s %6s %9s %11s %9s %11s %10s %12s\n", "strategy", "phase", "scope", "messages",
         "bytes", "max msgs", "max bytes", "inter msgs", "inter bytes");
  printf("%-10s %5s %6s %9s %11s %9s %11s %10s %12s\n", "", "", "", "", "", "per rank", "per rank",
         "", "");
  for (int i = 0; i < n_res; i++) {
    const halo_stats *s = &res[i].stats;
    for (int k = 0; k < s->n_phases; k++) {
      const halo_phase_stats *p = &s->phase[k];
      printf("%-10s %5d %6s %9lld %11lld %9lld %11lld %10lld %12lld\n",
             halo_strategy_name(res[i].strategy), k, halo_scope_name(p->scope),
             (long long)p->messages, (long long)p->bytes, (long long)p->max_messages_per_rank,
             (long long)p->max_bytes_per_rank, (long long)p->inter_node_messages,
             (long long)p->inter_node_bytes);
    }
  }
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

int cmd_spmv(int argc, char **argv, MPI_Comm comm) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  input_opts in = {NULL, NULL, HALO_PARTITION_ROWS, 0};
  const char *json_path = NULL, *strategy_name = "all";
  int64_t iters = 100, warmup = 10;
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
    } else if ((m = args_take(&a, "--iterations"))) {
      if (m < 0 || !args_int(&a, "--iterations", 0, 1000000000, &iters)) return EXIT_USAGE;
    } else if ((m = args_take(&a, "--warmup"))) {
      if (m < 0 || !args_int(&a, "--warmup", 0, 1000000000, &warmup)) return EXIT_USAGE;
    } else if ((m = args_take(&a, "--tol"))) {
      if (m < 0 || !args_double(&a, "--tol", 0.0, &tol)) return EXIT_USAGE;
    } else if ((m = args_take(&a, "--json"))) {
      if (m < 0) return EXIT_USAGE;
      json_path = a.value;
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
  halo_strategy strategies[1];
  int n_strategies = 0;
  if (strcmp(strategy_name, "all") == 0) {
    strategies[n_strategies++] = HALO_STRATEGY_STANDARD;
  } else if (halo_strategy_from_name(strategy_name, &strategies[0]) == HALO_SUCCESS) {
    n_strategies = 1;
  } else {
    driver_error(rank, "spmv", "--strategy: %s, or all", halo_last_error());
    return EXIT_USAGE;
  }

  int code = EXIT_OK;
  input_matrix M;
  halo_matrix A = NULL;
  double *x = NULL, *y = NULL;
  result_t res[1];
  int n_res = 0;
  setup_times times;
  double t0 = MPI_Wtime();
  halo_status st = input_load(comm, &in, check, &M);
  times.load = MPI_Wtime() - t0;
  if (st != HALO_SUCCESS) {
    driver_error(rank, "spmv", "%s", halo_last_error());
    return EXIT_ERROR;
  }
  const int64_t rb = M.row_begin[rank], re = M.row_begin[rank + 1];
  const int64_t cb = M.col_begin[rank], ce = M.col_begin[rank + 1];
  t0 = MPI_Wtime();
  st = halo_matrix_create_csr(comm, rb, re, cb, ce, M.local.row_ptr, M.local.col_ids,
                              M.local.values, HALO_MEMORY_HOST, &A);
  times.matrix = MPI_Wtime() - t0;
  MPI_Allreduce(MPI_IN_PLACE, &times, 2, MPI_DOUBLE, MPI_MAX, comm);
  if (st != HALO_SUCCESS) goto done;
  x = malloc((size_t)(ce - cb + 1) * sizeof *x);
  y = malloc((size_t)(re - rb + 1) * sizeof *y);
  if (!x || !y) {
    st = HALO_ERR_OUT_OF_MEMORY;
    goto done;
  }
  for (int64_t j = cb; j < ce; j++) x[j - cb] = input_x(j);
  for (int s = 0; s < n_strategies; s++) {
    result_t *r = &res[n_res];
    halo_plan plan = NULL;
    halo_plan_options opts = halo_plan_options_default();
    opts.strategy = strategies[s];
    memset(r, 0, sizeof *r);
    r->strategy = strategies[s];
    if ((st = halo_plan_create(A, &opts, &plan)) != HALO_SUCCESS) goto done;
    halo_plan_stats(plan, &r->stats);
    st = time_loop(comm, plan, 0, warmup, x, y, &r->t_spmv);
    if (st == HALO_SUCCESS) st = time_loop(comm, plan, 0, iters, x, y, &r->t_spmv);
    if (st == HALO_SUCCESS) st = time_loop(comm, plan, 1, iters, x, y, &r->t_exchange);
    if (st == HALO_SUCCESS && check) {
      for (int64_t i = 0; i < re - rb; i++) y[i] = NAN; /* every entry must be written */
      st = halo_spmv(plan, 1.0, x, 0.0, y);
      if (st == HALO_SUCCESS) st = check_spmv(comm, &M, y, &r->check_err);
      if (st == HALO_SUCCESS && !(r->check_err <= tol)) code = EXIT_CHECK;
    }
    halo_plan_destroy(&plan);
    if (st != HALO_SUCCESS) goto done;
    n_res++;
  }
  if (rank == 0 && !quiet) {
    print_tables(&M, size, &in, &times, iters, res, n_res);
    if (check) {
      double worst = 0.0;
      for (int i = 0; i < n_res; i++) worst = fmax(worst, res[i].check_err);
      printf("\ncheck: max relative error %.3e, tol %.1e: %s\n", worst, tol,
             worst <= tol ? "passed" : "FAILED");
    }
  }
  if (json_path && rank == 0) {
    FILE *f = fopen(json_path, "w");
    if (!f) {
      driver_error(rank, "spmv", "cannot write %s", json_path);
      code = EXIT_ERROR;
    } else {
      write_json(f, &M, size, &in, &times, iters, warmup, check, tol, res, n_res);
      fclose(f);
    }
  }
  if (code == EXIT_CHECK && rank == 0 && quiet)
    fprintf(stderr, "halo spmv: check failed: error above --tol %.1e\n", tol);
done:
  if (st != HALO_SUCCESS) {
    driver_error(rank, "spmv", "%s",
                 halo_last_error()[0] ? halo_last_error() : halo_status_string(st));
    code = EXIT_ERROR;
  }
  free(y);
  free(x);
  halo_matrix_destroy(&A);
  input_free(&M);
  MPI_Bcast(&code, 1, MPI_INT, 0, comm);
  return code;
}
