/* A communication helper of the CUDA executor: a rank without rows and
 * ghosts only forwards, and, unless the plan's transport keeps device buffers
 * there (cuda_transport.device_helpers), its forwarded values stay in pinned
 * host memory. Its messages go by host MPI (the
 * requests of cuda_mpi.c, on pinned buffers), and it receives the ipc
 * messages of the GPU ranks of its machine by copying them from their device
 * buffers straight into host memory (Split+DD, halo_cuda_ipc_receive); with the
 * staged transport the GPU ranks send it their share by host MPI (Split+MD).
 * It packs, copies and unpacks on the host from the schedule's maps. */
#include "halo_impl.h"

#if HALO_HAVE_CUDA
#include <string.h>

#include "exec/cuda_exec.h"
#include "exec/cuda_ipc.h"
#include "exec/cuda_mpi.h"

/* A helper's phase k, on the host: pack from work, copy to itself (forward),
 * send. */
halo_status halo_cuda_helper_start(halo_exec *ex, cuda_data *d, int k) {
  const halo_schedule *s = S(ex);
  const halo_phase *ph = &s->phase[k];
  cphase *p = &d->ph[k];
  double *h_send = halo_cuda_mpi_host_send(d, k);
  const int64_t nl = s->n_local, ng = s->n_ghost, b = d->eb;
  unsigned char *w = (unsigned char *)d->work;
  int self_recv = -1;
  for (int i = 0; i < ph->n_recv; i++)
    if (ph->recv[i].peer == s->rank) self_recv = i;
  for (int i = 0; i < ph->n_send; i++) {
    const halo_msg *m = &ph->send[i];
    const int64_t *src = ph->pack + m->offset;
    if (m->peer == s->rank) { /* work to work, in the order of the receive from itself */
      if (s->add) continue;   /* added in receive order at the finish */
      if (self_recv < 0)
        return HALO_ERROR(HALO_ERR_INTERNAL, "phase %d: a copy to itself without its receive", k);
      const int64_t *dst = ph->unpack + ph->recv[self_recv].offset;
      if (ex->unit.is_default)
        for (int64_t t = 0; t < m->count; t++) d->work[dst[t] - ng] = d->work[src[t] - nl];
      else
        for (int64_t t = 0; t < m->count; t++)
          memcpy(w + (dst[t] - ng) * b, w + (src[t] - nl) * b, (size_t)b);
      continue;
    }
    if (ex->unit.is_default) {
      double *to = h_send + p->send[i].buf_off;
      for (int64_t t = 0; t < m->count; t++) to[t] = d->work[src[t] - nl];
    } else {
      unsigned char *to = (unsigned char *)halo_cuda_at(h_send, p->send[i].buf_off, d);
      for (int64_t t = 0; t < m->count; t++) memcpy(to + t * b, w + (src[t] - nl) * b, (size_t)b);
    }
  }
  return halo_cuda_mpi_start_sends(ex, d, k);
}

/* A helper's phase k, on the host: ipc messages copied from the senders'
 * device buffers into host memory, host MPI, unpacking into work (adding, in
 * receive list order, in reverse). */
halo_status halo_cuda_helper_finish(halo_exec *ex, cuda_data *d, int k) {
  const halo_schedule *s = S(ex);
  const halo_phase *ph = &s->phase[k];
  cphase *p = &d->ph[k];
  const double *h_recv = halo_cuda_mpi_host_recv(d, k);
  HALO_CHECK(halo_cuda_ipc_receive(ex, d, k));
  HALO_CHECK(halo_cuda_mpi_wait_receives(ex, d, k));
  HALO_CHECK(halo_cuda_ipc_copied(ex, d, k));
  if (s->add && ex->unit.is_default) {
    for (int64_t i = 0; i < p->n_add; i++) {
      const int64_t a = p->h_add_src[i];
      d->work[p->h_add_dst[i] - s->n_ghost] += a >= 0 ? h_recv[a] : d->work[-1 - a - s->n_local];
    }
    return HALO_SUCCESS;
  }
  const int64_t b = d->eb;
  unsigned char *w = (unsigned char *)d->work;
  if (s->add) { /* the unit's operation, in the same order */
    for (int64_t i = 0; i < p->n_add; i++) {
      const int64_t a = p->h_add_src[i];
      const void *from =
          a >= 0 ? halo_cuda_at(h_recv, a, d) : (void *)(w + (-1 - a - s->n_local) * b);
      halo_xunit_apply(&ex->unit, w + (p->h_add_dst[i] - s->n_ghost) * b, from, 1);
    }
    return HALO_SUCCESS;
  }
  for (int i = 0; i < ph->n_recv; i++) {
    const halo_msg *m = &ph->recv[i];
    if (m->peer == s->rank) continue;
    const int64_t *dst = ph->unpack + m->offset;
    if (ex->unit.is_default) {
      const double *from = h_recv + p->recv[i].buf_off;
      for (int64_t t = 0; t < m->count; t++) d->work[dst[t] - s->n_ghost] = from[t];
    } else {
      const unsigned char *from = (unsigned char *)halo_cuda_at(h_recv, p->recv[i].buf_off, d);
      for (int64_t t = 0; t < m->count; t++)
        memcpy(w + (dst[t] - s->n_ghost) * b, from + t * b, (size_t)b);
    }
  }
  return HALO_SUCCESS;
}

#endif /* HALO_HAVE_CUDA */
