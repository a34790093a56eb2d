/* -halo_sf_view's solve phase: is a solve running (KSPSolve, SNESSolve, TSStep or
 * TaoSolve, the events -log_view times them by)? Told by PETSc's own event log, followed only
 * with -halo_sf_view.
 *
 * A program that asks whether PETSc logs events (PetscLogIsActive) and starts PETSc's
 * default log if not must still get one: so where no log runs, halo starts PETSc's default
 * log first (PetscLogDefaultBegin, what -log_view starts, printing nothing).
 *
 * From PETSc 3.20 several log handlers run side by side: halo's (PetscLogHandlerCreateLegacy)
 * counts how deep the program is in those events. Before 3.20 there is one pair of event
 * callbacks (PetscLogSet): halo's wraps the pair running before it (the default log's, or
 * -log_view's) and calls it; a program that sets another pair afterwards (PetscLogSet,
 * PetscLogDefaultBegin) replaces halo's, and HaloPetscPhaseLost() says so. (The default
 * log's own depth of an event cannot serve: PetscLogEventDeactivatePush raises it, as
 * PCSetUp does for KSPSolve outside any solve.)
 *
 * What counts as the solve phase is what those events enclose, as -log_view counts it: in
 * PETSc 3.18 KSPSolve's event begins after its KSPSetUp (the preconditioner's set-up), so a
 * first solve's set-up is outside. An event deactivated (PetscLogEventDeactivate, a stage
 * made inactive) is not seen. */
#include "petsc_impl.h"

#include <stdlib.h>
#include <string.h>

#define HALO_N_SOLVE_EVENTS 4
static const char *const halo_solve_events[HALO_N_SOLVE_EVENTS] = {"KSPSolve", "SNESSolve",
                                                                   "TSStep", "TaoSolve"};

static struct {
  PetscBool on;
  const char *lost;  /* why the phase cannot be told, or NULL */
  int depth;         /* solve events begun and not ended */
  signed char *kind; /* per event id: 0 not looked up, 1 a solve, 2 another event */
  int n_kind;
#if PETSC_VERSION_GE(3, 20, 0)
  PetscLogHandler handler;
#else
  PetscErrorCode (*prev_begin)(PetscLogEvent, int, PetscObject, PetscObject, PetscObject,
                               PetscObject);
  PetscErrorCode (*prev_end)(PetscLogEvent, int, PetscObject, PetscObject, PetscObject,
                             PetscObject);
#endif
} halo_phase;

/* An event's name, NULL if it has none yet. */
static const char *HaloPhaseEventName(PetscLogEvent e) {
#if PETSC_VERSION_GE(3, 20, 0)
  const char *name = NULL;
  if (PetscLogEventGetName(e, &name) != PETSC_SUCCESS) return NULL;
  return name;
#else
  PetscStageLog sl = petsc_stageLog;
  if (!sl || !sl->eventLog || e >= sl->eventLog->numEvents) return NULL;
  return sl->eventLog->eventInfo[e].name;
#endif
}

/* Is event e one of the solves? Each id is looked up by name once. Plain malloc: a log
 * callback runs inside PETSc's own calls, PetscMalloc among them. */
static PetscBool HaloPhaseIsSolve(PetscLogEvent e) {
  if (e < 0) return PETSC_FALSE;
  if (e >= halo_phase.n_kind) {
    int n = 2 * e + 64;
    signed char *k = realloc(halo_phase.kind, (size_t)n);
    if (!k) {
      halo_phase.lost = "out of memory for the table of PETSc's events";
      return PETSC_FALSE;
    }
    memset(k + halo_phase.n_kind, 0, (size_t)(n - halo_phase.n_kind));
    halo_phase.kind = k;
    halo_phase.n_kind = n;
  }
  if (!halo_phase.kind[e]) {
    const char *name = HaloPhaseEventName(e);
    if (!name) return PETSC_FALSE;
    halo_phase.kind[e] = 2;
    for (int i = 0; i < HALO_N_SOLVE_EVENTS; i++)
      if (strcmp(name, halo_solve_events[i]) == 0) halo_phase.kind[e] = 1;
  }
  return (PetscBool)(halo_phase.kind[e] == 1);
}

static PetscErrorCode HaloPhaseBegin(PetscLogEvent e, int t, PetscObject o1, PetscObject o2,
                                     PetscObject o3, PetscObject o4) {
  if (HaloPhaseIsSolve(e)) halo_phase.depth++;
#if !PETSC_VERSION_GE(3, 20, 0)
  if (halo_phase.prev_begin) return halo_phase.prev_begin(e, t, o1, o2, o3, o4);
#endif
  return 0;
}

static PetscErrorCode HaloPhaseEnd(PetscLogEvent e, int t, PetscObject o1, PetscObject o2,
                                   PetscObject o3, PetscObject o4) {
  if (HaloPhaseIsSolve(e) && halo_phase.depth > 0) halo_phase.depth--;
#if !PETSC_VERSION_GE(3, 20, 0)
  if (halo_phase.prev_end) return halo_phase.prev_end(e, t, o1, o2, o3, o4);
#endif
  return 0;
}

PetscErrorCode HaloPetscPhaseStart(void) {
  PetscBool active = PETSC_FALSE;

  PetscFunctionBegin;
  if (halo_phase.on) PetscFunctionReturn(0);
  PetscCall(PetscLogIsActive(&active));
  if (!active) PetscCall(PetscLogDefaultBegin());
#if PETSC_VERSION_GE(3, 20, 0)
  PetscCall(PetscLogHandlerCreateLegacy(PETSC_COMM_WORLD, HaloPhaseBegin, HaloPhaseEnd, NULL, NULL,
                                        &halo_phase.handler));
  PetscCall(PetscLogHandlerStart(halo_phase.handler));
#else
  halo_phase.prev_begin = PetscLogPLB;
  halo_phase.prev_end = PetscLogPLE;
  PetscCall(PetscLogSet(HaloPhaseBegin, HaloPhaseEnd));
#endif
  halo_phase.on = PETSC_TRUE;
  PetscFunctionReturn(0);
}

PetscBool HaloPetscPhaseInSolve(void) {
  if (!halo_phase.on || halo_phase.lost) return PETSC_FALSE;
#if !PETSC_VERSION_GE(3, 20, 0)
  if (PetscLogPLB != HaloPhaseBegin) {
    halo_phase.lost = "the program replaced PETSc's event callbacks after halo set its own "
                      "(PetscLogSet, PetscLogDefaultBegin)";
    return PETSC_FALSE;
  }
#endif
  return (PetscBool)(halo_phase.depth > 0);
}

const char *HaloPetscPhaseLost(void) {
  if (!halo_phase.on) return "halo did not follow PETSc's events";
  (void)HaloPetscPhaseInSolve(); /* the log as it is now, too */
  return halo_phase.lost;
}

PetscErrorCode HaloPetscPhaseStop(void) {
  PetscFunctionBegin;
  if (!halo_phase.on) PetscFunctionReturn(0);
#if PETSC_VERSION_GE(3, 20, 0)
  PetscCall(PetscLogHandlerStop(halo_phase.handler));
  PetscCall(PetscLogHandlerDestroy(&halo_phase.handler));
#else
  /* the callbacks back, if they are still halo's */
  if (PetscLogPLB == HaloPhaseBegin)
    PetscCall(PetscLogSet(halo_phase.prev_begin, halo_phase.prev_end));
#endif
  free(halo_phase.kind);
  memset(&halo_phase, 0, sizeof halo_phase);
  PetscFunctionReturn(0);
}
