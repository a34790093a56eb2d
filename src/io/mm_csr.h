/* The Matrix Market reader's pieces: entries in coordinate form made CSR,
 * and the reader's entry point on text in memory. */
#ifndef HALO_IO_MM_CSR_H
#define HALO_IO_MM_CSR_H

#include "halo/io.h"
#include "halo_impl.h"

enum { MM_GENERAL, MM_SYMMETRIC, MM_SKEW };

/* Entries as read, before the mirror of symmetric files. */
typedef struct {
  int64_t count;
  int64_t *rows, *cols; /* 0-based */
  double *vals;         /* NULL for pattern matrices */
} mm_coo;

void mm_coo_free(mm_coo *e);

/**
 * The CSR arrays of an m x n matrix from its entries (freed on the way),
 * mirroring those of a symmetric or skew-symmetric file (symmetry MM_*);
 * rows sorted by column. Repeated entries are summed (sum_duplicates), or
 * else the first found is named in dup_p (0-based row and column) and out
 * is left empty: the caller names the lines.
 */
halo_status mm_build_csr(int64_t m, int64_t n, int symmetry, mm_coo *e, int sum_duplicates,
                         halo_csr *out, int64_t dup_p[2]);

/**
 * halo_mm_read() on the text of a file already in memory: @p len bytes at
 * @p text, with text[len] == '\0'; @p name stands for the path in messages.
 * Internal (the fuzz target tests/fuzz/fuzz_mmio.c calls it).
 */
halo_status halo_mm_parse(const char *name, const char *text, size_t len,
                          const halo_mm_options *opts, halo_csr *A);

#endif
