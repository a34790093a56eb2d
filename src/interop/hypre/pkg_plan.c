/* halo for hypre: a package's plans. halo_hypre_plan_create_from_comm_pkg
 * (a plan of hypre's own send and receive lists, in entries of the vectors
 * the package is set for), the options of the adapter's plans in each
 * memory, and what the report keeps of a plan just made. The registry that
 * decides when a package gets its plans is pkg.c. */
#include <stdint.h>
#include <stdlib.h>

#include "hypre_impl.h"

/* The vectors a package is set for now (hypre_ParCSRCommPkgUpdateVecStarts):
 * the same on every rank, as the vectors of the product that set it; a
 * package made without the field set counts as one. */
int hh_pkg_components(const hypre_ParCSRCommPkg *p)
{
  const HYPRE_Int k = hypre_ParCSRCommPkgNumComponents(p);
  return k > 1 ? (int)k : 1;
}

halo_status halo_hypre_plan_create_from_comm_pkg(hypre_ParCSRCommPkg *p,
                                                 const halo_plan_options *opts,
                                                 halo_plan *plan_p)
{
  if (!p || !plan_p) return HALO_ERR_INVALID_ARG;
  MPI_Comm comm = hypre_ParCSRCommPkgComm(p);
  int n_recv = (int)hypre_ParCSRCommPkgNumRecvs(p);
  int n_send = (int)hypre_ParCSRCommPkgNumSends(p);
  const HYPRE_Int *rs = hypre_ParCSRCommPkgRecvVecStarts(p);
  const HYPRE_Int *ss = hypre_ParCSRCommPkgSendMapStarts(p);
  /* a package set for k vectors (hypre_ParCSRCommPkgUpdateVecStarts) counts
   * k values an entry: the plan is in entries */
  const int64_t k = hh_pkg_components(p);
  int64_t n_local = (n_send > 0 && ss) ? (int64_t)ss[n_send] / k : 0;
  int *recv_ranks = malloc((size_t)(n_recv > 0 ? n_recv : 1) * sizeof *recv_ranks);
  int64_t *recv_starts = malloc((size_t)(n_recv + 1) * sizeof *recv_starts);
  int *send_ranks = malloc((size_t)(n_send > 0 ? n_send : 1) * sizeof *send_ranks);
  int64_t *send_starts = malloc((size_t)(n_send + 1) * sizeof *send_starts);
  int64_t *send_indices = malloc((size_t)(n_local > 0 ? n_local : 1) * sizeof *send_indices);
  halo_status st = HALO_SUCCESS;
  if (!recv_ranks || !recv_starts || !send_ranks || !send_starts || !send_indices) {
    st = HALO_ERR_OUT_OF_MEMORY;
  } else {
    /* The send buffer is the part this rank owns, entry i sent as entry i:
     * the plan moves exactly hypre's packed buffers. */
    int whole = 1; /* every segment a whole number of entries of k values */
    recv_starts[0] = 0;
    for (int j = 0; j < n_recv; j++) {
      recv_ranks[j] = (int)hypre_ParCSRCommPkgRecvProc(p, j);
      const int64_t d = (int64_t)rs[j + 1] - (int64_t)rs[0];
      whole &= d % k == 0;
      recv_starts[j + 1] = d / k;
    }
    send_starts[0] = 0;
    for (int j = 0; j < n_send; j++) {
      send_ranks[j] = (int)hypre_ParCSRCommPkgSendProc(p, j);
      const int64_t d = (int64_t)ss[j + 1] - (int64_t)ss[0];
      whole &= d % k == 0;
      send_starts[j + 1] = d / k;
    }
    for (int64_t i = 0; i < n_local; i++) send_indices[i] = i;
    if (!whole) st = HALO_ERR_INVALID_ARG; /* not a package of hypre's making */
  }
  /* A failure to allocate on one rank is agreed on every rank (the plan's
   * creation is collective, so all must take the same road). */
  st = halo_status_agree(comm, st);
  if (st == HALO_SUCCESS)
    st = halo_plan_create_from_lists(comm, n_local, n_recv, recv_ranks, recv_starts, n_send,
                                     send_ranks, send_starts, send_indices, opts, plan_p);
  free(recv_ranks);
  free(recv_starts);
  free(send_ranks);
  free(send_starts);
  free(send_indices);
  return st;
}

/* The transport of device plans left at auto, decided at the first one: ipc
 * where each rank has a GPU of its own, else staged. Not the model's choice
 * of transport, which prices a lone exchange: in hypre's solve the exchange
 * sits between hypre's kernels on one stream, and measured there
 * (bench/results/amg-gpu.md, lap3d27 160^3 on 2 H200) ipc and nccl beat
 * staged at a rank per GPU (solve 0.84x and 0.77x hypre's, against 0.95x),
 * where the model prefers staged for the small messages of coarse levels;
 * with 4 ranks per GPU, ipc's solve takes 10x hypre's and staged's 1.01x.
 * Not nccl (issue 42): its communicator, made in the first AMG set-up, cost
 * 0.5 s at 2 ranks and 1.7 s at 4, more than its faster solve saves (whole
 * set-up + solve 1.42x and 3.1x hypre's; bench/results/time-to-solution.md).
 * HALO_TRANSPORT=nccl still asks for it. The strategy and message_cap are
 * the model's. */
#if HH_DEVICE
static halo_transport device_auto = HALO_TRANSPORT_AUTO;
#endif

/* A transport moves host memory (host, rma, neighbor: the registry says) or
 * device memory (the others). */
static int host_transport(halo_transport t)
{
  halo_transport_info info;
  return halo_transport_get_info(t, &info) == HALO_SUCCESS && info.host_memory;
}

/* The options of a plan over hypre's buffers in memory mem: the settings',
 * with a transport of that memory (HALO_TRANSPORT names one memory's; the
 * other's plans take host, or staged, the road through host memory), and in
 * device memory hypre's compute stream, so that the exchange is ordered
 * after hypre's packing and before its product of the off-diagonal block. */
const char *hh_plan_options(MPI_Comm comm, int mem, halo_plan_options *o)
{
  *o = hh_settings_get()->opts;
  const int named = o->transport != HALO_TRANSPORT_AUTO;
  if (mem == HH_HOST) {
    o->memory = HALO_MEMORY_HOST;
    if (named && !host_transport(o->transport)) o->transport = HALO_TRANSPORT_HOST;
    return NULL;
  }
#if HH_DEVICE
  o->memory = HALO_MEMORY_DEVICE;
  if (named && host_transport(o->transport)) o->transport = HALO_TRANSPORT_STAGED;
  if (!named && device_auto == HALO_TRANSPORT_AUTO) /* the first device plan: collective */
    device_auto = hh_device_shared(comm) ? HALO_TRANSPORT_STAGED : HALO_TRANSPORT_IPC;
  if (!named) o->transport = device_auto;
  /* NULL (hypre on the legacy default stream): halo's own blocking stream,
   * which is ordered with that one */
  o->stream = hh_device_stream();
  return NULL;
#else
  (void)comm;
  return "libhalo_hypre was built without device support (halo without CUDA, or a hypre "
         "without it)";
#endif
}

/* What the report keeps of a plan just made for record r. Collective (the
 * model), as the plan's creation. */
void hh_record_plan(hh_record *r, halo_plan plan)
{
  hh_settings *s = hh_settings_get();
  r->planned = 1;
  static int plans_made;
  r->plan_order = ++plans_made;
  for (int k = 0; k < HH_PARTS; k++)
    if (halo_plan_setup_part_seconds(plan, (halo_setup_part)k, &r->parts[k]) != HALO_SUCCESS)
      r->parts[k] = 0;
  halo_plan_stats(plan, &r->stats);
  hh_record_phases(plan, r);
  halo_plan_describe(plan, r->describe, sizeof r->describe);
  if (s->view) hh_view_arm();
  double seconds = 0;
  if (halo_plan_model(plan, s->opts.params, 0, NULL, &seconds) != HALO_SUCCESS) seconds = 0;
  r->modeled = seconds;
}
