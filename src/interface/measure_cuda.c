/* halo_params_measure() on the devices (measure.h): cudaMemcpyAsync sweeps
 * by 1 process and by 4 at once (copy.*), device-aware messages through
 * halo's own exchange (gpu.*: nccl when each rank has its own GPU, else
 * ipc), the staged path's fixed cost (staged.alpha) and the ipc copy of a
 * rank of rank 0's machine (ipc.*), and with 2 ranks of one machine the
 * nvshmem exchange (nvshmem.*). Built without CUDA, the notes that they come
 * from the base set.
 *
 * A failure inside a group of ranks (the ranks that copy, the pair that
 * exchanges) stops the group's loops together; the failing rank keeps its
 * status, the others return success, and the agreement over the whole
 * communicator that follows gives every rank the failing one's message. */
#include "interface/measure.h"
#include "interface/plan.h"

#if HALO_HAVE_CUDA
#include <math.h>
#include <string.h>

#include "halo_cuda.h"

/* ---- copies and messages on a group of ranks -------------------------------- */

/* Collective over comm: whether a rank failed. */
static int any_failed(MPI_Comm comm, halo_status st) {
  int bad = st != HALO_SUCCESS;
  if (MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS) return 1;
  return bad;
}

/* Collective over comm: this rank's time of one step and whether it failed
 * -> the slowest rank's time (v[0]) and whether any failed (v[1]). */
static int step_failed(MPI_Comm comm, double v[2]) {
  if (MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_DOUBLE, MPI_MAX, comm) != MPI_SUCCESS) return 1;
  return v[1] != 0;
}

/* Make device local_rank % (visible devices) current. Not collective. */
static halo_status gpu_select(int local_rank, int *device_p) {
  int n = 0;
  HALO_CUDA(cudaGetDeviceCount(&n));
  if (n <= 0) return HALO_ERROR(HALO_ERR_CUDA, "no CUDA device visible");
  const int d = local_rank % n;
  HALO_CUDA(cudaSetDevice(d));
  HALO_CUDA(cudaFree(NULL)); /* the context now, so that a broken device shows here */
  *device_p = d;
  return HALO_SUCCESS;
}

static halo_status copy_buffers(size_t bytes, void **host, void **dev, cudaStream_t *s) {
  HALO_CHECK(halo_pinned_malloc(host, bytes));
  HALO_CHECK(halo_dev_malloc(dev, bytes));
  HALO_CHECK(halo_stream_create(s));
  memset(*host, 1, bytes);
  HALO_CUDA(cudaMemset(*dev, 1, bytes));
  HALO_CUDA(cudaDeviceSynchronize());
  return HALO_SUCCESS;
}

/* cudaMemcpyAsync between pinned host and device memory on every rank of
 * comm at once (each on its current device and a stream of its own). For
 * each size: the median over the iterations (after the warm-up) of the
 * slowest rank's time of one copy, from its issue on a synchronised stream
 * to the end of cudaStreamSynchronize. Collective over comm. */
static halo_status gpu_copies(MPI_Comm comm, const halo_measure *c, double *h2d, double *d2h) {
  halo_status st = HALO_SUCCESS;
  void *host = NULL, *dev = NULL;
  cudaStream_t s = NULL;
  double *work = NULL;
  size_t most = 8;
  for (int k = 0; k < c->n_sizes; k++)
    if ((size_t)c->sizes[k] > most) most = (size_t)c->sizes[k];
  st = HALO_ALLOC(work, c->o.iterations);
  if (st == HALO_SUCCESS) st = copy_buffers(most, &host, &dev, &s);
  if (any_failed(comm, st)) goto cleanup;
  for (int dir = 0; dir < 2; dir++) {
    const enum cudaMemcpyKind kind = dir ? cudaMemcpyDeviceToHost : cudaMemcpyHostToDevice;
    void *dst = dir ? host : dev;
    const void *src = dir ? dev : host;
    for (int k = 0; k < c->n_sizes; k++) {
      for (int it = -c->warmup; it < c->o.iterations; it++) {
        double v[2] = {0, 0}; /* the time, whether it failed */
        v[1] = MPI_Barrier(comm) != MPI_SUCCESS;
        cudaError_t e = cudaStreamSynchronize(s);
        const double t0 = MPI_Wtime();
        if (e == cudaSuccess) e = cudaMemcpyAsync(dst, src, (size_t)c->sizes[k], kind, s);
        if (e == cudaSuccess) e = cudaStreamSynchronize(s);
        v[0] = MPI_Wtime() - t0;
        if (e != cudaSuccess) {
          char call[64];
          snprintf(call, sizeof call, "cudaMemcpyAsync %s of %lld bytes", dir ? "d2h" : "h2d",
                   (long long)c->sizes[k]);
          st = halo_error_cuda(e, call, __FILE__, __LINE__);
          v[1] = 1;
        }
        if (step_failed(comm, v)) goto cleanup; /* st: this rank's own */
        if (it >= 0) work[it] = v[0];
      }
      (dir ? d2h : h2d)[k] = halo_measure_median(work, c->o.iterations);
    }
  }
cleanup:
  if (s) cudaStreamDestroy(s);
  halo_dev_free(dev);
  halo_pinned_free(host);
  halo_free(work);
  return st;
}

/* One size: a matrix in device memory whose standard exchange sends exactly
 * one message of `bytes` each way between the two ranks of pair, planned
 * with the transport and ranks_per_node given; t_p: the median over the
 * iterations of the slower rank's time of halo_exchange_begin +
 * halo_exchange_end + halo_plan_synchronize. Collective over pair. */
typedef struct {
  halo_transport transport;
  int ranks_per_node;
} message_kind;

static halo_status one_message(MPI_Comm pair, const halo_measure *c, const void *arg, int64_t bytes,
                               double *work, double *t_p) {
  const halo_transport transport = ((const message_kind *)arg)->transport;
  const int ranks_per_node = ((const message_kind *)arg)->ranks_per_node;
  halo_status st = HALO_SUCCESS;
  int rank;
  HALO_MPI(MPI_Comm_rank(pair, &rank));
  const int64_t m = bytes / 8, rb = rank * m;
  int64_t *ptr = NULL, *col = NULL, *d_ptr = NULL, *d_col = NULL;
  double *val = NULL, *d_val = NULL, *d_x = NULL;
  halo_matrix A = NULL;
  halo_plan plan = NULL;
  st = HALO_ALLOC(ptr, m + 1);
  if (st == HALO_SUCCESS) st = HALO_ALLOC(col, 2 * m);
  if (st == HALO_SUCCESS) st = HALO_ALLOC(val, 2 * m);
  if (st == HALO_SUCCESS) { /* row i: the diagonal, and entry i of the other rank's part of x */
    for (int64_t i = 0; i < m; i++) {
      ptr[i] = 2 * i;
      col[2 * i] = rb + i, val[2 * i] = 2.0;
      col[2 * i + 1] = (1 - rank) * m + i, val[2 * i + 1] = -1.0;
    }
    ptr[m] = 2 * m;
    st = halo_dev_malloc((void **)&d_ptr, (size_t)(m + 1) * sizeof *d_ptr);
  }
  if (st == HALO_SUCCESS) st = halo_dev_malloc((void **)&d_col, (size_t)(2 * m) * sizeof *d_col);
  if (st == HALO_SUCCESS) st = halo_dev_malloc((void **)&d_val, (size_t)(2 * m) * sizeof *d_val);
  if (st == HALO_SUCCESS) st = halo_dev_malloc((void **)&d_x, (size_t)m * sizeof *d_x);
  if (st == HALO_SUCCESS) st = halo_host_to_dev(d_ptr, ptr, (size_t)(m + 1) * sizeof *d_ptr);
  if (st == HALO_SUCCESS) st = halo_host_to_dev(d_col, col, (size_t)(2 * m) * sizeof *d_col);
  if (st == HALO_SUCCESS) st = halo_host_to_dev(d_val, val, (size_t)(2 * m) * sizeof *d_val);
  if (st == HALO_SUCCESS) {
    const cudaError_t e = cudaMemset(d_x, 0, (size_t)m * sizeof *d_x);
    if (e != cudaSuccess) st = halo_error_cuda(e, "cudaMemset", __FILE__, __LINE__);
  }
  if (any_failed(pair, st)) goto cleanup;
  /* collective and agreed by halo: both ranks fail together */
  st = halo_matrix_create_csr(pair, rb, rb + m, rb, rb + m, d_ptr, d_col, d_val, HALO_MEMORY_DEVICE,
                              &A);
  if (st != HALO_SUCCESS)
    HALO_FAIL(st, "halo_matrix_create_csr (device memory, %lld rows per rank) failed: %s",
              (long long)m, halo_last_error());
  halo_plan_options o = halo_plan_options_default();
  o.strategy = HALO_STRATEGY_STANDARD;
  o.transport = transport;
  o.ranks_per_node = ranks_per_node;
  st = halo_plan_build_matrix(A, &o, NULL, NULL, &plan);
  if (st != HALO_SUCCESS)
    HALO_FAIL(st, "halo_plan_create (transport %s, %lld bytes) failed: %s",
              halo_transport_name(transport), (long long)bytes, halo_last_error());
  halo_stats s;
  halo_phase_stats ps = {0};
  HALO_TRY(halo_plan_stats(plan, &s));
  if (s.n_phases > 0) HALO_TRY(halo_plan_phase_stats(plan, 0, &ps));
  if (s.n_phases != 1 || ps.messages != 2 || ps.max_message_bytes != bytes)
    HALO_FAIL(HALO_ERR_INTERNAL,
              "the plan of a %lld-byte message has %d phase(s), %lld messages of at most %lld "
              "bytes, not one message each way",
              (long long)bytes, s.n_phases, (long long)ps.messages,
              (long long)ps.max_message_bytes);
  for (int it = -c->warmup; it < c->o.iterations; it++) {
    double v[2] = {0, 0}; /* the time, whether it failed */
    v[1] = MPI_Barrier(pair) != MPI_SUCCESS;
    const double t0 = MPI_Wtime();
    halo_status e = halo_exchange_begin(plan, d_x, NULL);
    const char *call = "halo_exchange_begin";
    if (e == HALO_SUCCESS) e = halo_exchange_end(plan), call = "halo_exchange_end";
    if (e == HALO_SUCCESS) e = halo_plan_synchronize(plan), call = "halo_plan_synchronize";
    v[0] = MPI_Wtime() - t0;
    if (e != HALO_SUCCESS) {
      st = HALO_ERROR(e, "%s (transport %s, %lld bytes) failed: %s", call,
                      halo_transport_name(transport), (long long)bytes, halo_last_error());
      v[1] = 1;
    }
    if (step_failed(pair, v)) goto cleanup; /* st: this rank's own */
    if (it >= 0) work[it] = v[0];
  }
  *t_p = halo_measure_median(work, c->o.iterations);
cleanup:
  halo_plan_destroy(&plan);
  halo_matrix_destroy(&A);
  halo_dev_free(d_x);
  halo_dev_free(d_val);
  halo_dev_free(d_col);
  halo_dev_free(d_ptr);
  halo_free(val);
  halo_free(col);
  halo_free(ptr);
  return st;
}

/* Collective: halo's exchange of one message each way between rank 0 and
 * peer, transport tr, nodes of rpn ranks, at the n sizes gs (multiples of
 * 8 bytes); t on rank 0. */
static halo_status pair_messages(const halo_measure *c, int peer, halo_transport tr, int rpn,
                                 const int64_t *gs, int n, double *t) {
  const message_kind kind = {tr, rpn};
  return halo_measure_pair(c, peer, one_message, &kind, gs, n, t);
}

/* name.*: a fit of halo's exchange over transport tr of one message each way
 * between rank 0 and peer, a rank of its machine (ipc, nvshmem). */
static halo_status measure_fit(halo_measure *c, int peer, halo_transport tr, const int64_t *gs,
                               const double *gd, int ng, halo_postal *postal, int *have) {
  double t[HALO_MEASURE_MAX_SIZES];
  char how[160];
  const char *name = halo_transport_name(tr);
  HALO_CHECK(pair_messages(c, peer, tr, c->o.ranks_per_node ? 2 : 0, gs, ng, t));
  snprintf(how, sizeof how,
           "transport %s, one message each way between ranks 0 and %d "
           "(with halo_plan_synchronize)",
           name, peer);
  return halo_measure_fit_exchange(c, name, how, gs, gd, t, ng, postal, have);
}

/* ---- the measurements --------------------------------------------------------- */

/* copy.*.1 by rank 0 alone, copy.*.4 by the first 4 ranks of its machine at once. */
static halo_status measure_copies(halo_measure *c, int dev) {
  int n4 = c->rank == 0 && c->shm_size >= 4, leader0 = c->shm_leader;
  HALO_MPI(MPI_Bcast(&n4, 1, MPI_INT, 0, c->comm));
  HALO_MPI(MPI_Bcast(&leader0, 1, MPI_INT, 0, c->comm));
  for (int procs = 1; procs <= 4; procs += 3) {
    if (procs == 4 && !n4) {
      halo_measure_from_base(c, "copy.*.4.*", "fewer than 4 ranks on rank 0's machine");
      break;
    }
    const int active = procs == 1 ? c->rank == 0 : c->shm_leader == leader0 && c->shm_rank < 4;
    halo_status st = HALO_SUCCESS;
    MPI_Comm sub;
    double h2d[HALO_MEASURE_MAX_SIZES], d2h[HALO_MEASURE_MAX_SIZES];
    HALO_MPI(MPI_Comm_split(c->comm, active ? 0 : MPI_UNDEFINED, c->rank, &sub));
    if (active) {
      st = gpu_copies(sub, c, h2d, d2h);
      MPI_Comm_free(&sub);
    }
    HALO_CHECK(halo_measure_wait_all(c, active));
    HALO_CHECK(halo_agree(c->comm, st));
    if (c->rank == 0) {
      halo_fit fh, fd;
      st = halo_fit_postal(c->dsizes, h2d, c->n_sizes, c->o.fit, &fh);
      if (st == HALO_SUCCESS) st = halo_fit_postal(c->dsizes, d2h, c->n_sizes, c->o.fit, &fd);
      if (st != HALO_SUCCESS) {
        st = HALO_ERROR(st, "copies: %s", halo_last_error());
      } else {
        char r[64];
        snprintf(r, sizeof r, "[%lld, %lld]", (long long)c->o.min_bytes, (long long)c->o.max_bytes);
        halo_measure_say(
            c, "copy.*.%d: cudaMemcpyAsync with pinned host memory, %s (rank 0 on device %d)\n",
            procs, procs == 1 ? "1 process" : "4 processes at once", dev);
        halo_measure_say_fit(c, "h2d", r, &fh);
        halo_measure_say_fit(c, "d2h", r, &fd);
        c->res.params.h2d[procs == 4] = (halo_postal){fh.alpha, fh.beta};
        c->res.params.d2h[procs == 4] = (halo_postal){fd.alpha, fd.beta};
      }
    }
    HALO_CHECK(halo_agree(c->comm, st));
  }
  return HALO_SUCCESS;
}

/* staged.alpha, after copy.* and cpu.* are known: the staged path's exchange
 * of one message each way less what the model already counts for it (a copy
 * down, the message, a copy up), the median over the sizes below eager_max. */
static halo_status measure_staged(halo_measure *c, const int64_t *gs, const double *gd, int ng) {
  int l = HALO_LOC_OFF_NODE; /* the farthest partner rank 0 has */
  while (l > 0 && c->partner[l] < 0) l--;
  int ns = 0;
  while (ns < ng && gs[ns] < c->o.eager_max) ns++;
  if (c->partner[l] < 0 || ns == 0) {
    halo_measure_from_base(c, "staged.*",
                           c->partner[l] < 0 ? "one rank" : "no size below eager_max");
    return HALO_SUCCESS;
  }
  const int rpn = c->o.ranks_per_node ? (l == HALO_LOC_OFF_NODE ? 1 : 2) : 0;
  double t[HALO_MEASURE_MAX_SIZES], rest[HALO_MEASURE_MAX_SIZES];
  HALO_CHECK(pair_messages(c, c->partner[l], HALO_TRANSPORT_STAGED, rpn, gs, ns, t));
  if (c->rank != 0) return HALO_SUCCESS;
  const halo_params *p = &c->res.params;
  for (int k = 0; k < ns; k++) {
    const halo_postal *m = &p->cpu[halo_params_protocol(p, gs[k])][l];
    rest[k] = t[k] - (p->d2h[0].alpha + p->d2h[0].beta * gd[k]) - (m->alpha + m->beta * gd[k]) -
              (p->h2d[0].alpha + p->h2d[0].beta * gd[k]);
  }
  const double med = halo_measure_median(rest, ns);
  const char *loc = halo_measure_loc_names[l];
  c->res.params.staged_alpha = med > 0 ? med : 0;
  halo_measure_say(c,
                   "staged.alpha: transport staged, one message each way between ranks 0 and %d "
                   "(%s), %lld to %lld bytes, less copy.*.1 and cpu.*.%s: median %.3g s%s\n",
                   c->partner[l], loc, (long long)gs[0], (long long)gs[ns - 1], loc, med,
                   med > 0 ? "" : " (taken as 0)");
  halo_measure_note(c, "staged.*",
                    "staged.alpha: halo's staged exchange of one message each way (%s), %lld to "
                    "%lld bytes, less the copies and the message the model counts: median %.3g s",
                    loc, (long long)gs[0], (long long)gs[ns - 1], med);
  return HALO_SUCCESS;
}

/* ipc.*: a fit of the ipc exchange of one message each way between rank 0
 * and a rank of its machine. halo's ipc transport serves every peer of the
 * plan's MPI_COMM_TYPE_SHARED communicator (src/exec/cuda_setup.c), so the
 * pair may lie in two virtual nodes; its own plan makes it one node. */
static halo_status measure_ipc(halo_measure *c, const int64_t *gs, const double *gd, int ng) {
  const int peer = c->ipc_partner;
  if (peer < 0) {
    halo_measure_from_base(c, "ipc.*", "no other rank on rank 0's machine");
    return HALO_SUCCESS;
  }
  return measure_fit(c, peer, HALO_TRANSPORT_IPC, gs, gd, ng, &c->res.params.ipc,
                     &c->res.params.have_ipc);
}

/* nvshmem.*: a fit of the nvshmem exchange of one message each way between
 * rank 0 and a rank of its machine, each with a GPU of its own. Only with 2
 * ranks: NVSHMEM is initialised once per program over one set of processes,
 * and the pair's plan would make it theirs. */
static halo_status measure_nvshmem(halo_measure *c, int count, const int64_t *gs, const double *gd,
                                   int ng) {
  const int peer = c->ipc_partner;
  int own = c->shm_size <= count;
  HALO_MPI(MPI_Allreduce(MPI_IN_PLACE, &own, 1, MPI_INT, MPI_MIN, c->comm));
  const char *why = !HALO_HAVE_NVSHMEM ? "NVSHMEM not compiled in"
                    : c->size != 2     ? "measured only with 2 ranks (NVSHMEM is initialised once "
                                         "per program, over one set of processes)"
                    : peer < 0         ? "no other rank on rank 0's machine"
                    : !own             ? "ranks share a GPU"
                                       : NULL;
  if (why) {
    halo_measure_from_base(c, "nvshmem.*", why);
    return HALO_SUCCESS;
  }
  return measure_fit(c, peer, HALO_TRANSPORT_NVSHMEM, gs, gd, ng,
                     &c->res.params.own[HALO_TRANSPORT_NVSHMEM],
                     &c->res.params.have_own[HALO_TRANSPORT_NVSHMEM]);
}

/* gpu.* per locality: device-aware messages through halo, nccl when no two
 * ranks of a machine share a device, else ipc. */
static halo_status measure_messages(halo_measure *c, int count, const int64_t *gs, const double *gd,
                                    int ng) {
  int own = c->shm_size <= count, measured[HALO_N_LOC] = {0};
  HALO_MPI(MPI_Allreduce(MPI_IN_PLACE, &own, 1, MPI_INT, MPI_MIN, c->comm));
  const halo_transport tr = HALO_HAVE_NCCL && own ? HALO_TRANSPORT_NCCL : HALO_TRANSPORT_IPC;
  const char *twhy = tr == HALO_TRANSPORT_NCCL ? "each rank has its own GPU"
                     : HALO_HAVE_NCCL          ? "ranks share a GPU"
                                               : "NCCL not compiled in";
  for (int l = 0; l < HALO_N_LOC; l++) {
    const int peer = c->partner[l];
    const char *loc = halo_measure_loc_names[l];
    if (peer < 0) continue;
    const int rpn = c->o.ranks_per_node ? (l == HALO_LOC_OFF_NODE ? 1 : 2) : 0;
    double t[HALO_MEASURE_MAX_SIZES];
    HALO_CHECK(pair_messages(c, peer, tr, rpn, gs, ng, t));
    if (c->rank != 0) continue;
    halo_fit fe, fr;
    const double eager = (double)c->o.eager_max;
    if (halo_fit_range(gd, t, ng, 0, eager, "eager", c->o.fit, &fe) != HALO_SUCCESS ||
        halo_fit_range(gd, t, ng, eager, INFINITY, "rendezvous", c->o.fit, &fr) != HALO_SUCCESS) {
      halo_measure_say(c, "gpu.*.%s: cannot fit the sizes measured (multiples of 8 bytes): %s\n",
                       loc, halo_last_error());
      halo_error_clear();
      continue;
    }
    halo_measure_say(c,
                     "gpu.*.%s: halo exchange of one message each way between ranks 0 and %d, "
                     "transport %s (%s)\n",
                     loc, peer, halo_transport_name(tr), twhy);
    char r[64];
    snprintf(r, sizeof r, "[%lld, %lld)", (long long)gs[0], (long long)c->o.eager_max);
    halo_measure_say_fit(c, "eager", r, &fe);
    halo_measure_range_text(c, HALO_PROTO_RENDEZVOUS, r, sizeof r);
    halo_measure_say_fit(c, "rendezvous", r, &fr);
    halo_params *p = &c->res.params;
    p->gpu[HALO_PROTO_EAGER][l] = (halo_postal){fe.alpha, fe.beta};
    p->gpu[HALO_PROTO_SHORT][l] = p->gpu[HALO_PROTO_EAGER][l];
    p->gpu[HALO_PROTO_RENDEZVOUS][l] = (halo_postal){fr.alpha, fr.beta};
    measured[l] = 1;
  }
  HALO_MPI(MPI_Bcast(measured, HALO_N_LOC, MPI_INT, 0, c->comm));
  for (int l = 0; l < HALO_N_LOC; l++) {
    if (measured[l]) continue;
    const int from = halo_measure_nearest(l, measured);
    const char *loc = halo_measure_loc_names[l];
    char keys[48];
    snprintf(keys, sizeof keys, "gpu.*.%s.*", loc);
    if (from < 0) {
      for (int p = 0; p < HALO_N_PROTO; p++) c->res.params.gpu[p][l] = c->base.gpu[p][l];
      halo_measure_from_base(c, keys, "could not be measured");
      continue;
    }
    for (int p = 0; p < HALO_N_PROTO; p++) c->res.params.gpu[p][l] = c->res.params.gpu[p][from];
    const char *why = c->partner[l] < 0 ? halo_measure_no_pair_reason(l) : "could not be fitted";
    const char *src = halo_measure_loc_names[from];
    halo_measure_note(c, keys, "gpu.*.%s: copied from gpu.*.%s (%s)", loc, src, why);
    halo_measure_say(c, "gpu.*.%s: copied from gpu.*.%s (%s)\n", loc, src, why);
  }
  halo_measure_note(c, "gpu.*",
                    "gpu.*: halo_exchange_begin/end + halo_plan_synchronize of one message each "
                    "way, transport %s (%s)",
                    halo_transport_name(tr), twhy);
  return HALO_SUCCESS;
}

/* Visible CUDA devices; 0 when there are none or the runtime cannot tell
 * (why: the message). Not collective. */
static int gpu_count(char *why, size_t len) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    snprintf(why, len, "cudaGetDeviceCount: %s", cudaGetErrorString(e));
    (void)cudaGetLastError(); /* clear it */
    return 0;
  }
  if (n <= 0) snprintf(why, len, "cudaGetDeviceCount found no device");
  return n > 0 ? n : 0;
}

halo_status halo_measure_device(halo_measure *c) {
  char why[HALO_ERROR_LEN + 64] = "";
  const int count = gpu_count(why, sizeof why);
  /* the first rank without a device says why, on every rank */
  halo_status none = count > 0 ? HALO_SUCCESS : HALO_ERROR(HALO_ERR_UNSUPPORTED, "%s", why);
  if ((none = halo_agree(c->comm, none)) != HALO_SUCCESS) {
    if (none == HALO_ERR_MPI) return none;
    snprintf(why, sizeof why, "no CUDA device visible on %s", halo_last_error());
    halo_error_clear();
    halo_measure_device_from_base(c, why);
    return HALO_SUCCESS;
  }
  int dev = -1;
  HALO_CHECK(halo_agree(c->comm, gpu_select(c->shm_rank, &dev)));
  HALO_CHECK(measure_copies(c, dev));
  int64_t gs[HALO_MEASURE_MAX_SIZES];
  double gd[HALO_MEASURE_MAX_SIZES];
  int ng = 0;
  for (int k = 0; k < c->n_sizes; k++)
    if (c->sizes[k] % 8 == 0) gs[ng] = c->sizes[k], gd[ng] = (double)c->sizes[k], ng++;
  HALO_CHECK(measure_messages(c, count, gs, gd, ng));
  HALO_CHECK(measure_staged(c, gs, gd, ng));
  HALO_CHECK(measure_ipc(c, gs, gd, ng));
  return measure_nvshmem(c, count, gs, gd, ng);
}

#else /* no CUDA */

halo_status halo_measure_device(halo_measure *c) {
  halo_measure_device_from_base(c, "halo built without CUDA");
  return HALO_SUCCESS;
}

#endif
