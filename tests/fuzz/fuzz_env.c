/* libFuzzer target: the environment variables of the library. An input is a
 * list of assignments, one a line, "NAME=VALUE"; each NAME that starts with
 * HALO_ is set for this input (at most 32; others, and the failure injection
 * HALO_DEBUG_FAIL_*, are ignored, so that the process's own variables stay), the settings are
 * resolved (every plan option from its variable: halo_settings_resolve, as a plan does) together
 * with the readers' limit (HALO_INPUT_LIMIT) and the largest message count
 * (HALO_DEBUG_MAX_COUNT), and the variables are unset again. Properties:
 * success gives values in their documented ranges; failure gives
 * HALO_ERR_INVALID_ARG with a message that names the variable. */
#define _XOPEN_SOURCE 700 /* putenv */
#include <string.h>

#include "fuzz_util.h"
#include "halo_impl.h"
#include "settings.h"

enum { MAX_VARS = 32, MAX_VALUE = 4096 };

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  /* a parameter set named by HALO_PARAMS is read where a plan reads it, not here: the
   * resolution only names it */
  return 0;
}

/* putenv's strings (not copied, so nothing leaks: glibc's setenv keeps every value it was
 * given), and the names to unset */
static char slots[MAX_VARS][MAX_VALUE + 64], names[MAX_VARS][64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_text(data, size);
  int n = 0;
  if (!text) return 0;
  for (char *p = text; n < MAX_VARS;) { /* one assignment a line */
    char *nl = strchr(p, '\n');
    if (nl) *nl = '\0';
    char *eq = strchr(p, '=');
    const size_t name_len = eq ? (size_t)(eq - p) : 0;
    /* not the failure injection (HALO_DEBUG_FAIL_*): it fails allocations on purpose */
    if (eq && name_len > 5 && name_len < sizeof names[0] && strncmp(p, "HALO_", 5) == 0 &&
        strncmp(p, "HALO_DEBUG_FAIL", 15) != 0 && strlen(eq + 1) <= MAX_VALUE) {
      memcpy(names[n], p, name_len);
      names[n][name_len] = '\0';
      snprintf(slots[n], sizeof slots[n], "%s", p);
      if (putenv(slots[n]) == 0) n++;
    }
    if (!nl) break;
    p = nl + 1;
  }
  halo_plan_options o = halo_plan_options_default();
  halo_settings s;
  const halo_status st = halo_settings_resolve(&o, &s);
  if (st == HALO_SUCCESS) {
    const halo_plan_options *r = &s.opts;
    FUZZ_ASSERT(r->ranks_per_node >= 0);
    FUZZ_ASSERT(r->transport >= HALO_TRANSPORT_AUTO && r->transport < HALO_N_TRANSPORTS);
    FUZZ_ASSERT(r->autotune >= -2);
    FUZZ_ASSERT(s.spmv_group >= 0 && s.spmv_group <= 32 &&
                (s.spmv_group & (s.spmv_group - 1)) == 0);
    FUZZ_ASSERT(s.spmv_unroll == 1 || s.spmv_unroll == 2 || s.spmv_unroll == 4);
    FUZZ_ASSERT(s.cusparse_alg == 1 || s.cusparse_alg == 2);
    FUZZ_ASSERT(s.spmv_carveout >= -1 && s.spmv_carveout <= 100);
    FUZZ_ASSERT(s.max_count >= 1);
    FUZZ_ASSERT(s.timeout_ms >= 0);
    FUZZ_ASSERT(s.gpu_aware_mpi >= -1 && s.gpu_aware_mpi <= 1);
  } else {
    const char *msg = halo_last_error();
    FUZZ_ASSERT(st == HALO_ERR_INVALID_ARG);
    FUZZ_ASSERT(strstr(msg, "HALO_") != NULL); /* names the variable */
  }
  int64_t limit = 0;
  if (halo_settings_input_limit(&limit) == HALO_SUCCESS)
    FUZZ_ASSERT(limit >= 0);
  else
    FUZZ_ASSERT(strstr(halo_last_error(), "HALO_INPUT_LIMIT") != NULL);
  int count = 0;
  if (halo_settings_max_count(&count) == HALO_SUCCESS)
    FUZZ_ASSERT(count >= 1);
  else
    FUZZ_ASSERT(strstr(halo_last_error(), "HALO_DEBUG_MAX_COUNT") != NULL);
  for (int i = 0; i < n; i++) unsetenv(names[i]);
  free(text);
  return 0;
}
