/* The CUDA executor's private state, shared by its set-up (cuda_setup.c:
 * buffers, maps, requests, IPC handles, all made at plan time) and its run
 * (cuda_exec.c: the phases of an exchange). See cuda_exec.c for how a phase
 * moves its messages. */
#ifndef HALO_EXEC_CUDA_EXEC_H
#define HALO_EXEC_CUDA_EXEC_H

#include "halo_impl.h"

#include "exec/cuda.h"
#include "exec/exec.h"
#include "exec/nvshmem_lib.h"

typedef enum {
  CH_STAGED = 0,
  CH_MPI = 1,
  CH_NCCL = 2,
  CH_IPC = 3,
  CH_NVSHMEM = 4,
  CH_RMA = 5,
  N_CH = 6
} channel;

/* Why an exchange waits on the host (cuda_data.host_waits). */
enum { HOST_WAIT_MPI = 1, HOST_WAIT_IPC_EVENTS = 2, HOST_WAIT_HELPER = 4 };

typedef struct {
  int index; /* in the schedule's list */
  channel ch;
  int64_t buf_off;    /* values, in the device send or receive buffer */
  double *direct;     /* receive: lands here, in place; NULL: into the receive buffer */
  int ipc_slot;       /* ipc receive: the opened sender */
  const char *remote; /* ipc receive: the message in the sender's buffer, opened */
} cmsg;

typedef struct {
  int peer; /* plan rank */
  MPI_Request ready, done;
  cudaEvent_t remote_event; /* opened: the peer's ready (we receive) or done (we send) */
  /* signals on the GPU (ipc_signal "device"; neither side a helper): the
   * sender writes the exchange's number into the receiver's ready flag after
   * its pack, the receiver into the sender's done flag after its copy */
  int sig;
  uint64_t *flag;        /* ours, in device memory: the peer writes it */
  uint64_t *flag_remote; /* the peer's, opened: we write it */
} ipc_peer;

typedef struct {
  /* sends: packed in channel order into d_send */
  cmsg *send;
  int64_t n_pack, n_staged_send;
  int32_t *d_pack;
  int pack_run;      /* the whole pack is one run: a copy from the source or work */
  int nccl_from_run; /* ... and every send goes by NCCL: sent from the run, no copy */
  int64_t run_off;
  int run_from_work;
  double *d_send, *h_send;
  int64_t n_copy; /* forward: copies to itself */
  int32_t *d_copy_src, *d_copy_dst;
  /* receives */
  cmsg *recv;
  int64_t n_recvbuf, n_staged_recv;
  double *d_recv, *h_recv;
  double *staged_run_dst; /* forward: the staged receives land in one run here */
  int64_t n_unpack;       /* forward: the receives that are not in place */
  int32_t *d_unpack_src, *d_unpack_dst;
  /* reverse: the additions of the phase by destination (add_by_dst); a helper
   * adds on the host, in receive list order: from h_recv (src >= 0) or work */
  int64_t n_add_u;
  int32_t *d_add_dst, *d_add_ptr, *d_add_ref;
  int64_t n_add_group; /* set-up: the additions uploaded, to group on the device */
  int add_end_bit;     /* ... their destinations below 2^add_end_bit */
  int64_t n_add;
  int64_t *h_add_src, *h_add_dst;
  /* host MPI (staged and mpi channels) */
  int recv_req_begin, n_recv_req, send_req_begin, n_send_req;
  int has_device_mpi_recv;
  cudaEvent_t ev_packed, ev_up; /* sends may start; the staged receive buffer is free */
  int n_nccl_send, n_nccl_recv;
  /* ipc */
  int n_ipc_to, n_ipc_from; /* peers we send to / receive from over ipc */
  ipc_peer *ipc_to, *ipc_from;
  cudaEvent_t ev_ready, ev_done; /* interprocess: ours as sender, ours as receiver */
  /* the ipc receives copied by one kernel from the senders' buffers (a rank
   * with rows; a helper copies each to the host) */
  int n_pull;
  int64_t pull_max;
  halo_cuda_piece *d_pull;
  /* nvshmem: the phase's sends packed and put by one launch of nv_blocks
   * blocks (d_send and d_recv are symmetric), its receives' signals waited
   * for on the GPU (device arrays) */
  int n_nv_send, n_nv_recv, nv_blocks;
  halo_nv_put *d_nv_put;
  halo_nv_wait *d_nv_wait;
  /* rma: the phase's sends (rma_send values of d_send from rma_send_off) go
   * down into h_rma_send and are put into the receivers' windows (rma_disp:
   * where, per send); its receives land in the window at win_off and go up
   * into d_recv at rma_recv_off; the phase's neighbours as groups (PSCW) */
  int64_t rma_send, rma_send_off, rma_recv, rma_recv_off, win_off;
  double *h_rma_send;
  int64_t *rma_disp;
  MPI_Group rma_targets, rma_origins;
  halo_rma_posted rma_posted; /* with exchange_timeout_ms */
  cudaEvent_t ev_rma_down, ev_rma_up;
  int rma_up_pending;       /* ev_rma_up recorded since the last post */
  cudaEvent_t ev_t[4];      /* copy_timing: around the copy down, the copy up */
  int timed_down, timed_up; /* the last exchange recorded them */
} cphase;

typedef struct {
  cphase ph[HALO_MAX_PHASES];
  cudaStream_t xs, comp; /* the exchange stream, the plan's compute stream */
#if HALO_HAVE_NCCL
  ncclComm_t nccl;
#endif
  int nccl_gen;         /* the device's NCCL communicator number nccl is */
  cudaEvent_t ev_start; /* the source is ready (recorded on comp) */
  cudaEvent_t ev_end;   /* the exchange is done (recorded on xs) */
  cudaEvent_t ev_dst;   /* reverse: x_local may be added into (recorded on comp at the end) */
  int start_marked;     /* ev_start is recorded for the next begin already */
  int host_fwd;         /* a helper: work in pinned host memory, packed and unpacked on the host */
  int *peer_host_fwd;   /* of every plan rank */
  MPI_Request *req;     /* host MPI: receives of all phases first, then sends */
  int n_req, n_recv_req;
  double *work;
  double *arena; /* the device send buffers of all phases, carved from the communicator's
                    IPC chunks (halo_device_ipc_alloc): peers open each chunk once */
  size_t arena_bytes;
  int arena_chunk;
  int64_t arena_off;                         /* bytes into its chunk */
  int32_t *d_to_ghost, *d_slot_ptr, *d_slot; /* the ghost slots (leaves), on the device */
  int32_t *maps;   /* every index map of the executor, one allocation (map_batch) */
  const double *x; /* the source of the exchange in flight */
  double *dst;     /* forward: the caller's ghost slots (NULL: own); reverse: x_local */
  /* ipc signals on the GPU: the flags of every phase (ready per sender, then
   * done per receiver), carved from the IPC chunks; the number of the
   * exchange in flight, counted from a base agreed at set-up above any
   * number an earlier plan on this memory wrote */
  uint64_t *flags;
  size_t flags_bytes; /* the signals' (n_flags) and, where the executor forwards, ipc_abort */
  int64_t n_flags;
  uint64_t *ipc_abort; /* 0x7f7f...: released after a failure, later phases post nothing */
  int flags_chunk;
  int64_t flags_off;
  uint64_t epoch;
  /* nvshmem: the executor's symmetric chunk (send and receive buffers,
   * ready and done signals); its descriptors on the device: the exchange
   * counter, the puts and waits of the phases, the acknowledgements of all
   * phases (sent at the exchange's end) */
  char *nv_block;
  uint64_t *nv_sig; /* the ready and done signals (nv_n_sig), in nv_block */
  int64_t nv_n_sig;
  int nv_chunk, nv_active;
  void *nv_desc;
  uint64_t *nv_ep;
  unsigned int *nv_count; /* the blocks done of a fused end (zero between launches) */
  uint64_t *nv_abort;     /* nonzero: released after a failure, nothing more is put: nv_ep[2] */
  halo_nv_ack *nv_acks;
  int nv_n_acks;
  int nv_ended; /* the exchange's end went with the last phase's unpack */
  /* rma: the window (every phase's receives, pinned where CUDA can), kept in
   * the context's windows (freed collectively after the plan), and the
   * pinned send buffers of every phase */
  MPI_Win rma_win;
  int rma_win_id;
  double *rma_win_buf, *rma_send_buf;
  size_t rma_send_bytes;
  int rma_set;    /* the rma fields were initialised (groups, window) */
  int rma_pinned; /* the window's memory is registered with CUDA */
  /* what makes the host wait in an exchange on some rank (agreed at set-up):
   * HOST_WAIT_* bits; and whether ipc signals carry numbers on some rank */
  int host_waits, numbered;
  int timing; /* copy_timing: time the staged copies */
  double t_down, t_up;
  int64_t bytes_down, bytes_up, n_down, n_up;
} cuda_data;

static inline const halo_schedule *S(const halo_exec *ex) { return ex->sched; }

/*
 * A transport of the CUDA executor: what it does for its messages (the
 * cmsg of its channel) at each point of an exchange. The executor runs the
 * hooks of every transport, in the order of halo_cuda_channels, where a slot
 * is set:
 *   setup        plan time, after the buffers and maps (collective over the
 *                plan's communicator when the transport says so)
 *   arm          begin, per phase: what must be posted before any phase starts
 *   before_pack  phase k, before its pack may overwrite the send buffer
 *   send         phase k, after its pack: what goes without waiting
 *   receive      phase k, first part of its completion
 *   land         phase k, second part: the values are in the receive buffers
 *                (on the exchange stream) before the unpack
 *   complete     end, after the last phase
 *   destroy      what setup made
 * A communication helper (host_fwd) runs its phases on the host
 * (cuda_helper.c), with the mpi and ipc transports' requests and pulls.
 */
typedef struct {
  const char *name;
  /* the transport whose per-communicator state open makes on a device before its first plan
   * (collective over the device's communicator), e.g. the NCCL communicator; 0: none */
  halo_transport transport;
  halo_status (*open)(halo_device *d);
  halo_status (*setup)(halo_exec *ex, cuda_data *d);
  halo_status (*arm)(halo_exec *ex, cuda_data *d, int k);
  halo_status (*before_pack)(halo_exec *ex, cuda_data *d, int k);
  halo_status (*send)(halo_exec *ex, cuda_data *d, int k);
  halo_status (*receive)(halo_exec *ex, cuda_data *d, int k);
  halo_status (*land)(halo_exec *ex, cuda_data *d, int k);
  halo_status (*complete)(halo_exec *ex, cuda_data *d);
  void (*destroy)(halo_exec *ex, cuda_data *d);
} cuda_transport;

/** Host MPI with persistent requests, for the channels staged (pinned host
 *  buffers, copied down and up on the exchange stream) and mpi (device
 *  buffers handed to a CUDA-aware MPI): cuda_mpi.c. */
extern const cuda_transport halo_cuda_mpi;
/** ncclSend/ncclRecv grouped per phase: cuda_nccl.c. */
extern const cuda_transport halo_cuda_nccl;
/** CUDA IPC between the ranks of one machine: cuda_ipc.c. */
extern const cuda_transport halo_cuda_ipc;
/** NVSHMEM puts with signals, from the GPU: cuda_nvshmem.c. */
extern const cuda_transport halo_cuda_nvshmem;
/** MPI one-sided puts between pinned host buffers (staged): cuda_rma.c. */
extern const cuda_transport halo_cuda_rma;

/** The transports of the executor, in the order their hooks run
 *  (cuda_transports.c). */
#define HALO_CUDA_N_TRANSPORTS 5
extern const cuda_transport *const halo_cuda_transports[HALO_CUDA_N_TRANSPORTS];

/** Run hook h of every transport that has it (phase k where it takes one). */
#define HALO_CUDA_EACH(h, ...)                                                                     \
  do {                                                                                             \
    for (int halo_t_ = 0; halo_t_ < HALO_CUDA_N_TRANSPORTS; halo_t_++)                             \
      if (halo_cuda_transports[halo_t_]->h)                                                        \
        HALO_CHECK(halo_cuda_transports[halo_t_]->h(__VA_ARGS__));                                 \
  } while (0)

/** ipc: copy phase k's ipc receives from the senders' buffers (into device
 *  memory, or a helper's host memory) once they say their data is ready. */
halo_status halo_cuda_ipc_pull(halo_exec *ex, cuda_data *d, int k);
/* Whether a phase after the first sends: values this rank received may go
 * on to its peers (3-Step, Split and 2-Step forward, a reverse exchange adds
 * and passes on). */
static inline int halo_cuda_forwards(const halo_schedule *s) {
  for (int k = 1; k < s->n_phases; k++)
    for (int i = 0; i < s->phase[k].n_send; i++)
      if (s->phase[k].send[i].peer != s->rank) return 1;
  return 0;
}

/** ipc: add peer to a phase's list of ipc peers (once); its slot. */
halo_status halo_cuda_ipc_peer_add(ipc_peer **list, int *n, int peer, int *slot);

/** Staged copies, with copy_timing: add the last exchange's to the totals. */
halo_status halo_cuda_harvest_times(cuda_data *d, int n_phases);

/** A communication helper's phase k on the host (cuda_helper.c): start
 *  (pack from work, copies to itself, sends) and finish (ipc pulls, host
 *  MPI, unpack or add into work). */
halo_status halo_cuda_helper_start(halo_exec *ex, cuda_data *d, int k);
halo_status halo_cuda_helper_finish(halo_exec *ex, cuda_data *d, int k);

/** Make the executor's buffers, maps, requests and IPC state (ops.setup);
 *  on failure everything made is freed. */
halo_status halo_cuda_exec_setup(halo_exec *ex);
/** Free what halo_cuda_exec_setup() made (ops.destroy). */
void halo_cuda_exec_destroy(halo_exec *ex);

#endif
