/* Executor: interprets a schedule through a backend's ops table. The core
 * knows no backend types: a backend keeps its state behind ex->data.
 *
 * One executor runs one direction of one exchange of a plan:
 *   forward  (sched->add == 0): begin(x_local, out) reads the owned entries,
 *            end() delivers the ghost values into out, the caller's ghost
 *            slots (NULL: the executor's own, ex->slots);
 *   reverse  (sched->add == 1, a reversed schedule): begin(contrib, x_local)
 *            reads the ghost slots' contributions, end() adds them into the
 *            owners' x_local, in the order of the schedule (schedule.h).
 * Buffers, persistent requests, streams and events are made at set-up; begin
 * and end allocate nothing. */
#ifndef HALO_EXEC_EXEC_H
#define HALO_EXEC_EXEC_H

#include "exec/device.h"
#include "plan/leaves.h"
#include "plan/schedule.h"

typedef struct halo_exec_s halo_exec;

/** The windows of the rma transport on one communicator, kept by its
 *  context. MPI_Win_free is collective, but plans are destroyed in any order
 *  on each rank: a window its executor released is freed at the next
 *  collective point where every rank released it (halo_rma_windows_collect,
 *  at the creation of a plan) or with the context, in the order they were
 *  made, so that every rank frees the same windows in the same order. */
typedef struct halo_rma_windows_s halo_rma_windows;

/** A window's memory that its maker changed (device rma: pinned for the
 *  GPU's copies): release(base) undoes that just before the window is freed;
 *  base NULL: nothing to undo. */
typedef struct {
  void *base;
  void (*release)(void *);
} halo_rma_memory;

/** Keep a window made collectively over comm (the context's) at plan time;
 *  its id. */
HALO_MODULE_API halo_status halo_rma_windows_add(void **slot, MPI_Comm comm, MPI_Win win,
                                                 halo_rma_memory mem, int *id);
/** An exchange on window id failed on this rank with an epoch that may still
 *  be open: the window is never freed (MPI_Win_free would be erroneous),
 *  by any rank (agreed at the context's end). */
HALO_MODULE_API void halo_rma_windows_break(halo_rma_windows *w, int id);
/** Forget the window added last without freeing it (its set-up failed on a
 *  peer: every rank frees it at once). */
HALO_MODULE_API void halo_rma_windows_drop_last(halo_rma_windows *w);
/** This rank is done with window id: freed at the next collection. */
HALO_MODULE_API void halo_rma_windows_release(halo_rma_windows *w, int id);

/** Collective over comm: free the windows every rank released. */
halo_status halo_rma_windows_collect(halo_rma_windows *w, MPI_Comm comm);
/** The windows not freed yet (tests). */
int halo_rma_windows_count(const halo_rma_windows *w);
/** Collective: free every window (all released: the context's plans are
 *  gone) but those broken on some rank. */
void halo_rma_windows_free(halo_rma_windows **w_p);

/** The unit of the exchange in flight (halo_unit, halo_op): its entries'
 *  bytes, the scalar its adds add (complex: double) and how many per entry,
 *  and the operation. halo_exec_unit_default: one double, forward insert,
 *  reverse add, the executors' own road. */
typedef struct {
  int64_t bytes;  /* per entry */
  int scalar;     /* HALO_TYPE_DOUBLE, FLOAT, INT32 or INT64 */
  int64_t per;    /* scalars per entry (k; 2k for complex) */
  int op;         /* HALO_OP_INSERT or HALO_OP_ADD */
  int is_default; /* one double with the direction's own operation */
} halo_xunit;

/** A unit's halo_xunit for the direction (reverse 0 or 1); -1 where unknown
 *  (type or k). */
int halo_xunit_make(halo_unit u, halo_op op, int reverse, halo_xunit *x);

/** n entries of unit u from in into o, in host memory: copied
 *  (HALO_OP_INSERT) or added value by value. */
HALO_MODULE_API void halo_xunit_apply(const halo_xunit *u, void *o, const void *in, int64_t n);

/** What a plan gives its executors. */
typedef struct {
  halo_transport transport;  /* HOST, or a device transport resolved (never AUTO) */
  MPI_Comm comm;             /* global phases, and the set-up messages (IPC handles) */
  MPI_Comm node_comm;        /* node phases */
  int tag_base, tag_stride;  /* this executor's tags: phase k uses [base + k*stride, +stride) */
  int max_count;             /* largest count of one MPI message */
  int64_t timeout_ms;        /* the longest wait for an exchange's MPI requests; 0: none */
  const halo_leaves *leaves; /* ghost slots against the schedule's ghosts; NULL: the same */
  /* device plans */
  halo_device *dev;
  void *comp;        /* the plan's compute stream (cudaStream_t) */
  halo_timeline *tl; /* NULL: no timeline */
  int copy_timing;   /* time the staged copies */
  int ipc_signal;    /* ipc: 0 events and MPI, 1 flags on the GPU, 2 flags with a GPU per rank */
  void **state;      /* the transport's slot in the communicator's context (transport.h): rma's
                        windows */
  int64_t unit_max; /* the bytes of the largest entry its buffers hold (setting exec.unit_max_bytes;
                       backends with units only) */
} halo_exec_config;

/** A backend: a const table of functions. Empty slots are reported as
 *  "backend X does not implement Y". */
typedef struct {
  const char *name;
  /** 1: begin runs any unit (ex->unit, set before it); 0: one double only,
   *  forward insert and reverse add */
  int units;
  /** 1: the backend copies the leaves' own slots itself (leaves.h); 0: the
   *  plan does, in host memory, after begin */
  int own_slots;
  /** With units: whether this executor runs unit u (NULL: every unit);
   *  HALO_ERR_UNSUPPORTED saying why not. Changes nothing. */
  halo_status (*unit_ok)(const halo_exec *ex, const halo_xunit *u);
  /** Allocate buffers, persistent requests, ... for ex->sched (plan time). */
  halo_status (*setup)(halo_exec *ex);
  /** Start: src is read (x_local forward, the ghost slots' contributions in
   *  reverse), dst is where the end delivers (the caller's ghost slots or
   *  NULL forward, x_local in reverse). No allocation; requests are made
   *  only where a backend binds them to an address it has not seen among
   *  its last few (host: a source or ghost buffer, see host.c). */
  halo_status (*begin)(halo_exec *ex, const double *src, double *dst);
  /** Complete: deliver into dst. */
  halo_status (*end)(halo_exec *ex);
  /** Device: record now, on the compute stream, the point the next begin
   *  starts from (on = 0 forgets a mark that no begin used). NULL: no-op. */
  halo_status (*mark_start)(halo_exec *ex, int on);
  /** Device, copy_timing: the staged copies' seconds and bytes since the
   *  last call. NULL: not timed. */
  halo_status (*copy_times)(halo_exec *ex, double *t_down, double *t_up, int64_t *bytes_down,
                            int64_t *bytes_up);
  /** Device: whether an exchange runs in stream order alone (no host wait
   *  between its start and its end, on any rank: the answer is agreed at set
   *  up), and, with capture, can be captured into a CUDA graph and replayed;
   *  HALO_ERR_UNSUPPORTED saying why not. NULL: the host runs it. */
  halo_status (*stream_ordered)(const halo_exec *ex, int capture);
  /** After an exchange failed or timed out: release for good what the GPU
   *  waits for from peers (this rank's signals written past any number a
   *  peer could write, NCCL's communicator aborted), so that the streams
   *  drain; mark an rma window whose epoch may be open. The executor's values
   *  are then meaningless; it is never used again. Returns 1 where released;
   *  0 where a wait is left as it was: an executor that forwards values it
   *  receives (a phase after the first sends) whose abort word could not be
   *  written (its next phase, once released, would hand its peers values
   *  never received, with signals that say they are right); -1 where the
   *  release was written but did not run within exchange_timeout_ms (1 s
   *  without one): it queued behind the waits it releases. NULL: nothing
   *  waits on the GPU. again: the signals written once more, and nothing
   *  else (ipc's flags are written, not added to: a peer's write of an
   *  earlier exchange that lands after the release lowers them again). */
  int (*unblock)(halo_exec *ex, int again);
  /** Release everything setup made. */
  void (*destroy)(halo_exec *ex);
} halo_exec_ops;

struct halo_exec_s {
  const halo_exec_ops *ops;
  const halo_schedule *sched; /* owned by the plan */
  halo_exec_config cfg;
  /* Per phase: the communicator of its scope and the peers of its sends and
   * receives as ranks of that communicator. */
  MPI_Comm phase_comm[HALO_MAX_PHASES];
  int *peer_send[HALO_MAX_PHASES];
  int *peer_recv[HALO_MAX_PHASES];
  /* forward: the schedule's ghosts (n_ghost values), where receives land;
   * reverse with leaves: the contributions summed per ghost (the source) */
  double *ghost;
  double *slots;   /* forward: the executor's own ghost slots (== ghost without leaves) */
  halo_xunit unit; /* the exchange in flight's (backends with units) */
  void *data;      /* backend state */
};

/** Host backend: MPI two-sided on host buffers, persistent requests. */
extern const halo_exec_ops halo_exec_host_ops;
/** CUDA backend: device buffers, pack/unpack kernels; staged, NCCL,
 *  CUDA-aware MPI and CUDA IPC transports (without CUDA its setup says it is
 *  not compiled in). */
const halo_exec_ops *halo_exec_cuda(void);

/** Host backend over MPI one-sided communication (transport rma). */
extern const halo_exec_ops halo_exec_rma_ops;

/** The backend that runs a transport (resolved, never AUTO) on memory; NULL
 *  for device memory where halo's CUDA module is not loaded. */
const halo_exec_ops *halo_exec_backend(halo_memory memory, halo_transport transport);

/** The group of the distinct peers other than self among n messages (plan
 *  ranks, of the group all); MPI_GROUP_NULL when there are none. */
HALO_MODULE_API halo_status halo_rma_peer_group(MPI_Group all, const halo_msg *m, int n, int self,
                                                MPI_Group *g);
/** Every receiver tells each sender where each of its messages lands in its
 *  window: phase k's messages from other ranks back to back from win_off[k],
 *  in receive list order; disp[k][i] gets the place of send i of phase k.
 *  Collective over the plan's communicator; buffers agreed before any
 *  message goes. */
HALO_MODULE_API halo_status halo_rma_exchange_disp(halo_exec *ex, const int64_t *win_off,
                                                   int64_t *const *disp);

/** A phase's epochs within exchange_timeout_ms. MPI has no timed wait for
 *  PSCW: an origin's MPI_Win_complete may wait for its targets' posts, a
 *  target's MPI_Win_wait for its origins' completions. With a limit, a
 *  target tells each origin with a 0-byte message that it posted, and an
 *  origin opens its access epoch only once every target said so, within the
 *  limit; a target's wait polls MPI_Win_test until the limit. Without a
 *  limit (timeout_ms 0) nothing is made and the calls are plain. */
typedef struct {
  MPI_Request *req; /* persistent: 0-byte sends to the origins, then receives from the targets */
  int n_origins, n_targets;
} halo_rma_posted;

/** Phase k's requests, with the peers of its groups (halo_rma_peer_group of
 *  its sends and receives). */
HALO_MODULE_API halo_status halo_rma_posted_setup(const halo_exec *ex, int k, halo_rma_posted *p);
HALO_MODULE_API void halo_rma_posted_free(halo_rma_posted *p);
/** After MPI_Win_post: tell the origins (started, completed later). */
HALO_MODULE_API halo_status halo_rma_posted_start(halo_rma_posted *p);
/** Before MPI_Win_start: every target posted, within the limit. */
HALO_MODULE_API halo_status halo_rma_targets_posted(const halo_exec *ex, halo_rma_posted *p);
/** The exposure epoch's end (MPI_Win_wait), within the limit. */
HALO_MODULE_API halo_status halo_rma_epoch_wait(const halo_exec *ex, MPI_Win win,
                                                halo_rma_posted *p);

/** Create an executor for a schedule (plan time). Collective over cfg->comm:
 *  a failure on one rank ends it on every rank. */
halo_status halo_exec_create(const halo_exec_ops *ops, const halo_schedule *s,
                             const halo_exec_config *cfg, halo_exec *ex);
halo_status halo_exec_begin(halo_exec *ex, const double *src, double *dst);
/** Whether the executor runs unit u: HALO_ERR_UNSUPPORTED where its backend
 *  has no units (any but the default) or refuses u (ops.unit_ok), naming
 *  what does; HALO_ERR_INVALID_ARG past cfg.unit_max. */
halo_status halo_exec_unit_ok(const halo_exec *ex, const halo_xunit *u);
/** halo_exec_begin with unit u (arrays of u's entries), checked by
 *  halo_exec_unit_ok. */
halo_status halo_exec_begin_unit(halo_exec *ex, const halo_xunit *u, const void *src, void *dst);
halo_status halo_exec_end(halo_exec *ex);
halo_status halo_exec_mark_start(halo_exec *ex, int on);
/** ops.stream_ordered, or HALO_ERR_UNSUPPORTED for a backend run by the host. */
halo_status halo_exec_stream_ordered(const halo_exec *ex, int capture);
/** See halo_exec_ops.unblock (1 where nothing waits on the GPU, 0, -1). */
int halo_exec_unblock(halo_exec *ex, int again);
void halo_exec_destroy(halo_exec *ex);

/**
 * The tags one executor of schedule s needs per phase: the most requests
 * between one pair of ranks in one phase (messages are split at max_count
 * values; several messages may share a pair) plus two for the IPC signals.
 * Executors of one plan use the largest over ranks and directions.
 */
int halo_exec_tag_stride(const halo_schedule *s, int max_count);

/** Tag of request seq between a pair of ranks in phase k: requests are
 *  numbered in list order on both sides, so that matching does not depend on
 *  the order in which MPI_Startall starts them. */
static inline int halo_exec_tag(const halo_exec *ex, int k, int seq) {
  return ex->cfg.tag_base + k * ex->cfg.tag_stride + seq;
}

/** The tags of the IPC signals of phase k: data ready (sender to receiver)
 *  and copy done (back). */
static inline int halo_exec_tag_ready(const halo_exec *ex, int k) {
  return ex->cfg.tag_base + k * ex->cfg.tag_stride + ex->cfg.tag_stride - 2;
}
static inline int halo_exec_tag_done(const halo_exec *ex, int k) {
  return ex->cfg.tag_base + k * ex->cfg.tag_stride + ex->cfg.tag_stride - 1;
}

/** Wait for n MPI requests: MPI_Waitall, or within cfg.timeout_ms, past
 *  which HALO_ERR_TIMEOUT (a peer failed or stopped; the requests are left
 *  as they are: the plan is not to be used again). */
HALO_MODULE_API halo_status halo_exec_waitall(const halo_exec *ex, int n, MPI_Request *req);

/** Requests a message of count values needs (split at max_count values). */
static inline int halo_exec_chunks(const halo_exec *ex, int64_t count) {
  int64_t c = ex->cfg.max_count;
  return (int)((count + c - 1) / c);
}

/** For every message of a list, the number of its first request among the
 *  requests with the same peer, in list order (seq[i]). */
HALO_MODULE_API halo_status halo_exec_sequence(const halo_exec *ex, const halo_msg *m, int n,
                                               int *seq);

/** Persistent requests of one message of count values at buf, one per piece
 *  of at most max_count values, tagged seq, seq+1, ... of phase k. */
HALO_MODULE_API halo_status halo_exec_init_chunks(const halo_exec *ex, MPI_Request *req,
                                                  int is_send, double *buf, int64_t count, int peer,
                                                  int k, int seq, MPI_Comm comm);
/** The same for count entries of `bytes` bytes each, sent as datatype dt (one
 *  entry). */
HALO_MODULE_API halo_status halo_exec_init_chunks_typed(const halo_exec *ex, MPI_Request *req,
                                                        int is_send, void *buf, int64_t count,
                                                        MPI_Datatype dt, int64_t bytes, int peer,
                                                        int k, int seq, MPI_Comm comm);

/** Whether count unpack indices land on consecutive entries of one buffer
 *  (the ghosts, below n_ghost, or the work buffer, above), so that the
 *  message can be received in place (never in an add schedule). */
HALO_MODULE_API int halo_exec_is_run(const halo_schedule *s, const int64_t *idx, int64_t count);

/** Reverse: what phase ph adds, in the order of its receive list. For each
 *  received value, src is its position in the receive buffer (message i at
 *  recv_off[i]; recv_off NULL: the messages from other ranks back to back)
 *  or -1 - its source index for a copy to itself; dst is where it is added.
 *  src and dst hold ph->recv_total entries. */
HALO_MODULE_API halo_status halo_exec_add_order(const halo_schedule *s, const halo_phase *ph,
                                                const int64_t *recv_off, int64_t *src,
                                                int64_t *dst);
/** The same in 32-bit indices (the caller checked they fit), and the largest
 *  destination in *most (-1 if none). */
HALO_MODULE_API halo_status halo_exec_add_order32(const halo_schedule *s, const halo_phase *ph,
                                                  const int64_t *recv_off, int32_t *src,
                                                  int32_t *dst, int64_t *most);

#endif
