/* halo for PETSc: what the star forest wrapper, the Mat type and the entry
 * point share. Uses PETSc's private headers (sfimpl.h, matimpl.h): the
 * library is built against the PETSc it loads into. */
#ifndef HALO_PETSC_IMPL_H
#define HALO_PETSC_IMPL_H

#include <petsc/private/matimpl.h>
#include <petsc/private/sfimpl.h>

#include "halo.h"
#include "halo/petsc.h"

/* halo moves doubles: the wrapper takes over only where PetscScalar is one. */
#if defined(PETSC_USE_COMPLEX) || !defined(PETSC_USE_REAL_DOUBLE)
#define HALO_PETSC_SCALAR_OK 0
#else
#define HALO_PETSC_SCALAR_OK 1
#endif

/* Star forests in CUDA memory go through halo's device plans where PETSc has
 * CUDA (3.20 or later: PetscGetCurrentCUDAStream) and halo was built with it
 * (HALO_PETSC_CUDA, set by CMake); elsewhere they stay PETSc's. */
#if defined(PETSC_HAVE_CUDA) && defined(HALO_PETSC_CUDA) && HALO_PETSC_CUDA && \
    PETSC_VERSION_GE(3, 20, 0)
#define HALO_PETSC_DEVICE 1
#else
#define HALO_PETSC_DEVICE 0
#endif

/* A container's destroy function: PETSc 3.23 passes it the address of the
 * context (PetscContainerSetCtxDestroy), earlier releases the context. After
 * a function fn(void *ctx), HALO_PETSC_CONTAINER_DESTROY(fn) makes what
 * HaloPetscContainerSetDestroy(c, fn) sets. */
#if PETSC_VERSION_GE(3, 23, 0)
#define HALO_PETSC_CONTAINER_DESTROY(fn)                                                           \
  static PetscErrorCode fn##_ctx(PetscCtxRt ctx) { return fn(*(void **)ctx); }
#define HaloPetscContainerSetDestroy(c, fn) PetscContainerSetCtxDestroy(c, fn##_ctx)
#else
#define HALO_PETSC_CONTAINER_DESTROY(fn)
#define HaloPetscContainerSetDestroy(c, fn) PetscContainerSetUserDestroy(c, fn)
#endif

/** The -halo_sf_* options, read once by HaloPetscInitialize(). */
typedef struct {
  PetscBool sf;             /* -halo_sf: wrap the type basic */
  PetscBool verify;         /* -halo_sf_verify */
  PetscBool verify_corrupt; /* -halo_sf_verify_corrupt: the check's own test */
  PetscBool view;           /* -halo_sf_view */
  halo_plan_options opts;   /* strategy, transport, ranks_per_node, message_cap, params */
  char params[PETSC_MAX_PATH_LEN];
  char wisdom[PETSC_MAX_PATH_LEN]; /* -halo_sf_wisdom */
  char settings[HALO_SETTINGS_MAX + 1]; /* -halo_sf_settings */
} HaloPetscConfig;

extern HaloPetscConfig halo_petsc_config;

/** A halo failure as a PETSc error with halo's message. halo's collective
 *  calls fail on every rank together, so every rank raises the error, on
 *  PETSC_COMM_SELF so that every rank prints it (PETSc prints an error of a
 *  parallel communicator on its first rank only). */
#define HaloPetscCall(expr)                                                                        \
  do {                                                                                             \
    halo_status halo_petsc_st_ = (expr);                                                           \
    PetscCheck(halo_petsc_st_ == HALO_SUCCESS, PETSC_COMM_SELF, PETSC_ERR_LIB, "halo: %s",         \
               halo_last_error());                                                                 \
  } while (0)

/* ---- the star forest wrapper (sf.c) -------------------------------------- */

/** Register the type "halo" and, when -halo_sf, wrap "basic". */
PetscErrorCode HaloPetscSFRegister(void);

/* ---- what -halo_sf_view prints at PetscFinalize (view.c) ------------------ */

/** One plan's summary, recorded when its star forest or matrix lets it go. */
PetscErrorCode HaloPetscViewRecordPlan(const char *owner, halo_plan plan, double modeled_seconds,
                                       PetscInt64 n_forward, PetscInt64 n_reverse);
/** A star forest left to PETSc, counted by reason. */
PetscErrorCode HaloPetscViewRecordBasic(const char *why);
/** The modeled seconds of a plan when -halo_sf_view is set (collective). */
PetscErrorCode HaloPetscViewModel(MPI_Comm comm, halo_plan plan, double *seconds_p);
/** What one star forest moved, as this rank saw it: its operations and the bytes of its
 *  leaves on other ranks, through halo and left to PETSc's basic. */
typedef struct {
  int id;              /* in the order they were made, from 0 */
  PetscBool vscatter;  /* made by VecScatterCreate */
  PetscBool setup;     /* set up at least once */
  PetscInt64 nroots, nleaves, remote_leaves;
  PetscInt64 ops_halo, ops_basic;     /* Bcast, Reduce, FetchAndOp */
  PetscInt64 bytes_halo, bytes_basic; /* of leaves on other ranks */
  PetscInt64 solve_ops_halo, solve_ops_basic; /* ... of them, those while a solve ran */
  PetscInt64 solve_bytes_halo, solve_bytes_basic;
  const char *route;   /* "halo", or why basic kept it */
  const char *call_why; /* why the last call left to basic was (a static string), or NULL */
} HaloViewSF;
/** A star forest's record, at its destroy or (still alive) at PetscFinalize. */
PetscErrorCode HaloPetscViewRecordSF(const HaloViewSF *rec);
/** Record the star forests still alive (sf.c), before the view prints. */
PetscErrorCode HaloPetscSFRecordLive(void);
/** Print everything recorded (rank 0 of PETSC_COMM_WORLD; the byte totals summed over
 *  its ranks), then forget it. Collective on PETSC_COMM_WORLD. */
PetscErrorCode HaloPetscViewFinalize(void);

/* ---- the solve phase, for -halo_sf_view (phase.c) ------------------------- */

/** Follow PETSc's events KSPSolve, SNESSolve, TSStep and TaoSolve (a log handler). */
PetscErrorCode HaloPetscPhaseStart(void);
/** Is one of them running now? PETSC_FALSE when not followed or lost. */
PetscBool HaloPetscPhaseInSolve(void);
/** Why the solve phase was not followed to the end (a static string), or NULL. */
const char *HaloPetscPhaseLost(void);
/** Stop following (at PetscFinalize). */
PetscErrorCode HaloPetscPhaseStop(void);

/* ---- the Mat type (mat.c) ------------------------------------------------- */

PetscErrorCode HaloPetscMatRegister(void);

#endif /* HALO_PETSC_IMPL_H */
