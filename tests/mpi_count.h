/* Counters of the MPI objects a test program creates, for the tests that
 * check that nothing is created inside an exchange or a product. These
 * definitions take the place of the MPI library's (the profiling interface)
 * and call the PMPI_ originals. Include in one file of a test program. */
#ifndef HALO_TEST_MPI_COUNT_H
#define HALO_TEST_MPI_COUNT_H

#include <mpi.h>

static long n_created; /* MPI requests and communicators created */
static long n_comms;   /* communicators created */

int MPI_Send_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                  MPI_Request *req) {
  n_created++;
  return PMPI_Send_init(buf, count, type, dest, tag, comm, req);
}
int MPI_Recv_init(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                  MPI_Request *req) {
  n_created++;
  return PMPI_Recv_init(buf, count, type, source, tag, comm, req);
}
int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *req) {
  n_created++;
  return PMPI_Isend(buf, count, type, dest, tag, comm, req);
}
int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request *req) {
  n_created++;
  return PMPI_Irecv(buf, count, type, source, tag, comm, req);
}
int MPI_Issend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request *req) {
  n_created++;
  return PMPI_Issend(buf, count, type, dest, tag, comm, req);
}
int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *out) {
  n_created++;
  n_comms++;
  return PMPI_Comm_dup(comm, out);
}
int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *out) {
  n_created++;
  n_comms++;
  return PMPI_Comm_split(comm, color, key, out);
}
int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *out) {
  n_created++;
  n_comms++;
  return PMPI_Comm_split_type(comm, type, key, info, out);
}
int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *out) {
  n_created++;
  n_comms++;
  return PMPI_Comm_create(comm, group, out);
}
int MPI_Ibarrier(MPI_Comm comm, MPI_Request *req) {
  n_created++;
  return PMPI_Ibarrier(comm, req);
}

#endif
