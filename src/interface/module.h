/* halo's CUDA module: in a shared build with CUDA, the CUDA executor, its
 * transports, the device matrix code, the device state and the device
 * measurements live in libhalo_cuda.so, which links the CUDA runtime,
 * cuSPARSE, NCCL (and libhalo_nvshmem); libhalo.so links none of them. The
 * module is found beside libhalo.so and opened (dlopen) at the first call
 * that needs it: a device context, a device matrix, a device plan, a device
 * measurement. A program that makes none never loads it.
 *
 * The calls from the host side into the module are the lists below and in
 * core/module.h, one line each: libhalo.so defines each as a forwarder to
 * the module's table (module.c here, core/module.c for the device-memory
 * calls of the planning code, which also loads the module); the module fills
 * the table with its functions (module_table.c). A static build, a build without CUDA and the
 * tests' halo_internal link the module's objects in and call them directly: the list is then
 * unused. The module calls back into libhalo through the functions the internal headers mark
 * HALO_MODULE_API.
 *
 * Each line: S(name, (parameters), (arguments)) for a function returning
 * halo_status (the forwarder loads the module and returns its error where it
 * cannot), V(...) for one returning nothing and R(type, name, ..., fallback)
 * for one returning a value: these two are called with an object only the
 * module made (a device, a timeline, a product), so the module is loaded by
 * then; the fallback is what they give where it is not. */
#ifndef HALO_INTERFACE_MODULE_H
#define HALO_INTERFACE_MODULE_H

#include "halo_impl.h"

#include "core/module.h"
#include "exec/device.h"
#include "exec/exec.h"
#include "interface/measure.h"
#include "spmv/device.h"

/* halo_device_create and halo_measure_device are collective: their
 * forwarders agree whether the module loaded before calling it (module.c),
 * so they are not in the list. The device-memory calls of the planning code
 * are core/module.h's. */
#define HALO_CUDA_MODULE_CALLS(S, V, R)                                                            \
  V(halo_device_destroy, (halo_device * *dev_p), (dev_p))                                          \
  S(halo_device_check_id, (int device_id), (device_id))                                            \
  R(int, halo_device_id, (const halo_device *d), (d), -1)                                          \
  R(int, halo_device_ranks_per_gpu, (const halo_device *d), (d), 1)                                \
  R(const char *, halo_device_name, (const halo_device *d), (d), "")                               \
  R(int, halo_device_mpi_aware, (const halo_device *d, int setting), (d, setting), 0)              \
  R(void *, halo_device_exchange_stream, (const halo_device *d), (d), NULL)                        \
  S(halo_device_compute_stream, (halo_device * d, int nonblocking, void **stream_p),               \
    (d, nonblocking, stream_p))                                                                    \
  S(halo_device_transport,                                                                         \
    (halo_device * d, halo_transport requested, int aware, const int *made,                        \
     halo_transport *chosen_p),                                                                    \
    (d, requested, aware, made, chosen_p))                                                               \
  S(halo_device_transport_later,                                                                   \
    (halo_device * d, halo_transport requested, int aware, const int *made, int background,        \
     halo_transport *chosen_p, halo_transport *later_p),                                           \
    (d, requested, aware, made, background, chosen_p, later_p))                                     \
  R(int, halo_device_transport_state,                                                              \
    (const halo_device *d, halo_transport t, char *why, size_t len), (d, t, why, len), 1)          \
  V(halo_debug_nccl_background_fail, (int on), (on))                                              \
  S(halo_device_streams_wait, (void *const *streams, int n, int64_t timeout_ms),                   \
    (streams, n, timeout_ms))                                                                      \
  S(halo_timeline_create, (void *comp, void *xstream, halo_timeline **tl_p),                       \
    (comp, xstream, tl_p))                                                                         \
  V(halo_timeline_destroy, (halo_timeline * *tl_p), (tl_p))                                        \
  S(halo_timeline_mark, (halo_timeline * tl, int k), (tl, k))                                      \
  S(halo_timeline_read, (halo_timeline * tl, double avg[3], int64_t *n_p), (tl, avg, n_p))         \
  S(halo_stopwatch_create, (void *stream, int n, halo_stopwatch **sw_p), (stream, n, sw_p))        \
  V(halo_stopwatch_destroy, (halo_stopwatch * *sw_p), (sw_p))                                      \
  S(halo_stopwatch_mark, (halo_stopwatch * sw, int i, int stop), (sw, i, stop))                    \
  S(halo_stopwatch_read, (halo_stopwatch * sw, int n, double *seconds), (sw, n, seconds))          \
  S(halo_spmv_device_create,                                                                       \
    (void *stream, halo_matrix A, const halo_spmv_device_options *o, halo_spmv_device **sp_p),     \
    (stream, A, o, sp_p))                                                                          \
  V(halo_spmv_device_destroy, (halo_spmv_device * *sp_p), (sp_p))                                  \
  R(int64_t, halo_spmv_device_long_rows, (const halo_spmv_device *sp), (sp), 0)                    \
  S(halo_spmv_device_diag,                                                                         \
    (halo_spmv_device * sp, double alpha, const double *x, double beta, double *y),                \
    (sp, alpha, x, beta, y))                                                                       \
  S(halo_spmv_device_offd,                                                                         \
    (halo_spmv_device * sp, double alpha, const double *x_ghost, double *y),                       \
    (sp, alpha, x_ghost, y))                                                                       \
  S(halo_spmv_device_diag_t,                                                                       \
    (halo_spmv_device * sp, double alpha, const double *x, double beta, double *y),                \
    (sp, alpha, x, beta, y))                                                                       \
  S(halo_spmv_device_offd_t, (halo_spmv_device * sp, double alpha, const double *x, double *g),    \
    (sp, alpha, x, g))                                                                             \
  S(halo_spmv_device_stream_in, (halo_spmv_device * sp, void *stream), (sp, stream))               \
  S(halo_spmv_device_stream_out, (halo_spmv_device * sp, void *stream), (sp, stream))              \
  S(halo_spmv_device_capturing, (const halo_spmv_device *sp, void *stream, int *capturing_p),      \
    (sp, stream, capturing_p))                                                                     \
  R(const halo_exec_ops *, halo_exec_cuda, (void), (), NULL)

/* The module's table: the head (ABI, version, size, the device-memory calls:
 * core/module.h), then the calls above. */
#define HALO_MODULE_MEMBER_R_(type, name, params, args, fallback) type(*name) params;
typedef struct {
  halo_cuda_module_head head;
  halo_status (*device_create)(MPI_Comm comm, int device_id, halo_device **dev_p);
  halo_status (*measure_device)(halo_measure *c);
  HALO_CUDA_MODULE_CALLS(HALO_MODULE_MEMBER_S_, HALO_MODULE_MEMBER_V_, HALO_MODULE_MEMBER_R_)
} halo_cuda_module;

#endif
