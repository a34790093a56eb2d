/* Progress lines of the driver: while a matrix is read, written or
 * generated, rank 0 draws "halo: reading big.mtx: 42% (1.2 GB of 2.9 GB)"
 * on stderr from the library's reports (halo_io_set_progress), once the work
 * has taken a second, when stderr reaches a terminal (directly, or through
 * an MPI launcher's pipe while stdout is one) and --quiet is not given.
 * HALO_PROGRESS=1 draws them at once and on any stderr (for logs and tests),
 * HALO_PROGRESS=0 never. */
#ifndef HALO_TOOLS_PROGRESS_H
#define HALO_TOOLS_PROGRESS_H

/* Whether this process draws progress lines (rank 0, not quiet, the
 * terminal or HALO_PROGRESS); once per command, before progress_begin.
 * Nonzero for a HALO_PROGRESS that is neither 0 nor 1 (rank 0 says so): the
 * command then stops with EXIT_USAGE on every rank. */
int progress_setup(int rank, int quiet);

/* The io calls that follow report about @p name (a file, shown without its
 * directories, or a generated matrix's spec). */
void progress_begin(const char *name);

/* The work is done: a line drawn is cleared on a terminal, else ended with a
 * newline; the io calls report to nobody again. */
void progress_end(void);

#endif
