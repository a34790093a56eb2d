/* -halo_sf_view: what went through halo, printed at PetscFinalize.
 *
 * A plan's summary is recorded when its star forest or matrix lets it go
 * (destroy, reset, new pattern), with the calls it ran; star forests left to
 * PETSc's basic are counted by reason. Rank 0 of PETSC_COMM_WORLD prints its
 * records: a plan's statistics are those of all its ranks, the calls and the
 * reasons are rank 0's. */
#include "petsc_impl.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define HALO_VIEW_REASONS 8

typedef struct HaloViewPlan {
  struct HaloViewPlan *next;
  char owner[32];
  char describe[256];
  halo_stats stats;
  int64_t messages, bytes, inter_messages, inter_bytes; /* all phases */
  double modeled_seconds;
  PetscInt64 n_forward, n_reverse;
} HaloViewPlan;

static HaloViewPlan *view_first = NULL, *view_last = NULL;
typedef struct HaloViewSFNode {
  struct HaloViewSFNode *next;
  HaloViewSF rec;
} HaloViewSFNode;
static HaloViewSFNode *view_sf_first = NULL, *view_sf_last = NULL;
static struct {
  const char *why;
  PetscInt64 n;
} view_basic[HALO_VIEW_REASONS];

PetscErrorCode HaloPetscViewModel(MPI_Comm comm, halo_plan plan, double *seconds_p) {
  PetscFunctionBegin;
  *seconds_p = 0;
  if (!halo_petsc_config.view) PetscFunctionReturn(0);
  HaloPetscCall(halo_plan_model(plan, halo_petsc_config.opts.params, 0, NULL, seconds_p));
  PetscFunctionReturn(0);
}

PetscErrorCode HaloPetscViewRecordPlan(const char *owner, halo_plan plan, double modeled_seconds,
                                       PetscInt64 n_forward, PetscInt64 n_reverse) {
  HaloViewPlan *p;

  PetscFunctionBegin;
  if (!halo_petsc_config.view) PetscFunctionReturn(0);
  PetscCall(PetscNew(&p));
  PetscCall(PetscStrncpy(p->owner, owner, sizeof p->owner));
  HaloPetscCall(halo_plan_stats(plan, &p->stats));
  for (int k = 0; k < p->stats.n_phases; k++) {
    halo_phase_stats ps;

    HaloPetscCall(halo_plan_phase_stats(plan, k, &ps));
    p->messages += ps.messages;
    p->bytes += ps.bytes;
    p->inter_messages += ps.inter_node_messages;
    p->inter_bytes += ps.inter_node_bytes;
  }
  HaloPetscCall(halo_plan_describe(plan, p->describe, sizeof p->describe));
  p->modeled_seconds = modeled_seconds;
  p->n_forward = n_forward;
  p->n_reverse = n_reverse;
  if (view_last) view_last->next = p;
  else view_first = p;
  view_last = p;
  PetscFunctionReturn(0);
}

PetscErrorCode HaloPetscViewRecordBasic(const char *why) {
  PetscFunctionBegin;
  if (!halo_petsc_config.view || !why) PetscFunctionReturn(0);
  for (int i = 0; i < HALO_VIEW_REASONS; i++) {
    if (!view_basic[i].why || strcmp(view_basic[i].why, why) == 0) {
      view_basic[i].why = why;
      view_basic[i].n++;
      break;
    }
  }
  PetscFunctionReturn(0);
}

static int by_id_order(const void *a, const void *b) {
  const HaloViewSF *x = *(const HaloViewSF *const *)a, *y = *(const HaloViewSF *const *)b;
  return (x->id > y->id) - (x->id < y->id);
}

PetscErrorCode HaloPetscViewRecordSF(const HaloViewSF *rec) {
  HaloViewSFNode *p;

  PetscFunctionBegin;
  if (!halo_petsc_config.view) PetscFunctionReturn(0);
  PetscCall(PetscNew(&p));
  p->rec = *rec;
  if (view_sf_last) view_sf_last->next = p;
  else view_sf_first = p;
  view_sf_last = p;
  PetscFunctionReturn(0);
}

/* Every star forest made, in the order they were made (rank 0's view of each), and the
 * share of the bytes of leaves on other ranks (all ranks') that went through halo: the whole
 * run's, and the solve phase's (phase.c). */
static PetscErrorCode HaloPetscViewSFs(void) {
  /* made, set up, ops halo/basic, bytes halo/basic, the same four in solves, lost */
  PetscInt64 mine[11] = {0}, all[11];
  const char *lost = HaloPetscPhaseLost();
  int n = 0;

  PetscFunctionBegin;
  for (HaloViewSFNode *p = view_sf_first; p; p = p->next) n++;
  if (n) { /* in the order they were made (recorded in the order they went) */
    HaloViewSF **by_id;
    int k = 0;
    PetscCall(PetscMalloc1(n, &by_id));
    for (HaloViewSFNode *p = view_sf_first; p; p = p->next) by_id[k++] = &p->rec;
    qsort(by_id, (size_t)n, sizeof *by_id, by_id_order);
    for (k = 0; k < n; k++) {
      const HaloViewSF *r = by_id[k];
      PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                            "halo_sf_view: star forest %d (%s%s): %" PetscInt64_FMT
                            " roots, %" PetscInt64_FMT " leaves (%" PetscInt64_FMT
                            " on other ranks); operations through halo %" PetscInt64_FMT
                            ", left to basic %" PetscInt64_FMT "; bytes through halo %" PetscInt64_FMT
                            ", left to basic %" PetscInt64_FMT " (rank 0): %s%s%s\n",
                            r->id, r->vscatter ? "VecScatter" : "graph",
                            r->setup ? "" : ", never set up", r->nroots < 0 ? 0 : r->nroots,
                            r->nleaves < 0 ? 0 : r->nleaves, r->remote_leaves, r->ops_halo,
                            r->ops_basic, r->bytes_halo, r->bytes_basic, r->route,
                            r->call_why ? "; calls left to basic: " : "",
                            r->call_why ? r->call_why : ""));
    }
    PetscCall(PetscFree(by_id));
  }
  for (HaloViewSFNode *p = view_sf_first; p; p = p->next) {
    mine[0]++;
    mine[1] += p->rec.setup;
    mine[2] += p->rec.ops_halo;
    mine[3] += p->rec.ops_basic;
    mine[4] += p->rec.bytes_halo;
    mine[5] += p->rec.bytes_basic;
    mine[6] += p->rec.solve_ops_halo;
    mine[7] += p->rec.solve_ops_basic;
    mine[8] += p->rec.solve_bytes_halo;
    mine[9] += p->rec.solve_bytes_basic;
  }
  mine[10] = lost != NULL;
  PetscCallMPI(MPI_Allreduce(mine + 2, all + 2, 9, MPIU_INT64, MPI_SUM, PETSC_COMM_WORLD));
  all[0] = mine[0], all[1] = mine[1];
  PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                        "halo_sf_view: %" PetscInt64_FMT " star forests made (%" PetscInt64_FMT
                        " set up) on rank 0; all ranks' operations through halo %" PetscInt64_FMT
                        ", left to basic %" PetscInt64_FMT "; bytes of leaves on other ranks "
                        "through halo %" PetscInt64_FMT ", left to basic %" PetscInt64_FMT
                        ": %.1f %% through halo\n",
                        all[0], all[1], all[2], all[3], all[4], all[5],
                        all[4] + all[5] ? 100.0 * (double)all[4] / (double)(all[4] + all[5]) : 0.0));
  if (all[10])
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "halo_sf_view: solve phase not measured: %s\n",
                          lost ? lost : "another rank lost track of it"));
  else if (all[8] + all[9])
    PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                          "halo_sf_view: solve phase (within KSPSolve, SNESSolve, TSStep, "
                          "TaoSolve): all ranks' operations through halo %" PetscInt64_FMT
                          ", left to basic %" PetscInt64_FMT "; bytes of leaves on other ranks "
                          "through halo %" PetscInt64_FMT ", left to basic %" PetscInt64_FMT
                          ": %.1f %% through halo\n",
                          all[6], all[7], all[8], all[9],
                          100.0 * (double)all[8] / (double)(all[8] + all[9])));
  else
    PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                          "halo_sf_view: solve phase (within KSPSolve, SNESSolve, TSStep, "
                          "TaoSolve): all ranks' operations through halo %" PetscInt64_FMT
                          ", left to basic %" PetscInt64_FMT "; no bytes between ranks\n",
                          all[6], all[7]));
  while (view_sf_first) {
    HaloViewSFNode *next = view_sf_first->next;
    PetscCall(PetscFree(view_sf_first));
    view_sf_first = next;
  }
  view_sf_last = NULL;
  PetscFunctionReturn(0);
}

PetscErrorCode HaloPetscViewFinalize(void) {
  int k = 0;
  PetscInt64 n_basic = 0;

  PetscFunctionBegin;
  for (HaloViewPlan *p = view_first; p; p = p->next) {
    const halo_stats *s = &p->stats;
    const int64_t msgs = p->messages, bytes = p->bytes, inter_msgs = p->inter_messages,
                  inter_bytes = p->inter_bytes;

    PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                          "halo_sf_view: %s plan %d: %s; %d ranks on %d nodes, %d phases, %" PRId64
                          " messages, %" PRId64 " bytes (inter-node %" PRId64 " messages, %" PRId64
                          " bytes), modeled %.3e s; through halo: %" PetscInt64_FMT
                          " forward, %" PetscInt64_FMT " reverse\n",
                          p->owner, k++, p->describe, s->ranks, s->nodes, s->n_phases, msgs, bytes,
                          inter_msgs, inter_bytes, p->modeled_seconds, p->n_forward, p->n_reverse));
  }
  PetscCall(HaloPetscViewSFs());
  for (int i = 0; i < HALO_VIEW_REASONS && view_basic[i].why; i++) n_basic += view_basic[i].n;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                        "halo_sf_view: %d plans; %" PetscInt64_FMT " star forests left to PETSc's basic%s",
                        k, n_basic, n_basic ? ":" : "\n"));
  for (int i = 0; i < HALO_VIEW_REASONS && view_basic[i].why; i++)
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, " %" PetscInt64_FMT " %s%s", view_basic[i].n,
                          view_basic[i].why,
                          i + 1 < HALO_VIEW_REASONS && view_basic[i + 1].why ? ";" : "\n"));
  while (view_first) {
    HaloViewPlan *next = view_first->next;
    PetscCall(PetscFree(view_first));
    view_first = next;
  }
  view_last = NULL;
  memset(view_basic, 0, sizeof view_basic);
  PetscFunctionReturn(0);
}
