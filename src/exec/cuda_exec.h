/* The CUDA executor's private state, shared by its set-up (cuda_setup.c:
 * buffers, maps, requests, IPC handles, all made at plan time) and its run
 * (cuda_exec.c: the phases of an exchange). See cuda_exec.c for how a phase
 * moves its messages. */
#ifndef HALO_EXEC_CUDA_EXEC_H
#define HALO_EXEC_CUDA_EXEC_H

#include "halo_impl.h"

#include "exec/cuda.h"
#include "exec/exec.h"

typedef enum { CH_STAGED = 0, CH_MPI = 1, CH_NCCL = 2, CH_IPC = 3, N_CH = 4 } channel;

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
  cudaEvent_t ev_t[4];           /* copy_timing: around the copy down, the copy up */
  int timed_down, timed_up;      /* the last exchange recorded them */
} cphase;

typedef struct {
  cphase ph[HALO_MAX_PHASES];
  cudaStream_t xs, comp; /* the exchange stream, the plan's compute stream */
#if HALO_HAVE_NCCL
  ncclComm_t nccl;
#endif
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
  int64_t arena_off; /* bytes into its chunk */
  int32_t *d_to_ghost, *d_slot_ptr, *d_slot; /* the ghost slots (leaves), on the device */
  int32_t *maps; /* every index map of the executor, one allocation (map_batch) */
  const double *x; /* the source of the exchange in flight */
  double *dst;     /* forward: the caller's ghost slots (NULL: own); reverse: x_local */
  int timing;      /* copy_timing: time the staged copies */
  double t_down, t_up;
  int64_t bytes_down, bytes_up, n_down, n_up;
} cuda_data;


static inline const halo_schedule *S(const halo_exec *ex) { return ex->sched; }

/** Make the executor's buffers, maps, requests and IPC state (ops.setup);
 *  on failure everything made is freed. */
halo_status halo_cuda_exec_setup(halo_exec *ex);
/** Free what halo_cuda_exec_setup() made (ops.destroy). */
void halo_cuda_exec_destroy(halo_exec *ex);

#endif
