/* halo params: the machine parameters of the performance model (DESIGN.md
 * §6, include/halo/model.h). `measure` measures and fits them on the ranks
 * it runs on (halo_params_measure) and writes the file; `show` prints a set
 * and so checks a file. This file is the command line alone. */
#define _POSIX_C_SOURCE 200809L /* gethostname, gmtime_r */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "driver.h"
#include "halo/model.h"

static void usage(void) {
  printf("usage: mpirun -n P halo params COMMAND [options]\n"
         "\n"
         "The machine parameters of halo's performance model: postal alpha and beta of\n"
         "messages by locality and protocol, of host-device copies, and a node's injection\n"
         "limit. A set is a file of 'key = value' lines or a built-in name (lassen, h200).\n"
         "\n"
         "commands:\n"
         "  measure   measure and fit them on this machine, write a parameter file\n"
         "  show      print a set (a built-in name or a file): checks a file\n"
         "\n"
         "  halo params COMMAND --help   options of a command\n"
         "  halo params -h, --help       this text\n" HALO_TOOL_GUIDE);
}

static void usage_show(void) {
  printf("usage: halo params show NAME|FILE\n"
         "\n"
         "Reads a parameter set, a built-in one by name (lassen, h200) or a file, and prints it\n"
         "as a parameter file: every key, with the values it read. A file with an error\n"
         "(a missing, unknown or repeated key, a bad value) is named with its line.\n"
         "\n"
         "  -h, --help             this text\n"
         "\n"
         "exit status: 0 ok, 1 the set cannot be read, 2 bad command line\n" HALO_TOOL_GUIDE);
}

static void usage_measure(void) {
  printf("usage: mpirun -n P halo params measure [-o FILE] [options]\n"
         "\n"
         "Measures the parameters of halo's performance model on the ranks it runs on\n"
         "and writes a parameter file (to stdout without -o, the report then as '#' lines):\n"
         "  - ping-pong of rank 0 with a partner on its socket, on the other socket of\n"
         "    its node and on another node, the other ranks waiting: per size the median\n"
         "    half round trip; cpu.<protocol>.<locality> fitted per protocol range;\n"
         "  - injection (max-rate): k = 1, 2, 4, ..., K ranks of rank 0's node ping-pong\n"
         "    large messages with k ranks of another node at once; injection.beta is the\n"
         "    fitted s/byte of the node's total at the largest k;\n"
         "  - with CUDA and a device on every rank: cudaMemcpyAsync sweeps by 1 process\n"
         "    and by 4 at once (copy.*), and device-aware messages through halo's own\n"
         "    exchange (gpu.*): nccl when each rank has its own GPU, else ipc.\n"
         "A locality with no pair of ranks is copied from the nearest measured one; what\n"
         "cannot be measured here comes from --base. The file says so next to those keys.\n"
         "\n"
         "  -o, --output FILE      write the parameter file there [stdout]\n"
         "  --save                 write it where plans look for this machine's set when\n"
         "                         neither the option params nor HALO_PARAMS names one:\n"
         "                         $XDG_CACHE_HOME/halo/params-MACHINE, else\n"
         "                         ~/.cache/halo/params-MACHINE (MACHINE: the host name\n"
         "                         without its domain and trailing digits); the default\n"
         "                         strategy auto then chooses by it\n"
         "  --ranks-per-node K     virtual nodes of K consecutive ranks, for off-node pairs\n"
         "                         when all ranks share one machine [unset: the nodes of\n"
         "                         MPI, MPI_COMM_TYPE_SHARED]\n"
         "  --min-bytes N          smallest message [8]\n"
         "  --max-bytes N          largest message [16777216]; the sizes: the smallest,\n"
         "                         the largest, and the powers of two and their midpoints\n"
         "                         (1.5 x) in between\n"
         "  --iterations N         timed round trips per size, after 1 + N/10 untimed\n"
         "                         ones [100]\n"
         "  --short-max B          protocol switch short -> eager, in bytes [256]\n"
         "  --eager-max B          protocol switch eager -> rendezvous, in bytes [16384]\n"
         "  --fit relative|absolute\n"
         "                         least squares of the relative or absolute errors\n"
         "                         [relative]; a negative alpha or beta is set to 0 and\n"
         "                         the other refitted\n"
         "  --base NAME|FILE       the set the unmeasured keys come from [lassen]\n"
         "  --name WORD            name of the measured set [measured]\n"
         "  --quiet                no report lines: only the parameter file (on stdout\n"
         "                         without -o), and errors\n"
         "  -h, --help             this text\n"
         "\n"
         "Every protocol range ([min, short-max), [short-max, eager-max), [eager-max, max])\n"
         "must hold two sizes. A rank's socket is the physical package of the CPU it runs\n"
         "on (bind the ranks, e.g. mpirun --bind-to core, for a stable answer).\n"
         "\n"
         "exit status: 0 ok, 1 error, 2 bad command line\n" HALO_TOOL_GUIDE);
}

/* ---- halo params show ---------------------------------------------------- */

static int cmd_show(int argc, char **argv, MPI_Comm comm) {
  int rank, code = EXIT_OK;
  MPI_Comm_rank(comm, &rank);
  const char *what = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      if (rank == 0) usage_show();
      return EXIT_OK;
    }
    if (argv[i][0] == '-' || what) {
      driver_error(rank, "params show", "%s '%s' (usage: halo params show NAME|FILE)",
                   argv[i][0] == '-' ? "unknown option" : "one set at a time, not also", argv[i]);
      return EXIT_USAGE;
    }
    what = argv[i];
  }
  if (!what) {
    driver_error(rank, "params show",
                 "give a set: halo params show NAME|FILE (built-in: lassen, h200)");
    return EXIT_USAGE;
  }
  if (rank == 0) {
    halo_params p;
    halo_status st = halo_params_load(what, &p);
    if (st == HALO_SUCCESS) st = halo_params_write(&p, stdout);
    if (st != HALO_SUCCESS) {
      driver_error(0, "params show", "%s", halo_last_error());
      code = EXIT_ERROR;
    }
  }
  MPI_Bcast(&code, 1, MPI_INT, 0, comm);
  return code;
}

/* ---- halo params measure ------------------------------------------------- */

typedef struct {
  halo_params_measure_options o;
  const char *out; /* -o FILE; NULL: stdout */
  int quiet;       /* no report lines */
  int save;        /* --save: out is the machine's file */
  char path[1024]; /* the machine's file */
} measure_cli;

/* A message of halo_params_measure_check() with the options named as flags
 * ("min_bytes" -> "--min-bytes"): the fields the command line sets. */
static void flag_names(const char *msg, char *buf, size_t len) {
  static const char *const field[][2] = {{"min_bytes", "--min-bytes"},
                                         {"max_bytes", "--max-bytes"},
                                         {"short_max", "--short-max"},
                                         {"eager_max", "--eager-max"},
                                         {"name", "--name"}};
  const int n_fields = (int)(sizeof field / sizeof field[0]);
  size_t w = 0;
  for (const char *p = msg; *p && w + 1 < len;) {
    int f = 0;
    for (; f < n_fields; f++) {
      const size_t k = strlen(field[f][0]);
      const int starts = p == msg || !(p[-1] == '_' || (p[-1] >= 'a' && p[-1] <= 'z'));
      const int ends = !(p[k] == '_' || (p[k] >= 'a' && p[k] <= 'z'));
      if (starts && strncmp(p, field[f][0], k) == 0 && ends) break;
    }
    if (f < n_fields) {
      w += (size_t)snprintf(buf + w, len - w, "%s", field[f][1]);
      p += strlen(field[f][0]);
    } else {
      buf[w++] = *p++;
    }
    if (w >= len) w = len - 1;
  }
  buf[w] = '\0';
}

/* Parse the options (the same on every rank, so every rank returns the same
 * code; messages on rank 0). Returns -1 to go on, else the exit code. */
static int parse_measure(int argc, char **argv, int rank, int size, measure_cli *c) {
  halo_params_measure_options *o = &c->o;
  *o = halo_params_measure_options_default();
  args_t a = {argc, 1, argv, "params measure", NULL, rank};
  const int64_t big = INT64_C(1) << 30;
  int64_t v;
  for (; a.i < argc; a.i++) {
    int m;
    if (args_flag(&a, "--help") || args_flag(&a, "-h")) {
      if (rank == 0) usage_measure();
      return EXIT_OK;
    } else if ((m = args_take(&a, "-o")) || (m = args_take(&a, "--output"))) {
      if (m < 0) return EXIT_USAGE;
      c->out = a.value;
    } else if (args_flag(&a, "--save")) {
      c->save = 1;
    } else if ((m = args_take(&a, "--ranks-per-node"))) {
      if (m < 0 || !args_int(&a, "--ranks-per-node", 1, 1 << 30, &v)) return EXIT_USAGE;
      o->ranks_per_node = (int)v;
    } else if ((m = args_take(&a, "--min-bytes"))) {
      if (m < 0 || !args_int(&a, "--min-bytes", 1, big, &o->min_bytes)) return EXIT_USAGE;
    } else if ((m = args_take(&a, "--max-bytes"))) {
      if (m < 0 || !args_int(&a, "--max-bytes", 1, big, &o->max_bytes)) return EXIT_USAGE;
    } else if ((m = args_take(&a, "--iterations"))) {
      if (m < 0 || !args_int(&a, "--iterations", 1, 1000000, &v)) return EXIT_USAGE;
      o->iterations = (int)v;
    } else if ((m = args_take(&a, "--short-max"))) {
      if (m < 0 || !args_int(&a, "--short-max", 1, big, &o->short_max)) return EXIT_USAGE;
    } else if ((m = args_take(&a, "--eager-max"))) {
      if (m < 0 || !args_int(&a, "--eager-max", 1, big, &o->eager_max)) return EXIT_USAGE;
    } else if ((m = args_take(&a, "--fit"))) {
      if (m < 0) return EXIT_USAGE;
      if (strcmp(a.value, "relative") == 0)
        o->fit = HALO_FIT_RELATIVE;
      else if (strcmp(a.value, "absolute") == 0)
        o->fit = HALO_FIT_ABSOLUTE;
      else {
        args_error(&a, "--fit '%s': expected relative or absolute", a.value);
        return EXIT_USAGE;
      }
    } else if (args_flag(&a, "--quiet")) {
      c->quiet = 1;
    } else if ((m = args_take(&a, "--base"))) {
      if (m < 0) return EXIT_USAGE;
      o->base = a.value;
    } else if ((m = args_take(&a, "--name"))) {
      if (m < 0) return EXIT_USAGE;
      o->name = a.value;
    } else {
      args_error(&a, "unknown option '%s'", argv[a.i]);
      return EXIT_USAGE;
    }
  }
  if (halo_params_measure_check(o) != HALO_SUCCESS) {
    char msg[1024];
    flag_names(halo_last_error(), msg, sizeof msg);
    if (msg[0] == '-') /* about a flag: where to read about it */
      args_error(&a, "%s", msg);
    else /* about the sizes: it names the flags itself */
      driver_error(rank, a.cmd, "%s", msg);
    return EXIT_USAGE;
  }
  if (c->save && c->out) {
    args_error(&a, "--save and -o: one place to write the set");
    return EXIT_USAGE;
  }
  if (c->save) {
    if (halo_params_cache_path(c->path, sizeof c->path) != HALO_SUCCESS || !c->path[0]) {
      driver_error(rank, a.cmd, "--save: %s",
                   c->path[0] ? halo_last_error()
                              : "neither XDG_CACHE_HOME nor HOME is set: give -o FILE");
      return EXIT_USAGE;
    }
    c->out = c->path;
  }
  if (size < 2) {
    driver_error(rank, a.cmd,
                 "needs at least 2 ranks (mpirun -n 2 or more): it measures "
                 "messages between ranks");
    return EXIT_USAGE;
  }
  return -1;
}

/* The report: rank 0's lines, as '#' lines when the file goes to stdout. */
static void report_line(const char *line, void *arg) {
  fputs((const char *)arg, stdout);
  fputs(line, stdout);
  fflush(stdout);
}

/* The file's header lines: where, when, on what, by which command, how fitted. */
static char *file_header(const measure_cli *c, const halo_params_measured *m, int argc,
                         char **argv) {
  size_t len = 1024;
  for (int i = 0; i < argc; i++) len += strlen(argv[i]) + 1;
  char *h = malloc(len), host[256] = "unknown", date[64] = "";
  if (!h) return NULL;
  gethostname(host, sizeof host);
  host[sizeof host - 1] = '\0';
  const time_t now = time(NULL);
  struct tm tm_utc;
  if (gmtime_r(&now, &tm_utc)) strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", &tm_utc);
  const halo_params_measure_options *o = &c->o;
  size_t w =
      (size_t)snprintf(h, len, "measured by halo params measure on %s, %s: %d ranks, %d nodes",
                       host, date, m->ranks, m->nodes);
  if (o->ranks_per_node)
    w += (size_t)snprintf(h + w, len - w, " (virtual, %d rank%s each)", o->ranks_per_node,
                          o->ranks_per_node == 1 ? "" : "s");
  w += (size_t)snprintf(h + w, len - w, "\ncommand: halo params");
  for (int i = 0; i < argc; i++) w += (size_t)snprintf(h + w, len - w, " %s", argv[i]);
  snprintf(h + w, len - w,
           "\nfits: least squares of the %s errors per protocol range, sizes %lld to %lld bytes, "
           "median of %d round trips each\n",
           o->fit == HALO_FIT_RELATIVE ? "relative" : "absolute", (long long)o->min_bytes,
           (long long)o->max_bytes, o->iterations);
  return h;
}

/* Rank 0: the measured set with its header, to f. Returns 0, or 1 after an error message. */
static int write_file(const measure_cli *c, const halo_params_measured *m, int argc, char **argv,
                      FILE *f) {
  char *header = file_header(c, m, argc, argv);
  if (!header) {
    driver_error(0, "params measure", "out of memory");
    return 1;
  }
  const halo_status st = halo_params_write_measured(m, header, f);
  free(header);
  if (st != HALO_SUCCESS) {
    driver_error(0, "params measure", "%s: %s", c->out ? c->out : "stdout", halo_last_error());
    return 1;
  }
  return 0;
}

static int cmd_measure(int argc, char **argv, MPI_Comm comm) {
  int rank, size, failed = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  measure_cli c = {.out = NULL, .quiet = 0};
  int code = parse_measure(argc, argv, rank, size, &c);
  if (code >= 0) return code;
  /* the base set and the output file, before anything is measured */
  FILE *out = NULL;
  if (rank == 0) {
    halo_params base;
    if (halo_params_load(c.o.base ? c.o.base : "lassen", &base) != HALO_SUCCESS) {
      driver_error(0, "params measure", "--base: %s", halo_last_error());
      failed = 1;
    } else if (c.save && halo_params_cache_open(c.path, sizeof c.path, &out) != HALO_SUCCESS) {
      driver_error(0, "params measure", "--save: %s", halo_last_error());
      failed = 1;
    } else if (c.out && !out && !(out = fopen(c.out, "w"))) {
      driver_error(0, "params measure", "cannot write %s: %s", c.out, strerror(errno));
      failed = 1;
    } else if (!c.out) {
      out = stdout;
    }
  }
  MPI_Bcast(&failed, 1, MPI_INT, 0, comm);
  if (failed) return EXIT_ERROR;
  if (!c.quiet) {
    c.o.report = report_line;
    c.o.report_arg = c.out ? "" : "# ";
  }
  halo_params_measured m;
  if (halo_params_measure(comm, &c.o, &m) != HALO_SUCCESS) {
    driver_error(rank, "params measure", "%s", halo_last_error());
    code = EXIT_ERROR;
  } else {
    code = rank == 0 && write_file(&c, &m, argc, argv, out) ? EXIT_ERROR : EXIT_OK;
    if (code == EXIT_OK && c.out && !c.quiet && rank == 0)
      printf("wrote %s (parameter set '%s')\n", c.out, m.params.name);
  }
  if (rank == 0 && out && out != stdout && fclose(out) != 0 && code == EXIT_OK) {
    driver_error(0, "params measure", "cannot write %s: %s", c.out, strerror(errno));
    code = EXIT_ERROR;
  }
  MPI_Bcast(&code, 1, MPI_INT, 0, comm);
  return code;
}

int cmd_params(int argc, char **argv, MPI_Comm comm) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    if (rank == 0) usage();
    return argc < 2 ? EXIT_USAGE : EXIT_OK;
  }
  if (strcmp(argv[1], "show") == 0) return cmd_show(argc - 1, argv + 1, comm);
  if (strcmp(argv[1], "measure") == 0) return cmd_measure(argc - 1, argv + 1, comm);
  driver_error(rank, "params",
               "unknown command '%s' (commands: measure, show; see halo params "
               "--help)",
               argv[1]);
  return EXIT_USAGE;
}
