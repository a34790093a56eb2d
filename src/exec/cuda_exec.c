/* CUDA backend of the executor. Every phase packs its sends on the device in
 * one launch (a copy when the map is one contiguous run), moves its messages
 * by their channel, and unpacks in one launch. Each transport has its file,
 * its table of hooks and its private state (cuda_exec.h; the table of all in
 * cuda_transports.c), where its file's head comment says how it moves a
 * phase's messages: host MPI, staged through pinned host memory or on device
 * buffers (cuda_mpi.c), and one file for each device transport.
 *
 * The exchange runs on the communicator's exchange stream, after an event
 * recorded on the plan's compute stream at begin; the compute stream waits
 * for an event recorded at the end. Everything is made at plan time.
 *
 * A reverse exchange (an add schedule) runs the same channels; nothing is
 * received in place: every phase ends with one launch that adds, for each
 * destination entry, its received values and its copies to itself in the
 * order of the receive list (one thread per entry, no atomics), so that the
 * result is the host backend's, bit for bit, on every run. Its additions into
 * x_local wait for the work enqueued on the compute stream before the end.
 *
 * This file runs the phases, packing and unpacking, and calls the hooks. A
 * rank without rows and ghosts (a communication helper) runs its phases on
 * the host (cuda_helper.c). */
#include "halo_impl.h"

#include "exec/exec.h"

#if HALO_HAVE_CUDA
#include <string.h>

#include "exec/cuda_exec.h"
#include "exec/device.h"

/* Pack phase k, make its copies, and send what goes without the host. */
static halo_status phase_start(halo_exec *ex, cuda_data *d, int k) {
  if (d->host_fwd) return halo_cuda_helper_start(ex, d, k);
  const halo_schedule *s = S(ex);
  cphase *p = &d->ph[k];
  cudaStream_t cs = d->xs;
  HALO_CUDA_EACH(before_pack, ex, d, k);
  const int one = ex->unit.is_default;
  const char *run =
      p->run_from_work ? halo_cuda_at(d->work, p->run_off, d) : halo_cuda_at(d->x, p->run_off, d);
  if (p->n_pack && !p->transport_packs) {
    if (p->pack_run)
      HALO_CUDA(cudaMemcpyAsync(p->d_send, run, (size_t)(p->n_pack * d->eb),
                                cudaMemcpyDeviceToDevice, cs));
    else if (one)
      HALO_CUDA(halo_cuda_gather(p->d_send, p->d_pack, p->n_pack, d->x, d->work, s->n_local, cs));
    else
      HALO_CUDA(halo_cuda_gather_u(p->d_send, p->d_pack, p->n_pack, d->x, d->work, s->n_local,
                                   d->eb, d->ws, cs));
  }
  if (p->n_copy && one)
    HALO_CUDA(halo_cuda_copy_map(p->d_copy_src, p->d_copy_dst, p->n_copy, d->x, s->n_local,
                                 ex->ghost, d->work, s->n_ghost, cs));
  else if (p->n_copy)
    HALO_CUDA(halo_cuda_move_u(p->d_copy_src, p->d_copy_dst, p->n_copy, d->x, d->work, s->n_local,
                               ex->ghost, d->work, s->n_ghost, d->eb, d->ws, cs));
  HALO_CUDA_EACH(send, ex, d, k);
  return HALO_SUCCESS;
}

/* Finish phase k: the transports' receives, then unpacking or adding. */
static halo_status phase_finish(halo_exec *ex, cuda_data *d, int k) {
  if (d->host_fwd) return halo_cuda_helper_finish(ex, d, k);
  const halo_schedule *s = S(ex);
  cphase *p = &d->ph[k];
  cudaStream_t cs = d->xs;
  HALO_CUDA_EACH(receive, ex, d, k);
  HALO_CUDA_EACH(land, ex, d, k);
  const halo_xunit *u = &ex->unit;
  if (u->is_default) {
    if (p->n_unpack && !p->transport_unpacks)
      HALO_CUDA(halo_cuda_scatter(p->d_recv, p->d_unpack_src, p->d_unpack_dst, p->n_unpack,
                                  ex->ghost, d->work, s->n_ghost, cs));
    if (p->n_add_u)
      HALO_CUDA(halo_cuda_add_by_dst(p->d_add_dst, p->d_add_ptr, p->d_add_ref, p->n_add_u,
                                     p->d_recv, d->x, s->n_local, d->dst, d->work, s->n_ghost, cs));
    return HALO_SUCCESS;
  }
  if (p->n_unpack && !p->transport_unpacks)
    HALO_CUDA(halo_cuda_move_u(p->d_unpack_src, p->d_unpack_dst, p->n_unpack, p->d_recv, NULL,
                               INT64_MAX, ex->ghost, d->work, s->n_ghost, d->eb, d->ws, cs));
  if (p->n_add_u)
    HALO_CUDA(halo_cuda_add_by_dst_u(p->d_add_dst, p->d_add_ptr, p->d_add_ref, p->n_add_u,
                                     p->d_recv, d->x, s->n_local, d->dst, d->work, s->n_ghost,
                                     u->scalar, u->per, u->op == HALO_OP_INSERT, cs));
  return HALO_SUCCESS;
}

static halo_status cuda_copy_times(halo_exec *ex, double *t_down, double *t_up, int64_t *bytes_down,
                                   int64_t *bytes_up) {
  for (int t = 0; t < HALO_CUDA_N_TRANSPORTS; t++)
    if (halo_cuda_transports[t]->copy_times)
      return halo_cuda_transports[t]->copy_times(ex, ex->data, t_down, t_up, bytes_down, bytes_up);
  return HALO_ERROR(HALO_ERR_UNSUPPORTED, "no transport of the CUDA executor times its copies");
}

static halo_status cuda_mark_start(halo_exec *ex, int on) {
  cuda_data *d = ex->data;
  d->start_marked = 0;
  if (on) {
    HALO_CUDA(cudaEventRecord(d->ev_start, d->comp));
    d->start_marked = 1;
    HALO_CHECK(halo_timeline_start(ex->cfg.tl));
  }
  return HALO_SUCCESS;
}

/* The largest word (8, 4, 2 or 1 bytes) that divides the entry's bytes and
 * the caller's addresses: every copy moves whole aligned words. */
static int word_size(int64_t eb, const void *a, const void *b) {
  int ws = 8;
  while (ws > 1 && (eb % ws || (uintptr_t)a % (uintptr_t)ws || (uintptr_t)b % (uintptr_t)ws))
    ws /= 2;
  return ws;
}

/* Forward: the slots of the rank's own entries, from the source, inserted or
 * added (a unit's op); on the exchange stream, while the messages go. */
static halo_status own_forward(halo_exec *ex, cuda_data *d, void *out) {
  const halo_leaves *L = ex->cfg.leaves;
  const halo_xunit *u = &ex->unit;
  if (!L || !L->n_own) return HALO_SUCCESS;
  HALO_CUDA(halo_cuda_deliver_u(out, d->x, d->d_own_index, d->d_own_slot, L->n_own, u->scalar,
                                u->per, u->op == HALO_OP_ADD, d->xs));
  return HALO_SUCCESS;
}

static halo_status cuda_begin(halo_exec *ex, const double *src, double *dst) {
  const halo_schedule *s = S(ex);
  const halo_leaves *L = ex->cfg.leaves;
  cuda_data *d = ex->data;
  d->x = src;
  d->dst = dst;
  d->own_src = src;
  d->eb = ex->unit.bytes;
  d->ws = ex->unit.is_default ? 8 : word_size(d->eb, src, dst);
  d->fadd_on = 0;
  if (!ex->unit.is_default && d->tr->units == 0)
    return HALO_ERROR(HALO_ERR_UNSUPPORTED, "transport %s moves one double per entry only",
                      d->tr->name);
  HALO_CUDA_EACH(begin, ex, d);
  if (d->start_marked) /* halo_spmv marked it before enqueueing the local product */
    d->start_marked = 0;
  else
    HALO_CUDA(cudaEventRecord(d->ev_start, d->comp)); /* the source is ready */
  HALO_CUDA(cudaStreamWaitEvent(d->xs, d->ev_start, 0));
  const halo_xunit *u = &ex->unit;
  if (s->add) {
    if (!halo_leaves_identity(L)) { /* each ghost: the sum of its slots, in slot order */
      if (u->is_default)
        HALO_CUDA(halo_cuda_slot_sum(ex->ghost, src, d->d_slot_ptr, d->d_slot, L->n_ghost, d->xs));
      else
        HALO_CUDA(halo_cuda_slot_sum_u(ex->ghost, src, d->d_slot_ptr, d->d_slot, L->n_ghost,
                                       u->scalar, u->per, u->op == HALO_OP_INSERT, d->xs));
      d->x = ex->ghost;
    }
    if (s->n_work) {
      if (d->host_fwd)
        memset(d->work, 0, (size_t)(s->n_work * d->eb));
      else
        HALO_CUDA(cudaMemsetAsync(d->work, 0, (size_t)(s->n_work * d->eb), d->xs));
    }
  } else {
    void *out = dst ? (void *)dst : (void *)ex->slots;
    if (u->op == HALO_OP_ADD && out == (void *)ex->ghost && s->n_ghost) {
      /* the receives land in the executor's own slots: keep their values to add them back */
      if (!d->fadd)
        HALO_CHECK(halo_dev_malloc(&d->fadd, (size_t)(s->n_ghost * d->W) * sizeof(double)));
      HALO_CUDA(cudaMemcpyAsync(d->fadd, ex->ghost, (size_t)(s->n_ghost * d->eb),
                                cudaMemcpyDeviceToDevice, d->xs));
      HALO_CUDA(cudaStreamSynchronize(d->xs)); /* before a CUDA-aware MPI writes them */
      d->fadd_on = 1;
    }
    HALO_CHECK(own_forward(ex, d, out));
  }
  for (int k = 0; k < s->n_phases; k++) HALO_CUDA_EACH(arm, ex, d, k);
  return phase_start(ex, d, 0);
}

static halo_status cuda_end(halo_exec *ex) {
  const halo_schedule *s = S(ex);
  const halo_leaves *L = ex->cfg.leaves;
  cuda_data *d = ex->data;
  const halo_xunit *u = &ex->unit;
  if (s->add) { /* the additions into x_local come after what the caller enqueued on comp */
    HALO_CUDA(cudaEventRecord(d->ev_dst, d->comp));
    HALO_CUDA(cudaStreamWaitEvent(d->xs, d->ev_dst, 0));
    if (d->n_own_u) /* the own slots' first, in slot order, as the host adds them */
      HALO_CUDA(halo_cuda_add_by_dst_u(d->d_own_u, d->d_own_ptr, d->d_own_ref, d->n_own_u, NULL,
                                       d->own_src, INT64_MAX, d->dst, NULL, INT64_MAX, u->scalar,
                                       u->per, u->op == HALO_OP_INSERT, d->xs));
  }
  for (int k = 0; k < s->n_phases; k++) {
    if (k > 0) HALO_CHECK(phase_start(ex, d, k));
    HALO_CHECK(phase_finish(ex, d, k));
  }
  HALO_CUDA_EACH(complete, ex, d);
  if (!s->add && u->is_default) { /* deliver into the ghost slots */
    double *out = d->dst ? d->dst : ex->slots;
    if (!halo_leaves_identity(L))
      HALO_CUDA(halo_cuda_slot_gather(out, ex->ghost, d->d_to_ghost, L->n, d->xs));
    else if (out != ex->ghost && s->n_ghost)
      HALO_CUDA(cudaMemcpyAsync(out, ex->ghost, (size_t)s->n_ghost * sizeof(double),
                                cudaMemcpyDeviceToDevice, d->xs));
  } else if (!s->add) { /* the same, inserted or added */
    void *out = d->dst ? (void *)d->dst : (void *)ex->slots;
    const int add = u->op == HALO_OP_ADD;
    if (!halo_leaves_identity(L))
      HALO_CUDA(halo_cuda_deliver_u(out, ex->ghost, d->d_to_ghost, NULL, L->n, u->scalar, u->per,
                                    add, d->xs));
    else if (d->fadd_on)
      HALO_CUDA(halo_cuda_deliver_u(ex->ghost, d->fadd, NULL, NULL, s->n_ghost, u->scalar, u->per,
                                    1, d->xs));
    else if (out != (void *)ex->ghost && s->n_ghost && add)
      HALO_CUDA(
          halo_cuda_deliver_u(out, ex->ghost, NULL, NULL, s->n_ghost, u->scalar, u->per, 1, d->xs));
    else if (out != (void *)ex->ghost && s->n_ghost)
      HALO_CUDA(cudaMemcpyAsync(out, ex->ghost, (size_t)(s->n_ghost * d->eb),
                                cudaMemcpyDeviceToDevice, d->xs));
  }
  HALO_CUDA(cudaEventRecord(d->ev_end, d->xs));
  HALO_CUDA(cudaStreamWaitEvent(d->comp, d->ev_end, 0));
  d->x = NULL;
  d->dst = NULL;
  d->own_src = NULL;
  return HALO_SUCCESS;
}

static halo_status cuda_unit_ok(const halo_exec *ex, const halo_xunit *u) {
  const cuda_data *d = ex->data;
  if (u->is_default || d->tr->units) return HALO_SUCCESS;
  return HALO_ERROR(HALO_ERR_UNSUPPORTED,
                    "units other than one double: device memory with transport staged, "
                    "mpi-device, nccl or ipc, not yet transport %s",
                    d->tr->name);
}

static halo_status cuda_stream_ordered(const halo_exec *ex, int capture) {
  const cuda_data *d = ex->data;
  const char *t = halo_transport_name(ex->cfg.transport);
  if (d->host_waits & HOST_WAIT_HELPER)
    return HALO_ERROR(HALO_ERR_UNSUPPORTED, "a communication helper (a rank without rows and "
                                            "ghosts) runs its phases on the host");
  if (d->host_waits & HOST_WAIT_MPI)
    return HALO_ERROR(HALO_ERR_UNSUPPORTED,
                      "transport %s: the host waits for MPI between the device's copies%s", t,
                      d->tr->host_mpi_note ? d->tr->host_mpi_note : "");
  HALO_CUDA_EACH(stream_ordered, ex, d, capture);
  return HALO_SUCCESS;
}

/* The release's writes from stream s: the abort word (where there is one),
 * then the signals (bytes of them at sig), each to 0x7f7f...; 0, and no
 * signal written, where a forwarding executor's abort word could not be. */
static int release_writes(cudaStream_t s, uint64_t *abort, void *sig, size_t bytes, int fwd) {
  if (abort && cudaMemsetAsync(abort, 0x7f, sizeof *abort, s) != cudaSuccess && fwd) return 0;
  (void)cudaMemsetAsync(sig, 0x7f, bytes, s);
  return 1;
}

/* After a failed or timed-out exchange: what the transports stop (once:
 * e.g. a communicator, whose kernels, those enqueued after included, stop
 * without sending), then every signal this rank's streams may wait for (the
 * transports' signals, all in this rank's memory) set past any number a
 * peer writes or a wait asks (0x7f7f... > 2^62; the waits compare "at
 * least"), from a stream of its own that waits for nothing. The streams then
 * run to their end with meaningless values. Where the executor forwards,
 * its later phases, already enqueued, would give peers values never
 * received as if they were right: there a transport's abort word is written
 * before its signals, and its later phases' sends read it and send nothing.
 * Best effort: what fails here leaves the wait as it was. */
static int cuda_unblock(halo_exec *ex, int again) {
  cuda_data *d = ex->data;
  cudaStream_t s = NULL;
  void *sig[HALO_CUDA_N_TRANSPORTS];
  size_t bytes[HALO_CUDA_N_TRANSPORTS];
  uint64_t *abort_w[HALO_CUDA_N_TRANSPORTS];
  int has[HALO_CUDA_N_TRANSPORTS], any = 0;
  for (int t = 0; t < HALO_CUDA_N_TRANSPORTS; t++) {
    const cuda_transport *tr = halo_cuda_transports[t];
    sig[t] = NULL, bytes[t] = 0, abort_w[t] = NULL;
    has[t] = tr->signals && tr->signals(ex, d, &sig[t], &bytes[t], &abort_w[t]);
    any |= has[t];
  }
  if (!again)
    for (int t = 0; t < HALO_CUDA_N_TRANSPORTS; t++)
      if (halo_cuda_transports[t]->unblock) halo_cuda_transports[t]->unblock(ex, d);
  if (!any) return 1;
  const int fwd = halo_cuda_forwards(S(ex));
  for (int t = 0; t < HALO_CUDA_N_TRANSPORTS; t++)
    if (fwd && has[t] && !abort_w[t]) return 0;
  if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
    (void)cudaGetLastError();
    return -1;
  }
  for (int t = 0; t < HALO_CUDA_N_TRANSPORTS; t++)
    if (has[t] && !release_writes(s, abort_w[t], sig[t], bytes[t], fwd)) {
      (void)cudaStreamDestroy(s);
      (void)cudaGetLastError();
      return 0;
    }
  /* within a bound: the writes may queue behind the very wait they release
   * where the GPU's work queues are fewer than the streams (seen under MPS,
   * whose clients share one pool of them, and gone there with
   * CUDA_DEVICE_MAX_CONNECTIONS=32); then the wait stays, and the
   * failed plan keeps its memory, which the writes may still reach */
  const int64_t limit = ex->cfg.timeout_ms > 0 ? ex->cfg.timeout_ms : 1000;
  void *const one[1] = {s};
  const int ok = halo_device_streams_wait(one, 1, limit) == HALO_SUCCESS;
  (void)cudaStreamDestroy(s); /* its writes, if not done, go on */
  (void)cudaGetLastError();
  return ok ? 1 : -1;
}

static const halo_exec_ops cuda_ops = {
    .name = "cuda",
    .units = 1,
    .own_slots = 1,
    .unit_ok = cuda_unit_ok,
    .setup = halo_cuda_exec_setup,
    .unblock = cuda_unblock,
    .begin = cuda_begin,
    .end = cuda_end,
    .mark_start = cuda_mark_start,
    .copy_times = cuda_copy_times,
    .stream_ordered = cuda_stream_ordered,
    .destroy = halo_cuda_exec_destroy,
};

#else /* no CUDA */

static halo_status cuda_setup(halo_exec *ex) {
  (void)ex;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, HALO_NO_CUDA_MESSAGE);
}

static const halo_exec_ops cuda_ops = {
    .name = "cuda",
    .setup = cuda_setup,
};

#endif /* HALO_HAVE_CUDA */

const halo_exec_ops *halo_exec_cuda(void) { return &cuda_ops; }
