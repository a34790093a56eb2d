/* halo simulate: the statistics of every strategy on P ranks, built in one
 * process with the same builders as a real run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "halo/sim.h"
#include "progress.h"
#include "report.h"

static void usage(void) {
  printf(
      "usage: halo simulate (--matrix FILE | --gen SPEC) --ranks P --ranks-per-node K [options]\n"
      "\n"
      "Builds, in this one process, the pattern of every one of P ranks and every\n"
      "strategy's schedule with the builders halo_plan_create uses, on virtual nodes\n"
      "of K consecutive ranks, and prints the statistics a run of P ranks reports\n"
      "(messages and bytes per phase, inter-node volume, most messages per node):\n"
      "the plan of a run on thousands of GPUs, without the GPUs.\n"
      "\n"
      "input (one of):\n"
      "  --matrix FILE         Matrix Market file, or .hcsr (halo convert), read whole\n"
      "  --gen SPEC            generated matrix (lap2d:N, lap3d:N, lap3d27:N, irregular:N,SEED;\n"
      "                        see halo spmv --help)\n"
      "required:\n"
      "  --ranks P             ranks to simulate\n"
      "  --ranks-per-node K    ranks per (virtual) node\n"
      "options:\n"
      "  --partition rows|nnz|metis\n"
      "                        contiguous rows balanced by count or by entries, or\n"
      "                        METIS's graph partition (rows renumbered; reports the\n"
      "                        edge cut and the ghosts against rows) [rows]\n"
      "  --strategy NAME       standard, 2step, 3step, split, auto (the lowest modeled\n"
      "                        time over every strategy, message_cap and path), all,\n"
      "                        or a list such as all,auto [all]\n"
      "  --helpers H           H of every H+1 ranks of a node get no rows (communication\n"
      "                        helpers; with --gpus-per-node, Split+MD on staged and\n"
      "                        Split+DD on ipc) [0]\n"
      "  --message-cap B       largest inter-node message of split, in bytes [16384]\n"
      "  --no-dedup            no duplicate removal: a value needed by several ranks\n"
      "                        of a node crosses once per rank (default: once per node)\n"
      "  --sum-duplicates      sum repeated entries of the file (default: reject it)\n"
      "  --params NAME|FILE    also model each strategy's exchange time with these\n"
      "                        machine parameters: a built-in set (lassen, the\n"
      "                        node-aware paper's) or a parameter file [none; strategy\n"
      "                        auto: HALO_PARAMS, or lassen]\n"
      "  --expected-uses N     auto: the uses the plan is expected to serve; the choice\n"
      "                        minimises set-up (NCCL's communicator on a new\n"
      "                        communicator) + N x time [HALO_EXPECTED_USES, else 100]\n"
      "  --gpus-per-node G     with --params: model device plans on G GPUs per node\n"
      "                        (paths staged, ipc, and nccl when each GPU has one\n"
      "                        rank); 0 models a host plan (path host) [0]\n"
      "  --json FILE           write the report as JSON (the document of halo spmv,\n"
      "                        without times) [none]\n"
      "  --csv FILE            write the report as CSV: a header line, then a line per\n"
      "                        strategy (per modeled path with --params) [none]\n"
      "  --quiet               print nothing but errors: no table, no progress line\n"
      "  -h, --help            this text\n"
      "\n"
      "environment:\n"
      "  HALO_PROGRESS=1|0     progress of reading or generating the matrix on stderr\n"
      "                        at once and on any stderr, or never [on a terminal,\n"
      "                        once it has taken a second]\n"
      "  HALO_INPUT_LIMIT=BYTES the most a matrix file's rows and columns may need\n"
      "                        beyond its entries (8 bytes each, 16 an entry), or none\n"
      "                        [1073741824]\n"
      "\n"
      "exit status: 0 ok, 1 error, 2 bad command line\n" HALO_TOOL_GUIDE);
}

/* --partition metis: METIS's parts over the ranks that hold rows, the matrix
 * renumbered (P A P^T), the partition measured against the contiguous one. */
static halo_status partition_graph(input_matrix *M, int P, const int *holds) {
  halo_status st;
  halo_csr B = {0};
  int64_t *new_ids = malloc((size_t)(M->n_rows ? M->n_rows : 1) * sizeof *new_ids);
  int64_t *contiguous = malloc((size_t)(P + 1) * sizeof *contiguous);
  st = new_ids && contiguous ? HALO_SUCCESS : HALO_ERR_OUT_OF_MEMORY;
  if (st == HALO_SUCCESS) st = halo_partition_metis(&M->global, P, holds, new_ids, M->row_begin);
  if (st == HALO_SUCCESS)
    st = halo_partition_measure(&M->global, new_ids, P, M->row_begin, &M->quality);
  if (st == HALO_SUCCESS)
    st = halo_partition_compute(HALO_PARTITION_ROWS, M->n_rows, NULL, P, holds, contiguous);
  if (st == HALO_SUCCESS)
    st = halo_partition_measure(&M->global, NULL, P, contiguous, &M->contiguous);
  if (st == HALO_SUCCESS) st = halo_csr_permute(&M->global, new_ids, &B);
  if (st == HALO_SUCCESS) {
    halo_csr_free(&M->global);
    M->global = B;
    M->measured = 1;
  }
  free(contiguous);
  free(new_ids);
  return st;
}

/* The whole matrix on this process, and the partition of P ranks; why: the
 * reason of a refusal before the matrix or the ranks are made ("" if none). */
static halo_status load_whole(const input_opts *in, int P, int K, input_matrix *M, char *why,
                              size_t len) {
  halo_status st;
  memset(M, 0, sizeof *M);
  why[0] = '\0';
  /* a generated matrix split by rows is never held whole: its patterns are
   * made rank by rank (halo_sim_create_gen) */
  const int streamed = in->gen_spec && in->partition == HALO_PARTITION_ROWS;
  if (!input_check_memory(MPI_COMM_SELF, in, streamed ? INPUT_STREAMED : INPUT_WHOLE, 0, P, why,
                          len))
    return HALO_ERR_OUT_OF_MEMORY;
  if (in->partition == HALO_PARTITION_METIS && !HALO_HAVE_METIS) /* the library says so */
    return halo_partition_metis(NULL, 0, NULL, NULL, NULL);
  if (in->gen_spec) {
    int64_t N;
    M->is_gen = 1;
    if ((st = halo_gen_parse(in->gen_spec, &M->gen)) != HALO_SUCCESS) return st;
    halo_gen_name(&M->gen, M->name, sizeof M->name);
    if ((st = halo_gen_size(&M->gen, &N, NULL)) != HALO_SUCCESS) return st;
    if (!input_check_ranks(in, N, P, K, why, len)) return HALO_ERR_INVALID_ARG;
    if (streamed) {
      M->streamed = 1;
      M->global.n_rows = M->global.n_cols = N; /* its sizes alone */
    } else {
      st = halo_gen_rows(&M->gen, 0, N, &M->global);
    }
  } else {
    halo_mm_options mo = halo_mm_options_default();
    mo.sum_duplicates = in->sum_duplicates;
    const char *base = strrchr(in->matrix_path, '/');
    snprintf(M->name, sizeof M->name, "%s", base ? base + 1 : in->matrix_path);
    st = input_is_hcsr(in->matrix_path) ? halo_hcsr_read(in->matrix_path, &M->global)
                                        : halo_mm_read(in->matrix_path, &mo, &M->global);
  }
  if (st != HALO_SUCCESS) return st;
  if (!in->gen_spec && !input_check_ranks(in, M->global.n_rows, P, K, why, len))
    return HALO_ERR_INVALID_ARG;
  M->n_rows = M->global.n_rows;
  M->n_cols = M->global.n_cols;
  M->nnz = M->streamed ? 0 : halo_csr_nnz(&M->global); /* streamed: counted as made */
  M->row_begin = malloc((size_t)(P + 1) * sizeof *M->row_begin);
  M->col_begin = malloc((size_t)(P + 1) * sizeof *M->col_begin);
  if (!M->row_begin || !M->col_begin) return HALO_ERR_OUT_OF_MEMORY;
  int *holds = NULL; /* --helpers: the first 1/(H+1) of each node's ranks get rows */
  if (in->helpers > 0) {
    if (!(holds = malloc((size_t)P * sizeof *holds))) return HALO_ERR_OUT_OF_MEMORY;
    for (int r = 0; r < P; r++) {
      const int n = P - r / K * K < K ? P - r / K * K : K;
      holds[r] = r % K < (n / (in->helpers + 1) > 0 ? n / (in->helpers + 1) : 1);
    }
  }
  if (in->partition == HALO_PARTITION_METIS)
    st = partition_graph(M, P, holds);
  else
    st =
        halo_partition_compute(in->partition, M->n_rows, M->global.row_ptr, P, holds, M->row_begin);
  free(holds);
  if (st != HALO_SUCCESS) return st;
  if (M->n_rows == M->n_cols)
    memcpy(M->col_begin, M->row_begin, (size_t)(P + 1) * sizeof *M->col_begin);
  else
    st = halo_partition_rows(M->n_cols, P, M->col_begin);
  return st;
}

/* The modeled exchange of one strategy on every path: host for a host plan
 * (G = 0), else staged, ipc, and nccl when each GPU has one rank. */
static halo_status model_paths(halo_sim sim, const halo_plan_options *opts, int G,
                               int ranks_per_gpu, const char *params, report_row *row) {
  halo_transport paths[3];
  int n = 0;
  if (G == 0) {
    paths[n++] = HALO_TRANSPORT_HOST;
  } else {
    paths[n++] = HALO_TRANSPORT_STAGED;
    paths[n++] = HALO_TRANSPORT_IPC;
    if (ranks_per_gpu == 1) paths[n++] = HALO_TRANSPORT_NCCL;
  }
  for (int i = 0; i < n; i++) {
    halo_plan_options o = *opts;
    o.memory = G == 0 ? HALO_MEMORY_HOST : HALO_MEMORY_DEVICE;
    o.transport = paths[i];
    row->model[i].transport = paths[i];
    halo_status st = halo_sim_model(sim, &o, G, params, REPORT_MAX_PHASES, row->model[i].phase,
                                    &row->model[i].seconds);
    if (st != HALO_SUCCESS) return st;
    row->n_model = i + 1;
  }
  return HALO_SUCCESS;
}

/* --strategy auto: the library's choice by the model (halo_sim_choose); *o
 * becomes the one of lowest modeled time. */
static halo_status choose(halo_sim sim, halo_plan_options *o, int G, const char *params,
                          report_row *row) {
  halo_plan_options chosen, asked = *o;
  asked.memory = G == 0 ? HALO_MEMORY_HOST : HALO_MEMORY_DEVICE;
  halo_status st =
      halo_sim_choose(sim, &asked, G, params, &chosen, row->describe, sizeof row->describe);
  if (st != HALO_SUCCESS) return st;
  chosen.memory = o->memory;
  *o = chosen;
  row->asked_auto = 1;
  row->strategy = chosen.strategy;
  return HALO_SUCCESS;
}

static int run(int argc, char **argv) {
  input_opts in = {NULL, NULL, HALO_PARTITION_ROWS, 0, 0, 0};
  halo_plan_options opts = halo_plan_options_default();
  const char *strategy_name = "all";
  output_opts out = {NULL, NULL, 0};
  const char *params = NULL;
  int64_t P = 0, K = 0, G = 0;
  int have_gpus = 0;
  args_t a = {argc, 1, argv, "simulate", NULL, 0};
  for (; a.i < argc; a.i++) {
    int m;
    if (args_flag(&a, "--help") || args_flag(&a, "-h")) {
      usage();
      return EXIT_OK;
    } else if ((m = args_common(&a, &in, &opts, &strategy_name, &out))) {
      if (m < 0) return EXIT_USAGE;
    } else if ((m = args_take(&a, "--ranks-per-node"))) {
      if (m < 0 || !args_int(&a, "--ranks-per-node", 1, 1 << 30, &K)) return EXIT_USAGE;
    } else if ((m = args_take(&a, "--ranks"))) {
      if (m < 0 || !args_int(&a, "--ranks", 1, 1 << 24, &P)) return EXIT_USAGE;
    } else if ((m = args_take(&a, "--params"))) {
      if (m < 0) return EXIT_USAGE;
      params = a.value;
    } else if ((m = args_take(&a, "--gpus-per-node"))) {
      if (m < 0 || !args_int(&a, "--gpus-per-node", 0, 1 << 20, &G)) return EXIT_USAGE;
      have_gpus = 1;
    } else {
      args_error(&a, "unknown option '%s'", argv[a.i]);
      return EXIT_USAGE;
    }
  }
  if (!!in.matrix_path == !!in.gen_spec) {
    args_error(&a, "give one of --matrix FILE or --gen SPEC");
    return EXIT_USAGE;
  }
  if (P == 0 || K == 0) {
    args_error(&a, "give --ranks P and --ranks-per-node K");
    return EXIT_USAGE;
  }
  if (have_gpus && !params) {
    args_error(&a, "--gpus-per-node needs --params");
    return EXIT_USAGE;
  }
  opts.ranks_per_node = (int)K;
  halo_strategy strategies[HALO_N_STRATEGIES + 1];
  int n_strategies;
  if (!parse_strategies(&a, strategy_name, strategies, &n_strategies)) return EXIT_USAGE;
  halo_plan_options resolved; /* the option params, or HALO_PARAMS, or lassen */
  for (int s = 0; s < n_strategies && !params; s++)
    if (strategies[s] == HALO_STRATEGY_AUTO) /* as a plan of strategy auto */
      if (halo_plan_options_resolve(&opts, &resolved) == HALO_SUCCESS)
        params = resolved.params ? resolved.params : "lassen"; /* a simulated machine */

  int code = EXIT_OK;
  input_matrix M;
  halo_sim sim = NULL;
  report_row rows[HALO_N_STRATEGIES + 1];
  report rep = {.command = "simulate",
                .M = &M,
                .ranks = (int)P,
                .in = &in,
                .opts = &opts,
                .rows = rows,
                .params = params,
                .gpus_per_node = (int)G,
                .ranks_per_gpu = G > 0 ? (int)(((K < P ? K : P) + G - 1) / G) : 0};
  double t0 = MPI_Wtime();
  if (progress_setup(0, out.quiet)) return EXIT_USAGE;
  progress_begin(in.gen_spec ? in.gen_spec : in.matrix_path);
  char why[1024];
  halo_status st = load_whole(&in, (int)P, (int)K, &M, why, sizeof why);
  if (!M.streamed) progress_end();
  rep.t_load = MPI_Wtime() - t0;
  t0 = MPI_Wtime();
  if (st == HALO_SUCCESS && M.streamed) /* its rows made here: their progress drawn */
    st = halo_sim_create_gen(&M.gen, (int)P, M.row_begin,
                             (int64_t)(0.9 * input_memory_share(MPI_COMM_SELF)), &M.nnz, &sim);
  else if (st == HALO_SUCCESS)
    st = halo_sim_create(&M.global, (int)P, M.row_begin, M.col_begin, &sim);
  if (M.streamed) progress_end();
  halo_csr_free(&M.global); /* the patterns hold what the plans need; the report, the sizes */
  rep.t_patterns = MPI_Wtime() - t0;
  for (int s = 0; s < n_strategies && st == HALO_SUCCESS; s++) {
    halo_plan_options o = opts;
    o.strategy = strategies[s];
    memset(&rows[s], 0, sizeof rows[s]);
    rows[s].strategy = strategies[s];
    rows[s].transport = HALO_TRANSPORT_HOST;
    if (o.strategy == HALO_STRATEGY_AUTO) {
      st = choose(sim, &o, (int)G, params, &rows[s]);
      if (st != HALO_SUCCESS) break;
    }
    /* the model first: the simulation keeps each plan it builds, so the
     * statistics then come from the same build */
    if (params) st = model_paths(sim, &o, (int)G, rep.ranks_per_gpu, params, &rows[s]);
    if (st == HALO_SUCCESS) st = halo_sim_run(sim, &o, &rows[s].stats);
    if (st == HALO_SUCCESS) st = report_row_sim_phases(&rows[s], sim);
    if (st == HALO_SUCCESS) rep.n_rows++;
  }
  if (st != HALO_SUCCESS) {
    driver_error(0, "simulate", "%s",
                 why[0]                 ? why
                 : halo_last_error()[0] ? halo_last_error()
                                        : halo_status_string(st));
    code = EXIT_ERROR;
  } else {
    if (!out.quiet) report_print(&rep);
    code = report_save(&rep, &out);
  }
  halo_sim_destroy(&sim);
  input_free(&M);
  return code;
}

int cmd_simulate(int argc, char **argv, MPI_Comm comm) {
  int rank, code = EXIT_OK;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) code = run(argc, argv); /* one process does it all */
  MPI_Bcast(&code, 1, MPI_INT, 0, comm);
  return code;
}
