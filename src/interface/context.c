/* One context per communicator, cached on it with an MPI attribute; see
 * context.h. */
#include <limits.h>
#include <string.h>

#include "exec/transport.h"
#include "interface/context.h"
#include "tags.h"

static int ctx_keyval = MPI_KEYVAL_INVALID;      /* the context of a user's communicator */
static int finalize_keyval = MPI_KEYVAL_INVALID; /* on MPI_COMM_SELF: called by MPI_Finalize */
static halo_context *cached;                     /* contexts cached on a communicator */

static void unlink_cached(halo_context *ctx) {
  for (halo_context **p = &cached; *p; p = &(*p)->next)
    if (*p == ctx) {
      *p = ctx->next;
      ctx->next = NULL;
      return;
    }
}

static void context_free(halo_context *ctx) {
  halo_transport_states_free(ctx->transport_state);
  halo_device_destroy(&ctx->device);
  for (int i = 0; i < ctx->n_topo; i++) {
    halo_topology_destroy(ctx->topo[i]);
    halo_free(ctx->topo[i]);
  }
  halo_free(ctx->topo);
  halo_free(ctx->topo_k);
  halo_free(ctx->blocks);
  if (ctx->comm != MPI_COMM_NULL) MPI_Comm_free(&ctx->comm);
  halo_free(ctx);
}

void halo_context_retain(halo_context *ctx) { ctx->refs++; }

void halo_context_release(halo_context **ctx_p) {
  if (!ctx_p || !*ctx_p) return;
  if (--(*ctx_p)->refs == 0) context_free(*ctx_p);
  *ctx_p = NULL;
}

/* The user's communicator is freed (or MPI_Finalize drops it): the attribute's
 * reference goes; plans still alive keep the context. */
static int attr_delete(MPI_Comm comm, int keyval, void *value, void *extra) {
  (void)comm, (void)keyval, (void)extra;
  halo_context *ctx = value;
  unlink_cached(ctx);
  ctx->outer = MPI_COMM_NULL;
  halo_context_release(&ctx);
  return MPI_SUCCESS;
}

/* MPI_Finalize deletes MPI_COMM_SELF's attributes first: the contexts still
 * cached on communicators (the world communicator's are never deleted otherwise) go
 * while MPI can still free their communicators. */
static int finalize_delete(MPI_Comm comm, int keyval, void *value, void *extra) {
  (void)comm, (void)keyval, (void)value, (void)extra;
  while (cached) {
    halo_context *ctx = cached;
    if (MPI_Comm_delete_attr(ctx->outer, ctx_keyval) != MPI_SUCCESS) unlink_cached(ctx);
  }
  MPI_Comm_free_keyval(&ctx_keyval);
  ctx_keyval = MPI_KEYVAL_INVALID;
  MPI_Comm_free_keyval(&finalize_keyval); /* freed once this deletion is over */
  finalize_keyval = MPI_KEYVAL_INVALID;
  return MPI_SUCCESS;
}

static halo_status ensure_keyvals(void) {
  if (ctx_keyval != MPI_KEYVAL_INVALID) return HALO_SUCCESS;
  HALO_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, attr_delete, &ctx_keyval, NULL));
  HALO_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, finalize_delete, &finalize_keyval, NULL));
  HALO_MPI(MPI_Comm_set_attr(MPI_COMM_SELF, finalize_keyval, NULL));
  return HALO_SUCCESS;
}

halo_status halo_context_get(MPI_Comm comm, halo_context **ctx_p) {
  halo_status st = HALO_SUCCESS;
  halo_context *ctx = NULL;
  void *value = NULL;
  int flag = 0, rc;
  *ctx_p = NULL;
  HALO_CHECK(halo_comm_check(comm, "the communicator"));
  HALO_CHECK(ensure_keyvals());
  HALO_MPI(MPI_Comm_get_attr(comm, ctx_keyval, &value, &flag));
  if (flag) {
    ctx = value;
    halo_context_retain(ctx);
    *ctx_p = ctx;
    return HALO_SUCCESS;
  }
  /* the first plan or matrix of this communicator: every rank is here, and
   * every rank duplicates the communicator (collective) before anything that
   * can fail on one rank alone */
  MPI_Comm dup = MPI_COMM_NULL;
  rc = MPI_Comm_dup(comm, &dup);
  if (rc != MPI_SUCCESS) {
    dup = MPI_COMM_NULL;
    st = halo_error_mpi(rc, "MPI_Comm_dup", __FILE__, __LINE__);
  } else if (!(ctx = halo_calloc(1, sizeof *ctx))) {
    st = HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "out of memory creating a communicator's context");
  } else {
    ctx->comm = dup;
    dup = MPI_COMM_NULL;
  }
  st = halo_agree(comm, st);
  if (dup != MPI_COMM_NULL) MPI_Comm_free(&dup); /* only where the context was not made */
  if (st != HALO_SUCCESS) goto cleanup;
  ctx->refs = 1; /* the attribute's */
  ctx->outer = comm;
  HALO_TRY_MPI(MPI_Comm_set_errhandler(ctx->comm, MPI_ERRORS_RETURN));
  HALO_TRY_MPI(MPI_Comm_rank(ctx->comm, &ctx->rank));
  HALO_TRY_MPI(MPI_Comm_size(ctx->comm, &ctx->size));
  {
    int *ub = NULL;
    HALO_TRY_MPI(MPI_Comm_get_attr(ctx->comm, MPI_TAG_UB, &ub, &flag));
    ctx->tag_ub = flag && ub ? *ub : 32767; /* the least the standard allows */
    ctx->tag_next = HALO_TAG_EXCHANGE_FIRST;
  }
  HALO_TRY_MPI(MPI_Comm_set_attr(comm, ctx_keyval, ctx));
  ctx->next = cached;
  cached = ctx;
  halo_context_retain(ctx);
  *ctx_p = ctx;
  ctx = NULL;
cleanup:
  if (ctx) context_free(ctx);
  return st;
}

halo_status halo_context_topology(halo_context *ctx, int ranks_per_node,
                                  const halo_topology **t_p) {
  halo_status st = HALO_SUCCESS;
  halo_topology *t = NULL;
  for (int i = 0; i < ctx->n_topo; i++)
    if (ctx->topo_k[i] == ranks_per_node) {
      *t_p = ctx->topo[i];
      return HALO_SUCCESS;
    }
  int *k = halo_realloc(ctx->topo_k, (size_t)(ctx->n_topo + 1) * sizeof *k);
  if (k) ctx->topo_k = k;
  halo_topology **list = halo_realloc(ctx->topo, (size_t)(ctx->n_topo + 1) * sizeof *list);
  if (list) ctx->topo = list;
  t = halo_calloc(1, sizeof *t);
  if (!k || !list || !t) st = HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "out of memory keeping nodes");
  HALO_TRY(halo_agree(ctx->comm, st));
  HALO_TRY(halo_topology_create(ctx->comm, ranks_per_node, t));
  ctx->topo[ctx->n_topo] = t;
  ctx->topo_k[ctx->n_topo++] = ranks_per_node;
  *t_p = t;
  t = NULL;
cleanup:
  halo_free(t);
  return st;
}

halo_status halo_context_device(halo_context *ctx, int device_id, halo_device **dev_p) {
  halo_status st = HALO_SUCCESS;
  if (!ctx->device) {
    HALO_CHECK(halo_device_create(ctx->comm, device_id, &ctx->device));
  } else if ((st = halo_device_check_id(device_id)) != HALO_SUCCESS) {
    /* st says why */
  } else if (device_id >= 0 && device_id != halo_device_id(ctx->device)) {
    st = HALO_ERROR(HALO_ERR_INVALID_ARG,
                    "device_id = %d, but this communicator's plans use CUDA device %d (every "
                    "device plan of a communicator uses one device)",
                    device_id, halo_device_id(ctx->device));
  }
  HALO_CHECK(halo_agree(ctx->comm, st));
  *dev_p = ctx->device;
  return HALO_SUCCESS;
}

/* The first base >= from where n tags are free on this rank, or -1. */
static int first_fit(const halo_context *ctx, int64_t from, int64_t n) {
  int64_t b = from;
  for (int i = 0; i < ctx->n_blocks; i++) {
    const int64_t lo = ctx->blocks[i].base, hi = lo + ctx->blocks[i].n;
    if (hi <= b) continue;
    if (lo >= b + n) break;
    b = hi;
  }
  return b + n - 1 <= ctx->tag_ub ? (int)b : -1;
}

static int block_free(const halo_context *ctx, int64_t b, int64_t n) {
  for (int i = 0; i < ctx->n_blocks; i++) {
    const int64_t lo = ctx->blocks[i].base, hi = lo + ctx->blocks[i].n;
    if (lo < b + n && b < hi) return 0;
  }
  return 1;
}

halo_status halo_context_tags_reserve(halo_context *ctx, int64_t n, int *base_p) {
  halo_status st = HALO_SUCCESS;
  if (n < 1) n = 1;
  if (ctx->n_blocks == ctx->cap_blocks) {
    const int cap = ctx->cap_blocks ? 2 * ctx->cap_blocks : 16;
    void *q = halo_realloc(ctx->blocks, (size_t)cap * sizeof *ctx->blocks);
    if (q) {
      ctx->blocks = q;
      ctx->cap_blocks = cap;
    } else {
      st = HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "out of memory keeping tags");
    }
  }
  HALO_CHECK(halo_agree(ctx->comm, st));
  /* ranks may have freed different blocks since (destruction is local):
   * take the first base free on every rank at or after the shared cursor,
   * wrapping once to the first tag */
  int64_t from = ctx->tag_next;
  for (int wrapped = 0;;) {
    int mine = first_fit(ctx, from, n), base;
    if (mine < 0) mine = INT_MAX;
    HALO_MPI(MPI_Allreduce(&mine, &base, 1, MPI_INT, MPI_MAX, ctx->comm));
    if (base == INT_MAX) {
      if (wrapped)
        return HALO_ERROR(HALO_ERR_OUT_OF_RANGE,
                          "no block of %lld MPI tags is free on every rank below MPI_TAG_UB = %d: "
                          "too many plans (or exchanges per plan) alive on this communicator",
                          (long long)n, ctx->tag_ub);
      wrapped = 1;
      from = HALO_TAG_EXCHANGE_FIRST;
      continue;
    }
    int ok = block_free(ctx, base, n), all = 0;
    HALO_MPI(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, ctx->comm));
    if (!all) {
      from = (int64_t)base + 1;
      continue;
    }
    int at = 0; /* keep the blocks sorted by base */
    while (at < ctx->n_blocks && ctx->blocks[at].base < base) at++;
    memmove(&ctx->blocks[at + 1], &ctx->blocks[at],
            (size_t)(ctx->n_blocks - at) * sizeof *ctx->blocks);
    ctx->blocks[at].base = base;
    ctx->blocks[at].n = (int)n;
    ctx->n_blocks++;
    ctx->tag_next = (int)((int64_t)base + n <= ctx->tag_ub ? base + n : HALO_TAG_EXCHANGE_FIRST);
    *base_p = base;
    return HALO_SUCCESS;
  }
}

void halo_context_tags_release(halo_context *ctx, int base, int n) {
  for (int i = 0; i < ctx->n_blocks; i++)
    if (ctx->blocks[i].base == base && ctx->blocks[i].n == n) {
      memmove(&ctx->blocks[i], &ctx->blocks[i + 1],
              (size_t)(ctx->n_blocks - i - 1) * sizeof *ctx->blocks);
      ctx->n_blocks--;
      return;
    }
}
