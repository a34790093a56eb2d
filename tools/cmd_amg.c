/* halo amg: hypre's BoomerAMG-preconditioned CG (or GMRES) on a matrix of the
 * driver, solved with hypre's own exchange and with halo's (libhalo_hypre,
 * linked in front of libHYPRE), alternated; iterations, set-up and solve
 * times, the exchanges of each level, and with --simulate the levels' plans
 * on P ranks, modeled (amg_sim.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amg.h"
#include "progress.h"

static void usage(void) {
  printf("usage: mpirun -n P halo amg (--matrix FILE | --gen SPEC) [options]\n"
         "\n"
         "Solves A x = b (b = A x*, x* the driver's input vector) with hypre's\n"
         "BoomerAMG-preconditioned CG or GMRES, once with hypre's own halo exchange and\n"
         "once with halo's for each strategy asked for, --repeat times in turn (each\n"
         "time a new AMG set-up), and prints: first the time to solution (set-up + solve\n"
         "of the median round), then iterations, final residual, whether the solution\n"
         "is bit for bit hypre's, the median set-up and solve times (the most of any\n"
         "rank), halo's plan set-up against one iteration, and per level of the\n"
         "hierarchy its matrices' exchanges in a solve (count, time, halo's plan).\n"
         "\n"
         "input (one of):\n"
         "  --matrix FILE          Matrix Market or .hcsr file (square; see halo spmv --help)\n"
         "  --gen SPEC             generated matrix (lap2d:N, lap3d:N, lap3d27:N,\n"
         "                         irregular:N,SEED; see halo spmv --help)\n"
         "options:\n"
         "  --partition rows|nnz|metis\n"
         "                         the rows of each rank (see halo spmv --help) [rows]\n"
         "  --sum-duplicates       sum repeated entries of the file (default: reject it)\n"
         "  --strategy LIST        halo's strategies to run beside hypre's exchange:\n"
         "                         standard, 2step, 3step, split, auto (each level's\n"
         "                         plans the ones of lowest modeled time), all, or a list\n"
         "                         [standard,auto]\n"
         "  --ranks-per-node K     virtual nodes of K consecutive ranks, for halo's plans\n"
         "                         and --simulate [0: the nodes of MPI, or\n"
         "                         HALO_RANKS_PER_NODE]\n"
         "  --message-cap B        largest inter-node message of split, in bytes [16384]\n"
         "  --no-dedup             no duplicate removal (see halo spmv --help)\n"
         "  --params NAME|FILE     machine parameters of the model (auto, the modeled\n"
         "                         times, --simulate) [HALO_PARAMS, or lassen]\n"
         "  --solver pcg|gmres     the Krylov solver BoomerAMG preconditions [pcg]\n"
         "  --tol X                relative residual to reach [1e-8]\n"
         "  --maxit N              most iterations [200]\n"
         "  --coarsen hmis|pmis|falgout\n"
         "                         BoomerAMG's coarsening [hmis]\n"
         "  --interp ext+i|ext|classical\n"
         "                         BoomerAMG's interpolation [ext+i]\n"
         "  --relax l1-gs|hgs|l1-jacobi\n"
         "                         smoother: l1 Gauss-Seidel forward down, backward up\n"
         "                         (hypre's default, 13/14), hybrid Gauss-Seidel (3/4), or\n"
         "                         l1 Jacobi (18); Gaussian elimination on the coarsest\n"
         "                         level [l1-gs]\n"
         "  --pmax N               most interpolation weights per row [4]\n"
         "  --theta X              strength threshold [0.25]\n"
         "  --repeat N             set-ups and solves of each exchange, in turn [5]\n"
         "  --simulate LIST        also build the hierarchy's plans on each of these\n"
         "                         numbers of ranks (e.g. 256,4096) in this process, each\n"
         "                         level's coarse rows on the rank of their fine rows,\n"
         "                         and model every strategy per level and per iteration;\n"
         "                         needs --ranks-per-node [none]\n"
         "  --gpus-per-node G      --simulate: model device plans on G GPUs per node (0: a\n"
         "                         host plan) [0]\n"
         "  --view                 also print libhalo_hypre's report (halo_hypre_view) of\n"
         "                         the last solve of each strategy\n"
         "  --quiet                print nothing but errors\n"
         "  -h, --help             this text\n"
         "\n"
         "environment: HALO_PROGRESS (see halo spmv --help); libhalo_hypre's variables\n"
         "(HALO_STRATEGY, ...) are replaced by the options above.\n"
         "\n"
         "exit status: 0 ok, 1 error, 2 bad command line, 3 a solution of halo's\n"
         "exchange differs from hypre's, or the interposition did not take\n" HALO_TOOL_GUIDE);
}

/* A name of a list (NAMES: "a|b|c") to its value in VALUES; 0 if unknown. */
static int pick(args_t *a, const char *opt, const char *names, const int *values, int *out) {
  int i = 0;
  for (const char *p = names;; i++) {
    const char *e = strchr(p, '|');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (strlen(a->value) == len && !strncmp(a->value, p, len)) {
      *out = values[i];
      return 1;
    }
    if (!e) break;
    p = e + 1;
  }
  args_error(a, "%s '%s': one of %s", opt, a->value, names);
  return 0;
}

static int parse_sim_list(args_t *a, amg_opts *o) {
  const char *p = a->value;
  o->n_sim = 0;
  while (*p) {
    char *end;
    long long v = strtoll(p, &end, 10);
    if (end == p || v < 1 || v > (1 << 24) || (*end && *end != ',') || o->n_sim == AMG_MAX_SIM) {
      args_error(a, "--simulate '%s': up to %d numbers of ranks in [1, %d], comma-separated",
                 a->value, AMG_MAX_SIM, 1 << 24);
      return 0;
    }
    o->sim_ranks[o->n_sim++] = (int)v;
    p = *end ? end + 1 : end;
  }
  if (!o->n_sim) args_error(a, "--simulate: give a number of ranks");
  return o->n_sim > 0;
}

/* The command line; returns -1 to go on, else the exit status. */
static int parse(int argc, char **argv, int rank, amg_opts *o) {
  static const int coarsen_v[] = {10, 8, 6}, interp_v[] = {6, 14, 0}, relax_v[] = {0, 1, 2};
  static const int solver_v[] = {0, 1};
  const char *strategy_name = "standard,auto";
  int64_t v;
  args_t a = {argc, 1, argv, "amg", NULL, rank};
  for (; a.i < argc; a.i++) {
    int m;
    if (args_flag(&a, "--help") || args_flag(&a, "-h")) {
      if (rank == 0) usage();
      return EXIT_OK;
    } else if ((m = args_take(&a, "--matrix"))) {
      if (m < 0) return EXIT_USAGE;
      o->in.matrix_path = a.value;
    } else if ((m = args_take(&a, "--gen"))) {
      if (m < 0) return EXIT_USAGE;
      o->in.gen_spec = a.value;
    } else if ((m = args_take(&a, "--partition"))) {
      if (m < 0) return EXIT_USAGE;
      if (halo_partition_from_name(a.value, &o->in.partition) != HALO_SUCCESS) {
        args_error(&a, "--partition: %s", halo_last_error());
        return EXIT_USAGE;
      }
    } else if (args_flag(&a, "--sum-duplicates")) {
      o->in.sum_duplicates = 1;
    } else if ((m = args_take(&a, "--strategy"))) {
      if (m < 0) return EXIT_USAGE;
      strategy_name = a.value;
    } else if ((m = args_take(&a, "--ranks-per-node"))) {
      if (m < 0 || !args_int(&a, "--ranks-per-node", 1, 1 << 30, &v)) return EXIT_USAGE;
      o->opts.ranks_per_node = (int)v;
    } else if ((m = args_take(&a, "--message-cap"))) {
      if (m < 0 || !args_int(&a, "--message-cap", 8, INT64_C(1) << 40, &v)) return EXIT_USAGE;
      o->opts.message_cap = v;
    } else if (args_flag(&a, "--no-dedup")) {
      o->opts.remove_duplicates = 0;
    } else if ((m = args_take(&a, "--params"))) {
      if (m < 0) return EXIT_USAGE;
      o->opts.params = a.value;
    } else if ((m = args_take(&a, "--solver"))) {
      if (m < 0 || !pick(&a, "--solver", "pcg|gmres", solver_v, &o->gmres)) return EXIT_USAGE;
    } else if ((m = args_take(&a, "--tol"))) {
      if (m < 0 || !args_double(&a, "--tol", 0.0, &o->tol)) return EXIT_USAGE;
    } else if ((m = args_take(&a, "--maxit"))) {
      if (m < 0 || !args_int(&a, "--maxit", 1, 1000000, &v)) return EXIT_USAGE;
      o->maxit = (int)v;
    } else if ((m = args_take(&a, "--coarsen"))) {
      if (m < 0 || !pick(&a, "--coarsen", "hmis|pmis|falgout", coarsen_v, &o->coarsen))
        return EXIT_USAGE;
    } else if ((m = args_take(&a, "--interp"))) {
      if (m < 0 || !pick(&a, "--interp", "ext+i|ext|classical", interp_v, &o->interp))
        return EXIT_USAGE;
    } else if ((m = args_take(&a, "--relax"))) {
      if (m < 0 || !pick(&a, "--relax", "l1-gs|hgs|l1-jacobi", relax_v, &o->relax))
        return EXIT_USAGE;
    } else if ((m = args_take(&a, "--pmax"))) {
      if (m < 0 || !args_int(&a, "--pmax", 0, 1000, &v)) return EXIT_USAGE;
      o->pmax = (int)v;
    } else if ((m = args_take(&a, "--theta"))) {
      if (m < 0 || !args_double(&a, "--theta", 0.0, &o->theta)) return EXIT_USAGE;
      if (o->theta >= 1.0) {
        args_error(&a, "--theta %g: a threshold below 1", o->theta);
        return EXIT_USAGE;
      }
    } else if ((m = args_take(&a, "--repeat"))) {
      if (m < 0 || !args_int(&a, "--repeat", 1, 1000, &v)) return EXIT_USAGE;
      o->repeat = (int)v;
    } else if ((m = args_take(&a, "--simulate"))) {
      if (m < 0 || !parse_sim_list(&a, o)) return EXIT_USAGE;
    } else if ((m = args_take(&a, "--gpus-per-node"))) {
      if (m < 0 || !args_int(&a, "--gpus-per-node", 0, 1 << 20, &v)) return EXIT_USAGE;
      o->gpus_per_node = (int)v;
    } else if (args_flag(&a, "--view")) {
      o->view = 1;
    } else if (args_flag(&a, "--quiet")) {
      o->quiet = 1;
    } else {
      args_error(&a, "unknown option '%s'", argv[a.i]);
      return EXIT_USAGE;
    }
  }
  if (!!o->in.matrix_path == !!o->in.gen_spec) {
    args_error(&a, "give one of --matrix FILE or --gen SPEC");
    return EXIT_USAGE;
  }
  if (o->n_sim && o->opts.ranks_per_node < 1) {
    args_error(&a, "--simulate needs --ranks-per-node K");
    return EXIT_USAGE;
  }
  if (o->n_sim && o->in.partition == HALO_PARTITION_METIS) {
    args_error(&a, "--simulate partitions the finest level by rows or nnz, not metis");
    return EXIT_USAGE;
  }
  if (!parse_strategies(&a, strategy_name, o->strategies, &o->n_strategies)) return EXIT_USAGE;
  o->in.ranks_per_node = o->opts.ranks_per_node;
  return -1;
}

static int cmp_rec(const void *x, const void *y) {
  const amg_level_time *a = x, *b = y;
  if (a->level != b->level) return a->level - b->level;
  return (int)a->matrix - (int)b->matrix;
}

/* The solve's exchanges by level and matrix, from libhalo_hypre's records. */
static halo_status level_times(MPI_Comm comm, amg_result *r) {
  halo_hypre_record *recs = NULL;
  int n = 0;
  halo_status st = halo_hypre_records(comm, &recs, &n);
  if (st != HALO_SUCCESS) return st;
  r->n_levels = 0;
  r->through_halo = 0;
  r->plan_seconds = 0;
  for (int i = 0; i < n; i++) {
    const halo_hypre_record *c = &recs[i];
    int64_t count = c->forward + c->reverse + c->left_to_hypre;
    r->through_halo += c->forward + c->reverse;
    if (!count) continue;
    /* the plan's own creation (most of any rank), not the wait at its
     * collective start for ranks still busy before their first exchange */
    if (c->planned) r->plan_seconds += c->stats.setup_seconds;
    int k = 0;
    while (k < r->n_levels && !(r->lt[k].level == c->level && r->lt[k].matrix == c->matrix)) k++;
    if (k == r->n_levels) {
      if (k == AMG_MAX_LEVELS) continue;
      memset(&r->lt[k], 0, sizeof r->lt[k]);
      r->lt[k].level = c->level;
      r->lt[k].matrix = c->matrix;
      r->n_levels++;
    }
    amg_level_time *t = &r->lt[k];
    t->exchanges += count;
    t->seconds += c->seconds;
    t->rows = c->rows;
    t->nonzeros = c->nonzeros;
    t->ranks_with_rows = c->ranks_with_rows;
    if (c->planned) {
      t->strategy = c->stats.strategy;
      t->modeled = c->modeled;
      t->messages = c->messages;
      t->planned = 1;
    }
  }
  qsort(r->lt, (size_t)r->n_levels, sizeof r->lt[0], cmp_rec);
  halo_hypre_records_free(&recs);
  return HALO_SUCCESS;
}

/* One set-up and solve with exchange k (0: hypre's, else halo's strategy
 * k-1); x bit for bit against ref (NULL: becomes the reference). */
static halo_status run_once(amg_problem *pb, const amg_opts *o, int k, int keep_hierarchy,
                            amg_result *r, double *ref, amg_hierarchy *H) {
  halo_status st = HALO_SUCCESS;
  halo_hypre_set_enabled(k > 0);
  if (k > 0) {
    halo_plan_options opts = o->opts;
    opts.strategy = o->strategies[k - 1];
    st = halo_hypre_set_options(&opts);
    if (st == HALO_ERR_UNSUPPORTED)
      amg_error(pb->rank, "libhalo_hypre has halo off (its message above says why): halo's "
                          "exchange cannot run");
    if (st != HALO_SUCCESS) return st;
  }
  st = amg_solve(pb, o, r, keep_hierarchy ? H : NULL);
  if (st == HALO_SUCCESS) st = level_times(pb->comm, r);
  if (st != HALO_SUCCESS) return st;
  int same = 1;
  if (ref)
    same = !memcmp(ref, pb->x, (size_t)pb->n_local * sizeof *ref);
  else if (pb->n_local)
    memcpy(pb->x_ref, pb->x, (size_t)pb->n_local * sizeof *ref);
  MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_MIN, pb->comm);
  r->identical = same;
  return HALO_SUCCESS;
}

static const char *kind_name(const amg_opts *o, int k) {
  return k == 0 ? "hypre" : halo_strategy_name(o->strategies[k - 1]);
}

/* The round of exchange k whose time to solution (set-up + solve) is the median of the
 * rounds' (the lower one of an even count). */
static const amg_result *median_round(const amg_opts *o, const amg_result *res, int n_kinds,
                                      int k) {
  for (int i = 0; i < o->repeat; i++) {
    const amg_result *a = &res[i * n_kinds + k];
    const double ta = a->setup_seconds + a->solve_seconds;
    int below = 0; /* rounds before round i in the order of their times (ties: by round) */
    for (int j = 0; j < o->repeat; j++) {
      const amg_result *b = &res[j * n_kinds + k];
      const double tb = b->setup_seconds + b->solve_seconds;
      below += tb < ta || (tb == ta && j < i);
    }
    if (below == (o->repeat - 1) / 2) return a;
  }
  return &res[k];
}

/* Time to solution first: per exchange, set-up + solve of its median round. */
static void print_tts(const amg_opts *o, const amg_result *res, int n_kinds) {
  printf("time to solution: BoomerAMG set-up + %s solve (s, the most of any rank; the round of "
         "median set-up + solve of %d)\n",
         o->gmres ? "GMRES" : "PCG", o->repeat);
  printf("%-10s %10s %9s %9s %12s\n", "exchange", "solution-s", "setup-s", "solve-s",
         "solution/hy");
  for (int k = 0; k < n_kinds; k++) {
    double ratio[AMG_MAX_REPEAT];
    for (int rep = 0; rep < o->repeat; rep++) {
      const amg_result *r = &res[rep * n_kinds + k], *h = &res[rep * n_kinds];
      ratio[rep] = (r->setup_seconds + r->solve_seconds) / (h->setup_seconds + h->solve_seconds);
    }
    const amg_result *m = median_round(o, res, n_kinds, k);
    printf("%-10s %10.4f %9.4f %9.4f %12.3f\n", kind_name(o, k),
           m->setup_seconds + m->solve_seconds, m->setup_seconds, m->solve_seconds,
           driver_median(ratio, o->repeat));
  }
  printf(
      "(set-up: BoomerAMG's hierarchy and the solver's; solve: from x = 0 to the tolerance;\n"
      "halo's plans, made at their first exchange, counted where made: plan-ms below;\n"
      "solution/hy the median of each round's ratio to hypre's; not counted: the IJ matrix)\n\n");
}

static void print_results(const amg_problem *pb, const amg_opts *o, amg_result *res, int n_kinds) {
  /* res[rep * n_kinds + k] */
  printf("halo amg: %s, %lld rows, %lld nonzeros, %d ranks; BoomerAMG-%s (%s), tol %g\n", pb->name,
         (long long)pb->n_rows, (long long)pb->nnz, pb->size, o->gmres ? "GMRES" : "PCG",
         pb->amg_desc, o->tol);
  print_tts(o, res, n_kinds);
  printf("%-10s %6s %12s %9s %9s %9s %9s %9s %9s %9s  %s\n", "exchange", "iters", "residual",
         "setup-s", "solve-s", "setup/hy", "solve/hy", "plan-ms", "iter-ms", "halo-xchg",
         "x bit for bit");
  for (int k = 0; k < n_kinds; k++) {
    double su[AMG_MAX_REPEAT], so[AMG_MAX_REPEAT], pl[AMG_MAX_REPEAT], ratio[AMG_MAX_REPEAT],
        sratio[AMG_MAX_REPEAT];
    int same = 1;
    for (int rep = 0; rep < o->repeat; rep++) {
      const amg_result *r = &res[rep * n_kinds + k];
      su[rep] = r->setup_seconds;
      so[rep] = r->solve_seconds;
      pl[rep] = r->plan_seconds;
      ratio[rep] = r->solve_seconds / res[rep * n_kinds].solve_seconds;
      sratio[rep] = r->setup_seconds / res[rep * n_kinds].setup_seconds;
      same &= r->identical;
    }
    const amg_result *last = &res[(o->repeat - 1) * n_kinds + k];
    double solve = driver_median(so, o->repeat);
    char plan[32] = "-";
    if (k > 0) snprintf(plan, sizeof plan, "%.3f", 1e3 * driver_median(pl, o->repeat));
    printf("%-10s %6d %12.4e %9.4f %9.4f %9.3f %9.3f %9s %9.3f %9lld  %s\n", kind_name(o, k),
           last->iterations, last->residual, driver_median(su, o->repeat), solve,
           driver_median(sratio, o->repeat), driver_median(ratio, o->repeat), plan,
           1e3 * solve / (last->iterations ? last->iterations : 1), (long long)last->through_halo,
           k == 0 ? "(reference)"
           : same ? "yes"
                  : "NO");
  }
  printf("(medians of %d; setup-s, solve-s the most of any rank; setup/hy, solve/hy the "
         "medians of each round's ratios to hypre's; plan-ms the creation of halo's plans of the "
         "solve's packages (at their first exchange), summed; iter-ms solve-s per iteration)\n",
         o->repeat);
  /* per level: the levels of the last round; times the medians over the rounds */
  const amg_result *h = &res[(o->repeat - 1) * n_kinds];
  printf("\nexchanges of one solve by level (ms in them, the most of any rank, median over the "
         "rounds; messages of each of halo's plans):\n");
  int with_auto = 0; /* the last strategy auto: its choice per level */
  for (int k = 1; k < n_kinds; k++)
    if (o->strategies[k - 1] == HALO_STRATEGY_AUTO) with_auto = k;
  printf("%5s %3s %10s %12s %6s %6s", "level", "mat", "rows", "nonzeros", "ranks", "xchg");
  for (int k = 0; k < n_kinds; k++) printf(" %10s", kind_name(o, k));
  printf("  %-14s%s\n", n_kinds > 1 ? "messages" : "",
         with_auto ? "auto's choice (modeled us)" : "");
  for (int i = 0; i < h->n_levels; i++) {
    const amg_level_time *t = &h->lt[i];
    char lvl[16] = "-";
    if (t->level >= 0) snprintf(lvl, sizeof lvl, "%d", t->level);
    printf("%5s %3c %10lld %12lld %6lld %6lld", lvl, t->matrix, (long long)t->rows,
           (long long)t->nonzeros, (long long)t->ranks_with_rows, (long long)t->exchanges);
    const amg_level_time *a = NULL;
    for (int k = 0; k < n_kinds; k++) {
      double ms[AMG_MAX_REPEAT];
      int n_ms = 0;
      for (int rep = 0; rep < o->repeat; rep++) {
        const amg_result *r = &res[rep * n_kinds + k];
        for (int j = 0; j < r->n_levels; j++)
          if (r->lt[j].level == t->level && r->lt[j].matrix == t->matrix) {
            ms[n_ms++] = 1e3 * r->lt[j].seconds;
            if (k == with_auto && r->lt[j].planned) a = &r->lt[j];
          }
      }
      printf(" %10.3f", n_ms ? driver_median(ms, n_ms) : -1.0);
    }
    char msgs[64] = "";
    for (int k = 1, len = 0; k < n_kinds && len < (int)sizeof msgs; k++) {
      const amg_result *r = &res[(o->repeat - 1) * n_kinds + k];
      long long m = -1;
      for (int j = 0; j < r->n_levels; j++)
        if (r->lt[j].level == t->level && r->lt[j].matrix == t->matrix && r->lt[j].planned)
          m = (long long)r->lt[j].messages;
      len += snprintf(msgs + len, sizeof msgs - (size_t)len, "%s%lld", k > 1 ? "/" : "", m);
    }
    printf("  %-14s", msgs);
    if (a) printf("%s (%.1f)", halo_strategy_name(a->strategy), 1e6 * a->modeled);
    printf("\n");
  }
  fflush(stdout);
}

int cmd_amg(int argc, char **argv, MPI_Comm comm) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  amg_opts o;
  amg_opts_default(&o);
  int code = parse(argc, argv, rank, &o);
  if (code >= 0) return code;
  if (progress_setup(rank, o.quiet)) return EXIT_USAGE;
  HYPRE_Init();
  amg_problem pb;
  memset(&pb, 0, sizeof pb);
  amg_hierarchy H;
  memset(&H, 0, sizeof H);
  const int n_kinds = o.n_strategies + 1;
  amg_result *res = calloc((size_t)(o.repeat * n_kinds), sizeof *res);
  halo_status st = res ? HALO_SUCCESS : HALO_ERR_OUT_OF_MEMORY;
  st = halo_status_agree(comm, st);
  if (st == HALO_SUCCESS) st = amg_problem_create(comm, &o, &pb);
  /* --simulate P: at most as many ranks holding rows as the finest level has rows, checked
   * as halo simulate checks --ranks, before any solve (the same on every rank) */
  int refused = 0;
  for (int s = 0; s < o.n_sim && st == HALO_SUCCESS && !refused; s++) {
    char why[512];
    if (!input_check_ranks(&o.in, pb.n_rows, o.sim_ranks[s], o.opts.ranks_per_node, why,
                           sizeof why)) {
      const char *reason = strstr(why, ": "); /* after input_check_ranks' "--ranks P: " */
      driver_error(rank, "amg", "--simulate %d: %s", o.sim_ranks[s], reason ? reason + 2 : why);
      refused = 1;
      st = HALO_ERR_INVALID_ARG;
    }
  }
  code = EXIT_OK;
  /* rounds: hypre's exchange, then each strategy of halo's, repeat times */
  for (int rep = 0; rep < o.repeat && st == HALO_SUCCESS; rep++)
    for (int k = 0; k < n_kinds && st == HALO_SUCCESS; k++) {
      amg_result *r = &res[rep * n_kinds + k];
      st = run_once(&pb, &o, k, rep == 0 && k == 0 && o.n_sim > 0, r, k ? pb.x_ref : NULL, &H);
      if (st == HALO_SUCCESS && o.view && rep == o.repeat - 1 && k > 0) {
        if (rank == 0)
          printf("\nhalo amg: libhalo_hypre's report of the last solve with %s:\n",
                 kind_name(&o, k));
        st = halo_hypre_view(comm, stdout);
      }
    }
  if (st == HALO_SUCCESS) {
    if (rank == 0 && !o.quiet) print_results(&pb, &o, res, n_kinds);
    for (int rep = 0; rep < o.repeat; rep++)
      for (int k = 1; k < n_kinds; k++) {
        const amg_result *r = &res[rep * n_kinds + k];
        if (!r->identical && code == EXIT_OK) {
          driver_error(rank, "amg", "the solution with halo's %s exchange is not hypre's",
                       kind_name(&o, k));
          code = EXIT_CHECK;
        }
        /* a solve without an iteration may make no product at all (hypre stops at a zero or
         * non-finite first residual; fuzz_amg found one): nothing to go through halo then */
        if (r->through_halo == 0 && r->iterations > 0 && code == EXIT_OK) {
          driver_error(rank, "amg",
                       "no exchange went through halo with %s: hypre's calls did not reach "
                       "libhalo_hypre (a static or -Bsymbolic libHYPRE?)",
                       kind_name(&o, k));
          code = EXIT_CHECK;
        }
      }
  }
  for (int s = 0; s < o.n_sim && st == HALO_SUCCESS; s++)
    st = amg_simulate(comm, &o, &pb, &H, o.sim_ranks[s], &res[1 < n_kinds ? 1 : 0]);
  if (st != HALO_SUCCESS) {
    if (!amg_error_printed() && !refused)
      driver_error(rank, "amg", "%s",
                   halo_last_error()[0] ? halo_last_error() : halo_status_string(st));
    code = EXIT_ERROR;
  }
  halo_hypre_set_options(NULL);
  amg_hierarchy_free(&H);
  amg_problem_free(&pb);
  HYPRE_Finalize();
  free(res);
  return code;
}
