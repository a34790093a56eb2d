/* The PetscSF wrapper's units and leaf maps (sf.c decides, this file
 * translates): an MPI datatype as a halo_unit, and the leaves of a star forest
 * whose leaves are not one contiguous run gathered into, and scattered from,
 * a copy in leaf order. */
#include "sf_impl.h"

/* A named MPI type halo knows: its halo_type and values per entry. */
static PetscBool HaloSFNamedType(MPI_Datatype t, halo_type *type, int *per) {
  int size = 0;

  *per = 1;
  if (t == MPI_DOUBLE) *type = HALO_TYPE_DOUBLE;
  else if (t == MPI_FLOAT) *type = HALO_TYPE_FLOAT;
  else if (t == MPI_C_DOUBLE_COMPLEX) *type = HALO_TYPE_COMPLEX_DOUBLE;
  else if (t == MPI_INT32_T) *type = HALO_TYPE_INT32;
  else if (t == MPI_INT64_T) *type = HALO_TYPE_INT64;
  else if (t == MPI_CHAR || t == MPI_BYTE || t == MPI_SIGNED_CHAR || t == MPI_UNSIGNED_CHAR)
    *type = HALO_TYPE_BYTE; /* inserts only (halo_plan_unit_check refuses an add) */
  else if (t == MPI_2INT) *type = HALO_TYPE_INT32, *per = 2; /* a pair of ints */
  else if (t == MPI_INT || t == MPI_LONG || t == MPI_LONG_LONG) {
    if (MPI_Type_size(t, &size) != MPI_SUCCESS || (size != 4 && size != 8)) return PETSC_FALSE;
    *type = size == 4 ? HALO_TYPE_INT32 : HALO_TYPE_INT64;
  } else if (t == MPIU_SCALAR) { /* PETSc's own (a complex type of its making, say) */
    *type = PetscDefined(USE_COMPLEX) ? HALO_TYPE_COMPLEX_DOUBLE : HALO_TYPE_DOUBLE;
    if (MPI_Type_size(t, &size) != MPI_SUCCESS ||
        (size_t)size != (PetscDefined(USE_COMPLEX) ? 16 : 8) || sizeof(PetscReal) != 8)
      return PETSC_FALSE;
  } else if (t == MPIU_INT) {
    *type = sizeof(PetscInt) == 8 ? HALO_TYPE_INT64 : HALO_TYPE_INT32;
  } else {
    return PETSC_FALSE;
  }
  return PETSC_TRUE;
}

/* An operation's unit as halo's: a named type, or a contiguous run of one
 * (VecScatter's block size). PETSC_FALSE: one halo does not know. */
PetscBool HaloSFUnitOf(MPI_Datatype unit, halo_unit *u) {
  int ni = 0, na = 0, nd = 0, combiner = 0, per = 1, count = 0;
  int ints[1];
  MPI_Aint addrs[1];
  MPI_Datatype base[1];
  halo_type type = HALO_TYPE_DOUBLE;
  PetscBool ok;

  if (HaloSFNamedType(unit, &type, &per)) {
    *u = (halo_unit){type, per};
    return PETSC_TRUE;
  }
  if (MPI_Type_get_envelope(unit, &ni, &na, &nd, &combiner) != MPI_SUCCESS ||
      combiner != MPI_COMBINER_CONTIGUOUS || ni != 1 || na != 0 || nd != 1)
    return PETSC_FALSE;
  if (MPI_Type_get_contents(unit, 1, 0, 1, ints, addrs, base) != MPI_SUCCESS) return PETSC_FALSE;
  count = ints[0];
  ok = HaloSFNamedType(base[0], &type, &per);
  if (MPI_Type_get_envelope(base[0], &ni, &na, &nd, &combiner) == MPI_SUCCESS &&
      combiner != MPI_COMBINER_NAMED)
    MPI_Type_free(&base[0]); /* a derived base is a new handle; it is not one halo knows */
  if (!ok || count < 1 || count > INT32_MAX / per) return PETSC_FALSE;
  *u = (halo_unit){type, count * per};
  return PETSC_TRUE;
}

/* A leaf index map: the leaves' values in leaf order, gathered into the
 * scratch the exchange uses as its ghost slots (a forward add reads them, a
 * Reduce sends them), and scattered back after a Bcast. */
PetscErrorCode HaloSFLeafGather(PetscSF sf, HaloSF *st, const void *leafdata, size_t esz) {
  const size_t bytes = (size_t)sf->nleaves * esz;

  PetscFunctionBegin;
  if (st->n_lscratch < bytes) {
    PetscCall(PetscFree(st->lscratch));
    PetscCall(PetscMalloc(bytes ? bytes : 1, &st->lscratch));
    st->n_lscratch = bytes;
  }
  for (PetscInt i = 0; i < sf->nleaves; i++)
    PetscCall(PetscMemcpy((char *)st->lscratch + (size_t)i * esz,
                          (const char *)leafdata + (size_t)sf->mine[i] * esz, esz));
  PetscFunctionReturn(0);
}

PetscErrorCode HaloSFLeafScatter(PetscSF sf, HaloSF *st, void *leafdata, size_t esz) {
  PetscFunctionBegin;
  for (PetscInt i = 0; i < sf->nleaves; i++)
    PetscCall(PetscMemcpy((char *)leafdata + (size_t)sf->mine[i] * esz,
                          (const char *)st->lscratch + (size_t)i * esz, esz));
  PetscFunctionReturn(0);
}

