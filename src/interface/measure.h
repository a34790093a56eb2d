/* halo_params_measure() (include/halo/model.h): the state of one measurement
 * and the pieces its parts share. measure.c holds the options, the order of
 * the measurements, the report, the notes and the file; measure_mpi.c the
 * topology, the ping-pongs and the injection; measure_cuda.c the devices
 * (copies and device-aware messages through halo's own exchange), or, built
 * without CUDA, the notes that say so.
 *
 * Every function here taking the state is collective over c->comm and
 * returns a status agreed across its ranks (halo_agree), unless it says
 * otherwise. Values fitted on rank 0 are set on rank 0 alone: the result is
 * broadcast from there at the end. */
#ifndef HALO_INTERFACE_MEASURE_H
#define HALO_INTERFACE_MEASURE_H

#include "halo/model.h"
#include "halo_impl.h"

/* sizes of one sweep: from 1 byte to 2^30 there are 61 */
#define HALO_MEASURE_MAX_SIZES 128
#define HALO_MEASURE_MAX_BYTES (INT64_C(1) << 30)

typedef struct {
  MPI_Comm comm; /* a copy of the caller's, errors returned */
  int rank, size;
  halo_params_measure_options o; /* checked; base and name set */
  halo_params base;              /* the set unmeasured keys come from */
  halo_params_measured res;      /* being built (rank 0) */
  int64_t sizes[HALO_MEASURE_MAX_SIZES];
  double dsizes[HALO_MEASURE_MAX_SIZES];
  int n_sizes;
  int warmup; /* untimed round trips per size */
  char *buf;  /* max_bytes, for messages */
  /* topology */
  int shm_rank, shm_size, shm_leader; /* the machine (MPI_COMM_TYPE_SHARED) */
  int n_nodes, sockets_per_node, packages_known;
  int partner[HALO_N_LOC]; /* rank 0's partner by locality, -1: none */
  int ipc_partner;         /* a rank of rank 0's machine, -1: none */
  int inj_k;               /* pairs of ranks between two nodes */
  int *inj_a, *inj_b;      /* inj_k ranks of rank 0's node, of the other node */
} halo_measure;

HALO_MODULE_API extern const char *const halo_measure_loc_names[HALO_N_LOC];
extern const char *const halo_measure_proto_names[HALO_N_PROTO];

/* ---- the report and the notes (measure.c; not collective) ---- */

/** One line of the report, on rank 0 (to the caller's report function). */
HALO_MODULE_API void halo_measure_say(const halo_measure *c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/** A note about the keys matching the fnmatch() pattern keys; the first
 *  HALO_PARAMS_MAX_NOTES are kept. */
HALO_MODULE_API void halo_measure_note(halo_measure *c, const char *keys, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/** Every key of a group from the base set: a note and a report line. */
HALO_MODULE_API void halo_measure_from_base(halo_measure *c, const char *keys, const char *why);
/** gpu.*, copy.* and staged.* from the base set, why. */
HALO_MODULE_API void halo_measure_device_from_base(halo_measure *c, const char *why);

/** A fit's report line: "  eager       [256, 16384)   6 sizes  alpha ...". */
HALO_MODULE_API void halo_measure_say_fit(const halo_measure *c, const char *what,
                                          const char *range, const halo_fit *f);

/** "  (alpha < 0 set to 0)" when a fit clamped one, else "". */
const char *halo_measure_clamp_text(const halo_fit *f);

/** "[8, 256)", or "[16384, 65536]" for the last protocol range. */
HALO_MODULE_API void halo_measure_range_text(const halo_measure *c, int proto, char *buf,
                                             size_t len);

/** The locality measured nearest to loc, among those with measured[l]; -1: none. */
HALO_MODULE_API int halo_measure_nearest(int loc, const int *measured);

/** Why rank 0 has no partner at locality loc. */
HALO_MODULE_API const char *halo_measure_no_pair_reason(int loc);

/** The median of n values (sorts them). */
HALO_MODULE_API double halo_measure_median(double *v, int n);

/** Wait for every rank; the ones not measuring (active = 0) sleep between
 *  tests, so that they leave the cores to the ranks that measure. */
HALO_MODULE_API halo_status halo_measure_wait_all(const halo_measure *c, int active);

/* ---- the measurements ---- */

/** Nodes, sockets, the partners of rank 0 and the injection pairs (measure_mpi.c). */
halo_status halo_measure_topology(halo_measure *c);

/** cpu.* by ping-pong, per locality (measure_mpi.c). */
halo_status halo_measure_cpu(halo_measure *c);

/** injection.beta by node-pong, k = 1, 2, 4, ..., inj_k pairs at once (measure_mpi.c). */
halo_status halo_measure_injection(halo_measure *c);

/** One size of a measurement on a pair of ranks: t_p, from work (iterations
 *  long), for a message of bytes (collective over pair). */
typedef halo_status (*halo_measure_size_fn)(MPI_Comm pair, const halo_measure *c, const void *arg,
                                            int64_t bytes, double *work, double *t_p);
/** Collective: fn at each of the n sizes gs on the pair of rank 0 and peer
 *  (a communicator of their own; the other ranks wait), t on rank 0. */
HALO_MODULE_API halo_status halo_measure_pair(const halo_measure *c, int peer,
                                              halo_measure_size_fn fn, const void *arg,
                                              const int64_t *gs, int n, double *t);

/** Collective: on rank 0, a fit of alpha and beta over the times t of halo's
 *  exchange at the ng sizes gs (gd: as doubles), said in the report and in a
 *  note on name.* ("ipc": how the exchange was timed, as text), kept in
 *  *postal with *have set; a failed fit is every rank's error. */
HALO_MODULE_API halo_status halo_measure_fit_exchange(halo_measure *c, const char *name,
                                                      const char *how, const int64_t *gs,
                                                      const double *gd, const double *t, int ng,
                                                      halo_postal *postal, int *have);

/** NAME.* of every host transport built in whose model has a pair of its own
 *  (rma, neighbor): halo's exchange on it in host memory (measure_host.c). */
halo_status halo_measure_host_transports(halo_measure *c);

/** copy.*, gpu.*, staged.* and ipc.* on the devices, after cpu.* (measure_cuda.c);
 *  built without CUDA, notes that they come from the base set. Collective. Where
 *  the CUDA module cannot be loaded on some rank: HALO_ERR_NOT_COMPILED on every
 *  rank, the reason recorded (the caller takes the base set). */
halo_status halo_measure_device(halo_measure *c);

#endif
