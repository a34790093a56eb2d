/* bench_matmult: times the halo exchange of a distributed SpMV as PETSc does it. The matrix is the
   27-point Laplacian on an n^3 grid (option -n, default 40) or a Matrix Market file (-f file.mtx),
   as a MATMPIAIJ (-mat_type may name another MPIAIJ type), rows split as PETSC_DECIDE does. Besides the matrix it builds a VecScatter equal to the one MatMult uses:
   from x to a sequential vector of the off-diagonal block's columns (its garray). After -warmup W
   (default 20) untimed runs it times -reps R (default 200) runs of each of
     scatter:          VecScatterBegin/End(sc, x, lvec, INSERT_VALUES, SCATTER_FORWARD)
     matmult:          MatMult(A, x, y)
     reverse:          VecScatterBegin/End(sc, lvec, x, ADD_VALUES, SCATTER_REVERSE)
     matmulttranspose: MatMultTranspose(A, y, x)
   each run after an MPI_Barrier, timed with MPI_Wtime and maxed over the ranks, and prints the
   median and the minimum over the runs in microseconds.

   -bs K (default 1): the scatter and reverse move blocks of K scalars per ghost (a vector of
   block size K, the index set a block one: the star forest's unit is K scalars, as a BAIJ
   matrix's or a DMDA with K unknowns a point); the products stay the scalar matrix's.

   The vectors have x's type (-vec_type cuda: CUDA memory, the block twins too).

   -pair_sf_type T builds the matrix and the scatter a second time with their star forests of
   type T (the option -sf_type set while they are made) and times the two side by side in the same
   process: each repetition runs the operation on both, in alternating order, and the program
   prints for each operation the medians of both and the median over repetitions of the ratio
   second / first. With -check, before the timing, the scatter and the reverse run once on both
   from values that differ per entry (x's entries their global index + 1, the ghosts' their
   position times 3 + the rank + 1, all exact in any scalar type and order), and the program
   prints "check scatter identical" and "check reverse identical", or stops with an error
   where the two differ.

   This is a plain PETSc program: it contains no halo call and includes no halo header. halo can
   only come in through PETSc options, e.g. -dll_append libhalo_petsc.so -halo_sf. */
#include <petscdevice.h>
#include <petscmat.h>
#include <string.h>

#include "matrices.h"

enum { OP_SCATTER, OP_MATMULT, OP_REVERSE, OP_MATMULTT, NOPS };
static const char *const opname[NOPS] = {"scatter", "matmult", "reverse", "matmulttranspose"};

static PetscErrorCode RunOp(int op, Mat A, VecScatter sc, Vec x, Vec y, Vec lvec, VecScatter ss,
                           Vec xs, Vec ls) {
  PetscFunctionBeginUser;
  switch (op) {
  case OP_SCATTER:
    PetscCall(VecScatterBegin(ss, xs, ls, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecScatterEnd(ss, xs, ls, INSERT_VALUES, SCATTER_FORWARD));
    break;
  case OP_MATMULT: PetscCall(MatMult(A, x, y)); break;
  case OP_REVERSE:
    PetscCall(VecScatterBegin(ss, ls, xs, ADD_VALUES, SCATTER_REVERSE));
    PetscCall(VecScatterEnd(ss, ls, xs, ADD_VALUES, SCATTER_REVERSE));
    break;
  default: PetscCall(MatMultTranspose(A, y, x)); break;
  }
  PetscFunctionReturn(0);
}

/* the matrix and the scatter MatMult does (owned part of x -> the off-diagonal block's columns),
   with their star forests of type sf_type (NULL: as the options say) */
typedef struct {
  Mat A;
  IS is;
  Vec x, y, lvec;
  VecScatter sc;
  Vec xs, ls; /* what the scatter and reverse move: x and lvec, or their block-size-K twins */
  VecScatter ss;
} Case;

static PetscErrorCode CaseCreate(MPI_Comm comm, PetscInt n, const char *file, const char *sf_type,
                                 PetscInt bs, Case *c) {
  Mat Ad, Ao;
  const PetscInt *garray;
  PetscInt nghost;
  char saved[256] = "";
  PetscBool had = PETSC_FALSE;

  PetscFunctionBeginUser;
  if (sf_type) {
    PetscCall(PetscOptionsGetString(NULL, NULL, "-sf_type", saved, sizeof saved, &had));
    PetscCall(PetscOptionsSetValue(NULL, "-sf_type", sf_type));
  }
  if (file[0])
    PetscCall(LoadMatrixMarket(comm, file, &c->A));
  else
    PetscCall(BuildLaplacian27(comm, n, &c->A));
  PetscCall(MatCreateVecs(c->A, &c->x, &c->y));
  PetscCall(VecSet(c->x, 1.0));
  PetscCall(MatMPIAIJGetSeqAIJ(c->A, &Ad, &Ao, &garray));
  PetscCall(MatGetSize(Ao, NULL, &nghost));
  PetscCall(ISCreateGeneral(PETSC_COMM_SELF, nghost, garray, PETSC_COPY_VALUES, &c->is));
  { /* the sequential type of x's (seq for mpi, seqcuda for mpicuda), as MatMult's lvec */
    VecType xtype;
    char ltype[64] = "seq";

    PetscCall(VecGetType(c->x, &xtype));
    if (xtype && !strncmp(xtype, "mpi", 3)) PetscCall(PetscSNPrintf(ltype, sizeof ltype, "seq%s", xtype + 3));
    PetscCall(VecCreate(PETSC_COMM_SELF, &c->lvec));
    PetscCall(VecSetSizes(c->lvec, nghost, nghost));
    PetscCall(VecSetType(c->lvec, ltype));
  }
  PetscCall(VecScatterCreate(c->x, c->is, c->lvec, NULL, &c->sc));
  c->xs = c->x, c->ls = c->lvec, c->ss = c->sc;
  if (bs > 1) { /* the same ghosts, K scalars each */
    PetscInt nloc;
    IS isb;

    VecType xt, lt;

    PetscCall(VecGetLocalSize(c->x, &nloc));
    PetscCall(VecGetType(c->x, &xt));
    PetscCall(VecGetType(c->lvec, &lt));
    PetscCall(VecCreate(comm, &c->xs));
    PetscCall(VecSetSizes(c->xs, nloc * bs, PETSC_DETERMINE));
    PetscCall(VecSetBlockSize(c->xs, bs));
    PetscCall(VecSetType(c->xs, xt));
    PetscCall(VecSet(c->xs, 1.0));
    PetscCall(VecCreate(PETSC_COMM_SELF, &c->ls));
    PetscCall(VecSetSizes(c->ls, nghost * bs, nghost * bs));
    PetscCall(VecSetBlockSize(c->ls, bs));
    PetscCall(VecSetType(c->ls, lt));
    PetscCall(ISCreateBlock(PETSC_COMM_SELF, bs, nghost, garray, PETSC_COPY_VALUES, &isb));
    PetscCall(VecScatterCreate(c->xs, isb, c->ls, NULL, &c->ss));
    PetscCall(ISDestroy(&isb));
  }
  if (sf_type) {
    if (had) PetscCall(PetscOptionsSetValue(NULL, "-sf_type", saved));
    else PetscCall(PetscOptionsClearValue(NULL, "-sf_type"));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode CaseDestroy(Case *c) {
  PetscFunctionBeginUser;
  if (c->ss != c->sc) {
    PetscCall(VecScatterDestroy(&c->ss));
    PetscCall(VecDestroy(&c->xs));
    PetscCall(VecDestroy(&c->ls));
  }
  PetscCall(VecScatterDestroy(&c->sc));
  PetscCall(VecDestroy(&c->lvec));
  PetscCall(ISDestroy(&c->is));
  PetscCall(VecDestroy(&c->x));
  PetscCall(VecDestroy(&c->y));
  PetscCall(MatDestroy(&c->A));
  PetscFunctionReturn(0);
}

/* one timed run of op on c: after a barrier, the max over ranks, in microseconds */
static PetscErrorCode TimeOp(MPI_Comm comm, int op, Case *c, PetscReal *us) {
  double t0, dt, dtmax;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Barrier(comm));
  t0 = MPI_Wtime();
  PetscCall(RunOp(op, c->A, c->sc, c->x, c->y, c->lvec, c->ss, c->xs, c->ls));
#if defined(PETSC_HAVE_CUDA) || defined(PETSC_HAVE_HIP)
  { /* a GPU's operation is enqueued: time it to its end */
    PetscDeviceContext dctx;

    PetscCall(PetscDeviceContextGetCurrentContext(&dctx));
    PetscCall(PetscDeviceContextSynchronize(dctx));
  }
#endif
  dt = MPI_Wtime() - t0;
  PetscCallMPI(MPI_Allreduce(&dt, &dtmax, 1, MPI_DOUBLE, MPI_MAX, comm));
  *us = (PetscReal)(1e6 * dtmax);
  PetscFunctionReturn(0);
}

/* -check: the scatter and the reverse once on both cases from the same values, compared */
static PetscErrorCode CheckPair(MPI_Comm comm, Case c[2]) {
  PetscMPIInt rank;
  PetscBool same;
  int all;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  for (int k = 0; k < 2; k++) {
    PetscInt lo, hi, nl;
    PetscScalar *a;

    PetscCall(VecGetOwnershipRange(c[k].xs, &lo, &hi));
    PetscCall(VecGetArray(c[k].xs, &a));
    for (PetscInt i = lo; i < hi; i++) a[i - lo] = (PetscScalar)(i + 1);
    PetscCall(VecRestoreArray(c[k].xs, &a));
    PetscCall(VecGetLocalSize(c[k].ls, &nl));
    PetscCall(VecGetArray(c[k].ls, &a));
    for (PetscInt i = 0; i < nl; i++) a[i] = -1;
    PetscCall(VecRestoreArray(c[k].ls, &a));
    PetscCall(VecScatterBegin(c[k].ss, c[k].xs, c[k].ls, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecScatterEnd(c[k].ss, c[k].xs, c[k].ls, INSERT_VALUES, SCATTER_FORWARD));
  }
  PetscCall(VecEqual(c[0].ls, c[1].ls, &same)); /* sequential: this rank's */
  all = (int)same;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_MIN, comm));
  PetscCheck(all, comm, PETSC_ERR_PLIB, "check: the pair's scatters gave different ghosts");
  PetscCall(PetscPrintf(comm, "check scatter identical\n"));
  for (int k = 0; k < 2; k++) {
    PetscInt nl;
    PetscScalar *a;

    PetscCall(VecGetLocalSize(c[k].ls, &nl));
    PetscCall(VecGetArray(c[k].ls, &a));
    for (PetscInt i = 0; i < nl; i++) a[i] = (PetscScalar)(3 * i + rank + 1);
    PetscCall(VecRestoreArray(c[k].ls, &a));
    PetscCall(VecScatterBegin(c[k].ss, c[k].ls, c[k].xs, ADD_VALUES, SCATTER_REVERSE));
    PetscCall(VecScatterEnd(c[k].ss, c[k].ls, c[k].xs, ADD_VALUES, SCATTER_REVERSE));
  }
  PetscCall(VecEqual(c[0].xs, c[1].xs, &same));
  PetscCheck(same, comm, PETSC_ERR_PLIB, "check: the pair's reverse scatters gave different sums");
  PetscCall(PetscPrintf(comm, "check reverse identical\n"));
  PetscFunctionReturn(0);
}

static PetscReal Median(PetscInt n, PetscReal *v) {
  PetscCallAbort(PETSC_COMM_SELF, PetscSortReal(n, v));
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char **argv) {
  MPI_Comm comm;
  PetscMPIInt size;
  PetscInt n = 40, reps = 200, warmup = 20, bs = 1, M, nghost, ghosts_max;
  char pair_type[256] = "", file[PETSC_MAX_PATH_LEN] = "";
  PetscBool pair = PETSC_FALSE, check = PETSC_FALSE;
  Case c[2];
  PetscReal *t[2], *ratio;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  comm = PETSC_COMM_WORLD;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscOptionsBegin(comm, NULL, "bench_matmult options", NULL);
  PetscCall(PetscOptionsInt("-n", "grid points per direction of the 27-point Laplacian", NULL, n,
                            &n, NULL));
  PetscCall(PetscOptionsString("-f", "Matrix Market file to use instead", NULL, file, file,
                               sizeof file, NULL));
  PetscCall(PetscOptionsInt("-reps", "timed repetitions", NULL, reps, &reps, NULL));
  PetscCall(PetscOptionsInt("-bs", "scalars per ghost of the scatter and reverse", NULL, bs, &bs,
                            NULL));
  PetscCall(
      PetscOptionsInt("-warmup", "untimed repetitions before them", NULL, warmup, &warmup, NULL));
  PetscCall(PetscOptionsString("-pair_sf_type",
                               "a second matrix and scatter with star forests of this type, timed "
                               "side by side with the first",
                               NULL, pair_type, pair_type, sizeof pair_type, &pair));
  PetscCall(PetscOptionsBool("-check", "compare the pair's scatter and reverse once", NULL, check,
                             &check, NULL));
  PetscOptionsEnd();
  PetscCheck(reps >= 1 && warmup >= 0 && bs >= 1, comm, PETSC_ERR_ARG_OUTOFRANGE,
             "-reps and -bs must be at least 1 and -warmup at least 0");

  PetscCall(CaseCreate(comm, n, file, NULL, bs, &c[0]));
  if (pair) PetscCall(CaseCreate(comm, n, file, pair_type, bs, &c[1]));
  PetscCall(MatGetSize(c[0].A, &M, NULL));
  PetscCall(VecGetSize(c[0].lvec, &nghost));
  PetscCallMPI(MPI_Allreduce(&nghost, &ghosts_max, 1, MPIU_INT, MPI_MAX, comm));
  PetscCall(PetscPrintf(comm, "rows %" PetscInt_FMT " ranks %d ghosts_max %" PetscInt_FMT "\n", M,
                        (int)size, ghosts_max));

  PetscCheck(!check || pair, comm, PETSC_ERR_ARG_WRONG, "-check compares a pair: give -pair_sf_type");
  if (check) PetscCall(CheckPair(comm, c));
  PetscCall(PetscMalloc3(reps, &t[0], reps, &t[1], reps, &ratio));
  for (int op = 0; op < NOPS; op++) {
    for (PetscInt r = 0; r < warmup + reps; r++) {
      PetscReal us[2] = {0, 0};
      for (int k = 0; k < (pair ? 2 : 1); k++) { /* alternating which runs first */
        const int which = pair ? (int)((r + k) % 2) : 0;
        PetscCall(TimeOp(comm, op, &c[which], &us[which]));
      }
      if (r < warmup) continue;
      t[0][r - warmup] = us[0];
      t[1][r - warmup] = us[1];
      ratio[r - warmup] = pair ? us[1] / us[0] : 0;
    }
    const PetscReal m0 = Median(reps, t[0]); /* sorts: then t[0][0] is the minimum */
    PetscCall(PetscPrintf(comm, "%s_us median %.3f min %.3f\n", opname[op], (double)m0,
                          (double)t[0][0]));
    if (pair) {
      const PetscReal m1 = Median(reps, t[1]);
      PetscCall(PetscPrintf(comm, "%s_pair_us median %.3f min %.3f\n", opname[op], (double)m1,
                            (double)t[1][0]));
      PetscCall(PetscPrintf(comm, "%s_ratio median %.4f\n", opname[op],
                            (double)Median(reps, ratio)));
    }
  }

  PetscCall(PetscFree3(t[0], t[1], ratio));
  PetscCall(CaseDestroy(&c[0]));
  if (pair) PetscCall(CaseDestroy(&c[1]));
  PetscCall(PetscFinalize());
  return 0;
}
