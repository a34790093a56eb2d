/* Remembered choices of strategy AUTO ("wisdom", issue 42 item 4): a choice
 * kept in a file under a key made of the machine's parameters, the
 * communicator's layout, the options the choice depends on and a signature
 * of the pattern (per rank: its message counts and its volumes rounded to
 * powers of two), so that a later plan, run or AMG re-set-up with the same
 * key takes it without modeling or timing.
 *
 * The file is text: a first line "halo-wisdom 1", then one line per key,
 * "KEY STRATEGY TRANSPORT MESSAGE_CAP USES MEASURED" (KEY 16 hex digits; USES
 * the uses the choice was made for; MEASURED the uses the last plan of the
 * key served, 0 before one ended). The uses are not part of the key: a
 * later plan takes the choice where its uses (the measured ones where there
 * are, else its expected ones) fall in the power of two of USES, else it
 * chooses again for them. It is read on rank 0 only, with
 * bounds (HALO_WISDOM_MAX_BYTES, HALO_WISDOM_MAX_LINE), and its answer
 * broadcast; written on rank 0 only, entries merged (a key's newer entry
 * wins), into a temporary file renamed over it (readers never see half a
 * file; of two writers at once the later rename wins). A file that is
 * corrupt, of another version, or names what this library does not know is
 * ignored: the reason is returned for the plan's description (the library
 * prints nothing). */
#ifndef HALO_MODEL_WISDOM_H
#define HALO_MODEL_WISDOM_H

#include "halo/model.h"
#include "plan/pattern.h"
#include "plan/topology.h"

/** Largest wisdom file read (bytes); a larger one is ignored. */
#define HALO_WISDOM_MAX_BYTES (1 << 20)
/** Longest line of a wisdom file (characters). */
#define HALO_WISDOM_MAX_LINE 160
/** Most keys a wisdom file may hold; a file with more is ignored. */
#define HALO_WISDOM_MAX_ENTRIES 4096

/** One remembered choice. */
typedef struct {
  halo_strategy strategy;
  halo_transport transport;
  int64_t message_cap;
  int64_t uses;     /* the uses the choice was made for */
  int64_t measured; /* the uses the last plan of the key served (rank 0's); 0: none yet */
} halo_wisdom_entry;

/** What the key is made of, besides the pattern: the same on every rank. */
typedef struct {
  const halo_params *params; /* the model's parameter set */
  const halo_topology *topo; /* the communicator's nodes */
  int memory;                /* halo_memory of the plan */
  int ranks_per_gpu;         /* device plans: most ranks sharing a GPU */
  int has_matrix;            /* a plan of a matrix (trials time SpMVs) */
  const halo_plan_options *opts;
} halo_wisdom_where;

/** The key of a plan's choice: the pattern's signature on every rank and
 *  where (the same on every rank). Collective over comm. */
halo_status halo_wisdom_key(MPI_Comm comm, const halo_pattern *pattern,
                            const halo_wisdom_where *where, uint64_t *key_p);

/**
 * Look key up in the file at path: read on rank 0, the answer broadcast.
 * *found_p 1 with *e filled where the file has the key; 0 where it has not,
 * cannot be read, or is ignored (why: the reason, else ""; every rank gets
 * it). Collective over comm; fails only where MPI does.
 */
halo_status halo_wisdom_find(MPI_Comm comm, const char *path, uint64_t key, halo_wisdom_entry *e,
                             int *found_p, char *why, size_t why_len);

/**
 * Keep e under key in the file at path (rank 0 only: merged with what the
 * file holds, written to a temporary file and renamed over it). Not
 * collective; on ranks other than 0 nothing. HALO_ERR_IO where the file
 * cannot be written (why names it): the choice stands, unremembered.
 */
halo_status halo_wisdom_store(int rank, const char *path, uint64_t key, const halo_wisdom_entry *e);

/** Set the measured uses of key's entry in the file at path (its other fields
 *  kept; nothing where the file lacks the key). Call on rank 0 only; not
 *  collective. HALO_ERR_IO where the file cannot be written. */
halo_status halo_wisdom_note_uses(const char *path, uint64_t key, int64_t uses);

/** Whether uses a and b fall in one power of two (the uses a remembered
 *  choice serves). */
int halo_wisdom_same_uses(int64_t a, int64_t b);

#endif
