/* bench_matmult: times the halo exchange of a distributed SpMV as PETSc does it. The matrix is the
   27-point Laplacian on an n^3 grid (option -n, default 40) as a MATMPIAIJ (-mat_type may name
   another MPIAIJ type). Besides the matrix it builds a VecScatter equal to the one MatMult uses:
   from x to a sequential vector of the off-diagonal block's columns (its garray). After -warmup W
   (default 20) untimed runs it times -reps R (default 200) runs of each of
     scatter:          VecScatterBegin/End(sc, x, lvec, INSERT_VALUES, SCATTER_FORWARD)
     matmult:          MatMult(A, x, y)
     reverse:          VecScatterBegin/End(sc, lvec, x, ADD_VALUES, SCATTER_REVERSE)
     matmulttranspose: MatMultTranspose(A, x, y)
   each run after an MPI_Barrier, timed with MPI_Wtime and maxed over the ranks, and prints the
   median and the minimum over the runs in microseconds.

   This is a plain PETSc program: it contains no halo call and includes no halo header. halo can
   only come in through PETSc options, e.g. -dll_append libhalo_petsc.so -halo_sf. */
#include <petscmat.h>

/* local size and first global index of a dimension of global size N, split as PETSC_DECIDE does */
static PetscErrorCode SplitRange(MPI_Comm comm, PetscInt N, PetscInt *n, PetscInt *start) {
  PetscInt nloc = PETSC_DECIDE, Nglob = N, end = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscSplitOwnership(comm, &nloc, &Nglob));
  PetscCallMPI(MPI_Scan(&nloc, &end, 1, MPIU_INT, MPI_SUM, comm));
  *n = nloc;
  *start = end - nloc;
  PetscFunctionReturn(0);
}

/* the 27-point Laplacian on an n^3 grid: 26 on the diagonal, -1 for each neighbour in the grid */
static PetscErrorCode BuildLaplacian27(MPI_Comm comm, PetscInt n, Mat *A) {
  PetscInt N, m = 0, rstart = 0, r, *dnz, *onz, cols[27];
  PetscScalar vals[27];

  PetscFunctionBeginUser;
  PetscCheck(n >= 1, comm, PETSC_ERR_ARG_OUTOFRANGE, "-n must be at least 1, not %" PetscInt_FMT,
             n);
  PetscCheck((PetscInt64)n * n * n <= PETSC_MAX_INT, comm, PETSC_ERR_ARG_OUTOFRANGE,
             "-n %" PetscInt_FMT ": n^3 rows do not fit in a PetscInt", n);
  N = n * n * n;
  PetscCall(SplitRange(comm, N, &m, &rstart));
  PetscCall(PetscCalloc2(m, &dnz, m, &onz));
  for (int pass = 0; pass < 2; pass++) { /* pass 0 counts, pass 1 inserts */
    if (pass == 1) {
      PetscCall(MatCreate(comm, A));
      PetscCall(MatSetSizes(*A, m, m, N, N));
      PetscCall(MatSetType(*A, MATMPIAIJ));
      PetscCall(MatSetFromOptions(*A));
      PetscCall(MatMPIAIJSetPreallocation(*A, 0, dnz, 0, onz));
    }
    for (r = rstart; r < rstart + m; r++) {
      const PetscInt i = r % n, j = (r / n) % n, k = r / (n * n);
      PetscInt nc = 0;
      for (PetscInt dk = -1; dk <= 1; dk++)
        for (PetscInt dj = -1; dj <= 1; dj++)
          for (PetscInt di = -1; di <= 1; di++) {
            const PetscInt ii = i + di, jj = j + dj, kk = k + dk;
            if (ii < 0 || ii >= n || jj < 0 || jj >= n || kk < 0 || kk >= n) continue;
            cols[nc] = ii + n * (jj + n * kk);
            vals[nc] = (di == 0 && dj == 0 && dk == 0) ? 26.0 : -1.0;
            nc++;
          }
      if (pass == 0) {
        for (PetscInt c = 0; c < nc; c++) {
          if (cols[c] >= rstart && cols[c] < rstart + m)
            dnz[r - rstart]++;
          else
            onz[r - rstart]++;
        }
      } else
        PetscCall(MatSetValues(*A, 1, &r, nc, cols, vals, INSERT_VALUES));
    }
  }
  PetscCall(PetscFree2(dnz, onz));
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

enum { OP_SCATTER, OP_MATMULT, OP_REVERSE, OP_MATMULTT, NOPS };
static const char *const opname[NOPS] = {"scatter", "matmult", "reverse", "matmulttranspose"};

static PetscErrorCode RunOp(int op, Mat A, VecScatter sc, Vec x, Vec y, Vec lvec) {
  PetscFunctionBeginUser;
  switch (op) {
  case OP_SCATTER:
    PetscCall(VecScatterBegin(sc, x, lvec, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecScatterEnd(sc, x, lvec, INSERT_VALUES, SCATTER_FORWARD));
    break;
  case OP_MATMULT: PetscCall(MatMult(A, x, y)); break;
  case OP_REVERSE:
    PetscCall(VecScatterBegin(sc, lvec, x, ADD_VALUES, SCATTER_REVERSE));
    PetscCall(VecScatterEnd(sc, lvec, x, ADD_VALUES, SCATTER_REVERSE));
    break;
  default: PetscCall(MatMultTranspose(A, x, y)); break;
  }
  PetscFunctionReturn(0);
}

int main(int argc, char **argv) {
  MPI_Comm comm;
  PetscMPIInt size;
  PetscInt n = 40, reps = 200, warmup = 20, M, nghost, ghosts_max;
  Mat A, Ad, Ao;
  const PetscInt *garray;
  IS is;
  Vec x, y, lvec;
  VecScatter sc;
  PetscReal *t;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  comm = PETSC_COMM_WORLD;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscOptionsBegin(comm, NULL, "bench_matmult options", NULL);
  PetscCall(PetscOptionsInt("-n", "grid points per direction of the 27-point Laplacian", NULL, n,
                            &n, NULL));
  PetscCall(PetscOptionsInt("-reps", "timed repetitions", NULL, reps, &reps, NULL));
  PetscCall(
      PetscOptionsInt("-warmup", "untimed repetitions before them", NULL, warmup, &warmup, NULL));
  PetscOptionsEnd();
  PetscCheck(reps >= 1 && warmup >= 0, comm, PETSC_ERR_ARG_OUTOFRANGE,
             "-reps must be at least 1 and -warmup at least 0");

  PetscCall(BuildLaplacian27(comm, n, &A));
  PetscCall(MatGetSize(A, &M, NULL));
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(VecSet(x, 1.0));

  /* the scatter MatMult does: owned part of x -> the off-diagonal block's columns */
  PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, &garray));
  PetscCall(MatGetSize(Ao, NULL, &nghost));
  PetscCall(ISCreateGeneral(PETSC_COMM_SELF, nghost, garray, PETSC_COPY_VALUES, &is));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, nghost, &lvec));
  PetscCall(VecScatterCreate(x, is, lvec, NULL, &sc));
  PetscCallMPI(MPI_Allreduce(&nghost, &ghosts_max, 1, MPIU_INT, MPI_MAX, comm));
  PetscCall(PetscPrintf(comm, "rows %" PetscInt_FMT " ranks %d ghosts_max %" PetscInt_FMT "\n", M,
                        (int)size, ghosts_max));

  PetscCall(PetscMalloc1(reps, &t));
  for (int op = 0; op < NOPS; op++) {
    for (PetscInt r = 0; r < warmup + reps; r++) {
      double t0, dt, dtmax;

      PetscCallMPI(MPI_Barrier(comm));
      t0 = MPI_Wtime();
      PetscCall(RunOp(op, A, sc, x, y, lvec));
      dt = MPI_Wtime() - t0;
      PetscCallMPI(MPI_Allreduce(&dt, &dtmax, 1, MPI_DOUBLE, MPI_MAX, comm));
      if (r >= warmup) t[r - warmup] = (PetscReal)(1e6 * dtmax);
    }
    PetscCall(PetscSortReal(reps, t));
    PetscCall(PetscPrintf(comm, "%s_us median %.3f min %.3f\n", opname[op],
                          (double)(reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2])),
                          (double)t[0]));
  }

  PetscCall(PetscFree(t));
  PetscCall(VecScatterDestroy(&sc));
  PetscCall(VecDestroy(&lvec));
  PetscCall(ISDestroy(&is));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return 0;
}
