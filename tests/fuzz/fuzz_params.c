/* libFuzzer target: the parameter-file reader (halo_params_parse). A set
 * parsed without error writes (halo_params_write) to text that parses back
 * to the same set, bit for bit; every other input is an error status with a
 * message. */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include <string.h>

#include "fuzz_util.h"
#include "halo/model.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_text(data, size);
  if (!text) return 0;
  halo_params p, q;
  if (halo_params_parse(text, "fuzz.params", &p) == HALO_SUCCESS) {
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    FUZZ_ASSERT(f && halo_params_write(&p, f) == HALO_SUCCESS);
    fclose(f);
    FUZZ_ASSERT(halo_params_parse(out, "written", &q) == HALO_SUCCESS);
    FUZZ_ASSERT(strcmp(p.name, q.name) == 0 && p.sockets_per_node == q.sockets_per_node &&
                p.short_max == q.short_max && p.eager_max == q.eager_max &&
                p.have_ipc == q.have_ipc);
    FUZZ_ASSERT(memcmp(p.cpu, q.cpu, sizeof p.cpu) == 0 && memcmp(p.gpu, q.gpu, sizeof p.gpu) == 0);
    FUZZ_ASSERT(memcmp(p.h2d, q.h2d, sizeof p.h2d) == 0 && memcmp(p.d2h, q.d2h, sizeof p.d2h) == 0);
    FUZZ_ASSERT(p.injection_beta == q.injection_beta && p.staged_alpha == q.staged_alpha);
    FUZZ_ASSERT(!p.have_ipc || (p.ipc.alpha == q.ipc.alpha && p.ipc.beta == q.ipc.beta));
    free(out);
  } else {
    FUZZ_ASSERT(halo_last_error()[0] != '\0');
  }
  free(text);
  return 0;
}
