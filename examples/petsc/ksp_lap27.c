/* ksp_lap27: solve A x = b with a KSP, where A is either the 27-point Laplacian on an n^3 grid
   (option -n, default 16) or a Matrix Market file (option -f file.mtx), b = A * ones and x0 = 0.
   The matrix is a MATMPIAIJ unless -mat_type says otherwise; the solver comes from the options
   database (-ksp_type, -pc_type, ...); -repeat k solves k times. It prints the iteration count,
   the converged reason, the norm and sum of x, and how often the MatMult and MatMultTranspose
   events ran on rank 0 over the whole run (from PETSc's event log, which the program turns on):
   the MatMult that makes b counts, and so do products with other matrices, such as those of the
   coarse levels of -pc_type gamg.

   This is a plain PETSc program: it contains no halo call and includes no halo header. halo
   can only come in through PETSc options, e.g. -dll_append libhalo_petsc.so -halo_sf. */
#include <petscksp.h>

#include "matrices.h"

/* ---- event counts ---------------------------------------------------------------------------- */

/* how many times the named event ran on this rank, over all logging stages */
static PetscErrorCode EventCount(const char *name, PetscInt *count) {
  PetscLogEvent id;
  PetscEventPerfInfo info;

  PetscFunctionBeginUser;
  *count = 0;
  PetscCall(PetscLogEventGetId(name, &id));
#if PETSC_VERSION_LT(3, 20, 0)
  {
    PetscStageLog stageLog;

    PetscCall(PetscLogGetStageLog(&stageLog));
    for (int stage = 0; stage < stageLog->numStages; stage++) {
      PetscCall(PetscLogEventGetPerfInfo(stage, id, &info));
      *count += info.count;
    }
  }
#else
  PetscCall(PetscLogEventGetPerfInfo(PETSC_DETERMINE, id, &info)); /* the current stage only */
  *count = info.count;
#endif
  PetscFunctionReturn(0);
}

int main(int argc, char **argv) {
  char file[PETSC_MAX_PATH_LEN] = "";
  PetscBool hasfile = PETSC_FALSE, logging;
  PetscInt n = 16, repeat = 1, its = 0, nmult, nmultt;
  Mat A;
  Vec x, b, ones;
  KSP ksp;
  KSPConvergedReason reason = KSP_CONVERGED_ITERATING;
  PetscReal norm;
  PetscScalar sum;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  /* the MatMult counts come from the event log: turn it on (it does not change any result) */
  PetscCall(PetscLogIsActive(&logging));
  if (!logging) PetscCall(PetscLogDefaultBegin());

  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "ksp_lap27 options", NULL);
  PetscCall(PetscOptionsInt("-n", "grid points per direction of the 27-point Laplacian", NULL, n,
                            &n, NULL));
  PetscCall(PetscOptionsString("-f", "Matrix Market file to solve with instead", NULL, file, file,
                               sizeof file, &hasfile));
  PetscCall(PetscOptionsInt("-repeat", "number of solves", NULL, repeat, &repeat, NULL));
  PetscOptionsEnd();
  PetscCheck(repeat >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-repeat must be at least 1");

  if (hasfile)
    PetscCall(LoadMatrixMarket(PETSC_COMM_WORLD, file, &A));
  else
    PetscCall(BuildLaplacian27(PETSC_COMM_WORLD, n, &A));

  /* b = A * ones, so the exact solution is known; x has the column layout */
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecDuplicate(x, &ones));
  PetscCall(VecSet(ones, 1.0));
  PetscCall(MatMult(A, ones, b));

  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetFromOptions(ksp));
  {
    PetscInt M, N;
    PetscBool rect_ok;

    PetscCall(MatGetSize(A, &M, &N));
    PetscCall(PetscObjectTypeCompareAny((PetscObject)ksp, &rect_ok, KSPLSQR, KSPCGLS, ""));
    PetscCheck(M == N || rect_ok, PETSC_COMM_WORLD, PETSC_ERR_ARG_SIZ,
               "The matrix is %" PetscInt_FMT " x %" PetscInt_FMT
               ": a non-square matrix needs -ksp_type lsqr or cgls",
               M, N);
  }
  for (PetscInt r = 0; r < repeat; r++) {
    PetscCall(VecSet(x, 0.0));
    PetscCall(KSPSolve(ksp, b, x));
  }
  PetscCall(KSPGetIterationNumber(ksp, &its));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  PetscCall(VecNorm(x, NORM_2, &norm));
  PetscCall(VecSum(x, &sum));
  PetscCall(EventCount("MatMult", &nmult));
  PetscCall(EventCount("MatMultTranspose", &nmultt));

  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "iterations %" PetscInt_FMT "\n", its));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "reason %d\n", (int)reason));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "solution_norm2 %.17e\n", (double)norm));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "solution_sum %.17e\n", (double)PetscRealPart(sum)));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "matmult_count %" PetscInt_FMT "\n", nmult));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "matmulttranspose_count %" PetscInt_FMT "\n", nmultt));

  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&ones));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return 0;
}
