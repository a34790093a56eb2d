/* A measurement aid of bench/gpu/amg.sh, never a way to solve anything: loaded
 * with LD_PRELOAD into an unmodified hypre program, it makes every exchange of
 * values (jobs 1 and 2 of hypre's comm handles) inside HYPRE_PCGSolve do
 * nothing, so that the solve's time per iteration without any exchange bounds
 * what any exchange, halo's or hypre's, could reach. Every other exchange (the
 * set-up's) is hypre's own. The values received are zeros (hypre_Memset, in
 * the receive buffer's memory): the solve's residuals, and so its iteration
 * count, are not the real ones; only the time per iteration is of use.
 *
 *   mpicc -shared -fPIC -O2 -I HYPRE_INCLUDE -o no_exchange.so no_exchange.c -ldl */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "HYPRE_krylov.h"
#include "_hypre_parcsr_mv.h"

typedef HYPRE_Int (*solve_fn)(HYPRE_Solver, HYPRE_Matrix, HYPRE_Vector, HYPRE_Vector);
typedef hypre_ParCSRCommHandle *(*create_fn)(HYPRE_Int, hypre_ParCSRCommPkg *,
                                             HYPRE_MemoryLocation, void *, HYPRE_MemoryLocation,
                                             void *);
typedef HYPRE_Int (*destroy_fn)(hypre_ParCSRCommHandle *);

static int in_solve;
static long skipped;
/* the handles made here (a solve has few open at once) */
static hypre_ParCSRCommHandle *mine[256];

static void *real(const char *name) {
  void *f = dlsym(RTLD_NEXT, name);
  if (!f) {
    fprintf(stderr, "no_exchange: %s not found\n", name);
    exit(1);
  }
  return f;
}

HYPRE_Int HYPRE_PCGSolve(HYPRE_Solver solver, HYPRE_Matrix A, HYPRE_Vector b, HYPRE_Vector x) {
  static solve_fn f;
  if (!f) f = (solve_fn)real("HYPRE_PCGSolve");
  in_solve = 1;
  const HYPRE_Int r = f(solver, A, b, x);
  in_solve = 0;
  fprintf(stderr, "no_exchange: %ld exchanges of the solve skipped\n", skipped);
  return r;
}

hypre_ParCSRCommHandle *hypre_ParCSRCommHandleCreate_v2(HYPRE_Int job, hypre_ParCSRCommPkg *pkg,
                                                        HYPRE_MemoryLocation sml, void *send,
                                                        HYPRE_MemoryLocation rml, void *recv) {
  static create_fn f;
  if (!f) f = (create_fn)real("hypre_ParCSRCommHandleCreate_v2");
  if (in_solve && (job == 1 || job == 2) && pkg)
    for (int i = 0; i < 256; i++)
      if (!mine[i]) {
        mine[i] = calloc(1, sizeof *mine[i]);
        if (!mine[i]) break;
        /* forward: the ghosts; reverse: the values added to the sent rows */
        const HYPRE_Int n =
            job == 1 ? hypre_ParCSRCommPkgRecvVecStart(pkg, hypre_ParCSRCommPkgNumRecvs(pkg))
                     : hypre_ParCSRCommPkgSendMapStart(pkg, hypre_ParCSRCommPkgNumSends(pkg));
        if (n > 0 && recv) hypre_Memset(recv, 0, (size_t)n * sizeof(HYPRE_Complex), rml);
        skipped++;
        return mine[i];
      }
  return f(job, pkg, sml, send, rml, recv);
}

hypre_ParCSRCommHandle *hypre_ParCSRCommHandleCreate(HYPRE_Int job, hypre_ParCSRCommPkg *pkg,
                                                     void *send, void *recv) {
  return hypre_ParCSRCommHandleCreate_v2(job, pkg, HYPRE_MEMORY_HOST, send, HYPRE_MEMORY_HOST,
                                         recv);
}

HYPRE_Int hypre_ParCSRCommHandleDestroy(hypre_ParCSRCommHandle *h) {
  static destroy_fn f;
  if (!f) f = (destroy_fn)real("hypre_ParCSRCommHandleDestroy");
  for (int i = 0; h && i < 256; i++)
    if (mine[i] == h) {
      free(h);
      mine[i] = NULL;
      return 0;
    }
  return f(h);
}
