/* libhalo_mpi_live: the MPI objects a process holds (persistent requests,
 * communicators, windows, groups, datatypes) made minus those freed, counted
 * through MPI's profiling interface. A program linked with it ahead of MPI
 * (bench_soak) counts the library's objects too, without defining MPI's
 * functions itself. */
#include <mpi.h>

#include "halo/config.h"
#include "mpi_live.h"

#if defined(OPEN_MPI) && OPEN_MPI && HALO_HAVE_MPIX_NEIGHBOR
#include <mpi-ext.h>
#endif

static long live_mpi;

long halo_mpi_live(void) { return live_mpi; }

int MPI_Send_init(const void *b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c,
                  MPI_Request *r) {
  live_mpi++;
  return PMPI_Send_init(b, n, t, d, tag, c, r);
}
int MPI_Recv_init(void *b, int n, MPI_Datatype t, int s, int tag, MPI_Comm c, MPI_Request *r) {
  live_mpi++;
  return PMPI_Recv_init(b, n, t, s, tag, c, r);
}
int MPI_Request_free(MPI_Request *r) {
  live_mpi--;
  return PMPI_Request_free(r);
}
int MPI_Comm_dup(MPI_Comm c, MPI_Comm *o) {
  live_mpi++;
  return PMPI_Comm_dup(c, o);
}
int MPI_Comm_split(MPI_Comm c, int color, int key, MPI_Comm *o) {
  live_mpi++;
  return PMPI_Comm_split(c, color, key, o);
}
int MPI_Comm_split_type(MPI_Comm c, int type, int key, MPI_Info info, MPI_Comm *o) {
  live_mpi++;
  return PMPI_Comm_split_type(c, type, key, info, o);
}
int MPI_Comm_create(MPI_Comm c, MPI_Group g, MPI_Comm *o) {
  live_mpi++;
  return PMPI_Comm_create(c, g, o);
}
int MPI_Comm_free(MPI_Comm *c) {
  live_mpi--;
  return PMPI_Comm_free(c);
}
int MPI_Win_allocate(MPI_Aint size, int unit, MPI_Info info, MPI_Comm c, void *base, MPI_Win *w) {
  live_mpi++;
  return PMPI_Win_allocate(size, unit, info, c, base, w);
}
int MPI_Win_create(void *base, MPI_Aint size, int unit, MPI_Info info, MPI_Comm c, MPI_Win *w) {
  live_mpi++;
  return PMPI_Win_create(base, size, unit, info, c, w);
}
int MPI_Win_free(MPI_Win *w) {
  live_mpi--;
  return PMPI_Win_free(w);
}
int MPI_Comm_group(MPI_Comm c, MPI_Group *g) {
  live_mpi++;
  return PMPI_Comm_group(c, g);
}
int MPI_Win_get_group(MPI_Win w, MPI_Group *g) {
  live_mpi++;
  return PMPI_Win_get_group(w, g);
}
int MPI_Group_incl(MPI_Group g, int n, const int ranks[], MPI_Group *o) {
  live_mpi++;
  return PMPI_Group_incl(g, n, ranks, o);
}
int MPI_Group_free(MPI_Group *g) {
  live_mpi--;
  return PMPI_Group_free(g);
}
int MPI_Type_commit(MPI_Datatype *t) {
  live_mpi++;
  return PMPI_Type_commit(t);
}
int MPI_Type_free(MPI_Datatype *t) {
  live_mpi--;
  return PMPI_Type_free(t);
}
int MPI_Dist_graph_create_adjacent(MPI_Comm c, int indeg, const int src[], const int srcw[],
                                   int outdeg, const int dst[], const int dstw[], MPI_Info info,
                                   int reorder, MPI_Comm *o) {
  live_mpi++;
  return PMPI_Dist_graph_create_adjacent(c, indeg, src, srcw, outdeg, dst, dstw, info, reorder, o);
}
#if defined(OPEN_MPI) && OPEN_MPI && HALO_HAVE_MPIX_NEIGHBOR
int MPIX_Neighbor_alltoallv_init(const void *sb, const int sc[], const int sd[], MPI_Datatype st,
                                 void *rb, const int rc[], const int rd[], MPI_Datatype rt,
                                 MPI_Comm c, MPI_Info info, MPI_Request *r) {
  live_mpi++;
  return PMPIX_Neighbor_alltoallv_init(sb, sc, sd, st, rb, rc, rd, rt, c, info, r);
}
#endif
