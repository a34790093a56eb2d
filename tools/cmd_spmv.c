/* halo spmv: load or generate a matrix, plan its halo exchange with each
 * strategy (and, on the device, each transport) asked for, time the product,
 * the exchange and the local product, check that every plan gives bit for
 * bit the ghosts and the product of the standard exchange, optionally check
 * the product against a serial reference, print a table and write JSON. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devmem.h"
#include "progress.h"
#include "report.h"

static void usage(void) {
  printf("usage: mpirun -n P halo spmv (--matrix FILE | --gen SPEC) [options]\n"
         "\n"
         "Distributed y = A*x with halo's planned exchange, for each strategy (and each\n"
         "transport on the device): first the time to solution, the set-up (matrix and\n"
         "plan, auto's choice included) + the timed products; then the time per product,\n"
         "per exchange and per local product (the diagonal block alone): for each rank the\n"
         "average over the iterations, each call completed, then the maximum over ranks;\n"
         "the messages and bytes of every phase; whether the ghosts and y are bit for bit\n"
         "those of the standard exchange; and optionally a check against a serial product\n"
         "on rank 0.\n"
         "\n"
         "input (one of):\n"
         "  --matrix FILE          Matrix Market file (coordinate; real, integer or pattern;\n"
         "                         general, symmetric or skew-symmetric), read on rank 0;\n"
         "                         or binary CSR (.hcsr name or magic; halo convert),\n"
         "                         each rank reading its own rows with MPI-IO\n"
         "  --gen SPEC             generated matrix, made in parallel:\n"
         "                           lap2d:N           2-D 5-point Laplacian, N^2 rows\n"
         "                           lap3d:N           3-D 7-point Laplacian, N^3 rows\n"
         "                           lap3d27:N         3-D 27-point Laplacian, N^3 rows\n"
         "                           irregular:N,SEED  random N-row matrix with dense rows and\n"
         "                                             columns (SEED defaults to 1)\n"
         "options:\n"
         "  --partition rows|nnz|metis\n"
         "                         contiguous rows balanced by count or by entries, or\n"
         "                         METIS's graph partition (rows renumbered; rank 0 reads\n"
         "                         or generates the whole matrix; reports the edge cut and\n"
         "                         the ghosts against rows) [rows]\n"
         "  --helpers H            H of every H+1 ranks of a node get no rows: they only\n"
         "                         forward messages (split spreads inter-node messages over\n"
         "                         them; with --memory device they share the GPUs: split\n"
         "                         with --transport staged is Split+MD, with ipc Split+DD) [0]\n"
         "  --strategy NAME        standard, 2step, 3step, split, auto (the library's\n"
         "                         default: the model, and a timed trial of the candidates\n"
         "                         it cannot tell apart; see --autotune), all, or a list\n"
         "                         such as all,auto [all]\n"
         "  --params NAME|FILE     machine parameters of the performance model: a built-in\n"
         "                         set (lassen, h200) or a file of halo params measure; adds the\n"
         "                         modeled exchange time of every plan beside the measured\n"
         "                         one, and is what auto chooses by [HALO_PARAMS, else this\n"
         "                         machine's file (halo params measure --save), else lassen]\n"
         "  --autotune N|model     auto: N > 0 times N products of every candidate at plan\n"
         "                         time and keeps the fastest; model (or 0) chooses by the\n"
         "                         model alone [HALO_AUTOTUNE, else the candidates modeled\n"
         "                         within 2x of the lowest (at most 4) and each transport's\n"
         "                         lowest are timed]\n"
         "  --wisdom FILE          auto: a file of remembered choices, taken without modeling\n"
         "                         or trial where the key matches, and added to [HALO_WISDOM]\n"
         "  --expected-uses N      auto: the products the plan is expected to serve; the\n"
         "                         choice minimises set-up (NCCL's communicator) + N x time\n"
         "                         [HALO_EXPECTED_USES, else 100]\n"
         "  --ranks-per-node K     virtual nodes of K consecutive ranks [0: the nodes of MPI,\n"
         "                         or HALO_RANKS_PER_NODE when set]\n"
         "  --message-cap B        largest inter-node message of split, in bytes [16384]\n"
         "  --no-dedup             send a value needed by several ranks of a node once per\n"
         "                         rank (default: once per node)\n"
         "  --memory host|device   where x, y and the ghosts live [host]; device uploads the\n"
         "                         matrix to this rank's GPU and multiplies there\n"
         "  --transport NAME       host memory: host, rma (MPI one-sided) or neighbor (MPI-4\n"
         "                         persistent neighborhood all-to-all); device memory: auto,\n"
         "                         staged, nccl, mpi-device, ipc, nvshmem or rma; or all (of\n"
         "                         the memory, those built in)\n"
         "                         (every one this run can use; with strategy auto, auto\n"
         "                         also once choosing the transport too) [auto]\n"
         "  --device-id N          device memory: this rank's GPU [the rank on its node\n"
         "                         modulo the visible GPUs]\n"
         "  --iterations N         timed calls of each kind [100]\n"
         "  --warmup N             untimed products first [10]\n"
         "  --rounds R             time the plans in turn, R times over, and give each\n"
         "                         time as the median of the rounds (the JSON adds the\n"
         "                         fastest and slowest round's product): plans compared\n"
         "                         side by side, not one after the other; every plan is\n"
         "                         alive at once, in its memory, for R > 1 [1]\n"
         "  --unit TYPE[:K]        also time an exchange of K values of TYPE per entry (double,\n"
         "                         float, complex, int32, int64, byte; K 1 to 4096) with each plan\n"
         "                         and check its ghosts bit for bit; a transport without units\n"
         "                         (device rma, nvshmem) says so in its row [none]\n"
         "  --settings LIST        the components' settings, NAME=VALUE,... (e.g.\n"
         "                         spmv.group=8,ipc.signal=host) [HALO_SETTINGS; without\n"
         "                         either, nccl.background=0: a named nccl is timed as nccl]\n"
         "  --list-settings        print every setting: values, default, variable\n"
         "  --check                compare y with a serial product on rank 0 [off]\n"
         "  --tol X                largest accepted error of --check [1e-12]; the error of\n"
         "                         row i is |y_i - ref_i| / sum_j |a_ij x_j|\n"
         "  --sum-duplicates       sum repeated entries of the file (default: reject it)\n"
         "  --json FILE            write the report as JSON [none]\n"
         "  --csv FILE             write the report as CSV: a header line, then a line per\n"
         "                         plan (per modeled path with --params) [none]\n"
         "  --quiet                print nothing but errors: no table, no progress line\n"
         "  -h, --help             this text\n"
         "\n"
         "environment:\n"
         "  HALO_PROGRESS=1|0      progress of reading or generating the matrix on stderr\n"
         "                         at once and on any stderr, or never [on a terminal,\n"
         "                         once it has taken a second]\n"
         "  HALO_RANKS_PER_NODE=K  virtual nodes of K ranks when --ranks-per-node is 0\n"
         "  HALO_INPUT_LIMIT=BYTES the most a matrix file's rows and columns may need\n"
         "                         beyond its entries (8 bytes each, 16 an entry), or none\n"
         "                         [1073741824]\n"
         "  HALO_PARAMS=NAME|FILE  what strategy auto chooses by without --params [this\n"
         "                         machine's file, else lassen]\n"
         "  HALO_AUTOTUNE=N|model  auto's trial without --autotune\n"
         "  HALO_SETTINGS=LIST     the components' settings without --settings (and each\n"
         "                         setting's own variable: --list-settings)\n"
         "\n"
         "exit status: 0 ok, 1 error, 2 bad command line, 3 a check failed (--tol, or a\n"
         "plan that differs from standard)\n" HALO_TOOL_GUIDE);
}

/* halo spmv --list-settings: every setting of halo's components. */
static void list_settings(void) {
  printf("The settings of halo's components (--settings NAME=VALUE,..., HALO_SETTINGS, or each\n"
         "one's variable; the first that names a setting gives it):\n");
  for (int i = 0; i < halo_setting_count(); i++) {
    halo_setting_info info;
    if (halo_setting_get_info(i, &info) != HALO_SUCCESS) break;
    printf("\n%s (%s): %s\n  values: %s; default: %s%s%s\n", info.name, info.component,
           info.doc, info.values, info.deflt, info.env ? "; variable " : "",
           info.env ? info.env : "");
  }
}

/* Time iters calls of one kind (0 product, 1 exchange, 2 local product),
 * each completed (halo_plan_synchronize); the per-rank average, max over ranks. */
static halo_status time_loop(MPI_Comm comm, halo_plan plan, int kind, int64_t iters,
                             const double *x, double *y, double *t_p) {
  halo_status st = HALO_SUCCESS;
  MPI_Barrier(comm);
  double t0 = MPI_Wtime();
  for (int64_t it = 0; it < iters && st == HALO_SUCCESS; it++) {
    if (kind == 1) {
      st = halo_exchange_begin(plan, x, NULL);
      if (st == HALO_SUCCESS) st = halo_exchange_end(plan);
    } else if (kind == 2) {
      st = halo_spmv_diag(plan, 1.0, x, 0.0, y);
    } else {
      st = halo_spmv(plan, 1.0, x, 0.0, y);
    }
    if (st == HALO_SUCCESS) st = halo_plan_synchronize(plan);
  }
  double t = iters > 0 ? (MPI_Wtime() - t0) / (double)iters : 0.0;
  MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, comm);
  *t_p = t;
  return st;
}

typedef struct {
  int dev;
  int64_t n_rows, n_ghost;
  double *x, *y, *g; /* in the plan's memory */
  double *hy, *hg;   /* host copies of the last results */
} vectors;

/* Ghosts and y = A*x (y poisoned first) of one plan, copied to the host. */
/* A plan of strategy auto: what it runs and why, once more after its calls (its trial on
 * the program's first calls settles there: the row tells the kept candidate). */
static halo_status auto_settled(report_row *r, halo_plan plan) {
  halo_status st = halo_plan_stats(plan, &r->stats);
  if (st == HALO_SUCCESS) st = report_row_plan_phases(r, plan);
  if (st != HALO_SUCCESS) return st;
  r->transport = r->phase[0].transport;
  r->strategy = r->stats.strategy;
  return halo_plan_describe(plan, r->describe, sizeof r->describe);
}

static halo_status ghosts_and_product(halo_plan plan, vectors *v) {
  halo_status st = halo_exchange_begin(plan, v->x, v->g);
  if (st == HALO_SUCCESS) st = halo_exchange_end(plan);
  if (buf_poison(v->dev, v->y, (size_t)v->n_rows * sizeof(double))) st = HALO_ERR_CUDA;
  if (st == HALO_SUCCESS) st = halo_spmv(plan, 1.0, v->x, 0.0, v->y);
  if (st == HALO_SUCCESS) st = halo_plan_synchronize(plan);
  if (st == HALO_SUCCESS &&
      (buf_to_host(v->dev, v->hg, v->g, (size_t)v->n_ghost * sizeof(double)) ||
       buf_to_host(v->dev, v->hy, v->y, (size_t)v->n_rows * sizeof(double))))
    st = HALO_ERR_CUDA;
  return st;
}

/* HALO_TIMELINE=1 with device memory: when, from the exchange's start mark,
 * the diagonal product ended and the exchange's transfer (NCCL group, staged
 * copy down to copy up, ipc copies) began and ended on each rank's GPU,
 * averaged over the SpMVs since the last call (printed on rank 0 when print
 * is set). */
static halo_status print_timeline(MPI_Comm comm, halo_plan plan, const report_row *r, int print) {
  int rank, size;
  double avg[4] = {0};
  int64_t n = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  halo_status st = halo_plan_timeline(plan, avg, &n);
  if (st != HALO_SUCCESS) return st;
  avg[3] = (double)n;
  double *all = rank == 0 ? malloc((size_t)size * sizeof avg) : NULL;
  MPI_Gather(avg, 4, MPI_DOUBLE, all, 4, MPI_DOUBLE, 0, comm);
  for (int q = 0; print && rank == 0 && all && q < size; q++)
    printf("timeline %s/%s rank %d: from the exchange's start, product done %.1f us, transfer "
           "reached %.1f us, done %.1f us (%.0f SpMVs)\n",
           halo_strategy_name(r->strategy), halo_transport_name(r->transport), q, 1e6 * all[4 * q],
           1e6 * all[4 * q + 1], 1e6 * all[4 * q + 2], all[4 * q + 3]);
  free(all);
  return HALO_SUCCESS;
}

/* One round of a plan's times: warmup products, then iters products,
 * exchanges and local products (t: each kind's time per call), with the
 * timeline after the warmup and after the products when asked. */
/* --unit: a unit's name ("double", "complex:4", ...) as halo's; 0 where it is not one. */
static int unit_parse(const char *text, halo_unit *u) {
  static const char *const names[] = {"double", "float", "complex", "int32", "int64", "byte"};
  const char *colon = strchr(text, ':');
  const size_t len = colon ? (size_t)(colon - text) : strlen(text);
  long k = 1;
  if (colon) {
    char *end;
    k = strtol(colon + 1, &end, 10);
    if (end == colon + 1 || *end || k < 1 || k > 4096) return 0;
  }
  for (int t = 0; t < 6; t++)
    if (strlen(names[t]) == len && strncmp(text, names[t], len) == 0) {
      *u = (halo_unit){(halo_type)t, (int)k};
      return 1;
    }
  return 0;
}

/* The value of scalar c of entry gid in unit u's type: a small integer, exact in every
 * type. */
static void unit_put(halo_unit u, void *a, int64_t i, int64_t c, int64_t gid) {
  const int64_t per = (int64_t)u.k * (u.type == HALO_TYPE_COMPLEX_DOUBLE ? 2 : 1);
  const int64_t v = (gid * 7 + c * 13) % 1000003, at = i * per + c;
  switch (u.type) {
  case HALO_TYPE_FLOAT: ((float *)a)[at] = (float)v; break;
  case HALO_TYPE_INT32: ((int32_t *)a)[at] = (int32_t)v; break;
  case HALO_TYPE_INT64: ((int64_t *)a)[at] = v; break;
  case HALO_TYPE_BYTE: ((unsigned char *)a)[at] = (unsigned char)v; break;
  default: ((double *)a)[at] = (double)v; break;
  }
}

/* --unit: iters forward exchanges of unit u (each rank's mean per call, the most of any
 * rank; in device memory each call waits for the plan's stream), after warmup, and whether
 * every ghost holds its entry's values bit for bit (on every rank). */
static halo_status time_unit(MPI_Comm comm, halo_plan plan, halo_matrix A, halo_unit u, int dev,
                             int64_t warmup, int64_t iters, report_row *r) {
  const int64_t per = (int64_t)u.k * (u.type == HALO_TYPE_COMPLEX_DOUBLE ? 2 : 1);
  const size_t esz = halo_unit_size(u);
  int64_t n, ng, cb;
  if (halo_plan_unit_check(plan, u, HALO_OP_INSERT, 0) == HALO_ERR_UNSUPPORTED) {
    r->unit_refused = 1; /* this plan's transport moves one double an entry: said in the row */
    r->unit_right = 1;
    return HALO_SUCCESS;
  }
  const int64_t *gid;
  halo_status st = halo_plan_get_sizes(plan, &n, &ng);
  if (st == HALO_SUCCESS) st = halo_matrix_get_ghost_ids(A, &gid);
  if (st == HALO_SUCCESS) st = halo_matrix_get_layout(A, NULL, NULL, NULL, &cb);
  if (st != HALO_SUCCESS) return st;
  unsigned char *x = calloc((size_t)(n + 1), esz), *g = calloc((size_t)(ng + 1), esz);
  unsigned char *want = calloc((size_t)(ng + 1), esz);
  void *dx = dev ? buf_alloc(1, (size_t)(n + 1) * esz) : x;
  void *dg = dev ? buf_alloc(1, (size_t)(ng + 1) * esz) : g;
  int ok = x && g && want && dx && dg;
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
  if (!ok) {
    if (dev) buf_free(1, dx), buf_free(1, dg);
    free(x), free(g), free(want);
    return HALO_ERR_OUT_OF_MEMORY;
  }
  for (int64_t j = 0; j < n; j++)
    for (int64_t c = 0; c < per; c++) unit_put(u, x, j, c, cb + j);
  for (int64_t j = 0; j < ng; j++)
    for (int64_t c = 0; c < per; c++) unit_put(u, want, j, c, gid[j]);
  if (dev && (buf_from_host(1, dx, x, (size_t)n * esz) || buf_poison(1, dg, (size_t)ng * esz)))
    st = HALO_ERR_CUDA;
  double t = 0.0;
  for (int pass = 0; pass < 2 && st == HALO_SUCCESS; pass++) {
    const int64_t calls = pass ? iters : warmup;
    MPI_Barrier(comm);
    const double t0 = MPI_Wtime();
    for (int64_t it = 0; it < calls && st == HALO_SUCCESS; it++) {
      st = halo_exchange_begin_unit(plan, u, HALO_OP_INSERT, dx, dg);
      if (st == HALO_SUCCESS) st = halo_exchange_end(plan);
      if (st == HALO_SUCCESS && dev) st = halo_plan_synchronize(plan);
    }
    if (pass) t = calls > 0 ? (MPI_Wtime() - t0) / (double)calls : 0.0;
  }
  MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, comm);
  if (st == HALO_SUCCESS && dev && buf_to_host(1, g, dg, (size_t)ng * esz)) st = HALO_ERR_CUDA;
  int right = st == HALO_SUCCESS && (ng == 0 || memcmp(g, want, (size_t)ng * esz) == 0);
  MPI_Allreduce(MPI_IN_PLACE, &right, 1, MPI_INT, MPI_MIN, comm);
  r->t_unit = t;
  r->unit_right = right;
  if (dev) buf_free(1, dx), buf_free(1, dg);
  free(x), free(g), free(want);
  return st;
}

static halo_status time_plan(MPI_Comm comm, halo_plan plan, report_row *r, int64_t warmup,
                             int64_t iters, int timeline, int quiet, vectors *vec, double t[3]) {
  double unused;
  halo_status st = time_loop(comm, plan, 0, warmup, vec->x, vec->y, &unused);
  if (st == HALO_SUCCESS && timeline) st = print_timeline(comm, plan, r, 0);
  if (st == HALO_SUCCESS) st = time_loop(comm, plan, 0, iters, vec->x, vec->y, &t[0]);
  if (st == HALO_SUCCESS && timeline) st = print_timeline(comm, plan, r, !quiet);
  if (st == HALO_SUCCESS) st = time_loop(comm, plan, 1, iters, vec->x, vec->y, &t[1]);
  if (st == HALO_SUCCESS) st = time_loop(comm, plan, 2, iters, vec->x, vec->y, &t[2]);
  return st;
}

int cmd_spmv(int argc, char **argv, MPI_Comm comm) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  input_opts in = {NULL, NULL, HALO_PARTITION_ROWS, 0, 0, 0};
  halo_plan_options opts = halo_plan_options_default();
  const char *strategy_name = "all", *transport_name = "auto";
  output_opts out = {NULL, NULL, 0};
  int64_t iters = 100, warmup = 10, rounds = 1, v;
  int check = 0, use_unit = 0;
  halo_unit unit = {HALO_TYPE_DOUBLE, 1};
  const char *unit_name = NULL;
  char unit_settings[HALO_SETTINGS_MAX + 64];
  const char *rep_params = NULL;
  double tol = 1e-12;
  opts.memory = HALO_MEMORY_HOST;
  args_t a = {argc, 1, argv, "spmv", NULL, rank};
  for (; a.i < argc; a.i++) {
    int m;
    if (args_flag(&a, "--help") || args_flag(&a, "-h")) {
      if (rank == 0) usage();
      return EXIT_OK;
    } else if ((m = args_common(&a, &in, &opts, &strategy_name, &out))) {
      if (m < 0) return EXIT_USAGE;
    } else if ((m = args_take(&a, "--ranks-per-node"))) {
      if (m < 0 || !args_int(&a, "--ranks-per-node", 0, 1 << 30, &v)) return EXIT_USAGE;
      opts.ranks_per_node = (int)v;
    } else if ((m = args_take(&a, "--memory"))) {
      if (m < 0) return EXIT_USAGE;
      if (halo_memory_from_name(a.value, &opts.memory) != HALO_SUCCESS ||
          opts.memory == HALO_MEMORY_AUTO) {
        args_error(&a, "--memory '%s': host or device", a.value);
        return EXIT_USAGE;
      }
    } else if ((m = args_take(&a, "--transport"))) {
      if (m < 0) return EXIT_USAGE;
      transport_name = a.value;
    } else if ((m = args_take(&a, "--params"))) {
      if (m < 0) return EXIT_USAGE;
      opts.params = rep_params = a.value;
    } else if ((m = args_take(&a, "--wisdom"))) {
      if (m < 0) return EXIT_USAGE;
      opts.wisdom = a.value;
    } else if ((m = args_take(&a, "--autotune"))) {
      if (m < 0) return EXIT_USAGE;
      if (strcmp(a.value, "model") == 0)
        v = 0;
      else if (!args_int(&a, "--autotune", 0, 1000000, &v))
        return EXIT_USAGE;
      opts.autotune = (int)v;
    } else if ((m = args_take(&a, "--device-id"))) {
      if (m < 0 || !args_int(&a, "--device-id", 0, 1 << 20, &v)) return EXIT_USAGE;
      opts.device_id = (int)v;
    } else if ((m = args_take(&a, "--iterations"))) {
      if (m < 0 || !args_int(&a, "--iterations", 0, 1000000000, &iters)) return EXIT_USAGE;
    } else if ((m = args_take(&a, "--warmup"))) {
      if (m < 0 || !args_int(&a, "--warmup", 0, 1000000000, &warmup)) return EXIT_USAGE;
    } else if ((m = args_take(&a, "--rounds"))) {
      if (m < 0 || !args_int(&a, "--rounds", 1, 10000, &rounds)) return EXIT_USAGE;
    } else if ((m = args_take(&a, "--tol"))) {
      if (m < 0 || !args_double(&a, "--tol", 0.0, &tol)) return EXIT_USAGE;
    } else if ((m = args_take(&a, "--unit"))) {
      if (m < 0) return EXIT_USAGE;
      if (!unit_parse(a.value, &unit)) {
        args_error(&a, "--unit '%s': TYPE or TYPE:K, TYPE double, float, complex, int32, "
                       "int64 or byte, K 1 to 4096",
                   a.value);
        return EXIT_USAGE;
      }
      use_unit = 1;
      unit_name = a.value;
    } else if ((m = args_take(&a, "--settings"))) {
      if (m < 0) return EXIT_USAGE;
      opts.settings = a.value; /* checked with the options, at the first plan */
    } else if (args_flag(&a, "--list-settings")) {
      if (rank == 0) list_settings();
      return EXIT_OK;
    } else if (args_flag(&a, "--check")) {
      check = 1;
    } else {
      args_error(&a, "unknown option '%s'", argv[a.i]);
      return EXIT_USAGE;
    }
  }
  in.ranks_per_node = opts.ranks_per_node;
  /* a named nccl is timed as nccl: its communicator made when the plan is made, unless the
   * run gives nccl.background itself (the library's default makes it in the background, and
   * the plan exchanges over ipc until then: most of a short timed run) */
  if (!opts.settings && !getenv("HALO_SETTINGS") && !getenv("HALO_NCCL_BACKGROUND"))
    opts.settings = "nccl.background=0";
  if (use_unit) { /* the plans' buffers hold the unit's entries */
    if (halo_unit_size(unit) > 8) {
      snprintf(unit_settings, sizeof unit_settings, "%s%sexec.unit_max_bytes=%zu",
               opts.settings ? opts.settings : "", opts.settings ? "," : "",
               halo_unit_size(unit));
      opts.settings = unit_settings;
    }
  }
  if (progress_setup(rank, out.quiet)) return EXIT_USAGE;
  int64_t timeline_setting = 0; /* device.timeline: --settings, HALO_SETTINGS or HALO_TIMELINE */
  const int timeline =
      halo_plan_options_setting(&opts, "device.timeline", &timeline_setting) == HALO_SUCCESS &&
      timeline_setting == 1 && opts.memory == HALO_MEMORY_DEVICE;
  if (!!in.matrix_path == !!in.gen_spec) {
    args_error(&a, "give one of --matrix FILE or --gen SPEC");
    return EXIT_USAGE;
  }
  halo_strategy strategies[HALO_N_STRATEGIES + 1];
  int n_strategies;
  if (!parse_strategies(&a, strategy_name, strategies, &n_strategies)) return EXIT_USAGE;
  halo_transport transports[HALO_N_TRANSPORTS];
  int n_transports;
  const int all_transports = strcmp(transport_name, "all") == 0;
  const int dev = opts.memory == HALO_MEMORY_DEVICE;
  if (!parse_transports(&a, transport_name, dev, transports, &n_transports)) return EXIT_USAGE;
  if (!dev && !all_transports) {
    halo_transport_info info;
    if (transports[0] != HALO_TRANSPORT_AUTO &&
        (halo_transport_get_info(transports[0], &info) != HALO_SUCCESS || !info.host_memory)) {
      args_error(&a, "--transport %s needs --memory device", transport_name);
      return EXIT_USAGE;
    }
    if (transports[0] == HALO_TRANSPORT_AUTO) transports[0] = HALO_TRANSPORT_HOST;
  }
  /* --transport all with auto: auto also chooses the transport, as a last row */
  for (int s = 0; s < n_strategies; s++)
    if (all_transports && strategies[s] == HALO_STRATEGY_AUTO) {
      transports[n_transports++] = HALO_TRANSPORT_AUTO;
      break;
    }

  int code = EXIT_OK;
  input_matrix M;
  halo_matrix A = NULL;
  halo_plan std_plan = NULL;
  vectors vec = {dev, 0, 0, NULL, NULL, NULL, NULL, NULL};
  double *hx = NULL, *y_std = NULL, *g_std = NULL;
  report_row rows[(HALO_N_STRATEGIES + 1) * HALO_N_TRANSPORTS + 1];
  halo_plan plans[(HALO_N_STRATEGIES + 1) * HALO_N_TRANSPORTS + 1] = {0}; /* --rounds > 1 */
  double *round_t = NULL;
  report rep = {.command = "spmv",
                .M = &M,
                .ranks = size,
                .in = &in,
                .opts = &opts,
                .memory = opts.memory,
                .iterations = iters,
                .warmup = warmup,
                .rounds = rounds,
                .checked = check,
                .tol = tol,
                .rows = rows,
                .params = rep_params,
                .unit = use_unit ? unit_name : NULL,
                .unit_bytes = (int64_t)halo_unit_size(unit)};
  char why[1024];
  if (!input_check_memory(comm, &in, INPUT_DISTRIBUTED, check, 0, why, sizeof why)) {
    driver_error(rank, "spmv", "%s", why);
    return EXIT_ERROR;
  }
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
  vec.n_rows = n_rows;
  halo_matrix_get_local_sizes(A, NULL, NULL, &vec.n_ghost);
  /* the standard exchange (with the first transport) is the reference of the
   * other plans; made first, so that it chooses this rank's device before the
   * vectors are allocated there */
  {
    halo_plan_options o = opts;
    o.strategy = HALO_STRATEGY_STANDARD;
    o.transport = !dev             ? HALO_TRANSPORT_HOST
                  : all_transports ? HALO_TRANSPORT_STAGED
                                   : transports[0];
    MPI_Barrier(comm);
    t0 = MPI_Wtime();
    if ((st = halo_plan_create(A, &o, &std_plan)) != HALO_SUCCESS) goto done;
    rep.t_first_plan = MPI_Wtime() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &rep.t_first_plan, 1, MPI_DOUBLE, MPI_MAX, comm);
    /* what later plans of the matrix find made (the parts: the most of any rank) */
    double pattern = 0, context = 0;
    halo_plan_setup_part_seconds(std_plan, HALO_SETUP_PATTERN, &pattern);
    halo_plan_setup_part_seconds(std_plan, HALO_SETUP_CONTEXT, &context);
    rep.t_first_shared = pattern + context;
  }
  hx = malloc((size_t)(ce - cb + 1) * sizeof *hx);
  y_std = malloc((size_t)(n_rows + 1) * sizeof *y_std);
  g_std = malloc((size_t)(vec.n_ghost + 1) * sizeof *g_std);
  vec.hy = malloc((size_t)(n_rows + 1) * sizeof *vec.hy);
  vec.hg = malloc((size_t)(vec.n_ghost + 1) * sizeof *vec.hg);
  vec.x = buf_alloc(dev, (size_t)(ce - cb) * sizeof(double));
  vec.y = buf_alloc(dev, (size_t)n_rows * sizeof(double));
  vec.g = buf_alloc(dev, (size_t)vec.n_ghost * sizeof(double));
  int ok = hx && y_std && g_std && vec.hy && vec.hg && vec.x && vec.y && vec.g;
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
  if (!ok) {
    driver_error(rank, "spmv", "out of %s for the vectors",
                 dev ? "device memory (or no CUDA device)" : "host memory");
    code = EXIT_ERROR;
    goto done;
  }
  for (int64_t j = cb; j < ce; j++) hx[j - cb] = input_x(input_orig_col(&M, cb, j));
  buf_from_host(dev, vec.x, hx, (size_t)(ce - cb) * sizeof(double));
  if ((st = ghosts_and_product(std_plan, &vec)) != HALO_SUCCESS) goto done;
  memcpy(y_std, vec.hy, (size_t)n_rows * sizeof *y_std);
  memcpy(g_std, vec.hg, (size_t)vec.n_ghost * sizeof *g_std);
  halo_plan_destroy(&std_plan);
  if (check) {
    if ((st = check_spmv(comm, &M, y_std, &rep.check_err)) != HALO_SUCCESS) goto done;
    if (!(rep.check_err <= tol)) code = EXIT_CHECK;
  }
  for (int t = 0; t < n_transports; t++) {
    for (int s = 0; s < n_strategies; s++) {
      if (transports[t] == HALO_TRANSPORT_AUTO && all_transports &&
          strategies[s] != HALO_STRATEGY_AUTO)
        continue;
      report_row *r = &rows[rep.n_rows];
      halo_plan plan = NULL;
      halo_plan_options o = opts;
      o.strategy = strategies[s];
      o.transport = transports[t];
      memset(r, 0, sizeof *r);
      r->strategy = strategies[s];
      r->timed = 1;
      MPI_Barrier(comm);
      t0 = MPI_Wtime();
      st = halo_plan_create(A, &o, &plan);
      r->t_plan = MPI_Wtime() - t0;
      if (st != HALO_SUCCESS && all_transports) {
        /* a transport this run cannot use (several ranks per GPU for nccl, an MPI
         * that is not CUDA-aware): say so, go on with the others */
        if (rank == 0 && !out.quiet)
          fprintf(stderr, "halo spmv: transport %s skipped: %s\n",
                  halo_transport_name(transports[t]), halo_last_error());
        st = HALO_SUCCESS;
        break;
      }
      if (st != HALO_SUCCESS) goto done;
      MPI_Allreduce(MPI_IN_PLACE, &r->t_plan, 1, MPI_DOUBLE, MPI_MAX, comm);
      halo_plan_stats(plan, &r->stats);
      if ((st = report_row_plan_phases(r, plan)) != HALO_SUCCESS) {
        halo_plan_destroy(&plan);
        goto done;
      }
      r->transport = r->phase[0].transport;
      if (strategies[s] == HALO_STRATEGY_AUTO) {
        r->asked_auto = 1;
        if ((st = auto_settled(r, plan)) != HALO_SUCCESS) {
          halo_plan_destroy(&plan);
          goto done;
        }
      }
      if (rep_params) {
        r->n_model = 1;
        r->model[0].transport = r->transport;
        if ((st = halo_plan_model(plan, rep_params, REPORT_MAX_PHASES, r->model[0].phase,
                                  &r->model[0].seconds)) != HALO_SUCCESS) {
          halo_plan_destroy(&plan);
          goto done;
        }
      }
      st = ghosts_and_product(plan, &vec);
      if (st == HALO_SUCCESS) {
        int same =
            (vec.n_ghost == 0 || memcmp(vec.hg, g_std, (size_t)vec.n_ghost * sizeof *g_std) == 0) &&
            (n_rows == 0 || memcmp(vec.hy, y_std, (size_t)n_rows * sizeof *y_std) == 0);
        MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_MIN, comm);
        r->compared = 1;
        r->identical = same;
        if (!same) code = EXIT_CHECK;
      }
      if (st == HALO_SUCCESS && use_unit) {
        st = time_unit(comm, plan, A, unit, dev, warmup, iters, r);
        if (st == HALO_SUCCESS && !r->unit_right) code = EXIT_CHECK;
      }
      if (rounds > 1) { /* timed below, in turn with the others */
        plans[rep.n_rows++] = plan;
        if (st != HALO_SUCCESS) goto done;
        continue;
      }
      double tk[3] = {0, 0, 0};
      if (st == HALO_SUCCESS)
        st = time_plan(comm, plan, r, warmup, iters, timeline, out.quiet, &vec, tk);
      if (st == HALO_SUCCESS && r->asked_auto) st = auto_settled(r, plan); /* after its trial */
      r->t_spmv = tk[0], r->t_exchange = tk[1], r->t_local = tk[2];
      halo_plan_destroy(&plan);
      if (st != HALO_SUCCESS) goto done;
      rep.n_rows++;
    }
  }
  if (rounds > 1) { /* round_t[(i * 3 + kind) * rounds + k]: plan i's time of a kind in round k */
    round_t = malloc((size_t)(3 * rounds * rep.n_rows + 1) * sizeof *round_t);
    ok = round_t != NULL;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    if (!ok) {
      driver_error(rank, "spmv", "out of host memory for the rounds' times");
      code = EXIT_ERROR;
      goto done;
    }
    for (int64_t k = 0; k < rounds; k++)
      for (int i = 0; i < rep.n_rows; i++) {
        double tk[3];
        st = time_plan(comm, plans[i], &rows[i], warmup, iters, timeline && k == 0, out.quiet, &vec,
                       tk);
        if (st != HALO_SUCCESS) goto done;
        for (int j = 0; j < 3; j++) round_t[((int64_t)i * 3 + j) * rounds + k] = tk[j];
      }
    for (int i = 0; i < rep.n_rows && st == HALO_SUCCESS; i++)
      if (rows[i].asked_auto) st = auto_settled(&rows[i], plans[i]);
    if (st != HALO_SUCCESS) goto done;
    for (int i = 0; i < rep.n_rows; i++) {
      double *w = &round_t[(int64_t)i * 3 * rounds];
      rows[i].t_spmv = driver_median(w, (int)rounds); /* sorted: the fastest first */
      rows[i].t_spmv_lo = w[0], rows[i].t_spmv_hi = w[rounds - 1];
      rows[i].t_exchange = driver_median(w + rounds, (int)rounds);
      rows[i].t_local = driver_median(w + 2 * rounds, (int)rounds);
    }
  }
  if (rank == 0 && !out.quiet && rep.n_rows) report_print(&rep);
  if (rank == 0 && report_save(&rep, &out) != EXIT_OK) code = EXIT_ERROR;
  if (code == EXIT_CHECK && rank == 0) {
    if (check && !(rep.check_err <= tol))
      fprintf(stderr, "halo spmv: check failed: error %.3e above --tol %.1e\n", rep.check_err, tol);
    for (int i = 0; i < rep.n_rows; i++)
      if (!rows[i].identical)
        fprintf(stderr, "halo spmv: %s / %s differs from the standard exchange\n",
                halo_strategy_name(rows[i].strategy), halo_transport_name(rows[i].transport));
    for (int i = 0; i < rep.n_rows && use_unit; i++)
      if (!rows[i].unit_right)
        fprintf(stderr, "halo spmv: %s / %s: an exchange of unit %s gave wrong ghosts\n",
                halo_strategy_name(rows[i].strategy), halo_transport_name(rows[i].transport),
                unit_name);
  }
done:
  if (st != HALO_SUCCESS) {
    driver_error(rank, "spmv", "%s",
                 halo_last_error()[0] ? halo_last_error() : halo_status_string(st));
    code = EXIT_ERROR;
  }
  for (int i = 0; i < rep.n_rows; i++) halo_plan_destroy(&plans[i]); /* before their vectors */
  free(round_t);
  buf_free(dev, vec.x), buf_free(dev, vec.y), buf_free(dev, vec.g);
  free(vec.hy), free(vec.hg), free(g_std), free(y_std), free(hx);
  halo_plan_destroy(&std_plan);
  halo_matrix_destroy(&A);
  input_free(&M);
  MPI_Bcast(&code, 1, MPI_INT, 0, comm);
  return code;
}
