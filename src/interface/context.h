/* One context per communicator: what the plans (and matrices) of a user's
 * communicator share, made by the first of them and cached on the
 * communicator with an MPI attribute, as PETSc caches its inner
 * communicator:
 *
 *   comm        the library's one copy of the communicator: set-up protocols
 *               and exchanges, on tags that never meet (tags.h)
 *   topologies  the nodes of the communicator, one per ranks_per_node asked
 *               (0: the nodes of MPI), with their node communicators
 *   device      the GPU: its streams, the ranks sharing it, the NCCL
 *               communicator (made by the first device plan)
 *   tags        the allocator of the exchanges' tags (tags.h)
 *   params      the model's parameter sets its plans read (read once)
 *   memo        strategy AUTO's choices, for later plans of one pattern
 *
 * The attribute holds one reference; every matrix and plan holds one. The
 * context lives until the user's communicator is freed (or MPI_Finalize) and
 * the last plan is destroyed. */
#ifndef HALO_INTERFACE_CONTEXT_H
#define HALO_INTERFACE_CONTEXT_H

#include "exec/device.h"
#include "exec/exec.h"
#include "model/choose.h"
#include "plan/topology.h"

/* Parameter sets and AUTO's choices a context keeps (src/interface/auto.c). */
#define HALO_CONTEXT_PARAMS     8
#define HALO_CONTEXT_PARAMS_KEY 1040
#define HALO_CONTEXT_MEMO       32

typedef struct halo_context_s halo_context;

struct halo_context_s {
  int refs;
  MPI_Comm outer; /* the user's communicator, MPI_COMM_NULL once it is freed */
  MPI_Comm comm;  /* the library's copy */
  int rank, size;
  int n_topo;
  halo_topology **topo; /* by ranks_per_node asked (topo_k) */
  int *topo_k;
  halo_device *device;
  void *transport_state[HALO_N_TRANSPORTS]; /* each transport's per-communicator state
                                               (transport.h), by its enumerator */
  /* the tag allocator: live blocks [base, base+n), sorted by base */
  int tag_ub, tag_next;
  int n_blocks, cap_blocks;
  struct {
    int base, n;
  } * blocks;
  halo_context *next; /* contexts cached on a communicator (released at MPI_Finalize) */
  /* the parameter sets plans read, by what named them: read once */
  int n_params;
  struct {
    char key[HALO_CONTEXT_PARAMS_KEY];
    halo_params p;
  } params[HALO_CONTEXT_PARAMS];
  /* strategy AUTO's choices, by the key of a plan's pattern and options on
   * this rank, and the sequence number of the choice (the same on every rank) */
  int transport_made[HALO_N_TRANSPORTS]; /* a device plan opened this transport on the
                                            context's device: its set-up is paid (AUTO) */
  int n_memo, memo_seq;
  struct {
    uint64_t key;
    int seq;
    halo_choice choice;
  } memo[HALO_CONTEXT_MEMO];
};

/**
 * The context of a user's communicator: the cached one (a new reference), or
 * a new one cached on it. Collective the first time for a communicator; every
 * rank must then call it. HALO_ERR_INVALID_ARG for MPI_COMM_NULL.
 */
halo_status halo_context_get(MPI_Comm comm, halo_context **ctx_p);

/** Take another reference. */
void halo_context_retain(halo_context *ctx);

/** Drop a reference (NULL-safe; sets *ctx_p to NULL); the last one frees. */
void halo_context_release(halo_context **ctx_p);

/** The nodes for ranks_per_node (0: MPI's), made the first time it is asked
 *  (collective then), kept by the context. */
halo_status halo_context_topology(halo_context *ctx, int ranks_per_node, const halo_topology **t_p);

/** The device state, made by the first device plan (collective then) on
 *  device_id (-1: choose); a later plan asking another device fails. */
halo_status halo_context_device(halo_context *ctx, int device_id, halo_device **dev_p);

/**
 * A block of n tags free on every rank of the communicator, for one plan's
 * executors. Collective. HALO_ERR_OUT_OF_RANGE when no block of n tags is
 * free below MPI_TAG_UB (too many plans alive).
 */
halo_status halo_context_tags_reserve(halo_context *ctx, int64_t n, int *base_p);

/** Give a block back (not collective: a plan's destruction). */
void halo_context_tags_release(halo_context *ctx, int base, int n);

#endif
