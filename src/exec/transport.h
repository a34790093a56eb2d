/* The registry of transports: one constant descriptor per transport, defined
 * in the transport's own file, listed once in transport.c. What a transport
 * is (its name, the memory it serves, whether this build has it, what it
 * needs, how the model prices it, whether AUTO weighs it, its executor and
 * its per-communicator state) is read from here by the names, the settings'
 * messages, the plan, the device context, the executors' set-up, the model,
 * the simulator and AUTO; nothing else switches on a transport's enum.
 *
 * Adding a transport: its file defines `const halo_transport_desc
 * halo_transport_desc_NAME` (and its executor), transport.c gets one line in
 * HALO_TRANSPORT_LIST, CMakeLists.txt one source line, halo.h one enumerator.
 * The README's "Adding a transport" shows the steps. */
#ifndef HALO_EXEC_TRANSPORT_H
#define HALO_EXEC_TRANSPORT_H

#include "exec/exec.h"

/** The memory a transport serves (bits). */
enum { HALO_TMEM_HOST = 1, HALO_TMEM_DEVICE = 2 };

/** What a transport needs beyond its memory (bits), checked where a plan
 *  resolves its transport and where AUTO lists its candidates. */
enum {
  HALO_NEEDS_OWN_GPU = 1,       /* one rank per GPU (NCCL, NVSHMEM) */
  HALO_NEEDS_GPU_AWARE_MPI = 2, /* an MPI that takes device buffers */
  HALO_NEEDS_OWN_GPU_AUTO = 4   /* one rank per GPU for AUTO and the simulator; named, ranks
                                   that share a GPU are checked by open() (NVSHMEM under MPS) */
};

/** How the model's channel carries a message (model/model.h). */
typedef enum {
  HALO_CHANNEL_CPU = 0, /* MPI between host buffers (inter-CPU parameters) */
  HALO_CHANNEL_GPU = 1, /* from device buffer to device buffer over the network (inter-GPU) */
  HALO_CHANNEL_IPC = 2  /* a receiver on the sender's host reads its device buffer; else CPU */
} halo_channel;

/** How the model prices a transport (model/model.c reads nothing else). */
typedef struct {
  halo_channel channel;
  int grouped;        /* GPU channel: the phase's messages progress as one group
                         (the largest alpha, all the betas): NCCL */
  int copies;         /* a rank on a GPU copies its CPU-channel messages down and up */
  int gpu_ranks_copy; /* of ranks sharing a GPU, only those on the GPU copy (helpers
                         take their share by host MPI): staged */
  int helper_on_gpu;  /* a rank without rows or ghosts keeps device buffers */
  int own_params;     /* the parameter sets may price it by a pair of its own (NAME.alpha,
                         NAME.beta: halo_params.own[id]), for its CPU-channel messages, or its
                         GPU-channel messages within a host */
  /* its set-up: the state it makes once per communicator (its open: NCCL's communicator,
   * NVSHMEM's initialisation), setup_alpha + setup_per_rank x the communicator's ranks
   * seconds, which a parameter set may replace (NAME.setup.alpha, NAME.setup.beta); AUTO
   * adds it to a candidate of a communicator that has none yet (issue 42) */
  double setup_alpha, setup_per_rank;
} halo_transport_model;

/** Whether AUTO weighs a transport where its needs are met. */
typedef enum {
  HALO_AUTO_NEVER = 0,
  HALO_AUTO_ALWAYS, /* a candidate of every AUTO choice of its memory */
  HALO_AUTO_PRICED  /* only where the model's parameters have its own pair (model.own_params) */
} halo_auto_policy;

/** A transport's descriptor. */
typedef struct {
  const char *name;       /* run-time name ("host", "nccl", ...) */
  halo_transport id;      /* its enumerator in halo.h */
  unsigned memory;        /* HALO_TMEM_* bits */
  const char *summary;    /* one line, for listings */
  int compiled;           /* built into this library */
  const char *build_hint; /* what builds it in, for "not compiled in: rebuild with ..." */
  unsigned needs;         /* HALO_NEEDS_* */
  /* device memory, transport AUTO without strategy AUTO's choice: the transport with the
   * lowest default_rank > 0 whose needs are met */
  int default_rank;
  halo_auto_policy auto_policy;
  halo_transport_model model;
  /* the settings it reads (declared in src/core/settings.c under the component of its
   * name), NULL-terminated; NULL: none. halo_transport_get_info lists them */
  const char *const *settings;
  /* the executor of a host plan (memory HOST); a device plan runs the CUDA executor,
   * whose hooks for this transport (cuda_transport, with what a device makes for it
   * before its first plan: the NCCL communicator) are in the transport's file, in the
   * part compiled into halo's CUDA module (HALO_MODULE_CODE): the descriptor is
   * compiled into libhalo, without CUDA */
  const halo_exec_ops *host_ops;
  /* the transport's per-communicator state, in its slot of the communicator's context
   * (NULL until the transport makes it): collect runs at every plan's set-up of the
   * executors (collective over comm: e.g. free what every rank released), release when the
   * context ends (collective: every rank frees the same state in the same order) */
  halo_status (*collect)(void *state, MPI_Comm comm);
  void (*release)(void **state_p);
  int (*state_count)(const void *state); /* the MPI objects it keeps (tests); NULL: none */
  /* whether the transport can run schedule s (this rank's part; max_count: the plan's largest
   * count of one MPI message), the reason recorded where not; AUTO skips a candidate that
   * fails on some rank. NULL: any */
  halo_status (*schedule_check)(const halo_schedule *s, int64_t max_count);
} halo_transport_desc;

/** The descriptor of transport t (not AUTO); NULL for a value no transport
 *  registers. */
HALO_MODULE_API const halo_transport_desc *halo_transport_find(halo_transport t);

/** The descriptors, in the registry's order (AUTO's): *n_p of them. */
const halo_transport_desc *const *halo_transport_all(int *n_p);

/** Whether t serves memory (HALO_MEMORY_HOST or _DEVICE). */
int halo_transport_serves(const halo_transport_desc *t, halo_memory memory);

/** What a transport's needs ask of where it runs. */
typedef struct {
  int own_gpu;       /* every rank has a GPU of its own (0: unknown or shared) */
  int gpu_aware_mpi; /* the MPI takes device buffers */
  int compiled_only; /* 1: a transport not built in does not meet its needs (a run); 0: the
                        simulator, which models any */
  int named;         /* the caller named the transport (HALO_NEEDS_OWN_GPU_AUTO is open's) */
  const int *made;   /* HALO_N_TRANSPORTS flags: the communicator has made the transport's
                        state (its set-up is paid); NULL: none made */
} halo_transport_where;

/**
 * Whether t can run a plan in memory at where; HALO_SUCCESS, else the reason
 * (HALO_ERR_NOT_COMPILED "transport X: not compiled in: rebuild with ...",
 * HALO_ERR_INVALID_ARG for the wrong memory or a shared GPU,
 * HALO_ERR_UNSUPPORTED for an MPI that is not CUDA-aware), recorded as the
 * last error when record is 1.
 */
HALO_MODULE_API halo_status halo_transport_check(const halo_transport_desc *t, halo_memory memory,
                                                 const halo_transport_where *where, int record);

/** The transport AUTO stands for when nothing chooses among candidates: host
 *  memory host; device memory the lowest default_rank whose needs are met
 *  among those without a set-up still to pay (model.setup_*: none, or
 *  where->made), else among all: a communicator whose plans made NCCL's
 *  communicator keeps NCCL, a new one does not pay for it (issue 42). */
HALO_MODULE_API halo_transport halo_transport_default(halo_memory memory,
                                                      const halo_transport_where *where);

/**
 * AUTO's candidates for a plan in memory at where: every transport of that
 * memory whose needs are met and whose policy is ALWAYS, or PRICED with
 * priced(arg, id) true. At most HALO_N_TRANSPORTS into list; their number.
 */
int halo_transport_candidates(halo_memory memory, const halo_transport_where *where,
                              int (*priced)(const void *arg, halo_transport t), const void *arg,
                              halo_transport *list);

/** "host or rma": the transports that serve memory (-1: all), for
 *  messages. */
void halo_transport_list_names(int memory, char *buf, size_t len);

/** Run every transport's collect on its state in a context's slots
 *  (collective over comm, at each plan's set-up of its executors). */
halo_status halo_transport_states_collect(void **state, MPI_Comm comm);

/** The MPI objects transport t keeps in a context's slots (tests: rma's
 *  windows). */
int halo_transport_state_count(void *const *state, halo_transport t);

/** Free every transport's state in a context's slots (collective). */
void halo_transport_states_free(void **state);

#endif
