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

#include "exec/nvshmem_lib.h"

extern const cuda_transport halo_cuda_nvshmem; /* its hooks, at the end */

enum { CH_NVSHMEM = 4 };

/* The executor's symmetric chunk (send and receive buffers, ready and done
 * signals); its descriptors on the device: the exchange counter, the puts
 * and waits of the phases, the acknowledgements of all phases (sent at the
 * exchange's end). */
typedef struct {
  char *nv_block;
  uint64_t *nv_sig; /* the ready and done signals (nv_n_sig), in nv_block */
  int64_t nv_n_sig;
  int nv_chunk, nv_active;
  void *nv_desc;
  uint64_t *nv_ep;
  unsigned int *nv_count; /* the blocks done of a fused end (zero between launches) */
  uint64_t *nv_abort;     /* nonzero: released after a failure, nothing more is put: nv_ep[2] */
  halo_nv_ack *nv_acks;
  int nv_n_acks;
  int nv_ended; /* the exchange's end went with the last phase's unpack */
} nv_exec;

/* A phase's sends packed and put by one launch of nv_blocks blocks (d_send
 * and d_recv are symmetric), its receives' signals waited for on the GPU
 * (device arrays). */
typedef struct {
  int n_nv_send, n_nv_recv, nv_blocks;
  halo_nv_put *d_nv_put;
  halo_nv_wait *d_nv_wait;
} nv_phase;

static nv_exec *X(const cuda_data *d) { return halo_cuda_tx(d, &halo_cuda_nvshmem); }
static nv_phase *P(const cuda_data *d, int k) { return halo_cuda_tp(d, &halo_cuda_nvshmem, k); }

/* Every message (helpers keep device buffers). */
static halo_status nv_channel(const halo_exec *ex, const cuda_data *d, const cuda_groups *g,
                              int peer, int send, channel *ch) {
  (void)ex, (void)d, (void)g, (void)peer, (void)send;
  *ch = CH_NVSHMEM;
  return HALO_SUCCESS;
}

/* Each phase's messages; the pack goes with the puts, the unpack with the
 * waits. */
static halo_status nv_layout(halo_exec *ex, cuda_data *d) {
  const halo_schedule *s = S(ex);
  for (int k = 0; k < s->n_phases; k++) {
    const halo_phase *ph = &s->phase[k];
    cphase *p = &d->ph[k];
    nv_phase *q = P(d, k);
    for (int i = 0; i < ph->n_send; i++)
      q->n_nv_send += ph->send[i].peer != s->rank && p->send[i].ch == CH_NVSHMEM;
    for (int i = 0; i < ph->n_recv; i++)
      q->n_nv_recv += ph->recv[i].peer != s->rank && p->recv[i].ch == CH_NVSHMEM;
    if (q->n_nv_send) p->transport_packs = 1;
    if (q->n_nv_recv) p->transport_unpacks = 1;
  }
  return HALO_SUCCESS;
}

/* Pieces (puts) of a message of count values. */
static int64_t pieces(int64_t count) {
  const int64_t p = (count + HALO_NV_BLOCK_VALUES - 1) / HALO_NV_BLOCK_VALUES;
  return p > 0 ? p : 1;
}

static void nv_destroy(halo_exec *ex, cuda_data *d) {
  nv_exec *x = X(d);
  if (!x) return;
  for (int k = 0; k < HALO_MAX_PHASES; k++) {
    cphase *p = &d->ph[k];
    nv_phase *q = P(d, k);
    if (x->nv_block) p->d_send = p->d_recv = NULL; /* in the chunk, not the executor's */
    q->d_nv_put = NULL, q->d_nv_wait = NULL;
  }
  halo_dev_free(x->nv_desc);
  x->nv_desc = NULL, x->nv_ep = NULL, x->nv_abort = NULL, x->nv_acks = NULL;
  halo_device_nvshmem_release(ex->cfg.dev, x->nv_block);
  x->nv_block = NULL;
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
  nv_exec *x = X(d);

  /* the layout of the chunk: sends, receives, ready signals, done signals */
  int64_t n_send_vals = 0, n_recv_vals = 0, n_ready = 0, n_done = 0, n_blocks = 0;
  int n_sends = 0, n_recvs = 0;
  for (int k = 0; k < s->n_phases; k++) {
    const halo_phase *ph = &s->phase[k];
    const cphase *p = &d->ph[k];
    nv_phase *q = P(d, k);
    n_send_vals += p->n_pack;
    n_recv_vals += p->n_recvbuf;
    n_ready += q->n_nv_recv;
    n_done += q->n_nv_send;
    q->nv_blocks = 0;
    for (int i = 0; i < ph->n_send; i++)
      if (p->send[i].ch == CH_NVSHMEM) q->nv_blocks += (int)pieces(ph->send[i].count);
    n_blocks += q->nv_blocks;
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
  HALO_TRY(halo_device_nvshmem_alloc(ex->cfg.dev, bytes, (void **)&x->nv_block, &x->nv_chunk));

  double *vals = (double *)(void *)x->nv_block;
  uint64_t *ready = (uint64_t *)(void *)(x->nv_block + (n_send_vals + n_recv_vals) * 8);
  uint64_t *done = ready + n_ready;
  x->nv_sig = ready, x->nv_n_sig = n_ready + n_done;
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
  const int64_t base = (int64_t)(x->nv_block - halo_device_nvshmem_base(ex->cfg.dev, x->nv_chunk));
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
          o[0] = x->nv_chunk;
          if (round == 0) { /* as receiver: the values, the ready signal */
            o[1] = base + (int64_t)((char *)(p->d_recv + cm[i].buf_off) - x->nv_block);
            o[2] = base + (int64_t)((char *)(ready + j) - x->nv_block);
          } else { /* as sender: the done signal */
            o[1] = base + (int64_t)((char *)(done + j) - x->nv_block);
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
    HALO_TRY(halo_dev_malloc(&x->nv_desc, b_ep + b_put + b_wait + b_ack));
    dv = x->nv_desc;
    HALO_TRY(halo_dev_zero(dv, b_ep));
    HALO_TRY(halo_host_to_dev(dv + b_ep, puts, b_put));
    HALO_TRY(halo_host_to_dev(dv + b_ep + b_put, waits, b_wait));
    HALO_TRY(halo_host_to_dev(dv + b_ep + b_put + b_wait, acks, b_ack));
    x->nv_ep = (uint64_t *)(void *)dv;
    x->nv_count = (unsigned int *)(void *)(dv + 8);
    x->nv_abort = (uint64_t *)(void *)(dv + 16); /* ep[2] */
    x->nv_acks = (halo_nv_ack *)(void *)(dv + b_ep + b_put + b_wait);
    x->nv_n_acks = (int)n_ready;
    x->nv_active = n_blocks + n_ready > 0;
    int64_t b = 0, j = 0;
    for (int k = 0; k < s->n_phases; k++) {
      nv_phase *q = P(d, k);
      q->d_nv_put = (halo_nv_put *)(void *)(dv + b_ep) + b;
      q->d_nv_wait = (halo_nv_wait *)(void *)(dv + b_ep + b_put) + j;
      b += q->nv_blocks;
      j += q->n_nv_recv;
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
  const cphase *p = &d->ph[k];
  const nv_exec *x = X(d);
  const nv_phase *q = P(d, k);
  if (!q->nv_blocks) return HALO_SUCCESS;
  const double *run = p->run_from_work ? d->work + p->run_off : d->x + p->run_off;
  HALO_CHECK(halo_timeline_mark(ex->cfg.tl, 2));
  if (halo_nvshmem_pack_put(q->d_nv_put, q->nv_blocks, p->pack_run ? NULL : p->d_pack,
                            p->pack_run ? run : NULL, d->x, d->work, S(ex)->n_local, p->d_send,
                            x->nv_ep, halo_device_ranks_per_gpu(ex->cfg.dev) > 1, d->xs) != 0)
    return nv_error("phase start");
  return HALO_SUCCESS;
}

/* Phase k's end: forward, its unpack waits for the signals in the same
 * launch (and the last phase's ends the exchange: acknowledgements and the
 * counter); reverse, a wait, then the executor's additions. */
static halo_status nv_receive(halo_exec *ex, cuda_data *d, int k) {
  const halo_schedule *s = S(ex);
  const cphase *p = &d->ph[k];
  nv_exec *x = X(d);
  const nv_phase *q = P(d, k);
  if (!q->n_nv_recv) return HALO_SUCCESS;
  if (s->add) {
    if (halo_nvshmem_wait(q->d_nv_wait, q->n_nv_recv, x->nv_ep, d->xs) != 0)
      return nv_error("phase end");
    return halo_timeline_mark(ex->cfg.tl, 3);
  }
  const int end = k == s->n_phases - 1;
  if (halo_nvshmem_wait_scatter(q->d_nv_wait, q->n_nv_recv, x->nv_ep, p->d_recv, p->d_unpack_src,
                                p->d_unpack_dst, p->n_unpack, ex->ghost, d->work, s->n_ghost,
                                x->nv_acks, x->nv_n_acks, end ? x->nv_count : NULL,
                                halo_device_ranks_per_gpu(ex->cfg.dev) > 1, d->xs) != 0)
    return nv_error("phase end");
  x->nv_ended = end;
  return halo_timeline_mark(ex->cfg.tl, 3); /* with the unpack */
}

static halo_status nv_complete(halo_exec *ex, cuda_data *d) {
  (void)ex;
  nv_exec *x = X(d);
  if (x->nv_ended) {
    x->nv_ended = 0;
    return HALO_SUCCESS;
  }
  if (x->nv_active && halo_nvshmem_finish(x->nv_acks, x->nv_n_acks, x->nv_ep, d->xs) != 0)
    return nv_error("exchange end");
  return HALO_SUCCESS;
}

/* After a failure: the ready and done signals, in this rank's chunk, and
 * the abort word its puts read (nv_ep[2]). */
static int nv_signals(halo_exec *ex, cuda_data *d, void **sig_p, size_t *bytes_p,
                      uint64_t **abort_p) {
  (void)ex;
  const nv_exec *x = X(d);
  if (!(x->nv_sig && x->nv_n_sig)) return 0;
  *sig_p = x->nv_sig;
  *bytes_p = (size_t)x->nv_n_sig * sizeof *x->nv_sig;
  *abort_p = x->nv_abort;
  return 1;
}

const cuda_transport halo_cuda_nvshmem = {
    .name = "nvshmem",
    .transport = HALO_TRANSPORT_NVSHMEM,
    .open = halo_device_nvshmem,
    .serves = {HALO_TRANSPORT_NVSHMEM},
    .device_helpers = 1,
    .symmetric = 1,
    .recv_buffered = 1,
    .exec_bytes = sizeof(nv_exec),
    .phase_bytes = sizeof(nv_phase),
    .channel = nv_channel,
    .layout = nv_layout,
    .setup = nv_setup,
    .send = nv_send,
    .receive = nv_receive,
    .complete = nv_complete,
    .signals = nv_signals,
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
