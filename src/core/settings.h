/* Settings of a plan: the options of halo.h, with the environment variables
 * that may also give them, read, validated and agreed across ranks in one
 * place. settings.c maps variables to options through env.c, the only file
 * of the library that reads the environment (tests/source_rules.sh checks
 * it); the last three functions below are defined there.
 *
 * An option left at its "unset" value (-1; 0 for ranks_per_node, NULL for
 * params) takes its variable when that is set, else its default; an option
 * the caller sets wins over the variable. */
#ifndef HALO_CORE_SETTINGS_H
#define HALO_CORE_SETTINGS_H

#include "halo_impl.h"

/** Setting spmv.kernel: the device product's kernel. */
enum { HALO_LOCAL_KERNEL_HALO = 0, HALO_LOCAL_KERNEL_CUSPARSE = 1 };

/** The options of a plan once resolved: every value final and checked; the
 *  components' settings (settings.c declares each: name, range, default,
 *  variable) below the options. */
typedef struct {
  halo_plan_options opts; /* the caller's options, with every unset value resolved below */
  const char *wisdom;     /* the wisdom file (option wisdom, HALO_WISDOM); NULL: none */
  const char *params;     /* parameter set of the model: a name or a path; NULL: the machine's
                             file (params_file) when it exists, else the built-in default */
  char params_file[1024]; /* the machine's parameter file (halo_params_cache_path); "" when
                             neither XDG_CACHE_HOME nor HOME is set */
  int gpu_aware_mpi;      /* -1: ask the MPI library; 0: no; 1: yes */
  int local_kernel;       /* HALO_LOCAL_KERNEL_HALO or _CUSPARSE */
  int cusparse_alg;       /* 1 or 2 (CUSPARSE_SPMV_CSR_ALG1/2) */
  int spmv_group;         /* threads per row of halo's kernel: 0 chooses, else 1..32, a power of 2 */
  int spmv_unroll;        /* entries a thread loads per step: 1, 2 or 4 */
  int64_t spmv_max_blocks;
  int spmv_carveout;   /* -1: the driver's choice; else a percentage */
  int64_t spmv_long_row; /* rows of more entries go to the long-row kernel; 0 chooses */
  int product_first;   /* 0 or 1 */
  int compute_nonblocking;
  int timeline;
  int copy_timing;
  int ipc_signal; /* 0: events and MPI; 1: flags on the GPU where every rank can; 2: 1 where
                     every rank has a GPU of its own, else 0 */
  int auto_trial;     /* strategy AUTO's trial: 0 at plan time, 1 on the program's first calls */
  int nccl_background; /* 1: NCCL's communicator made in the background, ipc meanwhile */
  int max_count;      /* largest count of one MPI message, in values */
  int64_t unit_max;   /* exec.unit_max_bytes: the largest entry the exchange buffers hold */
  int64_t timeout_ms; /* exchange_timeout_ms: the longest wait for messages; 0: none */
  int transport_env;  /* the transport came from HALO_TRANSPORT (for messages) */
} halo_settings;

/**
 * Resolve options on this rank: defaults and environment variables for the
 * unset ones, every value checked. Not collective. HALO_ERR_INVALID_ARG
 * naming the option (and the variable, when the value came from one).
 */
halo_status halo_settings_resolve(const halo_plan_options *opts, halo_settings *s);

/**
 * Every rank of comm must plan with the same settings (the device, the stream
 * and the parameter file's contents excepted). Collective:
 * HALO_ERR_INCONSISTENT "plan options differ across ranks: NAME is A on some
 * ranks and B on others" on every rank.
 */
halo_status halo_settings_agree(MPI_Comm comm, const halo_settings *s);

/**
 * Largest count of one MPI message outside plans (the readers' and
 * distribution's transfers): HALO_DEBUG_MAX_COUNT when set (for tests of the
 * splitting of large messages), else INT_MAX. HALO_ERR_INVALID_ARG for a
 * malformed value.
 */
halo_status halo_settings_max_count(int *count_p);

/**
 * Failure injection from the environment (tests): HALO_DEBUG_FAIL_ALLOC=K
 * makes the K-th counted host allocation of this process fail (counted from
 * its start; a launcher sets it on the rank that is to fail). 0 when unset;
 * a value that is not a whole number above 0 is ignored (the allocator that
 * reads it cannot report an error). Allocates nothing.
 */
int64_t halo_settings_fail_alloc(void);

/** Default of HALO_INPUT_LIMIT, in bytes. */
#define HALO_INPUT_LIMIT_DEFAULT (INT64_C(1) << 30)

/**
 * The readers' limit on the memory that a matrix file's rows and columns may
 * need beyond its entries (halo/io.h, "limits of the readers"), in bytes:
 * HALO_INPUT_LIMIT when set (bytes with an optional k, M, G or T; "none": no
 * limit), else HALO_INPUT_LIMIT_DEFAULT. HALO_ERR_INVALID_ARG for a
 * malformed value.
 */
halo_status halo_settings_input_limit(int64_t *bytes_p);

#endif
