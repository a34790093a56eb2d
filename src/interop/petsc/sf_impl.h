/* The PetscSF wrapper's state of a star forest, shared by sf.c (the wrapper) and
 * sf_verify.c (-halo_sf_verify). */
#ifndef HALO_PETSC_SF_IMPL_H
#define HALO_PETSC_SF_IMPL_H

#include "petsc_impl.h"

#if HALO_PETSC_DEVICE
#include <petscdevice_cuda.h>
#endif

typedef enum { HALO_SF_UNDECIDED = 0, HALO_SF_HALO, HALO_SF_BASIC } HaloSFRoute;
typedef enum { HALO_SF_IDLE = 0, HALO_SF_BCAST, HALO_SF_REDUCE } HaloSFFlight;
typedef enum { HALO_SF_HOST = 0, HALO_SF_DEVICE = 1 } HaloSFMem;

typedef struct HaloSF {
  PetscSF sf;                 /* its star forest (the live list's records at PetscFinalize) */
  struct HaloSF *next, *prev; /* the live list */
  HaloViewSF acct;            /* -halo_sf_view: what it moved */
  PetscBool recorded;         /* acct handed to the view */
  PetscBool acct_stale;       /* reset since its remote leaves were counted */
  HaloSFRoute route;
  PetscBool vscatter;   /* made by VecScatterCreate (a later VecScatterRemap marks it) */
  PetscBool own_leaves; /* some rank's leaves are on their own rank (no device plan) */
  PetscBool leafmap;     /* this rank's leaves are not one contiguous run: lscratch in leaf order */
  PetscBool leafmap_any; /* ... on some rank (no device plan) */
  void *lscratch;
  size_t n_lscratch;
  size_t fl_esz; /* the entry size of the operation in flight */
  const char *why;   /* why it went to basic */
  halo_plan plan[2]; /* per memory, made at the first call in it */
  double modeled_seconds[2];
  PetscBool reduce_bitwise[2]; /* -halo_sf_verify: a Reduce must be basic's bit for bit */
  PetscInt64 n_bcast[2], n_reduce[2];
  PetscInt leafstart; /* leaves are [leafstart, leafstart + nleaves) */
  HaloSFFlight flight;
  HaloSFMem fl_mem;
  MPI_Op fl_op;       /* the operation in flight's */
  PetscBool fl_unit;  /* ... of another unit or operation than one double's own (no verify) */
  const void *fl_src; /* the caller's pointers of the operation in flight */
  void *fl_dst;
  void *scratch; /* a copy of the input when the caller aliases it */
  size_t n_scratch; /* its bytes */
  PetscScalar *vroot, *vleaf, *vresult; /* -halo_sf_verify: the inputs as they were */
  PetscScalar *vabsroot, *vabsleaf;     /* ... their magnitudes (a Reduce's tolerance) */
#if HALO_PETSC_DEVICE
  cudaStream_t stream;    /* the device plan's */
  cudaStream_t fl_stream; /* PETSc's, of the call in flight */
  cudaEvent_t event;      /* ties the two when they differ */
  void *d_scratch; /* the aliased input's copy in device memory */
  size_t n_d_scratch; /* its bytes */
#endif
} HaloSF;

/* basic's operations, as its creator sets them (sf.c) */
extern struct _PetscSFOps halo_sf_basic_ops;

/* units and leaf maps (sf_unit.c) */
/** An operation's unit as halo's: a named type, or a contiguous run of one (a
 *  VecScatter's block); PETSC_FALSE for one halo does not know. */
PetscBool HaloSFUnitOf(MPI_Datatype unit, halo_unit *u);
/** A leaf index map: the leaves' values (entries of esz bytes) in leaf order
 *  into st->lscratch, which the exchange uses as its ghost slots. */
PetscErrorCode HaloSFLeafGather(PetscSF sf, HaloSF *st, const void *leafdata, size_t esz);
/** ... and back into the leaves after a Bcast. */
PetscErrorCode HaloSFLeafScatter(PetscSF sf, HaloSF *st, void *leafdata, size_t esz);

/* -halo_sf_verify (sf_verify.c) */
/** Does a Reduce through the plan of memory mem add in basic's order (set in st)? */
PetscErrorCode HaloSFReduceBitwise(PetscSF sf, HaloSF *st, HaloSFMem mem);
/** Keep the inputs of the operation halo runs. */
PetscErrorCode HaloSFVerifyKeep(PetscSF sf, HaloSF *st, HaloSFMem mem, const PetscScalar *root,
                                const PetscScalar *leaf);
/** Run basic on the kept inputs and compare with halo's result (collective). */
PetscErrorCode HaloSFVerifyCheck(PetscSF sf, HaloSF *st, HaloSFMem mem, PetscBool bcast,
                                 const PetscScalar *result);

#endif
