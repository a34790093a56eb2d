/* halo amg: the problem as hypre objects, a BoomerAMG set-up and Krylov
 * solve, and the hierarchy gathered on rank 0 for --simulate. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <HYPRE.h>
#include <HYPRE_parcsr_ls.h>
#include <_hypre_parcsr_ls.h>

#include "amg.h"

static int error_printed;

void amg_error(int rank, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  driver_error(rank, "amg", "%s", msg);
  error_printed = 1;
}

int amg_error_printed(void) { return error_printed; }

void amg_opts_default(amg_opts *o) {
  memset(o, 0, sizeof *o);
  o->in.partition = HALO_PARTITION_ROWS;
  o->opts = halo_plan_options_default();
  o->tol = 1e-8;
  o->maxit = 200;
  o->coarsen = 10; /* HMIS */
  o->interp = 6;   /* extended+i */
  o->relax = 0;
  o->pmax = 4;
  o->theta = 0.25;
  o->repeat = 5;
}

static const char *coarsen_name(int c) { return c == 10 ? "HMIS" : c == 8 ? "PMIS" : "Falgout"; }
static const char *interp_name(int i) { return i == 6 ? "ext+i" : i == 14 ? "ext" : "classical"; }
static const char *relax_name(int r) {
  return r == 0 ? "l1-GS 13/14" : r == 1 ? "hybrid GS 3/4" : "l1-Jacobi 18";
}

halo_status amg_problem_create(MPI_Comm comm, const amg_opts *o, amg_problem *pb) {
  memset(pb, 0, sizeof *pb);
  pb->comm = comm;
  MPI_Comm_rank(comm, &pb->rank);
  MPI_Comm_size(comm, &pb->size);
  input_matrix M;
  char why[1024];
  if (!input_check_memory(comm, &o->in, INPUT_DISTRIBUTED, 0, 0, why, sizeof why)) {
    amg_error(pb->rank, "%s", why);
    return HALO_ERR_OUT_OF_MEMORY;
  }
  halo_status st = input_load(comm, &o->in, 0, &M);
  if (st != HALO_SUCCESS) return st;
  if (M.n_rows != M.n_cols || M.n_rows > INT_MAX - 1) {
    amg_error(pb->rank,
              M.n_rows != M.n_cols ? "a %lld x %lld matrix: AMG needs a square one"
                                   : "%lld rows (x %lld): more than this hypre's "
                                     "HYPRE_BigInt holds",
              (long long)M.n_rows, (long long)M.n_cols);
    input_free(&M);
    return HALO_ERR_INVALID_ARG;
  }
  { /* what BoomerAMG needs before hypre sees the matrix: rows, and a nonzero diagonal in
     * each (it divides by it; an empty row or a zero diagonal crashed inside hypre), the
     * lowest bad row agreed over the ranks so that every rank says the same */
    const halo_csr *A = &M.local;
    long long bad = LLONG_MAX, first;
    for (int64_t i = 0; i < A->row_end - A->row_begin && bad == LLONG_MAX; i++) {
      double d = 0.0;
      for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++)
        if (A->col_ids[k] == A->row_begin + i) d += A->values[k];
      if (d == 0.0) bad = (long long)input_orig_col(&M, A->row_begin, A->row_begin + i);
    }
    MPI_Allreduce(&bad, &first, 1, MPI_LONG_LONG, MPI_MIN, comm);
    if (M.n_rows == 0 || first != LLONG_MAX) {
      if (M.n_rows == 0)
        amg_error(pb->rank, "a 0 x 0 matrix: AMG needs at least one row");
      else
        amg_error(pb->rank,
                  "row %lld (counted from 1) has no nonzero diagonal entry: BoomerAMG needs one in "
                  "every row (it divides by it)",
                  first + 1);
      input_free(&M);
      return HALO_ERR_INVALID_ARG;
    }
  }
  snprintf(pb->name, sizeof pb->name, "%s", M.name);
  snprintf(pb->amg_desc, sizeof pb->amg_desc, "%s, %s, pmax %d, theta %g, %s",
           coarsen_name(o->coarsen), interp_name(o->interp), o->pmax, o->theta,
           relax_name(o->relax));
  pb->n_rows = M.n_rows;
  pb->nnz = M.nnz;
  const halo_csr *L = &M.local;
  const int64_t n = L->row_end - L->row_begin, lo = L->row_begin;
  pb->n_local = n;
  const int64_t nnz = L->row_ptr[n];
  HYPRE_Int *ncols = malloc((size_t)(n ? n : 1) * sizeof *ncols);
  HYPRE_BigInt *rows = malloc((size_t)(n ? n : 1) * sizeof *rows);
  HYPRE_BigInt *cols = malloc((size_t)(nnz ? nnz : 1) * sizeof *cols);
  double *xs = malloc((size_t)(n ? n : 1) * sizeof *xs);
  pb->x = malloc((size_t)(n ? n : 1) * sizeof *pb->x);
  pb->x_ref = malloc((size_t)(n ? n : 1) * sizeof *pb->x_ref);
  st = ncols && rows && cols && xs && pb->x && pb->x_ref && nnz <= INT_MAX ? HALO_SUCCESS
                                                                           : HALO_ERR_OUT_OF_MEMORY;
  st = halo_status_agree(comm, st);
  if (st == HALO_SUCCESS) {
    for (int64_t i = 0; i < n; i++) {
      ncols[i] = (HYPRE_Int)(L->row_ptr[i + 1] - L->row_ptr[i]);
      rows[i] = (HYPRE_BigInt)(lo + i);
      xs[i] = input_x(input_orig_col(&M, lo, lo + i)); /* x* */
    }
    for (int64_t k = 0; k < nnz; k++) cols[k] = (HYPRE_BigInt)L->col_ids[k];
    HYPRE_IJMatrix ij;
    HYPRE_IJMatrixCreate(comm, lo, lo + n - 1, lo, lo + n - 1, &ij);
    HYPRE_IJMatrixSetObjectType(ij, HYPRE_PARCSR);
    HYPRE_IJMatrixInitialize(ij);
    if (n) HYPRE_IJMatrixSetValues(ij, (HYPRE_Int)n, ncols, rows, cols, L->values);
    HYPRE_IJMatrixAssemble(ij);
    pb->ij_A = ij;
    HYPRE_IJVector v[2];
    for (int j = 0; j < 2; j++) {
      HYPRE_IJVectorCreate(comm, lo, lo + n - 1, &v[j]);
      HYPRE_IJVectorSetObjectType(v[j], HYPRE_PARCSR);
      HYPRE_IJVectorInitialize(v[j]);
      if (n) HYPRE_IJVectorSetValues(v[j], (HYPRE_Int)n, rows, xs);
      HYPRE_IJVectorAssemble(v[j]);
    }
    pb->ij_b = v[0];
    pb->ij_x = v[1];
    HYPRE_ParCSRMatrix A;
    HYPRE_ParVector b, x;
    HYPRE_IJMatrixGetObject(ij, (void **)&A);
    HYPRE_IJVectorGetObject(v[0], (void **)&b);
    HYPRE_IJVectorGetObject(v[1], (void **)&x);
    halo_hypre_set_enabled(0);
    HYPRE_ParCSRMatrixMatvec(1.0, A, x, 0.0, b); /* b = A x* */
  }
  free(ncols);
  free(rows);
  free(cols);
  free(xs);
  input_free(&M);
  return st;
}

void amg_problem_free(amg_problem *pb) {
  if (pb->ij_A) HYPRE_IJMatrixDestroy((HYPRE_IJMatrix)pb->ij_A);
  if (pb->ij_b) HYPRE_IJVectorDestroy((HYPRE_IJVector)pb->ij_b);
  if (pb->ij_x) HYPRE_IJVectorDestroy((HYPRE_IJVector)pb->ij_x);
  free(pb->x);
  free(pb->x_ref);
  memset(pb, 0, sizeof *pb);
}

/* ---- the hierarchy on rank 0 ---------------------------------------------- */

/* Offsets of counts (rank 0). */
static void offsets(const int *counts, int size, int *displ) {
  for (int r = 0, d = 0; r < size; r++) displ[r] = d, d += counts[r];
}

/* The rows of A, all on rank 0 (pattern only: values NULL). */
static halo_status gather_matrix(MPI_Comm comm, int rank, int size, hypre_ParCSRMatrix *A,
                                 halo_csr *G) {
  hypre_CSRMatrix *diag = hypre_ParCSRMatrixDiag(A), *offd = hypre_ParCSRMatrixOffd(A);
  const HYPRE_Int n = hypre_CSRMatrixNumRows(diag);
  const HYPRE_Int *di = hypre_CSRMatrixI(diag), *dj = hypre_CSRMatrixJ(diag);
  const HYPRE_Int *oi = hypre_CSRMatrixI(offd), *oj = hypre_CSRMatrixJ(offd);
  const HYPRE_BigInt *cmap = hypre_ParCSRMatrixColMapOffd(A);
  const HYPRE_BigInt c0 = hypre_ParCSRMatrixFirstColDiag(A);
  const int has_offd = hypre_CSRMatrixNumCols(offd) > 0 && oi;
  const int64_t nnz = (int64_t)di[n] + (has_offd ? oi[n] : 0);
  int *lens = malloc((size_t)(n ? n : 1) * sizeof *lens);
  int64_t *cols = malloc((size_t)(nnz ? nnz : 1) * sizeof *cols);
  int *n_rows = NULL, *n_nnz = NULL, *displ = NULL, *all_lens = NULL;
  int ok = lens && cols && nnz <= INT_MAX;
  int64_t k = 0;
  for (HYPRE_Int i = 0; ok && i < n; i++) {
    lens[i] = di[i + 1] - di[i] + (has_offd ? oi[i + 1] - oi[i] : 0);
    for (HYPRE_Int e = di[i]; e < di[i + 1]; e++) cols[k++] = (int64_t)c0 + dj[e];
    for (HYPRE_Int e = has_offd ? oi[i] : 0; e < (has_offd ? oi[i + 1] : 0); e++)
      cols[k++] = (int64_t)cmap[oj[e]];
  }
  memset(G, 0, sizeof *G);
  if (rank == 0) {
    n_rows = malloc((size_t)size * sizeof *n_rows);
    n_nnz = malloc((size_t)size * sizeof *n_nnz);
    displ = malloc((size_t)size * sizeof *displ);
    ok = ok && n_rows && n_nnz && displ;
  }
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
  if (ok) {
    int mine[2] = {(int)n, (int)nnz};
    MPI_Gather(&mine[0], 1, MPI_INT, n_rows, 1, MPI_INT, 0, comm);
    MPI_Gather(&mine[1], 1, MPI_INT, n_nnz, 1, MPI_INT, 0, comm);
    if (rank == 0) {
      int64_t N = 0, NNZ = 0;
      for (int r = 0; r < size; r++) N += n_rows[r], NNZ += n_nnz[r];
      G->n_rows = hypre_ParCSRMatrixGlobalNumRows(A);
      G->n_cols = hypre_ParCSRMatrixGlobalNumCols(A);
      G->row_end = N;
      G->row_ptr = malloc((size_t)(N + 1) * sizeof *G->row_ptr);
      G->col_ids = malloc((size_t)(NNZ ? NNZ : 1) * sizeof *G->col_ids);
      all_lens = malloc((size_t)(N ? N : 1) * sizeof *all_lens);
      ok = G->row_ptr && G->col_ids && all_lens && N == G->n_rows && NNZ <= INT_MAX;
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, comm);
  }
  if (ok) {
    if (rank == 0) offsets(n_rows, size, displ);
    MPI_Gatherv(lens, (int)n, MPI_INT, all_lens, n_rows, displ, MPI_INT, 0, comm);
    if (rank == 0) offsets(n_nnz, size, displ);
    MPI_Gatherv(cols, (int)nnz, MPI_INT64_T, G->col_ids, n_nnz, displ, MPI_INT64_T, 0, comm);
    if (rank == 0) {
      G->row_ptr[0] = 0;
      for (int64_t i = 0; i < G->n_rows; i++) G->row_ptr[i + 1] = G->row_ptr[i] + all_lens[i];
    }
  }
  free(lens);
  free(cols);
  free(n_rows);
  free(n_nnz);
  free(displ);
  free(all_lens);
  if (!ok) {
    halo_csr_free(G);
    amg_error(rank, "a level of the hierarchy could not be gathered for --simulate "
                    "(out of memory, or more than 2^31 entries)");
    return HALO_ERR_OUT_OF_MEMORY;
  }
  return HALO_SUCCESS;
}

/* Which rows of a level are coarse (C-points), all on rank 0. */
static halo_status gather_coarse(MPI_Comm comm, int rank, int size, hypre_IntArray *cf, HYPRE_Int n,
                                 int64_t N, unsigned char **out) {
  unsigned char *mine = malloc((size_t)(n ? n : 1));
  int *counts = NULL, *displ = NULL, ok = mine && cf && hypre_IntArraySize(cf) >= n;
  for (HYPRE_Int i = 0; ok && i < n; i++) mine[i] = hypre_IntArrayData(cf)[i] > 0;
  *out = NULL;
  if (rank == 0) {
    counts = malloc((size_t)size * sizeof *counts);
    displ = malloc((size_t)size * sizeof *displ);
    *out = malloc((size_t)(N ? N : 1));
    ok = ok && counts && displ && *out;
  }
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
  if (ok) {
    int nn = n;
    MPI_Gather(&nn, 1, MPI_INT, counts, 1, MPI_INT, 0, comm);
    if (rank == 0) offsets(counts, size, displ);
    MPI_Gatherv(mine, nn, MPI_UNSIGNED_CHAR, *out, counts, displ, MPI_UNSIGNED_CHAR, 0, comm);
  }
  free(mine);
  free(counts);
  free(displ);
  if (!ok) {
    free(*out);
    *out = NULL;
    amg_error(rank, "the coarse points of a level could not be gathered");
    return HALO_ERR_OUT_OF_MEMORY;
  }
  return HALO_SUCCESS;
}

static halo_status gather_hierarchy(MPI_Comm comm, hypre_ParAMGData *amg, amg_hierarchy *H) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  amg_hierarchy_free(H);
  const int L = hypre_ParAMGDataNumLevels(amg);
  hypre_ParCSRMatrix **A = hypre_ParAMGDataAArray(amg), **P = hypre_ParAMGDataPArray(amg);
  hypre_IntArray **cf = hypre_ParAMGDataCFMarkerArray(amg);
  H->A = calloc((size_t)L, sizeof *H->A);
  H->P = calloc((size_t)L, sizeof *H->P);
  H->coarse = calloc((size_t)L, sizeof *H->coarse);
  int ok = H->A && H->P && H->coarse;
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
  if (!ok) return HALO_ERR_OUT_OF_MEMORY;
  H->n = L;
  halo_status st = HALO_SUCCESS;
  for (int l = 0; l < L && st == HALO_SUCCESS; l++) {
    st = gather_matrix(comm, rank, size, A[l], &H->A[l]);
    if (st == HALO_SUCCESS && l + 1 < L) st = gather_matrix(comm, rank, size, P[l], &H->P[l]);
    if (st == HALO_SUCCESS && l + 1 < L)
      st = gather_coarse(comm, rank, size, cf ? cf[l] : NULL,
                         hypre_CSRMatrixNumRows(hypre_ParCSRMatrixDiag(A[l])),
                         hypre_ParCSRMatrixGlobalNumRows(A[l]), &H->coarse[l]);
  }
  return st;
}

void amg_hierarchy_free(amg_hierarchy *H) {
  for (int l = 0; l < H->n; l++) {
    if (H->A) halo_csr_free(&H->A[l]);
    if (H->P) halo_csr_free(&H->P[l]);
    if (H->coarse) free(H->coarse[l]);
  }
  free(H->A);
  free(H->P);
  free(H->coarse);
  memset(H, 0, sizeof *H);
}

/* ---- one set-up and solve -------------------------------------------------- */

/* The Krylov solvers halo amg offers: hypre's PCG and GMRES have the same
 * calls under two names. */
typedef struct {
  HYPRE_Int (*create)(MPI_Comm, HYPRE_Solver *);
  HYPRE_Int (*destroy)(HYPRE_Solver);
  HYPRE_Int (*setup)(HYPRE_Solver, HYPRE_ParCSRMatrix, HYPRE_ParVector, HYPRE_ParVector);
  HYPRE_Int (*solve)(HYPRE_Solver, HYPRE_ParCSRMatrix, HYPRE_ParVector, HYPRE_ParVector);
  HYPRE_Int (*set_tol)(HYPRE_Solver, HYPRE_Real);
  HYPRE_Int (*set_maxit)(HYPRE_Solver, HYPRE_Int);
  HYPRE_Int (*set_precond)(HYPRE_Solver, HYPRE_PtrToSolverFcn, HYPRE_PtrToSolverFcn, HYPRE_Solver);
  HYPRE_Int (*iterations)(HYPRE_Solver, HYPRE_Int *);
  HYPRE_Int (*residual)(HYPRE_Solver, HYPRE_Real *);
} krylov_ops;

static const krylov_ops pcg = {
    HYPRE_ParCSRPCGCreate, HYPRE_ParCSRPCGDestroy,    HYPRE_ParCSRPCGSetup,
    HYPRE_ParCSRPCGSolve,  HYPRE_PCGSetTol,           HYPRE_PCGSetMaxIter,
    HYPRE_PCGSetPrecond,   HYPRE_PCGGetNumIterations, HYPRE_PCGGetFinalRelativeResidualNorm};
static const krylov_ops gmres = {
    HYPRE_ParCSRGMRESCreate, HYPRE_ParCSRGMRESDestroy,    HYPRE_ParCSRGMRESSetup,
    HYPRE_ParCSRGMRESSolve,  HYPRE_GMRESSetTol,           HYPRE_GMRESSetMaxIter,
    HYPRE_GMRESSetPrecond,   HYPRE_GMRESGetNumIterations, HYPRE_GMRESGetFinalRelativeResidualNorm};

halo_status amg_solve(amg_problem *pb, const amg_opts *o, amg_result *r, amg_hierarchy *H) {
  static const int down[] = {13, 3, 18}, up[] = {14, 4, 18};
  const krylov_ops *k = o->gmres ? &gmres : &pcg;
  HYPRE_ParCSRMatrix A;
  HYPRE_ParVector b, x;
  HYPRE_IJMatrixGetObject((HYPRE_IJMatrix)pb->ij_A, (void **)&A);
  HYPRE_IJVectorGetObject((HYPRE_IJVector)pb->ij_b, (void **)&b);
  HYPRE_IJVectorGetObject((HYPRE_IJVector)pb->ij_x, (void **)&x);
  HYPRE_ParVectorSetConstantValues(x, 0.0);

  HYPRE_Solver amg, krylov;
  HYPRE_BoomerAMGCreate(&amg);
  HYPRE_BoomerAMGSetCoarsenType(amg, o->coarsen);
  HYPRE_BoomerAMGSetInterpType(amg, o->interp);
  HYPRE_BoomerAMGSetPMaxElmts(amg, o->pmax);
  HYPRE_BoomerAMGSetStrongThreshold(amg, o->theta);
  HYPRE_BoomerAMGSetCycleRelaxType(amg, down[o->relax], 1);
  HYPRE_BoomerAMGSetCycleRelaxType(amg, up[o->relax], 2);
  HYPRE_BoomerAMGSetPrintLevel(amg, 0);
  HYPRE_BoomerAMGSetTol(amg, 0.0);
  HYPRE_BoomerAMGSetMaxIter(amg, 1);
  k->create(pb->comm, &krylov);
  k->set_tol(krylov, o->tol);
  k->set_maxit(krylov, o->maxit);
  if (o->gmres)
    HYPRE_GMRESSetKDim(krylov, 30);
  else
    HYPRE_PCGSetTwoNorm(krylov, 1);
  k->set_precond(krylov, (HYPRE_PtrToSolverFcn)HYPRE_BoomerAMGSolve,
                 (HYPRE_PtrToSolverFcn)HYPRE_BoomerAMGSetup, amg);
  MPI_Barrier(pb->comm);
  double t[2], t0 = MPI_Wtime();
  k->setup(krylov, A, b, x);
  t[0] = MPI_Wtime() - t0;
  halo_hypre_view_reset(); /* the solve's exchanges from here */
  MPI_Barrier(pb->comm);
  t0 = MPI_Wtime();
  k->solve(krylov, A, b, x);
  t[1] = MPI_Wtime() - t0;
  HYPRE_Int its = 0;
  k->iterations(krylov, &its);
  k->residual(krylov, &r->residual);
  HYPRE_ClearAllErrors(); /* not converging is reported, not an error here */
  MPI_Allreduce(MPI_IN_PLACE, t, 2, MPI_DOUBLE, MPI_MAX, pb->comm);
  r->setup_seconds = t[0];
  r->solve_seconds = t[1];
  r->iterations = (int)its;
  hypre_Vector *xl = hypre_ParVectorLocalVector((hypre_ParVector *)x);
  if (pb->n_local) memcpy(pb->x, hypre_VectorData(xl), (size_t)pb->n_local * sizeof *pb->x);
  halo_status st = HALO_SUCCESS;
  if (H) st = gather_hierarchy(pb->comm, (hypre_ParAMGData *)amg, H);
  k->destroy(krylov);
  HYPRE_BoomerAMGDestroy(amg);
  return st;
}
