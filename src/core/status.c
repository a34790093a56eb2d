/* Status codes, the last-error message, and agreement on a status across ranks. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "halo_impl.h"

static _Thread_local char halo_err_msg[HALO_ERROR_LEN];

const char *halo_status_string(halo_status status) {
  switch (status) {
  case HALO_SUCCESS: return "success";
  case HALO_ERR_INVALID_ARG: return "invalid argument";
  case HALO_ERR_OUT_OF_MEMORY: return "out of memory";
  case HALO_ERR_MPI: return "MPI error";
  case HALO_ERR_IO: return "input/output error";
  case HALO_ERR_FORMAT: return "malformed file";
  case HALO_ERR_INCONSISTENT: return "inconsistent across ranks";
  case HALO_ERR_NOT_COMPILED: return "not compiled in";
  case HALO_ERR_UNSUPPORTED: return "unsupported";
  case HALO_ERR_STATE: return "call out of order";
  case HALO_ERR_INTERNAL: return "internal consistency check failed";
  case HALO_ERR_CUDA: return "CUDA error";
  case HALO_ERR_CUSPARSE: return "cuSPARSE error";
  case HALO_ERR_NCCL: return "NCCL error";
  case HALO_ERR_OUT_OF_RANGE: return "value out of range";
  case HALO_ERR_TIMEOUT: return "timed out";
  }
  return "unknown status";
}

const char *halo_last_error(void) { return halo_err_msg; }

void halo_error_clear(void) { halo_err_msg[0] = '\0'; }

void halo_error_set_message(const char *msg) {
  snprintf(halo_err_msg, sizeof halo_err_msg, "%s", msg ? msg : "");
}

halo_status halo_error_at(halo_status code, const char *file, int line, const char *fmt, ...) {
  char msg[HALO_ERROR_LEN];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  /* Failures of the library itself or of a system below it carry the place
   * they were detected; errors in the caller's input speak for themselves. */
  if (code == HALO_ERR_INTERNAL || code == HALO_ERR_MPI || code == HALO_ERR_CUDA ||
      code == HALO_ERR_CUSPARSE || code == HALO_ERR_NCCL) {
    const char *base = strrchr(file, '/');
    /* a message longer than the buffer is cut: the return value says so */
    if (snprintf(halo_err_msg, sizeof halo_err_msg, "%s [%s:%d]", msg, base ? base + 1 : file,
                 line) < 0)
      halo_err_msg[0] = '\0';
  } else {
    snprintf(halo_err_msg, sizeof halo_err_msg, "%s", msg);
  }
  return code;
}

halo_status halo_error_mpi(int mpi_code, const char *call, const char *file, int line) {
  char mpi_msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(mpi_code, mpi_msg, &len) != MPI_SUCCESS)
    snprintf(mpi_msg, sizeof mpi_msg, "code %d", mpi_code);
  /* Keep only the function name of the call. */
  char name[64];
  size_t n = strcspn(call, "(");
  if (n >= sizeof name) n = sizeof name - 1;
  memcpy(name, call, n);
  name[n] = '\0';
  return halo_error_at(HALO_ERR_MPI, file, line, "%s failed: %s", name, mpi_msg);
}

halo_status halo_agree(MPI_Comm comm, halo_status st) {
  int rank, rc;
  if ((rc = MPI_Comm_rank(comm, &rank)) != MPI_SUCCESS)
    return halo_error_mpi(rc, "MPI_Comm_rank", __FILE__, __LINE__);
  struct {
    int ok;
    int rank;
  } in = {st == HALO_SUCCESS ? 1 : 0, rank}, out;
  if ((rc = MPI_Allreduce(&in, &out, 1, MPI_2INT, MPI_MINLOC, comm)) != MPI_SUCCESS)
    return halo_error_mpi(rc, "MPI_Allreduce", __FILE__, __LINE__);
  if (out.ok) return HALO_SUCCESS;
  struct {
    int code;
    char msg[HALO_ERROR_LEN];
  } report;
  if (rank == out.rank) {
    report.code = (int)st;
    /* a message agreed before already names its rank: once is enough */
    size_t d = 0;
    if (strncmp(halo_err_msg, "rank ", 5) == 0)
      while (halo_err_msg[5 + d] >= '0' && halo_err_msg[5 + d] <= '9') d++;
    const int named = d > 0 && halo_err_msg[5 + d] == ':';
    const int w = named
                      ? snprintf(report.msg, sizeof report.msg, "%s", halo_err_msg)
                      : snprintf(report.msg, sizeof report.msg, "rank %d: %s", rank, halo_err_msg);
    if (w < 0) report.msg[0] = '\0';
  }
  if ((rc = MPI_Bcast(&report, (int)sizeof report, MPI_BYTE, out.rank, comm)) != MPI_SUCCESS)
    return halo_error_mpi(rc, "MPI_Bcast", __FILE__, __LINE__);
  report.msg[sizeof report.msg - 1] = '\0';
  halo_error_set_message(report.msg);
  return (halo_status)report.code;
}
