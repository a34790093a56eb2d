/* libhalo_mpi_live (mpi_live.c): MPI objects alive in this process. */
#ifndef HALO_TESTS_MPI_LIVE_H
#define HALO_TESTS_MPI_LIVE_H

/** Persistent requests, communicators, windows, groups and datatypes made
 *  minus those freed, since the process started. */
long halo_mpi_live(void);

#endif
