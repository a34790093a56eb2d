/* libFuzzer target: the input path of `halo amg`. An input is a Matrix
 * Market file; `halo amg --matrix FILE` runs on it on one rank (cmd_amg on
 * MPI_COMM_SELF: hypre's exchange and halo's standard strategy, one set-up
 * and solve each, at most 5 iterations), so that whatever passes halo's
 * checks of the input (square, rows, a nonzero diagonal in every row) goes
 * to BoomerAMG. Properties: the command ends with 0 (solved) or 1 (a clear
 * error); a crash or an abort inside hypre, or an exit status 3 (halo's
 * exchange gave another solution than hypre's), is a finding. Standard
 * output goes to /dev/null. */
#define _POSIX_C_SOURCE 200809L /* setenv, mkstemp */
#include <sanitizer/lsan_interface.h>
#include <string.h>
#include <unistd.h>

#include "../../tools/driver.h"
#include "fuzz_util.h"

static char path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  int provided;
  setenv("HALO_INPUT_LIMIT", FUZZ_INPUT_LIMIT, 1);
  /* no signal handlers of Open MPI's: a failed property's abort stays libFuzzer's, which
   * saves the input (Open MPI's handler, installed after libFuzzer's, ended the process
   * without it) */
  setenv("OMPI_MCA_opal_signal", "", 1);
  __lsan_disable(); /* what MPI keeps to the end is not the command's */
  MPI_Init_thread(NULL, NULL, MPI_THREAD_SINGLE, &provided);
  __lsan_enable();
  if (!freopen("/dev/null", "w", stdout)) abort();
  snprintf(path, sizeof path, "/tmp/halo_fuzz_amg_%d.mtx", (int)getpid());
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FILE *f = fopen(path, "wb");
  if (!f) return 0;
  const int ok = fwrite(data, 1, size, f) == size;
  if (fclose(f) != 0 || !ok) return 0;
  char *argv[] = {"amg", "--matrix",   path,       "--repeat", "1", "--maxit",
                  "5",   "--strategy", "standard", "--quiet",  NULL};
  const int code = cmd_amg((int)(sizeof argv / sizeof argv[0]) - 1, argv, MPI_COMM_SELF);
  if (code != 0 && code != 1) fprintf(stderr, "halo amg exit status %d\n", code);
  FUZZ_ASSERT(code == 0 || code == 1);
  unlink(path);
  return 0;
}
