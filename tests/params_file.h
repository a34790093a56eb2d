/* A parameter set written to a temporary file on rank 0, its path broadcast: what
 * a test gives a plan's params option. Needs _POSIX_C_SOURCE (mkstemp). */
#ifndef HALO_TEST_PARAMS_FILE_H
#define HALO_TEST_PARAMS_FILE_H

#include <stdio.h>
#include <stdlib.h>

#include "halo/model.h"
#include "test_util.h"

/* path: a template such as "/tmp/halo_test_XXXXXX", replaced by the file's name on
 * every rank; rank 0 unlinks it when the test is done with it. */
static inline void params_file_write(MPI_Comm comm, const halo_params *p, char path[64]) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) {
    const int fd = mkstemp(path);
    CHECK(fd >= 0);
    FILE *f = fdopen(fd, "w");
    CHECK(f != NULL);
    CHECK_OK(halo_params_write(p, f));
    fclose(f);
  }
  MPI_Bcast(path, 64, MPI_CHAR, 0, comm);
}

#endif
