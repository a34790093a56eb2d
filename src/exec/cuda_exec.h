/* The CUDA executor's private state, shared by its set-up (cuda_setup.c:
 * buffers, maps, the messages' channels and places, all made at plan time)
 * and its run (cuda_exec.c: the phases of an exchange). Each transport keeps
 * its own state, per executor and per phase, in its file (cuda_data.tx,
 * cphase.tp); nothing here is a transport's. See cuda_exec.c for how a phase
 * moves its messages. */
#ifndef HALO_EXEC_CUDA_EXEC_H
#define HALO_EXEC_CUDA_EXEC_H

#include "halo_impl.h"

#include "exec/cuda.h"
#include "exec/exec.h"

/* The channel a message travels by, also the order of the messages in the
 * packed send buffer. Channel 0 (CH_STAGED) goes through pinned host memory
 * by host MPI; a communication helper sends and receives everything through
 * that memory. Every other value is a transport's own, named in its file
 * (its CH_ constant), below HALO_CUDA_N_CH and told by no other transport;
 * the values follow the order of halo_cuda_transports. */
typedef int channel;
enum { CH_STAGED = 0, HALO_CUDA_N_CH = 6 };

/* Why an exchange waits on the host (cuda_data.host_waits): host MPI, a
 * transport's signals through events and MPI, a helper's phases. */
enum { HOST_WAIT_MPI = 1, HOST_WAIT_SIGNALS = 2, HOST_WAIT_HELPER = 4 };

/** The number of transports of the executor (halo_cuda_transports). */
#define HALO_CUDA_N_TRANSPORTS 5

typedef struct cuda_transport cuda_transport;

typedef struct {
  int index; /* in the schedule's list */
  channel ch;
  int64_t buf_off;   /* entries, in the device send or receive buffer */
  int64_t direct_at; /* receive: lands in place at this entry of the destination space (ghost
                        below n_ghost, else work); -1: into the receive buffer */
} cmsg;

typedef struct {
  /* sends: packed in channel order into d_send */
  cmsg *send;
  int64_t n_pack, n_staged_send; /* n_staged_send: the values of channel 0, first */
  int32_t *d_pack;
  int pack_run; /* the whole pack is one run: a copy from the source or work */
  int64_t run_off;
  int run_from_work;
  int transport_packs; /* a transport packs as it sends, or sends from the run: no pack here */
  double *d_send;
  int64_t n_copy; /* forward: copies to itself */
  int32_t *d_copy_src, *d_copy_dst;
  /* receives */
  cmsg *recv;
  int64_t n_recvbuf, n_staged_recv; /* n_staged_recv: the values that land in host memory */
  double *d_recv;
  int64_t staged_run_at; /* forward: the staged receives land in one run from this entry of the
                            destination space; -1: not one run */
  int64_t n_unpack;      /* forward: the receives that are not in place */
  int transport_unpacks; /* a transport unpacks as its receives end: no unpack here */
  int32_t *d_unpack_src, *d_unpack_dst;
  /* reverse: the additions of the phase by destination (add_by_dst); a helper
   * adds on the host, in receive list order: from its host receive buffer
   * (src >= 0) or work */
  int64_t n_add_u;
  int32_t *d_add_dst, *d_add_ptr, *d_add_ref;
  int64_t n_add_group; /* set-up: the additions uploaded, to group on the device */
  int add_end_bit;     /* ... their destinations below 2^add_end_bit */
  int64_t n_add;
  int64_t *h_add_src, *h_add_dst;
  /* each transport's state of this phase (cuda_transport.phase_bytes), in the
   * order of halo_cuda_transports; in cuda_data.tx's allocation */
  void *tp[HALO_CUDA_N_TRANSPORTS];
} cphase;

typedef struct {
  cphase ph[HALO_MAX_PHASES];
  cudaStream_t xs, comp;    /* the exchange stream, the plan's compute stream */
  const cuda_transport *tr; /* the transport that gives each message its channel */
  cudaEvent_t ev_start;     /* the source is ready (recorded on comp) */
  cudaEvent_t ev_end;       /* the exchange is done (recorded on xs) */
  cudaEvent_t ev_dst;       /* reverse: x_local may be added into (recorded on comp at the end) */
  int start_marked;         /* ev_start is recorded for the next begin already */
  int host_fwd;       /* a helper: work in pinned host memory, packed and unpacked on the host */
  int *peer_host_fwd; /* of every plan rank */
  double *work;
  double *arena; /* the device send buffers of all phases, carved from the communicator's
                    IPC chunks (halo_device_ipc_alloc): peers open each chunk once */
  size_t arena_bytes;
  int arena_chunk;
  int64_t arena_off;                         /* bytes into its chunk */
  int32_t *d_to_ghost, *d_slot_ptr, *d_slot; /* the ghost slots (leaves), on the device */
  int32_t *maps;   /* every index map of the executor, one allocation (map_batch) */
  const double *x; /* the source of the exchange in flight */
  /* the unit of the exchange in flight: bytes an entry (8: one double), the
   * word its copies move (ws bytes: divides eb and the caller's addresses),
   * and the buffers' entries, W doubles each (exec.unit_max_bytes) */
  int64_t eb, W;
  int ws;
  void *fadd; /* forward add into the executor's own slots: their values before it */
  /* the slots of the rank's own entries (leaves.h): forward, slot <- entry;
   * reverse, each entry's slots in slot order (n_own_u entries) */
  int32_t *d_own_slot, *d_own_index, *d_own_u, *d_own_ptr, *d_own_ref;
  int64_t n_own_u;
  const void *own_src; /* reverse: the caller's slots, the own slots' contributions */
  int fadd_on;         /* the exchange in flight adds into the executor's own slots (fadd) */
  double *dst;         /* forward: the caller's ghost slots (NULL: own); reverse: x_local */
  /* what makes the host wait in an exchange on some rank (agreed at set-up):
   * HOST_WAIT_* bits; and whether a transport's signals carry each
   * exchange's number on some rank (a captured graph would replay it) */
  int host_waits, numbered;
  /* each transport's private state (cuda_transport.exec_bytes, then
   * HALO_MAX_PHASES times its phase_bytes: cphase.tp), of tx_of[i] */
  void *tx[HALO_CUDA_N_TRANSPORTS];
  const cuda_transport *tx_of[HALO_CUDA_N_TRANSPORTS];
} cuda_data;

static inline const halo_schedule *S(const halo_exec *ex) { return ex->sched; }

/** Entry i of a buffer, in the unit of the exchange in flight. */
static inline char *halo_cuda_at(const void *base, int64_t i, const cuda_data *d) {
  return (char *)base + i * d->eb;
}
/** Entry `at` of the destination space (the ghosts, then work). */
static inline char *halo_cuda_dst_at(const halo_exec *ex, const cuda_data *d, int64_t at) {
  return at < ex->sched->n_ghost ? halo_cuda_at(ex->ghost, at, d)
                                 : halo_cuda_at(d->work, at - ex->sched->n_ghost, d);
}
/** Where receive c of phase p lands: in place, or in the receive buffer. */
static inline char *halo_cuda_recv_at(const halo_exec *ex, const cuda_data *d, const cphase *p,
                                      const cmsg *c) {
  return c->direct_at >= 0 ? halo_cuda_dst_at(ex, d, c->direct_at)
                           : halo_cuda_at(p->d_recv, c->buf_off, d);
}

/** Transport t's state of the executor, and of its phase k (NULL where the
 *  executor has none: its set-up failed before it was made). */
static inline void *halo_cuda_tx(const cuda_data *d, const cuda_transport *t) {
  for (int i = 0; i < HALO_CUDA_N_TRANSPORTS; i++)
    if (d->tx_of[i] == t) return d->tx[i];
  return NULL;
}
static inline void *halo_cuda_tp(const cuda_data *d, const cuda_transport *t, int k) {
  for (int i = 0; i < HALO_CUDA_N_TRANSPORTS; i++)
    if (d->tx_of[i] == t) return d->ph[k].tp[i];
  return NULL;
}

/* Where the plan's ranks are, for a transport's choice of channels. */
typedef struct {
  MPI_Group plan, machine; /* the plan's communicator, the ranks of this machine */
} cuda_groups;

/*
 * A transport of the CUDA executor: what it does for its messages (the
 * cmsg of its channels) at each point of an exchange. The executor runs the
 * hooks of every transport, in the order of halo_cuda_transports, where a
 * slot is set:
 *   layout       plan time, on this rank alone, once every message has its
 *                channel and place (counts, lists of peers)
 *   phase_local  plan time, on this rank alone, phase k's state after its
 *                buffers and maps (both in the executor's local set-up, whose
 *                failure is agreed)
 *   setup        plan time, after the buffers and maps (collective over the
 *                plan's communicator when the transport says so)
 *   host_waits   plan time: the HOST_WAIT_* bits of this rank's exchanges,
 *                and (*numbered) whether its signals carry their numbers
 *   setup_end    plan time, after the agreement of host_waits
 *   begin        begin, before anything is enqueued
 *   arm          begin, per phase: what must be posted before any phase starts
 *   before_pack  phase k, before its pack may overwrite the send buffer
 *   send         phase k, after its pack: what goes without waiting
 *   receive      phase k, first part of its completion
 *   land         phase k, second part: the values are in the receive buffers
 *                (on the exchange stream) before the unpack
 *   complete     end, after the last phase
 *   unblock      after a failed exchange (once): abort what may wait without
 *                end (a communicator, an epoch)
 *   signals      after a failed exchange: the signals in this rank's memory
 *                its streams may wait for (released by the executor), and
 *                the abort word a forwarding executor writes first
 *   destroy      what setup made
 * The transport whose serves names the plan's transport gives every message
 * its channel (channel); without one, the first of the table. A
 * communication helper (host_fwd) runs its phases on the host
 * (cuda_helper.c), with the host MPI and ipc transports' requests and pulls.
 */
struct cuda_transport {
  const char *name;
  /* the transport whose per-communicator state open makes on a device before its first plan
   * (collective over the device's communicator), e.g. the NCCL communicator; 0: none */
  halo_transport transport;
  halo_status (*open)(halo_device *d);
  /* ... or that state made in the background (collective; the plan takes another transport
   * until it is made: nccl.background), and this rank's view of it: 1 made, 0 under way, -1
   * failed (why), 2 neither made nor started. NULL: open alone */
  halo_status (*open_background)(halo_device *d);
  int (*state)(const halo_device *d, char *why, size_t len);
  /* the plan transports whose messages this one places (0: none) */
  halo_transport serves[2];
  /* as the plan's transport: a rank without rows keeps device buffers (no
   * helper on the host); its set-up makes the send and receive buffers
   * (symmetric memory); its receives never land in place; what a plan that
   * waits for host MPI is told besides */
  int device_helpers, symmetric, recv_buffered;
  /* as the plan's transport: 1 moves entries of any unit (cuda_data.eb), 0 one double only */
  int units;
  const char *host_mpi_note;
  /* its private state: per executor, per phase (zeroed at first) */
  size_t exec_bytes, phase_bytes;
  /* the channel of a message to (send = 1) or from peer */
  halo_status (*channel)(const halo_exec *ex, const cuda_data *d, const cuda_groups *g, int peer,
                         int send, channel *ch_p);
  halo_status (*layout)(halo_exec *ex, cuda_data *d);
  halo_status (*phase_local)(halo_exec *ex, cuda_data *d, int k);
  halo_status (*setup)(halo_exec *ex, cuda_data *d);
  int (*host_waits)(const halo_exec *ex, const cuda_data *d, int *numbered);
  halo_status (*setup_end)(halo_exec *ex, cuda_data *d);
  halo_status (*begin)(halo_exec *ex, cuda_data *d);
  halo_status (*arm)(halo_exec *ex, cuda_data *d, int k);
  halo_status (*before_pack)(halo_exec *ex, cuda_data *d, int k);
  halo_status (*send)(halo_exec *ex, cuda_data *d, int k);
  halo_status (*receive)(halo_exec *ex, cuda_data *d, int k);
  halo_status (*land)(halo_exec *ex, cuda_data *d, int k);
  halo_status (*complete)(halo_exec *ex, cuda_data *d);
  /* ops.copy_times and ops.stream_ordered, the transport's part */
  halo_status (*copy_times)(halo_exec *ex, cuda_data *d, double *t_down, double *t_up,
                            int64_t *bytes_down, int64_t *bytes_up);
  halo_status (*stream_ordered)(const halo_exec *ex, const cuda_data *d, int capture);
  void (*unblock)(halo_exec *ex, cuda_data *d);
  /* 1 and *sig_p, *bytes_p, *abort_p (NULL: none) where there are signals; 0 where none */
  int (*signals)(halo_exec *ex, cuda_data *d, void **sig_p, size_t *bytes_p, uint64_t **abort_p);
  void (*destroy)(halo_exec *ex, cuda_data *d);
};

/** The transports of the executor, in the order their hooks run
 *  (cuda_transports.c, which names them; each is defined in its file). */
extern const cuda_transport *const halo_cuda_transports[HALO_CUDA_N_TRANSPORTS];

/** Run hook h of every transport that has it (phase k where it takes one). */
#define HALO_CUDA_EACH(h, ...)                                                                     \
  do {                                                                                             \
    for (int halo_t_ = 0; halo_t_ < HALO_CUDA_N_TRANSPORTS; halo_t_++)                             \
      if (halo_cuda_transports[halo_t_]->h)                                                        \
        HALO_CHECK(halo_cuda_transports[halo_t_]->h(__VA_ARGS__));                                 \
  } while (0)

/* Whether a phase after the first sends: values this rank received may go
 * on to its peers (3-Step, Split and 2-Step forward, a reverse exchange adds
 * and passes on). */
static inline int halo_cuda_forwards(const halo_schedule *s) {
  for (int k = 1; k < s->n_phases; k++)
    for (int i = 0; i < s->phase[k].n_send; i++)
      if (s->phase[k].send[i].peer != s->rank) return 1;
  return 0;
}

/** A communication helper's phase k on the host (cuda_helper.c): start
 *  (pack from work, copies to itself, sends) and finish (pulls, host MPI,
 *  unpack or add into work). */
halo_status halo_cuda_helper_start(halo_exec *ex, cuda_data *d, int k);
halo_status halo_cuda_helper_finish(halo_exec *ex, cuda_data *d, int k);

/** Make the executor's buffers, maps, channels and the transports' state
 *  (ops.setup); on failure everything made is freed. */
halo_status halo_cuda_exec_setup(halo_exec *ex);
/** Free what halo_cuda_exec_setup() made (ops.destroy). */
void halo_cuda_exec_destroy(halo_exec *ex);

#endif
