/* halo: the command-line driver. */
#include <stdio.h>
#include <string.h>

#include "driver.h"

static void usage(void) {
  printf("usage: mpirun -n P halo COMMAND [options]\n"
         "\n"
         "halo plans and runs the halo exchange of a distributed sparse matrix-vector\n"
         "product (SpMV) and measures it.\n"
         "\n"
         "commands:\n"
         "  spmv      time y = A*x and its exchange with each strategy, check the results\n"
         "  simulate  the statistics of every strategy on P ranks, built in one process\n"
         "  params    the performance model's machine parameters: measure them here,\n"
         "            show a set\n"
         "  convert   write a matrix as binary CSR (.hcsr), read fast in parallel, or as\n"
         "            Matrix Market (serial)\n"
#if HALO_TOOL_AMG
         "  amg       hypre's BoomerAMG-PCG with hypre's exchange and with halo's, side\n"
         "            by side, per level; the hierarchy's plans at scale (--simulate)\n"
#endif
         "\n"
         "  halo COMMAND --help   options of a command\n"
         "  halo -h, --help       this text\n"
         "  halo --version        version of halo\n" HALO_TOOL_GUIDE);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, code;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    if (rank == 0) usage();
    code = argc < 2 ? EXIT_USAGE : EXIT_OK;
  } else if (strcmp(argv[1], "--version") == 0) {
    if (rank == 0) printf("halo %s\n", halo_version());
    code = EXIT_OK;
  } else if (strcmp(argv[1], "spmv") == 0) {
    code = cmd_spmv(argc - 1, argv + 1, MPI_COMM_WORLD);
  } else if (strcmp(argv[1], "simulate") == 0) {
    code = cmd_simulate(argc - 1, argv + 1, MPI_COMM_WORLD);
  } else if (strcmp(argv[1], "params") == 0) {
    code = cmd_params(argc - 1, argv + 1, MPI_COMM_WORLD);
  } else if (strcmp(argv[1], "convert") == 0) {
    code = cmd_convert(argc - 1, argv + 1, MPI_COMM_WORLD);
  } else if (strcmp(argv[1], "amg") == 0) {
#if HALO_TOOL_AMG
    code = cmd_amg(argc - 1, argv + 1, MPI_COMM_WORLD);
#else
    if (rank == 0)
      fprintf(stderr, "halo amg: not compiled in: rebuild with HALO_ENABLE_HYPRE=ON (Debian: "
                      "libhypre-dev)\n");
    code = EXIT_ERROR;
#endif
  } else {
    if (rank == 0)
      fprintf(stderr,
              "halo: unknown command '%s' (commands: spmv, simulate, params, convert, amg; see halo "
              "--help)\n",
              argv[1]);
    code = EXIT_USAGE;
  }
  MPI_Finalize();
  return code;
}
