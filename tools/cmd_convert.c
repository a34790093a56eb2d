/* halo convert: read a matrix (Matrix Market, .hcsr, or generated) whole
 * and write it as .hcsr or Matrix Market, by the output's extension. Serial:
 * on more ranks, rank 0 converts and the others wait for its exit status. */
#define _POSIX_C_SOURCE 200809L /* stat */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "driver.h"
#include "progress.h"

static void usage(void) {
  printf("usage: halo convert (IN | --gen SPEC) OUT [options]\n"
         "\n"
         "Reads a matrix whole and writes it in the format of OUT's extension:\n"
         "  .hcsr  halo's binary CSR (docs/input.md, \"Binary CSR input\"): halo spmv and\n"
         "         halo simulate read it with --matrix, each rank of spmv its own rows\n"
         "  .mtx   Matrix Market, coordinate real general\n"
         "IN is a Matrix Market file or an .hcsr file (by its .hcsr name or its magic).\n"
         "Serial: run it on one rank; on more, rank 0 converts and the others wait.\n"
         "\n"
         "options:\n"
         "  --gen SPEC            a generated matrix instead of IN (lap2d:N, lap3d:N,\n"
         "                        lap3d27:N, irregular:N,SEED; see halo spmv --help)\n"
         "  --index-bytes 4|8     .hcsr: width of the column indices [4 when the columns\n"
         "                        fit an int32, else 8]\n"
         "  --sum-duplicates      sum repeated entries of a Matrix Market IN (default:\n"
         "                        reject it)\n"
         "  --quiet               print nothing but errors: no summary, no progress line\n"
         "  -h, --help            this text\n"
         "\n"
         "environment:\n"
         "  HALO_PROGRESS=1|0     progress of reading, generating and writing on stderr\n"
         "                        at once and on any stderr, or never [on a terminal,\n"
         "                        once it has taken a second]\n"
         "  HALO_INPUT_LIMIT=BYTES the most IN's rows and columns may need beyond its\n"
         "                        entries (8 bytes each, 16 an entry), or none [1073741824]\n"
         "\n"
         "exit status: 0 ok, 1 error, 2 bad command line\n" HALO_TOOL_GUIDE);
}

static int ends_with(const char *s, const char *tail) {
  size_t n = strlen(s), m = strlen(tail);
  return n >= m && strcmp(s + n - m, tail) == 0;
}

/* The conversion, on one process. */
static int convert(const char *in_path, const char *gen_spec, const char *out_path, int to_hcsr,
                   int index_bytes, int sum_duplicates, int quiet) {
  halo_csr A;
  halo_status st;
  memset(&A, 0, sizeof A);
  if (progress_setup(0, quiet)) return EXIT_USAGE;
  progress_begin(gen_spec ? gen_spec : in_path);
  double t0 = MPI_Wtime();
  if (gen_spec) {
    halo_gen g;
    int64_t N = 0;
    const input_opts in = {NULL, gen_spec, HALO_PARTITION_ROWS, 0, 0, 0};
    char why[1024];
    if (!input_check_memory(MPI_COMM_SELF, &in, INPUT_WHOLE, 0, 0, why, sizeof why)) {
      progress_end();
      driver_error(0, "convert", "%s", why);
      return EXIT_ERROR;
    }
    st = halo_gen_parse(gen_spec, &g);
    if (st == HALO_SUCCESS) st = halo_gen_size(&g, &N, NULL);
    if (st == HALO_SUCCESS) st = halo_gen_rows(&g, 0, N, &A);
  } else if (input_is_hcsr(in_path)) {
    st = halo_hcsr_read(in_path, &A);
  } else {
    halo_mm_options mo = halo_mm_options_default();
    mo.sum_duplicates = sum_duplicates;
    st = halo_mm_read(in_path, &mo, &A);
  }
  double t_read = MPI_Wtime() - t0;
  progress_end();
  if (st != HALO_SUCCESS) {
    driver_error(0, "convert", "%s", halo_last_error());
    return EXIT_ERROR;
  }
  progress_begin(out_path);
  t0 = MPI_Wtime();
  if (to_hcsr) {
    halo_hcsr_options ho = halo_hcsr_options_default();
    ho.index_bytes = index_bytes;
    st = halo_hcsr_write(out_path, &A, &ho);
  } else {
    st = halo_mm_write(out_path, &A);
  }
  double t_write = MPI_Wtime() - t0;
  progress_end();
  if (st != HALO_SUCCESS) {
    driver_error(0, "convert", "%s", halo_last_error());
    halo_csr_free(&A);
    return EXIT_ERROR;
  }
  struct stat sb;
  double mb = stat(out_path, &sb) == 0 ? (double)sb.st_size / 1e6 : 0.0;
  if (!quiet)
    printf("halo convert: %s -> %s: %lld x %lld, %lld entries; read in %.3f s, wrote %.1f MB in "
           "%.3f s\n",
           gen_spec ? gen_spec : in_path, out_path, (long long)A.n_rows, (long long)A.n_cols,
           (long long)halo_csr_nnz(&A), t_read, mb, t_write);
  halo_csr_free(&A);
  return EXIT_OK;
}

int cmd_convert(int argc, char **argv, MPI_Comm comm) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  const char *gen_spec = NULL, *paths[2] = {NULL, NULL};
  int n_paths = 0, sum_duplicates = 0, quiet = 0;
  int64_t index_bytes = 0;
  args_t a = {argc, 1, argv, "convert", NULL, rank};
  for (; a.i < argc; a.i++) {
    int m;
    if (args_flag(&a, "--help") || args_flag(&a, "-h")) {
      if (rank == 0) usage();
      return EXIT_OK;
    } else if ((m = args_take(&a, "--gen"))) {
      if (m < 0) return EXIT_USAGE;
      gen_spec = a.value;
    } else if ((m = args_take(&a, "--index-bytes"))) {
      if (m < 0 || !args_int(&a, "--index-bytes", 4, 8, &index_bytes)) return EXIT_USAGE;
      if (index_bytes != 4 && index_bytes != 8) {
        args_error(&a, "--index-bytes '%s': 4 or 8", a.value);
        return EXIT_USAGE;
      }
    } else if (args_flag(&a, "--sum-duplicates")) {
      sum_duplicates = 1;
    } else if (args_flag(&a, "--quiet")) {
      quiet = 1;
    } else if (argv[a.i][0] == '-' && argv[a.i][1] != '\0') {
      args_error(&a, "unknown option '%s'", argv[a.i]);
      return EXIT_USAGE;
    } else {
      if (n_paths == 2) {
        args_error(&a, "unexpected argument '%s'", argv[a.i]);
        return EXIT_USAGE;
      }
      paths[n_paths++] = argv[a.i];
    }
  }
  if (n_paths != (gen_spec ? 1 : 2)) {
    args_error(&a, "give IN and OUT, or --gen SPEC and OUT");
    return EXIT_USAGE;
  }
  const char *in_path = gen_spec ? NULL : paths[0], *out_path = paths[n_paths - 1];
  struct stat si, so; /* writing truncates OUT first: never the input itself */
  if (in_path && stat(in_path, &si) == 0 && stat(out_path, &so) == 0 && si.st_dev == so.st_dev &&
      si.st_ino == so.st_ino) {
    args_error(&a, "IN '%s' and OUT '%s' are the same file: writing would destroy the input",
               in_path, out_path);
    return EXIT_USAGE;
  }
  const int to_hcsr = ends_with(out_path, ".hcsr");
  if (!to_hcsr && !ends_with(out_path, ".mtx")) {
    args_error(&a, "OUT '%s': name it FILE.hcsr or FILE.mtx (the format to write)", out_path);
    return EXIT_USAGE;
  }
  if (!to_hcsr && index_bytes) {
    args_error(&a, "--index-bytes is for .hcsr output, not '%s'", out_path);
    return EXIT_USAGE;
  }
  int code = EXIT_OK;
  if (rank == 0)
    code = convert(in_path, gen_spec, out_path, to_hcsr, (int)index_bytes, sum_duplicates, quiet);
  MPI_Bcast(&code, 1, MPI_INT, 0, comm);
  return code;
}
