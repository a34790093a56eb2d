/* Scatters of every kind the PetscSF wrapper meets, in a plain PETSc
 * program (no halo call): run with and without -halo_sf, every line it
 * prints must be the same. Those halo takes: a VecScatter of doubles
 * forward with INSERT_VALUES and ADD_VALUES and reverse with ADD_VALUES and
 * INSERT_VALUES, one of block size 2 (units of two doubles), and
 * (-in_place) a scatter of a vector into itself, checked against the values
 * it must give; with one rank, VecScatterCreateToAll (leaves on their own
 * rank: the plan's copies); a star forest made by PetscSFSetGraph with
 * integers. The one it must hand to PETSc's basic untouched: MAX_VALUES. */
#include <petscsf.h>
#include <petscvec.h>
#include <string.h>

/* Two numbers that change with any entry: the sum and a position-weighted sum. */
static PetscErrorCode Report(const char *what, Vec v) {
  const PetscScalar *a;
  PetscInt n, lo;
  double s[2] = {0, 0}, g[2];

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(v, &n));
  PetscCall(VecGetOwnershipRange(v, &lo, NULL));
  PetscCall(VecGetArrayRead(v, &a));
  for (PetscInt i = 0; i < n; i++) {
    s[0] += PetscRealPart(a[i]);
    s[1] += PetscRealPart(a[i]) * (double)(lo + i + 1) * 0.001;
  }
  PetscCall(VecRestoreArrayRead(v, &a));
  PetscCallMPI(MPI_Allreduce(s, g, 2, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s %.17e %.17e\n", what, g[0], g[1]));
  PetscFunctionReturn(0);
}

/* Entries that do not round-trip exactly when summed in another order. */
static PetscErrorCode Fill(Vec v, double seed) {
  PetscInt lo, hi;

  PetscFunctionBegin;
  PetscCall(VecGetOwnershipRange(v, &lo, &hi));
  for (PetscInt i = lo; i < hi; i++) PetscCall(VecSetValue(v, i, 1.0 / (i + seed) + 0.1 * seed, INSERT_VALUES));
  PetscCall(VecAssemblyBegin(v));
  PetscCall(VecAssemblyEnd(v));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv) {
  PetscMPIInt rank, size;
  PetscInt n = 40, N, lo, hi, m;
  Vec x, y, lv, all;
  IS is;
  VecScatter sc;
  PetscInt *idx;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  { /* -log_callbacks default|none: the program starts PETSc's default event log itself, or
     * (before PETSc 3.20) clears the event callbacks, after halo (-dll_append) set its own */
    char what[16] = "";
    PetscCall(PetscOptionsGetString(NULL, NULL, "-log_callbacks", what, sizeof what, NULL));
    if (!strcmp(what, "default")) PetscCall(PetscLogDefaultBegin());
#if PETSC_VERSION_LT(3, 20, 0)
    if (!strcmp(what, "none")) PetscCall(PetscLogSet(NULL, NULL));
#endif
    if (what[0]) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "petsc_before_3_20 %d\n", (int)PETSC_VERSION_LT(3, 20, 0)));
  }
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(VecCreateMPI(PETSC_COMM_WORLD, n, PETSC_DETERMINE, &x));
  PetscCall(VecGetSize(x, &N));
  PetscCall(VecGetOwnershipRange(x, &lo, &hi));
  PetscCall(VecDuplicate(x, &y));
  PetscCall(Fill(x, 3.0));

  /* A ghost-style scatter: 2 entries of the next ranks (and a repeated one),
   * none of this rank's (with one rank: none at all). */
  m = size > 1 ? 5 : 0;
  PetscCall(PetscMalloc1(m + 1, &idx));
  for (PetscInt k = 0; k < m; k++) idx[k] = (hi + 7 * k + (k == 4 ? -7 : 0)) % N;
  for (PetscInt k = 0; k < m; k++)
    if (idx[k] >= lo && idx[k] < hi) idx[k] = (hi + n / 2) % N;
  PetscCall(ISCreateGeneral(PETSC_COMM_SELF, m, idx, PETSC_COPY_VALUES, &is));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, m, &lv));
  PetscCall(VecScatterCreate(x, is, lv, NULL, &sc));
  PetscCall(VecSet(lv, -1.0));
  PetscCall(VecScatterBegin(sc, x, lv, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(sc, x, lv, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(Report("forward_insert", x)); /* unchanged */
  {
    const PetscScalar *a;
    double s = 0, g;
    PetscCall(VecGetArrayRead(lv, &a));
    for (PetscInt k = 0; k < m; k++) s += PetscRealPart(a[k]) * (k + 1);
    PetscCall(VecRestoreArrayRead(lv, &a));
    PetscCallMPI(MPI_Allreduce(&s, &g, 1, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "forward_insert_ghosts %.17e\n", g));
  }
  PetscCall(VecCopy(x, y));
  PetscCall(VecScatterBegin(sc, lv, y, ADD_VALUES, SCATTER_REVERSE));
  PetscCall(VecScatterEnd(sc, lv, y, ADD_VALUES, SCATTER_REVERSE));
  PetscCall(Report("reverse_add", y));
  /* forward ADD_VALUES, reverse INSERT_VALUES (halo's), reverse MAX_VALUES (basic's; a real
   * build's only: MAX of complex values is not an MPI operation) */
  PetscCall(VecScatterBegin(sc, x, lv, ADD_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(sc, x, lv, ADD_VALUES, SCATTER_FORWARD));
  PetscCall(VecCopy(x, y));
  PetscCall(VecScatterBegin(sc, lv, y, INSERT_VALUES, SCATTER_REVERSE));
  PetscCall(VecScatterEnd(sc, lv, y, INSERT_VALUES, SCATTER_REVERSE));
  PetscCall(Report("reverse_insert", y));
#if !PetscDefined(USE_COMPLEX)
  PetscCall(VecCopy(x, y));
  PetscCall(VecScatterBegin(sc, lv, y, MAX_VALUES, SCATTER_REVERSE));
  PetscCall(VecScatterEnd(sc, lv, y, MAX_VALUES, SCATTER_REVERSE));
  PetscCall(Report("reverse_max", y));
#endif
  PetscCall(VecScatterDestroy(&sc));
  PetscCall(VecDestroy(&lv));
  PetscCall(ISDestroy(&is));

  /* With -in_place, a vector scattered into itself: this rank's entries from
   * the next rank's, checked against the values they must have (PETSc's basic
   * 3.18 sends from and receives into the same array at once when the indices
   * are contiguous, so its own answer depends on timing from 3 ranks on). */
  {
    PetscBool in_place = PETSC_FALSE;
    PetscCall(PetscOptionsGetBool(NULL, NULL, "-in_place", &in_place, NULL));
    if (in_place) {
      IS from, to;
      const PetscScalar *a;
      double err = 0, all_err;
      PetscCall(ISCreateStride(PETSC_COMM_SELF, n, (lo + n) % N, 1, &from));
      PetscCall(ISCreateStride(PETSC_COMM_SELF, n, lo, 1, &to));
      PetscCall(VecCopy(x, y));
      PetscCall(VecScatterCreate(y, from, y, to, &sc));
      PetscCall(VecScatterBegin(sc, y, y, INSERT_VALUES, SCATTER_FORWARD));
      PetscCall(VecScatterEnd(sc, y, y, INSERT_VALUES, SCATTER_FORWARD));
      PetscCall(VecGetArrayRead(y, &a));
      for (PetscInt i = 0; i < n; i++) {
        PetscInt j = (lo + i + n) % N;
        err = PetscMax(err, PetscAbsReal(PetscRealPart(a[i]) - (1.0 / (j + 3.0) + 0.1 * 3.0)));
      }
      PetscCall(VecRestoreArrayRead(y, &a));
      PetscCallMPI(MPI_Allreduce(&err, &all_err, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "in_place_shift_max_error %g\n", all_err));
      PetscCall(VecScatterDestroy(&sc));
      PetscCall(ISDestroy(&from));
      PetscCall(ISDestroy(&to));
    }
  }

  /* With -cancel: a reverse add whose terms cancel in one root (every rank but 0 adds
   * 1e16, -1e16 or 1 into global entry 0): the root's value depends on the order of the
   * additions (a node-aware strategy sums a node's terms first), so it is not printed;
   * -halo_sf_verify must accept it (within 1e-12 of the magnitudes added, 2e16), where a
   * tolerance relative to the entry's own size (about 1) did not. */
  {
    PetscBool cancel = PETSC_FALSE;
    PetscCall(PetscOptionsGetBool(NULL, NULL, "-cancel", &cancel, NULL));
    if (cancel && size > 1) {
      Vec lc;
      PetscInt mc = rank > 0 ? 1 : 0, zero = 0;
      PetscCall(ISCreateGeneral(PETSC_COMM_SELF, mc, &zero, PETSC_COPY_VALUES, &is));
      PetscCall(VecCreateSeq(PETSC_COMM_SELF, mc, &lc));
      PetscCall(VecScatterCreate(x, is, lc, NULL, &sc));
      PetscCall(VecSet(lc, rank == 1 ? 1e16 : rank == 2 ? -1e16 : 1.0));
      PetscCall(VecCopy(x, y));
      PetscCall(VecScatterBegin(sc, lc, y, ADD_VALUES, SCATTER_REVERSE));
      PetscCall(VecScatterEnd(sc, lc, y, ADD_VALUES, SCATTER_REVERSE));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "cancel done\n"));
      PetscCall(VecScatterDestroy(&sc));
      PetscCall(VecDestroy(&lc));
      PetscCall(ISDestroy(&is));
    }
  }

  /* Block size 2 (delegated). */
  {
    Vec xb, lb;
    PetscInt nb = size > 1 ? 2 : 0, bidx[2];
    PetscCall(VecCreateMPI(PETSC_COMM_WORLD, 2 * n, PETSC_DETERMINE, &xb));
    PetscCall(VecSetBlockSize(xb, 2));
    PetscCall(Fill(xb, 5.0));
    bidx[0] = (hi % N);
    bidx[1] = ((hi + 3) % N);
    PetscCall(ISCreateBlock(PETSC_COMM_SELF, 2, nb, bidx, PETSC_COPY_VALUES, &is));
    PetscCall(VecCreateSeq(PETSC_COMM_SELF, 2 * nb, &lb));
    PetscCall(VecScatterCreate(xb, is, lb, NULL, &sc));
    PetscCall(VecScatterBegin(sc, xb, lb, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecScatterEnd(sc, xb, lb, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecScatterBegin(sc, lb, xb, ADD_VALUES, SCATTER_REVERSE));
    PetscCall(VecScatterEnd(sc, lb, xb, ADD_VALUES, SCATTER_REVERSE));
    PetscCall(Report("block2", xb));
    PetscCall(VecScatterDestroy(&sc));
    PetscCall(ISDestroy(&is));
    PetscCall(VecDestroy(&lb));
    PetscCall(VecDestroy(&xb));
  }

  /* Leaves on their own rank (delegated). */
  PetscCall(VecScatterCreateToAll(x, &sc, &all));
  PetscCall(VecScatterBegin(sc, x, all, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(sc, x, all, INSERT_VALUES, SCATTER_FORWARD));
  {
    PetscReal nrm;
    PetscCall(VecNorm(all, NORM_1, &nrm));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "to_all %.17e\n", (double)nrm));
  }
  PetscCall(VecScatterDestroy(&sc));
  PetscCall(VecDestroy(&all));

  /* A star forest of integers made by PetscSFSetGraph (delegated). */
  {
    PetscSF sf;
    PetscSFNode remote[1];
    PetscInt root = 100 * rank + 7, leaf = -1, sum;
    remote[0].rank = (rank + 1) % size;
    remote[0].index = 0;
    PetscCall(PetscSFCreate(PETSC_COMM_WORLD, &sf));
    PetscCall(PetscSFSetGraph(sf, 1, 1, NULL, PETSC_COPY_VALUES, remote, PETSC_COPY_VALUES));
    PetscCall(PetscSFSetUp(sf));
    PetscCall(PetscSFBcastBegin(sf, MPIU_INT, &root, &leaf, MPI_REPLACE));
    PetscCall(PetscSFBcastEnd(sf, MPIU_INT, &root, &leaf, MPI_REPLACE));
    PetscCallMPI(MPI_Allreduce(&leaf, &sum, 1, MPIU_INT, MPI_SUM, PETSC_COMM_WORLD));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "sf_int %" PetscInt_FMT "\n", sum));
    PetscCall(PetscSFDestroy(&sf));
  }

  PetscCall(PetscFree(idx));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(PetscFinalize());
  return 0;
}
