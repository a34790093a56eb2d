/* 3-Step: all data of node A for node B is gathered on the rank of A paired
 * with B, crosses the network in one message to the rank of B paired with
 * A, and is redistributed there. Pairing deals the other nodes to the ranks
 * of a node round-robin, in decreasing order of volume, from local rank 0
 * (halo_node_pair_links). Phases: node (gather to the senders, and the
 * on-node messages, direct), global (pieces), node (redistribution). */
#include "plan/strategy.h"

static halo_status decide_receive(const halo_node_input *in, halo_node_links *L,
                                  int64_t message_cap) {
  halo_status st = HALO_SUCCESS;
  int *local = NULL;
  (void)message_cap; /* one piece per link, whatever its size */
  HALO_TRY(HALO_ALLOC(local, L->n_in));
  HALO_TRY(halo_node_pair_links(in, L->in, L->n_in, local));
  for (int c = 0; c < L->n_in; c++) {
    halo_link *l = &L->in[c];
    HALO_TRY(halo_link_pieces_alloc(l, 1));
    l->piece_start[0] = 0;
    l->piece_start[1] = l->n;
    l->piece_receiver[0] = in->ranks[local[c]];
  }
cleanup:
  halo_free(local);
  return st;
}

static halo_status decide_send(const halo_node_input *in, halo_node_links *L) {
  halo_status st = HALO_SUCCESS;
  int *local = NULL;
  HALO_TRY(HALO_ALLOC(local, L->n_out));
  HALO_TRY(halo_node_pair_links(in, L->out, L->n_out, local));
  for (int b = 0; b < L->n_out; b++)
    for (int k = 0; k < L->out[b].n_pieces; k++) L->out[b].piece_sender[k] = in->ranks[local[b]];
cleanup:
  halo_free(local);
  return st;
}

const halo_strategy_desc halo_strategy_desc_3step = {
    .name = "3step",
    .strategy = HALO_STRATEGY_3STEP,
    .n_phases = 3,
    .phase_direct = 0,
    .phase_gather = 0,
    .phase_global = 1,
    .phase_redistribute = 2,
    .decide_receive = decide_receive,
    .decide_send = decide_send,
};
