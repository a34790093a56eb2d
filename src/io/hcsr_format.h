/* The binary CSR format (.hcsr): what its writer, its serial reader and its
 * collective reader share. The layout and the checksum are in
 * include/halo/io.h and docs/input.md. */
#ifndef HALO_IO_HCSR_FORMAT_H
#define HALO_IO_HCSR_FORMAT_H

#include <stdio.h>

#include "halo/io.h"
#include "halo_impl.h"

#define HCSR_MAGIC        "HALOCSR" /* and its terminating zero: 8 bytes */
#define HCSR_MAGIC_LEN    8
#define HCSR_VERSION      1u
#define HCSR_HEADER_BYTES 72
#define HCSR_FLAG_COL64   1u
#define HCSR_INDEX_STEP   UINT64_C(0x9e3779b97f4a7c15)
#define HCSR_FNV_BASIS    UINT64_C(0xcbf29ce484222325)
#define HCSR_FNV_PRIME    UINT64_C(0x100000001b3)
#define HCSR_MAX_READ     (1 << 30) /* bytes per read call */
#define HCSR_PIECE        (1 << 26) /* bytes per fread or fwrite call (progress reports) */

#if defined(__BYTE_ORDER__) && defined(__ORDER_BIG_ENDIAN__) &&                                    \
    __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define HCSR_BIG_ENDIAN_HOST 1
#else
#define HCSR_BIG_ENDIAN_HOST 0
#endif

enum { PART_PTR = 0, PART_COL = 1, PART_VAL = 2 };

/* The header, decoded, and where the parts lie. */
typedef struct {
  uint32_t version, flags;
  int64_t n_rows, n_cols, nnz;
  uint64_t sum[3];   /* stored checksums of the parts */
  int col_bytes;     /* 4 or 8 */
  int64_t ptr_off;   /* offset of the row pointers */
  int64_t col_off;   /* of the column indices */
  int64_t pad_bytes; /* zero bytes after the column indices */
  int64_t val_off;   /* of the values */
  int64_t length;    /* of the whole file */
} hcsr_header;

/* Sum of H(i, e_i) over elements first .. first+n-1 of a part, at p; elements
 * of esize bytes (4 or 8). */
uint64_t hcsr_sum(const void *p, int esize, int64_t first, int64_t n);
/* FNV-1a 64 of n bytes (the header's checksum). */
uint64_t hcsr_fnv1a64(const unsigned char *p, size_t n);

halo_status hcsr_no_big_endian(void);
/* A read that ended early: the file changed after its length was taken. */
halo_status hcsr_short_read(const char *path, int64_t off);
/* Refuse a path that is not a regular file (a FIFO, a device): HALO_ERR_IO; a
 * directory or a missing file is left to the open (its own message). */
halo_status hcsr_check_regular(const char *path);

/* Where the parts lie and how long the file is, from the sizes; 0 if the
 * sizes are too large for a file. */
int hcsr_layout(hcsr_header *h);
/* Decode and check the header: b holds the first min(length, 72) bytes of a
 * file of @p length bytes; the sizes are checked against the length and
 * against the readers' limit (input_limit.h). */
halo_status hcsr_decode_header(const char *path, const unsigned char *b, int64_t length,
                               hcsr_header *h);

/* The checks of the parts, each naming the file and the problem. */
halo_status hcsr_check_sum(const char *path, const hcsr_header *h, int part, uint64_t sum);
/* Row pointers ptr[0..n] of rows row0 .. row0+n: within [0, nnz], never
 * decreasing, 0 first and nnz last where they are the file's first and last. */
halo_status hcsr_check_row_ptr(const char *path, const hcsr_header *h, const int64_t *ptr,
                               int64_t row0, int64_t n);
/* The entries of rows row0 .. row0+n-1 (row pointers ptr[0..n], entries
 * from ptr[0] on in cols and vals): columns in [0, n_cols), increasing
 * within each row; values finite. */
halo_status hcsr_check_entries(const char *path, const hcsr_header *h, const int64_t *ptr,
                               int64_t row0, int64_t n, const int64_t *cols, const double *vals);
halo_status hcsr_check_padding(const char *path, const hcsr_header *h, const unsigned char *pad);
/* 4-byte column indices, read into the first half of cols, widened in
 * place (from the end, so that none is overwritten before it is read). */
void hcsr_widen(int64_t *cols, int64_t n);

/* halo_hcsr_read() on a file already open at its start (a stream of memory,
 * fmemopen, for the fuzz target tests/fuzz/fuzz_hcsr.c); @p name stands for
 * the path in messages. Internal. */
halo_status halo_hcsr_read_stream(FILE *fp, const char *name, halo_csr *A);

#endif
