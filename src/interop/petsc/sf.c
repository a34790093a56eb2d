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
 * halo could run, and only when, on every rank of its communicator (one
 * MPI_Allreduce), its graph is set (by VecScatterCreate or PetscSFSetGraph:
 * DMPlex's) and was not remapped by VecScatterRemap (which drops the leaves'
 * remote roots; one remapped after its plan was made, while a VecScatter,
 * drops the plan); its
 * leaves on their own rank are copies of the plan's and leaves that are not
 * one contiguous run go through a copy in leaf order (both host memory only:
 * a DMDA's global-to-local update). A call halo
 * runs: a unit of k values of one type (MPIU_SCALAR, a contiguous run of
 * them as a VecScatter of block size k sends, MPI_DOUBLE, MPI_FLOAT,
 * complex double, 32- and 64-bit integers: halo_unit), Bcast with
 * MPI_REPLACE or MPI_SUM, Reduce with MPI_SUM or MPI_REPLACE, both arrays in
 * host memory, or, where PETSc and halo have CUDA, both in CUDA memory
 * (leaves in one run there: the copy in leaf order is the host's; the
 * device plan's transport decides which units it runs). The plan's buffers hold the largest of a block of the scatter and
 * the unit of its first call (exec.unit_max_bytes); a larger unit later
 * goes to basic. Every condition of a call is one that all ranks share (PETSc's
 * collective semantics), so all ranks take the same route. A second
 * operation started while halo's is in flight goes to basic; a scatter
 * remapped after it was planned drops its plan.
 *
 * Memory. A star forest has a plan per memory it is called with, made at
 * its first call in that memory (a PETSc Vec has one type on every rank, so
 * every rank calls in the same memory). A device plan's exchanges are
 * ordered on PETSc's current CUDA stream: the plan is made on the stream of
 * its first call, and a call on another stream is tied to the plan's by
 * events, both ways.
 */
#include "petsc_impl.h"

#include <string.h>

#if HALO_PETSC_DEVICE
#include <petscdevice_cuda.h>
#endif

#include "sf_impl.h"

static const char halo_sf_key[] = "HaloSF_state";
static HaloSF *halo_sf_live;  /* every star forest's state, for -halo_sf_view */
static int halo_sf_made;      /* star forests made, for their ids */
static PetscErrorCode (*halo_sf_basic_create)(PetscSF) = NULL;
struct _PetscSFOps halo_sf_basic_ops; /* basic's operations, as its creator sets them */

static PetscErrorCode HaloSFFreePlan(HaloSF *st) {
  PetscFunctionBegin;
  for (int m = 0; m < 2; m++) {
    halo_plan_destroy(&st->plan[m]);
    st->modeled_seconds[m] = 0;
    st->reduce_bitwise[m] = PETSC_FALSE;
    st->n_bcast[m] = st->n_reduce[m] = 0;
  }
  PetscCall(PetscFree(st->scratch));
  PetscCall(PetscFree(st->lscratch));
  st->n_lscratch = 0;
  PetscCall(PetscFree3(st->vroot, st->vleaf, st->vresult));
  PetscCall(PetscFree2(st->vabsroot, st->vabsleaf));
  st->n_scratch = 0;
  st->flight = HALO_SF_IDLE;
#if HALO_PETSC_DEVICE
  if (st->d_scratch) PetscCallCUDA(cudaFree(st->d_scratch));
  st->d_scratch = NULL;
  st->n_d_scratch = 0;
  if (st->event) PetscCallCUDA(cudaEventDestroy(st->event));
  st->event = NULL;
  st->stream = NULL;
#endif
  PetscFunctionReturn(0);
}

static PetscErrorCode HaloSFStateDestroy(void *ctx) {
  HaloSF *st = (HaloSF *)ctx;

  PetscFunctionBegin;
  if (st->prev) st->prev->next = st->next;
  else if (halo_sf_live == st) halo_sf_live = st->next;
  if (st->next) st->next->prev = st->prev;
  PetscCall(HaloSFFreePlan(st));
  PetscCall(PetscFree(st));
  PetscFunctionReturn(0);
}
HALO_PETSC_CONTAINER_DESTROY(HaloSFStateDestroy)

static PetscErrorCode HaloSFGetState(PetscSF sf, HaloSF **st_p) {
  PetscContainer c = NULL;

  PetscFunctionBegin;
  *st_p = NULL;
  PetscCall(PetscObjectQuery((PetscObject)sf, halo_sf_key, (PetscObject *)&c));
  if (c) PetscCall(PetscContainerGetPointer(c, (void **)st_p));
  PetscFunctionReturn(0);
}

/* -halo_sf_view: an operation of count units of type unit per leaf, through halo or not:
 * the bytes of this rank's leaves on other ranks (the leaves' side of what moves), and
 * apart those moved while a solve ran. */
static PetscErrorCode HaloSFCount(PetscSF sf, HaloSF *st, MPI_Datatype unit, PetscBool halo,
                                  const char *why) {
  PetscMPIInt size = 0, rank;
  PetscBool in_solve;

  PetscFunctionBegin;
  if (!st || !halo_petsc_config.view) PetscFunctionReturn(0);
  if (st->acct_stale || st->acct.nleaves != sf->nleaves || st->acct.nroots != sf->nroots) {
    st->acct_stale = PETSC_FALSE; /* a new graph */
    PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)sf), &rank));
    st->acct.nroots = sf->nroots;
    st->acct.nleaves = sf->nleaves;
    st->acct.remote_leaves = 0;
    for (PetscInt i = 0; sf->remote && i < sf->nleaves; i++)
      st->acct.remote_leaves += sf->remote[i].rank != rank;
  }
  PetscCallMPI(MPI_Type_size(unit, &size));
  in_solve = HaloPetscPhaseInSolve();
  if (halo) {
    st->acct.ops_halo++;
    st->acct.bytes_halo += st->acct.remote_leaves * size;
    st->acct.solve_ops_halo += in_solve;
    st->acct.solve_bytes_halo += in_solve ? st->acct.remote_leaves * size : 0;
  } else {
    if (why && st->route != HALO_SF_BASIC) st->acct.call_why = why;
    st->acct.ops_basic++;
    st->acct.bytes_basic += st->acct.remote_leaves * size;
    st->acct.solve_ops_basic += in_solve;
    st->acct.solve_bytes_basic += in_solve ? st->acct.remote_leaves * size : 0;
  }
  PetscFunctionReturn(0);
}

/* -halo_sf_view: the star forest's own record, once (its destroy, or PetscFinalize). */
static PetscErrorCode HaloSFRecordSF(PetscSF sf, HaloSF *st) {
  PetscFunctionBegin;
  if (!halo_petsc_config.view || st->recorded) PetscFunctionReturn(0);
  st->recorded = PETSC_TRUE;
  st->acct.vscatter = (PetscBool)(sf->vscat.from_n >= 0 && sf->vscat.to_n >= 0);
  st->acct.setup = (PetscBool)(st->acct.setup || sf->setupcalled);
  st->acct.route = st->route == HALO_SF_HALO || (st->route != HALO_SF_BASIC && st->acct.ops_halo)
                       ? "halo"
                   : st->route == HALO_SF_BASIC ? st->why
                   : st->acct.ops_basic ? "no call halo runs"
                                        : "no operation";
  PetscCall(HaloPetscViewRecordSF(&st->acct));
  PetscFunctionReturn(0);
}

PetscErrorCode HaloPetscSFRecordLive(void) {
  PetscFunctionBegin;
  for (HaloSF *st = halo_sf_live; st; st = st->next) PetscCall(HaloSFRecordSF(st->sf, st));
  PetscFunctionReturn(0);
}

/* The summary -halo_sf_view prints, recorded before the plans go. */
static PetscErrorCode HaloSFRecord(PetscSF sf, HaloSF *st) {
  static const char *const owner[2] = {"PetscSF", "PetscSF, CUDA memory"};

  PetscFunctionBegin;
  if (!halo_petsc_config.view) PetscFunctionReturn(0);
  if (st->route == HALO_SF_HALO) {
    for (int m = 0; m < 2; m++)
      if (st->plan[m])
        PetscCall(HaloPetscViewRecordPlan(owner[m], st->plan[m], st->modeled_seconds[m],
                                          st->n_bcast[m], st->n_reduce[m]));
  } else if (st->route == HALO_SF_BASIC) {
    PetscCall(HaloPetscViewRecordBasic(st->why));
  } else if (sf->setupcalled) {
    PetscCall(HaloPetscViewRecordBasic("no call halo runs (unit, operation or memory)"));
  }
  PetscFunctionReturn(0);
}

/* This rank's reason to leave the star forest to basic, or NULL. */
static const char *HaloSFGraphWhyNot(PetscSF sf, PetscMPIInt rank) {
  /* VecScatterRemap drops the leaves' remote roots (the roots' indices changed under them) */
  if (sf->nroots < 0 || sf->nleaves < 0) return "no graph";
  if (sf->nleaves > 0 && !sf->remote) return "remapped by VecScatterRemap";
  return NULL;
}

/* Are this rank's leaves not one contiguous run (a leaf index map)? */
static PetscBool HaloSFLeafMap(PetscSF sf) {
  for (PetscInt i = 0; sf->mine && i < sf->nleaves; i++)
    if (sf->mine[i] != sf->mine[0] + i) return PETSC_TRUE;
  return PETSC_FALSE;
}

/* Does halo take this star forest? Decided once, on every rank together. */
static PetscErrorCode HaloSFDecide(PetscSF sf, HaloSF *st) {
  MPI_Comm comm = PetscObjectComm((PetscObject)sf);
  PetscMPIInt rank, mine[3], all[3];
  const char *why;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  why = HaloSFGraphWhyNot(sf, rank);
  mine[0] = why != NULL;
  mine[1] = 0; /* leaves on their own rank: the plan's copies (host memory only) */
  for (PetscInt i = 0; !why && i < sf->nleaves; i++) mine[1] |= sf->remote[i].rank == rank;
  st->leafmap = why ? PETSC_FALSE : HaloSFLeafMap(sf);
  mine[2] = st->leafmap;
  PetscCallMPI(MPI_Allreduce(mine, all, 3, MPI_INT, MPI_MAX, comm));
  st->own_leaves = (PetscBool)all[1];
  st->leafmap_any = (PetscBool)all[2];
  if (all[0]) {
    st->route = HALO_SF_BASIC;
    st->why = why ? why : "another rank's graph";
    PetscFunctionReturn(0);
  }
  st->leafstart = sf->mine && sf->nleaves > 0 ? sf->mine[0] : 0;
  st->vscatter = (PetscBool)(sf->vscat.from_n >= 0 && sf->vscat.to_n >= 0);
  st->route = HALO_SF_HALO;
  PetscFunctionReturn(0);
}

/* The plan of memory mem (collective): roots are the owned entries, leaves
 * the ghosts. -halo_sf_transport names a transport of one memory; the
 * other memory's plans take host, or staged (the road through host memory).
 * A device plan is ordered on PETSc's current CUDA stream. */
static PetscErrorCode HaloSFMakePlan(PetscSF sf, HaloSF *st, HaloSFMem mem, size_t unit_bytes) {
  MPI_Comm comm = PetscObjectComm((PetscObject)sf);
  halo_plan_options o = halo_petsc_config.opts;
  char settings[HALO_SETTINGS_MAX + 64];
  size_t most = (size_t)(sf->vscat.bs > 0 ? sf->vscat.bs : 1) * sizeof(PetscScalar);
  const PetscBool named = o.transport != HALO_TRANSPORT_AUTO;
  halo_transport_info info; /* a transport of host memory (host, rma, neighbor): the registry's */
  const PetscBool host_transport =
      named && halo_transport_get_info(o.transport, &info) == HALO_SUCCESS && info.host_memory;
  int *owner_ranks = NULL;
  int64_t *owner_indices = NULL;
  halo_status hs;

  PetscFunctionBegin;
  if (mem == HALO_SF_HOST) {
    o.memory = HALO_MEMORY_HOST;
    if (named && !host_transport) o.transport = HALO_TRANSPORT_HOST;
  } else {
#if HALO_PETSC_DEVICE
    o.memory = HALO_MEMORY_DEVICE;
    if (named && host_transport) o.transport = HALO_TRANSPORT_STAGED;
    PetscCall(PetscGetCurrentCUDAStream(&st->stream));
    o.stream = (void *)st->stream;
#else
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_PLIB, "halo: a device plan without device support");
#endif
  }
  /* the buffers hold a block of the scatter and this call's unit (the same on every rank); a
   * star forest of a graph (DMPlex's) also moves pairs of PetscInt (MPIU_2INT) */
  if (unit_bytes > most) most = unit_bytes;
  if (!st->vscatter && most < 2 * sizeof(PetscInt)) most = 2 * sizeof(PetscInt);
  if (most > 8) {
    PetscCall(PetscSNPrintf(settings, sizeof settings, "%s%sexec.unit_max_bytes=%zu",
                            o.settings ? o.settings : "", o.settings ? "," : "", most));
    o.settings = settings;
  }
  PetscCall(PetscMalloc2(sf->nleaves, &owner_ranks, sf->nleaves, &owner_indices));
  for (PetscInt i = 0; i < sf->nleaves; i++) {
    owner_ranks[i] = (int)sf->remote[i].rank;
    owner_indices[i] = (int64_t)sf->remote[i].index;
  }
  hs = halo_plan_create_from_pairs(comm, sf->nroots, sf->nleaves, owner_ranks, owner_indices, &o,
                                   &st->plan[mem]);
  PetscCall(PetscFree2(owner_ranks, owner_indices));
  PetscCheck(hs == HALO_SUCCESS, PETSC_COMM_SELF, PETSC_ERR_LIB, "halo: %s", halo_last_error());
  PetscCall(HaloPetscViewModel(comm, st->plan[mem], &st->modeled_seconds[mem]));
  if (halo_petsc_config.verify) PetscCall(HaloSFReduceBitwise(sf, st, mem));
  PetscFunctionReturn(0);
}

/* May halo take this call, and in which memory? Every condition is the
 * same on every rank. */
/* The call's unit and operation as halo's (reverse: a Reduce); PETSC_FALSE
 * where halo has none. *plain: one real double with the direction's own
 * operation (the road device plans and -halo_sf_verify take). */
static PetscBool HaloSFCallOf(MPI_Datatype unit, MPI_Op op, int reverse, halo_unit *u,
                              halo_op *hop, PetscBool *plain) {
  if (!HaloSFUnitOf(unit, u)) return PETSC_FALSE;
  if (op == MPI_REPLACE) *hop = HALO_OP_INSERT;
  else if ((op == MPI_SUM || op == MPIU_SUM) && u->type != HALO_TYPE_BYTE) *hop = HALO_OP_ADD;
  else return PETSC_FALSE;
  *plain = (PetscBool)(u->type == HALO_TYPE_DOUBLE && u->k == 1 &&
                       *hop == (reverse ? HALO_OP_ADD : HALO_OP_INSERT));
  return PETSC_TRUE;
}

static PetscErrorCode HaloSFTakes(PetscSF sf, HaloSF *st, MPI_Datatype unit, MPI_Op op,
                                  int reverse, PetscMemType a, PetscMemType b, PetscBool *takes_p,
                                  HaloSFMem *mem_p, halo_unit *u, halo_op *hop, PetscBool *plain,
                                  const char **why) {
  HaloSFMem mem;

  PetscFunctionBegin;
  *takes_p = PETSC_FALSE;
  *why = "a second operation while one is in flight";
  if (!st || st->flight != HALO_SF_IDLE) PetscFunctionReturn(0);
  *why = "a unit halo has not (it runs k values of one scalar or integer type)";
  if (!HaloSFUnitOf(unit, u)) PetscFunctionReturn(0);
  *why = "an operation halo has not (it runs MPI_REPLACE and MPI_SUM)";
  if (!HaloSFCallOf(unit, op, reverse, u, hop, plain)) PetscFunctionReturn(0);
  *why = "memory (host and device arrays together; in device memory, leaves not one run)";
  if (a == PETSC_MEMTYPE_HOST && b == PETSC_MEMTYPE_HOST) mem = HALO_SF_HOST;
#if HALO_PETSC_DEVICE
  else if (a == PETSC_MEMTYPE_CUDA && b == PETSC_MEMTYPE_CUDA) mem = HALO_SF_DEVICE;
#endif
  else PetscFunctionReturn(0);
  if (st->route == HALO_SF_HALO && st->vscatter && sf->vscat.from_n < 0) { /* VecScatterRemap since the plan (on every rank) */
    PetscCall(HaloSFRecord(sf, st));
    PetscCall(HaloSFFreePlan(st));
    st->route = HALO_SF_BASIC;
    st->why = "remapped after it was planned";
  }
  if (st->route == HALO_SF_UNDECIDED) PetscCall(HaloSFDecide(sf, st));
  if (st->route != HALO_SF_HALO) PetscFunctionReturn(0);
  /* leaf maps: host memory only (the wrapper's copy in leaf order has no kernel) */
  if (mem == HALO_SF_DEVICE && st->leafmap_any) PetscFunctionReturn(0);
  *why = "a unit the plan's transport or buffers do not take";
  if (!st->plan[mem]) PetscCall(HaloSFMakePlan(sf, st, mem, halo_unit_size(*u)));
  /* the plan's transport and buffers decide (the same on every rank) */
  if (!*plain && halo_plan_unit_check(st->plan[mem], *u, *hop, reverse) != HALO_SUCCESS)
    PetscFunctionReturn(0);
  *takes_p = PETSC_TRUE;
  *why = NULL;
  *mem_p = mem;
  PetscFunctionReturn(0);
}

/* Device memory: the device plan's exchange is ordered after the work on
 * PETSc's current stream, and that stream's later work after the exchange;
 * where the two streams differ, an event ties them, both ways. */
static PetscErrorCode HaloSFStreamEnter(HaloSF *st, HaloSFMem mem) {
  PetscFunctionBegin;
#if HALO_PETSC_DEVICE
  if (mem == HALO_SF_DEVICE) {
    PetscCall(PetscGetCurrentCUDAStream(&st->fl_stream));
    if (st->fl_stream != st->stream) {
      if (!st->event) PetscCallCUDA(cudaEventCreateWithFlags(&st->event, cudaEventDisableTiming));
      PetscCallCUDA(cudaEventRecord(st->event, st->fl_stream));
      PetscCallCUDA(cudaStreamWaitEvent(st->stream, st->event, 0));
    }
  }
#endif
  PetscFunctionReturn(0);
}

static PetscErrorCode HaloSFStreamLeave(HaloSF *st, HaloSFMem mem) {
  PetscFunctionBegin;
#if HALO_PETSC_DEVICE
  if (mem == HALO_SF_DEVICE && st->fl_stream != st->stream) {
    PetscCallCUDA(cudaEventRecord(st->event, st->stream));
    PetscCallCUDA(cudaStreamWaitEvent(st->fl_stream, st->event, 0));
  }
#endif
  PetscFunctionReturn(0);
}

/* The input, copied when it overlaps the output (x scattered into itself):
 * halo reads its input until the end of the exchange. In device memory the
 * copy is in stream order, before the exchange. */
static PetscErrorCode HaloSFStableInput(HaloSF *st, HaloSFMem mem, const void *in_v,
                                        PetscInt n_in, const void *out_v, PetscInt n_out,
                                        size_t esz, const void **use_p) {
  const char *in = (const char *)in_v, *out = (const char *)out_v;
  const size_t bytes = (size_t)n_in * esz;

  PetscFunctionBegin;
  *use_p = in;
  if (n_in == 0 || n_out == 0 || in + bytes <= out || out + (size_t)n_out * esz <= in)
    PetscFunctionReturn(0);
#if HALO_PETSC_DEVICE
  if (mem == HALO_SF_DEVICE) {
    if (st->n_d_scratch < bytes) {
      if (st->d_scratch) PetscCallCUDA(cudaFree(st->d_scratch));
      st->d_scratch = NULL;
      st->n_d_scratch = 0;
      PetscCallCUDA(cudaMalloc(&st->d_scratch, bytes));
      st->n_d_scratch = bytes;
    }
    PetscCallCUDA(cudaMemcpyAsync(st->d_scratch, in, bytes, cudaMemcpyDeviceToDevice, st->stream));
    *use_p = st->d_scratch;
    PetscFunctionReturn(0);
  }
#endif
  if (st->n_scratch < bytes) {
    PetscCall(PetscFree(st->scratch));
    PetscCall(PetscMalloc(bytes, &st->scratch));
    st->n_scratch = bytes;
  }
  PetscCall(PetscMemcpy(st->scratch, in, bytes));
  *use_p = st->scratch;
  PetscFunctionReturn(0);
}

static PetscErrorCode HaloSFBcastBegin(PetscSF sf, MPI_Datatype unit, PetscMemType rootmtype,
                                       const void *rootdata, PetscMemType leafmtype, void *leafdata,
                                       MPI_Op op) {
  HaloSF *st;
  PetscBool takes = PETSC_FALSE, plain = PETSC_FALSE;
  HaloSFMem mem = HALO_SF_HOST;
  halo_unit u;
  halo_op hop;
  const char *why = NULL;

  PetscFunctionBegin;
  PetscCall(HaloSFGetState(sf, &st));
  PetscCall(HaloSFTakes(sf, st, unit, op, 0, rootmtype, leafmtype, &takes, &mem, &u, &hop, &plain,
                        &why));
  PetscCall(HaloSFCount(sf, st, unit, takes, why));
  if (!takes) {
    PetscCall(halo_sf_basic_ops.BcastBegin(sf, unit, rootmtype, rootdata, leafmtype, leafdata, op));
    PetscFunctionReturn(0);
  }
  {
    const size_t esz = halo_unit_size(u);
    const void *src;
    char *ghost = (char *)leafdata + (size_t)st->leafstart * esz;

    if (st->leafmap) { /* host memory */
      PetscCall(HaloSFLeafGather(sf, st, leafdata, esz));
      ghost = (char *)st->lscratch;
    }
    if (st->leafmap_any) plain = PETSC_FALSE; /* no -halo_sf_verify, on any rank */
    PetscCall(HaloSFStreamEnter(st, mem));
    if (plain) PetscCall(HaloSFVerifyKeep(sf, st, mem, (const PetscScalar *)rootdata, (PetscScalar *)leafdata));
    PetscCall(HaloSFStableInput(st, mem, rootdata, sf->nroots, ghost, sf->nleaves, esz, &src));
    if (plain) HaloPetscCall(halo_exchange_begin(st->plan[mem], (const double *)src, (double *)ghost));
    else HaloPetscCall(halo_exchange_begin_unit(st->plan[mem], u, hop, src, ghost));
    st->fl_esz = esz;
  }
  st->fl_op = op;
  st->fl_unit = (PetscBool)!plain;
  st->flight = HALO_SF_BCAST;
  st->fl_mem = mem;
  st->fl_src = rootdata;
  st->fl_dst = leafdata;
  st->n_bcast[mem]++;
  PetscFunctionReturn(0);
}

static PetscErrorCode HaloSFBcastEnd(PetscSF sf, MPI_Datatype unit, const void *rootdata,
                                     void *leafdata, MPI_Op op) {
  HaloSF *st;

  PetscFunctionBegin;
  PetscCall(HaloSFGetState(sf, &st));
  if (st && st->flight == HALO_SF_BCAST && st->fl_src == rootdata && st->fl_dst == leafdata &&
      op == st->fl_op) {
    st->flight = HALO_SF_IDLE;
    HaloPetscCall(halo_exchange_end(st->plan[st->fl_mem]));
    PetscCall(HaloSFStreamLeave(st, st->fl_mem));
    if (st->leafmap) PetscCall(HaloSFLeafScatter(sf, st, leafdata, st->fl_esz));
    if (!st->fl_unit) PetscCall(HaloSFVerifyCheck(sf, st, st->fl_mem, PETSC_TRUE, (const PetscScalar *)leafdata));
    PetscFunctionReturn(0);
  }
  PetscCall(halo_sf_basic_ops.BcastEnd(sf, unit, rootdata, leafdata, op));
  PetscFunctionReturn(0);
}

static PetscErrorCode HaloSFReduceBegin(PetscSF sf, MPI_Datatype unit, PetscMemType leafmtype,
                                        const void *leafdata, PetscMemType rootmtype,
                                        void *rootdata, MPI_Op op) {
  HaloSF *st;
  PetscBool takes = PETSC_FALSE, plain = PETSC_FALSE;
  HaloSFMem mem = HALO_SF_HOST;
  halo_unit u;
  halo_op hop;
  const char *why = NULL;

  PetscFunctionBegin;
  PetscCall(HaloSFGetState(sf, &st));
  PetscCall(HaloSFTakes(sf, st, unit, op, 1, leafmtype, rootmtype, &takes, &mem, &u, &hop, &plain,
                        &why));
  PetscCall(HaloSFCount(sf, st, unit, takes, why));
  if (!takes) {
    PetscCall(halo_sf_basic_ops.ReduceBegin(sf, unit, leafmtype, leafdata, rootmtype, rootdata, op));
    PetscFunctionReturn(0);
  }
  {
    const size_t esz = halo_unit_size(u);
    const char *ghost = (const char *)leafdata + (size_t)st->leafstart * esz;
    const void *src;

    if (st->leafmap) { /* host memory */
      PetscCall(HaloSFLeafGather(sf, st, leafdata, esz));
      ghost = (const char *)st->lscratch;
    }
    if (st->leafmap_any) plain = PETSC_FALSE; /* no -halo_sf_verify, on any rank */
    PetscCall(HaloSFStreamEnter(st, mem));
    if (plain) PetscCall(HaloSFVerifyKeep(sf, st, mem, (PetscScalar *)rootdata, (const PetscScalar *)leafdata));
    PetscCall(HaloSFStableInput(st, mem, ghost, sf->nleaves, rootdata, sf->nroots, esz, &src));
    if (plain) HaloPetscCall(halo_exchange_reverse_begin(st->plan[mem], (const double *)src, (double *)rootdata));
    else HaloPetscCall(halo_exchange_reverse_begin_unit(st->plan[mem], u, hop, src, rootdata));
  }
  st->fl_op = op;
  st->fl_unit = (PetscBool)!plain;
  st->flight = HALO_SF_REDUCE;
  st->fl_mem = mem;
  st->fl_src = leafdata;
  st->fl_dst = rootdata;
  st->n_reduce[mem]++;
  PetscFunctionReturn(0);
}

static PetscErrorCode HaloSFReduceEnd(PetscSF sf, MPI_Datatype unit, const void *leafdata,
                                      void *rootdata, MPI_Op op) {
  HaloSF *st;

  PetscFunctionBegin;
  PetscCall(HaloSFGetState(sf, &st));
  if (st && st->flight == HALO_SF_REDUCE && st->fl_src == leafdata && st->fl_dst == rootdata &&
      op == st->fl_op) {
    st->flight = HALO_SF_IDLE;
    HaloPetscCall(halo_exchange_reverse_end(st->plan[st->fl_mem]));
    PetscCall(HaloSFStreamLeave(st, st->fl_mem));
    if (!st->fl_unit) PetscCall(HaloSFVerifyCheck(sf, st, st->fl_mem, PETSC_FALSE, (const PetscScalar *)rootdata));
    PetscFunctionReturn(0);
  }
  PetscCall(halo_sf_basic_ops.ReduceEnd(sf, unit, leafdata, rootdata, op));
  PetscFunctionReturn(0);
}

/* Fetch-and-op: PETSc's own, counted for -halo_sf_view. */
static PetscErrorCode HaloSFFetchAndOpBegin(PetscSF sf, MPI_Datatype unit, PetscMemType rootmtype,
                                            void *rootdata, PetscMemType leafmtype,
                                            const void *leafdata, void *leafupdate, MPI_Op op) {
  HaloSF *st;

  PetscFunctionBegin;
  PetscCall(HaloSFGetState(sf, &st));
  PetscCall(HaloSFCount(sf, st, unit, PETSC_FALSE, "fetch-and-op"));
  PetscCall(halo_sf_basic_ops.FetchAndOpBegin(sf, unit, rootmtype, rootdata, leafmtype, leafdata,
                                              leafupdate, op));
  PetscFunctionReturn(0);
}

static PetscErrorCode HaloSFSetUp(PetscSF sf) {
  HaloSF *st;

  PetscFunctionBegin;
  PetscCall(halo_sf_basic_ops.SetUp(sf));
  PetscCall(HaloSFGetState(sf, &st));
  if (st) st->route = HALO_SF_UNDECIDED; /* decided at the first call halo could take */
  if (st) st->acct.setup = PETSC_TRUE;
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
    st->acct_stale = PETSC_TRUE; /* a new graph: its remote leaves counted anew */
  }
  if (halo_sf_basic_ops.Reset) PetscCall(halo_sf_basic_ops.Reset(sf));
  PetscFunctionReturn(0);
}

static PetscErrorCode HaloSFDestroy(PetscSF sf) {
  HaloSF *st;

  PetscFunctionBegin;
  PetscCall(HaloSFGetState(sf, &st));
  if (st) PetscCall(HaloSFRecord(sf, st));
  if (st) PetscCall(HaloSFRecordSF(sf, st));
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
  if (st->route != HALO_SF_HALO || (!st->plan[0] && !st->plan[1])) {
    PetscCall(PetscViewerASCIIPrintf(viewer, "  halo: %s\n",
                                     st->route == HALO_SF_BASIC ? st->why : "not planned yet"));
    PetscFunctionReturn(0);
  }
  for (int m = 0; m < 2; m++) {
    char line[512];

    if (!st->plan[m]) continue;
    HaloPetscCall(halo_plan_describe(st->plan[m], line, sizeof line));
    PetscCall(PetscViewerASCIIPrintf(viewer, "  halo (%s memory): %s; %" PetscInt64_FMT " Bcast, %" PetscInt64_FMT " Reduce through halo\n",
                                     m == HALO_SF_HOST ? "host" : "CUDA", line, st->n_bcast[m], st->n_reduce[m]));
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
  st->sf = sf;
  st->acct.id = halo_sf_made++;
  st->acct.nroots = st->acct.nleaves = -1; /* no graph seen yet */
  st->next = halo_sf_live;
  if (halo_sf_live) halo_sf_live->prev = st;
  halo_sf_live = st;
  PetscCall(PetscContainerCreate(PETSC_COMM_SELF, &c));
  PetscCall(PetscContainerSetPointer(c, st));
  PetscCall(HaloPetscContainerSetDestroy(c, HaloSFStateDestroy));
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
  if (halo_sf_basic_ops.FetchAndOpBegin) sf->ops->FetchAndOpBegin = HaloSFFetchAndOpBegin;
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
