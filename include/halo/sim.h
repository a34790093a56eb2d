/**
 * @file
 * halo simulator: the plans of a matrix on P ranks, built in one process
 * with the same builders as halo_plan_create, for the statistics of any
 * strategy on thousands of ranks without running them. */
#ifndef HALO_SIM_H
#define HALO_SIM_H

#include "halo/io.h"

#ifdef __cplusplus
extern "C" {
#endif

HALO_EXPORT_BEGIN

/** The patterns of all ranks of a matrix. A simulation also keeps what it
 *  builds: each plan's statistics and modeled times (by strategy,
 *  ranks_per_node, message_cap and duplicate removal), so that
 *  halo_sim_run(), halo_sim_model() and halo_sim_choose() build a plan once
 *  however often it is asked for, and the links between the nodes of the last
 *  node-aware plan, which every node-aware strategy on the same nodes starts
 *  from. */
typedef struct halo_sim_s *halo_sim;

/**
 * Build the communication pattern of every one of P ranks. Not collective;
 * no MPI communication.
 *
 * @param A          all rows of the matrix (row_begin = 0, row_end = n_rows)
 * @param P          ranks
 * @param row_begin  P+1 offsets: rows of rank r are [row_begin[r], row_begin[r+1])
 * @param col_begin  P+1 offsets of the entries of x, or NULL for row_begin
 *                   (square matrices)
 * @param sim_p      the new simulation
 *  @return HALO_SUCCESS, or the status of the failure (halo_last_error() gives its message)
 */
halo_status halo_sim_create(const halo_csr *A, int P, const int64_t *row_begin,
                            const int64_t *col_begin, halo_sim *sim_p);

/**
 * As halo_sim_create(), for a generated matrix (square) without holding it:
 * each rank's rows are made in turn, in blocks, and only their off-range
 * columns kept, so that a matrix of more than 2^31 rows can be simulated
 * where its ranks' patterns fit. Not collective.
 *
 * @param gen        the matrix (halo_gen_parse())
 *  @param P          ranks
 * @param row_begin  P+1 offsets of the rows (and of x) of each rank
 * @param max_bytes  the most the patterns may take, about (0: no limit): past
 *                   it, HALO_ERR_OUT_OF_MEMORY with what they need so far
 * @param nnz_p      the matrix's entries (NULL: not wanted)
 *  @param sim_p      the new simulation
 *  @return HALO_ERR_OUT_OF_MEMORY past max_bytes; HALO_SUCCESS, or the status of the failure
 *          (halo_last_error() gives its message)
 */
halo_status halo_sim_create_gen(const halo_gen *gen, int P, const int64_t *row_begin,
                                int64_t max_bytes, int64_t *nnz_p, halo_sim *sim_p);

/**
 * Statistics of one strategy, as halo_plan_stats() reports them in a run of
 * P ranks with the same options. opts->ranks_per_node must be positive:
 * virtual nodes of that many consecutive ranks. setup_seconds is the time the
 * simulation of this strategy took (in the call that built it, for a plan the
 * simulation had built before). Each phase's statistics: halo_sim_phase_stats().
 * @param sim    the simulation
 * @param opts   the options of the plans (ranks_per_node > 0), or NULL for
 *               the defaults
 * @param stats  the strategy's statistics
 * @return HALO_SUCCESS, or the status of the failure (halo_last_error() gives its message)
 */
halo_status halo_sim_run(halo_sim sim, const halo_plan_options *opts, halo_stats *stats);

/**
 * Statistics of one phase of the strategy of the last successful
 * halo_sim_run() on sim, as halo_plan_phase_stats() reports them in a run
 * of P ranks. Not collective.
 *
 *  @param sim      the simulation
 * @param phase    0 <= phase < the n_phases halo_sim_run() returned
 * @param stats_p  the phase's statistics
 * @return HALO_ERR_INVALID_ARG for a phase outside [0, n_phases) (the message
 *         gives the range); HALO_ERR_STATE before any halo_sim_run()
 */
halo_status halo_sim_phase_stats(halo_sim sim, int phase, halo_phase_stats *stats_p);

/**
 * Modeled time of one strategy's exchange (docs/strategies.md): the schedules of
 * all P ranks built as halo_sim_run() builds them, each phase's time the
 * most any rank takes by the postal, max-rate and copy models with the
 * machine parameters @p params, the plan's time the sum over its phases. Not
 * collective; no MPI communication.
 *
 * Ranks run on virtual nodes of opts->ranks_per_node consecutive ranks, one
 * shared-memory machine each, split evenly over the parameter set's sockets
 * per node. opts->memory = HALO_MEMORY_DEVICE models a device plan: ranks
 * with rows or ghosts hold x on a GPU, the others are helpers, and
 * ceil(ranks on the node / gpus_per_node) ranks share a GPU (with transport
 * staged only the GPU ranks copy to and from it, ceil(GPU ranks on the node /
 * gpus_per_node) at a time: a helper gets its share by host MPI); any other
 * memory models a host plan. opts->transport AUTO is host for a host plan, and for a
 * device plan nccl with one rank per GPU, else ipc.
 *
 *  @param sim              the simulation
 * @param opts             options as for halo_sim_run(), or NULL for the defaults
 * @param gpus_per_node    GPUs per node (>= 1 for a device plan; unused by a host plan)
 * @param params           a built-in parameter set ("lassen", the node-aware
 *                         paper's Lassen) or the path of a parameter file
 * @param max_phases       entries of phase_seconds_p (>= 0)
 * @param phase_seconds_p  max_phases entries: the modeled time of each of the
 *                         first min(n_phases, max_phases) phases, the rest 0;
 *                         or NULL (then max_phases is not read)
 * @param seconds_p        the modeled time of the exchange (all its phases), in seconds
 * @return HALO_ERR_INVALID_ARG for a device plan without GPUs, nccl with
 *         several ranks per GPU, a transport that does not fit the memory;
 *         HALO_ERR_IO for a name that is neither built in nor a file that can
 *         be read; HALO_ERR_FORMAT for a malformed parameter file (the message
 *         names the file, the line and the key).
 */
halo_status halo_sim_model(halo_sim sim, const halo_plan_options *opts, int gpus_per_node,
                           const char *params, int max_phases, double *phase_seconds_p,
                           double *seconds_p);

/**
 * Strategy AUTO in the simulator, as a plan of strategy AUTO chooses by the
 * model: every strategy (Split with several message_caps) on every path of
 * the memory (a host plan: host; a device plan: staged, ipc, and nccl with
 * one rank per GPU), modeled with params (halo_sim_model()); the lowest wins.
 * Not collective; no MPI communication.
 *
 *  @param sim            the simulation
 *  @param opts           options as for halo_sim_run(), or NULL for the defaults
 *  @param gpus_per_node  GPUs per node, as for halo_sim_model()
 *  @param params         the machine parameters, as for halo_sim_model()
 * @param chosen_p  opts with the winner's strategy, transport and message_cap
 * @param describe  as halo_plan_describe() writes it (the candidates and
 *                  their seconds, the winner marked *), or NULL
 *  @param len      room in describe, in characters
 *  @return the errors of halo_sim_model()
 */
halo_status halo_sim_choose(halo_sim sim, const halo_plan_options *opts, int gpus_per_node,
                            const char *params, halo_plan_options *chosen_p, char *describe,
                            size_t len);

/** Release a simulation; NULL-safe, sets *sim_p to NULL.
 *  @param sim_p  the simulation, or a pointer to NULL */
void halo_sim_destroy(halo_sim *sim_p);

HALO_EXPORT_END

#ifdef __cplusplus
}
#endif

#endif
