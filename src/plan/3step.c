/* 3-Step: all data of node A for node B is gathered on the rank of A paired
 * with B, crosses the network in one message to the rank of B paired with
 * A, and is redistributed there. Pairing deals the other nodes to the ranks
 * of a node round-robin, in decreasing order of volume, from local rank 0. */
#include "plan/node.h"

/* Deal the links to local ranks by decreasing volume, from local rank 0. */
static halo_status pair_links(const halo_node_input *in, const halo_link *links, int n,
                              int *local) {
  halo_status st = HALO_SUCCESS;
  int64_t *size = NULL;
  HALO_TRY(HALO_ALLOC(size, n));
  for (int i = 0; i < n; i++) size[i] = links[i].n;
  HALO_TRY(halo_deal_round_robin(n, size, in->n_ranks, 0, 1, local));
cleanup:
  halo_free(size);
  return st;
}

halo_status halo_pair_sources(const halo_node_input *in, const halo_node_links *L, int *local) {
  return pair_links(in, L->in, L->n_in, local);
}

halo_status halo_3step_receive(const halo_node_input *in, halo_node_links *L) {
  halo_status st = HALO_SUCCESS;
  int *local = NULL;
  HALO_TRY(HALO_ALLOC(local, L->n_in));
  HALO_TRY(halo_pair_sources(in, L, local));
  for (int c = 0; c < L->n_in; c++) {
    halo_link *l = &L->in[c];
    HALO_TRY(halo_link_alloc_pieces(l, 1));
    l->piece_start[0] = 0;
    l->piece_start[1] = l->n;
    l->piece_receiver[0] = in->ranks[local[c]];
  }
cleanup:
  halo_free(local);
  return st;
}

halo_status halo_3step_send(const halo_node_input *in, halo_node_links *L) {
  halo_status st = HALO_SUCCESS;
  int *local = NULL;
  HALO_TRY(HALO_ALLOC(local, L->n_out));
  HALO_TRY(pair_links(in, L->out, L->n_out, local));
  for (int b = 0; b < L->n_out; b++)
    for (int k = 0; k < L->out[b].n_pieces; k++) L->out[b].piece_sender[k] = in->ranks[local[b]];
cleanup:
  halo_free(local);
  return st;
}
