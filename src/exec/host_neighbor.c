/* Transport neighbor: each phase of a host plan is one persistent
 * neighborhood all-to-all (MPI-4's MPI_Neighbor_alltoallv_init, or Open MPI
 * 4.1's MPIX_ form) on a distributed-graph communicator of the phase's peers.
 *
 * Set-up. A phase's sources are the distinct ranks it receives from, its
 * destinations those it sends to (ranks of the phase's communicator, sorted,
 * itself left out: its messages to itself are copies). The send buffer holds
 * each destination's messages back to back, in send list order, destinations
 * in order; the receive buffer likewise by source. One persistent request per
 * phase is bound to the two buffers. MPI's counts and displacements are int:
 * a phase that sends or receives more than INT_MAX values in all (or, for a
 * test, more than max_message_count to one peer) is refused for this
 * transport (nbr_check, the descriptor's schedule_check, which AUTO asks
 * first).
 *
 * Graph communicators. Making one is collective over the phase's
 * communicator and freeing one is collective too, while plans are made
 * together but destroyed in any order: the communicator's context keeps them
 * (this transport's slot), shared by the plans with the same peers. The
 * lists are aligned: every rank appends an entry for each graph made, at
 * once, so entry i is one communicator (one per node for a node phase) on
 * every rank. A phase takes the first entry that matches its peers on every
 * rank of the plan (the same entry everywhere: two ranks on two entries would
 * wait on two communicators), else every rank makes a new one; one no plan
 * uses any more on every rank is freed at the next plan's set-up (collect)
 * or with the context.
 *
 * Exchange. begin() packs phase 0, makes its copies and starts its request;
 * end() completes each phase, unpacks it (forward: into the ghosts or the
 * work buffer; reverse: adds in the order of the receive list, as the host
 * transport does, so the sums are the same bits), and packs and starts the
 * next. Nothing is allocated per exchange.
 *
 * Units. The buffers hold entries of up to cfg.unit_max bytes (halo_host_words
 * doubles an entry), made once; counts and displacements are in entries, of
 * a datatype of one entry (MPI_DOUBLE for 8 bytes: the one-double road). A
 * persistent request is bound to its datatype: the first exchange of a unit
 * of another size than the last makes every phase's request again (as the
 * host transport makes its requests again), collectively over each phase's
 * graph, which every rank of it reaches at the same exchange (every rank
 * gives the same unit). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "exec/host_common.h"
#include "exec/transport.h"

#if HALO_HAVE_MPIX_NEIGHBOR
#include <mpi-ext.h>
#define HALO_NEIGHBOR_INIT MPIX_Neighbor_alltoallv_init
#elif HALO_HAVE_NEIGHBOR
#define HALO_NEIGHBOR_INIT MPI_Neighbor_alltoallv_init
#endif

/* ---- the graph communicators of a context ------------------------------- */

typedef struct {
  MPI_Comm parent, graph;
  int n_src, n_dst;
  int *peers; /* sources, then destinations (ranks of parent) */
  int refs;   /* executors of this rank using it */
  int64_t id; /* for the executors (entries move when idle ones are freed) */
} nbr_graph;

typedef struct {
  int n, cap;
  int64_t next_id;
  nbr_graph *g;
} nbr_graphs;

/* The entry of graph id, or NULL. */
static nbr_graph *graph_of(nbr_graphs *G, int64_t id) {
  for (int i = 0; G && i < G->n; i++)
    if (G->g[i].id == id) return &G->g[i];
  return NULL;
}

static void graph_free(nbr_graph *g) {
  if (g->graph != MPI_COMM_NULL) MPI_Comm_free(&g->graph);
  halo_free(g->peers);
  g->peers = NULL;
}

static halo_status nbr_collect(void *state, MPI_Comm comm) {
  nbr_graphs *G = state;
  halo_status st = HALO_SUCCESS;
  unsigned char *idle = NULL;
  if (!G || G->n == 0) return HALO_SUCCESS; /* the same n on every rank: the lists are aligned */
  HALO_TRY(halo_agree(comm, HALO_ALLOC(idle, G->n)));
  for (int i = 0; i < G->n; i++) idle[i] = G->g[i].refs == 0;
  HALO_TRY_MPI(MPI_Allreduce(MPI_IN_PLACE, idle, G->n, MPI_UNSIGNED_CHAR, MPI_MIN, comm));
  int m = 0;
  for (int i = 0; i < G->n; i++) { /* in the order they were made, on every rank */
    if (idle[i])
      graph_free(&G->g[i]);
    else
      G->g[m++] = G->g[i];
  }
  G->n = m;
cleanup:
  halo_free(idle);
  return st;
}

static void nbr_free(void **state_p) {
  nbr_graphs *G = *state_p;
  if (!G) return;
  for (int i = 0; i < G->n; i++) graph_free(&G->g[i]); /* every plan is gone: collective */
  halo_free(G->g);
  halo_free(G);
  *state_p = NULL;
}

static int nbr_count(const void *state) {
  const nbr_graphs *G = state;
  return G ? G->n : 0;
}

/* Which kept graphs are on parent with these peers (match[i] 1 or 0). */
static void graph_match(const nbr_graphs *G, MPI_Comm parent, const int *peers, int n_src,
                        int n_dst, unsigned char *match) {
  for (int i = 0; i < G->n; i++) {
    const nbr_graph *g = &G->g[i];
    match[i] = g->graph != MPI_COMM_NULL && g->parent == parent && g->n_src == n_src &&
               g->n_dst == n_dst &&
               (n_src + n_dst == 0 ||
                memcmp(g->peers, peers, (size_t)(n_src + n_dst) * sizeof *peers) == 0);
  }
}

/* ---- the executor --------------------------------------------------------- */

typedef struct {
  int n_src, n_dst;    /* distinct peers */
  int *peers;          /* the graph's: sources, then destinations (ranks of the phase's comm) */
  int *counts;         /* send counts (n_dst), send displs, recv counts (n_src), recv displs */
  int graph;           /* set-up: its entry in the context's graphs (-1: none) */
  int64_t graph_id;    /* the entry's id (-1: none) */
  halo_host_pack pack; /* the send buffer, by destination */
  double *sendbuf, *recvbuf;
  int64_t n_send, n_recv;
  int64_t *unpack; /* forward: the destination of each received value */
  int64_t n_copy;  /* forward: values copied to itself */
  int64_t *copy_src, *copy_dst;
  halo_host_adds adds; /* reverse */
  MPI_Request req;
  int active; /* started, not completed */
} nbr_phase;

typedef struct {
  nbr_phase ph[HALO_MAX_PHASES];
  nbr_graphs *graphs; /* the context's */
  double *work;
  const double *x;   /* the exchange in flight: its source */
  double *dst;       /* forward: the caller's ghost slots (NULL: own); reverse: x_local */
  double *to;        /* forward: where the ghosts land */
  double *addbuf;    /* forward add of a unit: where the ghosts land (made at the first) */
  MPI_Datatype dt;   /* one entry of req_bytes bytes, the requests' (MPI_DOUBLE: 8) */
  int64_t req_bytes; /* 0: some phase has no request */
} nbr_data;

/* A message of a phase's list, for grouping by peer. */
typedef struct {
  int peer, index;
} nbr_item;

static int cmp_item(const void *a, const void *b) {
  const nbr_item *x = a, *y = b;
  if (x->peer != y->peer) return (x->peer > y->peer) - (x->peer < y->peer);
  return (x->index > y->index) - (x->index < y->index);
}

/* The messages of a list to other ranks, grouped by peer (ranks of the
 * phase's communicator, ascending), each peer's in list order: *n_p items;
 * the distinct peers into peers, *n_peers_p of them. */
static void group(const halo_schedule *s, const halo_msg *m, const int *peer, int n,
                  nbr_item *items, int *n_p, int *peers, int *n_peers_p) {
  int k = 0, d = 0;
  for (int i = 0; i < n; i++)
    if (m[i].peer != s->rank) items[k++] = (nbr_item){peer[i], i};
  if (k > 1) qsort(items, (size_t)k, sizeof *items, cmp_item);
  for (int i = 0; i < k; i++)
    if (i == 0 || items[i].peer != items[i - 1].peer) peers[d++] = items[i].peer;
  *n_p = k;
  *n_peers_p = d;
}

static halo_status nbr_check(const halo_schedule *s, int64_t max_count) {
  if (max_count <= 0 || max_count > INT_MAX) max_count = INT_MAX;
  for (int k = 0; k < s->n_phases; k++) {
    const halo_phase *ph = &s->phase[k];
    for (int dir = 0; dir < 2; dir++) {
      const halo_msg *m = dir ? ph->recv : ph->send;
      const int n = dir ? ph->n_recv : ph->n_send;
      int64_t total = 0;
      for (int i = 0; i < n; i++) {
        if (m[i].peer == s->rank) continue;
        int first = 1; /* the peer's messages, summed once at its first */
        for (int j = 0; j < i && first; j++) first = m[j].peer != m[i].peer;
        total += m[i].count;
        if (!first) continue;
        int64_t to_peer = 0;
        for (int j = i; j < n; j++)
          if (m[j].peer == m[i].peer) to_peer += m[j].count;
        if (to_peer > max_count)
          return HALO_ERROR(HALO_ERR_UNSUPPORTED,
                            "transport neighbor: phase %d %s %lld values %s rank %d, past the "
                            "%lld of one count of MPI_Neighbor_alltoallv (an int): use host",
                            k, dir ? "receives" : "sends", (long long)to_peer, dir ? "from" : "to",
                            m[i].peer, (long long)max_count);
      }
      if (total > INT_MAX)
        return HALO_ERROR(HALO_ERR_UNSUPPORTED,
                          "transport neighbor: phase %d %s %lld values in all, past INT_MAX (the "
                          "displacements of MPI_Neighbor_alltoallv are int): use host",
                          k, dir ? "receives" : "sends", (long long)total);
    }
  }
  return HALO_SUCCESS;
}

static void nbr_destroy(halo_exec *ex) {
  nbr_data *d = ex->data;
  if (!d) return;
  for (int k = 0; k < HALO_MAX_PHASES; k++) {
    nbr_phase *p = &d->ph[k];
    if (p->req != MPI_REQUEST_NULL) {
      int done = !p->active;
      /* an active persistent collective may not be freed: one that a failed exchange left
       * behind is left to MPI */
      if (!done) (void)MPI_Test(&p->req, &done, MPI_STATUS_IGNORE);
      if (done) MPI_Request_free(&p->req);
    }
    nbr_graph *g = graph_of(d->graphs, p->graph_id);
    if (g) g->refs--; /* freed once no rank uses it (nbr_collect) */
    halo_free(p->peers);
    halo_free(p->counts);
    halo_host_pack_free(&p->pack);
    halo_free(p->sendbuf);
    halo_free(p->recvbuf);
    halo_free(p->unpack);
    halo_free(p->copy_src);
    halo_free(p->copy_dst);
    halo_host_adds_free(&p->adds);
  }
  halo_free(d->work);
  halo_free(d->addbuf);
  halo_host_entry_type_free(&d->dt);
  halo_host_slots_free(ex);
  halo_free(d);
  ex->data = NULL;
}

/* Phase k's peers, buffers, maps and counts on this rank (no MPI); items:
 * room for its sends and receives. */
static halo_status phase_layout(halo_exec *ex, int k, nbr_item *items) {
  halo_status st = HALO_SUCCESS;
  const halo_schedule *s = ex->sched;
  const halo_phase *ph = &s->phase[k];
  nbr_phase *p = &((nbr_data *)ex->data)->ph[k];
  nbr_item *send_items = items, *recv_items = items + ph->n_send;
  int n_send_items = 0, n_recv_items = 0;
  int64_t *recv_off = NULL;
  HALO_TRY(HALO_ALLOC(p->peers, (int64_t)ph->n_send + ph->n_recv + 1));
  group(s, ph->recv, ex->peer_recv[k], ph->n_recv, recv_items, &n_recv_items, p->peers, &p->n_src);
  group(s, ph->send, ex->peer_send[k], ph->n_send, send_items, &n_send_items, p->peers + p->n_src,
        &p->n_dst);
  HALO_TRY(HALO_CALLOC(p->counts, 2 * (int64_t)(p->n_dst + p->n_src) + 1));
  int *scount = p->counts, *sdispl = scount + p->n_dst, *rcount = sdispl + p->n_dst,
      *rdispl = rcount + p->n_src;
  for (int i = 0; i < ph->n_send; i++)
    if (ph->send[i].peer != s->rank)
      p->n_send += ph->send[i].count;
    else if (!s->add)
      p->n_copy += ph->send[i].count;
  for (int i = 0; i < ph->n_recv; i++)
    if (ph->recv[i].peer != s->rank) p->n_recv += ph->recv[i].count;
  p->pack.n = p->n_send;
  HALO_TRY(HALO_ALLOC(p->pack.src, p->n_send));
  HALO_TRY(HALO_ALLOC(p->sendbuf, p->n_send * halo_host_words(ex)));
  HALO_TRY(HALO_ALLOC(p->recvbuf, p->n_recv * halo_host_words(ex)));
  HALO_TRY(HALO_ALLOC(p->copy_src, p->n_copy));
  HALO_TRY(HALO_ALLOC(p->copy_dst, p->n_copy));
  /* sends, by destination (nbr_check: the counts and displacements fit an int) */
  int64_t off = 0;
  for (int t = 0, j = -1; t < n_send_items; t++) {
    const halo_msg *m = &ph->send[send_items[t].index];
    if (t == 0 || send_items[t].peer != send_items[t - 1].peer) sdispl[++j] = (int)off;
    scount[j] += (int)m->count;
    memcpy(p->pack.src + off, ph->pack + m->offset, (size_t)m->count * sizeof *p->pack.src);
    off += m->count;
  }
  HALO_TRY(halo_host_pack_setup(s, &p->pack));
  if (!s->add) { /* copies to itself, in send and receive list order alike */
    int64_t a = 0, b = 0;
    for (int i = 0; i < ph->n_send; i++)
      if (ph->send[i].peer == s->rank) {
        memcpy(p->copy_src + a, ph->pack + ph->send[i].offset,
               (size_t)ph->send[i].count * sizeof *p->copy_src);
        a += ph->send[i].count;
      }
    for (int i = 0; i < ph->n_recv; i++)
      if (ph->recv[i].peer == s->rank) {
        memcpy(p->copy_dst + b, ph->unpack + ph->recv[i].offset,
               (size_t)ph->recv[i].count * sizeof *p->copy_dst);
        b += ph->recv[i].count;
      }
  }
  /* receives, by source: where each message of the receive list lands */
  HALO_TRY(HALO_ALLOC(recv_off, ph->n_recv));
  off = 0;
  for (int t = 0, j = -1; t < n_recv_items; t++) {
    const halo_msg *m = &ph->recv[recv_items[t].index];
    if (t == 0 || recv_items[t].peer != recv_items[t - 1].peer) rdispl[++j] = (int)off;
    rcount[j] += (int)m->count;
    recv_off[recv_items[t].index] = off;
    off += m->count;
  }
  if (s->add) {
    HALO_TRY(halo_host_adds_setup(s, ph, recv_off, &p->adds));
  } else {
    HALO_TRY(HALO_ALLOC(p->unpack, p->n_recv));
    for (int i = 0; i < ph->n_recv; i++)
      if (ph->recv[i].peer != s->rank)
        memcpy(p->unpack + recv_off[i], ph->unpack + ph->recv[i].offset,
               (size_t)ph->recv[i].count * sizeof *p->unpack);
  }
cleanup:
  halo_free(recv_off);
  return st;
}

#if HALO_HAVE_NEIGHBOR
/* Phase k's persistent all-to-all on its graph, for entries of d->dt. */
static halo_status phase_request(nbr_data *d, int k) {
  nbr_phase *p = &d->ph[k];
  const nbr_graph *g = graph_of(d->graphs, p->graph_id);
  int *scount = p->counts, *sdispl = scount + p->n_dst, *rcount = sdispl + p->n_dst,
      *rdispl = rcount + p->n_src;
  if (!g) return HALO_ERROR(HALO_ERR_INTERNAL, "transport neighbor: phase %d has no graph", k);
  HALO_MPI(HALO_NEIGHBOR_INIT(p->sendbuf, scount, sdispl, d->dt, p->recvbuf, rcount, rdispl, d->dt,
                              g->graph, MPI_INFO_NULL, &p->req));
  return HALO_SUCCESS;
}

/* Every phase's request made again for entries of b bytes (inactive: the
 * last exchange ended), in phase order on every rank. */
static halo_status nbr_resize(halo_exec *ex, nbr_data *d, int64_t b) {
  d->req_bytes = 0; /* no requests until they are all made */
  for (int k = 0; k < ex->sched->n_phases; k++)
    if (d->ph[k].req != MPI_REQUEST_NULL) HALO_MPI(MPI_Request_free(&d->ph[k].req));
  HALO_CHECK(halo_host_entry_type(b, &d->dt));
  for (int k = 0; k < ex->sched->n_phases; k++) HALO_CHECK(phase_request(d, k));
  d->req_bytes = b;
  return HALO_SUCCESS;
}

/* Phase k's graph: a kept one (every rank of the plan has one: hit), else a
 * new one, made by every rank of the phase's communicator at once and kept;
 * then its persistent request. Collective over the plan's communicator (an
 * entry is appended on every rank, made or not, so the lists stay aligned). */
static halo_status phase_graph(halo_exec *ex, int k, int hit) {
  nbr_data *d = ex->data;
  nbr_phase *p = &d->ph[k];
  nbr_graphs *G = d->graphs;
  if (!hit) {
    const int *src = p->peers, *dst = p->peers + p->n_src;
    nbr_graph *g = &G->g[G->n++]; /* room reserved before */
    *g = (nbr_graph){ex->phase_comm[k], MPI_COMM_NULL, p->n_src, p->n_dst, NULL, 1, G->next_id++};
    g->peers = p->peers; /* the entry keeps the list */
    p->peers = NULL;
    p->graph = G->n - 1;
    p->graph_id = g->id;
/* MPI_UNWEIGHTED is a marker address, which GCC takes for an array of no
 * entries read by a parameter declared as an array */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overread"
#endif
    HALO_MPI(MPI_Dist_graph_create_adjacent(ex->phase_comm[k], g->n_src, src, MPI_UNWEIGHTED,
                                            g->n_dst, dst, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                            &g->graph));
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
  } else {
    G->g[p->graph].refs++;
    p->graph_id = G->g[p->graph].id;
  }
  return phase_request(d, k);
}
#else
static halo_status nbr_resize(halo_exec *ex, nbr_data *d, int64_t b) {
  (void)ex, (void)d, (void)b;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, "transport neighbor: not compiled in");
}
#endif

static halo_status nbr_setup(halo_exec *ex) {
#if HALO_HAVE_NEIGHBOR
  halo_status st = HALO_SUCCESS;
  const halo_schedule *s = ex->sched;
  nbr_item *items = NULL;
  unsigned char *match = NULL; /* per phase, per kept graph: it matches on every rank */
  int agree[2];
  nbr_data *d = halo_calloc(1, sizeof *d);
  if (!d) st = HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "out of memory creating the neighbor executor");
  ex->data = d;
  for (int k = 0; d && k < HALO_MAX_PHASES; k++)
    d->ph[k].graph = -1, d->ph[k].graph_id = -1, d->ph[k].req = MPI_REQUEST_NULL;
  if (d) d->dt = MPI_DOUBLE, d->req_bytes = 8;
  /* this rank's part, without MPI, agreed before anything collective */
  if (st == HALO_SUCCESS) st = nbr_check(s, ex->cfg.max_count);
  if (st == HALO_SUCCESS) st = halo_host_slots_setup(ex);
  if (st == HALO_SUCCESS) st = HALO_CALLOC(d->work, s->n_work * halo_host_words(ex));
  if (st == HALO_SUCCESS && !*ex->cfg.state &&
      !(*ex->cfg.state = halo_calloc(1, sizeof(nbr_graphs))))
    st = HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "out of memory keeping the neighbor graphs");
  if (st == HALO_SUCCESS) {
    nbr_graphs *G = d->graphs = *ex->cfg.state;
    if (G->n + s->n_phases > G->cap) { /* room for a new graph per phase */
      const int cap = G->n + s->n_phases + 8;
      nbr_graph *g = halo_realloc(G->g, (size_t)cap * sizeof *g);
      if (g)
        G->g = g, G->cap = cap;
      else
        st = HALO_ERROR(HALO_ERR_OUT_OF_MEMORY, "out of memory keeping the neighbor graphs");
    }
  }
  int most = 1;
  for (int k = 0; k < s->n_phases; k++)
    if (s->phase[k].n_send + s->phase[k].n_recv > most)
      most = s->phase[k].n_send + s->phase[k].n_recv;
  if (st == HALO_SUCCESS) st = HALO_ALLOC(items, most);
  const int n_kept = d && d->graphs ? d->graphs->n : 0; /* the same on every rank */
  if (st == HALO_SUCCESS) st = HALO_ALLOC(match, (int64_t)s->n_phases * n_kept + 1);
  for (int k = 0; k < s->n_phases && st == HALO_SUCCESS; k++) {
    nbr_phase *p = &d->ph[k];
    st = phase_layout(ex, k, items);
    if (st == HALO_SUCCESS)
      graph_match(d->graphs, ex->phase_comm[k], p->peers, p->n_src, p->n_dst,
                  match + (int64_t)k * n_kept);
  }
  HALO_TRY(halo_agree(ex->cfg.comm, st));
  agree[0] = s->n_phases, agree[1] = -s->n_phases;
  HALO_TRY_MPI(MPI_Allreduce(MPI_IN_PLACE, agree, 2, MPI_INT, MPI_MIN, ex->cfg.comm));
  if (agree[0] != -agree[1])
    HALO_FAIL(HALO_ERR_INTERNAL, "transport neighbor: the ranks' schedules have %d to %d phases",
              agree[0], -agree[1]);
  if (s->n_phases * n_kept > 0)
    HALO_TRY_MPI(MPI_Allreduce(MPI_IN_PLACE, match, s->n_phases * n_kept, MPI_UNSIGNED_CHAR,
                               MPI_MIN, ex->cfg.comm));
  for (int k = 0; k < s->n_phases; k++) { /* the first entry every rank matches, else new */
    int i = 0;
    while (i < n_kept && !match[(int64_t)k * n_kept + i]) i++;
    d->ph[k].graph = i < n_kept ? i : -1;
    st = phase_graph(ex, k, i < n_kept);
    HALO_TRY(halo_agree(ex->cfg.comm, st));
  }
cleanup:
  halo_free(items);
  halo_free(match);
  if (st != HALO_SUCCESS) nbr_destroy(ex);
  return st;
#else
  (void)ex;
  return HALO_ERROR(HALO_ERR_NOT_COMPILED, "transport neighbor: not compiled in: rebuild with an "
                                           "MPI that has MPI_Neighbor_alltoallv_init");
#endif
}

/* Pack phase k, make its copies (forward), start its all-to-all. */
static halo_status phase_start(halo_exec *ex, nbr_data *d, int k) {
  nbr_phase *p = &d->ph[k];
  halo_host_send(ex, &p->pack, p->sendbuf, p->n_copy, p->copy_src, p->copy_dst, d->x, d->to,
                 d->work);
  HALO_MPI(MPI_Start(&p->req));
  p->active = 1;
  return HALO_SUCCESS;
}

static halo_status nbr_begin(halo_exec *ex, const double *src, double *dst) {
  const halo_schedule *s = ex->sched;
  nbr_data *d = ex->data;
  if (ex->unit.bytes != d->req_bytes) HALO_CHECK(nbr_resize(ex, d, ex->unit.bytes));
  d->dst = dst;
  HALO_CHECK(halo_host_start(ex, src, dst, d->work, &d->addbuf, &d->x, &d->to));
  return s->n_phases ? phase_start(ex, d, 0) : HALO_SUCCESS;
}

static halo_status nbr_end(halo_exec *ex) {
  const halo_schedule *s = ex->sched;
  nbr_data *d = ex->data;
  double *to = s->add ? d->dst : d->to;
  for (int k = 0; k < s->n_phases; k++) {
    nbr_phase *p = &d->ph[k];
    if (k > 0) HALO_CHECK(phase_start(ex, d, k));
    HALO_CHECK(halo_exec_waitall(ex, 1, &p->req));
    p->active = 0;
    halo_host_receive(ex, &p->adds, p->n_recv, p->unpack, p->recvbuf, d->x, to, d->work);
  }
  halo_host_finish(ex, d->to, d->dst); /* forward: into the ghost slots */
  d->x = NULL;
  d->dst = d->to = NULL;
  return HALO_SUCCESS;
}

static const halo_exec_ops halo_exec_neighbor_ops = {
    .name = "neighbor",
    .units = 1,
    .setup = nbr_setup,
    .begin = nbr_begin,
    .end = nbr_end,
    .destroy = nbr_destroy,
};

const halo_transport_desc halo_transport_desc_neighbor = {
    .name = "neighbor",
    .id = HALO_TRANSPORT_NEIGHBOR,
    .memory = HALO_TMEM_HOST,
    .summary = "one persistent neighborhood all-to-all per phase on a graph of its peers",
    .compiled = HALO_HAVE_NEIGHBOR,
    .build_hint = "an MPI that has MPI_Neighbor_alltoallv_init (MPI-4) or Open MPI's "
                  "MPIX_Neighbor_alltoallv_init",
    .auto_policy = HALO_AUTO_PRICED,
    .model = {.channel = HALO_CHANNEL_CPU, .own_params = 1},
    .host_ops = &halo_exec_neighbor_ops,
    .collect = nbr_collect,
    .release = nbr_free,
    .state_count = nbr_count,
    .schedule_check = nbr_check,
};
