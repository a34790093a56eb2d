/* Private core of halo: error recording, memory, agreement across ranks.
 * Included by every source file of the library; never installed. */
#ifndef HALO_IMPL_H
#define HALO_IMPL_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "halo.h"

/* The internal functions halo's CUDA module (libhalo_cuda.so, opened with
 * dlopen: interface/module.h) calls back: exported by libhalo.so beside the
 * public API, declared in no installed header (tests/exports.sh lists them
 * from the declarations that carry this mark). Like a backend tier, they
 * are for halo's own module only and change without notice. */
#if defined(__GNUC__) || defined(__clang__)
#define HALO_MODULE_API __attribute__((visibility("default")))
#else
#define HALO_MODULE_API
#endif

/* ---- statistics ---------------------------------------------------------
 * Bounds of the library's own arrays, out of the public headers (issue 41):
 * the public API hands out phases and set-up parts one at a time
 * (halo_plan_phase_stats, halo_plan_setup_part_seconds). */

/** Most phases of any strategy's schedule. */
#define HALO_MAX_PHASES 8
/** The parts of a plan's set-up: halo_setup_part's values are 0 to this - 1. */
#define HALO_SETUP_N_PARTS 8

/** A plan's statistics: what halo_plan_stats gives, and each phase and
 *  set-up part (halo_plan_phase_stats, halo_plan_setup_part_seconds). */
typedef struct {
  halo_stats s;
  halo_phase_stats phase[HALO_MAX_PHASES];
  double setup_part_seconds[HALO_SETUP_N_PARTS];
} halo_stats_full;

/* ---- errors -------------------------------------------------------------
 * Functions keep a local `halo_status st` and a `cleanup:` label that
 * unwinds in reverse order; the HALO_TRY family assigns st and jumps there. */

#define HALO_ERROR_LEN 1024

/** Record a failure (message printf-style) and return its code. */
HALO_MODULE_API halo_status halo_error_at(halo_status code, const char *file, int line,
                                          const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/** Record a failed MPI call (its error string) and return HALO_ERR_MPI. */
HALO_MODULE_API halo_status halo_error_mpi(int mpi_code, const char *call, const char *file,
                                           int line);

/** Clear the last error of the calling thread. */
HALO_MODULE_API void halo_error_clear(void);

/** Replace the message of the last error, keeping nothing of the old one. */
void halo_error_set_message(const char *msg);

#define HALO_ERROR(code, ...) halo_error_at((code), __FILE__, __LINE__, __VA_ARGS__)

#define HALO_TRY(expr)                                                                             \
  do {                                                                                             \
    st = (expr);                                                                                   \
    if (st != HALO_SUCCESS) goto cleanup;                                                          \
  } while (0)

#define HALO_FAIL(code, ...)                                                                       \
  do {                                                                                             \
    st = HALO_ERROR((code), __VA_ARGS__);                                                          \
    goto cleanup;                                                                                  \
  } while (0)

#define HALO_TRY_MPI(call)                                                                         \
  do {                                                                                             \
    int halo_mpi_rc_ = (call);                                                                     \
    if (halo_mpi_rc_ != MPI_SUCCESS) {                                                             \
      st = halo_error_mpi(halo_mpi_rc_, #call, __FILE__, __LINE__);                                \
      goto cleanup;                                                                                \
    }                                                                                              \
  } while (0)

/* Return-style variants for functions without cleanup. */
#define HALO_CHECK(expr)                                                                           \
  do {                                                                                             \
    halo_status halo_st_ = (expr);                                                                 \
    if (halo_st_ != HALO_SUCCESS) return halo_st_;                                                 \
  } while (0)

#define HALO_MPI(call)                                                                             \
  do {                                                                                             \
    int halo_mpi_rc_ = (call);                                                                     \
    if (halo_mpi_rc_ != MPI_SUCCESS)                                                               \
      return halo_error_mpi(halo_mpi_rc_, #call, __FILE__, __LINE__);                              \
  } while (0)

/**
 * Agree on a status across @p comm (collective). If any rank failed, every
 * rank returns the status of the lowest failing rank and records its message
 * prefixed by "rank R: ". Must be reached by every rank of comm.
 */
HALO_MODULE_API halo_status halo_agree(MPI_Comm comm, halo_status st);

/* ---- memory -------------------------------------------------------------
 * Every host allocation of the library goes through these (tests count them:
 * no allocation may happen inside an exchange or a product). */

HALO_MODULE_API void *halo_malloc(size_t bytes);
HALO_MODULE_API void *halo_calloc(size_t count, size_t size);
HALO_MODULE_API void *halo_realloc(void *p, size_t bytes);
HALO_MODULE_API void halo_free(void *p);

/** Allocate count elements of size bytes (uninitialised unless zero is set);
 *  fails with a message on overflow or exhaustion. count 0 gives NULL. */
HALO_MODULE_API halo_status halo_alloc_array(void **p, size_t count, size_t size, int zero);

#define HALO_ALLOC(ptr, count)  halo_alloc_array((void **)&(ptr), (size_t)(count), sizeof *(ptr), 0)
#define HALO_CALLOC(ptr, count) halo_alloc_array((void **)&(ptr), (size_t)(count), sizeof *(ptr), 1)
#define HALO_FREE(ptr)                                                                             \
  do {                                                                                             \
    halo_free(ptr);                                                                                \
    (ptr) = NULL;                                                                                  \
  } while (0)

/** Number of allocations made so far by the library: host (malloc, calloc,
 *  realloc), device and pinned memory, and CUDA streams, events and library
 *  handles. */
int64_t halo_debug_alloc_count(void);

/** Count one allocation or handle creation made outside halo_malloc. */
HALO_MODULE_API void halo_debug_count_alloc(void);

/** Count one allocation made outside halo_malloc (device and pinned memory,
 *  CUDA streams and events); 1 when failure injection makes it the one to
 *  fail (its caller then fails as that allocation would). */
HALO_MODULE_API int halo_debug_alloc_fails(void);

/** Failure injection (tests): the k-th host allocation from now on
 *  (halo_malloc, halo_calloc, halo_realloc) returns NULL; 0 disarms. */
void halo_debug_fail_alloc(int64_t k);
/** Patterns learned by plans (sparse data exchanges), in this process. */
int64_t halo_debug_patterns_learned(void);
/** Calls strategy AUTO's trials made in this process (tests: a remembered choice times none). */
int64_t halo_debug_trial_calls(void);
/** Failure injection (tests): the CUDA calls checked by HALO_CUDA and
 *  HALO_TRY_CUDA are counted; the k-th from now on (halo_debug_fail_cuda,
 *  0: none) is not made and fails with cudaErrorUnknown. */
HALO_MODULE_API int halo_debug_cuda_fails(void);
int64_t halo_debug_cuda_count(void);
void halo_debug_fail_cuda(int64_t k);
/** Failure injection (tests): a failed exchange's release of its waits
 *  (interface/exchange.c) starts ms later on this rank (0: at once), as
 *  NCCL's abort of its communicator may (0.1-0.5 s seen on H100s). */
void halo_debug_slow_release(int64_t ms);
/** Test hook: the forward exchanges of plans of transport t whose schedule
 *  is strategy s (Split: with message_cap cap) take us microseconds more on
 *  this rank (a sleep in their begin); us 0 disarms. For the trial on the
 *  program's calls: a candidate made slow on purpose. */
void halo_debug_slow_schedule(halo_transport t, halo_strategy s, int64_t cap, int64_t us);

/* ---- device memory: CUDA when compiled in; otherwise every call fails with
 * HALO_ERR_NOT_COMPILED. No CUDA type appears here, so that the planning
 * code can use them without a CUDA header. */

halo_status halo_dev_malloc(void **p, size_t bytes); /* counted; 0 bytes gives NULL */
void halo_dev_free(void *p);
halo_status halo_pinned_malloc(void **p, size_t bytes); /* page-locked host memory, counted */
void halo_pinned_free(void *p);
/** Synchronous copies between host and device memory, and zeros of device
 *  memory: complete on return, before any of halo's (non-blocking) streams
 *  may read them. */
halo_status halo_dev_to_host(void *dst, const void *src, size_t bytes);
halo_status halo_host_to_dev(void *dst, const void *src, size_t bytes);
halo_status halo_dev_zero(void *dst, size_t bytes);
/** Whether p is device (or managed) memory of CUDA. */
halo_status halo_dev_pointer_kind(const void *p, int *is_device_p);
/** The current CUDA device of this process. */
halo_status halo_dev_current(int *device_p);
/** Message for device memory in a build without CUDA. */
#define HALO_NO_CUDA_MESSAGE "device memory: not compiled in: rebuild with HALO_ENABLE_CUDA=ON"
/** Message for the graph partition in a build without METIS. */
#define HALO_NO_METIS_MESSAGE                                                                      \
  "partition metis: not compiled in: rebuild with HALO_ENABLE_METIS=ON (Debian: libmetis-dev)"

/** Whether a strategy value is one this build knows. */
int halo_strategy_valid(halo_strategy s);

/* ---- utilities ---------------------------------------------------------- */

/** fopen(path, "rb"), or HALO_ERR_IO "cannot open 'path': reason". */
halo_status halo_file_open_read(const char *path, FILE **fp_p);

/** Remove path if it is a regular file: what a failed writer leaves (never a
 *  device such as /dev/null, nor a link). */
void halo_file_remove_partial(const char *path);

/** Close a file just written to path (*fp_p set to NULL). bad: a write
 *  failed, with errno err (0: unknown). When bad or fclose fails, the file
 *  is removed if it is a regular file (not a device, nor a link) and
 *  HALO_ERR_IO "cannot write 'path': reason" returned. */
halo_status halo_file_close_written(FILE **fp_p, const char *path, int bad, int err);

/** Sort int64 keys (non-negative) ascending, in place (LSD radix sort). */
halo_status halo_sort_i64(int64_t *keys, int64_t n);

/** Sort int64 keys ascending, permuting @p vals alongside (stable). */
halo_status halo_sort_i64_pairs(int64_t *keys, int64_t *vals, int64_t n);

/** Index of the range [ranges[r], ranges[r+1]) of @p n_ranges holding @p x,
 *  or -1 if none. Empty ranges are skipped. ranges has n_ranges+1 entries. */
int halo_find_range(const int64_t *ranges, int n_ranges, int64_t x);

/** Largest count of MPI elements per message (INT_MAX, or HALO_DEBUG_MAX_COUNT
 *  from the environment, for tests of message splitting). */
int halo_max_count(void);

/** Send / receive int64 or double arrays of any length, split into messages of
 *  at most halo_settings_max_count() elements, all with one tag (blocking). */
halo_status halo_send_large(const void *buf, int64_t count, MPI_Datatype type, int dest, int tag,
                            MPI_Comm comm);
halo_status halo_recv_large(void *buf, int64_t count, MPI_Datatype type, int source, int tag,
                            MPI_Comm comm);

/**
 * The check every public entry point makes of the caller's communicator
 * before any MPI call on it: HALO_ERR_INVALID_ARG for MPI_COMM_NULL or an
 * intercommunicator, naming the argument (what). Not collective: every rank
 * that gets the same communicator refuses it alike; a program that passes
 * MPI_COMM_NULL on some ranks only cannot be detected by the others.
 */
halo_status halo_comm_check(MPI_Comm comm, const char *what);

/** Wall clock in seconds. */
double halo_wtime(void);

#endif /* HALO_IMPL_H */
