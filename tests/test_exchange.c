/* Ghost values and products of the standard exchange against values computed
 * from the raw rows, on generated matrices and on the Matrix Market files
 * given as arguments, with both row partitions, over all ranks and over the
 * even ranks only (the odd ones hold no rows and, for every node-aware
 * strategy on nodes of two ranks, forward messages); rectangular files get an
 * uneven layout of x (some ranks own no entries of x). */
#include "verify.h"

static void run(MPI_Comm comm, const halo_csr *local, const int64_t *row_begin, const char *label,
                int helpers) {
  int rank, P;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &P);
  int64_t *col_begin = malloc((size_t)(P + 1) * sizeof *col_begin);
  if (local->n_rows == local->n_cols) {
    memcpy(col_begin, row_begin, (size_t)(P + 1) * sizeof *col_begin);
  } else { /* quadratic layout: rank 0 owns none, the last the most */
    for (int r = 0; r <= P; r++)
      col_begin[r] = (int64_t)((double)local->n_cols * r * r / ((double)P * P));
    col_begin[P] = local->n_cols;
  }
  verify_matrix(comm, local, row_begin, col_begin, label);
  /* helpers: every strategy on nodes of a rank with rows and a helper */
  if (helpers) verify_strategies(comm, local, row_begin, col_begin, 2, label);
  free(col_begin);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm comm = MPI_COMM_WORLD;
  const char *gens[] = {"lap2d:12", "lap3d:6", "lap3d27:5", "irregular:300,7", "irregular:5000,2"};
  const halo_partition_kind parts[] = {HALO_PARTITION_ROWS, HALO_PARTITION_NNZ};
  /* partitions over every rank, then over the even ranks only: the odd ones
   * hold no rows (communication helpers) */
  int rank, P;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &P);
  int *holds = malloc((size_t)P * sizeof *holds);
  for (int r = 0; r < P; r++) holds[r] = r % 2 == 0;
  for (int hp = 0; hp < 4; hp++) {
    const int p = hp % 2;
    const int *hold = hp >= 2 ? holds : NULL;
    for (int i = 0; i < (int)(sizeof gens / sizeof gens[0]); i++) {
      halo_gen g;
      halo_csr local;
      int64_t *row_begin;
      char label[128];
      CHECK_OK(halo_gen_parse(gens[i], &g));
      CHECK_OK(halo_gen_distributed(comm, &g, parts[p], hold, &row_begin, &local));
      snprintf(label, sizeof label, "%s (%s%s)", gens[i], halo_partition_name(parts[p]),
               hold ? ", odd ranks without rows" : "");
      CHECK(row_begin[0] == 0 && row_begin[P] == local.n_rows);
      for (int r = 0; r < P; r++)
        CHECK(row_begin[r] <= row_begin[r + 1] &&
              (!hold || hold[r] || row_begin[r] == row_begin[r + 1]));
      run(comm, &local, row_begin, label, hold != NULL);
      halo_csr_free(&local);
      halo_io_free(row_begin);
    }
    for (int a = 1; a < argc; a++) {
      halo_csr local;
      int64_t *row_begin;
      char label[512];
      CHECK_OK(halo_mm_read_distributed(comm, 0, argv[a], NULL, parts[p], hold, &row_begin, &local,
                                        NULL));
      snprintf(label, sizeof label, "%s (%s%s)", argv[a], halo_partition_name(parts[p]),
               hold ? ", odd ranks without rows" : "");
      for (int r = 0; r < P; r++) CHECK(!hold || hold[r] || row_begin[r] == row_begin[r + 1]);
      run(comm, &local, row_begin, label, hold != NULL);
      halo_csr_free(&local);
      halo_io_free(row_begin);
    }
  }
  free(holds);
  MPI_Finalize();
  return 0;
}
