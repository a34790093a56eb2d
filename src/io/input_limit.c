/* The readers' limit on what a matrix file's sizes may make them allocate. */
#include <stdio.h>

#include "input_limit.h"
#include "settings.h"

/* Bytes for a message, in decimal units: "77 B", "1.07 GB". */
static void format_bytes(double b, char *buf, size_t len) {
  static const char *const unit[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
  int u = 0;
  while (b >= 999.5 && u < (int)(sizeof unit / sizeof unit[0]) - 1) b /= 1000.0, u++;
  snprintf(buf, len, u ? "%.3g %s" : "%.0f %s", b, unit[u]);
}

halo_status halo_io_check_sizes(const char *path, int64_t rows, int64_t cols, int64_t entries,
                                int64_t file_bytes) {
  int64_t limit = 0;
  HALO_CHECK(halo_settings_input_limit(&limit));
  /* in double: the sizes may come near INT64_MAX */
  const double need = 8.0 * ((double)rows + 1.0) + 8.0 * (double)cols;
  const double beyond = need - 16.0 * (double)entries;
  if (beyond <= (double)limit) return HALO_SUCCESS;
  char b_need[32], b_beyond[32], b_limit[32], b_file[32];
  format_bytes(need, b_need, sizeof b_need);
  format_bytes(beyond, b_beyond, sizeof b_beyond);
  format_bytes((double)limit, b_limit, sizeof b_limit);
  format_bytes((double)file_bytes, b_file, sizeof b_file);
  return HALO_ERROR(HALO_ERR_OUT_OF_RANGE,
                    "%s: declares %lld rows and %lld columns for %lld entr%s (a file of %s): its "
                    "rows and columns alone need %s (8 bytes each: row pointers, vectors), %s "
                    "beyond its entries (16 bytes each); the limit is %s (HALO_INPUT_LIMIT=BYTES, "
                    "or none, raises it)",
                    path, (long long)rows, (long long)cols, (long long)entries,
                    entries == 1 ? "y" : "ies", b_file, b_need, b_beyond, b_limit);
}
