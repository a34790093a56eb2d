/* Split (the node-aware paper's Algorithm 1): the receiving node chooses
 * message_cap from its inter-node volume and splits every incoming link into
 * messages of at most message_cap bytes; receives are dealt to its ranks in
 * decreasing size from local rank 0, sends to the sending node's ranks in
 * decreasing size from local rank PPN-1 down. Ranks without rows take part
 * like any other: they are the node's communication helpers. Phases as
 * 3-Step: node (gather to the senders, and the on-node messages, direct),
 * global (pieces), node (redistribution). */
#include "plan/strategy.h"

static halo_status decide_receive(const halo_node_input *in, halo_node_links *L, int64_t cap) {
  halo_status st = HALO_SUCCESS;
  int64_t *size = NULL;
  int *local = NULL;
  const int64_t vbytes = (int64_t)sizeof(double);
  int64_t total = 0, largest = 0;
  for (int c = 0; c < L->n_in; c++) {
    total += L->in[c].n * vbytes;
    if (L->in[c].n * vbytes > largest) largest = L->in[c].n * vbytes;
  }
  /* lines 12-17: one message per node below the cap; otherwise never more
   * messages than ranks on the node (total / cap > PPN raises the cap) */
  int one_each = largest < cap;
  if (!one_each && total / cap > in->n_ranks) cap = (total + in->n_ranks - 1) / in->n_ranks;
  L->message_cap_used = L->n_in ? cap : 0;
  const int64_t per = cap / vbytes > 0 ? cap / vbytes : 1; /* values per message */
  int n_pieces = 0;
  for (int c = 0; c < L->n_in; c++) {
    halo_link *l = &L->in[c];
    int64_t k = one_each ? 1 : (l->n + per - 1) / per;
    if (k > INT32_MAX / 2)
      HALO_FAIL(HALO_ERR_OUT_OF_RANGE, "%lld messages from one node", (long long)k);
    HALO_TRY(halo_link_pieces_alloc(l, (int)k));
    for (int j = 0; j < l->n_pieces; j++) l->piece_start[j] = one_each ? 0 : j * per;
    l->piece_start[l->n_pieces] = l->n;
    n_pieces += l->n_pieces;
  }
  /* line 18: receives in decreasing size from local rank 0 */
  HALO_TRY(HALO_ALLOC(size, n_pieces));
  HALO_TRY(HALO_ALLOC(local, n_pieces));
  for (int c = 0, t = 0; c < L->n_in; c++)
    for (int j = 0; j < L->in[c].n_pieces; j++, t++)
      size[t] = L->in[c].piece_start[j + 1] - L->in[c].piece_start[j];
  HALO_TRY(halo_node_deal_round_robin(n_pieces, size, in->n_ranks, 0, 1, local));
  for (int c = 0, t = 0; c < L->n_in; c++)
    for (int j = 0; j < L->in[c].n_pieces; j++, t++)
      L->in[c].piece_receiver[j] = in->ranks[local[t]];
cleanup:
  halo_free(local);
  halo_free(size);
  return st;
}

static halo_status decide_send(const halo_node_input *in, halo_node_links *L) {
  halo_status st = HALO_SUCCESS;
  int64_t *size = NULL;
  int *local = NULL;
  int n_pieces = 0;
  for (int b = 0; b < L->n_out; b++) n_pieces += L->out[b].n_pieces;
  HALO_TRY(HALO_ALLOC(size, n_pieces));
  HALO_TRY(HALO_ALLOC(local, n_pieces));
  for (int b = 0, t = 0; b < L->n_out; b++)
    for (int j = 0; j < L->out[b].n_pieces; j++, t++)
      size[t] = L->out[b].piece_start[j + 1] - L->out[b].piece_start[j];
  /* line 18: sends in decreasing size from local rank PPN-1 down */
  HALO_TRY(halo_node_deal_round_robin(n_pieces, size, in->n_ranks, in->n_ranks - 1, -1, local));
  for (int b = 0, t = 0; b < L->n_out; b++)
    for (int j = 0; j < L->out[b].n_pieces; j++, t++)
      L->out[b].piece_sender[j] = in->ranks[local[t]];
cleanup:
  halo_free(local);
  halo_free(size);
  return st;
}

const halo_strategy_desc halo_strategy_desc_split = {
    .name = "split",
    .strategy = HALO_STRATEGY_SPLIT,
    .n_phases = 3,
    .phase_direct = 0,
    .phase_gather = 0,
    .phase_global = 1,
    .phase_redistribute = 2,
    .decide_receive = decide_receive,
    .decide_send = decide_send,
};
