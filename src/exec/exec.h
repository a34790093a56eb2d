/* Executor: interprets a schedule through a backend's ops table. The core
 * knows no backend types: a backend keeps its state behind ex->data. */
#ifndef HALO_EXEC_EXEC_H
#define HALO_EXEC_EXEC_H

#include "exec/gpu.h"
#include "plan/schedule.h"
#include "plan/topology.h"

typedef struct halo_exec_s halo_exec;

/** A backend: a const table of functions. Empty slots are reported as
 *  "backend X does not implement Y". */
typedef struct {
  const char *name;
  /** Allocate buffers, persistent requests, ... for ex->sched (plan time). */
  halo_status (*setup)(halo_exec *ex);
  /** Start the exchange: x_local is read, values land in the plan's ghost
   *  buffer. No allocation, no request creation. */
  halo_status (*begin)(halo_exec *ex, const double *x_local);
  /** Complete the exchange; then copy the ghosts to user_ghost unless it
   *  is NULL (in the memory of the plan). */
  halo_status (*end)(halo_exec *ex, double *user_ghost);
  /** Release everything setup made. */
  void (*destroy)(halo_exec *ex);
} halo_exec_ops;

struct halo_exec_s {
  const halo_exec_ops *ops;
  const halo_schedule *sched; /* owned by the plan */
  MPI_Comm comm;              /* plan communicator: global phases */
  MPI_Comm node_comm;         /* node communicator: node phases */
  /* Per phase: the communicator of its scope and the peers of its sends and
   * receives as ranks of that communicator. */
  MPI_Comm phase_comm[HALO_MAX_PHASES];
  int *peer_send[HALO_MAX_PHASES];
  int *peer_recv[HALO_MAX_PHASES];
  double *ghost;            /* n_ghost values, owned by the backend, in the plan's memory */
  halo_gpu *gpu;            /* device plans: the device, its streams (owned by the plan) */
  halo_transport transport; /* how messages travel (device plans) */
  void *data;               /* backend state */
};

/** Host backend: MPI two-sided on host buffers, persistent requests. */
extern const halo_exec_ops halo_exec_host_ops;
/** CUDA backend: device buffers, pack/unpack kernels; staged, NCCL,
 *  CUDA-aware MPI and CUDA IPC transports (exists when CUDA is compiled in). */
extern const halo_exec_ops halo_exec_cuda_ops;

/** With HALO_EXEC_TIMING=1 set when the plan was made: the time and bytes of
 *  the staged copies down and up since the last call (CUDA backend). */
halo_status halo_exec_cuda_copy_times(halo_exec *ex, double *t_down, double *t_up,
                                      int64_t *bytes_down, int64_t *bytes_up);

/** Create an executor for a schedule (plan time). gpu and transport are for
 *  the CUDA backend (NULL, HALO_TRANSPORT_HOST for the host one). */
halo_status halo_exec_create(const halo_exec_ops *ops, const halo_schedule *s, MPI_Comm comm,
                             const halo_topology *topo, halo_gpu *gpu, halo_transport transport,
                             halo_exec *ex);
halo_status halo_exec_begin(halo_exec *ex, const double *x_local);
halo_status halo_exec_end(halo_exec *ex, double *user_ghost);
void halo_exec_destroy(halo_exec *ex);

/** Largest number of requests between one pair of ranks in one phase. */
#define HALO_EXEC_MAX_SEQ 2048

/** Tag of request seq between a pair of ranks in phase k: requests are
 *  numbered in list order on both sides, so that matching does not depend on
 *  the order in which MPI_Startall starts them. At most 100 + 8*2048 < 32767,
 *  the least MPI_TAG_UB. */
static inline int halo_exec_tag(int k, int seq) { return 100 + k * HALO_EXEC_MAX_SEQ + seq; }

/** Requests a message of count values needs (messages are split at
 *  halo_max_count() values). */
static inline int halo_exec_chunks(int64_t count) {
  int64_t c = halo_max_count();
  return (int)((count + c - 1) / c);
}

/** For every message of a list, the number of its first request among the
 *  requests with the same peer, in list order (seq[i]). Fails when a pair
 *  needs more than HALO_EXEC_MAX_SEQ requests. */
halo_status halo_exec_sequence(const halo_msg *m, int n, int *seq);

/** Persistent requests of one message of count values at buf, one per piece
 *  of at most halo_max_count() values, tagged seq, seq+1, ... of phase k. */
halo_status halo_exec_init_chunks(MPI_Request *req, int is_send, double *buf, int64_t count,
                                  int peer, int k, int seq, MPI_Comm comm);

/** Whether count unpack indices land on consecutive entries of one buffer
 *  (the ghosts, below n_ghost, or the work buffer, above), so that the
 *  message can be received in place. */
int halo_exec_is_run(const halo_schedule *s, const int64_t *idx, int64_t count);

#endif
