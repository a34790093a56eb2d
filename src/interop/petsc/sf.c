/* The PetscSF wrapper: PETSc's basic star forest with halo's exchange for
 * the star forests halo can plan.
 *
 * The creator runs PETSc's own creator of "basic" (taken from PetscSFList
 * before it is replaced), so the star forest is a complete basic one: its
 * data, set-up and every operation are basic's. The wrapper then replaces
 * the operations it may answer (Bcast, Reduce) and those that must follow
 * the plan's life (SetUp, Reset, Destroy, View); each hands on to basic's
 * whenever halo does not take the call.
 *
 * Which calls halo takes. A star forest is planned at its first call that
 * halo could run (unit MPIU_SCALAR, host memory, Bcast with MPI_REPLACE or
 * Reduce with MPI_SUM), and only when, on every rank of its communicator
 * (one MPI_Allreduce), it was made by VecScatterCreate with block size 1 and
 * not remapped, its leaves are contiguous and none of them is on its own
 * rank. Every condition of a call is one that all ranks share (PETSc's
 * collective semantics), so all ranks take the same route. A second
 * operation started while halo's is in flight goes to basic; a scatter
 * remapped after it was planned drops its plan.
 */
#include "petsc_impl.h"

#include <string.h>

typedef enum { HALO_SF_UNDECIDED = 0, HALO_SF_HALO, HALO_SF_BASIC } HaloSFRoute;
typedef enum { HALO_SF_IDLE = 0, HALO_SF_BCAST, HALO_SF_REDUCE } HaloSFFlight;

typedef struct {
  HaloSFRoute route;
  const char *why; /* why it went to basic */
  halo_plan plan;
  double modeled_seconds;
  PetscInt leafstart; /* leaves are [leafstart, leafstart + nleaves) */
  HaloSFFlight flight;
  const void *fl_src; /* the caller's pointers of the operation in flight */
  void *fl_dst;
  PetscScalar *scratch; /* a copy of the input when the caller aliases it */
  PetscInt n_scratch;
  PetscScalar *vroot, *vleaf; /* -halo_sf_verify: the inputs as they were */
  PetscBool reduce_bitwise;   /* -halo_sf_verify: a Reduce must be basic's bit for bit */
  PetscInt64 n_bcast, n_reduce;
} HaloSF;

static const char halo_sf_key[] = "HaloSF_state";
static PetscErrorCode (*halo_sf_basic_create)(PetscSF) = NULL;
static struct _PetscSFOps halo_sf_basic_ops; /* basic's operations, as its creator sets them */

static PetscErrorCode HaloSFFreePlan(HaloSF *st) {
  PetscFunctionBegin;
  halo_plan_destroy(&st->plan);
  PetscCall(PetscFree(st->scratch));
  PetscCall(PetscFree2(st->vroot, st->vleaf));
  st->n_scratch = 0;
  st->flight = HALO_SF_IDLE;
  PetscFunctionReturn(0);
}

static PetscErrorCode HaloSFStateDestroy(void *ctx) {
  HaloSF *st = (HaloSF *)ctx;

  PetscFunctionBegin;
  PetscCall(HaloSFFreePlan(st));
  PetscCall(PetscFree(st));
  PetscFunctionReturn(0);
}

static PetscErrorCode HaloSFGetState(PetscSF sf, HaloSF **st_p) {
  PetscContainer c = NULL;

  PetscFunctionBegin;
  *st_p = NULL;
  PetscCall(PetscObjectQuery((PetscObject)sf, halo_sf_key, (PetscObject *)&c));
  if (c) PetscCall(PetscContainerGetPointer(c, (void **)st_p));
  PetscFunctionReturn(0);
}

/* The summary -halo_sf_view prints, recorded before the plan goes. */
static PetscErrorCode HaloSFRecord(PetscSF sf, HaloSF *st) {
  PetscFunctionBegin;
  if (!halo_petsc_config.view) PetscFunctionReturn(0);
  if (st->route == HALO_SF_HALO && st->plan) {
    PetscCall(HaloPetscViewRecordPlan("PetscSF", st->plan, st->modeled_seconds, st->n_bcast,
                                      st->n_reduce));
  } else if (st->route == HALO_SF_BASIC) {
    PetscCall(HaloPetscViewRecordBasic(st->why));
  } else if (sf->setupcalled) {
    PetscCall(HaloPetscViewRecordBasic("no call halo runs (unit, operation or memory)"));
  }
  PetscFunctionReturn(0);
}

/* This rank's reason to leave the star forest to basic, or NULL. */
static const char *HaloSFGraphWhyNot(PetscSF sf, PetscMPIInt rank) {
  if (!HALO_PETSC_SCALAR_OK) return "PetscScalar is not a real double";
  if (sf->vscat.from_n < 0 || sf->vscat.to_n < 0) return "not a VecScatter, or remapped";
  if (sf->vscat.bs != 1) return "block size above 1";
  if (sf->nroots < 0 || sf->nleaves < 0) return "no graph";
  if (sf->nleaves > 0 && !sf->remote) return "remapped";
  if (sf->mine) {
    for (PetscInt i = 0; i < sf->nleaves; i++)
      if (sf->mine[i] != sf->mine[0] + i) return "leaves not contiguous";
  }
  for (PetscInt i = 0; i < sf->nleaves; i++)
    if (sf->remote[i].rank == rank) return "leaves on their own rank";
  return NULL;
}

/* Does a Reduce through halo add in basic's order? Under the standard
 * strategy each owner adds the messages in increasing rank order, as basic
 * does; it agrees bit for bit unless two leaves of one rank name one root
 * (halo sums those first, basic adds them one by one). */
static PetscErrorCode HaloSFReduceBitwise(PetscSF sf, HaloSF *st) {
  halo_stats stats;
  PetscInt64 *keys;
  PetscBool dup = PETSC_FALSE;
  PetscMPIInt local, all;

  PetscFunctionBegin;
  HaloPetscCall(halo_plan_stats(st->plan, &stats));
  PetscCall(PetscMalloc1(sf->nleaves + 1, &keys));
  for (PetscInt i = 0; i < sf->nleaves; i++)
    keys[i] = ((PetscInt64)sf->remote[i].rank << 32) + (PetscInt64)sf->remote[i].index;
  PetscCall(PetscSortInt64(sf->nleaves, keys));
  for (PetscInt i = 1; i < sf->nleaves; i++) dup = dup || keys[i] == keys[i - 1];
  PetscCall(PetscFree(keys));
  local = !dup;
  PetscCallMPI(MPI_Allreduce(&local, &all, 1, MPI_INT, MPI_MIN, PetscObjectComm((PetscObject)sf)));
  st->reduce_bitwise = stats.strategy == HALO_STRATEGY_STANDARD && all;
  PetscFunctionReturn(0);
}

static PetscErrorCode HaloSFDecide(PetscSF sf, HaloSF *st) {
  MPI_Comm comm = PetscObjectComm((PetscObject)sf);
  PetscMPIInt rank, ok, all_ok;
  const char *why;
  int *owner_ranks = NULL;
  int64_t *owner_indices = NULL;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  why = HaloSFGraphWhyNot(sf, rank);
  ok = why == NULL;
  PetscCallMPI(MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm));
  if (!all_ok) {
    st->route = HALO_SF_BASIC;
    st->why = why ? why : "another rank's graph";
    PetscFunctionReturn(0);
  }
  st->leafstart = sf->mine && sf->nleaves > 0 ? sf->mine[0] : 0;
  PetscCall(PetscMalloc2(sf->nleaves, &owner_ranks, sf->nleaves, &owner_indices));
  for (PetscInt i = 0; i < sf->nleaves; i++) {
    owner_ranks[i] = (int)sf->remote[i].rank;
    owner_indices[i] = (int64_t)sf->remote[i].index;
  }
  {
    halo_status hs = halo_plan_create_from_pairs(comm, sf->nroots, sf->nleaves, owner_ranks,
                                                 owner_indices, &halo_petsc_config.opts, &st->plan);
    PetscCall(PetscFree2(owner_ranks, owner_indices));
    PetscCheck(hs == HALO_SUCCESS, PETSC_COMM_SELF, PETSC_ERR_LIB, "halo: %s", halo_last_error());
  }
  st->route = HALO_SF_HALO;
  PetscCall(HaloPetscViewModel(comm, st->plan, &st->modeled_seconds));
  if (halo_petsc_config.verify) PetscCall(HaloSFReduceBitwise(sf, st));
  PetscFunctionReturn(0);
}

/* May halo take this call? Every condition is the same on every rank. */
static PetscErrorCode HaloSFTakes(PetscSF sf, HaloSF *st, MPI_Datatype unit, PetscMemType a,
                                  PetscMemType b, PetscBool *takes_p) {
  PetscFunctionBegin;
  *takes_p = PETSC_FALSE;
  if (!st || st->flight != HALO_SF_IDLE || unit != MPIU_SCALAR || a != PETSC_MEMTYPE_HOST ||
      b != PETSC_MEMTYPE_HOST)
    PetscFunctionReturn(0);
  if (st->route == HALO_SF_HALO && sf->vscat.from_n < 0) { /* VecScatterRemap since the plan */
    PetscCall(HaloSFRecord(sf, st));
    PetscCall(HaloSFFreePlan(st));
    st->route = HALO_SF_BASIC;
    st->why = "remapped after it was planned";
  }
  if (st->route == HALO_SF_UNDECIDED) PetscCall(HaloSFDecide(sf, st));
  *takes_p = st->route == HALO_SF_HALO;
  PetscFunctionReturn(0);
}

/* The input, copied when it overlaps the output (x scattered into itself):
 * halo reads its input until the end of the exchange. */
static PetscErrorCode HaloSFStableInput(HaloSF *st, const PetscScalar *in, PetscInt n_in,
                                        const PetscScalar *out, PetscInt n_out,
                                        const PetscScalar **use_p) {
  PetscFunctionBegin;
  *use_p = in;
  if (n_in == 0 || n_out == 0 || in + n_in <= out || out + n_out <= in) PetscFunctionReturn(0);
  if (st->n_scratch < n_in) {
    PetscCall(PetscFree(st->scratch));
    PetscCall(PetscMalloc1(n_in, &st->scratch));
    st->n_scratch = n_in;
  }
  PetscCall(PetscArraycpy(st->scratch, in, n_in));
  *use_p = st->scratch;
  PetscFunctionReturn(0);
}

/* -halo_sf_verify: keep the inputs of the operation halo runs. */
static PetscErrorCode HaloSFVerifyKeep(PetscSF sf, HaloSF *st, const PetscScalar *root,
                                       const PetscScalar *leaf) {
  PetscFunctionBegin;
  if (!halo_petsc_config.verify) PetscFunctionReturn(0);
  if (!st->vroot) PetscCall(PetscMalloc2(sf->nroots + 1, &st->vroot, st->leafstart + sf->nleaves + 1, &st->vleaf));
  PetscCall(PetscArraycpy(st->vroot, root, sf->nroots));
  PetscCall(PetscArraycpy(st->vleaf + st->leafstart, leaf + st->leafstart, sf->nleaves));
  PetscFunctionReturn(0);
}

/* -halo_sf_verify: run basic on the kept inputs and compare with halo's
 * result; a Bcast must agree bit for bit, a Reduce too where it adds in
 * basic's order (HaloSFReduceBitwise), else to 1e-13 relative (its sums may
 * associate differently: see halo_exchange_reverse_begin). */
static PetscErrorCode HaloSFVerifyCheck(PetscSF sf, HaloSF *st, PetscBool bcast,
                                        const PetscScalar *result) {
  MPI_Comm comm = PetscObjectComm((PetscObject)sf);
  PetscInt n = bcast ? sf->nleaves : sf->nroots, off = bcast ? st->leafstart : 0;
  PetscScalar *expect = bcast ? st->vleaf : st->vroot;
  PetscInt64 bad = 0, all_bad;
  double worst = 0;

  PetscFunctionBegin;
  if (!halo_petsc_config.verify) PetscFunctionReturn(0);
  if (bcast) {
    PetscCall(halo_sf_basic_ops.BcastBegin(sf, MPIU_SCALAR, PETSC_MEMTYPE_HOST, st->vroot,
                                           PETSC_MEMTYPE_HOST, st->vleaf, MPI_REPLACE));
    PetscCall(halo_sf_basic_ops.BcastEnd(sf, MPIU_SCALAR, st->vroot, st->vleaf, MPI_REPLACE));
  } else {
    PetscCall(halo_sf_basic_ops.ReduceBegin(sf, MPIU_SCALAR, PETSC_MEMTYPE_HOST, st->vleaf,
                                            PETSC_MEMTYPE_HOST, st->vroot, MPI_SUM));
    PetscCall(halo_sf_basic_ops.ReduceEnd(sf, MPIU_SCALAR, st->vleaf, st->vroot, MPI_SUM));
  }
  for (PetscInt i = off; i < off + n; i++) {
    double a = PetscRealPart(expect[i]), b = PetscRealPart(result[i]);
    double d = PetscAbsReal(a - b), mag = PetscMax(PetscAbsReal(a), PetscAbsReal(b));
    if (bcast || st->reduce_bitwise ? memcmp(&a, &b, sizeof a) != 0 : d > 1e-13 * mag) bad++;
    if (d > 0 && mag > 0) worst = PetscMax(worst, d / mag);
  }
  PetscCallMPI(MPI_Allreduce(&bad, &all_bad, 1, MPIU_INT64, MPI_SUM, comm));
  PetscCheck(all_bad == 0, PETSC_COMM_SELF, PETSC_ERR_PLIB,
             "halo: -halo_sf_verify: %s through halo differs from PETSc's basic %s in %" PetscInt64_FMT
             " entries (this rank: %" PetscInt64_FMT ", worst relative difference %g)",
             bcast ? "Bcast" : "Reduce", bcast || st->reduce_bitwise ? "bit for bit" : "to 1e-13",
             all_bad, bad, worst);
  PetscFunctionReturn(0);
}

static PetscErrorCode HaloSFBcastBegin(PetscSF sf, MPI_Datatype unit, PetscMemType rootmtype,
                                       const void *rootdata, PetscMemType leafmtype, void *leafdata,
                                       MPI_Op op) {
  HaloSF *st;
  PetscBool takes = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(HaloSFGetState(sf, &st));
  if (op == MPI_REPLACE) PetscCall(HaloSFTakes(sf, st, unit, rootmtype, leafmtype, &takes));
  if (!takes) {
    PetscCall(halo_sf_basic_ops.BcastBegin(sf, unit, rootmtype, rootdata, leafmtype, leafdata, op));
    PetscFunctionReturn(0);
  }
  {
    const PetscScalar *root = (const PetscScalar *)rootdata, *src;
    PetscScalar *ghost = (PetscScalar *)leafdata + st->leafstart;

    PetscCall(HaloSFVerifyKeep(sf, st, root, (PetscScalar *)leafdata));
    PetscCall(HaloSFStableInput(st, root, sf->nroots, ghost, sf->nleaves, &src));
    HaloPetscCall(halo_exchange_begin(st->plan, src, ghost));
  }
  st->flight = HALO_SF_BCAST;
  st->fl_src = rootdata;
  st->fl_dst = leafdata;
  st->n_bcast++;
  PetscFunctionReturn(0);
}

static PetscErrorCode HaloSFBcastEnd(PetscSF sf, MPI_Datatype unit, const void *rootdata,
                                     void *leafdata, MPI_Op op) {
  HaloSF *st;

  PetscFunctionBegin;
  PetscCall(HaloSFGetState(sf, &st));
  if (st && st->flight == HALO_SF_BCAST && st->fl_src == rootdata && st->fl_dst == leafdata &&
      op == MPI_REPLACE) {
    st->flight = HALO_SF_IDLE;
    HaloPetscCall(halo_exchange_end(st->plan));
    PetscCall(HaloSFVerifyCheck(sf, st, PETSC_TRUE, (const PetscScalar *)leafdata));
    PetscFunctionReturn(0);
  }
  PetscCall(halo_sf_basic_ops.BcastEnd(sf, unit, rootdata, leafdata, op));
  PetscFunctionReturn(0);
}

static PetscErrorCode HaloSFReduceBegin(PetscSF sf, MPI_Datatype unit, PetscMemType leafmtype,
                                        const void *leafdata, PetscMemType rootmtype,
                                        void *rootdata, MPI_Op op) {
  HaloSF *st;
  PetscBool takes = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(HaloSFGetState(sf, &st));
  if (op == MPI_SUM || op == MPIU_SUM) PetscCall(HaloSFTakes(sf, st, unit, leafmtype, rootmtype, &takes));
  if (!takes) {
    PetscCall(halo_sf_basic_ops.ReduceBegin(sf, unit, leafmtype, leafdata, rootmtype, rootdata, op));
    PetscFunctionReturn(0);
  }
  {
    const PetscScalar *ghost = (const PetscScalar *)leafdata + st->leafstart, *src;

    PetscCall(HaloSFVerifyKeep(sf, st, (PetscScalar *)rootdata, (const PetscScalar *)leafdata));
    PetscCall(HaloSFStableInput(st, ghost, sf->nleaves, (PetscScalar *)rootdata, sf->nroots, &src));
    HaloPetscCall(halo_exchange_reverse_begin(st->plan, src, (PetscScalar *)rootdata));
  }
  st->flight = HALO_SF_REDUCE;
  st->fl_src = leafdata;
  st->fl_dst = rootdata;
  st->n_reduce++;
  PetscFunctionReturn(0);
}

static PetscErrorCode HaloSFReduceEnd(PetscSF sf, MPI_Datatype unit, const void *leafdata,
                                      void *rootdata, MPI_Op op) {
  HaloSF *st;

  PetscFunctionBegin;
  PetscCall(HaloSFGetState(sf, &st));
  if (st && st->flight == HALO_SF_REDUCE && st->fl_src == leafdata && st->fl_dst == rootdata &&
      (op == MPI_SUM || op == MPIU_SUM)) {
    st->flight = HALO_SF_IDLE;
    HaloPetscCall(halo_exchange_reverse_end(st->plan));
    PetscCall(HaloSFVerifyCheck(sf, st, PETSC_FALSE, (const PetscScalar *)rootdata));
    PetscFunctionReturn(0);
  }
  PetscCall(halo_sf_basic_ops.ReduceEnd(sf, unit, leafdata, rootdata, op));
  PetscFunctionReturn(0);
}

static PetscErrorCode HaloSFSetUp(PetscSF sf) {
  HaloSF *st;

  PetscFunctionBegin;
  PetscCall(halo_sf_basic_ops.SetUp(sf));
  PetscCall(HaloSFGetState(sf, &st));
  if (st) st->route = HALO_SF_UNDECIDED; /* decided at the first call halo could take */
  PetscFunctionReturn(0);
}

static PetscErrorCode HaloSFReset(PetscSF sf) {
  HaloSF *st;

  PetscFunctionBegin;
  PetscCall(HaloSFGetState(sf, &st));
  if (st) {
    PetscCall(HaloSFRecord(sf, st));
    PetscCall(HaloSFFreePlan(st));
    st->route = HALO_SF_UNDECIDED;
    st->why = NULL;
    st->n_bcast = st->n_reduce = 0;
  }
  if (halo_sf_basic_ops.Reset) PetscCall(halo_sf_basic_ops.Reset(sf));
  PetscFunctionReturn(0);
}

static PetscErrorCode HaloSFDestroy(PetscSF sf) {
  HaloSF *st;

  PetscFunctionBegin;
  PetscCall(HaloSFGetState(sf, &st));
  if (st) PetscCall(HaloSFRecord(sf, st));
  PetscCall(PetscObjectCompose((PetscObject)sf, halo_sf_key, NULL)); /* frees the state */
  PetscCall(halo_sf_basic_ops.Destroy(sf));
  PetscFunctionReturn(0);
}

static PetscErrorCode HaloSFView(PetscSF sf, PetscViewer viewer) {
  HaloSF *st;
  PetscBool ascii;

  PetscFunctionBegin;
  if (halo_sf_basic_ops.View) PetscCall(halo_sf_basic_ops.View(sf, viewer));
  PetscCall(HaloSFGetState(sf, &st));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &ascii));
  if (!st || !ascii) PetscFunctionReturn(0);
  if (st->route == HALO_SF_HALO) {
    char line[512];

    HaloPetscCall(halo_plan_describe(st->plan, line, sizeof line));
    PetscCall(PetscViewerASCIIPrintf(viewer, "  halo: %s; %" PetscInt64_FMT " Bcast, %" PetscInt64_FMT " Reduce through halo\n",
                                     line, st->n_bcast, st->n_reduce));
  } else {
    PetscCall(PetscViewerASCIIPrintf(viewer, "  halo: %s\n",
                                     st->route == HALO_SF_BASIC ? st->why : "not planned yet"));
  }
  PetscFunctionReturn(0);
}

/* The creator of the wrapped type: basic's, then the wrapper's operations. */
static PetscErrorCode HaloSFCreate(PetscSF sf) {
  HaloSF *st;
  PetscContainer c;

  PetscFunctionBegin;
  PetscCall(halo_sf_basic_create(sf));
  if (!halo_sf_basic_ops.BcastBegin) halo_sf_basic_ops = *sf->ops;
  PetscCheck(sf->ops->BcastBegin == halo_sf_basic_ops.BcastBegin &&
                 sf->ops->ReduceEnd == halo_sf_basic_ops.ReduceEnd,
             PETSC_COMM_SELF, PETSC_ERR_PLIB, "halo: PETSc's basic star forest changed its operations");
  PetscCall(PetscNew(&st));
  PetscCall(PetscContainerCreate(PETSC_COMM_SELF, &c));
  PetscCall(PetscContainerSetPointer(c, st));
  PetscCall(PetscContainerSetUserDestroy(c, HaloSFStateDestroy));
  PetscCall(PetscObjectCompose((PetscObject)sf, halo_sf_key, (PetscObject)c));
  PetscCall(PetscContainerDestroy(&c));
  sf->ops->SetUp = HaloSFSetUp;
  sf->ops->Reset = HaloSFReset;
  sf->ops->Destroy = HaloSFDestroy;
  sf->ops->View = HaloSFView;
  sf->ops->BcastBegin = HaloSFBcastBegin;
  sf->ops->BcastEnd = HaloSFBcastEnd;
  sf->ops->ReduceBegin = HaloSFReduceBegin;
  sf->ops->ReduceEnd = HaloSFReduceEnd;
  PetscFunctionReturn(0);
}

PetscErrorCode HaloPetscSFRegister(void) {
  PetscErrorCode (*basic)(PetscSF) = NULL;

  PetscFunctionBegin;
  PetscCall(PetscSFInitializePackage()); /* PetscSFRegisterAll: basic is in the list */
  PetscCall(PetscFunctionListFind(PetscSFList, PETSCSFBASIC, &basic));
  PetscCheck(basic, PETSC_COMM_SELF, PETSC_ERR_PLIB, "halo: PETSc has no star forest type basic");
  if (basic != HaloSFCreate) halo_sf_basic_create = basic;
  PetscCall(PetscSFRegister("halo", HaloSFCreate));
  if (halo_petsc_config.sf) PetscCall(PetscSFRegister(PETSCSFBASIC, HaloSFCreate));
  PetscFunctionReturn(0);
}
