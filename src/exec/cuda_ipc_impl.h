/* Transport ipc of the CUDA executor, private to its two files: its state
 * per executor and per phase, and what its set-up (cuda_ipc_setup.c: the
 * handles exchanged and opened, the flags, the pull kernel's pieces, the
 * stream memory operations' entry points) gives its run (cuda_ipc.c: the
 * phases' signals and copies, the hooks' table). */
#ifndef HALO_EXEC_CUDA_IPC_IMPL_H
#define HALO_EXEC_CUDA_IPC_IMPL_H

#include "exec/cuda_exec.h"

enum { CH_IPC = 3 }; /* the receiver copies from the sender's device buffer */

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

/* The executor's: the flags of the signals on the GPU of every phase (ready
 * per sender, then done per receiver), carved from the IPC chunks; the
 * number of the exchange in flight, counted from a base agreed at set-up
 * above any number an earlier plan on this memory wrote. */
typedef struct {
  uint64_t *flags;
  size_t flags_bytes; /* the signals' (n_flags) and, where the executor forwards, ipc_abort */
  int64_t n_flags;
  uint64_t *ipc_abort; /* 0x7f7f...: released after a failure, later phases post nothing */
  int flags_chunk;
  int64_t flags_off;
  uint64_t epoch;
  int64_t pull_eb; /* the entry's bytes the pulls' pieces were made for */
} ipc_exec;

/* A phase's. */
typedef struct {
  int n_ipc_to, n_ipc_from; /* peers we send to / receive from over ipc */
  ipc_peer *ipc_to, *ipc_from;
  cudaEvent_t ev_ready, ev_done; /* interprocess: ours as sender, ours as receiver */
  /* per receive of the phase (where it has ipc receives): the opened sender
   * (its slot in ipc_from), the message in the sender's buffer, opened */
  int *ipc_slot;
  const char **remote;   /* the sender's send buffer of the phase */
  int64_t *remote_entry; /* the message's first entry in it */
  /* the ipc receives copied by one kernel from the senders' buffers (a rank
   * with rows; a helper copies each to the host) */
  int n_pull;
  int64_t pull_max;
  halo_cuda_piece_u *d_pull;
} ipc_phase;

/* An executor's state of the transport, its own and its phases' (cuda_ipc.c
 * finds them: the set-up does not name the transport's table). x NULL: none
 * made. */
typedef struct {
  ipc_exec *x;
  ipc_phase *p[HALO_MAX_PHASES];
} ipc_state;

/* The largest word (8, 4, 2 or 1 bytes) of an entry of eb bytes: the pull
 * kernel's. */
static inline int halo_ipc_entry_word(int64_t eb) {
  return eb % 8 == 0 ? 8 : eb % 4 == 0 ? 4 : eb % 2 == 0 ? 2 : 1;
}

/* ---- set-up (cuda_ipc_setup.c) ---- */

/** The channel of a message (cuda_transport.channel). */
halo_status halo_ipc_channel(const halo_exec *ex, const cuda_data *d, const cuda_groups *g,
                             int peer, int send, channel *ch);
/** The phases' peers and receive records (cuda_transport.layout). */
halo_status halo_ipc_layout(halo_exec *ex, cuda_data *d, const ipc_state *is);
/** Handles exchanged and opened, flags, requests, pieces (cuda_transport.setup). */
halo_status halo_ipc_setup(halo_exec *ex, cuda_data *d, const ipc_state *is);
/** What the set-up made (cuda_transport.destroy). */
void halo_ipc_destroy(halo_exec *ex, cuda_data *d, const ipc_state *is);
/** The pull kernel's pieces for entries of d->eb bytes, uploaded (the last
 *  exchange's pulls done: the caller waited for the stream). */
halo_status halo_ipc_pull_fill(halo_exec *ex, cuda_data *d, const ipc_state *is);
/** The stream waits until *flag (device memory) reaches value. */
halo_status halo_ipc_sig_wait_for(cudaStream_t s, const uint64_t *flag, uint64_t value);
/** The stream writes value into *flag (a peer's), after its earlier work,
 *  with a fence before the write. */
halo_status halo_ipc_sig_post(cudaStream_t s, uint64_t *flag, uint64_t value);

#endif
