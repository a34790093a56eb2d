/* Shared by the libFuzzer targets: the entry points, and a failure that
 * libFuzzer reports as a crash (with the input saved). */
#ifndef HALO_FUZZ_UTIL_H
#define HALO_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A property the library broke on this input. */
#define FUZZ_ASSERT(cond)                                                                          \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "%s:%d: property failed: %s\n", __FILE__, __LINE__, #cond);                  \
      abort();                                                                                     \
    }                                                                                              \
  } while (0)

/* The input as a NUL-terminated string (free it); NULL when out of memory. */
static inline char *fuzz_text(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return NULL;
  if (size) memcpy(text, data, size);
  text[size] = '\0';
  return text;
}

/* The readers' limit of the targets: small, so that each input is quick
 * (a file within it still takes up to this much). */
#define FUZZ_INPUT_LIMIT "1M"

#endif
