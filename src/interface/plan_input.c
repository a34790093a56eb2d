/* The public constructors: a plan of a matrix (halo_plan_create), and
 * exchange-only plans: from a layout and the ghosts' global ids, from (owner
 * rank, local index) pairs, or from explicit send and receive lists. Each
 * gives the planning core (plan.c) strategy AUTO's chooser (auto.c). Each
 * comes down to the layout of the vector, the ghosts the schedule moves
 * (sorted, each once) and the caller's ghost slots against them; the lists
 * also give the pattern, so that the sparse discovery is skipped. */
#include <stdlib.h>
#include <string.h>

#include "interface/plan.h"
#include "tags.h"

halo_status halo_plan_create(halo_matrix A, const halo_plan_options *opts, halo_plan *plan_p) {
  return halo_plan_build_matrix(A, opts, halo_plan_choose, halo_online_switch_create, plan_p);
}

/* The plan of the caller's slot ids over the layout ranges. Collective. */
static halo_status plan_from_ids(halo_context *ctx, const int64_t *ranges, int64_t n_slots,
                                 const int64_t *slot_ids, const halo_pattern *pattern,
                                 const halo_plan_options *opts, halo_plan *plan_p) {
  halo_status st;
  halo_leaves L;
  int64_t *ids = NULL, n_ids = 0;
  st = halo_agree(ctx->comm, halo_leaves_build_own(n_slots, slot_ids, ranges[ctx->rank],
                                                   ranges[ctx->rank + 1], &ids, &n_ids, &L));
  if (st != HALO_SUCCESS) { /* built here (or freed by the build), failed elsewhere */
    halo_leaves_free(&L);
    halo_free(ids);
    return st;
  }
  const halo_plan_input in = {.n_local = ranges[ctx->rank + 1] - ranges[ctx->rank],
                              .col_ranges = ranges,
                              .n_ghost = n_ids,
                              .ghost_ids = ids,
                              .pattern = pattern,
                              .leaves = &L,
                              .choose = halo_plan_choose,
                              .switcher = halo_online_switch_create};
  st = halo_plan_build(ctx, NULL, &in, opts, plan_p);
  halo_leaves_free(&L);
  halo_free(ids);
  return st;
}

/* Every id in [0, N) (this rank's own entries too: the plan copies them). */
static halo_status check_ids(const halo_context *ctx, const int64_t *ranges, int64_t n,
                             const int64_t *ids) {
  const int64_t N = ranges[ctx->size];
  for (int64_t i = 0; i < n; i++) {
    if (ids[i] < 0 || ids[i] >= N)
      return HALO_ERROR(HALO_ERR_INVALID_ARG, "ghost_ids[%lld] = %lld is out of range [0, %lld)",
                        (long long)i, (long long)ids[i], (long long)N);
  }
  return HALO_SUCCESS;
}

halo_status halo_plan_create_from_ids(MPI_Comm comm, int64_t col_begin, int64_t col_end,
                                      int64_t n_ghost, const int64_t *ghost_ids,
                                      const halo_plan_options *opts, halo_plan *plan_p) {
  halo_status st = HALO_SUCCESS;
  halo_context *ctx = NULL;
  int64_t *ranges = NULL;
  HALO_CHECK(halo_context_get(comm, &ctx));
  if (!plan_p)
    st = HALO_ERROR(HALO_ERR_INVALID_ARG, "plan_p is NULL");
  else if (n_ghost < 0 || n_ghost > INT32_MAX)
    st = HALO_ERROR(HALO_ERR_INVALID_ARG, "n_ghost = %lld: must be in [0, %d]", (long long)n_ghost,
                    INT32_MAX);
  else if (n_ghost > 0 && !ghost_ids)
    st = HALO_ERROR(HALO_ERR_INVALID_ARG, "ghost_ids is NULL for %lld ghosts", (long long)n_ghost);
  HALO_TRY(halo_layout_gather(ctx->comm, col_begin, col_end, st, &ranges));
  HALO_TRY(halo_agree(ctx->comm, check_ids(ctx, ranges, n_ghost, ghost_ids)));
  st = plan_from_ids(ctx, ranges, n_ghost, ghost_ids, NULL, opts, plan_p);
cleanup:
  halo_free(ranges);
  halo_context_release(&ctx);
  return st;
}

halo_status halo_plan_create_from_pairs(MPI_Comm comm, int64_t n_local, int64_t n_ghost,
                                        const int *owner_ranks, const int64_t *owner_indices,
                                        const halo_plan_options *opts, halo_plan *plan_p) {
  halo_status st = HALO_SUCCESS;
  halo_context *ctx = NULL;
  int64_t *ranges = NULL, *ids = NULL, begin = 0;
  HALO_CHECK(halo_context_get(comm, &ctx));
  if (!plan_p)
    st = HALO_ERROR(HALO_ERR_INVALID_ARG, "plan_p is NULL");
  else if (n_local < 0)
    st = HALO_ERROR(HALO_ERR_INVALID_ARG, "n_local = %lld: must be >= 0", (long long)n_local);
  else if (n_ghost < 0 || n_ghost > INT32_MAX)
    st = HALO_ERROR(HALO_ERR_INVALID_ARG, "n_ghost = %lld: must be in [0, %d]", (long long)n_ghost,
                    INT32_MAX);
  else if (n_ghost > 0 && (!owner_ranks || !owner_indices))
    st = HALO_ERROR(HALO_ERR_INVALID_ARG, "owner_ranks or owner_indices is NULL for %lld ghosts",
                    (long long)n_ghost);
  {
    const int64_t mine = st == HALO_SUCCESS ? n_local : 0;
    HALO_TRY_MPI(MPI_Exscan(&mine, &begin, 1, MPI_INT64_T, MPI_SUM, ctx->comm));
    if (ctx->rank == 0) begin = 0;
    HALO_TRY(halo_layout_gather(ctx->comm, begin, begin + mine, st, &ranges));
  }
  st = HALO_ALLOC(ids, n_ghost);
  for (int64_t i = 0; i < n_ghost && st == HALO_SUCCESS; i++) {
    const int q = owner_ranks[i];
    const int64_t k = owner_indices[i];
    if (q < 0 || q >= ctx->size)
      st = HALO_ERROR(HALO_ERR_INVALID_ARG, "owner_ranks[%lld] = %d is not a rank of [0, %d)",
                      (long long)i, q, ctx->size);
    else if (k < 0 || k >= ranges[q + 1] - ranges[q])
      st = HALO_ERROR(HALO_ERR_INVALID_ARG,
                      "owner_indices[%lld] = %lld, but rank %d owns %lld entries", (long long)i,
                      (long long)k, q, (long long)(ranges[q + 1] - ranges[q]));
    else
      ids[i] = ranges[q] + k;
  }
  HALO_TRY(halo_agree(ctx->comm, st));
  st = plan_from_ids(ctx, ranges, n_ghost, ids, NULL, opts, plan_p);
cleanup:
  halo_free(ids);
  halo_free(ranges);
  halo_context_release(&ctx);
  return st;
}

/* ---- explicit lists ------------------------------------------------------- */

static uint64_t mix64(uint64_t z) {
  z += UINT64_C(0x9E3779B97F4A7C15);
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

/* A message from src to dst of count values, hashed: both ends add the same. */
static uint64_t message_hash(int src, int dst, int64_t count) {
  return mix64(mix64(mix64((uint64_t)src) ^ (uint64_t)dst) ^ (uint64_t)count);
}

/* One list: ranks in [0, size), not this rank, each once; starts from 0,
 * non-decreasing; what = "send" or "receive". */
static halo_status check_list(const halo_context *ctx, const char *what, int n, const int *ranks,
                              const int64_t *starts) {
  halo_status st = HALO_SUCCESS;
  int *sorted = NULL;
  if (n < 0) return HALO_ERROR(HALO_ERR_INVALID_ARG, "%d %s ranks: must be >= 0", n, what);
  if (n > 0 && (!ranks || !starts))
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "the %s list's ranks or starts are NULL", what);
  if (n == 0) return HALO_SUCCESS;
  if (starts[0] != 0)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "%s starts[0] = %lld: must be 0", what,
                      (long long)starts[0]);
  for (int j = 0; j < n; j++) {
    if (ranks[j] < 0 || ranks[j] >= ctx->size)
      return HALO_ERROR(HALO_ERR_INVALID_ARG, "%s rank %d is not a rank of [0, %d)", what,
                        ranks[j], ctx->size);
    if (ranks[j] == ctx->rank)
      return HALO_ERROR(HALO_ERR_INVALID_ARG, "the %s list names this rank (%d)", what, ranks[j]);
    if (starts[j + 1] < starts[j])
      return HALO_ERROR(HALO_ERR_INVALID_ARG, "%s starts decrease at %d (%lld after %lld)", what,
                        j + 1, (long long)starts[j + 1], (long long)starts[j]);
  }
  if (starts[n] > INT32_MAX)
    return HALO_ERROR(HALO_ERR_OUT_OF_RANGE, "%lld %s entries: at most %d", (long long)starts[n],
                      what, INT32_MAX);
  HALO_TRY(HALO_ALLOC(sorted, n));
  memcpy(sorted, ranks, (size_t)n * sizeof *sorted);
  for (int i = 1; i < n; i++) /* insertion sort: lists are short */
    for (int j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
      int t = sorted[j];
      sorted[j] = sorted[j - 1];
      sorted[j - 1] = t;
    }
  for (int j = 1; j < n; j++)
    if (sorted[j] == sorted[j - 1])
      HALO_FAIL(HALO_ERR_INVALID_ARG, "rank %d appears twice in the %s list", sorted[j], what);
cleanup:
  halo_free(sorted);
  return st;
}

/* The senders tell the receivers the global ids of their messages' entries:
 * after the lists were found to match, every message is one receive of a
 * known size. Collective. */
static halo_status exchange_ids(halo_context *ctx, const int64_t *ranges, int n_recv,
                                const int *recv_ranks, const int64_t *recv_starts, int n_send,
                                const int *send_ranks, const int64_t *send_starts,
                                const int64_t *send_indices, int64_t *slot_ids) {
  halo_status st = HALO_SUCCESS;
  MPI_Request *req = NULL;
  int64_t *out = NULL;
  int n_req = 0;
  const int64_t cb = ranges[ctx->rank], n_out = n_send ? send_starts[n_send] : 0;
  HALO_TRY(HALO_ALLOC(req, n_send + n_recv));
  HALO_TRY(HALO_ALLOC(out, n_out));
  for (int64_t k = 0; k < n_out; k++) out[k] = cb + send_indices[k];
  for (int j = 0; j < n_recv; j++) {
    const int64_t c = recv_starts[j + 1] - recv_starts[j];
    if (c > 0)
      HALO_TRY_MPI(MPI_Irecv(slot_ids + recv_starts[j], (int)c, MPI_INT64_T, recv_ranks[j],
                             HALO_TAG_LIST_IDS, ctx->comm, &req[n_req++]));
  }
  for (int j = 0; j < n_send; j++) {
    const int64_t c = send_starts[j + 1] - send_starts[j];
    if (c > 0)
      HALO_TRY_MPI(MPI_Isend(out + send_starts[j], (int)c, MPI_INT64_T, send_ranks[j],
                             HALO_TAG_LIST_IDS, ctx->comm, &req[n_req++]));
  }
  HALO_TRY_MPI(MPI_Waitall(n_req, req, MPI_STATUSES_IGNORE));
cleanup:
  halo_free(out);
  halo_free(req);
  return st;
}

/* The lists do not match (their hashes say so): find the lowest rank that
 * expects from some rank another count than that rank sends it, and say so on
 * every rank (HALO_ERR_INCONSISTENT). Collective; O(ranks) memory, on this
 * error path only. */
static halo_status lists_mismatch(halo_context *ctx, int n_recv, const int *recv_ranks,
                                  const int64_t *recv_starts, int n_send, const int *send_ranks,
                                  const int64_t *send_starts) {
  halo_status st = HALO_SUCCESS;
  const int P = ctx->size;
  int64_t *sends = NULL, *told = NULL, *expects = NULL;
  st = HALO_CALLOC(sends, P);
  if (st == HALO_SUCCESS) st = HALO_CALLOC(told, P);
  if (st == HALO_SUCCESS) st = HALO_CALLOC(expects, P);
  HALO_TRY(halo_agree(ctx->comm, st));
  for (int j = 0; j < n_send; j++) sends[send_ranks[j]] += send_starts[j + 1] - send_starts[j];
  for (int j = 0; j < n_recv; j++) expects[recv_ranks[j]] += recv_starts[j + 1] - recv_starts[j];
  HALO_TRY_MPI(MPI_Alltoall(sends, 1, MPI_INT64_T, told, 1, MPI_INT64_T, ctx->comm));
  for (int q = 0; q < P && st == HALO_SUCCESS; q++)
    if (told[q] != expects[q])
      st = HALO_ERROR(HALO_ERR_INCONSISTENT,
                      "the send and receive lists do not match across ranks: rank %d expects "
                      "%lld values from rank %d, whose send list has %lld for it",
                      ctx->rank, (long long)expects[q], q, (long long)told[q]);
  st = halo_agree(ctx->comm, st);
  if (st == HALO_SUCCESS) /* the counts match, so the hashes cannot differ: not expected */
    st = HALO_ERROR(HALO_ERR_INCONSISTENT,
                    "the send and receive lists do not match across ranks");
cleanup:
  halo_free(sends);
  halo_free(told);
  halo_free(expects);
  return st;
}

halo_status halo_plan_create_from_lists(MPI_Comm comm, int64_t n_local, int n_recv,
                                        const int *recv_ranks, const int64_t *recv_starts,
                                        int n_send, const int *send_ranks,
                                        const int64_t *send_starts, const int64_t *send_indices,
                                        const halo_plan_options *opts, halo_plan *plan_p) {
  halo_status st = HALO_SUCCESS;
  halo_context *ctx = NULL;
  int64_t *ranges = NULL, *slot_ids = NULL, begin = 0;
  halo_pattern pattern;
  memset(&pattern, 0, sizeof pattern);
  HALO_CHECK(halo_context_get(comm, &ctx));
  if (!plan_p)
    st = HALO_ERROR(HALO_ERR_INVALID_ARG, "plan_p is NULL");
  else if (n_local < 0)
    st = HALO_ERROR(HALO_ERR_INVALID_ARG, "n_local = %lld: must be >= 0", (long long)n_local);
  if (st == HALO_SUCCESS) st = check_list(ctx, "receive", n_recv, recv_ranks, recv_starts);
  if (st == HALO_SUCCESS) st = check_list(ctx, "send", n_send, send_ranks, send_starts);
  if (st == HALO_SUCCESS && n_send > 0 && send_starts[n_send] > 0 && !send_indices)
    st = HALO_ERROR(HALO_ERR_INVALID_ARG, "send_indices is NULL for %lld entries",
                    (long long)send_starts[n_send]);
  for (int64_t k = 0; st == HALO_SUCCESS && n_send > 0 && k < send_starts[n_send]; k++)
    if (send_indices[k] < 0 || send_indices[k] >= n_local)
      st = HALO_ERROR(HALO_ERR_INVALID_ARG,
                      "send_indices[%lld] = %lld is not an entry of this rank's [0, %lld)",
                      (long long)k, (long long)send_indices[k], (long long)n_local);
  {
    const int64_t mine = st == HALO_SUCCESS ? n_local : 0;
    HALO_TRY_MPI(MPI_Exscan(&mine, &begin, 1, MPI_INT64_T, MPI_SUM, ctx->comm));
    if (ctx->rank == 0) begin = 0;
    HALO_TRY(halo_layout_gather(ctx->comm, begin, begin + mine, st, &ranges));
  }
  { /* every message sent is a message received, of the same size: the XOR of
     * their hashes over all ranks is 0 (a mismatch would leave a rank waiting) */
    uint64_t h = 0, all = 0;
    for (int j = 0; j < n_send; j++)
      if (send_starts[j + 1] > send_starts[j])
        h ^= message_hash(ctx->rank, send_ranks[j], send_starts[j + 1] - send_starts[j]);
    for (int j = 0; j < n_recv; j++)
      if (recv_starts[j + 1] > recv_starts[j])
        h ^= message_hash(recv_ranks[j], ctx->rank, recv_starts[j + 1] - recv_starts[j]);
    HALO_TRY_MPI(MPI_Allreduce(&h, &all, 1, MPI_UINT64_T, MPI_BXOR, ctx->comm));
    if (all != 0) HALO_TRY(lists_mismatch(ctx, n_recv, recv_ranks, recv_starts, n_send, send_ranks,
                                          send_starts));
  }
  const int64_t n_slots = n_recv ? recv_starts[n_recv] : 0;
  st = HALO_ALLOC(slot_ids, n_slots);
  HALO_TRY(halo_agree(ctx->comm, st));
  st = exchange_ids(ctx, ranges, n_recv, recv_ranks, recv_starts, n_send, send_ranks, send_starts,
                    send_indices, slot_ids);
  HALO_TRY(halo_agree(ctx->comm, st));
  {
    halo_leaves L;
    int64_t *ids = NULL, n_ids = 0;
    st = halo_leaves_build(n_slots, slot_ids, &ids, &n_ids, &L);
    if (st == HALO_SUCCESS)
      st = halo_pattern_recv_side(ctx->rank, ctx->size, ranges, ids, n_ids, &pattern);
    if (st == HALO_SUCCESS)
      st = halo_pattern_set_send(&pattern, n_send, send_ranks, send_starts, send_indices);
    st = halo_agree(ctx->comm, st);
    if (st == HALO_SUCCESS) {
      const halo_plan_input in = {.n_local = n_local,
                                  .col_ranges = ranges,
                                  .n_ghost = n_ids,
                                  .ghost_ids = ids,
                                  .pattern = &pattern,
                                  .leaves = &L,
                                  .choose = halo_plan_choose,
                              .switcher = halo_online_switch_create};
      st = halo_plan_build(ctx, NULL, &in, opts, plan_p);
    }
    halo_leaves_free(&L);
    halo_free(ids);
  }
cleanup:
  halo_pattern_free(&pattern);
  halo_free(slot_ids);
  halo_free(ranges);
  halo_context_release(&ctx);
  return st;
}
