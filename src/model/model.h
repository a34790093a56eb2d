/* The performance model of a schedule (docs/strategies.md): the modeled time of
 * every phase of every rank from the machine parameters (model/params.h), and
 * of a plan, the sum over its phases of the slowest rank's time. Pure
 * functions: no MPI, no CUDA.
 *
 * Locality of a message from rank a to rank b: OFF_NODE when their nodes
 * differ; ON_SOCKET on one node and one socket; else ON_NODE.
 *
 * Channel of a message from a to b, by the model class of the plan's
 * transport t (its descriptor's model, exec/transport.h):
 *   CPU:  inter-CPU parameters (host, staged, rma; staged, ipc and
 *         rma add the copies below: model.copies)
 *   GPU:  inter-GPU parameters (nccl, mpi-device, nvshmem)
 *   IPC:  IPC when a and b share a host and a is on a GPU (the receiver
 *         reads a's device buffer), else CPU (staged)
 * A transport with a pair of its own (model.own_params: rma.* for CPU
 * messages; nvshmem.* for GPU messages within a host) is priced by it where
 * the parameter set has it.
 * A message of a rank to itself is a copy and costs nothing.
 *
 * Time of rank r in phase k = CPU + GPU + IPC + copy, where, with s_i the
 * bytes of message i and the postal parameters (alpha, beta) chosen by the
 * message's protocol (halo_params_protocol) and locality:
 *   CPU   r's sends over the CPU channel; a node phase: sum_i (alpha_i +
 *         beta_i s_i) (postal); a global phase: sum_i alpha_i +
 *         max(sum_i beta_i s_i, node_inter_bytes * injection_beta) (max-rate,
 *         node_inter_bytes: what r's node sends to other nodes in the phase).
 *         A rank without CPU-channel sends in the phase pays nothing here.
 *   GPU   r's sends over the GPU channel, with the inter-GPU parameters (a
 *         short message costs an eager one): MPI_DEVICE, postal per message,
 *         sum_i (alpha_i + beta_i s_i); NCCL, one group whose messages
 *         progress together, max_i alpha_i + sum_i beta_i s_i.
 *   IPC   paid by the receiver, for each of r's receives over the IPC
 *         channel: r on a GPU: ipc.alpha + ipc.beta s when the set has ipc.*,
 *         else the inter-GPU postal time at the pair's locality; r not on a
 *         GPU (a helper reading a GPU's buffer, Split+DD): the copy
 *         d2h[c].alpha + d2h[c].beta s.
 *   copy  only when r is on a GPU and t is STAGED or IPC: d2h[c].alpha +
 *         d2h[c].beta S when r's CPU-channel sends total S > 0 bytes, plus
 *         h2d[c].alpha + h2d[c].beta R when its CPU-channel receives total
 *         R > 0 bytes, plus staged.alpha when S + R > 0.
 * where c = 1 (the 4-process copy parameters) when r's ranks_per_gpu >= 2,
 * else 0. A message's bytes are 8 per value.
 */
#ifndef HALO_MODEL_MODEL_H
#define HALO_MODEL_MODEL_H

#include "exec/transport.h"
#include "model/params.h"
#include "plan/schedule.h"

/** Where a rank runs, as the model sees it. */
typedef struct {
  int host;          /* shared-memory machine (for the reach of CUDA IPC); the simulator uses
                        the node */
  int node;          /* node of the plan (real or virtual), in [0, P) */
  int socket;        /* socket within the node: local_index * sockets_per_node / ranks_on_node */
  int on_gpu;        /* 1: x and ghosts on a GPU (device plan, a rank with rows or ghosts);
                        0: host plan, or a rank of a device plan without rows and ghosts (a
                        helper) */
  int ranks_per_gpu; /* ranks that copy to or from its GPU at once (>= 1): copies use copy.*.1
                        below 2, copy.*.4 from 2. The ranks sharing the GPU; under transport
                        STAGED only those on the GPU (a helper gets its share by host MPI) */
} halo_model_rank;

/** Whether the parameter set params (a halo_params) has transport t's own
 *  pair (halo_transport_candidates' test for a PRICED transport). */
int halo_model_priced(const void *params, halo_transport t);

/** The set-up of transport t's per-communicator state on a communicator of
 *  `ranks` ranks, in seconds: the parameter set's NAME.setup.* where it has
 *  them, else the descriptor's model (0 for a transport that makes none). */
double halo_model_setup(const halo_params *p, halo_transport t, int ranks);

/** Locality of a message between two ranks. */
halo_locality halo_model_locality(const halo_model_rank *a, const halo_model_rank *b);

/**
 * Modeled seconds of phase k of rank s->rank (0 when the schedule has no
 * phase k). ranks: all P ranks of the plan, indexed by plan rank (s->size
 * entries); node_inter_bytes: the bytes the rank's node sends to other nodes
 * in phase k (the max-rate term of a global phase). t: the resolved transport
 * (HOST, STAGED, NCCL, MPI_DEVICE or IPC; never AUTO). Peers of the schedule
 * must be in [0, s->size).
 */
double halo_model_phase(const halo_params *p, halo_transport t, const halo_schedule *s, int k,
                        const halo_model_rank *ranks, int64_t node_inter_bytes);

/**
 * Modeled time of a plan: for every phase, the most seconds of any rank
 * (halo_model_phase, with node_inter_bytes summed over the ranks of each
 * node), and their sum. Not collective.
 *
 * @param sched          the schedules of all P ranks (sched[r] of rank r)
 * @param ranks          P entries: where each rank runs
 * @param phase_seconds  HALO_MAX_PHASES entries (phases past the last are 0), or NULL
 * @param total_p        the sum over phases
 * @return HALO_ERR_INVALID_ARG for transport AUTO, a schedule of another rank or
 *         size, a node outside [0, P) or ranks_per_gpu < 1.
 */
halo_status halo_model_schedules(const halo_params *p, halo_transport t, const halo_schedule *sched,
                                 int P, const halo_model_rank *ranks, double *phase_seconds,
                                 double *total_p);

/**
 * One node's part of halo_model_schedules, for a simulator that builds a plan
 * node by node and keeps no more than one node's schedules: sched holds the
 * schedules of all n ranks of one node (every rank r with ranks[r].node equal
 * to theirs; sched[i].rank any order). Raises phase_seconds[k]
 * (HALO_MAX_PHASES entries, zero before the first node) to the most seconds
 * of these ranks in phase k, and *n_phases_p (0 before the first node) to
 * their most phases. Once every node has been fed, phase_seconds are those of
 * halo_model_schedules and the plan's time is their sum over the phases, in
 * order. Not collective.
 *
 * @return HALO_ERR_INVALID_ARG as halo_model_schedules, and for ranks of
 *         several nodes.
 */
halo_status halo_model_node(const halo_params *p, halo_transport t, const halo_schedule *sched,
                            int n, int P, const halo_model_rank *ranks, double *phase_seconds,
                            int *n_phases_p);

#endif
