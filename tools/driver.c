/* Shared pieces of the `halo` driver. */
#include "driver.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "progress.h"

void driver_error(int rank, const char *cmd, const char *fmt, ...) {
  if (rank != 0) return;
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "halo %s: ", cmd);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

void args_error(const args_t *a, const char *fmt, ...) {
  if (a->rank != 0) return;
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "halo %s: ", a->cmd);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, " (see halo %s --help)\n", a->cmd);
  va_end(ap);
}

int args_take(args_t *a, const char *name) {
  const char *arg = a->argv[a->i];
  size_t n = strlen(name);
  if (strncmp(arg, name, n) != 0) return 0;
  if (arg[n] == '=') {
    a->value = arg + n + 1;
    return 1;
  }
  if (arg[n] != '\0') return 0;
  if (a->i + 1 >= a->argc) {
    args_error(a, "option %s needs a value", name);
    return -1;
  }
  a->value = a->argv[++a->i];
  return 1;
}

int args_flag(args_t *a, const char *name) { return strcmp(a->argv[a->i], name) == 0; }

int args_int(args_t *a, const char *name, int64_t lo, int64_t hi, int64_t *v) {
  char *end;
  errno = 0;
  long long x = strtoll(a->value, &end, 10);
  if (errno || end == a->value || *end != '\0' || x < lo || x > hi) {
    args_error(a, "%s '%s': expected an integer in [%lld, %lld]", name, a->value, (long long)lo,
               (long long)hi);
    return 0;
  }
  *v = x;
  return 1;
}

int args_common(args_t *a, input_opts *in, halo_plan_options *opts, const char **strategy_name,
                output_opts *out) {
  int m;
  int64_t v;
  if ((m = args_take(a, "--matrix"))) {
    if (m > 0) in->matrix_path = a->value;
  } else if ((m = args_take(a, "--gen"))) {
    if (m > 0) in->gen_spec = a->value;
  } else if ((m = args_take(a, "--partition"))) {
    if (m > 0 && halo_partition_from_name(a->value, &in->partition) != HALO_SUCCESS) {
      args_error(a, "--partition: %s", halo_last_error());
      m = -1;
    }
  } else if ((m = args_take(a, "--helpers"))) {
    if (m > 0 && !args_int(a, "--helpers", 0, 1 << 20, &v)) m = -1;
    if (m > 0) in->helpers = (int)v;
  } else if ((m = args_take(a, "--strategy"))) {
    if (m > 0) *strategy_name = a->value;
  } else if ((m = args_take(a, "--message-cap"))) {
    if (m > 0 && !args_int(a, "--message-cap", 8, INT64_C(1) << 40, &v)) m = -1;
    if (m > 0) opts->message_cap = v;
  } else if ((m = args_take(a, "--expected-uses"))) {
    if (m > 0 && !args_int(a, "--expected-uses", 1, INT64_C(1) << 50, &v)) m = -1;
    if (m > 0) opts->expected_uses = v;
  } else if ((m = args_take(a, "--json"))) {
    if (m > 0) out->json_path = a->value;
  } else if ((m = args_take(a, "--csv"))) {
    if (m > 0) out->csv_path = a->value;
  } else if (args_flag(a, "--no-dedup")) {
    opts->remove_duplicates = 0, m = 1;
  } else if (args_flag(a, "--sum-duplicates")) {
    in->sum_duplicates = 1, m = 1;
  } else if (args_flag(a, "--quiet")) {
    out->quiet = 1, m = 1;
  }
  return m;
}

int args_double(args_t *a, const char *name, double lo, double *v) {
  char *end;
  errno = 0;
  double x = strtod(a->value, &end);
  if (errno || end == a->value || *end != '\0' || !isfinite(x) || x < lo) {
    args_error(a, "%s '%s': expected a number >= %g", name, a->value, lo);
    return 0;
  }
  *v = x;
  return 1;
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double driver_median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* ---- input ---- */

void input_free(input_matrix *M) {
  halo_csr_free(&M->local);
  halo_csr_free(&M->global);
  halo_io_free(M->row_begin);
  halo_io_free(M->col_begin);
  halo_io_free(M->orig_ids);
  halo_io_free(M->new_ids);
  memset(M, 0, sizeof *M);
}

halo_status input_holds_rows(MPI_Comm comm, int helpers, int ranks_per_node, int *holds) {
  halo_node_info node; /* the nodes plans see: MPI's, HALO_RANKS_PER_NODE or virtual */
  halo_status st = halo_comm_get_node_info(comm, ranks_per_node, &node);
  if (st != HALO_SUCCESS) return st;
  const int n = node.local_size;
  const int owners = n / (helpers + 1) > 0 ? n / (helpers + 1) : 1;
  int mine = node.local_rank < owners;
  if (MPI_Allgather(&mine, 1, MPI_INT, holds, 1, MPI_INT, comm) != MPI_SUCCESS) return HALO_ERR_MPI;
  return HALO_SUCCESS;
}

/* --partition metis: the whole matrix on rank 0 (read, or generated there: a
 * graph partition needs every row in one place), cut by METIS into the ranks
 * that hold rows, renumbered and distributed; rank 0 measures the partition
 * against the contiguous one (rows) and keeps what the check needs. */
static halo_status input_load_graph(MPI_Comm comm, const input_opts *o, const int *holds,
                                    int keep_global, input_matrix *M) {
  halo_status st = HALO_SUCCESS;
  int rank, size;
  halo_csr G = {0};
  int64_t *contiguous = NULL;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (!HALO_HAVE_METIS) return halo_partition_metis(NULL, 0, NULL, NULL, NULL); /* its error */
  if (o->gen_spec) {
    M->is_gen = 1;
    if ((st = halo_gen_parse(o->gen_spec, &M->gen)) != HALO_SUCCESS) return st; /* on every rank */
    halo_gen_name(&M->gen, M->name, sizeof M->name);
  } else {
    const char *base = strrchr(o->matrix_path, '/');
    snprintf(M->name, sizeof M->name, "%s", base ? base + 1 : o->matrix_path);
  }
  if (rank == 0) {
    if (o->gen_spec) {
      int64_t N = 0;
      st = halo_gen_size(&M->gen, &N, NULL);
      if (st == HALO_SUCCESS) st = halo_gen_rows(&M->gen, 0, N, &G);
    } else if (input_is_hcsr(o->matrix_path)) {
      st = halo_hcsr_read(o->matrix_path, &G);
    } else {
      halo_mm_options mo = halo_mm_options_default();
      mo.sum_duplicates = o->sum_duplicates;
      st = halo_mm_read(o->matrix_path, &mo, &G);
    }
  }
  st = halo_status_agree(comm, st);
  if (st == HALO_SUCCESS)
    st = halo_csr_distribute(comm, 0, &G, HALO_PARTITION_METIS, holds, &M->row_begin, &M->new_ids,
                             &M->orig_ids, &M->local);
  if (st == HALO_SUCCESS) { /* rank 0 measures both partitions */
    if (rank == 0) {
      contiguous = malloc((size_t)(size + 1) * sizeof *contiguous);
      st = contiguous ? HALO_SUCCESS : HALO_ERR_OUT_OF_MEMORY;
      if (st == HALO_SUCCESS)
        st = halo_partition_measure(&G, M->new_ids, size, M->row_begin, &M->quality);
      if (st == HALO_SUCCESS)
        st = halo_partition_compute(HALO_PARTITION_ROWS, G.n_rows, NULL, size, holds, contiguous);
      if (st == HALO_SUCCESS)
        st = halo_partition_measure(&G, NULL, size, contiguous, &M->contiguous);
    }
    st = halo_status_agree(comm, st);
  }
  if (st == HALO_SUCCESS) {
    int64_t q[6] = {M->quality.edge_cut,    M->quality.ghosts,    M->quality.max_rows,
                    M->contiguous.edge_cut, M->contiguous.ghosts, M->contiguous.max_rows};
    MPI_Bcast(q, 6, MPI_INT64_T, 0, comm);
    M->quality = (halo_partition_quality){q[0], q[1], q[2]};
    M->contiguous = (halo_partition_quality){q[3], q[4], q[5]};
    M->measured = 1;
    if (keep_global && rank == 0 && !o->gen_spec) { /* the reference of the check */
      M->global = G;
      memset(&G, 0, sizeof G);
    }
    if (!keep_global) {
      halo_io_free(M->new_ids);
      M->new_ids = NULL;
    }
  }
  free(contiguous);
  halo_csr_free(&G);
  return st;
}

int input_is_hcsr(const char *path) {
  size_t n = strlen(path);
  int magic = 0;
  if (n >= 5 && strcmp(path + n - 5, ".hcsr") == 0) return 1;
  return halo_hcsr_probe(path, &magic) == HALO_SUCCESS && magic;
}

static halo_status load(MPI_Comm comm, const input_opts *o, int keep_global, input_matrix *M) {
  halo_status st;
  int rank, size, *holds = NULL;
  memset(M, 0, sizeof *M);
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (o->helpers > 0) {
    holds = malloc((size_t)size * sizeof *holds);
    if (!holds) return HALO_ERR_OUT_OF_MEMORY;
    if ((st = input_holds_rows(comm, o->helpers, o->ranks_per_node, holds)) != HALO_SUCCESS) {
      free(holds);
      return st;
    }
  }
  if (o->partition == HALO_PARTITION_METIS) {
    st = input_load_graph(comm, o, holds, keep_global, M);
  } else if (o->gen_spec) {
    M->is_gen = 1;
    if ((st = halo_gen_parse(o->gen_spec, &M->gen)) == HALO_SUCCESS) {
      halo_gen_name(&M->gen, M->name, sizeof M->name);
      st = halo_gen_distributed(comm, &M->gen, o->partition, holds, &M->row_begin, &M->local);
    }
  } else {
    halo_mm_options mo = halo_mm_options_default();
    mo.sum_duplicates = o->sum_duplicates;
    const char *base = strrchr(o->matrix_path, '/');
    snprintf(M->name, sizeof M->name, "%s", base ? base + 1 : o->matrix_path);
    int hcsr = rank == 0 && input_is_hcsr(o->matrix_path);
    MPI_Bcast(&hcsr, 1, MPI_INT, 0, comm);
    if (hcsr) /* every rank reads its own rows */
      st = halo_hcsr_read_distributed(comm, 0, o->matrix_path, o->partition, holds, &M->row_begin,
                                      &M->local, keep_global ? &M->global : NULL);
    else
      st = halo_mm_read_distributed(comm, 0, o->matrix_path, &mo, o->partition, holds,
                                    &M->row_begin, &M->local, keep_global ? &M->global : NULL);
  }
  free(holds);
  if (st != HALO_SUCCESS) {
    input_free(M);
    return st;
  }
  M->n_rows = M->local.n_rows;
  M->n_cols = M->local.n_cols;
  int64_t nnz = halo_csr_nnz(&M->local);
  MPI_Allreduce(&nnz, &M->nnz, 1, MPI_INT64_T, MPI_SUM, comm);
  /* The layout of x: the row partition for a square matrix, else balanced. */
  M->col_begin = malloc((size_t)(size + 1) * sizeof *M->col_begin);
  if (!M->col_begin) {
    input_free(M);
    return HALO_ERR_OUT_OF_MEMORY;
  }
  if (M->n_rows == M->n_cols)
    memcpy(M->col_begin, M->row_begin, (size_t)(size + 1) * sizeof(int64_t));
  else
    halo_partition_rows(M->n_cols, size, M->col_begin);
  return HALO_SUCCESS;
}

halo_status input_load(MPI_Comm comm, const input_opts *o, int keep_global, input_matrix *M) {
  progress_begin(o->gen_spec ? o->gen_spec : o->matrix_path);
  halo_status st = load(comm, o, keep_global, M);
  progress_end();
  return st;
}

int64_t input_orig_col(const input_matrix *M, int64_t col_begin, int64_t j) {
  return M->orig_ids ? M->orig_ids[j - col_begin] : j;
}

double input_x(int64_t j) {
  /* values in [-1, 1) with no pattern that could hide a misplaced entry */
  uint64_t h = (uint64_t)j * 0x9e3779b97f4a7c15ULL;
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 32;
  return (double)(h >> 11) * 0x1.0p-52 - 1.0;
}

/* Reference rows [b, e) on rank 0: y and the scale sum |a_ij x_j|. */
static void reference_rows(const halo_csr *A, const double *x, double *ref, double *scale) {
  for (int64_t i = 0; i < A->row_end - A->row_begin; i++) {
    double s = 0.0, a = 0.0;
    for (int64_t k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) {
      double t = A->values[k] * x[A->col_ids[k]];
      s += t;
      a += fabs(t);
    }
    ref[i] = s;
    scale[i] = a;
  }
}

halo_status check_spmv(MPI_Comm comm, const input_matrix *M, const double *y, double *err_p) {
  int rank, size;
  halo_status st = HALO_SUCCESS;
  double err = 0.0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int64_t n_local = M->row_begin[rank + 1] - M->row_begin[rank];
  if (rank != 0) {
    /* counts can exceed what one message holds: send in pieces */
    for (int64_t done = 0; done < n_local; done += 1 << 28) {
      int n = (int)(n_local - done < (1 << 28) ? n_local - done : (1 << 28));
      MPI_Send(y + done, n, MPI_DOUBLE, 0, 77, comm);
    }
  } else {
    double *y_all = malloc((size_t)(M->n_rows ? M->n_rows : 1) * sizeof *y_all);
    double *x = malloc((size_t)(M->n_cols ? M->n_cols : 1) * sizeof *x);
    double *ref = NULL, *scale = NULL;
    if (!y_all || !x) st = HALO_ERR_OUT_OF_MEMORY;
    for (int r = 0; r < size; r++) {
      int64_t b = M->row_begin[r], n = M->row_begin[r + 1] - b;
      if (r == 0) {
        if (y_all) memcpy(y_all, y, (size_t)n * sizeof *y);
        continue;
      }
      for (int64_t done = 0; done < n; done += 1 << 28) {
        int c = (int)(n - done < (1 << 28) ? n - done : (1 << 28));
        MPI_Recv(y_all ? y_all + b + done : NULL, c, MPI_DOUBLE, r, 77, comm, MPI_STATUS_IGNORE);
      }
    }
    if (st == HALO_SUCCESS && M->new_ids) { /* y back in the original numbering */
      double *y_orig = malloc((size_t)(M->n_rows ? M->n_rows : 1) * sizeof *y_orig);
      if (!y_orig) st = HALO_ERR_OUT_OF_MEMORY;
      for (int64_t i = 0; y_orig && i < M->n_rows; i++) y_orig[i] = y_all[M->new_ids[i]];
      free(y_all);
      y_all = y_orig;
    }
    if (st == HALO_SUCCESS) {
      for (int64_t j = 0; j < M->n_cols; j++) x[j] = input_x(j);
      /* reference in blocks of rows, from the file or made anew */
      const int64_t block = 1 << 16;
      ref = malloc((size_t)block * sizeof *ref);
      scale = malloc((size_t)block * sizeof *scale);
      if (!ref || !scale) st = HALO_ERR_OUT_OF_MEMORY;
      for (int64_t b = 0; b < M->n_rows && st == HALO_SUCCESS; b += block) {
        int64_t e = b + block < M->n_rows ? b + block : M->n_rows;
        halo_csr part = {0};
        if (M->is_gen) {
          st = halo_gen_rows(&M->gen, b, e, &part);
          if (st != HALO_SUCCESS) break;
          reference_rows(&part, x, ref, scale);
          halo_csr_free(&part);
        } else {
          part = M->global;
          part.row_begin = b;
          part.row_end = e;
          part.row_ptr = M->global.row_ptr + b;
          /* row_ptr of the global matrix is absolute: use it as is */
          reference_rows(&part, x, ref, scale);
        }
        for (int64_t i = b; i < e; i++) {
          double d = fabs(y_all[i] - ref[i - b]);
          double rel = d == 0.0 ? 0.0 : d / (scale[i - b] > 0.0 ? scale[i - b] : DBL_MIN);
          if (rel > err || isnan(rel)) err = isnan(rel) ? INFINITY : rel;
        }
      }
    }
    free(scale);
    free(ref);
    free(x);
    free(y_all);
  }
  MPI_Bcast(&st, 1, MPI_INT, 0, comm);
  MPI_Bcast(&err, 1, MPI_DOUBLE, 0, comm);
  *err_p = err;
  return st;
}
