/* Helpers of the test programs: silent on success, a clear message and a
 * failing exit on the first failure (MPI_Abort in MPI programs, so that no
 * rank is left waiting). */
#ifndef HALO_TEST_UTIL_H
#define HALO_TEST_UTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "halo.h"

static inline int test_mpi_initialized(void) {
  int flag = 0;
  MPI_Initialized(&flag);
  return flag;
}

static inline void test_fail(const char *file, int line, const char *what) {
  int rank = 0;
  if (test_mpi_initialized()) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  fprintf(stderr, "FAIL %s:%d (rank %d): %s\n  last error: %s\n", file, line, rank, what,
          halo_last_error());
  fflush(stderr);
  if (test_mpi_initialized()) MPI_Abort(MPI_COMM_WORLD, 1);
  exit(1);
}

#define CHECK(cond)                                                                                \
  do {                                                                                             \
    if (!(cond)) test_fail(__FILE__, __LINE__, #cond);                                             \
  } while (0)

#define CHECK_MSG(cond, ...)                                                                       \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      char test_msg_[1024];                                                                        \
      snprintf(test_msg_, sizeof test_msg_, __VA_ARGS__);                                          \
      test_fail(__FILE__, __LINE__, test_msg_);                                                    \
    }                                                                                              \
  } while (0)

#define CHECK_OK(call)                                                                             \
  do {                                                                                             \
    halo_status test_st_ = (call);                                                                 \
    if (test_st_ != HALO_SUCCESS) {                                                                \
      char test_msg_[1024];                                                                        \
      snprintf(test_msg_, sizeof test_msg_, "%s returned %d (%s)", #call, (int)test_st_,           \
               halo_status_string(test_st_));                                                      \
      test_fail(__FILE__, __LINE__, test_msg_);                                                    \
    }                                                                                              \
  } while (0)

/* The call fails with this status and the last error contains text. */
#define CHECK_ERR(call, status, text)                                                              \
  do {                                                                                             \
    halo_status test_st_ = (call);                                                                 \
    if (test_st_ != (status) || !strstr(halo_last_error(), (text))) {                              \
      char test_msg_[1400];                                                                        \
      snprintf(test_msg_, sizeof test_msg_,                                                        \
               "%s returned %d (%s), expected %d with \"%s\" in the message", #call,               \
               (int)test_st_, halo_status_string(test_st_), (int)(status), (text));                \
      test_fail(__FILE__, __LINE__, test_msg_);                                                    \
    }                                                                                              \
  } while (0)

/* Deterministic input vector, a function of the global index alone. */
static inline double test_x(int64_t j) {
  uint64_t h = (uint64_t)(j + 1) * 0x9e3779b97f4a7c15ULL;
  h ^= h >> 31;
  h *= 0x94d049bb133111ebULL;
  h ^= h >> 29;
  return (double)(h >> 11) * 0x1.0p-52 - 1.0;
}

#endif
