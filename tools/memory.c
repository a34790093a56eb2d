/* What a command is about to make, against the memory it has: checked
 * before a generated matrix or the simulator's ranks are allocated, so that
 * a short command line that asks for more than the machine holds gets a
 * message instead of the kernel's OOM killer. (Files are bounded by the
 * readers' limit, HALO_INPUT_LIMIT.) */
#define _DEFAULT_SOURCE /* sysconf's _SC_PHYS_PAGES */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "driver.h"

/* Bytes of a matrix of @p rows rows and @p nnz entries in CSR: 8-byte row
 * pointers, column ids and values. */
/* The most entries a streamed simulation makes (tens of minutes). */
#define INPUT_STREAM_MAX_ENTRIES 1e11

static double csr_bytes(double rows, double nnz) { return 8.0 * (rows + 1.0) + 16.0 * nnz; }

/* Bytes in decimal units: "23.4 GB". */
static void show_bytes(double b, char *buf, size_t len) {
  static const char *const unit[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
  int u = 0;
  while (b >= 999.5 && u < 6) b /= 1000.0, u++;
  snprintf(buf, len, "%.3g %s", b, unit[u]);
}

/* The rows of a generated matrix and about its entries, from a sample of
 * its rows (the few dense rows of irregular may be missed: at least; and at
 * least one a row). */
static int gen_sizes(const halo_gen *g, int64_t *rows_p, double *nnz_p) {
  enum { BLOCKS = 64, ROWS = 64 };
  int64_t N = 0, ptr[ROWS + 1], sampled = 0, entries = 0;
  if (halo_gen_size(g, &N, NULL) != HALO_SUCCESS) return 0;
  for (int b = 0; b < BLOCKS; b++) {
    const double at = (double)b * 0.6180339887498949; /* spread: not on the grid's planes */
    const int64_t first = (int64_t)((at - (double)(int64_t)at) * (double)N);
    const int64_t n = N - first < ROWS ? N - first : ROWS;
    if (n <= 0 || halo_gen_row_ptr(g, first, first + n, ptr) != HALO_SUCCESS) continue;
    sampled += n;
    entries += ptr[n];
  }
  *rows_p = N;
  *nnz_p = sampled ? (double)entries / (double)sampled * (double)N : 0.0;
  if (*nnz_p < (double)N) *nnz_p = (double)N; /* a diagonal entry a row, at least */
  return 1;
}

/* This node's physical memory and its ranks of comm; the node of the least
 * memory per rank. */
static void node_memory(MPI_Comm comm, double *bytes_p, int *ranks_p) {
  MPI_Comm node;
  int ranks = 1;
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  double bytes = pages > 0 && page > 0 ? (double)pages * (double)page : 0.0;
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
    MPI_Comm_size(node, &ranks);
    MPI_Comm_free(&node);
  }
  struct {
    double per_rank;
    int rank;
  } mine = {bytes > 0 ? bytes / ranks : 1e300, 0}, least;
  MPI_Comm_rank(comm, &mine.rank);
  MPI_Allreduce(&mine, &least, 1, MPI_DOUBLE_INT, MPI_MINLOC, comm);
  double v[2] = {bytes, (double)ranks};
  MPI_Bcast(v, 2, MPI_DOUBLE, least.rank, comm);
  *bytes_p = v[0];
  *ranks_p = (int)v[1];
}

int input_check_memory(MPI_Comm comm, const input_opts *o, int layout, int keep_global,
                       int64_t sim_ranks, char *why, size_t len) {
  halo_gen g;
  int64_t N = 0;
  double nnz = 0.0, need = 0.0, node = 0.0;
  int size, ranks = 1;
  char what[160] = "", b_need[32], b_have[32], b_node[32];
  MPI_Comm_size(comm, &size);
  if (!o->gen_spec || halo_gen_parse(o->gen_spec, &g) != HALO_SUCCESS || !gen_sizes(&g, &N, &nnz))
    return 1; /* a file (the readers' limit bounds it), or an error the load reports */
  if (layout == INPUT_WHOLE || o->partition == HALO_PARTITION_METIS) {
    /* one process holds it all; METIS's renumbered copy too */
    const int copies = o->partition == HALO_PARTITION_METIS ? 2 : 1;
    need = copies * csr_bytes((double)N, nnz) + 64.0 * (double)sim_ranks;
    snprintf(what, sizeof what, "the whole matrix%s on one rank%s",
             copies > 1 ? " twice, as read and renumbered for METIS," : "",
             sim_ranks > 0 ? ", and 64 bytes a simulated rank" : "");
  }
  if (layout == INPUT_STREAMED) {
    /* a block of 2^20 rows at a time, 64 bytes a simulated rank (the
     * patterns are checked as they grow) */
    const double rows = N < (1 << 20) ? (double)N : (double)(1 << 20);
    need = csr_bytes(rows, nnz * rows / (double)N) + 8.0 * nnz * rows / (double)N +
           64.0 * (double)sim_ranks;
    snprintf(what, sizeof what, "a block of its rows at a time, and 64 bytes a simulated rank");
  }
  if (layout == INPUT_DISTRIBUTED) {
    /* rank 0's rows (as many as any rank's) twice: the input and the plan's
     * copy split in blocks; 4 vectors; the row pointers of all rows for the
     * nnz partition; x and y whole for --check */
    const int holders = size / (o->helpers + 1) > 0 ? size / (o->helpers + 1) : 1;
    const double rows = (double)N / holders + 1.0, local = rows / (double)N;
    need += 2.0 * csr_bytes(rows, nnz * local) + 32.0 * rows;
    if (o->partition == HALO_PARTITION_NNZ) need += 8.0 * (double)N;
    if (keep_global) need += 16.0 * (double)N;
    snprintf(what + strlen(what), sizeof what - strlen(what),
             "%sits rows twice, as input and as the plan's copy, and 4 vectors",
             what[0] ? ", and " : "");
  }
  if (layout == INPUT_STREAMED && nnz > INPUT_STREAM_MAX_ENTRIES) {
    snprintf(why, len,
             "--gen %s: %lld rows and about %.3g entries: the simulator makes every rank's rows "
             "in turn, and more than %.3g entries would take hours (about 10^8 a second): "
             "simulate a smaller matrix",
             o->gen_spec, (long long)N, nnz, INPUT_STREAM_MAX_ENTRIES);
    return 0;
  }
  node_memory(comm, &node, &ranks);
  if (node <= 0.0 || need <= node / ranks) return 1;
  show_bytes(need, b_need, sizeof b_need);
  show_bytes(node / ranks, b_have, sizeof b_have);
  show_bytes(node, b_node, sizeof b_node);
  snprintf(why, len,
           "--gen %s: %lld rows and about %.3g entries need at least %s on rank 0 (%s), more "
           "than its share of its node's memory: %s (%s for %d rank%s)",
           o->gen_spec, (long long)N, nnz, b_need, what, b_have, b_node, ranks,
           ranks > 1 ? "s" : "");
  return 0;
}

int input_check_ranks(const input_opts *o, int64_t n_rows, int64_t P, int64_t K, char *why,
                      size_t len) {
  /* ranks that hold rows: of each node of K, max(1, n/(H+1)) */
  int64_t holders = 0;
  for (int64_t first = 0; first < P; first += K) {
    const int64_t n = P - first < K ? P - first : K;
    holders += n / (o->helpers + 1) > 0 ? n / (o->helpers + 1) : 1;
  }
  if (holders <= n_rows) return 1;
  snprintf(why, len,
           "--ranks %lld: %lld of the ranks would hold rows of a matrix of %lld rows: "
           "simulate at most as many ranks as rows (with --helpers H, H of every H+1 ranks "
           "of a node hold none)",
           (long long)P, (long long)holders, (long long)n_rows);
  return 0;
}

double input_memory_share(MPI_Comm comm) {
  double node = 0.0;
  int ranks = 1;
  node_memory(comm, &node, &ranks);
  return node > 0.0 ? node / ranks : 0.0;
}
