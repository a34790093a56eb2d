/* libFuzzer target: the serial .hcsr reader on a file in memory (fmemopen,
 * halo_hcsr_read_stream, the core of halo_hcsr_read). The last byte of an
 * input is not part of the file but a mode: bit 0 writes the right checksum
 * of the header, bit 1 the right checksums of the parts, so that inputs get
 * past them to the checks of the contents as well as failing them. */
#define _POSIX_C_SOURCE 200809L /* fmemopen, setenv */
#include <string.h>

#include "fuzz_csr.h"
#include "io/hcsr_format.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  setenv("HALO_INPUT_LIMIT", FUZZ_INPUT_LIMIT, 1);
  return 0;
}

static uint64_t get_u64(const unsigned char *p) {
  uint64_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

/* Store the checksums the file's sizes call for, where the file has them. */
static void fix_sums(unsigned char *b, size_t len, int mode) {
  if (len < HCSR_HEADER_BYTES) return;
  if (mode & 2) {
    hcsr_header h;
    memset(&h, 0, sizeof h);
    h.n_rows = (int64_t)get_u64(b + 16);
    h.nnz = (int64_t)get_u64(b + 32);
    uint32_t flags;
    memcpy(&flags, b + 12, sizeof flags);
    h.col_bytes = flags & HCSR_FLAG_COL64 ? 8 : 4;
    if (h.n_rows >= 0 && h.nnz >= 0 && hcsr_layout(&h) && h.length == (int64_t)len) {
      uint64_t s[3] = {hcsr_sum(b + h.ptr_off, 8, 0, h.n_rows + 1),
                       hcsr_sum(b + h.col_off, h.col_bytes, 0, h.nnz),
                       hcsr_sum(b + h.val_off, 8, 0, h.nnz)};
      memcpy(b + 40, s, sizeof s);
    }
  }
  if (mode & 1) {
    uint64_t f = hcsr_fnv1a64(b, 64);
    memcpy(b + 64, &f, sizeof f);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  const size_t len = size - 1;
  unsigned char *b = malloc(len);
  if (!b) return 0;
  memcpy(b, data, len);
  fix_sums(b, len, data[len]);
  FILE *fp = fmemopen(b, len, "rb");
  if (fp) {
    halo_csr A;
    fuzz_check_read(halo_hcsr_read_stream(fp, "fuzz.hcsr", &A), &A);
    fclose(fp);
  }
  free(b);
  return 0;
}
