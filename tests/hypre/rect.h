/* The rectangular ParCSR matrix of the hypre tests (plan_cases.c, multivec.c):
 * M rows split evenly, N columns split over all ranks but the last, which
 * owns none when there are several (an empty coarse rank, as an
 * interpolation P has); per_row entries a row at columns spread by a hash,
 * value v0 + 0.1 c + 1e-3 i. */
#ifndef HALO_TESTS_HYPRE_RECT_H
#define HALO_TESTS_HYPRE_RECT_H

#include <HYPRE.h>
#include <HYPRE_IJ_mv.h>

/* [lo, hi): rank's share of n split over size ranks */
static void split(HYPRE_BigInt n, int rank, int size, HYPRE_BigInt *lo, HYPRE_BigInt *hi) {
  HYPRE_BigInt base = n / size, extra = n % size;
  *lo = rank * base + (rank < extra ? rank : extra);
  *hi = *lo + base + (rank < extra ? 1 : 0);
}

/* The rank's rows [rlo, rhi) and columns [clo, chi). */
static void rect_ranges(int rank, int size, HYPRE_BigInt M, HYPRE_BigInt N, HYPRE_BigInt *rlo,
                        HYPRE_BigInt *rhi, HYPRE_BigInt *clo, HYPRE_BigInt *chi) {
  split(M, rank, size, rlo, rhi);
  split(N, rank, size > 1 ? size - 1 : 1, clo, chi);
  if (size > 1 && rank == size - 1) *clo = *chi = N;
}

/* The assembled matrix (destroy *ij_p when done) and its ParCSR object. */
static hypre_ParCSRMatrix *rect_matrix(int rank, int size, HYPRE_BigInt M, HYPRE_BigInt N,
                                       int per_row, double v0, HYPRE_IJMatrix *ij_p) {
  HYPRE_BigInt rlo, rhi, clo, chi;
  rect_ranges(rank, size, M, N, &rlo, &rhi, &clo, &chi);
  HYPRE_IJMatrix ij;
  HYPRE_IJMatrixCreate(MPI_COMM_WORLD, rlo, rhi - 1, clo, chi - 1, &ij);
  HYPRE_IJMatrixSetObjectType(ij, HYPRE_PARCSR);
  HYPRE_IJMatrixInitialize(ij);
  for (HYPRE_BigInt i = rlo; i < rhi; i++)
    for (int c = 0; c < per_row; c++) {
      HYPRE_BigInt j = (i * 7 + c * 13 + (i % 5) * c) % N;
      double v = v0 + 0.1 * (double)c + 1e-3 * (double)i;
      HYPRE_Int one = 1;
      HYPRE_IJMatrixAddToValues(ij, 1, &one, &i, &j, &v);
    }
  HYPRE_IJMatrixAssemble(ij);
  hypre_ParCSRMatrix *A;
  HYPRE_IJMatrixGetObject(ij, (void **)&A);
  *ij_p = ij;
  return A;
}

#endif
