/* The Mat type MATMPIAIJHALO and HaloPetscMatAttach(): the products of a
 * MATMPIAIJ matrix through halo_spmv, with halo's overlap and kernels.
 *
 * The matrix stays a complete MATMPIAIJ (its creator, data, assembly and
 * every other operation are PETSc's); only its four products are replaced.
 * The halo matrix and plan are made from PETSc's own diagonal and
 * off-diagonal blocks and column map (MatMPIAIJGetSeqAIJ) at the first
 * product, and follow the matrix: a new object state with the same nonzero
 * state copies the values in; a new nonzero state (collective: PETSc agrees
 * it at assembly) makes a new plan. The host kernels add in PETSc's order
 * (row by row, the diagonal block, then the off-diagonal block starting
 * from the partial result), so the products are PETSc's bit for bit with
 * the standard strategy. */
#include "petsc_impl.h"

typedef struct {
  halo_matrix M;
  halo_plan plan;
  PetscObjectState state;    /* the matrix's state when its values were copied */
  PetscObjectState nz_state; /* its nonzero state when the plan was made */
  double modeled_seconds;
  PetscLogDouble flops; /* of one product: 2 per entry */
  PetscInt64 n_forward, n_reverse;
  PetscErrorCode (*destroy)(Mat); /* PETSc's, called after the state is freed */
} HaloMat;

static const char halo_mat_key[] = "HaloMat_state";

static PetscErrorCode HaloMatFreePlan(HaloMat *hm) {
  PetscFunctionBegin;
  if (hm->plan)
    PetscCall(HaloPetscViewRecordPlan("Mat", hm->plan, hm->modeled_seconds, hm->n_forward, hm->n_reverse));
  halo_plan_destroy(&hm->plan);
  halo_matrix_destroy(&hm->M);
  hm->n_forward = hm->n_reverse = 0;
  PetscFunctionReturn(0);
}

static PetscErrorCode HaloMatStateDestroy(void *ctx) {
  HaloMat *hm = (HaloMat *)ctx;

  PetscFunctionBegin;
  PetscCall(HaloMatFreePlan(hm));
  PetscCall(PetscFree(hm));
  PetscFunctionReturn(0);
}
HALO_PETSC_CONTAINER_DESTROY(HaloMatStateDestroy)

static PetscErrorCode HaloMatGetState(Mat A, HaloMat **hm_p) {
  PetscContainer c = NULL;

  PetscFunctionBegin;
  *hm_p = NULL;
  PetscCall(PetscObjectQuery((PetscObject)A, halo_mat_key, (PetscObject *)&c));
  if (c) PetscCall(PetscContainerGetPointer(c, (void **)hm_p));
  PetscCheck(*hm_p, PetscObjectComm((PetscObject)A), PETSC_ERR_PLIB, "halo: the matrix lost its halo state");
  PetscFunctionReturn(0);
}

/* A block's CSR arrays as halo's 64-bit ones. */
static PetscErrorCode HaloMatBlockCSR(Mat B, int64_t **rp_p, int64_t **cols_p) {
  PetscInt n, nnz;
  const PetscInt *ia, *ja;
  PetscBool done;
  int64_t *rp, *cols;

  PetscFunctionBegin;
  PetscCall(MatGetRowIJ(B, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_SUP, "halo: cannot read the rows of a block of the matrix");
  nnz = ia[n];
  PetscCall(PetscMalloc2(n + 1, &rp, nnz + 1, &cols));
  for (PetscInt i = 0; i <= n; i++) rp[i] = ia[i];
  for (PetscInt k = 0; k < nnz; k++) cols[k] = ja[k];
  PetscCall(MatRestoreRowIJ(B, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  *rp_p = rp;
  *cols_p = cols;
  PetscFunctionReturn(0);
}

/* The plan of the matrix as it is now: made, refreshed or kept. */
static PetscErrorCode HaloMatRefresh(Mat A, HaloMat *hm) {
  MPI_Comm comm = PetscObjectComm((PetscObject)A);
  PetscObjectState state;
  Mat Ad, Ao;
  const PetscInt *garray;
  const PetscScalar *dv, *ov;

  PetscFunctionBegin;
  PetscCall(PetscObjectStateGet((PetscObject)A, &state));
  if (hm->plan && state == hm->state) PetscFunctionReturn(0);
  PetscCheck(A->assembled, comm, PETSC_ERR_ARG_WRONGSTATE, "halo: the matrix is not assembled");
  PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, &garray));
  PetscCall(MatSeqAIJGetArrayRead(Ad, &dv));
  PetscCall(MatSeqAIJGetArrayRead(Ao, &ov));
  if (hm->plan && A->nonzerostate == hm->nz_state) {
    HaloPetscCall(halo_matrix_set_values_split(hm->M, (const double *)(const void *)dv,
                                               (const double *)(const void *)ov));
  } else {
    int64_t *drp, *dcols, *orp, *ocols, *gids;
    PetscInt n_ghost = Ao->cmap->n;
    halo_plan_options opts = halo_petsc_config.opts;
    halo_status hs;

    PetscCall(HaloMatFreePlan(hm));
    PetscCall(HaloMatBlockCSR(Ad, &drp, &dcols));
    PetscCall(HaloMatBlockCSR(Ao, &orp, &ocols));
    hm->flops = 2.0 * (PetscLogDouble)(drp[A->rmap->n] + orp[A->rmap->n]);
    PetscCall(PetscMalloc1(n_ghost + 1, &gids));
    for (PetscInt j = 0; j < n_ghost; j++) gids[j] = garray[j];
    hs = halo_matrix_create_split(comm, A->rmap->rstart, A->rmap->rend, A->cmap->rstart,
                                  A->cmap->rend, drp, dcols, (const double *)(const void *)dv, orp,
                                  ocols, (const double *)(const void *)ov, n_ghost, gids,
                                  HALO_MEMORY_HOST, &hm->M);
    PetscCall(PetscFree2(drp, dcols));
    PetscCall(PetscFree2(orp, ocols));
    PetscCall(PetscFree(gids));
    PetscCheck(hs == HALO_SUCCESS, PETSC_COMM_SELF, PETSC_ERR_LIB, "halo: %s", halo_last_error());
    opts.memory = HALO_MEMORY_HOST;
    opts.reverse = 1;
    HaloPetscCall(halo_plan_create(hm->M, &opts, &hm->plan));
    PetscCall(HaloPetscViewModel(comm, hm->plan, &hm->modeled_seconds));
    hm->nz_state = A->nonzerostate;
  }
  PetscCall(MatSeqAIJRestoreArrayRead(Ad, &dv));
  PetscCall(MatSeqAIJRestoreArrayRead(Ao, &ov));
  hm->state = state;
  PetscFunctionReturn(0);
}

/* y = A x (beta 0) or y = A x + y (beta 1), forward or transposed. */
/* The arrays of a real double PetscScalar as halo's; a complex build compiles these paths but
 * never runs them (the matrix type refuses it at creation: HALO_PETSC_SCALAR_OK). */
#define HALO_D(p)  ((double *)(void *)(p))
#define HALO_CD(p) ((const double *)(const void *)(p))

static PetscErrorCode HaloMatProduct(Mat A, Vec x, Vec y, PetscBool transpose, double beta) {
  HaloMat *hm;
  const PetscScalar *xa;
  PetscScalar *ya;

  PetscFunctionBegin;
  PetscCall(HaloMatGetState(A, &hm));
  PetscCall(HaloMatRefresh(A, hm));
  PetscCall(VecGetArrayRead(x, &xa));
  if (beta == 0.0) PetscCall(VecGetArrayWrite(y, &ya));
  else PetscCall(VecGetArray(y, &ya));
  if (transpose) HaloPetscCall(halo_spmv_transpose(hm->plan, 1.0, HALO_CD(xa), beta, HALO_D(ya)));
  else HaloPetscCall(halo_spmv(hm->plan, 1.0, HALO_CD(xa), beta, HALO_D(ya)));
  if (beta == 0.0) PetscCall(VecRestoreArrayWrite(y, &ya));
  else PetscCall(VecRestoreArray(y, &ya));
  PetscCall(VecRestoreArrayRead(x, &xa));
  if (transpose) hm->n_reverse++;
  else hm->n_forward++;
  PetscCall(PetscLogFlops(hm->flops));
  PetscFunctionReturn(0);
}

static PetscErrorCode HaloMatMult(Mat A, Vec x, Vec y) {
  PetscFunctionBegin;
  PetscCall(HaloMatProduct(A, x, y, PETSC_FALSE, 0.0));
  PetscFunctionReturn(0);
}

static PetscErrorCode HaloMatMultAdd(Mat A, Vec x, Vec y, Vec z) {
  PetscFunctionBegin;
  if (y != z) PetscCall(VecCopy(y, z));
  PetscCall(HaloMatProduct(A, x, z, PETSC_FALSE, 1.0));
  PetscFunctionReturn(0);
}

static PetscErrorCode HaloMatMultTranspose(Mat A, Vec x, Vec y) {
  PetscFunctionBegin;
  PetscCall(HaloMatProduct(A, x, y, PETSC_TRUE, 0.0));
  PetscFunctionReturn(0);
}

static PetscErrorCode HaloMatMultTransposeAdd(Mat A, Vec x, Vec y, Vec z) {
  PetscFunctionBegin;
  if (y != z) PetscCall(VecCopy(y, z));
  PetscCall(HaloMatProduct(A, x, z, PETSC_TRUE, 1.0));
  PetscFunctionReturn(0);
}

static PetscErrorCode HaloMatDestroy(Mat A) {
  HaloMat *hm;
  PetscErrorCode (*destroy)(Mat);

  PetscFunctionBegin;
  PetscCall(HaloMatGetState(A, &hm));
  destroy = hm->destroy;
  PetscCall(PetscObjectCompose((PetscObject)A, halo_mat_key, NULL)); /* frees the state */
  PetscCall(destroy(A));
  PetscFunctionReturn(0);
}

/* Replace the four products (and destroy) of a MATMPIAIJ; idempotent. */
static PetscErrorCode HaloMatInstall(Mat A) {
  PetscContainer c = NULL;
  HaloMat *hm;

  PetscFunctionBegin;
  PetscCall(PetscObjectQuery((PetscObject)A, halo_mat_key, (PetscObject *)&c));
  if (c) PetscFunctionReturn(0);
  PetscCall(PetscNew(&hm));
  hm->destroy = A->ops->destroy;
  PetscCall(PetscContainerCreate(PETSC_COMM_SELF, &c));
  PetscCall(PetscContainerSetPointer(c, hm));
  PetscCall(HaloPetscContainerSetDestroy(c, HaloMatStateDestroy));
  PetscCall(PetscObjectCompose((PetscObject)A, halo_mat_key, (PetscObject)c));
  PetscCall(PetscContainerDestroy(&c));
  A->ops->mult = HaloMatMult;
  A->ops->multadd = HaloMatMultAdd;
  A->ops->multtranspose = HaloMatMultTranspose;
  A->ops->multtransposeadd = HaloMatMultTransposeAdd;
  A->ops->destroy = HaloMatDestroy;
  PetscFunctionReturn(0);
}

PetscErrorCode HaloPetscMatAttach(Mat A) {
  PetscBool mpiaij;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscCheck(HALO_PETSC_SCALAR_OK, PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "halo: PetscScalar is not a real double");
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)A, MATMPIAIJ, &mpiaij));
  PetscCheck(mpiaij, PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "halo: HaloPetscMatAttach needs a matrix of type mpiaij, not %s", ((PetscObject)A)->type_name ? ((PetscObject)A)->type_name : "(no type)");
  PetscCall(HaloMatInstall(A));
  PetscFunctionReturn(0);
}

/* MATMPIAIJHALO: PETSc's MATMPIAIJ with halo's products. */
static PetscErrorCode MatCreate_MPIAIJHalo(Mat A) {
  PetscErrorCode (*create)(Mat) = NULL;

  PetscFunctionBegin;
  PetscCheck(HALO_PETSC_SCALAR_OK, PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "halo: PetscScalar is not a real double");
  PetscCall(PetscFunctionListFind(MatList, MATMPIAIJ, &create));
  PetscCheck(create, PETSC_COMM_SELF, PETSC_ERR_PLIB, "halo: PETSc has no Mat type mpiaij");
  PetscCall((*create)(A));
  PetscCall(PetscObjectChangeTypeName((PetscObject)A, MATMPIAIJHALO));
  PetscCall(HaloMatInstall(A));
  PetscFunctionReturn(0);
}

PetscErrorCode HaloPetscMatRegister(void) {
  PetscFunctionBegin;
  PetscCall(MatInitializePackage());
  PetscCall(MatRegister(MATMPIAIJHALO, MatCreate_MPIAIJHalo));
  PetscFunctionReturn(0);
}
