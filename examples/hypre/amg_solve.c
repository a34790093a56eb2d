/* amg_solve: a plain hypre program (no halo call in it). It assembles the
 * 27-point Laplacian on an n^3 grid, or a Matrix Market file, through hypre's
 * IJ interface, and solves A x = b (b = A 1) with BoomerAMG as the
 * preconditioner of PCG or GMRES, or alone. It prints hypre's residual
 * history, the iteration count, the final relative residual and a checksum
 * of the solution with every digit, so that two runs can be compared.
 *
 * Run it with halo's exchanges (nothing else changes):
 *   LD_PRELOAD=build/libhalo_hypre.so mpirun -n 4 ./hypre_amg_solve -n 30
 *
 * Options: -n N (grid, default 20) | -f file.mtx; -solver pcg|gmres|amg
 * (default pcg); -tol T (1e-8); -maxit K (100); -relax R (hypre relax type:
 * 18 l1-Jacobi (default), 3/6 hybrid Gauss-Seidel, 8 l1 symmetric GS);
 * -coarsen C (10 HMIS, default); -interp I (6 extended+i, default);
 * -pmax P (4); -theta S (strong threshold, 0.5); -print L (solver print
 * level, 2); -amg_print L (BoomerAMG's, 1: its set-up statistics);
 * -repeat R (solve R times, same answer each: a longer run to time).
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <HYPRE.h>
#include <HYPRE_IJ_mv.h>
#include <HYPRE_krylov.h>
#include <HYPRE_parcsr_ls.h>
#include <mpi.h>

typedef struct {
  HYPRE_BigInt *rows; /* global row of each local entry */
  HYPRE_BigInt *cols;
  double *vals;
  long long n;
  HYPRE_BigInt global_n;
} triples;

static void die(MPI_Comm comm, const char *msg)
{
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) fprintf(stderr, "amg_solve: %s\n", msg);
  MPI_Abort(comm, 1);
}

/* Rows [lo, hi) of a global n: contiguous, as even as possible. */
static void split(HYPRE_BigInt n, int rank, int size, HYPRE_BigInt *lo, HYPRE_BigInt *hi)
{
  HYPRE_BigInt base = n / size, extra = n % size;
  *lo = rank * base + (rank < extra ? rank : extra);
  *hi = *lo + base + (rank < extra ? 1 : 0);
}

static void push(triples *t, long long *cap, HYPRE_BigInt r, HYPRE_BigInt c, double v)
{
  if (t->n == *cap) {
    *cap = *cap ? 2 * *cap : 1024;
    t->rows = realloc(t->rows, (size_t)*cap * sizeof *t->rows);
    t->cols = realloc(t->cols, (size_t)*cap * sizeof *t->cols);
    t->vals = realloc(t->vals, (size_t)*cap * sizeof *t->vals);
    if (!t->rows || !t->cols || !t->vals) {
      fprintf(stderr, "amg_solve: out of memory\n");
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  t->rows[t->n] = r;
  t->cols[t->n] = c;
  t->vals[t->n] = v;
  t->n++;
}

/* The 27-point Laplacian (26 on the diagonal, -1 to each neighbour). */
static void laplacian27(int n, HYPRE_BigInt lo, HYPRE_BigInt hi, triples *t)
{
  long long cap = 0;
  t->global_n = (HYPRE_BigInt)n * n * n;
  for (HYPRE_BigInt row = lo; row < hi; row++) {
    int i = (int)(row % n), j = (int)((row / n) % n), k = (int)(row / ((HYPRE_BigInt)n * n));
    for (int dk = -1; dk <= 1; dk++)
      for (int dj = -1; dj <= 1; dj++)
        for (int di = -1; di <= 1; di++) {
          int ii = i + di, jj = j + dj, kk = k + dk;
          if (ii < 0 || jj < 0 || kk < 0 || ii >= n || jj >= n || kk >= n) continue;
          HYPRE_BigInt col = ii + (HYPRE_BigInt)n * (jj + (HYPRE_BigInt)n * kk);
          push(t, &cap, row, col, col == row ? 26.0 : -1.0);
        }
  }
}

/* A Matrix Market file (coordinate, real/integer/pattern, general or
 * symmetric, square): every rank reads it and keeps its rows. */
static void read_mm(MPI_Comm comm, const char *path, int rank, int size, triples *t)
{
  FILE *f = fopen(path, "r");
  if (!f) die(comm, "cannot open the matrix file");
  char line[1024];
  if (!fgets(line, sizeof line, f)) die(comm, "empty matrix file");
  for (char *p = line; *p; p++) *p = (char)tolower((unsigned char)*p);
  if (strncmp(line, "%%matrixmarket matrix coordinate", 32)) die(comm, "not a coordinate Matrix Market file");
  int symmetric = strstr(line, "symmetric") != NULL, pattern = strstr(line, "pattern") != NULL;
  if (strstr(line, "complex")) die(comm, "complex matrices are not supported");
  do {
    if (!fgets(line, sizeof line, f)) die(comm, "no size line");
  } while (line[0] == '%');
  long long m = 0, n = 0, nnz = 0;
  if (sscanf(line, "%lld %lld %lld", &m, &n, &nnz) != 3 || m != n || m <= 0 || nnz < 0)
    die(comm, "bad size line (the matrix must be square)");
  t->global_n = (HYPRE_BigInt)m;
  HYPRE_BigInt lo, hi;
  split(t->global_n, rank, size, &lo, &hi);
  long long cap = 0;
  for (long long e = 0; e < nnz; e++) {
    long long r, c;
    double v = 1.0;
    if (!fgets(line, sizeof line, f)) die(comm, "the file ends early");
    int got = pattern ? sscanf(line, "%lld %lld", &r, &c) : sscanf(line, "%lld %lld %lf", &r, &c, &v);
    if (got != (pattern ? 2 : 3) || r < 1 || c < 1 || r > m || c > m) die(comm, "bad entry");
    r--, c--;
    if (r >= lo && r < hi) push(t, &cap, r, c, v);
    if (symmetric && r != c && c >= lo && c < hi) push(t, &cap, c, r, v);
  }
  fclose(f);
}

static const char *arg(int argc, char **argv, const char *name, const char *dflt)
{
  for (int i = 1; i + 1 < argc; i++)
    if (!strcmp(argv[i], name)) return argv[i + 1];
  return dflt;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  HYPRE_Init();

  int n = atoi(arg(argc, argv, "-n", "20"));
  const char *file = arg(argc, argv, "-f", NULL);
  const char *solver_name = arg(argc, argv, "-solver", "pcg");
  double tol = atof(arg(argc, argv, "-tol", "1e-8"));
  int maxit = atoi(arg(argc, argv, "-maxit", "100"));
  int relax = atoi(arg(argc, argv, "-relax", "18"));
  int coarsen = atoi(arg(argc, argv, "-coarsen", "10"));
  int interp = atoi(arg(argc, argv, "-interp", "6"));
  int pmax = atoi(arg(argc, argv, "-pmax", "4"));
  double theta = atof(arg(argc, argv, "-theta", "0.5"));
  int print = atoi(arg(argc, argv, "-print", "2"));
  int amg_print = atoi(arg(argc, argv, "-amg_print", "1"));
  int repeat = atoi(arg(argc, argv, "-repeat", "1"));
  if ((!file && n < 1) || maxit < 1 || repeat < 1) die(comm, "bad option value");

  triples t = {0};
  if (file)
    read_mm(comm, file, rank, size, &t);
  else {
    HYPRE_BigInt lo0, hi0;
    split((HYPRE_BigInt)n * n * n, rank, size, &lo0, &hi0);
    laplacian27(n, lo0, hi0, &t);
  }
  HYPRE_BigInt lo, hi;
  split(t.global_n, rank, size, &lo, &hi);

  HYPRE_IJMatrix ij;
  HYPRE_IJMatrixCreate(comm, lo, hi - 1, lo, hi - 1, &ij);
  HYPRE_IJMatrixSetObjectType(ij, HYPRE_PARCSR);
  HYPRE_IJMatrixInitialize(ij);
  for (long long e = 0; e < t.n; e++) {
    HYPRE_Int one = 1;
    HYPRE_IJMatrixAddToValues(ij, 1, &one, &t.rows[e], &t.cols[e], &t.vals[e]);
  }
  HYPRE_IJMatrixAssemble(ij);
  HYPRE_ParCSRMatrix A;
  HYPRE_IJMatrixGetObject(ij, (void **)&A);

  HYPRE_IJVector ijx, ijb, ij1;
  HYPRE_IJVectorCreate(comm, lo, hi - 1, &ijx);
  HYPRE_IJVectorCreate(comm, lo, hi - 1, &ijb);
  HYPRE_IJVectorCreate(comm, lo, hi - 1, &ij1);
  HYPRE_IJVector all[3] = {ijx, ijb, ij1};
  for (int v = 0; v < 3; v++) {
    HYPRE_IJVectorSetObjectType(all[v], HYPRE_PARCSR);
    HYPRE_IJVectorInitialize(all[v]);
  }
  HYPRE_Int nloc = (HYPRE_Int)(hi - lo);
  HYPRE_BigInt *idx = malloc((size_t)(nloc > 0 ? nloc : 1) * sizeof *idx);
  double *vals = malloc((size_t)(nloc > 0 ? nloc : 1) * sizeof *vals);
  for (HYPRE_Int i = 0; i < nloc; i++) {
    idx[i] = lo + i;
    vals[i] = 1.0;
  }
  HYPRE_IJVectorSetValues(ij1, nloc, idx, vals);
  for (HYPRE_Int i = 0; i < nloc; i++) vals[i] = 0.0;
  HYPRE_IJVectorSetValues(ijx, nloc, idx, vals);
  HYPRE_IJVectorSetValues(ijb, nloc, idx, vals);
  for (int v = 0; v < 3; v++) HYPRE_IJVectorAssemble(all[v]);
  HYPRE_ParVector x, b, one;
  HYPRE_IJVectorGetObject(ijx, (void **)&x);
  HYPRE_IJVectorGetObject(ijb, (void **)&b);
  HYPRE_IJVectorGetObject(ij1, (void **)&one);
  HYPRE_ParCSRMatrixMatvec(1.0, A, one, 0.0, b); /* b = A 1 */

  HYPRE_Solver amg;
  HYPRE_BoomerAMGCreate(&amg);
  HYPRE_BoomerAMGSetCoarsenType(amg, coarsen);
  HYPRE_BoomerAMGSetInterpType(amg, interp);
  HYPRE_BoomerAMGSetPMaxElmts(amg, pmax);
  HYPRE_BoomerAMGSetStrongThreshold(amg, theta);
  HYPRE_BoomerAMGSetRelaxType(amg, relax);
  HYPRE_BoomerAMGSetPrintLevel(amg, amg_print);

  int its = 0;
  double rel = 0.0, t_setup = 0.0, t_solve = 0.0;
  for (int rep = 0; rep < repeat; rep++) {
    HYPRE_ParVectorSetConstantValues(x, 0.0);
    double t0 = MPI_Wtime();
    HYPRE_Int iters = 0;
    if (!strcmp(solver_name, "amg")) {
      HYPRE_BoomerAMGSetTol(amg, tol);
      HYPRE_BoomerAMGSetMaxIter(amg, maxit);
      if (rep == 0) HYPRE_BoomerAMGSetPrintLevel(amg, amg_print > 1 ? amg_print : 3);
      HYPRE_BoomerAMGSetup(amg, A, b, x);
      double t1 = MPI_Wtime();
      HYPRE_BoomerAMGSolve(amg, A, b, x);
      t_solve += MPI_Wtime() - t1;
      t_setup += t1 - t0;
      HYPRE_BoomerAMGGetNumIterations(amg, &iters);
      HYPRE_BoomerAMGGetFinalRelativeResidualNorm(amg, &rel);
    } else {
      HYPRE_Solver krylov;
      int pcg = !strcmp(solver_name, "pcg");
      if (!pcg && strcmp(solver_name, "gmres")) die(comm, "-solver: pcg, gmres or amg");
      HYPRE_BoomerAMGSetTol(amg, 0.0);
      HYPRE_BoomerAMGSetMaxIter(amg, 1);
      if (pcg) {
        HYPRE_ParCSRPCGCreate(comm, &krylov);
        HYPRE_PCGSetTol(krylov, tol);
        HYPRE_PCGSetMaxIter(krylov, maxit);
        HYPRE_PCGSetTwoNorm(krylov, 1);
        HYPRE_PCGSetPrintLevel(krylov, rep == 0 ? print : 0);
        HYPRE_PCGSetPrecond(krylov, (HYPRE_PtrToSolverFcn)HYPRE_BoomerAMGSolve,
                            (HYPRE_PtrToSolverFcn)HYPRE_BoomerAMGSetup, amg);
        HYPRE_ParCSRPCGSetup(krylov, A, b, x);
        double t1 = MPI_Wtime();
        HYPRE_ParCSRPCGSolve(krylov, A, b, x);
        t_solve += MPI_Wtime() - t1;
        t_setup += t1 - t0;
        HYPRE_PCGGetNumIterations(krylov, &iters);
        HYPRE_PCGGetFinalRelativeResidualNorm(krylov, &rel);
        HYPRE_ParCSRPCGDestroy(krylov);
      } else {
        HYPRE_ParCSRGMRESCreate(comm, &krylov);
        HYPRE_GMRESSetTol(krylov, tol);
        HYPRE_GMRESSetMaxIter(krylov, maxit);
        HYPRE_GMRESSetKDim(krylov, 30);
        HYPRE_GMRESSetPrintLevel(krylov, rep == 0 ? print : 0);
        HYPRE_GMRESSetPrecond(krylov, (HYPRE_PtrToSolverFcn)HYPRE_BoomerAMGSolve,
                              (HYPRE_PtrToSolverFcn)HYPRE_BoomerAMGSetup, amg);
        HYPRE_ParCSRGMRESSetup(krylov, A, b, x);
        double t1 = MPI_Wtime();
        HYPRE_ParCSRGMRESSolve(krylov, A, b, x);
        t_solve += MPI_Wtime() - t1;
        t_setup += t1 - t0;
        HYPRE_GMRESGetNumIterations(krylov, &iters);
        HYPRE_GMRESGetFinalRelativeResidualNorm(krylov, &rel);
        HYPRE_ParCSRGMRESDestroy(krylov);
      }
    }
    its = (int)iters;
    HYPRE_BoomerAMGSetPrintLevel(amg, 0);
  }

  /* a checksum of x with every digit: sum of (i+1) x_i and sum of x_i^2 */
  HYPRE_ParVectorGetValues(x, nloc, idx, vals);
  double s[2] = {0.0, 0.0}, S[2];
  for (HYPRE_Int i = 0; i < nloc; i++) {
    s[0] += (double)(idx[i] + 1) * vals[i];
    s[1] += vals[i] * vals[i];
  }
  MPI_Reduce(s, S, 2, MPI_DOUBLE, MPI_SUM, 0, comm);
  double ts[2] = {t_setup / repeat, t_solve / repeat}, T[2];
  MPI_Reduce(ts, T, 2, MPI_DOUBLE, MPI_MAX, 0, comm);
  if (rank == 0) {
    printf("amg_solve: %s, %lld rows, %d ranks\n", solver_name, (long long)t.global_n, size);
    printf("amg_solve: iterations %d\n", its);
    printf("amg_solve: final relative residual %.17g\n", rel);
    printf("amg_solve: checksum %.17g %.17g\n", S[0], S[1]);
    fprintf(stderr, "amg_solve: setup_s %.6f solve_s %.6f\n", T[0], T[1]);
  }

  HYPRE_BoomerAMGDestroy(amg);
  HYPRE_IJMatrixDestroy(ij);
  for (int v = 0; v < 3; v++) HYPRE_IJVectorDestroy(all[v]);
  free(idx);
  free(vals);
  free(t.rows);
  free(t.cols);
  free(t.vals);
  HYPRE_Finalize();
  MPI_Finalize();
  return 0;
}
