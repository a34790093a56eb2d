/* The performance model of a real plan; see choose.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/choose.h"

int halo_choose_caps(int64_t option_cap, int64_t caps[5]) {
  const int64_t spread[4] = {4096, 16384, 65536, 262144};
  int n = 0;
  caps[n++] = option_cap;
  for (int i = 0; i < 4; i++)
    if (spread[i] != option_cap) caps[n++] = spread[i];
  return n;
}

double halo_candidate_cost(const halo_choice *ch, const halo_candidate *c) {
  const double uses = ch->uses > 0 ? (double)ch->uses : 1.0;
  return c->setup_seconds + uses * (c->timed > 0 ? c->timed : c->seconds);
}

int halo_choice_best(halo_choice *ch) {
  int timed = -1;
  ch->best = 0;
  for (int i = 0; i < ch->n; i++) {
    const double cost = halo_candidate_cost(ch, &ch->c[i]);
    if (ch->c[i].timed > 0 && (timed < 0 || cost < halo_candidate_cost(ch, &ch->c[timed])))
      timed = i;
    if (cost < halo_candidate_cost(ch, &ch->c[ch->best])) ch->best = i;
  }
  if (timed >= 0) ch->best = timed;
  return ch->best;
}

void halo_choice_describe(const halo_choice *ch, halo_strategy s, halo_transport t, int64_t cap,
                          char *buf, size_t len) {
  size_t n = 0;
#define HALO_PUT(...)                                                                              \
  do {                                                                                             \
    int w_ = snprintf(buf + n, len - n, __VA_ARGS__);                                              \
    if (w_ > 0) n = n + (size_t)w_ < len ? n + (size_t)w_ : len - 1;                               \
  } while (0)
  if (!buf || len == 0) return;
  buf[0] = '\0';
  HALO_PUT("%s, %s", halo_strategy_name(s), halo_transport_name(t));
  if (s == HALO_STRATEGY_SPLIT && cap > 0) HALO_PUT(", message_cap %lld B", (long long)cap);
  if (ch->how == 0) {
    HALO_PUT(": as asked");
    if (ch->note[0]) HALO_PUT(" [%s]", ch->note);
  } else if (ch->how == 4) {
    HALO_PUT(": remembered in the wisdom file %s (for %lld uses)", ch->note, (long long)ch->uses);
  } else {
    /* with set-ups, the choice is by cost over the expected uses; without, by time */
    int setups = 0;
    for (int i = 0; i < ch->n; i++) setups |= ch->c[i].setup_seconds > 0;
    char over[96] = "";
    if (setups)
      snprintf(over, sizeof over, " (set-up + %lld uses x time)", (long long)ch->uses);
    if (ch->how == 1)
      HALO_PUT(": the lowest modeled %s%s of %d candidates (parameters %s):",
               setups ? "cost" : "time", over, ch->n, ch->params);
    else if (ch->how == 5)
      HALO_PUT(": the %s%s of %d of %d candidates, timed on the program's first %d calls each "
               "(modeled within a factor 2 of the lowest, and each transport's lowest; "
               "parameters %s):",
               setups ? "lowest timed cost" : "fastest timed", over, ch->n_timed, ch->n,
               HALO_ONLINE_PER_TURN * HALO_ONLINE_ROUNDS, ch->params);
    else if (ch->how == 6)
      HALO_PUT(": the lowest modeled %s%s of %d candidates so far; %d of them being timed on the "
               "program's first calls (parameters %s):",
               setups ? "cost" : "time", over, ch->n, ch->n_timed, ch->params);
    else if (ch->how == 2)
      HALO_PUT(": the %s%s of %d candidates:", setups ? "lowest timed cost" : "fastest timed",
               over, ch->n);
    else
      HALO_PUT(": the %s%s of %d of %d candidates (modeled within a factor 2 of the lowest, "
               "and each transport's lowest%s; parameters %s):",
               setups ? "lowest timed cost" : "fastest timed", over, ch->n_timed, ch->n,
               setups ? " whose set-up is within it" : "", ch->params);
    for (int i = 0; i < ch->n; i++) {
      const halo_candidate *c = &ch->c[i];
      HALO_PUT(" %s%s/%s", i == ch->best ? "*" : "", halo_strategy_name(c->strategy),
               halo_transport_name(c->transport));
      if (c->strategy == HALO_STRATEGY_SPLIT) HALO_PUT("/%lld", (long long)c->message_cap);
      HALO_PUT(" %.3g us", 1e6 * (ch->how == 2 ? c->timed : c->seconds));
      if ((ch->how == 3 || ch->how == 5) && c->timed > 0) HALO_PUT(" (timed %.3g us)", 1e6 * c->timed);
      if (c->setup_seconds > 0) HALO_PUT(" + set-up %.3g s", c->setup_seconds);
      HALO_PUT("%s", i + 1 < ch->n ? "," : "");
    }
    if (ch->note[0]) HALO_PUT(" [%s]", ch->note);
  }
#undef HALO_PUT
}

/* Staged: a helper gets its share from a GPU rank by host MPI, so only the
 * GPU ranks copy to and from a GPU. The GPUs of a host, from the most ranks
 * sharing one (rpg); the GPU ranks of the host spread over them. host is the
 * lowest rank of the host, in [0, size). */
static halo_status staged_copiers(halo_model_rank *ranks, int size, int rpg) {
  halo_status st = HALO_SUCCESS;
  int *on_host = NULL, *on_gpu = NULL;
  HALO_TRY(HALO_CALLOC(on_host, size));
  HALO_TRY(HALO_CALLOC(on_gpu, size));
  for (int r = 0; r < size; r++) on_host[ranks[r].host]++, on_gpu[ranks[r].host] += ranks[r].on_gpu;
  for (int r = 0; r < size; r++) {
    const int h = ranks[r].host, gpus = (on_host[h] + rpg - 1) / rpg;
    ranks[r].ranks_per_gpu = on_gpu[h] > gpus ? (on_gpu[h] + gpus - 1) / gpus : 1;
  }
cleanup:
  halo_free(on_gpu);
  halo_free(on_host);
  return st;
}

halo_status halo_choose_ranks(MPI_Comm comm, const halo_topology *t, const halo_params *p,
                              int device, int helper, int ranks_per_gpu, halo_transport tr,
                              halo_model_rank *ranks) {
  halo_status st = HALO_SUCCESS;
  int size;
  HALO_TRY_MPI(MPI_Comm_size(comm, &size));
  {
    halo_model_rank me;
    me.host = t->host_id;
    me.node = t->node_id;
    me.socket = (int)((int64_t)t->node_rank * p->sockets_per_node / t->node_size);
    /* a helper keeps device buffers only where the transport's model says so (NCCL and
     * NVSHMEM: the CUDA executor) */
    const halo_transport_desc *desc = halo_transport_find(tr);
    const halo_transport_model *tm = desc ? &desc->model : NULL;
    me.on_gpu = device && !(helper && !(tm && tm->helper_on_gpu));
    me.ranks_per_gpu = device && ranks_per_gpu > 1 ? ranks_per_gpu : 1;
    int mine[5] = {me.host, me.node, me.socket, me.on_gpu, me.ranks_per_gpu};
    int *all = NULL;
    HALO_TRY(HALO_ALLOC(all, 5 * (int64_t)size));
    st = MPI_Allgather(mine, 5, MPI_INT, all, 5, MPI_INT, comm) == MPI_SUCCESS
             ? HALO_SUCCESS
             : HALO_ERROR(HALO_ERR_MPI, "MPI_Allgather of the model's ranks failed");
    for (int r = 0; r < size && st == HALO_SUCCESS; r++)
      ranks[r] = (halo_model_rank){all[5 * r], all[5 * r + 1], all[5 * r + 2], all[5 * r + 3],
                                   all[5 * r + 4]};
    halo_free(all);
    if (st == HALO_SUCCESS && device && tm && tm->gpu_ranks_copy && ranks_per_gpu > 1)
      st = staged_copiers(ranks, size, ranks_per_gpu);
  }
cleanup:
  return st;
}

halo_status halo_choose_model(MPI_Comm comm, const halo_topology *t, const halo_params *p,
                              halo_transport tr, const halo_schedule *s,
                              const halo_model_rank *ranks, double *phase, double *total_p) {
  int64_t inter[HALO_MAX_PHASES] = {0}, node_inter[HALO_MAX_PHASES];
  double mine[HALO_MAX_PHASES] = {0};
  const int my_node = ranks[s->rank].node;
  for (int k = 0; k < s->n_phases; k++)
    for (int i = 0; i < s->phase[k].n_send; i++) {
      const halo_msg *m = &s->phase[k].send[i];
      if (m->peer != s->rank && ranks[m->peer].node != my_node)
        inter[k] += m->count * (int64_t)sizeof(double);
    }
  HALO_MPI(MPI_Allreduce(inter, node_inter, HALO_MAX_PHASES, MPI_INT64_T, MPI_SUM, t->node_comm));
  for (int k = 0; k < s->n_phases; k++)
    mine[k] = halo_model_phase(p, tr, s, k, ranks, node_inter[k]);
  HALO_MPI(MPI_Allreduce(mine, phase, HALO_MAX_PHASES, MPI_DOUBLE, MPI_MAX, comm));
  double total = 0.0;
  for (int k = 0; k < HALO_MAX_PHASES; k++) total += phase[k];
  *total_p = total;
  return HALO_SUCCESS;
}
