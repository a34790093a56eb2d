/* The CUDA executor's transports: the table of their hooks, in the order
 * they run, and the choice and opening of a device plan's transport (the
 * registry's descriptor checked, then the transport's per-communicator state
 * made). Above the transports' files and the device state, below the
 * executor (cuda_exec.c, cuda_setup.c), which reads the table. */
#include "halo_impl.h"

#include "exec/device.h"
#include "exec/transport.h"

#if HALO_HAVE_CUDA
#include "exec/cuda_exec.h"

/** Host MPI with persistent requests, for the channels staged (pinned host
 *  buffers, copied down and up on the exchange stream) and mpi (device
 *  buffers handed to a CUDA-aware MPI): cuda_mpi.c. */
extern const cuda_transport halo_cuda_mpi;
/** ncclSend/ncclRecv grouped per phase: cuda_nccl.c. */
extern const cuda_transport halo_cuda_nccl;
/** CUDA IPC between the ranks of one machine: cuda_ipc.c. */
extern const cuda_transport halo_cuda_ipc;
/** NVSHMEM puts with signals, from the GPU: cuda_nvshmem.c. */
extern const cuda_transport halo_cuda_nvshmem;
/** MPI one-sided puts between pinned host buffers (staged): cuda_rma.c. */
extern const cuda_transport halo_cuda_rma;

/* The transports, in the order their hooks run: the staged copy down and
 * the point MPI sends may start come before NCCL's group and ipc's signal;
 * MPI's sends start before ipc's pulls, its receives land after them. */
const cuda_transport *const halo_cuda_transports[HALO_CUDA_N_TRANSPORTS] = {
    &halo_cuda_mpi, &halo_cuda_nccl, &halo_cuda_ipc, &halo_cuda_nvshmem, &halo_cuda_rma};

halo_status halo_device_transport(halo_device *d, halo_transport requested, int aware,
                                  const int *made, halo_transport *chosen_p) {
  const halo_transport_where where = {.own_gpu = halo_device_ranks_per_gpu(d) == 1,
                                      .gpu_aware_mpi = halo_device_mpi_aware(d, aware),
                                      .compiled_only = 1,
                                      .named = requested != HALO_TRANSPORT_AUTO,
                                      .made = made};
  const halo_transport t = requested == HALO_TRANSPORT_AUTO
                               ? halo_transport_default(HALO_MEMORY_DEVICE, &where)
                               : requested;
  const halo_transport_desc *desc = halo_transport_find(t);
  if (!desc) return HALO_ERROR(HALO_ERR_INVALID_ARG, "unknown transport %d", (int)requested);
  HALO_CHECK(halo_transport_check(desc, HALO_MEMORY_DEVICE, &where, 1));
  for (int i = 0; i < HALO_CUDA_N_TRANSPORTS; i++) /* its per-communicator state (NCCL, NVSHMEM) */
    if (halo_cuda_transports[i]->transport == t && halo_cuda_transports[i]->open)
      HALO_CHECK(halo_cuda_transports[i]->open(d));
  *chosen_p = t;
  return HALO_SUCCESS;
}

/* The hooks of transport t, or NULL. */
static const cuda_transport *hooks_of(halo_transport t) {
  for (int i = 0; i < HALO_CUDA_N_TRANSPORTS; i++)
    if (halo_cuda_transports[i]->transport == t) return halo_cuda_transports[i];
  return NULL;
}

int halo_device_transport_state(const halo_device *d, halo_transport t, char *why, size_t len) {
  const cuda_transport *h = hooks_of(t);
  return h && h->state ? h->state(d, why, len) : 1;
}

halo_status halo_device_transport_later(halo_device *d, halo_transport requested, int aware,
                                        const int *made, int background, halo_transport *chosen_p,
                                        halo_transport *later_p) {
  *later_p = HALO_TRANSPORT_AUTO;
  const cuda_transport *h = hooks_of(requested);
  const halo_transport_desc *desc = halo_transport_find(requested);
  const halo_transport_where where = {.own_gpu = halo_device_ranks_per_gpu(d) == 1,
                                      .gpu_aware_mpi = halo_device_mpi_aware(d, aware),
                                      .compiled_only = 1,
                                      .named = 1};
  /* a transport whose per-communicator state can come later, not made (nor failed) on this
   * rank, which this device can run: agreed */
  const int state = h && h->open_background ? h->state(d, NULL, 0) : 1;
  int wait = background && (state == 2 || state == 0) && desc &&
             halo_transport_check(desc, HALO_MEMORY_DEVICE, &where, 0) == HALO_SUCCESS;
  HALO_MPI(MPI_Allreduce(MPI_IN_PLACE, &wait, 1, MPI_INT, MPI_MIN, halo_device_comm(d)));
  if (!wait) return halo_device_transport(d, requested, aware, made, chosen_p);
  /* its state in the background; meanwhile what auto takes without it */
  int without[HALO_N_TRANSPORTS] = {0};
  for (int i = 0; made && i < HALO_N_TRANSPORTS; i++) without[i] = made[i];
  without[requested] = 0;
  HALO_CHECK(halo_device_transport(d, HALO_TRANSPORT_AUTO, aware, without, chosen_p));
  HALO_CHECK(h->open_background(d));
  *later_p = requested;
  return HALO_SUCCESS;
}

#else /* no CUDA */

halo_status halo_device_transport(halo_device *d, halo_transport requested, int aware,
                                  const int *made, halo_transport *chosen_p) {
  (void)d, (void)requested, (void)aware, (void)made, (void)chosen_p;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
}
halo_status halo_device_transport_later(halo_device *d, halo_transport requested, int aware,
                                        const int *made, int background, halo_transport *chosen_p,
                                        halo_transport *later_p) {
  (void)background;
  *later_p = HALO_TRANSPORT_AUTO;
  return halo_device_transport(d, requested, aware, made, chosen_p);
}
int halo_device_transport_state(const halo_device *d, halo_transport t, char *why, size_t len) {
  (void)d, (void)t, (void)why, (void)len;
  return 1;
}
#endif
