/* libFuzzer target: the wisdom file's reader and writer (src/model/wisdom.c).
 * Any input, as the file, is either read (its entries) or ignored with a
 * reason, never a crash or unbounded memory; storing an entry over it then
 * leaves a file whose read gives that entry back and no reason; noting uses
 * keeps it readable. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <sanitizer/lsan_interface.h>
#include <unistd.h>

#include "fuzz_util.h"
#include "halo_impl.h"
#include "model/wisdom.h"

static char path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  int provided;
  setenv("OMPI_MCA_opal_signal", "", 1); /* libFuzzer's handlers, not Open MPI's */
  __lsan_disable();
  MPI_Init_thread(NULL, NULL, MPI_THREAD_SINGLE, &provided);
  __lsan_enable();
  snprintf(path, sizeof path, "/tmp/halo_fuzz_wisdom.%ld", (long)getpid());
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FILE *f = fopen(path, "w");
  FUZZ_ASSERT(f && (size == 0 || fwrite(data, 1, size, f) == size) && fclose(f) == 0);
  const uint64_t key = UINT64_C(0x0123456789abcdef);
  halo_wisdom_entry e, got;
  int found = 0;
  char why[256];
  FUZZ_ASSERT(halo_wisdom_find(MPI_COMM_SELF, path, key, &e, &found, why, sizeof why) ==
              HALO_SUCCESS);
  if (found) /* what the reader accepts is a known strategy and transport, in range */
    FUZZ_ASSERT(e.strategy != HALO_STRATEGY_AUTO && halo_strategy_valid(e.strategy) &&
                e.transport != HALO_TRANSPORT_AUTO && e.message_cap >= 8 && e.uses >= 1 &&
                e.measured >= 0);
  const halo_wisdom_entry mine = {HALO_STRATEGY_SPLIT, HALO_TRANSPORT_HOST, 4096, 7, 3};
  FUZZ_ASSERT(halo_wisdom_store(0, path, key, &mine) == HALO_SUCCESS);
  FUZZ_ASSERT(halo_wisdom_note_uses(path, key, 9) == HALO_SUCCESS);
  FUZZ_ASSERT(halo_wisdom_find(MPI_COMM_SELF, path, key, &got, &found, why, sizeof why) ==
              HALO_SUCCESS);
  FUZZ_ASSERT(found && why[0] == '\0' && got.strategy == mine.strategy &&
              got.transport == mine.transport && got.message_cap == mine.message_cap &&
              got.uses == mine.uses && got.measured == 9);
  remove(path);
  return 0;
}
