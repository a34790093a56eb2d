/* dmda_solve: a 3-D structured-grid program on a DMDA (dof 1, stencil width 1, default 12^3
   points, sizes from -da_grid_x/y/z). It assembles a Poisson-like operator with
   MatSetValuesStencil on the DMDA's matrix (star stencil: the 7-point Laplacian, 6 on the
   diagonal; -box: a box stencil with the 27-point Laplacian, 26 on the diagonal; -1 for each
   neighbour inside the grid, Dirichlet rows eliminated), solves A x = 1 with a KSP (options from
   the command line), and then exercises the DMDA scatters explicitly:
     - DMGlobalToLocalBegin/End of x into a local vector: ghost_sum is the sum over all ranks of
       all the local-vector entries, ghosts included;
     - DMLocalToLocalBegin/End (the DMDA's local-to-local scatter, made with VecScatterRemap) from
       a local vector holding x's owned values and garbage in its ghosts: ltol_sum, the same sum
       over the filled local vector, equals ghost_sum when the scatter is right;
     - both scatters once more on a vector whose every entry encodes its grid point:
       ghost_errors and ltol_errors count the local entries (over all ranks) that do not hold
       what they should, including the corner ghosts that a star stencil must leave alone.
   It prints iterations, reason, solution_norm2, ghost_sum, ltol_sum, ghost_errors, ltol_errors.

   This is a plain PETSc program: it contains no halo call and includes no halo header. halo can
   only come in through PETSc options, e.g. -dll_append libhalo_petsc.so -halo_sf. */
#include <petscdmda.h>
#include <petscksp.h>

#define GARBAGE   (-1000.0) /* ghost entries that a scatter must overwrite */
#define UNTOUCHED (-1.0)    /* entries that a scatter must not touch */

/* a value that names grid point (i, j, k) of an M x N x P grid */
static PetscScalar PointCode(PetscInt i, PetscInt j, PetscInt k, PetscInt M, PetscInt N) {
  return (PetscScalar)(1.0 + (double)i + (double)M * ((double)j + (double)N * (double)k));
}

/* local vector l := the owned values of global vector g, and ghostfill in its ghosts */
static PetscErrorCode CopyOwnedToLocal(DM da, Vec g, Vec l, PetscScalar ghostfill) {
  PetscInt xs, ys, zs, xm, ym, zm;
  const PetscScalar *const *const *ga;
  PetscScalar ***la;

  PetscFunctionBeginUser;
  PetscCall(VecSet(l, ghostfill));
  PetscCall(DMDAGetCorners(da, &xs, &ys, &zs, &xm, &ym, &zm));
  PetscCall(DMDAVecGetArrayRead(da, g, (void *)&ga));
  PetscCall(DMDAVecGetArray(da, l, &la));
  for (PetscInt k = zs; k < zs + zm; k++)
    for (PetscInt j = ys; j < ys + ym; j++)
      for (PetscInt i = xs; i < xs + xm; i++) la[k][j][i] = ga[k][j][i];
  PetscCall(DMDAVecRestoreArray(da, l, &la));
  PetscCall(DMDAVecRestoreArrayRead(da, g, (void *)&ga));
  PetscFunctionReturn(0);
}

/* the number of entries of local vector l (over all ranks) that differ from what a global-to-local
   scatter of the point-code vector must leave there: the code at every point the stencil reaches,
   UNTOUCHED elsewhere (the corner and edge ghosts of a star stencil) */
static PetscErrorCode CountErrors(DM da, Vec l, PetscBool box, PetscInt M, PetscInt N,
                                  PetscInt *errors) {
  PetscInt xs, ys, zs, xm, ym, zm, gxs, gys, gzs, gxm, gym, gzm, bad = 0;
  const PetscScalar *const *const *la;

  PetscFunctionBeginUser;
  PetscCall(DMDAGetCorners(da, &xs, &ys, &zs, &xm, &ym, &zm));
  PetscCall(DMDAGetGhostCorners(da, &gxs, &gys, &gzs, &gxm, &gym, &gzm));
  PetscCall(DMDAVecGetArrayRead(da, l, (void *)&la));
  for (PetscInt k = gzs; k < gzs + gzm; k++)
    for (PetscInt j = gys; j < gys + gym; j++)
      for (PetscInt i = gxs; i < gxs + gxm; i++) {
        const int outside =
            (i < xs || i >= xs + xm) + (j < ys || j >= ys + ym) + (k < zs || k >= zs + zm);
        PetscScalar want = (box || outside <= 1) ? PointCode(i, j, k, M, N) : UNTOUCHED;
        if (la[k][j][i] != want) bad++;
      }
  PetscCall(DMDAVecRestoreArrayRead(da, l, (void *)&la));
  PetscCallMPI(MPI_Allreduce(&bad, errors, 1, MPIU_INT, MPI_SUM, PetscObjectComm((PetscObject)da)));
  PetscFunctionReturn(0);
}

/* the sum over all ranks of all entries of the local vectors l */
static PetscErrorCode GlobalSumOfLocal(DM da, Vec l, PetscScalar *sum) {
  PetscScalar s;

  PetscFunctionBeginUser;
  PetscCall(VecSum(l, &s));
  PetscCallMPI(MPI_Allreduce(&s, sum, 1, MPIU_SCALAR, MPIU_SUM, PetscObjectComm((PetscObject)da)));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv) {
  DM da;
  Mat A;
  Vec x, b, xl, zl, yl, code;
  KSP ksp;
  KSPConvergedReason reason;
  PetscBool box = PETSC_FALSE;
  PetscInt M, N, P, xs, ys, zs, xm, ym, zm, its, gerr, lerr;
  PetscReal norm;
  PetscScalar gsum, lsum, ***ca;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "dmda_solve options", NULL);
  PetscCall(PetscOptionsBool("-box",
                             "box stencil and 27-point operator (default: star stencil, 7-point)",
                             NULL, box, &box, NULL));
  PetscOptionsEnd();

  PetscCall(DMDACreate3d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE,
                         box ? DMDA_STENCIL_BOX : DMDA_STENCIL_STAR, 12, 12, 12, PETSC_DECIDE,
                         PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, NULL, &da));
  PetscCall(DMSetMatType(da, MATMPIAIJ)); /* -dm_mat_type overrides */
  PetscCall(DMSetFromOptions(da));
  PetscCall(DMSetUp(da));
  PetscCall(
      DMDAGetInfo(da, NULL, &M, &N, &P, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  PetscCall(DMDAGetCorners(da, &xs, &ys, &zs, &xm, &ym, &zm));

  /* (a) the operator, row by row with grid indices */
  PetscCall(DMCreateMatrix(da, &A));
  for (PetscInt k = zs; k < zs + zm; k++)
    for (PetscInt j = ys; j < ys + ym; j++)
      for (PetscInt i = xs; i < xs + xm; i++) {
        MatStencil row = {.k = k, .j = j, .i = i, .c = 0}, cols[27];
        PetscScalar vals[27];
        PetscInt nc = 0;
        for (PetscInt dk = -1; dk <= 1; dk++)
          for (PetscInt dj = -1; dj <= 1; dj++)
            for (PetscInt di = -1; di <= 1; di++) {
              const PetscInt ii = i + di, jj = j + dj, kk = k + dk;
              if (!box && (di != 0) + (dj != 0) + (dk != 0) > 1) continue;
              if (ii < 0 || ii >= M || jj < 0 || jj >= N || kk < 0 || kk >= P) continue;
              cols[nc].i = ii;
              cols[nc].j = jj;
              cols[nc].k = kk;
              cols[nc].c = 0;
              vals[nc] = (di == 0 && dj == 0 && dk == 0) ? (box ? 26.0 : 6.0) : -1.0;
              nc++;
            }
        PetscCall(MatSetValuesStencil(A, 1, &row, nc, cols, vals, INSERT_VALUES));
      }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));

  PetscCall(DMCreateGlobalVector(da, &x));
  PetscCall(VecDuplicate(x, &b));
  PetscCall(VecSet(b, 1.0));
  PetscCall(VecSet(x, 0.0));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetDM(ksp, da));
  /* the operators are ours; the DM is there for -pc_type mg */
  PetscCall(KSPSetDMActive(ksp, PETSC_FALSE));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetIterationNumber(ksp, &its));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  PetscCall(VecNorm(x, NORM_2, &norm));

  /* (b) global-to-local of the solution, then local-to-local from a local vector with garbage
     in its ghosts */
  PetscCall(DMCreateLocalVector(da, &xl));
  PetscCall(VecDuplicate(xl, &zl));
  PetscCall(VecDuplicate(xl, &yl));
  PetscCall(VecSet(xl, 0.0));
  PetscCall(DMGlobalToLocalBegin(da, x, INSERT_VALUES, xl));
  PetscCall(DMGlobalToLocalEnd(da, x, INSERT_VALUES, xl));
  PetscCall(GlobalSumOfLocal(da, xl, &gsum));
  PetscCall(CopyOwnedToLocal(da, x, zl, GARBAGE));
  PetscCall(VecSet(yl, 0.0));
  PetscCall(DMLocalToLocalBegin(da, zl, INSERT_VALUES, yl));
  PetscCall(DMLocalToLocalEnd(da, zl, INSERT_VALUES, yl));
  PetscCall(GlobalSumOfLocal(da, yl, &lsum));

  /* the same two scatters on the point-code vector, checked entry by entry */
  PetscCall(VecDuplicate(x, &code));
  PetscCall(DMDAVecGetArray(da, code, &ca));
  for (PetscInt k = zs; k < zs + zm; k++)
    for (PetscInt j = ys; j < ys + ym; j++)
      for (PetscInt i = xs; i < xs + xm; i++) ca[k][j][i] = PointCode(i, j, k, M, N);
  PetscCall(DMDAVecRestoreArray(da, code, &ca));
  PetscCall(VecSet(xl, UNTOUCHED));
  PetscCall(DMGlobalToLocalBegin(da, code, INSERT_VALUES, xl));
  PetscCall(DMGlobalToLocalEnd(da, code, INSERT_VALUES, xl));
  PetscCall(CountErrors(da, xl, box, M, N, &gerr));
  PetscCall(CopyOwnedToLocal(da, code, zl, GARBAGE));
  PetscCall(VecSet(yl, UNTOUCHED));
  PetscCall(DMLocalToLocalBegin(da, zl, INSERT_VALUES, yl));
  PetscCall(DMLocalToLocalEnd(da, zl, INSERT_VALUES, yl));
  PetscCall(CountErrors(da, yl, box, M, N, &lerr));

  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "iterations %" PetscInt_FMT "\n", its));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "reason %d\n", (int)reason));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "solution_norm2 %.17e\n", (double)norm));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ghost_sum %.17e\n", (double)PetscRealPart(gsum)));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ltol_sum %.17e\n", (double)PetscRealPart(lsum)));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ghost_errors %" PetscInt_FMT "\n", gerr));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ltol_errors %" PetscInt_FMT "\n", lerr));

  PetscCall(VecDestroy(&code));
  PetscCall(VecDestroy(&yl));
  PetscCall(VecDestroy(&zl));
  PetscCall(VecDestroy(&xl));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&x));
  PetscCall(MatDestroy(&A));
  PetscCall(DMDestroy(&da));
  PetscCall(PetscFinalize());
  return 0;
}
