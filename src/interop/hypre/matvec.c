/* halo for hypre: y = alpha A x + beta y and y = alpha A^T x + beta y of a
 * ParCSR matrix with the exchange through the plan of A's package, in the
 * steps of hypre's host products (the diagonal block's product between the
 * exchange's start and its end), so that the results are hypre's bit for
 * bit; the buffers are made once per package, not per product. Whatever
 * halo does not take (device memory, several vectors, halo off) is hypre's
 * own product. */
#include "hypre_impl.h"

/* hypre's own product, for what halo does not take. */
static HYPRE_Int hypre_product(int transpose, HYPRE_Complex alpha, hypre_ParCSRMatrix *A,
                               hypre_ParVector *x, HYPRE_Complex beta, hypre_ParVector *y)
{
  return transpose ? hypre_ParCSRMatrixMatvecT(alpha, A, x, beta, y)
                   : hypre_ParCSRMatrixMatvec(alpha, A, x, beta, y);
}

/* Whether halo can take the product: host memory, one vector each. */
static int takes(hypre_ParCSRMatrix *A, hypre_ParVector *x, hypre_ParVector *y)
{
  hypre_Vector *xl = hypre_ParVectorLocalVector(x), *yl = hypre_ParVectorLocalVector(y);
  return HH_SCALAR_OK && hypre_VectorNumVectors(xl) == 1 && hypre_VectorNumVectors(yl) == 1 &&
         hypre_GetActualMemLocation(hypre_ParCSRMatrixMemoryLocation(A)) == hypre_MEMORY_HOST &&
         hypre_GetActualMemLocation(hypre_VectorMemoryLocation(xl)) == hypre_MEMORY_HOST &&
         hypre_GetActualMemLocation(hypre_VectorMemoryLocation(yl)) == hypre_MEMORY_HOST;
}

static HYPRE_Int product(int transpose, HYPRE_Complex alpha, hypre_ParCSRMatrix *A,
                         hypre_ParVector *x, HYPRE_Complex beta, hypre_ParVector *y)
{
  if (!A || !x || !y) {
    /* hypre's macro does not parenthesise its argument: the argument number first */
    const int arg = !A ? 2 : !x ? 3 : 5;
    hypre_error_in_arg(arg);
    return hypre_error_flag;
  }
  if (!hh_abi_ok()) { /* another build of hypre: its structures are not these headers' */
    hypre_error_w_msg(HYPRE_ERROR_GENERIC, "halo_hypre_matvec: the loaded libHYPRE's HYPRE_Int "
                                           "differs from the headers halo was built with\n");
    return hypre_error_flag;
  }
  /* the sizes, as hypre checks them */
  const HYPRE_BigInt rows = hypre_ParCSRMatrixGlobalNumRows(A);
  const HYPRE_BigInt cols = hypre_ParCSRMatrixGlobalNumCols(A);
  if (hypre_ParVectorGlobalSize(x) != (transpose ? rows : cols) ||
      hypre_ParVectorGlobalSize(y) != (transpose ? cols : rows)) {
    hypre_error_w_msg(HYPRE_ERROR_GENERIC, "halo_hypre_matvec: x or y does not fit A\n");
    return hypre_error_flag;
  }
  if (!takes(A, x, y)) return hypre_product(transpose, alpha, A, x, beta, y);
  if (!hypre_ParCSRMatrixCommPkg(A)) hypre_MatvecCommPkgCreate(A);
  halo_plan plan = NULL;
  hh_matvec_buffers *mv = NULL;
  hh_pkg *e = hh_pkg_for_matvec(A, &plan, &mv);
  if (!plan) {
    hh_pkg_count(e, transpose, 0, 0.0);
    return hypre_product(transpose, alpha, A, x, beta, y);
  }
  hypre_ParCSRCommPkg *pkg = hypre_ParCSRMatrixCommPkg(A);
  const HYPRE_Int n_send = hypre_ParCSRCommPkgSendMapStart(pkg, hypre_ParCSRCommPkgNumSends(pkg));
  const HYPRE_Int *elmts = hypre_ParCSRCommPkgSendMapElmts(pkg);
  hypre_CSRMatrix *diag = hypre_ParCSRMatrixDiag(A), *offd = hypre_ParCSRMatrixOffd(A);
  hypre_Vector *xl = hypre_ParVectorLocalVector(x), *yl = hypre_ParVectorLocalVector(y);
  const int has_offd = hypre_CSRMatrixNumCols(offd) > 0;
  halo_status st;
  double t = 0;
  if (!transpose) {
    const HYPRE_Complex *xd = hypre_VectorData(xl);
    for (HYPRE_Int i = 0; i < n_send; i++) mv->send[i] = xd[elmts[i]];
    double t0 = MPI_Wtime();
    st = halo_exchange_begin(plan, mv->send, mv->recv);
    t += MPI_Wtime() - t0;
    hypre_CSRMatrixMatvecOutOfPlace(alpha, diag, xl, beta, yl, yl, 0);
    t0 = MPI_Wtime();
    if (st == HALO_SUCCESS) st = halo_exchange_end(plan);
    t += MPI_Wtime() - t0;
    if (has_offd) hypre_CSRMatrixMatvec(alpha, offd, mv->ghosts, 1.0, yl);
  } else {
    hypre_CSRMatrix *diagT = hypre_ParCSRMatrixDiagT(A), *offdT = hypre_ParCSRMatrixOffdT(A);
    if (has_offd) { /* the ghosts' contributions, then the reverse exchange */
      if (offdT)
        hypre_CSRMatrixMatvec(alpha, offdT, xl, 0.0, mv->ghosts);
      else
        hypre_CSRMatrixMatvecT(alpha, offd, xl, 0.0, mv->ghosts);
    }
    if (n_send > 0) memset(mv->send, 0, (size_t)n_send * sizeof *mv->send);
    double t0 = MPI_Wtime();
    st = halo_exchange_reverse_begin(plan, mv->recv, mv->send);
    t += MPI_Wtime() - t0;
    if (diagT)
      hypre_CSRMatrixMatvec(alpha, diagT, xl, beta, yl);
    else
      hypre_CSRMatrixMatvecT(alpha, diag, xl, beta, yl);
    t0 = MPI_Wtime();
    if (st == HALO_SUCCESS) st = halo_exchange_reverse_end(plan);
    t += MPI_Wtime() - t0;
    HYPRE_Complex *yd = hypre_VectorData(yl);
    for (HYPRE_Int i = 0; i < n_send; i++) yd[elmts[i]] += mv->send[i];
  }
  hh_pkg_count(e, transpose, 1, t);
  if (st != HALO_SUCCESS) {
    hh_warn(1, "a product's exchange failed: %s", halo_last_error());
    hypre_error_w_msg(HYPRE_ERROR_GENERIC, "halo_hypre_matvec: the exchange failed\n");
    return hypre_error_flag;
  }
  return 0;
}

HYPRE_Int halo_hypre_matvec(HYPRE_Complex alpha, hypre_ParCSRMatrix *A, hypre_ParVector *x,
                            HYPRE_Complex beta, hypre_ParVector *y)
{
  return product(0, alpha, A, x, beta, y);
}

HYPRE_Int halo_hypre_matvec_t(HYPRE_Complex alpha, hypre_ParCSRMatrix *A, hypre_ParVector *x,
                              HYPRE_Complex beta, hypre_ParVector *y)
{
  return product(1, alpha, A, x, beta, y);
}
