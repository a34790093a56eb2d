/* Transport nccl of the CUDA executor: a phase's messages as ncclSend and
 * ncclRecv in one group on the exchange stream, sent from the packed send
 * buffer (or straight from the source when the pack is one run and every
 * send goes by NCCL) into the receive buffer or in place. The communicator
 * is the device's, made once per communicator (one rank per GPU). */
#include "halo_impl.h"

#include "exec/transport.h"

#if HALO_HAVE_CUDA && defined(HALO_MODULE_CODE) /* the module's part */
#include "exec/cuda_exec.h"

#if HALO_HAVE_NCCL
extern const cuda_transport halo_cuda_nccl; /* its hooks, at the end */

enum { CH_NCCL = 2 };

/* The executor's: the device's communicator, its number (halo_device_nccl). */
typedef struct {
  ncclComm_t nccl;
  int nccl_gen;
} nccl_exec;

/* A phase's: its messages, and whether it sends from the source's run. */
typedef struct {
  int n_nccl_send, n_nccl_recv;
  int nccl_from_run; /* the pack is one run and every send goes by NCCL: sent from the run */
} nccl_phase;

static nccl_exec *X(const cuda_data *d) { return halo_cuda_tx(d, &halo_cuda_nccl); }
static nccl_phase *P(const cuda_data *d, int k) { return halo_cuda_tp(d, &halo_cuda_nccl, k); }

/* Every message (helpers keep device buffers). */
static halo_status nccl_channel(const halo_exec *ex, const cuda_data *d, const cuda_groups *g,
                                int peer, int send, channel *ch) {
  (void)ex, (void)d, (void)g, (void)peer, (void)send;
  *ch = CH_NCCL;
  return HALO_SUCCESS;
}

static halo_status nccl_layout(halo_exec *ex, cuda_data *d) {
  const halo_schedule *s = S(ex);
  for (int k = 0; k < s->n_phases; k++) {
    const halo_phase *ph = &s->phase[k];
    const cphase *p = &d->ph[k];
    nccl_phase *q = P(d, k);
    for (int i = 0; i < ph->n_send; i++)
      q->n_nccl_send += ph->send[i].peer != s->rank && p->send[i].ch == CH_NCCL;
    for (int i = 0; i < ph->n_recv; i++)
      q->n_nccl_recv += ph->recv[i].peer != s->rank && p->recv[i].ch == CH_NCCL;
  }
  return HALO_SUCCESS;
}

/* Once the pack's map is known: a pack that is one run, where every send
 * goes by NCCL, is sent from the run without a copy. */
static halo_status nccl_phase_local(halo_exec *ex, cuda_data *d, int k) {
  const halo_schedule *s = S(ex);
  const halo_phase *ph = &s->phase[k];
  cphase *p = &d->ph[k];
  nccl_phase *q = P(d, k);
  int all = q->n_nccl_send > 0;
  for (int i = 0; i < ph->n_send && all; i++)
    all = ph->send[i].peer == s->rank || p->send[i].ch == CH_NCCL;
  q->nccl_from_run = p->pack_run && all;
  if (q->nccl_from_run) p->transport_packs = 1;
  return HALO_SUCCESS;
}

/* The communicator, and its connections to this executor's peers made now:
 * NCCL connects a pair at its first send or receive, and the host waits in
 * ncclGroupEnd for the peer to connect. At plan time every rank is here
 * (the set-up is agreed); in an exchange a peer that failed before its
 * first send would leave this rank's host waiting without a limit. One
 * value each way between every pair of every phase, on the exchange stream,
 * from and into a scratch buffer. */
static halo_status nccl_setup(halo_exec *ex, cuda_data *d) {
  if (ex->cfg.transport != HALO_TRANSPORT_NCCL) return HALO_SUCCESS;
  halo_status st = HALO_SUCCESS;
  const halo_schedule *s = S(ex);
  nccl_exec *x = X(d);
  void *nccl;
  double *scratch = NULL;
  int grouped = 0;
  HALO_TRY(halo_device_nccl(ex->cfg.dev, &nccl, &x->nccl_gen));
  x->nccl = (ncclComm_t)nccl;
  HALO_TRY(halo_agree(ex->cfg.comm, halo_dev_malloc((void **)&scratch, 2 * sizeof(double))));
  HALO_TRY_NCCL(ncclGroupStart());
  grouped = 1;
  for (int k = 0; k < s->n_phases; k++) {
    const halo_phase *ph = &s->phase[k];
    const cphase *p = &d->ph[k];
    for (int i = 0; i < ph->n_send; i++)
      if (ph->send[i].peer != s->rank && p->send[i].ch == CH_NCCL)
        HALO_TRY_NCCL(ncclSend(scratch, 1, ncclDouble, ph->send[i].peer, x->nccl, d->xs));
    for (int i = 0; i < ph->n_recv; i++)
      if (ph->recv[i].peer != s->rank && p->recv[i].ch == CH_NCCL)
        HALO_TRY_NCCL(ncclRecv(scratch + 1, 1, ncclDouble, ph->recv[i].peer, x->nccl, d->xs));
  }
  grouped = 0;
  HALO_TRY_NCCL(ncclGroupEnd());
  HALO_TRY_CUDA(cudaStreamSynchronize(d->xs));
cleanup:
  if (grouped) (void)ncclGroupEnd();
  halo_dev_free(scratch);
  return st;
}

static halo_status nccl_send(halo_exec *ex, cuda_data *d, int k) {
  halo_status st = HALO_SUCCESS;
  const halo_schedule *s = S(ex);
  const halo_phase *ph = &s->phase[k];
  const cphase *p = &d->ph[k];
  const nccl_exec *x = X(d);
  const nccl_phase *q = P(d, k);
  if (!(q->n_nccl_send + q->n_nccl_recv)) return HALO_SUCCESS;
  if (!halo_device_nccl_current(ex->cfg.dev, x->nccl_gen))
    return HALO_ERROR(HALO_ERR_STATE,
                      "transport nccl: the communicator's NCCL communicator this plan was made "
                      "with was aborted after a failed or timed-out exchange: destroy this plan "
                      "(a new plan gets a new NCCL communicator)");
  int grouped = 0;
  const char *run =
      p->run_from_work ? halo_cuda_at(d->work, p->run_off, d) : halo_cuda_at(d->x, p->run_off, d);
  /* a message of count entries: count * eb / w values of NCCL's type of w bytes (no
   * reduction: the type only sizes the copy) */
  const int64_t w = d->eb % 8 == 0 ? 8 : d->eb % 4 == 0 ? 4 : 1, per = d->eb / w;
  const ncclDataType_t type = w == 8 ? ncclDouble : w == 4 ? ncclFloat : ncclUint8;
  HALO_TRY(halo_timeline_mark(ex->cfg.tl, 2));
  HALO_TRY_NCCL(ncclGroupStart());
  grouped = 1;
  for (int i = 0; i < ph->n_send; i++)
    if (ph->send[i].peer != s->rank && p->send[i].ch == CH_NCCL)
      HALO_TRY_NCCL(ncclSend(q->nccl_from_run ? run + p->send[i].buf_off * d->eb
                                              : halo_cuda_at(p->d_send, p->send[i].buf_off, d),
                             (size_t)(ph->send[i].count * per), type, ph->send[i].peer, x->nccl,
                             d->xs));
  for (int i = 0; i < ph->n_recv; i++) {
    const cmsg *c = &p->recv[i];
    if (ph->recv[i].peer == s->rank || c->ch != CH_NCCL) continue;
    HALO_TRY_NCCL(ncclRecv(halo_cuda_recv_at(ex, d, p, c), (size_t)(ph->recv[i].count * per), type,
                           ph->recv[i].peer, x->nccl, d->xs));
  }
  grouped = 0;
  HALO_TRY_NCCL(ncclGroupEnd());
  HALO_TRY(halo_timeline_mark(ex->cfg.tl, 3));
cleanup:
  if (grouped) (void)ncclGroupEnd(); /* a failed call inside the group: close it */
  return st;
}

/* After a failed exchange: the communicator this executor used, not a new
 * one made since, aborted (its kernels, those enqueued after included, stop
 * without sending). */
static void nccl_unblock(halo_exec *ex, cuda_data *d) {
  if (ex->cfg.transport == HALO_TRANSPORT_NCCL &&
      halo_device_nccl_current(ex->cfg.dev, X(d)->nccl_gen))
    halo_device_nccl_abort(ex->cfg.dev);
}

/* The device's NCCL communicator, made by the first nccl plan of a communicator. */
static halo_status nccl_open(halo_device *d) {
  void *nccl;
  int gen;
  return halo_device_nccl(d, &nccl, &gen);
}

const cuda_transport halo_cuda_nccl = {
    .name = "nccl",
    .transport = HALO_TRANSPORT_NCCL,
    .open = nccl_open,
    .open_background = halo_device_nccl_start,
    .state = halo_device_nccl_state,
    .serves = {HALO_TRANSPORT_NCCL},
    .device_helpers = 1,
    .units = 1,
    .exec_bytes = sizeof(nccl_exec),
    .phase_bytes = sizeof(nccl_phase),
    .channel = nccl_channel,
    .layout = nccl_layout,
    .phase_local = nccl_phase_local,
    .setup = nccl_setup,
    .send = nccl_send,
    .unblock = nccl_unblock,
};
#else
const cuda_transport halo_cuda_nccl = {.name = "nccl"}; /* not compiled in: never chosen */
#endif

#endif /* the module's part */

#ifndef HALO_MODULE_CODE /* the descriptor, in libhalo */

const halo_transport_desc halo_transport_desc_nccl = {
    .name = "nccl",
    .id = HALO_TRANSPORT_NCCL,
    .memory = HALO_TMEM_DEVICE,
    .summary = "ncclSend/ncclRecv grouped per phase on the exchange stream",
    .compiled = HALO_HAVE_NCCL,
    .build_hint = "HALO_ENABLE_NCCL=ON",
    .needs = HALO_NEEDS_OWN_GPU,
    .default_rank = 1,
    .auto_policy = HALO_AUTO_ALWAYS,
    /* ncclCommInitRank: 0.3-0.5 s at 2 ranks, 1.7 s at 4 (H200; bench/results/setup.md) */
    .model = {.channel = HALO_CHANNEL_GPU, .grouped = 1, .helper_on_gpu = 1, .setup_per_rank = 0.3},
    .settings = (const char *const[]){"nccl.background", NULL},
};
#endif
