/* The long rows of a block, as halo's CSR kernel takes them (device arrays):
 * shared by spmv_cuda.c, which makes them, and spmv_kernels.cu. Plain C, no
 * CUDA header. */
#ifndef HALO_SPMV_LONG_ROWS_H
#define HALO_SPMV_LONG_ROWS_H

#include <stdint.h>

typedef struct {
  int64_t above;            /* rows with more entries are long; INT64_MAX: none */
  int64_t n_tiles;          /* tiles of all long rows (0: none) */
  const int32_t *long_rows; /* the long rows (rows of the block) */
  const int32_t *tile_ptr;  /* tiles tile_ptr[i] .. tile_ptr[i+1]) are long row i's */
  const int32_t *tile_row;  /* n_tiles: the long row (index into long_rows) of each tile */
  double *partial;          /* n_tiles: the tiles' sums */
  unsigned *count;          /* one per long row: tiles done, zero between products */
} halo_cuda_long_rows;

#endif
