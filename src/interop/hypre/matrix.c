/* halo for hypre: the plan of a ParCSR matrix (for halo_spmv). */
#include <stdlib.h>

#include "hypre_impl.h"

/* n+1 row offsets of a hypre CSR block as int64_t. */
static int64_t *row_ptr64(const hypre_CSRMatrix *M, int64_t rows)
{
  int64_t *p = malloc((size_t)(rows + 1) * sizeof *p);
  if (!p) return NULL;
  const HYPRE_Int *ia = hypre_CSRMatrixI(M);
  for (int64_t i = 0; i <= rows; i++) p[i] = ia ? (int64_t)ia[i] : 0;
  return p;
}

static int64_t *cols64(const hypre_CSRMatrix *M, int64_t nnz)
{
  int64_t *c = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *c);
  if (!c) return NULL;
  const HYPRE_Int *ja = hypre_CSRMatrixJ(M);
  for (int64_t k = 0; k < nnz; k++) c[k] = (int64_t)ja[k];
  return c;
}

halo_status halo_hypre_plan_create(hypre_ParCSRMatrix *A, const halo_plan_options *opts,
                                   halo_plan *plan_p)
{
  if (!A || !plan_p) return HALO_ERR_INVALID_ARG;
  MPI_Comm comm = hypre_ParCSRMatrixComm(A);
  hypre_CSRMatrix *diag = hypre_ParCSRMatrixDiag(A), *offd = hypre_ParCSRMatrixOffd(A);
  int64_t rows = (int64_t)hypre_CSRMatrixNumRows(diag);
  int64_t n_ghost = (int64_t)hypre_CSRMatrixNumCols(offd);
  int64_t nnz_d = (int64_t)hypre_CSRMatrixNumNonzeros(diag);
  int64_t nnz_o = (int64_t)hypre_CSRMatrixNumNonzeros(offd);
  /* hypre 2.26 keeps this rank's range [first, last] in row_starts and
   * col_starts (two entries, assumed partition). */
  int64_t row_begin = (int64_t)hypre_ParCSRMatrixFirstRowIndex(A);
  int64_t col_begin = (int64_t)hypre_ParCSRMatrixFirstColDiag(A);
  int64_t col_end = (int64_t)hypre_ParCSRMatrixLastColDiag(A) + 1;
  const HYPRE_BigInt *cmap = hypre_ParCSRMatrixColMapOffd(A);
  int64_t *drp = row_ptr64(diag, rows), *orp = row_ptr64(offd, rows);
  int64_t *dc = cols64(diag, nnz_d), *oc = cols64(offd, nnz_o);
  int64_t *ghost = malloc((size_t)(n_ghost > 0 ? n_ghost : 1) * sizeof *ghost);
  halo_status st = HALO_SUCCESS;
  if (!drp || !orp || !dc || !oc || !ghost)
    st = HALO_ERR_OUT_OF_MEMORY;
  else
    for (int64_t g = 0; g < n_ghost; g++) ghost[g] = (int64_t)cmap[g];
  st = halo_status_agree(comm, st);
  halo_matrix M = NULL;
  if (st == HALO_SUCCESS)
    st = halo_matrix_create_split(comm, row_begin, row_begin + rows, col_begin, col_end, drp, dc,
                                  hypre_CSRMatrixData(diag), orp, oc, hypre_CSRMatrixData(offd),
                                  n_ghost, ghost, HALO_MEMORY_HOST, &M);
  free(drp);
  free(orp);
  free(dc);
  free(oc);
  free(ghost);
  if (st == HALO_SUCCESS) st = halo_plan_create(M, opts, plan_p);
  halo_matrix_destroy(&M);
  return st;
}
