/* The schedules of all ranks checked against each other at plan time, and
 * their statistics. */
#include <stdlib.h>
#include <string.h>

#include "plan/handshake.h"
#include "tags.h"

/* Every receiver tells each of its senders, per message, the phase, its
 * node, the count it expects and the message's ordinal among those between
 * the two ranks, with a sparse data exchange (NBX), so that a sender whose
 * schedule disagrees with its peer's finds out instead of waiting. The sender
 * checks every message (and that a node phase stays on one node) and learns
 * the node of each of its peers. Collective. */
typedef struct {
  int64_t phase, source, ordinal, node, count;
} hs_record;

static int cmp_hs(const void *a, const void *b) {
  const hs_record *x = a, *y = b;
  if (x->phase != y->phase) return (x->phase > y->phase) - (x->phase < y->phase);
  if (x->source != y->source) return (x->source > y->source) - (x->source < y->source);
  return (x->ordinal > y->ordinal) - (x->ordinal < y->ordinal);
}

halo_status halo_schedule_handshake(MPI_Comm comm, const halo_topology *t, const halo_schedule *s,
                                    int *node_of_send[HALO_MAX_PHASES]) {
  halo_status st = HALO_SUCCESS;
  int n_out = 0, n_in = 0, cap_in = 0;
  hs_record *out = NULL, *in = NULL;
  MPI_Request *req = NULL, barrier = MPI_REQUEST_NULL;
  for (int k = 0; k < s->n_phases; k++) n_out += s->phase[k].n_recv;
  st = HALO_ALLOC(out, n_out);
  if (st == HALO_SUCCESS) st = HALO_ALLOC(req, n_out);
  HALO_TRY(halo_agree(comm, st)); /* before the NBX, where the others would wait */
  n_out = 0;
  for (int k = 0; k < s->n_phases; k++) {
    const halo_phase *ph = &s->phase[k];
    for (int i = 0; i < ph->n_recv; i++) {
      if (ph->recv[i].peer == s->rank) continue;
      int ord = 0; /* position among the receives from the same peer */
      for (int j = 0; j < i; j++) ord += ph->recv[j].peer == ph->recv[i].peer;
      out[n_out] = (hs_record){k, s->rank, ord, t->node_id, ph->recv[i].count};
      HALO_TRY_MPI(MPI_Issend(&out[n_out], 5, MPI_INT64_T, ph->recv[i].peer, HALO_TAG_HANDSHAKE,
                              comm, &req[n_out]));
      n_out++;
    }
  }
  halo_status kept = HALO_SUCCESS;
  for (int done = 0, in_barrier = 0; !done;) {
    int flag = 0;
    MPI_Status status;
    HALO_TRY_MPI(MPI_Iprobe(MPI_ANY_SOURCE, HALO_TAG_HANDSHAKE, comm, &flag, &status));
    if (flag) {
      if (n_in == cap_in && kept == HALO_SUCCESS) {
        int cap = cap_in ? 2 * cap_in : 16;
        hs_record *q = halo_realloc(in, (size_t)cap * sizeof *in);
        if (q) {
          in = q;
          cap_in = cap;
        } else {
          kept = HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "out of memory checking the schedule");
        }
      }
      if (kept != HALO_SUCCESS) { /* received and dropped; the NBX goes on to its end */
        int64_t rec[5];
        HALO_TRY_MPI(MPI_Recv(rec, 5, MPI_INT64_T, status.MPI_SOURCE, HALO_TAG_HANDSHAKE, comm,
                              MPI_STATUS_IGNORE));
        continue;
      }
      HALO_TRY_MPI(MPI_Recv(&in[n_in++], 5, MPI_INT64_T, status.MPI_SOURCE, HALO_TAG_HANDSHAKE,
                            comm, MPI_STATUS_IGNORE));
    }
    if (!in_barrier) {
      int all = 0;
      HALO_TRY_MPI(MPI_Testall(n_out, req, &all, MPI_STATUSES_IGNORE));
      if (all) {
        HALO_TRY_MPI(MPI_Ibarrier(comm, &barrier));
        in_barrier = 1;
      }
    } else {
      HALO_TRY_MPI(MPI_Test(&barrier, &done, MPI_STATUS_IGNORE));
    }
  }
  HALO_TRY(halo_agree(comm, kept));
  if (n_in > 1) qsort(in, (size_t)n_in, sizeof *in, cmp_hs);
  int matched = 0;
  for (int k = 0; k < s->n_phases && st == HALO_SUCCESS; k++) {
    const halo_phase *ph = &s->phase[k];
    HALO_TRY(HALO_ALLOC(node_of_send[k], ph->n_send));
    for (int i = 0; i < ph->n_send && st == HALO_SUCCESS; i++) {
      const halo_msg *m = &ph->send[i];
      if (m->peer == s->rank) {
        node_of_send[k][i] = t->node_id;
        continue;
      }
      int ord = 0;
      for (int j = 0; j < i; j++) ord += ph->send[j].peer == m->peer;
      hs_record key = {k, m->peer, ord, 0, 0};
      hs_record *r = n_in ? bsearch(&key, in, (size_t)n_in, sizeof *in, cmp_hs) : NULL;
      if (!r)
        st = HALO_ERROR(HALO_ERR_INTERNAL,
                        "phase %d: this rank sends %lld values to rank %d, which expects no such "
                        "message",
                        k, (long long)m->count, m->peer);
      else if (r->count != m->count)
        st = HALO_ERROR(HALO_ERR_INTERNAL,
                        "phase %d: this rank sends %lld values to rank %d, which expects %lld", k,
                        (long long)m->count, m->peer, (long long)r->count);
      else if (ph->scope == HALO_SCOPE_NODE && r->node != t->node_id)
        st = HALO_ERROR(HALO_ERR_INTERNAL, "phase %d is node-local but rank %d is on another node",
                        k, m->peer);
      else {
        node_of_send[k][i] = (int)r->node;
        matched++;
      }
    }
  }
  if (st == HALO_SUCCESS && matched != n_in)
    st = HALO_ERROR(HALO_ERR_INTERNAL,
                    "%d messages expected from this rank are not in its schedule", n_in - matched);
cleanup:
  halo_free(in);
  halo_free(req);
  halo_free(out);
  return st;
}

halo_status halo_schedule_stats(MPI_Comm comm, const halo_topology *topo, const halo_schedule *s,
                                int *node_of_send[HALO_MAX_PHASES], halo_stats_full *full) {
  enum { NSUM = 4, NMAX = 5 };
  const int np = s->n_phases;
  int64_t sum_in[NSUM * HALO_MAX_PHASES + 1] = {0}, sum_out[NSUM * HALO_MAX_PHASES + 1] = {0};
  int64_t node_in[2 * HALO_MAX_PHASES] = {0}, node_out[2 * HALO_MAX_PHASES] = {0};
  int64_t max_in[NMAX * HALO_MAX_PHASES + 1] = {0}, max_out[NMAX * HALO_MAX_PHASES + 1] = {0};
  for (int k = 0; k < np; k++) {
    halo_phase_counts c;
    halo_phase_count(&s->phase[k], s->rank, topo->node_id, node_of_send[k], &c);
    sum_in[NSUM * k + 0] = c.messages;
    sum_in[NSUM * k + 1] = c.bytes;
    sum_in[NSUM * k + 2] = c.inter_node_messages;
    sum_in[NSUM * k + 3] = c.inter_node_bytes;
    node_in[2 * k + 0] = c.inter_node_messages;
    node_in[2 * k + 1] = c.inter_node_bytes;
    max_in[NMAX * k + 0] = c.messages;
    max_in[NMAX * k + 1] = c.bytes;
    max_in[NMAX * k + 4] = c.max_message_bytes;
  }
  sum_in[NSUM * np] = s->n_ghost;
  max_in[NMAX * np] = s->message_cap_used;
  HALO_MPI(MPI_Allreduce(node_in, node_out, 2 * np, MPI_INT64_T, MPI_SUM, topo->node_comm));
  for (int k = 0; k < np; k++) {
    max_in[NMAX * k + 2] = node_out[2 * k + 0];
    max_in[NMAX * k + 3] = node_out[2 * k + 1];
  }
  HALO_MPI(MPI_Allreduce(sum_in, sum_out, NSUM * np + 1, MPI_INT64_T, MPI_SUM, comm));
  HALO_MPI(MPI_Allreduce(max_in, max_out, NMAX * np + 1, MPI_INT64_T, MPI_MAX, comm));
  memset(full, 0, sizeof *full);
  halo_stats *t = &full->s;
  t->strategy = s->strategy;
  HALO_MPI(MPI_Comm_size(comm, &t->ranks));
  t->nodes = topo->n_nodes;
  t->ranks_per_node = topo->max_node_size;
  t->n_phases = np;
  t->message_cap_used = max_out[NMAX * np];
  t->ghosts = sum_out[NSUM * np];
  for (int k = 0; k < np; k++) {
    halo_phase_stats *f = &full->phase[k];
    f->scope = s->phase[k].scope;
    f->messages = sum_out[NSUM * k + 0];
    f->bytes = sum_out[NSUM * k + 1];
    f->inter_node_messages = sum_out[NSUM * k + 2];
    f->inter_node_bytes = sum_out[NSUM * k + 3];
    f->max_messages_per_rank = max_out[NMAX * k + 0];
    f->max_bytes_per_rank = max_out[NMAX * k + 1];
    f->max_inter_node_messages_per_node = max_out[NMAX * k + 2];
    f->max_inter_node_bytes_per_node = max_out[NMAX * k + 3];
    f->max_message_bytes = max_out[NMAX * k + 4];
  }
  return HALO_SUCCESS;
}
