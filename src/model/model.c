/* The performance model of a schedule: the rules are in model.h. */
#include <string.h>

#include "model/model.h"
#include "exec/transport.h"

halo_locality halo_model_locality(const halo_model_rank *a, const halo_model_rank *b) {
  if (a->node != b->node) return HALO_LOC_OFF_NODE;
  return a->socket == b->socket ? HALO_LOC_ON_SOCKET : HALO_LOC_ON_NODE;
}

/* The channel of a message from a to b under a transport's model. */
static halo_channel channel_of(const halo_transport_model *t, const halo_model_rank *a,
                               const halo_model_rank *b) {
  if (t->channel == HALO_CHANNEL_IPC)
    return a->host == b->host && a->on_gpu ? HALO_CHANNEL_IPC : HALO_CHANNEL_CPU;
  return t->channel;
}

/* The transport's own postal pair where it has one and the parameters give it, else NULL. */
static const halo_postal *own_pair(const halo_params *p, const halo_transport_desc *d) {
  return d->model.own_params && p->have_own[d->id] ? &p->own[d->id] : NULL;
}

int halo_model_priced(const void *params, halo_transport t) {
  const halo_transport_desc *d = halo_transport_find(t);
  return d && own_pair(params, d) != NULL;
}

double halo_model_setup(const halo_params *p, halo_transport t, int ranks) {
  const halo_transport_desc *d = halo_transport_find(t);
  if (!d) return 0.0;
  if (p && (int)t >= 0 && (int)t < HALO_N_TRANSPORTS && p->have_setup[t])
    return p->setup[t].alpha + p->setup[t].beta * ranks;
  return d->model.setup_alpha + d->model.setup_per_rank * ranks;
}

static double postal(const halo_postal *m, int64_t bytes) {
  return m->alpha + m->beta * (double)bytes;
}

double halo_model_phase(const halo_params *p, halo_transport t, const halo_schedule *s, int k,
                        const halo_model_rank *ranks, int64_t node_inter_bytes) {
  if (k < 0 || k >= s->n_phases) return 0.0;
  const halo_phase *ph = &s->phase[k];
  const int r = s->rank;
  const halo_model_rank *me = &ranks[r];
  const int c = me->ranks_per_gpu >= 2;
  const halo_transport_desc *desc = halo_transport_find(t);
  if (!desc) return 0.0; /* checked by the callers (check_transport) */
  const halo_transport_model *tm = &desc->model;
  const halo_postal *own = own_pair(p, desc);
  double cpu = 0.0, cpu_alpha = 0.0, cpu_beta = 0.0, gpu = 0.0, ipc = 0.0, copy = 0.0;
  double nccl_alpha = 0.0, nccl_beta = 0.0; /* one group: the largest alpha, all betas */
  int64_t cpu_sent = 0, cpu_received = 0;
  int cpu_sends = 0;
  for (int i = 0; i < ph->n_send; i++) {
    const int q = ph->send[i].peer;
    if (q == r) continue;
    const int64_t bytes = ph->send[i].count * (int64_t)sizeof(double);
    const halo_locality loc = halo_model_locality(me, &ranks[q]);
    switch (channel_of(tm, me, &ranks[q])) {
    case HALO_CHANNEL_CPU: {
      /* the transport's own pair where measured (rma.*: between rank 0 and its
       * nearest partner) */
      const halo_postal *m = own ? own : &p->cpu[halo_params_protocol(p, bytes)][loc];
      cpu_alpha += m->alpha;
      cpu_beta += m->beta * (double)bytes;
      cpu_sent += bytes;
      cpu_sends++;
      break;
    }
    case HALO_CHANNEL_GPU:
      if (tm->grouped) {
        const halo_postal *m = &p->gpu[halo_params_protocol(p, bytes)][loc];
        if (m->alpha > nccl_alpha) nccl_alpha = m->alpha;
        nccl_beta += m->beta * (double)bytes;
      } else if (own && me->host == ranks[q].host) { /* measured between GPUs of one host */
        gpu += postal(own, bytes);
      } else {
        gpu += halo_params_message(p, 1, loc, bytes);
      }
      break;
    case HALO_CHANNEL_IPC: break; /* the receiver reads it */
    }
  }
  if (cpu_sends > 0) {
    if (ph->scope == HALO_SCOPE_GLOBAL) {
      const double injection = (double)node_inter_bytes * p->injection_beta;
      cpu = cpu_alpha + (cpu_beta > injection ? cpu_beta : injection);
    } else {
      cpu = cpu_alpha + cpu_beta;
    }
  }
  for (int i = 0; i < ph->n_recv; i++) {
    const int q = ph->recv[i].peer;
    if (q == r) continue;
    const int64_t bytes = ph->recv[i].count * (int64_t)sizeof(double);
    switch (channel_of(tm, &ranks[q], me)) {
    case HALO_CHANNEL_IPC:
      ipc += !me->on_gpu   ? postal(&p->d2h[c], bytes)
             : p->have_ipc ? postal(&p->ipc, bytes)
                           : halo_params_message(p, 1, halo_model_locality(&ranks[q], me), bytes);
      break;
    case HALO_CHANNEL_CPU: cpu_received += bytes; break;
    case HALO_CHANNEL_GPU: break; /* paid by the sender */
    }
  }
  if (me->on_gpu && tm->copies) {
    if (cpu_sent > 0) copy += postal(&p->d2h[c], cpu_sent);
    if (cpu_received > 0) copy += postal(&p->h2d[c], cpu_received);
    if (cpu_sent > 0 || cpu_received > 0) copy += p->staged_alpha;
  }
  gpu += nccl_alpha + nccl_beta;
  return cpu + gpu + ipc + copy;
}

/* The checks of halo_model_schedules on one transport. */
static halo_status check_transport(halo_transport t) {
  /* rma by rma.* where they are given, else as host (MPI between host buffers); nvshmem by
   * nvshmem.* within a host where they are given, else as a device message */
  if (!halo_transport_find(t)) {
    char names[200];
    halo_transport_list_names(-1, names, sizeof names);
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "the model needs a resolved transport (%s), got %s",
                      names, halo_transport_name(t));
  }
  return HALO_SUCCESS;
}

/* ... and on the schedule of rank r of P. */
static halo_status check_schedule(const halo_schedule *s, int r, int P,
                                  const halo_model_rank *ranks) {
  if (s->rank != r || s->size != P)
    return HALO_ERROR(HALO_ERR_INVALID_ARG,
                      "schedule %d is that of rank %d of %d, expected rank %d of %d", r, s->rank,
                      s->size, r, P);
  if (s->n_phases < 0 || s->n_phases > HALO_MAX_PHASES)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "schedule of rank %d has %d phases", r, s->n_phases);
  if (ranks[r].node < 0 || ranks[r].node >= P)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "rank %d: node %d outside [0, %d)", r, ranks[r].node,
                      P);
  if (ranks[r].ranks_per_gpu < 1)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "rank %d: ranks_per_gpu = %d, at least 1", r,
                      ranks[r].ranks_per_gpu);
  for (int k = 0; k < s->n_phases; k++)
    for (int i = 0; i < s->phase[k].n_send; i++)
      if (s->phase[k].send[i].peer < 0 || s->phase[k].send[i].peer >= P)
        return HALO_ERROR(HALO_ERR_INVALID_ARG, "rank %d phase %d: send to %d outside [0, %d)", r,
                          k, s->phase[k].send[i].peer, P);
  for (int k = 0; k < s->n_phases; k++)
    for (int i = 0; i < s->phase[k].n_recv; i++)
      if (s->phase[k].recv[i].peer < 0 || s->phase[k].recv[i].peer >= P)
        return HALO_ERROR(HALO_ERR_INVALID_ARG, "rank %d phase %d: receive from %d outside [0, %d)",
                          r, k, s->phase[k].recv[i].peer, P);
  return HALO_SUCCESS;
}

/* Bytes rank r sends to other nodes in phase k. */
static int64_t inter_node_bytes(const halo_schedule *s, int k, const halo_model_rank *ranks) {
  int64_t bytes = 0;
  if (k >= s->n_phases) return 0;
  const halo_phase *ph = &s->phase[k];
  for (int i = 0; i < ph->n_send; i++)
    if (ranks[ph->send[i].peer].node != ranks[s->rank].node)
      bytes += ph->send[i].count * (int64_t)sizeof(double);
  return bytes;
}

halo_status halo_model_schedules(const halo_params *p, halo_transport t, const halo_schedule *sched,
                                 int P, const halo_model_rank *ranks, double *phase_seconds,
                                 double *total_p) {
  halo_status st = HALO_SUCCESS;
  int64_t *node_bytes = NULL;
  double phases[HALO_MAX_PHASES] = {0}, total = 0.0;
  int n_phases = 0;
  if (!p || !sched || !ranks || !total_p || P < 1)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_model_schedules: NULL argument or P < 1");
  HALO_CHECK(check_transport(t));
  for (int r = 0; r < P; r++) {
    HALO_CHECK(check_schedule(&sched[r], r, P, ranks));
    if (sched[r].n_phases > n_phases) n_phases = sched[r].n_phases;
  }
  HALO_TRY(HALO_ALLOC(node_bytes, P));
  for (int k = 0; k < n_phases; k++) {
    /* what each node sends to other nodes in this phase */
    memset(node_bytes, 0, (size_t)P * sizeof *node_bytes);
    for (int r = 0; r < P; r++) node_bytes[ranks[r].node] += inter_node_bytes(&sched[r], k, ranks);
    for (int r = 0; r < P; r++) {
      const double x = halo_model_phase(p, t, &sched[r], k, ranks, node_bytes[ranks[r].node]);
      if (x > phases[k]) phases[k] = x;
    }
    total += phases[k];
  }
  if (phase_seconds) memcpy(phase_seconds, phases, sizeof phases);
  *total_p = total;
cleanup:
  halo_free(node_bytes);
  return st;
}

halo_status halo_model_node(const halo_params *p, halo_transport t, const halo_schedule *sched,
                            int n, int P, const halo_model_rank *ranks, double *phase_seconds,
                            int *n_phases_p) {
  if (!p || !sched || !ranks || !phase_seconds || !n_phases_p || n < 1 || P < 1)
    return HALO_ERROR(HALO_ERR_INVALID_ARG, "halo_model_node: NULL argument, n < 1 or P < 1");
  HALO_CHECK(check_transport(t));
  int n_phases = 0;
  for (int i = 0; i < n; i++) {
    const int r = sched[i].rank;
    if (r < 0 || r >= P) return HALO_ERROR(HALO_ERR_INVALID_ARG, "schedule of rank %d of %d", r, P);
    HALO_CHECK(check_schedule(&sched[i], r, P, ranks));
    if (ranks[r].node != ranks[sched[0].rank].node)
      return HALO_ERROR(HALO_ERR_INVALID_ARG, "ranks %d and %d of one node are on nodes %d and %d",
                        sched[0].rank, r, ranks[sched[0].rank].node, ranks[r].node);
    if (sched[i].n_phases > n_phases) n_phases = sched[i].n_phases;
  }
  for (int k = 0; k < n_phases; k++) {
    int64_t node_bytes = 0; /* what the node sends to other nodes in this phase */
    for (int i = 0; i < n; i++) node_bytes += inter_node_bytes(&sched[i], k, ranks);
    for (int i = 0; i < n; i++) {
      const double x = halo_model_phase(p, t, &sched[i], k, ranks, node_bytes);
      if (x > phase_seconds[k]) phase_seconds[k] = x;
    }
  }
  if (n_phases > *n_phases_p) *n_phases_p = n_phases;
  return HALO_SUCCESS;
}
