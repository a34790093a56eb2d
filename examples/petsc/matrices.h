/* matrices.h: the matrices of the PETSc examples, as MATMPIAIJ (or the type -mat_type names):
   the 27-point Laplacian on an n^3 grid and a Matrix Market file, rows split as PETSC_DECIDE
   does. Static functions for the examples to include; plain PETSc, no halo call. */
#ifndef HALO_EXAMPLES_PETSC_MATRICES_H
#define HALO_EXAMPLES_PETSC_MATRICES_H

#include <petscmat.h>

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* MatCreate + MatSetSizes + MatSetFromOptions (default MATMPIAIJ) + AIJ preallocation */
static PetscErrorCode CreatePreallocated(MPI_Comm comm, PetscInt m, PetscInt n, PetscInt M,
                                         PetscInt N, const PetscInt dnz[], const PetscInt onz[],
                                         Mat *A) {
  PetscInt *nnz, i;
  PetscBool typed;

  PetscFunctionBeginUser;
  PetscCall(MatCreate(comm, A));
  PetscCall(MatSetSizes(*A, m, n, M, N));
  /* MATMPIAIJ even on one rank, unless -mat_type names a type (PETSc refuses to turn an MPI
     type into a sequential one, so -mat_type seqaij would fail after MatSetType(MATMPIAIJ)) */
  PetscCall(PetscOptionsHasName(NULL, NULL, "-mat_type", &typed));
  if (!typed) PetscCall(MatSetType(*A, MATMPIAIJ));
  PetscCall(MatSetFromOptions(*A));
  PetscCall(MatMPIAIJSetPreallocation(*A, 0, dnz, 0, onz));
  PetscCall(PetscMalloc1(m, &nnz)); /* a SEQAIJ (-mat_type seqaij) has every column local */
  for (i = 0; i < m; i++) nnz[i] = PetscMin(dnz[i] + onz[i], N);
  PetscCall(MatSeqAIJSetPreallocation(*A, 0, nnz));
  PetscCall(PetscFree(nnz));
  PetscCall(MatSetUp(*A)); /* other -mat_type choices */
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
    if (pass == 1) PetscCall(CreatePreallocated(comm, m, m, N, N, dnz, onz, A));
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

/* ---- Matrix Market reader ------------------------------------------------------------------ */

enum { MM_REAL, MM_INTEGER, MM_PATTERN };
enum { MM_GENERAL, MM_SYMMETRIC, MM_SKEW };
#define MM_LINE 4096

/* reads one line into buf without its line end; *got is false at end of file; *whole is false
   when the line did not fit in buf (the rest of it is then skipped) */
static void MMReadLine(FILE *fp, char *buf, PetscBool *got, PetscBool *whole) {
  size_t len;

  *got = *whole = PETSC_FALSE;
  if (!fgets(buf, MM_LINE, fp)) return;
  *got = PETSC_TRUE;
  len = strlen(buf);
  /* the last line may lack its newline */
  if ((len > 0 && buf[len - 1] == '\n') || feof(fp)) {
    *whole = PETSC_TRUE;
  } else {
    int c;
    do c = fgetc(fp);
    while (c != EOF && c != '\n');
  }
  while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r')) buf[--len] = '\0';
}

static PetscBool MMBlank(const char *s) {
  for (; *s; s++)
    if (!isspace((unsigned char)*s)) return PETSC_FALSE;
  return PETSC_TRUE;
}

static void MMLower(char *s) {
  for (; *s; s++) *s = (char)tolower((unsigned char)*s);
}

/* parses a decimal integer at *s (after white space), advances *s; PETSC_FALSE on failure */
static PetscBool MMParseInt(char **s, long long *v) {
  char *end;

  errno = 0;
  *v = strtoll(*s, &end, 10);
  if (end == *s || errno == ERANGE || (*end && !isspace((unsigned char)*end))) return PETSC_FALSE;
  *s = end;
  return PETSC_TRUE;
}

static PetscBool MMParseReal(char **s, double *v) {
  char *end;

  errno = 0;
  *v = strtod(*s, &end);
  if (end == *s || (*end && !isspace((unsigned char)*end))) return PETSC_FALSE;
  *s = end;
  return PETSC_TRUE;
}

/* adds (r, c, v) to the growing triplet arrays */
static PetscErrorCode MMPush(PetscInt r, PetscInt c, PetscScalar v, PetscInt *cnt, PetscInt *cap,
                             PetscInt **ri, PetscInt **ci, PetscScalar **va) {
  PetscFunctionBeginUser;
  if (*cnt == *cap) {
    PetscCheck(*cap <= PETSC_MAX_INT / 2, PETSC_COMM_SELF, PETSC_ERR_SUP,
               "Too many local matrix entries for a PetscInt");
    *cap = *cap ? 2 * *cap : 1024;
    PetscCall(PetscRealloc(sizeof(PetscInt) * (size_t)*cap, ri));
    PetscCall(PetscRealloc(sizeof(PetscInt) * (size_t)*cap, ci));
    PetscCall(PetscRealloc(sizeof(PetscScalar) * (size_t)*cap, va));
  }
  (*ri)[*cnt] = r;
  (*ci)[*cnt] = c;
  (*va)[*cnt] = v;
  (*cnt)++;
  PetscFunctionReturn(0);
}

/* Every rank reads the whole file (so every rank finds the same error in a malformed one) and keeps
   the entries of its own rows, the rows split as PETSC_DECIDE does. */
static PetscErrorCode LoadMatrixMarket(MPI_Comm comm, const char *file, Mat *A) {
  FILE *fp;
  char buf[MM_LINE], banner[64], object[64], format[64], field[64], symm[64];
  PetscBool got, whole;
  long long lineno = 0, Ml, Nl, nnzl, k = 0;
  int fld, sym;
  PetscInt M, N, m, n, rstart, cstart, cnt = 0, cap = 0, *ri = NULL, *ci = NULL, *dnz, *onz;
  PetscScalar *va = NULL;
  char *s;

  PetscFunctionBeginUser;
  fp = fopen(file, "r");
  PetscCheck(fp, comm, PETSC_ERR_FILE_OPEN, "Cannot open Matrix Market file %s: %s", file,
             strerror(errno));

  /* banner: %%MatrixMarket matrix coordinate <real|integer|pattern>
             <general|symmetric|skew-symmetric|hermitian> */
  MMReadLine(fp, buf, &got, &whole);
  lineno++;
  PetscCheck(got, comm, PETSC_ERR_FILE_UNEXPECTED, "%s: empty file, not a Matrix Market file",
             file);
  PetscCheck(
      whole && sscanf(buf, "%63s %63s %63s %63s %63s", banner, object, format, field, symm) == 5,
      comm, PETSC_ERR_FILE_UNEXPECTED,
      "%s:1: expected the banner '%%%%MatrixMarket matrix coordinate <field> <symmetry>'", file);
  MMLower(banner);
  MMLower(object);
  MMLower(format);
  MMLower(field);
  MMLower(symm);
  PetscCheck(!strcmp(banner, "%%matrixmarket"), comm, PETSC_ERR_FILE_UNEXPECTED,
             "%s:1: the file does not start with %%%%MatrixMarket", file);
  PetscCheck(!strcmp(object, "matrix"), comm, PETSC_ERR_SUP,
             "%s:1: object '%s' is not supported, only 'matrix'", file, object);
  PetscCheck(!strcmp(format, "coordinate"), comm, PETSC_ERR_SUP,
             "%s:1: format '%s' is not supported, only 'coordinate'", file, format);
  if (!strcmp(field, "real") || !strcmp(field, "double"))
    fld = MM_REAL;
  else if (!strcmp(field, "integer"))
    fld = MM_INTEGER;
  else if (!strcmp(field, "pattern"))
    fld = MM_PATTERN;
  else
    SETERRQ(
        comm, PETSC_ERR_SUP,
        "%s:1: field '%s' is not supported (real, integer or pattern; this PETSc has real scalars)",
        file, field);
  if (!strcmp(symm, "general"))
    sym = MM_GENERAL;
  else if (!strcmp(symm, "symmetric") || !strcmp(symm, "hermitian")) /* the same for real values */
    sym = MM_SYMMETRIC;
  else if (!strcmp(symm, "skew-symmetric"))
    sym = MM_SKEW;
  else
    SETERRQ(comm, PETSC_ERR_SUP,
            "%s:1: symmetry '%s' is not supported (general, symmetric, skew-symmetric)", file,
            symm);

  /* comment lines, then the size line "M N nnz" */
  for (;;) {
    MMReadLine(fp, buf, &got, &whole);
    lineno++;
    PetscCheck(got, comm, PETSC_ERR_FILE_UNEXPECTED, "%s: the file ends before its size line",
               file);
    if (buf[0] == '%' || MMBlank(buf)) continue;
    break;
  }
  s = buf;
  PetscCheck(whole && MMParseInt(&s, &Ml) && MMParseInt(&s, &Nl) && MMParseInt(&s, &nnzl) &&
                 MMBlank(s),
             comm, PETSC_ERR_FILE_UNEXPECTED,
             "%s:%lld: expected the size line 'rows columns entries'", file, lineno);
  PetscCheck(Ml >= 1 && Nl >= 1 && nnzl >= 0, comm, PETSC_ERR_FILE_UNEXPECTED,
             "%s:%lld: bad sizes %lld x %lld with %lld entries", file, lineno, Ml, Nl, nnzl);
  PetscCheck(Ml <= PETSC_MAX_INT && Nl <= PETSC_MAX_INT, comm, PETSC_ERR_SUP,
             "%s:%lld: %lld x %lld does not fit in a 32-bit PetscInt", file, lineno, Ml, Nl);
  PetscCheck(sym == MM_GENERAL || Ml == Nl, comm, PETSC_ERR_FILE_UNEXPECTED,
             "%s:%lld: a %s matrix must be square, not %lld x %lld", file, lineno, symm, Ml, Nl);
  M = (PetscInt)Ml;
  N = (PetscInt)Nl;
  PetscCall(SplitRange(comm, M, &m, &rstart));
  PetscCall(SplitRange(comm, N, &n, &cstart));

  /* the entries: "i j value" (1-based), or "i j" for a pattern */
  while (k < nnzl) {
    long long i, j;
    double v = 1.0;

    MMReadLine(fp, buf, &got, &whole);
    lineno++;
    PetscCheck(got, comm, PETSC_ERR_FILE_UNEXPECTED,
               "%s: the file ends after %lld of its %lld entries", file, k, nnzl);
    if (buf[0] == '%' || MMBlank(buf)) continue;
    s = buf;
    PetscCheck(whole, comm, PETSC_ERR_FILE_UNEXPECTED, "%s:%lld: line longer than %d characters",
               file, lineno, MM_LINE - 2);
    PetscCheck(MMParseInt(&s, &i) && MMParseInt(&s, &j), comm, PETSC_ERR_FILE_UNEXPECTED,
               "%s:%lld: expected 'row column%s'", file, lineno, fld == MM_PATTERN ? "" : " value");
    if (fld != MM_PATTERN)
      PetscCheck(MMParseReal(&s, &v), comm, PETSC_ERR_FILE_UNEXPECTED,
                 "%s:%lld: expected a value after the row and column", file, lineno);
    PetscCheck(MMBlank(s), comm, PETSC_ERR_FILE_UNEXPECTED,
               "%s:%lld: unexpected text after the entry: %s", file, lineno, s);
    PetscCheck(i >= 1 && i <= Ml && j >= 1 && j <= Nl, comm, PETSC_ERR_FILE_UNEXPECTED,
               "%s:%lld: entry (%lld, %lld) outside the %lld x %lld matrix", file, lineno, i, j, Ml,
               Nl);
    PetscCheck(sym != MM_SKEW || i != j, comm, PETSC_ERR_FILE_UNEXPECTED,
               "%s:%lld: a skew-symmetric matrix has no diagonal entry (%lld, %lld)", file, lineno,
               i, j);
    i--;
    j--;
    if (i >= rstart && i < rstart + m)
      PetscCall(MMPush((PetscInt)i, (PetscInt)j, (PetscScalar)v, &cnt, &cap, &ri, &ci, &va));
    if (sym != MM_GENERAL && i != j && j >= rstart && j < rstart + m)
      PetscCall(MMPush((PetscInt)j, (PetscInt)i, (PetscScalar)(sym == MM_SKEW ? -v : v), &cnt, &cap,
                       &ri, &ci, &va));
    k++;
  }
  for (;;) { /* only comments and blank lines may follow */
    MMReadLine(fp, buf, &got, &whole);
    lineno++;
    if (!got) break;
    PetscCheck(buf[0] == '%' || MMBlank(buf), comm, PETSC_ERR_FILE_UNEXPECTED,
               "%s:%lld: more entries than the %lld of the size line", file, lineno, nnzl);
  }
  fclose(fp);

  /* preallocate (duplicates are added, so they may overcount: clamp to the row length), insert */
  PetscCall(PetscCalloc2(m, &dnz, m, &onz));
  for (PetscInt e = 0; e < cnt; e++) {
    if (ci[e] >= cstart && ci[e] < cstart + n)
      dnz[ri[e] - rstart]++;
    else
      onz[ri[e] - rstart]++;
  }
  for (PetscInt r = 0; r < m; r++) {
    dnz[r] = PetscMin(dnz[r], n);
    onz[r] = PetscMin(onz[r], N - n);
  }
  PetscCall(CreatePreallocated(comm, m, n, M, N, dnz, onz, A));
  PetscCall(PetscFree2(dnz, onz));
  for (PetscInt e = 0; e < cnt; e++)
    PetscCall(MatSetValues(*A, 1, &ri[e], 1, &ci[e], &va[e], ADD_VALUES));
  PetscCall(PetscFree(ri));
  PetscCall(PetscFree(ci));
  PetscCall(PetscFree(va));
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

#endif
