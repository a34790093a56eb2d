/* The performance model applied to a real plan, and strategy AUTO: the
 * model's view of every rank of the plan, the modeled time of a schedule
 * (collective), and the choice of strategy, transport and message_cap by
 * the model or by a timed trial. */
#ifndef HALO_MODEL_CHOOSE_H
#define HALO_MODEL_CHOOSE_H

#include "model/model.h"
#include "plan/topology.h"

/** Most candidates a plan of strategy AUTO weighs. */
#define HALO_MAX_CANDIDATES 48

/** How a plan was chosen (strategy AUTO), for halo_plan_describe. */
typedef struct {
  int how; /* 0: given by the caller; 1: by the model; 2: by a timed trial of every
              candidate; 3: by a timed trial of the n_timed the model could not tell apart;
              4: remembered in the wisdom file (note); 5: by a timed trial of the n_timed
              the model could not tell apart on the program's first calls; 6: by the model
              for now, the n_timed being timed on the program's calls */
  char note[256]; /* how 4: the file; else what became of the wisdom file, or "" */
  char params[64];
  int64_t uses; /* the plan's expected uses (halo_plan_options.expected_uses) */
  int n, n_timed;
  halo_candidate c[HALO_MAX_CANDIDATES];
  int best;
} halo_choice;

/** The trial on the program's calls (interface/online.c): calls a candidate
 *  serves in a row, and rounds of turns (the first warms up, untimed). */
#define HALO_ONLINE_PER_TURN 2
#define HALO_ONLINE_ROUNDS   4

/** Split's message_caps to weigh: the option's, then 4, 16, 64 and 256 KiB
 *  (each once). Returns how many (at most 5). */
int halo_choose_caps(int64_t option_cap, int64_t caps[5]);

/** What candidate c costs over the plan's expected uses: its set-up +
 *  ch->uses x its time per use (timed where it was, else modeled). */
double halo_candidate_cost(const halo_choice *ch, const halo_candidate *c);

/** Of the timed candidates when some were timed, else of all, the one of
 *  lowest cost (halo_candidate_cost; the first of equals): sets and returns
 *  ch->best. */
int halo_choice_best(halo_choice *ch);

/** One line: "strategy, transport[, message_cap C B]: how it was chosen: the
 *  candidates and their seconds" (the best marked *), truncated to len-1
 *  characters; cap 0 leaves the message_cap out. */
void halo_choice_describe(const halo_choice *ch, halo_strategy s, halo_transport t, int64_t cap,
                          char *buf, size_t len);

/**
 * Where every rank runs, as the model sees it, for transport t: its machine
 * (shared-memory domain), node, socket, whether its values are on a GPU (a
 * rank of a device plan that has rows or ghosts, or that keeps device
 * buffers because the transport is NCCL) and how many ranks share its GPU.
 * ranks: P entries. Collective over comm.
 */
halo_status halo_choose_ranks(MPI_Comm comm, const halo_topology *t, const halo_params *p,
                              int device, int helper, int ranks_per_gpu, halo_transport tr,
                              halo_model_rank *ranks);

/** Modeled seconds of a schedule: per phase the most of any rank (phase:
 *  HALO_MAX_PHASES entries) and their sum. Collective over comm. */
halo_status halo_choose_model(MPI_Comm comm, const halo_topology *t, const halo_params *p,
                              halo_transport tr, const halo_schedule *s,
                              const halo_model_rank *ranks, double *phase, double *total_p);

#endif
