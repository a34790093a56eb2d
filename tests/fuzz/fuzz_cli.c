/* libFuzzer target: the option parsing of the halo command line. An input is
 * a command line, one argument a line: the first names the command (spmv,
 * simulate, params, convert), the rest are its options. Each command runs as
 * the driver runs it (cmd_spmv, ... on MPI_COMM_SELF), with arguments added
 * at the end so that it stops before any work: spmv and simulate get a
 * matrix that does not exist (so do --matrix and --gen of the input: both is
 * a usage error), convert a third file name (a usage error). Every argument
 * also goes through the name parsers the options use (generators,
 * partitions, strategies, transports, memory kinds). Standard output goes
 * to /dev/null (.ci/fuzz.sh also drops the commands' messages on standard
 * error: -close_fd_mask=3); stdin is /dev/null, for `params show /dev/stdin`. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <sanitizer/lsan_interface.h>
#include <string.h>

#include "../../tools/driver.h"
#include "fuzz_util.h"

enum { MAX_ARGS = 64, MAX_ARG = 4096 };

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  int provided;
  /* no signal handlers of Open MPI's: a failed property's abort stays libFuzzer's, which
   * saves the input (Open MPI's handler, installed after libFuzzer's, ended the process
   * without it) */
  setenv("OMPI_MCA_opal_signal", "", 1);
  __lsan_disable(); /* what MPI keeps to the end is not the commands' */
  MPI_Init_thread(NULL, NULL, MPI_THREAD_SINGLE, &provided);
  __lsan_enable();
  if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "r", stdin)) abort();
  return 0;
}

/* The name parsers, on one argument. */
static void parse_names(const char *s) {
  halo_gen g;
  halo_partition_kind part;
  halo_strategy strat;
  halo_transport tr;
  halo_memory mem;
  if (halo_gen_parse(s, &g) == HALO_SUCCESS) {
    int64_t n = 0;
    char name[128];
    FUZZ_ASSERT(halo_gen_size(&g, &n, NULL) == HALO_SUCCESS && n >= 1);
    halo_gen_name(&g, name, sizeof name);
  }
  if (halo_partition_from_name(s, &part) == HALO_SUCCESS)
    FUZZ_ASSERT(strcmp(halo_partition_name(part), s) == 0);
  if (halo_strategy_from_name(s, &strat) == HALO_SUCCESS)
    FUZZ_ASSERT(strcmp(halo_strategy_name(strat), s) == 0);
  if (halo_transport_from_name(s, &tr) == HALO_SUCCESS) (void)halo_transport_name(tr);
  (void)halo_memory_from_name(s, &mem);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const char *const stop_run[] = {"--matrix", "/nonexistent/fuzz.mtx"};
  static const char *const stop_convert[] = {"/nonexistent/a", "/nonexistent/b", "/nonexistent/c"};
  char *text = fuzz_text(data, size), *argv[MAX_ARGS + 4];
  int argc = 0;
  if (!text) return 0;
  for (char *p = text; argc < MAX_ARGS;) { /* one argument a line */
    char *nl = strchr(p, '\n');
    if (nl) *nl = '\0';
    if (strlen(p) <= MAX_ARG) argv[argc++] = p;
    if (!nl) break;
    p = nl + 1;
  }
  for (int i = 0; i < argc; i++) parse_names(argv[i]);
  const char *cmd = argc > 0 ? argv[0] : "";
  int (*run)(int, char **, MPI_Comm) = NULL;
  const char *const *extra = NULL;
  int n_extra = 0;
  if (strcmp(cmd, "spmv") == 0)
    run = cmd_spmv, extra = stop_run, n_extra = 2;
  else if (strcmp(cmd, "simulate") == 0)
    run = cmd_simulate, extra = stop_run, n_extra = 2;
  else if (strcmp(cmd, "params") == 0)
    run = cmd_params;
  else if (strcmp(cmd, "convert") == 0)
    run = cmd_convert, extra = stop_convert, n_extra = 3;
  if (run) {
    for (int k = 0; k < n_extra; k++) argv[argc++] = (char *)extra[k];
    argv[argc] = NULL;
    const int code = run(argc, argv, MPI_COMM_SELF);
    FUZZ_ASSERT(code == EXIT_OK || code == EXIT_ERROR || code == EXIT_USAGE);
  }
  free(text);
  return 0;
}
