/* 2-Step: every rank of node A sends what node B needs of it in one message
 * to the rank of B paired with A (pairing as in 3-Step), which redistributes
 * it on B. A piece is the part of a link one rank owns: owners are
 * contiguous in the canonical order. */
#include "plan/node.h"

halo_status halo_2step_receive(const halo_node_input *in, halo_node_links *L) {
  halo_status st = HALO_SUCCESS;
  int *local = NULL;
  HALO_TRY(HALO_ALLOC(local, L->n_in));
  HALO_TRY(halo_pair_sources(in, L, local));
  for (int c = 0; c < L->n_in; c++) {
    halo_link *l = &L->in[c];
    int n_pieces = 0;
    for (int64_t e = 0; e < l->n; e++) n_pieces += e == 0 || l->owner[e] != l->owner[e - 1];
    HALO_TRY(halo_link_alloc_pieces(l, n_pieces));
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

halo_status halo_2step_send(const halo_node_input *in, halo_node_links *L) {
  for (int b = 0; b < L->n_out; b++) {
    halo_link *l = &L->out[b];
    for (int k = 0; k < l->n_pieces; k++) {
      const int64_t first = l->piece_start[k], last = l->piece_start[k + 1] - 1;
      if (l->owner[first] != l->owner[last] || halo_node_local(in, l->owner[first]) < 0)
        return HALO_ERROR(HALO_ERR_INTERNAL, "a 2-Step piece for node %d has several owners",
                          l->node);
      l->piece_sender[k] = l->owner[first];
    }
  }
  return HALO_SUCCESS;
}
