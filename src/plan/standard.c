/* Standard exchange: every rank sends directly to every rank that needs its
 * data; one global phase, receives land in x_ghost in order. No decisions:
 * a rank's schedule is a function of its pattern alone. */
#include <string.h>

#include "plan/strategy.h"

halo_status halo_schedule_build_standard(const halo_pattern *p, halo_schedule *s) {
  halo_status st = HALO_SUCCESS;
  memset(s, 0, sizeof *s);
  s->strategy = HALO_STRATEGY_STANDARD;
  s->rank = p->rank;
  s->size = p->size;
  s->n_local = p->n_local;
  s->n_ghost = p->n_ghost;
  s->n_work = 0;
  s->n_phases = 1;
  halo_phase *ph = &s->phase[0];
  ph->scope = HALO_SCOPE_GLOBAL;
  ph->n_send = p->n_send;
  ph->n_recv = p->n_recv;
  ph->send_total = p->n_send ? p->send[p->n_send - 1].offset + p->send[p->n_send - 1].count : 0;
  ph->recv_total = p->n_ghost;
  HALO_TRY(HALO_ALLOC(ph->send, p->n_send));
  HALO_TRY(HALO_ALLOC(ph->recv, p->n_recv));
  HALO_TRY(HALO_ALLOC(ph->pack, ph->send_total));
  HALO_TRY(HALO_ALLOC(ph->unpack, ph->recv_total));
  if (p->n_send) memcpy(ph->send, p->send, (size_t)p->n_send * sizeof *ph->send);
  if (p->n_recv) memcpy(ph->recv, p->recv, (size_t)p->n_recv * sizeof *ph->recv);
  if (ph->send_total) memcpy(ph->pack, p->send_idx, (size_t)ph->send_total * sizeof *ph->pack);
  for (int64_t i = 0; i < ph->recv_total; i++) ph->unpack[i] = i;
cleanup:
  if (st != HALO_SUCCESS) halo_schedule_free(s);
  return st;
}

const halo_strategy_desc halo_strategy_desc_standard = {
    .name = "standard",
    .strategy = HALO_STRATEGY_STANDARD,
    .n_phases = 1,
    .phase_direct = 0,
    .phase_gather = -1,
    .phase_global = 0,
    .phase_redistribute = -1,
    .decide_receive = NULL,
    .decide_send = NULL,
};
