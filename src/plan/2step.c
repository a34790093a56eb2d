/* 2-Step: every rank of node A sends what node B needs of it in one message
 * to the rank of B paired with A (pairing as in 3-Step: halo_node_pair_links),
 * which redistributes it on B. A piece is the part of a link one rank owns:
 * owners are contiguous in the canonical order. Phases: global (the pieces,
 * sent by their owners, and the on-node messages, direct), then node
 * (redistribution). */
#include "plan/strategy.h"

static halo_status decide_receive(const halo_node_input *in, halo_node_links *L,
                                  int64_t message_cap) {
  halo_status st = HALO_SUCCESS;
  int *local = NULL;
  (void)message_cap; /* one piece per owner, whatever its size */
  HALO_TRY(HALO_ALLOC(local, L->n_in));
  HALO_TRY(halo_node_pair_links(in, L->in, L->n_in, local));
  for (int c = 0; c < L->n_in; c++) {
    halo_link *l = &L->in[c];
    int n_pieces = 0;
    for (int64_t e = 0; e < l->n; e++) n_pieces += e == 0 || l->owner[e] != l->owner[e - 1];
    HALO_TRY(halo_link_pieces_alloc(l, n_pieces));
    for (int64_t e = 0, k = 0; e < l->n; e++)
      if (e == 0 || l->owner[e] != l->owner[e - 1]) {
        if (k > 0 && l->owner[e] < l->owner[e - 1])
          HALO_FAIL(HALO_ERR_INTERNAL, "owners of the values from node %d are not ordered",
                    l->node);
        l->piece_start[k] = e;
        l->piece_receiver[k] = in->ranks[local[c]];
        k++;
      }
    l->piece_start[n_pieces] = l->n;
  }
cleanup:
  halo_free(local);
  return st;
}

static halo_status decide_send(const halo_node_input *in, halo_node_links *L) {
  for (int b = 0; b < L->n_out; b++) {
    halo_link *l = &L->out[b];
    for (int k = 0; k < l->n_pieces; k++) {
      const int64_t first = l->piece_start[k], last = l->piece_start[k + 1] - 1;
      if (l->owner[first] != l->owner[last] || halo_node_local_index(in, l->owner[first]) < 0)
        return HALO_ERROR(HALO_ERR_INTERNAL, "a 2-Step piece for node %d has several owners",
                          l->node);
      l->piece_sender[k] = l->owner[first];
    }
  }
  return HALO_SUCCESS;
}

const halo_strategy_desc halo_strategy_desc_2step = {
    .name = "2step",
    .strategy = HALO_STRATEGY_2STEP,
    .n_phases = 2,
    .phase_direct = 0,
    .phase_gather = -1,
    .phase_global = 0,
    .phase_redistribute = 1,
    .decide_receive = decide_receive,
    .decide_send = decide_send,
};
