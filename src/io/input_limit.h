/* The readers' limit on what a matrix file's sizes may make them allocate. */
#ifndef HALO_IO_INPUT_LIMIT_H
#define HALO_IO_INPUT_LIMIT_H

#include "halo_impl.h"

/**
 * Refuse a matrix file whose rows and columns need much more memory than its
 * entries: 8 bytes a row (row pointers) and a column (vectors) against 16
 * bytes an entry (column index and value), beyond which at most
 * halo_settings_input_limit() bytes (HALO_INPUT_LIMIT). Rows and columns that
 * entries fill are always accepted, so what a file makes the reader allocate
 * grows with its length, plus the limit. Call it before allocating by the
 * sizes. Not collective.
 *
 * @param path        the file, for the message
 * @param rows, cols  the declared sizes
 * @param entries     the entries the file holds (not merely declares)
 * @param file_bytes  the file's length, for the message
 * @return HALO_ERR_OUT_OF_RANGE saying how much and why; HALO_ERR_INVALID_ARG
 *         for a malformed HALO_INPUT_LIMIT.
 */
halo_status halo_io_check_sizes(const char *path, int64_t rows, int64_t cols, int64_t entries,
                                int64_t file_bytes);

#endif
