/* -halo_sf_verify: each operation halo runs is run by PETSc's basic too, on host copies of
 * its inputs, and the two results compared (sf.c calls these). */
#include "sf_impl.h"

#include <string.h>

static PetscErrorCode HaloSFVerifyCopy(HaloSF *st, HaloSFMem mem, PetscScalar *dst,
                                       const PetscScalar *src, PetscInt n);

/* Does a Reduce through the plan of memory mem add in basic's order? Under
 * the standard strategy each owner adds the messages in increasing rank
 * order, as basic does; it agrees bit for bit unless two leaves of one rank
 * name one root (halo sums those first, basic adds them one by one). */
PetscErrorCode HaloSFReduceBitwise(PetscSF sf, HaloSF *st, HaloSFMem mem) {
  halo_stats stats;
  PetscInt64 *keys;
  PetscBool dup = PETSC_FALSE;
  PetscMPIInt local, all;

  PetscFunctionBegin;
  HaloPetscCall(halo_plan_stats(st->plan[mem], &stats));
  PetscCall(PetscMalloc1(sf->nleaves + 1, &keys));
  for (PetscInt i = 0; i < sf->nleaves; i++)
    keys[i] = ((PetscInt64)sf->remote[i].rank << 32) + (PetscInt64)sf->remote[i].index;
  PetscCall(PetscSortInt64(sf->nleaves, keys));
  for (PetscInt i = 1; i < sf->nleaves; i++) dup = dup || keys[i] == keys[i - 1];
  PetscCall(PetscFree(keys));
  local = !dup;
  PetscCallMPI(MPI_Allreduce(&local, &all, 1, MPI_INT, MPI_MIN, PetscObjectComm((PetscObject)sf)));
  st->reduce_bitwise[mem] = stats.strategy == HALO_STRATEGY_STANDARD && all;
  PetscFunctionReturn(0);
}

/* -halo_sf_verify: n values of the caller's memory into host memory (device
 * memory: once the work on PETSc's stream is done). */
static PetscErrorCode HaloSFVerifyCopy(HaloSF *st, HaloSFMem mem, PetscScalar *dst,
                                       const PetscScalar *src, PetscInt n) {
  PetscFunctionBegin;
  if (n == 0) PetscFunctionReturn(0);
#if HALO_PETSC_DEVICE
  if (mem == HALO_SF_DEVICE) {
    PetscCallCUDA(cudaStreamSynchronize(st->fl_stream));
    PetscCallCUDA(cudaMemcpy(dst, src, (size_t)n * sizeof(PetscScalar), cudaMemcpyDeviceToHost));
    PetscFunctionReturn(0);
  }
#endif
  PetscCall(PetscArraycpy(dst, src, n));
  PetscFunctionReturn(0);
}

/* -halo_sf_verify: keep the inputs of the operation halo runs. */
PetscErrorCode HaloSFVerifyKeep(PetscSF sf, HaloSF *st, HaloSFMem mem, const PetscScalar *root,
                                const PetscScalar *leaf) {
  PetscFunctionBegin;
  if (!halo_petsc_config.verify) PetscFunctionReturn(0);
  if (!st->vroot) {
    PetscCall(PetscMalloc3(sf->nroots + 1, &st->vroot, st->leafstart + sf->nleaves + 1, &st->vleaf,
                           PetscMax(sf->nroots, sf->nleaves) + 1, &st->vresult));
    PetscCall(PetscMalloc2(sf->nroots + 1, &st->vabsroot, st->leafstart + sf->nleaves + 1,
                           &st->vabsleaf));
  }
  PetscCall(HaloSFVerifyCopy(st, mem, st->vroot, root, sf->nroots));
  PetscCall(
      HaloSFVerifyCopy(st, mem, st->vleaf + st->leafstart, leaf + st->leafstart, sf->nleaves));
  PetscFunctionReturn(0);
}

/* -halo_sf_verify: run basic (in host memory) on the kept inputs and compare
 * with halo's result; a Bcast must agree bit for bit, a Reduce too where it
 * adds in basic's order (HaloSFReduceBitwise), else within 1e-12 of the sum of
 * the magnitudes added into each root (its sums may associate differently: see
 * halo_exchange_reverse_begin; a root whose terms cancel may differ from
 * basic's by far more than its own size, never by more than that sum allows,
 * as halo spmv --check measures an SpMV). A difference names this rank's first
 * entry off, with both values, on every rank. */
PetscErrorCode HaloSFVerifyCheck(PetscSF sf, HaloSF *st, HaloSFMem mem, PetscBool bcast,
                                 const PetscScalar *result) {
  MPI_Comm comm = PetscObjectComm((PetscObject)sf);
  PetscInt n = bcast ? sf->nleaves : sf->nroots, off = bcast ? st->leafstart : 0;
  PetscScalar *expect = bcast ? st->vleaf : st->vroot;
  PetscBool bitwise = bcast || st->reduce_bitwise[mem];
  PetscInt64 bad = 0, all_bad, first = -1;
  double worst = 0, first_want = 0, first_got = 0;
  char where[192] = "";

  PetscFunctionBegin;
  if (!halo_petsc_config.verify) PetscFunctionReturn(0);
  PetscCall(HaloSFVerifyCopy(st, mem, st->vresult, result + off, n));
  if (bcast) {
    PetscCall(halo_sf_basic_ops.BcastBegin(sf, MPIU_SCALAR, PETSC_MEMTYPE_HOST, st->vroot,
                                           PETSC_MEMTYPE_HOST, st->vleaf, MPI_REPLACE));
    PetscCall(halo_sf_basic_ops.BcastEnd(sf, MPIU_SCALAR, st->vroot, st->vleaf, MPI_REPLACE));
  } else {
    if (!bitwise) { /* the magnitudes added into each root, by basic from the same inputs */
      for (PetscInt i = 0; i < sf->nroots; i++) st->vabsroot[i] = PetscAbsScalar(st->vroot[i]);
      for (PetscInt i = 0; i < sf->nleaves; i++)
        st->vabsleaf[st->leafstart + i] = PetscAbsScalar(st->vleaf[st->leafstart + i]);
      PetscCall(halo_sf_basic_ops.ReduceBegin(sf, MPIU_SCALAR, PETSC_MEMTYPE_HOST, st->vabsleaf,
                                              PETSC_MEMTYPE_HOST, st->vabsroot, MPI_SUM));
      PetscCall(halo_sf_basic_ops.ReduceEnd(sf, MPIU_SCALAR, st->vabsleaf, st->vabsroot, MPI_SUM));
    }
    PetscCall(halo_sf_basic_ops.ReduceBegin(sf, MPIU_SCALAR, PETSC_MEMTYPE_HOST, st->vleaf,
                                            PETSC_MEMTYPE_HOST, st->vroot, MPI_SUM));
    PetscCall(halo_sf_basic_ops.ReduceEnd(sf, MPIU_SCALAR, st->vleaf, st->vroot, MPI_SUM));
  }
  if (halo_petsc_config.verify_corrupt && n > 0) { /* the check's own test: rank 0's copy */
    PetscMPIInt rank;
    PetscCallMPI(MPI_Comm_rank(comm, &rank));
    if (rank == 0) st->vresult[0] += 1.0 + PetscAbsScalar(st->vresult[0]);
  }
  for (PetscInt i = 0; i < n; i++) {
    const double a = PetscRealPart(expect[off + i]), b = PetscRealPart(st->vresult[i]);
    const double d = PetscAbsScalar(expect[off + i] - st->vresult[i]);
    const double mag = bitwise ? 0 : PetscRealPart(st->vabsroot[i]);
    const PetscBool off_i =
        bitwise ? (PetscBool)(memcmp(&expect[off + i], &st->vresult[i], sizeof(PetscScalar)) != 0)
                : (PetscBool)(!(d <= 1e-12 * mag));
    if (off_i && first < 0) first = i, first_want = a, first_got = b;
    if (off_i) bad++;
    if (!bitwise && d > 0 && mag > 0) worst = PetscMax(worst, d / mag);
  }
  PetscCallMPI(MPI_Allreduce(&bad, &all_bad, 1, MPIU_INT64, MPI_SUM, comm));
  if (first >= 0)
    PetscCall(PetscSNPrintf(
        where, sizeof where, "; this rank's first: %s %" PetscInt64_FMT ", basic %.17g, halo %.17g",
        bcast ? "leaf" : "root", (PetscInt64)(off + first), first_want, first_got));
  if (!bitwise && bad)
    PetscCall(PetscSNPrintf(where + strlen(where), sizeof where - strlen(where),
                            "; worst difference relative to the magnitudes added: %g", worst));
  PetscCheck(all_bad == 0, PETSC_COMM_SELF, PETSC_ERR_PLIB,
             "halo: -halo_sf_verify: %s through halo (%s memory) differs from PETSc's basic %s in "
             "%" PetscInt64_FMT " entries (this rank: %" PetscInt64_FMT "%s)",
             bcast ? "Bcast" : "Reduce", mem == HALO_SF_HOST ? "host" : "CUDA",
             bitwise ? "bit for bit" : "within 1e-12 of the magnitudes added", all_bad, bad, where);
  PetscFunctionReturn(0);
}
