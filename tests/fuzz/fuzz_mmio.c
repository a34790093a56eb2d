/* libFuzzer target: the Matrix Market reader on text in memory
 * (halo_mm_parse, the core of halo_mm_read). A file read without error is a
 * valid CSR matrix; every other input is an error status with a message. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <string.h>

#include "fuzz_csr.h"
#include "io/mm_csr.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  setenv("HALO_INPUT_LIMIT", FUZZ_INPUT_LIMIT, 1);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_text(data, size);
  if (!text) return 0;
  halo_mm_options o = halo_mm_options_default();
  o.sum_duplicates = (int)(size & 1); /* both ways over the corpus */
  halo_csr A;
  fuzz_check_read(halo_mm_parse("fuzz.mtx", text, size, &o, &A), &A);
  free(text);
  return 0;
}
