/* halo simulator: the plans of a matrix on P ranks, built in one process
 * with the same builders as halo_plan_create, for the statistics of any
 * strategy on thousands of ranks without running them. */
#ifndef HALO_SIM_H
#define HALO_SIM_H

#include "halo/io.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The patterns of all ranks of a matrix. */
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
 */
halo_status halo_sim_create(const halo_csr *A, int P, const int64_t *row_begin,
                            const int64_t *col_begin, halo_sim *sim_p);

/**
 * Statistics of one strategy, as halo_plan_stats() reports them in a run of
 * P ranks with the same options. opts->ranks_per_node must be positive:
 * virtual nodes of that many consecutive ranks. setup_seconds is the time the
 * simulation of this strategy took.
 */
halo_status halo_sim_run(halo_sim sim, const halo_plan_options *opts, halo_stats *stats);

/** Release a simulation; NULL-safe, sets *sim_p to NULL. */
void halo_sim_destroy(halo_sim *sim_p);

#ifdef __cplusplus
}
#endif

#endif
