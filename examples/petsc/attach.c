/* HaloPetscMatAttach: a program that links libhalo_petsc and puts one
 * matrix's products through halo. The 2-D 5-point Laplacian as MATMPIAIJ,
 * a plain copy of it (MatDuplicate does not keep halo), then with the
 * options of -halo_sf_* (strategy, virtual nodes): y = A x, A x + y,
 * A^T x and A^T x + y compared with the copy's, and a GMRES solve.
 * Prints the largest difference of each product (0 under the standard
 * strategy: halo adds in PETSc's order) and the iterations. */
#include <halo/petsc.h>
#include <petscksp.h>

int main(int argc, char **argv) {
  Mat A, B;
  Vec x, y, z, w;
  KSP ksp;
  PetscInt n = 40, lo, hi, its;
  PetscReal d[4];

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(HaloPetscInitialize());
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
  PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, n * n, n * n, 5, NULL, 4, NULL, &A));
  PetscCall(MatSetType(A, MATMPIAIJ));
  PetscCall(MatMPIAIJSetPreallocation(A, 5, NULL, 4, NULL));
  PetscCall(MatGetOwnershipRange(A, &lo, &hi));
  for (PetscInt r = lo; r < hi; r++) {
    PetscInt i = r / n, j = r % n;
    if (i > 0) PetscCall(MatSetValue(A, r, r - n, -1.0, INSERT_VALUES));
    if (i < n - 1) PetscCall(MatSetValue(A, r, r + n, -1.0, INSERT_VALUES));
    if (j > 0) PetscCall(MatSetValue(A, r, r - 1, -1.1, INSERT_VALUES));
    if (j < n - 1) PetscCall(MatSetValue(A, r, r + 1, -0.9, INSERT_VALUES));
    PetscCall(MatSetValue(A, r, r, 4.0 + 1.0 / (r + 1), INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &B)); /* PETSc's own products */
  PetscCall(HaloPetscMatAttach(A));

  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(VecDuplicate(y, &z));
  PetscCall(VecDuplicate(y, &w));
  for (PetscInt r = lo; r < hi; r++) PetscCall(VecSetValue(x, r, 1.0 / (r + 3.0), INSERT_VALUES));
  PetscCall(VecAssemblyBegin(x));
  PetscCall(VecAssemblyEnd(x));
  PetscCall(VecSet(w, 0.25));
  PetscCall(MatMult(A, x, y));
  PetscCall(MatMult(B, x, z));
  PetscCall(VecAXPY(z, -1.0, y));
  PetscCall(VecNorm(z, NORM_INFINITY, &d[0]));
  PetscCall(MatMultAdd(A, x, w, y));
  PetscCall(MatMultAdd(B, x, w, z));
  PetscCall(VecAXPY(z, -1.0, y));
  PetscCall(VecNorm(z, NORM_INFINITY, &d[1]));
  PetscCall(MatMultTranspose(A, x, y));
  PetscCall(MatMultTranspose(B, x, z));
  PetscCall(VecAXPY(z, -1.0, y));
  PetscCall(VecNorm(z, NORM_INFINITY, &d[2]));
  PetscCall(MatMultTransposeAdd(A, x, w, y));
  PetscCall(MatMultTransposeAdd(B, x, w, z));
  PetscCall(VecAXPY(z, -1.0, y));
  PetscCall(VecNorm(z, NORM_INFINITY, &d[3]));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "max_difference mult %g multadd %g multtranspose %g multtransposeadd %g\n",
                        (double)d[0], (double)d[1], (double)d[2], (double)d[3]));

  /* new values, same pattern: the plan copies them in at the next product */
  PetscCall(MatScale(A, 2.0));
  PetscCall(MatScale(B, 2.0));
  PetscCall(MatMult(A, x, y));
  PetscCall(MatMult(B, x, z));
  PetscCall(VecAXPY(z, -1.0, y));
  PetscCall(VecNorm(z, NORM_INFINITY, &d[0]));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "max_difference after_scale %g\n", (double)d[0]));

  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPGMRES));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(MatMult(B, x, y)); /* b = B x: the solution is x */
  PetscCall(KSPSolve(ksp, y, z));
  PetscCall(KSPGetIterationNumber(ksp, &its));
  PetscCall(VecAXPY(z, -1.0, x));
  PetscCall(VecNorm(z, NORM_INFINITY, &d[0]));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "iterations %" PetscInt_FMT " error %g\n", its, (double)d[0]));

  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&z));
  PetscCall(VecDestroy(&w));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscCall(PetscFinalize());
  return 0;
}
