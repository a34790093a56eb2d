/* A measurement aid of bench/gpu/amg.sh, never a way to solve anything: loaded
 * with LD_PRELOAD into an unmodified hypre program, it makes every exchange of
 * values (jobs 1 and 2 of hypre's comm handles) inside HYPRE_PCGSolve do
 * nothing, so that the solve's time per iteration without any exchange bounds
 * what any exchange, halo's or hypre's, could reach. Every other exchange (the
 * set-up's) is hypre's own. The values received are zeros (hypre_Memset, in
 * the receive buffer's memory): the solve's residuals, and so its iteration
 * count, are not the real ones; only the time per iteration is of use.
 *
 * NOX_SYNC keeps the exchanges' dependencies and drops only their data, to
 * tell the cost of waiting for the neighbours from the cost of moving values:
 *   NOX_SYNC=host    each skipped exchange still sends a message of no bytes
 *                    to each rank it would send to and waits (in the handle's
 *                    destroy) for one from each rank it would receive from;
 *   NOX_SYNC=device  the same, after waiting for this rank's GPU work
 *                    (cuCtxSynchronize), as an exchange of device values
 *                    through a host MPI must before it sends.
 *
 *   mpicc -shared -fPIC -O2 -I HYPRE_INCLUDE -o no_exchange.so no_exchange.c -ldl */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "HYPRE_krylov.h"
#include "_hypre_parcsr_mv.h"

typedef HYPRE_Int (*solve_fn)(HYPRE_Solver, HYPRE_Matrix, HYPRE_Vector, HYPRE_Vector);
typedef hypre_ParCSRCommHandle *(*create_fn)(HYPRE_Int, hypre_ParCSRCommPkg *, HYPRE_MemoryLocation,
                                             void *, HYPRE_MemoryLocation, void *);
typedef HYPRE_Int (*destroy_fn)(hypre_ParCSRCommHandle *);

static int in_solve;
static long skipped;
/* the handles made here (a solve has few open at once) */
static hypre_ParCSRCommHandle *mine[256];
/* NOX_SYNC: 0 none, 1 host, 2 device; each handle's messages of no bytes */
static int sync_mode = -1;
static MPI_Request *sync_req[256];
static int sync_n[256];
#define NOX_TAG 7341

static void *real(const char *name);

static int sync_mode_get(void) {
  if (sync_mode < 0) {
    const char *v = getenv("NOX_SYNC");
    sync_mode = !v || !*v ? 0 : !strcmp(v, "host") ? 1 : !strcmp(v, "device") ? 2 : -2;
    if (sync_mode == -2) {
      fprintf(stderr, "no_exchange: NOX_SYNC is host or device, not %s\n", v);
      exit(1);
    }
  }
  return sync_mode;
}

/* Handle i's dependencies: a message of no bytes to each rank it sends to,
 * one from each rank it receives from (forward: the package's sends and
 * receives; reverse: the other way round). */
static void sync_start(int i, HYPRE_Int job, hypre_ParCSRCommPkg *pkg) {
  const int mode = sync_mode_get();
  sync_n[i] = 0;
  if (!mode) return;
  if (mode ==
      2) { /* the driver's, whichever runtime hypre links (its CUDA runtime may be static) */
    static int (*ctx_sync)(void);
    if (!ctx_sync) {
      void *cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
      ctx_sync = cu ? (int (*)(void))dlsym(cu, "cuCtxSynchronize") : NULL;
    }
    if (!ctx_sync || ctx_sync()) {
      fprintf(stderr, "no_exchange: cuCtxSynchronize %s\n", ctx_sync ? "failed" : "not found");
      exit(1);
    }
  }
  const HYPRE_Int ns = hypre_ParCSRCommPkgNumSends(pkg), nr = hypre_ParCSRCommPkgNumRecvs(pkg);
  const HYPRE_Int *sp = hypre_ParCSRCommPkgSendProcs(pkg), *rp = hypre_ParCSRCommPkgRecvProcs(pkg);
  MPI_Comm comm = hypre_ParCSRCommPkgComm(pkg);
  sync_req[i] = malloc((size_t)(ns + nr + 1) * sizeof(MPI_Request));
  if (!sync_req[i]) {
    fprintf(stderr, "no_exchange: out of memory\n");
    exit(1);
  }
  const HYPRE_Int *to = job == 1 ? sp : rp, *from = job == 1 ? rp : sp;
  const HYPRE_Int n_to = job == 1 ? ns : nr, n_from = job == 1 ? nr : ns;
  for (HYPRE_Int k = 0; k < n_from; k++)
    MPI_Irecv(NULL, 0, MPI_BYTE, from[k], NOX_TAG, comm, &sync_req[i][sync_n[i]++]);
  for (HYPRE_Int k = 0; k < n_to; k++)
    MPI_Isend(NULL, 0, MPI_BYTE, to[k], NOX_TAG, comm, &sync_req[i][sync_n[i]++]);
}

static void sync_end(int i) {
  if (sync_req[i]) MPI_Waitall(sync_n[i], sync_req[i], MPI_STATUSES_IGNORE);
  free(sync_req[i]);
  sync_req[i] = NULL;
  sync_n[i] = 0;
}

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
        sync_start(i, job, pkg);
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
      sync_end(i);
      free(h);
      mine[i] = NULL;
      return 0;
    }
  return f(h);
}
