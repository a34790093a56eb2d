/* Transport nvshmem of the CUDA executor: the GPU moves every message
 * itself. Ranks that share a GPU need NVSHMEM's full mode for several
 * processes a GPU (MPS; device.c checks it), and wait in one block a launch
 * (nvshmem_lib.h).
 *
 * Each executor holds one symmetric chunk (halo_device_nvshmem_alloc): the
 * send buffers of its phases, their receive buffers, a ready signal per
 * received message and a done signal per sent one (64-bit words). At set-up
 * the receivers tell their senders where each message goes (chunk, offset of
 * the values, offset of the ready signal) and the senders tell their
 * receivers where their done signal is.
 *
 * An exchange, numbered e = 1, 2, ... on the exchange stream:
 *   phase k's start  one launch (libhalo_nvshmem's nv_pack_put): a block per
 *                    piece of at most HALO_NV_BLOCK_VALUES values waits until
 *                    its receiver's done signal says e - 1 (the receiver has
 *                    read the previous values), packs its piece from the
 *                    source and puts it with 1 added to the receiver's ready
 *                    signal;
 *   phase k's end    one launch waits on the GPU until each ready signal
 *                    reaches e times its message's pieces and unpacks (a
 *                    reverse exchange: the wait, then the additions);
 *   the end          e into each sender's done signal (of every phase), and
 *                    the executor's counter advanced: by the last block of
 *                    the last phase's unpack, or one launch of its own.
 * No host call waits for a peer between the start and the end: the exchange
 * is ordered on the stream between the caller's kernels. The kernels read e
 * from the counter in device memory (e = counter + 1), so that a captured
 * CUDA graph replays the right numbers.
 *
 * Signals are zeroed at set-up, after every rank's earlier exchanges on this
 * communicator are complete (the exchange stream drained, NVSHMEM quiet, an
 * agreement), and before any peer learns where they are. */
#include "halo_impl.h"

#include "exec/transport.h"

#if HALO_HAVE_CUDA && defined(HALO_MODULE_CODE) /* the module's part */
#include "exec/cuda_exec.h"

#if HALO_HAVE_NVSHMEM
#include <string.h>

/* Pieces (puts) of a message of count values. */
static int64_t pieces(int64_t count) {
  const int64_t p = (count + HALO_NV_BLOCK_VALUES - 1) / HALO_NV_BLOCK_VALUES;
  return p > 0 ? p : 1;
}

static void nv_destroy(halo_exec *ex, cuda_data *d) {
  for (int k = 0; k < HALO_MAX_PHASES; k++) {
    cphase *p = &d->ph[k];
    if (d->nv_block) p->d_send = p->d_recv = NULL; /* in the chunk, not the executor's */
    p->d_nv_put = NULL, p->d_nv_wait = NULL;
  }
  halo_dev_free(d->nv_desc);
  d->nv_desc = NULL, d->nv_ep = NULL, d->nv_abort = NULL, d->nv_acks = NULL;
  halo_device_nvshmem_release(ex->cfg.dev, d->nv_block);
  d->nv_block = NULL;
}

static halo_status nv_error(const char *what) {
  return HALO_ERROR(HALO_ERR_CUDA, "transport nvshmem: %s: %s", what, halo_nvshmem_error());
}

/* What a receiver tells its sender of one message, and a sender its
 * receiver (chunk, byte offsets into it). */
enum { TO_SENDER = 3, TO_RECEIVER = 2 };

static halo_status nv_setup(halo_exec *ex, cuda_data *d) {
  if (ex->cfg.transport != HALO_TRANSPORT_NVSHMEM) return HALO_SUCCESS;
  halo_status st = HALO_SUCCESS;
  const halo_schedule *s = S(ex);
  const MPI_Comm comm = ex->cfg.comm;
  int64_t *out = NULL, *in = NULL;
  int *sseq = NULL, *rseq = NULL; /* the tag sequences of every phase's sends and receives */
  MPI_Request *req = NULL;
  halo_nv_put *puts = NULL;
  halo_nv_wait *waits = NULL;
  halo_nv_ack *acks = NULL;

  /* the layout of the chunk: sends, receives, ready signals, done signals */
  int64_t n_send_vals = 0, n_recv_vals = 0, n_ready = 0, n_done = 0, n_blocks = 0;
  int n_sends = 0, n_recvs = 0;
  for (int k = 0; k < s->n_phases; k++) {
    const halo_phase *ph = &s->phase[k];
    cphase *p = &d->ph[k];
    n_send_vals += p->n_pack;
    n_recv_vals += p->n_recvbuf;
    n_ready += p->n_nv_recv;
    n_done += p->n_nv_send;
    p->nv_blocks = 0;
    for (int i = 0; i < ph->n_send; i++)
      if (p->send[i].ch == CH_NVSHMEM) p->nv_blocks += (int)pieces(ph->send[i].count);
    n_blocks += p->nv_blocks;
    n_sends += ph->n_send, n_recvs += ph->n_recv;
  }
  const size_t bytes = (size_t)(n_send_vals + n_recv_vals + n_ready + n_done) * 8;
  /* what can fail here alone, before the collectives */
  st = HALO_ALLOC(out, TO_SENDER * (n_ready + n_done + 1));
  if (st == HALO_SUCCESS) st = HALO_ALLOC(in, TO_SENDER * (n_ready + n_done + 1));
  if (st == HALO_SUCCESS) st = HALO_ALLOC(sseq, n_sends + 1);
  if (st == HALO_SUCCESS) st = HALO_ALLOC(rseq, n_recvs + 1);
  /* before any message: a failure here must be every rank's */
  for (int k = 0, a = 0, b = 0; k < s->n_phases && st == HALO_SUCCESS; k++) {
    const halo_phase *ph = &s->phase[k];
    st = halo_exec_sequence(ex, ph->send, ph->n_send, sseq + a);
    if (st == HALO_SUCCESS) st = halo_exec_sequence(ex, ph->recv, ph->n_recv, rseq + b);
    a += ph->n_send, b += ph->n_recv;
  }
  if (st == HALO_SUCCESS) st = HALO_ALLOC(req, 2 * (n_ready + n_done) + 1);
  if (st == HALO_SUCCESS) st = HALO_CALLOC(puts, n_blocks + 1);
  if (st == HALO_SUCCESS) st = HALO_CALLOC(waits, n_ready + 1);
  if (st == HALO_SUCCESS) st = HALO_CALLOC(acks, n_ready + 1);
  if (st == HALO_SUCCESS && n_blocks > INT32_MAX)
    st = HALO_ERROR(HALO_ERR_OUT_OF_RANGE, "transport nvshmem: %lld pieces in one executor",
                    (long long)n_blocks);
  /* every earlier exchange of this communicator is over on this rank */
  if (st == HALO_SUCCESS) {
    cudaError_t e = HALO_CUDA_RC(cudaStreamSynchronize(d->xs));
    if (e != cudaSuccess) st = halo_error_cuda(e, "cudaStreamSynchronize", __FILE__, __LINE__);
  }
  if (st == HALO_SUCCESS) halo_nvshmem_quiet();
  HALO_TRY(halo_agree(comm, st));
  HALO_TRY(halo_device_nvshmem_alloc(ex->cfg.dev, bytes, (void **)&d->nv_block, &d->nv_chunk));

  double *vals = (double *)(void *)d->nv_block;
  uint64_t *ready = (uint64_t *)(void *)(d->nv_block + (n_send_vals + n_recv_vals) * 8);
  uint64_t *done = ready + n_ready;
  d->nv_sig = ready, d->nv_n_sig = n_ready + n_done;
  {
    int64_t so = 0, ro = n_send_vals;
    for (int k = 0; k < s->n_phases; k++) {
      cphase *p = &d->ph[k];
      p->d_send = p->n_pack ? vals + so : NULL;
      p->d_recv = p->n_recvbuf ? vals + ro : NULL;
      so += p->n_pack;
      ro += p->n_recvbuf;
    }
  }
  /* no peer writes the signals before it hears where they are */
  st = HALO_SUCCESS;
  if (n_ready + n_done) {
    cudaError_t e = HALO_CUDA_RC(cudaMemsetAsync(ready, 0, (size_t)(n_ready + n_done) * 8, d->xs));
    if (e == cudaSuccess) e = HALO_CUDA_RC(cudaStreamSynchronize(d->xs));
    if (e != cudaSuccess) st = halo_error_cuda(e, "cudaMemset of the signals", __FILE__, __LINE__);
  }
  HALO_TRY(halo_agree(comm, st));

  /* receivers tell their senders where each message goes; senders tell
   * their receivers where their done signal is. Two rounds: messages
   * between one pair of one phase share tags, which MPI keeps in order. */
  const int64_t base = (int64_t)(d->nv_block - halo_device_nvshmem_base(ex->cfg.dev, d->nv_chunk));
  for (int round = 0; round < 2; round++) {
    int nr = 0, so = 0, ro = 0; /* the phase's first send and receive in sseq, rseq */
    int64_t r_ready = 0, r_done = 0;
    for (int k = 0; k < s->n_phases && st == HALO_SUCCESS; k++) {
      const halo_phase *ph = &s->phase[k];
      const cphase *p = &d->ph[k];
      /* round 0: we receive the senders' done (as receiver) and send where
       * they put (as receiver); round 1: the other way */
      const halo_msg *mine = round == 0 ? ph->recv : ph->send;
      const cmsg *cm = round == 0 ? p->recv : p->send;
      const int n_mine = round == 0 ? ph->n_recv : ph->n_send;
      const halo_msg *theirs = round == 0 ? ph->send : ph->recv;
      const cmsg *ct = round == 0 ? p->send : p->recv;
      const int n_theirs = round == 0 ? ph->n_send : ph->n_recv;
      const int w_out = round == 0 ? TO_SENDER : TO_RECEIVER;
      const int *seq = round == 0 ? sseq + so : rseq + ro; /* of theirs */
      for (int i = 0; i < n_theirs; i++)                   /* round 0: senders hear where to put */
        if (ct[i].ch == CH_NVSHMEM) {
          int64_t *buf = in + TO_SENDER * (round == 0 ? r_done : r_ready);
          HALO_TRY_MPI(MPI_Irecv(buf, round == 0 ? TO_SENDER : TO_RECEIVER, MPI_INT64_T,
                                 theirs[i].peer, halo_exec_tag(ex, k, seq[i]), comm, &req[nr++]));
          if (round == 0)
            r_done++;
          else
            r_ready++;
        }
      seq = round == 0 ? rseq + ro : sseq + so; /* of mine */
      for (int i = 0; i < n_mine; i++)
        if (cm[i].ch == CH_NVSHMEM) {
          int64_t j = round == 0 ? r_ready : r_done;
          int64_t *o = out + TO_SENDER * j;
          o[0] = d->nv_chunk;
          if (round == 0) { /* as receiver: the values, the ready signal */
            o[1] = base + (int64_t)((char *)(p->d_recv + cm[i].buf_off) - d->nv_block);
            o[2] = base + (int64_t)((char *)(ready + j) - d->nv_block);
          } else { /* as sender: the done signal */
            o[1] = base + (int64_t)((char *)(done + j) - d->nv_block);
          }
          HALO_TRY_MPI(MPI_Isend(o, w_out, MPI_INT64_T, mine[i].peer, halo_exec_tag(ex, k, seq[i]),
                                 comm, &req[nr++]));
          if (round == 0)
            r_ready++;
          else
            r_done++;
        }
      so += ph->n_send, ro += ph->n_recv;
    }
    HALO_TRY_MPI(MPI_Waitall(nr, req, MPI_STATUSES_IGNORE));
    if (round == 0) { /* the puts, from what the receivers said (in: per sent message) */
      int64_t b = 0, j = 0;
      for (int k = 0; k < s->n_phases && st == HALO_SUCCESS; k++) {
        const halo_phase *ph = &s->phase[k];
        for (int i = 0; i < ph->n_send && st == HALO_SUCCESS; i++) {
          if (d->ph[k].send[i].ch != CH_NVSHMEM) continue;
          const int64_t *w = in + TO_SENDER * j;
          char *rb = halo_device_nvshmem_base(ex->cfg.dev, (int)w[0]);
          if (!rb) { /* agreed below: every rank reaches the round's agreement */
            st = HALO_ERROR(HALO_ERR_INTERNAL,
                            "transport nvshmem: rank %d names symmetric chunk %lld",
                            ph->send[i].peer, (long long)w[0]);
            break;
          }
          const int64_t np = pieces(ph->send[i].count);
          for (int64_t c = 0; c < np; c++, b++) {
            halo_nv_put *q = &puts[b];
            q->off = d->ph[k].send[i].buf_off + c * HALO_NV_BLOCK_VALUES;
            q->n = ph->send[i].count - c * HALO_NV_BLOCK_VALUES;
            if (q->n > HALO_NV_BLOCK_VALUES) q->n = HALO_NV_BLOCK_VALUES;
            if (q->n < 0) q->n = 0;
            q->dst = (double *)(void *)(rb + w[1]) + c * HALO_NV_BLOCK_VALUES;
            q->sig = (uint64_t *)(void *)(rb + w[2]);
            q->done = done + j;
            q->pe = halo_device_nvshmem_pe(ex->cfg.dev, ph->send[i].peer);
          }
          j++;
        }
      }
    } else { /* the waits and acknowledgements (in: per received message) */
      int64_t j = 0;
      for (int k = 0; k < s->n_phases && st == HALO_SUCCESS; k++) {
        const halo_phase *ph = &s->phase[k];
        for (int i = 0; i < ph->n_recv && st == HALO_SUCCESS; i++) {
          if (d->ph[k].recv[i].ch != CH_NVSHMEM) continue;
          const int64_t *w = in + TO_SENDER * j;
          char *sb = halo_device_nvshmem_base(ex->cfg.dev, (int)w[0]);
          if (!sb) {
            st = HALO_ERROR(HALO_ERR_INTERNAL,
                            "transport nvshmem: rank %d names symmetric chunk %lld",
                            ph->recv[i].peer, (long long)w[0]);
            break;
          }
          waits[j].sig = ready + j;
          waits[j].puts = pieces(ph->recv[i].count);
          acks[j].done = (uint64_t *)(void *)(sb + w[1]);
          acks[j].pe = halo_device_nvshmem_pe(ex->cfg.dev, ph->recv[i].peer);
          j++;
        }
      }
    }
    HALO_TRY(halo_agree(comm, st));
  }

  /* the descriptors on the device: the counter (0), each phase's puts and
   * waits in a run of its own, the acknowledgements of all phases */
  {
    const size_t b_ep = 256, b_put = (size_t)n_blocks * sizeof *puts;
    const size_t b_wait = (size_t)n_ready * sizeof *waits, b_ack = (size_t)n_ready * sizeof *acks;
    char *dv = NULL;
    HALO_TRY(halo_dev_malloc(&d->nv_desc, b_ep + b_put + b_wait + b_ack));
    dv = d->nv_desc;
    HALO_TRY(halo_dev_zero(dv, b_ep));
    HALO_TRY(halo_host_to_dev(dv + b_ep, puts, b_put));
    HALO_TRY(halo_host_to_dev(dv + b_ep + b_put, waits, b_wait));
    HALO_TRY(halo_host_to_dev(dv + b_ep + b_put + b_wait, acks, b_ack));
    d->nv_ep = (uint64_t *)(void *)dv;
    d->nv_count = (unsigned int *)(void *)(dv + 8);
    d->nv_abort = (uint64_t *)(void *)(dv + 16); /* ep[2] */
    d->nv_acks = (halo_nv_ack *)(void *)(dv + b_ep + b_put + b_wait);
    d->nv_n_acks = (int)n_ready;
    d->nv_active = n_blocks + n_ready > 0;
    int64_t b = 0, j = 0;
    for (int k = 0; k < s->n_phases; k++) {
      cphase *p = &d->ph[k];
      p->d_nv_put = (halo_nv_put *)(void *)(dv + b_ep) + b;
      p->d_nv_wait = (halo_nv_wait *)(void *)(dv + b_ep + b_put) + j;
      b += p->nv_blocks;
      j += p->n_nv_recv;
    }
  }
cleanup:
  halo_free(acks);
  halo_free(waits);
  halo_free(puts);
  halo_free(req);
  halo_free(rseq);
  halo_free(sseq);
  halo_free(in);
  halo_free(out);
  return st;
}

static halo_status nv_send(halo_exec *ex, cuda_data *d, int k) {
  cphase *p = &d->ph[k];
  if (!p->nv_blocks) return HALO_SUCCESS;
  const double *run = p->run_from_work ? d->work + p->run_off : d->x + p->run_off;
  HALO_CHECK(halo_timeline_mark(ex->cfg.tl, 2));
  if (halo_nvshmem_pack_put(p->d_nv_put, p->nv_blocks, p->pack_run ? NULL : p->d_pack,
                            p->pack_run ? run : NULL, d->x, d->work, S(ex)->n_local, p->d_send,
                            d->nv_ep, halo_device_ranks_per_gpu(ex->cfg.dev) > 1, d->xs) != 0)
    return nv_error("phase start");
  return HALO_SUCCESS;
}

/* Phase k's end: forward, its unpack waits for the signals in the same
 * launch (and the last phase's ends the exchange: acknowledgements and the
 * counter); reverse, a wait, then the executor's additions. */
static halo_status nv_receive(halo_exec *ex, cuda_data *d, int k) {
  const halo_schedule *s = S(ex);
  cphase *p = &d->ph[k];
  if (!p->n_nv_recv) return HALO_SUCCESS;
  if (s->add) {
    if (halo_nvshmem_wait(p->d_nv_wait, p->n_nv_recv, d->nv_ep, d->xs) != 0)
      return nv_error("phase end");
    return halo_timeline_mark(ex->cfg.tl, 3);
  }
  const int end = k == s->n_phases - 1;
  if (halo_nvshmem_wait_scatter(p->d_nv_wait, p->n_nv_recv, d->nv_ep, p->d_recv, p->d_unpack_src,
                                p->d_unpack_dst, p->n_unpack, ex->ghost, d->work, s->n_ghost,
                                d->nv_acks, d->nv_n_acks, end ? d->nv_count : NULL,
                                halo_device_ranks_per_gpu(ex->cfg.dev) > 1, d->xs) != 0)
    return nv_error("phase end");
  d->nv_ended = end;
  return halo_timeline_mark(ex->cfg.tl, 3); /* with the unpack */
}

static halo_status nv_complete(halo_exec *ex, cuda_data *d) {
  (void)ex;
  if (d->nv_ended) {
    d->nv_ended = 0;
    return HALO_SUCCESS;
  }
  if (d->nv_active && halo_nvshmem_finish(d->nv_acks, d->nv_n_acks, d->nv_ep, d->xs) != 0)
    return nv_error("exchange end");
  return HALO_SUCCESS;
}

const cuda_transport halo_cuda_nvshmem = {
    .name = "nvshmem",
    .transport = HALO_TRANSPORT_NVSHMEM,
    .open = halo_device_nvshmem,
    .setup = nv_setup,
    .send = nv_send,
    .receive = nv_receive,
    .complete = nv_complete,
    .destroy = nv_destroy,
};
#else
/* not compiled in: never chosen, but named, says so */
const cuda_transport halo_cuda_nvshmem = {
    .name = "nvshmem", .transport = HALO_TRANSPORT_NVSHMEM, .open = halo_device_nvshmem};
#endif

#endif /* the module's part */

#ifndef HALO_MODULE_CODE /* the descriptor, in libhalo */

const halo_transport_desc halo_transport_desc_nvshmem = {
    .name = "nvshmem",
    .id = HALO_TRANSPORT_NVSHMEM,
    .memory = HALO_TMEM_DEVICE,
    .summary = "NVSHMEM puts with signals from the GPU, no host call in an exchange",
    .compiled = HALO_HAVE_NVSHMEM,
    .build_hint = "HALO_ENABLE_NVSHMEM=ON and NVSHMEM_HOME",
    .needs = HALO_NEEDS_OWN_GPU_AUTO,
    .auto_policy = HALO_AUTO_PRICED,
    /* NVSHMEM's initialisation: 0.26 s beyond NCCL's at 2 ranks (H200; amg-gpu.md) */
    .model = {.channel = HALO_CHANNEL_GPU, .helper_on_gpu = 1, .own_params = 1,
              .setup_alpha = 0.26, .setup_per_rank = 0.3},
};
#endif
