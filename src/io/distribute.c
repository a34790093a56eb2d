/* A matrix read on one rank, distributed by rows; a generated matrix made by
 * every rank for its own rows. */
#include <string.h>

#include "halo/io.h"
#include "halo_impl.h"

enum { TAG_SCATTER_PTR = 301, TAG_SCATTER_COL = 302, TAG_SCATTER_VAL = 303, TAG_SCATTER_IDS = 304 };

void halo_io_free(void *p) { halo_free(p); }

/* Every rank allocates all it will receive (the root: a row pointer's
 * scratch too) before any message goes, and the ranks agree on it: a failure
 * anywhere ends every rank here, none left waiting for a message. */
halo_status halo_csr_scatter(MPI_Comm comm, int root, const halo_csr *G, const int64_t *row_begin,
                             halo_csr *local) {
  HALO_CHECK(halo_comm_check(comm, "halo_csr_scatter: the communicator"));
  halo_status st = HALO_SUCCESS;
  int rank, size;
  int64_t sizes[2] = {0, 0}, nnz = 0, most = 0;
  int64_t *counts = NULL, *ptr = NULL;
  halo_csr out = {0};
  memset(local, 0, sizeof *local);
  HALO_TRY_MPI(MPI_Comm_rank(comm, &rank));
  HALO_TRY_MPI(MPI_Comm_size(comm, &size));
  if (rank == root) sizes[0] = G->n_rows, sizes[1] = G->n_cols;
  HALO_TRY_MPI(MPI_Bcast(sizes, 2, MPI_INT64_T, root, comm));
  out.n_rows = sizes[0];
  out.n_cols = sizes[1];
  out.row_begin = row_begin[rank];
  out.row_end = row_begin[rank + 1];
  const int64_t n = out.row_end - out.row_begin;
  if (rank == root) { /* each rank's entries */
    st = HALO_ALLOC(counts, size);
    for (int r = 0; st == HALO_SUCCESS && r < size; r++) {
      counts[r] = G->row_ptr[row_begin[r + 1]] - G->row_ptr[row_begin[r]];
      if (row_begin[r + 1] - row_begin[r] > most) most = row_begin[r + 1] - row_begin[r];
    }
  }
  HALO_TRY(halo_agree(comm, st));
  HALO_TRY_MPI(MPI_Scatter(counts, 1, MPI_INT64_T, &nnz, 1, MPI_INT64_T, root, comm));
  st = HALO_ALLOC(out.row_ptr, n + 1);
  if (st == HALO_SUCCESS) st = HALO_ALLOC(out.col_ids, nnz);
  if (st == HALO_SUCCESS) st = HALO_ALLOC(out.values, nnz);
  if (st == HALO_SUCCESS && rank == root) st = HALO_ALLOC(ptr, most + 1);
  HALO_TRY(halo_agree(comm, st));
  if (rank == root) {
    for (int r = 0; r < size; r++) {
      const int64_t b = row_begin[r], e = row_begin[r + 1], base = G->row_ptr[b];
      int64_t *to = r == root ? out.row_ptr : ptr;
      for (int64_t i = 0; i <= e - b; i++) to[i] = G->row_ptr[b + i] - base;
      if (r == root) {
        if (nnz) memcpy(out.col_ids, G->col_ids + base, (size_t)nnz * sizeof *out.col_ids);
        if (nnz) memcpy(out.values, G->values + base, (size_t)nnz * sizeof *out.values);
        continue;
      }
      HALO_TRY(halo_send_large(ptr, e - b + 1, MPI_INT64_T, r, TAG_SCATTER_PTR, comm));
      HALO_TRY(halo_send_large(G->col_ids + base, counts[r], MPI_INT64_T, r, TAG_SCATTER_COL, comm));
      HALO_TRY(halo_send_large(G->values + base, counts[r], MPI_DOUBLE, r, TAG_SCATTER_VAL, comm));
    }
  } else {
    HALO_TRY(halo_recv_large(out.row_ptr, n + 1, MPI_INT64_T, root, TAG_SCATTER_PTR, comm));
    HALO_TRY(halo_recv_large(out.col_ids, nnz, MPI_INT64_T, root, TAG_SCATTER_COL, comm));
    HALO_TRY(halo_recv_large(out.values, nnz, MPI_DOUBLE, root, TAG_SCATTER_VAL, comm));
  }
  *local = out;
  memset(&out, 0, sizeof out);
cleanup:
  halo_free(ptr);
  halo_free(counts);
  halo_csr_free(&out);
  return st;
}

halo_status halo_mm_read_distributed(MPI_Comm comm, int root, const char *path,
                                     const halo_mm_options *opts, halo_partition_kind part,
                                     const int *holds_rows, int64_t **row_begin_p, halo_csr *local,
                                     halo_csr *global_p) {
  HALO_CHECK(halo_comm_check(comm, "halo_mm_read_distributed: the communicator"));
  halo_status st = HALO_SUCCESS;
  int rank, size;
  halo_csr G = {0};
  int64_t *row_begin = NULL;
  memset(local, 0, sizeof *local);
  if (global_p) memset(global_p, 0, sizeof *global_p);
  *row_begin_p = NULL;
  HALO_TRY_MPI(MPI_Comm_rank(comm, &rank));
  HALO_TRY_MPI(MPI_Comm_size(comm, &size));
  st = HALO_ALLOC(row_begin, size + 1);
  if (st == HALO_SUCCESS && rank == root) {
    st = halo_mm_read(path, opts, &G);
    if (st == HALO_SUCCESS)
      st = halo_partition_compute(part, G.n_rows, G.row_ptr, size, holds_rows, row_begin);
  }
  HALO_TRY(halo_agree(comm, st));
  HALO_TRY_MPI(MPI_Bcast(row_begin, size + 1, MPI_INT64_T, root, comm));
  HALO_TRY(halo_csr_scatter(comm, root, &G, row_begin, local));
  if (global_p && rank == root) {
    *global_p = G;
    memset(&G, 0, sizeof G);
  }
  *row_begin_p = row_begin;
  row_begin = NULL;
cleanup:
  halo_free(row_begin);
  halo_csr_free(&G);
  return st;
}

halo_status halo_gen_distributed(MPI_Comm comm, const halo_gen *gen, halo_partition_kind part,
                                 const int *holds_rows, int64_t **row_begin_p, halo_csr *local) {
  HALO_CHECK(halo_comm_check(comm, "halo_gen_distributed: the communicator"));
  halo_status st = HALO_SUCCESS;
  int rank, size;
  int64_t N = 0, *row_begin = NULL, *row_ptr = NULL;
  memset(local, 0, sizeof *local);
  *row_begin_p = NULL;
  HALO_TRY_MPI(MPI_Comm_rank(comm, &rank));
  HALO_TRY_MPI(MPI_Comm_size(comm, &size));
  st = halo_gen_size(gen, &N, NULL);
  if (st == HALO_SUCCESS) st = HALO_ALLOC(row_begin, size + 1);
  if (st == HALO_SUCCESS) {
    if (part == HALO_PARTITION_NNZ) {
      if (rank == 0) {
        st = HALO_ALLOC(row_ptr, N + 1);
        if (st == HALO_SUCCESS) st = halo_gen_row_ptr(gen, 0, N, row_ptr);
        if (st == HALO_SUCCESS)
          st = halo_partition_compute(part, N, row_ptr, size, holds_rows, row_begin);
      }
    } else {
      st = halo_partition_compute(part, N, NULL, size, holds_rows, row_begin);
    }
  }
  HALO_TRY(halo_agree(comm, st));
  if (part == HALO_PARTITION_NNZ)
    HALO_TRY_MPI(MPI_Bcast(row_begin, size + 1, MPI_INT64_T, 0, comm));
  st = halo_gen_rows(gen, row_begin[rank], row_begin[rank + 1], local);
  HALO_TRY(halo_agree(comm, st));
  *row_begin_p = row_begin;
  row_begin = NULL;
cleanup:
  if (st != HALO_SUCCESS) halo_csr_free(local);
  halo_free(row_ptr);
  halo_free(row_begin);
  return st;
}

halo_status halo_csr_distribute(MPI_Comm comm, int root, const halo_csr *global,
                                halo_partition_kind part, const int *holds_rows,
                                int64_t **row_begin_p, int64_t **new_ids_p, int64_t **orig_ids_p,
                                halo_csr *local) {
  HALO_CHECK(halo_comm_check(comm, "halo_csr_distribute: the communicator"));
  halo_status st = HALO_SUCCESS;
  int rank, size;
  int64_t *row_begin = NULL, *new_ids = NULL, *orig_ids = NULL, *old_of = NULL;
  halo_csr B = {0};
  const int renumber = part == HALO_PARTITION_METIS;
  memset(local, 0, sizeof *local);
  *row_begin_p = NULL;
  if (new_ids_p) *new_ids_p = NULL;
  if (orig_ids_p) *orig_ids_p = NULL;
  HALO_TRY_MPI(MPI_Comm_rank(comm, &rank));
  HALO_TRY_MPI(MPI_Comm_size(comm, &size));
  st = HALO_ALLOC(row_begin, size + 1);
  if (st == HALO_SUCCESS && rank == root) {
    if (!global) {
      st = HALO_ERROR(HALO_ERR_INVALID_ARG, "distribute: no matrix on the root rank");
    } else if (renumber) {
      st = HALO_ALLOC(new_ids, global->n_rows);
      if (st == HALO_SUCCESS)
        st = halo_partition_metis(global, size, holds_rows, new_ids, row_begin);
      if (st == HALO_SUCCESS) st = halo_csr_permute(global, new_ids, &B);
    } else {
      st = halo_partition_compute(part, global->n_rows, global->row_ptr, size, holds_rows,
                                  row_begin);
    }
  }
  HALO_TRY(halo_agree(comm, st));
  HALO_TRY_MPI(MPI_Bcast(row_begin, size + 1, MPI_INT64_T, root, comm));
  HALO_TRY(halo_csr_scatter(comm, root, renumber ? &B : global, row_begin, local));
  halo_csr_free(&B);
  if (renumber) {
    /* every rank's original row ids, from root */
    const int64_t n_local = row_begin[rank + 1] - row_begin[rank];
    st = HALO_ALLOC(orig_ids, n_local);
    if (st == HALO_SUCCESS && rank == root) {
      st = HALO_ALLOC(old_of, global->n_rows);
      for (int64_t i = 0; st == HALO_SUCCESS && i < global->n_rows; i++) old_of[new_ids[i]] = i;
    }
    HALO_TRY(halo_agree(comm, st));
    if (rank == root) {
      for (int r = 0; r < size; r++) {
        const int64_t b = row_begin[r], n = row_begin[r + 1] - b;
        if (r == root) {
          if (n) memcpy(orig_ids, old_of + b, (size_t)n * sizeof *orig_ids);
        } else {
          HALO_TRY(halo_send_large(old_of + b, n, MPI_INT64_T, r, TAG_SCATTER_IDS, comm));
        }
      }
    } else {
      HALO_TRY(halo_recv_large(orig_ids, n_local, MPI_INT64_T, root, TAG_SCATTER_IDS, comm));
    }
  }
  *row_begin_p = row_begin;
  row_begin = NULL;
  if (new_ids_p) *new_ids_p = new_ids, new_ids = NULL;
  if (orig_ids_p) *orig_ids_p = orig_ids, orig_ids = NULL;
cleanup:
  if (st != HALO_SUCCESS) halo_csr_free(local);
  halo_csr_free(&B);
  halo_free(old_of);
  halo_free(orig_ids);
  halo_free(new_ids);
  halo_free(row_begin);
  return st;
}
