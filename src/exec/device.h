/* The GPU of a communicator's plans, seen from code that includes no CUDA
 * header: the device, the exchange stream and the default compute streams,
 * the ranks of this machine and how many share a GPU, whether MPI is
 * CUDA-aware, the NCCL communicator; and a plan's timeline of timing events.
 * One device state per communicator (its context holds it); every plan of the
 * communicator shares it. Without CUDA every call says it is not compiled
 * in. */
#ifndef HALO_EXEC_DEVICE_H
#define HALO_EXEC_DEVICE_H

#include "halo_impl.h"

typedef struct halo_device_s halo_device;

/**
 * Choose and set this rank's device (device_id >= 0; or the current device
 * if the process uses one already; or the rank on its shared-memory node
 * modulo the visible devices), make the exchange stream (highest priority)
 * and the blocking compute stream, find out how many ranks share a GPU and
 * whether MPI is CUDA-aware. Collective over comm, which the device state
 * keeps for its NCCL communicator.
 */
halo_status halo_device_create(MPI_Comm comm, int device_id, halo_device **dev_p);
void halo_device_destroy(halo_device **dev_p);

/** Check a device_id option against the visible devices (-1: any).
 *  HALO_ERR_INVALID_ARG "device_id = N, but M CUDA devices are visible". */
halo_status halo_device_check_id(int device_id);

/** The CUDA device. */
int halo_device_id(const halo_device *d);
/** Most ranks that share one GPU on a machine (over the communicator). */
int halo_device_ranks_per_gpu(const halo_device *d);
/** The GPU's name ("NVIDIA H200"); "" without CUDA. */
const char *halo_device_name(const halo_device *d);
/** Whether MPI takes device buffers: setting 0 or 1 forces the answer, -1
 *  takes what the MPI library said (agreed over the communicator). */
int halo_device_mpi_aware(const halo_device *d, int setting);
/** The ranks of this machine (MPI_COMM_TYPE_SHARED of the communicator). */
MPI_Comm halo_device_machine_comm(const halo_device *d);
/** The communicator (the context's). */
MPI_Comm halo_device_comm(const halo_device *d);
/** The exchange stream (cudaStream_t). */
void *halo_device_exchange_stream(const halo_device *d);
/** The communicator's compute stream (cudaStream_t): blocking (ordered with
 *  the legacy default stream) or, made at the first request, non-blocking. */
halo_status halo_device_compute_stream(halo_device *d, int nonblocking, void **stream_p);
/** The NCCL communicator (ncclComm_t) over the communicator and its number
 *  (gen_p), made at the first request and counted by halo_debug_nccl_comms.
 *  Collective at every request: where some rank aborted its communicator
 *  (halo_device_nccl_abort), every rank makes a new one, with a new number. */
halo_status halo_device_nccl(halo_device *d, void **nccl_p, int *gen_p);
/** Start making the NCCL communicator in the background, where no rank has
 *  one and none is under way: rank 0's unique id broadcast, then a thread of
 *  this rank runs ncclCommInitRank on its GPU (it calls no MPI). A failure to
 *  start is the thread's failure (halo_device_nccl_state). Collective. */
halo_status halo_device_nccl_start(halo_device *d);
/** This rank's NCCL communicator: 1 made (or made in the background), 0
 *  under way, -1 the background's failed (why: its reason), 2 neither made
 *  nor started. Not collective; does not wait. */
int halo_device_nccl_state(const halo_device *d, char *why, size_t len);
/** Test hook: the background thread fails without calling NCCL (on). */
void halo_debug_nccl_background_fail(int on);
/** Abort the NCCL communicator (ncclCommAbort: the kernels that wait in it
 *  stop), after a failed exchange. Local; the next request makes a new one. */
void halo_device_nccl_abort(halo_device *d);
/** Whether NCCL communicator number gen is the live one. */
int halo_device_nccl_current(const halo_device *d, int gen);

/** NVSHMEM over the communicator: initialised from a unique id at the first
 *  request where no one did (collective then), or checked where the
 *  process did already (the same processes); with ranks that share a GPU,
 *  HALO_ERR_UNSUPPORTED unless NVSHMEM runs them in full (CUDA MPS).
 *  HALO_ERR_NOT_COMPILED without HALO_ENABLE_NVSHMEM. */
halo_status halo_device_nvshmem(halo_device *d);
/** The NVSHMEM PE of a rank of the communicator (-1 before
 *  halo_device_nvshmem). */
int halo_device_nvshmem_pe(const halo_device *d, int rank);
/** Collective over the communicator: symmetric memory of at least bytes,
 *  the whole of a chunk no other executor holds (a new one, of the most any
 *  rank asks, made by all ranks together when some rank has none), and its
 *  number. Chunk c is one symmetric object on every rank, which each rank
 *  addresses at halo_device_nvshmem_base(d, c): a peer that says "chunk c,
 *  offset o" names base(c) + o here. Chunks live as long as the device
 *  state. */
halo_status halo_device_nvshmem_alloc(halo_device *d, size_t bytes, void **p, int *chunk_p);
/** This rank's address of symmetric chunk c (NULL: no such chunk). */
char *halo_device_nvshmem_base(const halo_device *d, int chunk);
/** Give back what halo_device_nvshmem_alloc gave. NULL-safe. */
void halo_device_nvshmem_release(halo_device *d, void *p);

/**
 * Resolve the requested transport (AUTO, STAGED, NCCL, MPI_DEVICE, IPC) for a
 * device plan: clear errors when a transport cannot serve (NCCL not compiled
 * or several ranks per GPU, MPI not CUDA-aware, host). Makes the NCCL
 * communicator when NCCL is chosen. aware: the gpu_aware_mpi setting; made:
 * the transports whose state the communicator has made (AUTO prefers one
 * without a set-up to pay: halo_transport_default), or NULL.
 * Collective over the device's communicator.
 */
halo_status halo_device_transport(halo_device *d, halo_transport requested, int aware,
                                  const int *made, halo_transport *chosen_p);
/** As halo_device_transport, where the transport's per-communicator state
 *  may come later: with background on, a transport whose hooks make its
 *  state in the background (open_background), not made on any rank, starts
 *  making it and the plan takes, meanwhile, what auto takes without it
 *  (*later_p = the transport asked for); else *later_p = HALO_TRANSPORT_AUTO.
 *  Collective. */
halo_status halo_device_transport_later(halo_device *d, halo_transport requested, int aware,
                                        const int *made, int background, halo_transport *chosen_p,
                                        halo_transport *later_p);
/** This rank's view of transport t's per-communicator state: 1 made (or a
 *  transport without one), 0 made in the background, under way, -1 failed
 *  (why: its reason), 2 neither made nor started. Does not wait. */
int halo_device_transport_state(const halo_device *d, halo_transport t, char *why, size_t len);

/* ---- memory shared by a communicator's executors -----------------------
 * Executors carve their buffers from chunks the communicator keeps, and give
 * them back when their plan goes, so that a later plan allocates nothing new:
 * device buffers that peers of this machine read through CUDA IPC (each chunk
 * exported once, and opened once by each peer that reads it) and pinned host
 * buffers (cudaMallocHost is slow). Chunks live as long as the communicator's
 * context. */

/** Bytes of a CUDA IPC memory handle. */
#define HALO_IPC_HANDLE_BYTES 64

/** Device memory from an exported chunk: *p, and the chunk and the byte
 *  offset a peer needs to find it. bytes 0 gives NULL. */
halo_status halo_device_ipc_alloc(halo_device *d, size_t bytes, void **p, int *chunk_p,
                                  int64_t *offset_p);
/** Give back what halo_device_ipc_alloc gave (its size). NULL-safe. */
void halo_device_ipc_release(halo_device *d, void *p, size_t bytes);
/** The IPC handle of one of this rank's chunks (HALO_IPC_HANDLE_BYTES). */
halo_status halo_device_ipc_handle(halo_device *d, int chunk, void *handle);
/** The base of chunk `chunk` of rank `peer` (a rank of the communicator on
 *  this machine), opened from its handle at the first request and kept. */
halo_status halo_device_ipc_open(halo_device *d, int peer, int chunk, const void *handle,
                                 char **base_p);
/** Pinned host memory from the communicator's chunks; bytes 0 gives NULL. */
halo_status halo_device_pinned_alloc(halo_device *d, size_t bytes, void **p);
/** Give back what halo_device_pinned_alloc gave (its size). NULL-safe. */
void halo_device_pinned_release(halo_device *d, void *p, size_t bytes);

/** Host scratch of the executors' set-up: *p, at least `bytes`, in one of
 *  HALO_DEVICE_SCRATCH slots, pinned (page-locked, copied to the GPU without a
 *  bounce) where asked. A slot keeps its block, grown as asked, from one plan's
 *  set-up to the next until the device ends: later plans write its index maps
 *  into pages already mapped, not freshly faulted ones. Its contents are not
 *  kept; one user of a slot at a time, which asks for it pinned or not always. */
#define HALO_DEVICE_SCRATCH 3
halo_status halo_device_scratch(halo_device *d, int slot, size_t bytes, int pinned, void **p);

/** Wait for a stream. */
halo_status halo_device_stream_sync(void *stream);
/** Wait for n streams, together within timeout_ms (0: without a limit), past
 *  which HALO_ERR_TIMEOUT: the streams' work goes on without the host. */
halo_status halo_device_streams_wait(void *const *streams, int n, int64_t timeout_ms);

/** NCCL communicators made so far by this process (tests count them). */
int64_t halo_debug_nccl_comms(void);
/** NCCL communicators aborted so far by this process (halo_device_nccl_abort). */
int64_t halo_debug_nccl_aborts(void);

/* ---- timeline: when a product and its exchange ran on the GPU ---------- */

typedef struct halo_timeline_s halo_timeline;

/** The timing events of a plan: mark 0 (the exchange's start point) and 1
 *  (the diagonal product done) on the compute stream, 2 and 3 (the
 *  transfer's start and end) on the exchange stream. */
halo_status halo_timeline_create(void *comp, void *xstream, halo_timeline **tl_p);
void halo_timeline_destroy(halo_timeline **tl_p);
/** Begin a product's record at the exchange's start point (mark 0); adds the
 *  last complete record to the sums first. */
halo_status halo_timeline_start(halo_timeline *tl);
/** Record mark k (1, 2 or 3) once per record; no-op for tl NULL, before a
 *  start, or when k is recorded already. */
halo_status halo_timeline_mark(halo_timeline *tl, int k);
/** The mean seconds from mark 0 to marks 1, 2, 3 over the complete records
 *  since the last call; resets the sums. */
halo_status halo_timeline_read(halo_timeline *tl, double avg[3], int64_t *n_p);

/* ---- stopwatch: the GPU's time of n intervals on one stream ------------- */

typedef struct halo_stopwatch_s halo_stopwatch;

/** n intervals of timing events on stream (strategy AUTO's trial on the
 *  program's calls, interface/online.c). */
halo_status halo_stopwatch_create(void *stream, int n, halo_stopwatch **sw_p);
void halo_stopwatch_destroy(halo_stopwatch **sw_p);
/** Record, in stream order, the start (stop = 0) or the end (stop = 1) of
 *  interval i. No host wait. */
halo_status halo_stopwatch_mark(halo_stopwatch *sw, int i, int stop);
/** The seconds of intervals 0..n (0 for one never stopped): waits for their
 *  stops (the one host wait). */
halo_status halo_stopwatch_read(halo_stopwatch *sw, int n, double *seconds);

#endif
