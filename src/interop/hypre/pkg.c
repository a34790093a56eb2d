/* halo for hypre: the registry of hypre's communication packages and their
 * halo plans, and the exchanges through them.
 *
 * A package made by hypre_MatvecCommPkgCreate belongs to a matrix; its plan
 * is made at its exchange of values (job 1 or 2) number HALO_HYPRE_PLAN_AFTER
 * + 1 (the second by default; those before are hypre's), which every rank of
 * the package's communicator makes (hypre's products and smoothers exchange
 * on every rank), so that packages never used for values cost nothing and
 * those used once inside a set-up (its intermediate matrices) no plan; an AMG
 * hierarchy's packages get theirs at the end of its set-up.
 *
 * Several vectors at once. A product of a ParCSR matrix with a multivector
 * (a hypre_ParVector of k vectors) first makes the matrix's package one of k
 * components (hypre_ParCSRCommPkgUpdateVecStarts, hypre 2.26: num_components
 * = k, send_map_starts and recv_vec_starts multiplied by k in place,
 * send_map_elmts made anew), then packs entry i's k values together (vector
 * j of entry i at i*k + j of the send buffer) and receives the ghosts the
 * same way, interleaved (the ghosts' multivector is stored row-wise). Each
 * packed entry is one halo entry of unit {double, k}: the exchange runs on a
 * second plan of the package (per memory), made from the same lists with
 * exec.unit_max_bytes = 8 k at the package's first exchange of k > 1
 * vectors (made again, larger, for a larger k), so that the plan of one
 * vector keeps its buffers of 8 bytes an entry and a program that alternates
 * one and several vectors makes no MPI requests again at each switch
 * (hypre's development branch sets a package back to fewer vectors since
 * 2fe79606e, #1589; 2.26's products cannot: its starts become 0). Host memory, on a transport that
 * moves units (halo_plan_unit_check); elsewhere they are left to hypre.
 *
 * The decisions that send an exchange to halo or to hypre depend only on what
 * every rank sees alike (the job, the package, the plan's state, the
 * exchanges in flight on it), so that the ranks of one exchange always take
 * the same road: the two roads use different communicators (halo's plans
 * their own), so an exchange through one never matches a message of the
 * other. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hypre_impl.h"

/* ---- the registry ---------------------------------------------------------------- */

struct hh_pkg_s {
  hypre_ParCSRCommPkg *pkg;
  hh_pkg *next;             /* hash chain */
  const void *matrix;       /* the matrix it was made for */
  /* what the plan was made from, in entries (one vector): an exchange of a
   * package that no longer looks like this, for its number of vectors, is
   * left to hypre */
  HYPRE_Int num_sends, num_recvs, n_send, n_recv;
  const HYPRE_Int *send_map_starts, *recv_vec_starts;
  /* its plans, one per memory of hypre's buffers (HH_HOST, HH_DEVICE), each
   * made at the package's exchange plan_after + 1 in that memory */
  int state[2];             /* 0: no plan yet, 1: plan, -1: left to hypre */
  int uses[2];              /* exchanges of values in each memory before its plan */
  halo_plan plan[2];
  /* the plans of several vectors at once (units of k doubles), one per
   * memory, made at the first such exchange in that memory */
  int mstate[2];            /* 0: none yet, 1: mplan, -1: left to hypre */
  int mk[2];                /* the most vectors mplan[mem]'s buffers hold */
  halo_plan mplan[2];
  int busy;                 /* an exchange is in flight on inflight */
  halo_plan inflight;       /* ... plan[mem] or mplan[mem] */
  int mem;                  /* ... in that memory */
  int reverse;              /* ... in reverse */
  double t_start;           /* time spent starting it */
  hypre_ParCSRCommHandle handle; /* the handle halo's exchanges return */
  hypre_ParCSRCommHandle *hypre_handles[4]; /* hypre's exchanges in flight on it */
  int rec;                  /* its record (view.c), -1: none */
  hh_matvec_buffers mv;     /* halo_hypre_matvec(_t)'s, made at its first call */
};

#define HH_BUCKETS 256
static hh_pkg *buckets[HH_BUCKETS];

static unsigned bucket_of(const void *p) { return (unsigned)(((uintptr_t)p >> 4) % HH_BUCKETS); }

static hh_pkg *lookup(const hypre_ParCSRCommPkg *pkg)
{
  for (hh_pkg *e = buckets[bucket_of(pkg)]; e; e = e->next)
    if (e->pkg == pkg) return e;
  return NULL;
}

/* The matrices of the AMG hierarchies set up, by level. */
typedef struct {
  const void *amg;
  const void *matrix;
  int setup, level;
  char kind;
} hh_tag;
static hh_tag *tags;
static int n_tags, cap_tags, n_setups;

static void apply_tag(hh_pkg *e)
{
  if (e->rec < 0) return;
  hh_record *r = hh_record_at(e->rec);
  for (int i = n_tags - 1; i >= 0; i--)
    if (tags[i].matrix == e->matrix) {
      r->setup = tags[i].setup;
      r->level = tags[i].level;
      r->kind = tags[i].kind;
      return;
    }
}

static void fingerprint(hh_pkg *e)
{
  hypre_ParCSRCommPkg *p = e->pkg;
  const HYPRE_Int k = hh_pkg_components(p);
  e->num_sends = hypre_ParCSRCommPkgNumSends(p);
  e->num_recvs = hypre_ParCSRCommPkgNumRecvs(p);
  e->send_map_starts = hypre_ParCSRCommPkgSendMapStarts(p);
  e->recv_vec_starts = hypre_ParCSRCommPkgRecvVecStarts(p);
  e->n_send = e->send_map_starts ? e->send_map_starts[e->num_sends] / k : 0;
  e->n_recv = e->recv_vec_starts ? e->recv_vec_starts[e->num_recvs] / k : 0;
}

/* Whether the package still has the lists its plans were made from, set for
 * k vectors: the same arrays, k times the entries. */
static int same_fingerprint(const hh_pkg *e, int k)
{
  const hypre_ParCSRCommPkg *p = e->pkg;
  return e->num_sends == hypre_ParCSRCommPkgNumSends(p) &&
         e->num_recvs == hypre_ParCSRCommPkgNumRecvs(p) &&
         e->send_map_starts == hypre_ParCSRCommPkgSendMapStarts(p) &&
         e->recv_vec_starts == hypre_ParCSRCommPkgRecvVecStarts(p) &&
         (!e->send_map_starts || (int64_t)e->n_send * k == e->send_map_starts[e->num_sends]) &&
         (!e->recv_vec_starts || (int64_t)e->n_recv * k == e->recv_vec_starts[e->num_recvs]);
}

void hh_pkg_register(hypre_ParCSRMatrix *A)
{
  hypre_ParCSRCommPkg *pkg = hypre_ParCSRMatrixCommPkg(A);
  hh_pkg *e = lookup(pkg);
  /* The functions that register make a new package each time: one already
   * at this address was freed without hypre_MatvecCommPkgDestroy. */
  if (e) hh_pkg_unregister(pkg);
  e = calloc(1, sizeof *e);
  if (!e) return; /* left to hypre */
  e->pkg = pkg;
  e->matrix = A;
  e->rec = hh_record_new();
  fingerprint(e);
  if (e->rec >= 0) {
    hh_record *r = hh_record_at(e->rec);
    hypre_CSRMatrix *diag = hypre_ParCSRMatrixDiag(A), *offd = hypre_ParCSRMatrixOffd(A);
    r->level = -1;
    r->kind = '?';
    r->global_rows = (int64_t)hypre_ParCSRMatrixGlobalNumRows(A);
    r->global_cols = (int64_t)hypre_ParCSRMatrixGlobalNumCols(A);
    r->local_rows = diag ? (int64_t)hypre_CSRMatrixNumRows(diag) : 0;
    r->local_nnz = (diag ? (int64_t)hypre_CSRMatrixNumNonzeros(diag) : 0) +
                   (offd ? (int64_t)hypre_CSRMatrixNumNonzeros(offd) : 0);
  }
  apply_tag(e);
  if (hh_settings_get()->view) hh_view_arm();
  unsigned b = bucket_of(pkg);
  e->next = buckets[b];
  buckets[b] = e;
}

/* Complete the exchange in flight on e (halo's), if any. */
static void complete(hh_pkg *e)
{
  if (!e->busy) return;
  halo_plan plan = e->inflight;
  halo_status st = e->reverse ? halo_exchange_reverse_end(plan) : halo_exchange_end(plan);
  e->busy = 0;
  if (st != HALO_SUCCESS) {
    hh_warn(1, "an exchange failed: %s", halo_last_error());
    hypre_error_w_msg(HYPRE_ERROR_GENERIC, "halo-hypre: an exchange failed\n");
  }
}

void hh_pkg_unregister(hypre_ParCSRCommPkg *pkg)
{
  unsigned b = bucket_of(pkg);
  for (hh_pkg **pp = &buckets[b]; *pp; pp = &(*pp)->next) {
    hh_pkg *e = *pp;
    if (e->pkg != pkg) continue;
    *pp = e->next;
    complete(e);
    for (int m = 0; m < 2; m++) {
      halo_plan_destroy(&e->plan[m]);
      halo_plan_destroy(&e->mplan[m]);
    }
    if (e->mv.ghosts) hypre_SeqVectorDestroy(e->mv.ghosts);
    free(e->mv.send);
    free(e->mv.recv);
    free(e);
    return;
  }
}

/* Every package's plan destroyed: the next exchange makes one with the
 * options of now (halo_hypre_set_options). */
void hh_pkg_drop_plans(void)
{
  for (int b = 0; b < HH_BUCKETS; b++)
    for (hh_pkg *e = buckets[b]; e; e = e->next) {
      complete(e);
      for (int m = 0; m < 2; m++) {
        halo_plan_destroy(&e->plan[m]);
        halo_plan_destroy(&e->mplan[m]);
        e->state[m] = e->mstate[m] = e->mk[m] = 0;
      }
    }
}

static void add_tag(const void *amg, const void *matrix, int setup, int level, char kind)
{
  if (!matrix) return;
  if (n_tags == cap_tags) {
    int cap = cap_tags ? 2 * cap_tags : 64;
    hh_tag *t = realloc(tags, (size_t)cap * sizeof *t);
    if (!t) return;
    tags = t;
    cap_tags = cap;
  }
  tags[n_tags++] = (hh_tag){amg, matrix, setup, level, kind};
}

static void make_plan(hh_pkg *e, int mem);

/* The plans of a hierarchy's packages (mats[0..n), n the same on every
 * rank), made at the end of its set-up in the memory of each matrix, rather
 * than at their first exchange inside the solve. Collective, as the set-up:
 * the ranks agree that each could prepare, then on which packages every rank
 * has without a plan, and make those plans in level order. */
static void plan_hierarchy(MPI_Comm comm, hypre_ParCSRMatrix **mats, int n)
{
  if (!hh_settings_get()->on || n <= 0) return;
  int *want = calloc((size_t)n, sizeof *want);
  hh_pkg **es = calloc((size_t)n, sizeof *es);
  int *mems = calloc((size_t)n, sizeof *mems);
  int ok = want && es && mems && mats;
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
  if (ok) {
    for (int i = 0; i < n; i++) {
      hypre_ParCSRCommPkg *pkg = mats[i] ? hypre_ParCSRMatrixCommPkg(mats[i]) : NULL;
      hh_pkg *e = pkg ? lookup(pkg) : NULL;
      const hypre_MemoryLocation m =
          e ? hypre_GetActualMemLocation(hypre_ParCSRMatrixMemoryLocation(mats[i]))
            : hypre_MEMORY_UNDEFINED;
      mems[i] = m == hypre_MEMORY_HOST ? HH_HOST : m == hypre_MEMORY_DEVICE ? HH_DEVICE_MEM : -1;
      es[i] = e;
      want[i] = e && mems[i] >= 0 && e->state[mems[i]] == 0 && !e->busy &&
                hh_pkg_components(e->pkg) == 1 && same_fingerprint(e, 1);
    }
    MPI_Allreduce(MPI_IN_PLACE, want, n, MPI_INT, MPI_MIN, comm);
    for (int i = 0; i < n; i++) {
      /* not wanted: at its first exchange, as any package; made already: a
       * package listed twice (the same on every rank) */
      if (!want[i] || es[i]->state[mems[i]] != 0) continue;
      hh_record *r = es[i]->rec >= 0 ? hh_record_at(es[i]->rec) : NULL;
      double tp = MPI_Wtime();
      make_plan(es[i], mems[i]);
      if (r) r->plan_seconds += MPI_Wtime() - tp;
    }
  }
  free(want);
  free(es);
  free(mems);
}

void hh_pkg_tag_hierarchy(void *amg_vdata)
{
  hypre_ParAMGData *amg = (hypre_ParAMGData *)amg_vdata;
  hh_pkg_untag_hierarchy(amg_vdata);
  int setup = ++n_setups;
  int levels = hypre_ParAMGDataNumLevels(amg);
  hypre_ParCSRMatrix **A = hypre_ParAMGDataAArray(amg);
  hypre_ParCSRMatrix **P = hypre_ParAMGDataPArray(amg);
  hypre_ParCSRMatrix **R = hypre_ParAMGDataRArray(amg);
  /* the hierarchy's matrices in level order: A, P, R of each level (the
   * same count on every rank: levels and restriction are global) */
  const int n = levels > 0 ? 3 * levels : 0;
  hypre_ParCSRMatrix **mats = n ? calloc((size_t)n, sizeof *mats) : NULL;
  for (int l = 0; l < levels; l++) {
    if (A) add_tag(amg_vdata, A[l], setup, l, 'A');
    if (A && mats) mats[3 * l] = A[l];
    if (l + 1 < levels) {
      if (P) add_tag(amg_vdata, P[l], setup, l, 'P');
      if (P && mats) mats[3 * l + 1] = P[l];
      if (R && hypre_ParAMGDataRestriction(amg)) {
        add_tag(amg_vdata, R[l], setup, l, 'R');
        if (mats) mats[3 * l + 2] = R[l];
      }
    }
  }
  for (int b = 0; b < HH_BUCKETS; b++)
    for (hh_pkg *e = buckets[b]; e; e = e->next) apply_tag(e);
  if (A && A[0]) plan_hierarchy(hypre_ParCSRMatrixComm(A[0]), mats, n);
  free(mats);
}

void hh_pkg_untag_hierarchy(void *amg_vdata)
{
  int k = 0;
  for (int i = 0; i < n_tags; i++)
    if (tags[i].amg != amg_vdata) tags[k++] = tags[i];
  n_tags = k;
}

/* ---- plans (the options and the report's record: pkg_plan.c) -------------------- */

/* Make e's plan for memory mem (collective over the package's communicator). */
static void make_plan(hh_pkg *e, int mem)
{
  hh_record *r = e->rec >= 0 ? hh_record_at(e->rec) : NULL;
  const char *where = mem == HH_HOST ? "host" : "device";
  halo_plan_options o;
  /* the same on every rank */
  const char *why = hh_plan_options(hypre_ParCSRCommPkgComm(e->pkg), mem, &o);
  halo_status st = why ? HALO_ERR_NOT_COMPILED
                       : halo_hypre_plan_create_from_comm_pkg(e->pkg, &o, &e->plan[mem]);
  if (st != HALO_SUCCESS) {
    e->state[mem] = -1;
    hh_warn(0, "a package's plan in %s memory could not be made (%s): its exchanges there are "
               "left to hypre",
            where, why ? why : halo_last_error());
    if (r)
      snprintf(r->left_why, sizeof r->left_why, "no %s plan: %s", where,
               why ? "no device support" : halo_status_string(st));
    return;
  }
  e->state[mem] = 1;
  /* the report shows the last plan made (the device's, in a GPU solve) */
  if (r) hh_record_plan(r, e->plan[mem]);
}

/* Make e's plan of k > 1 vectors at once in memory mem (collective over the
 * package's communicator, as make_plan; k is the same on every rank, the
 * vectors of the product): the same lists, in entries, with buffers of 8 k
 * bytes an entry (setting exec.unit_max_bytes, added to the settings'). One
 * for fewer vectors is destroyed first. Host memory only, on a transport
 * that moves units (halo_plan_unit_check): elsewhere the package's exchanges
 * of several vectors are left to hypre, with the reason. */
static void make_mplan(hh_pkg *e, int mem, int k)
{
  hh_record *r = e->rec >= 0 ? hh_record_at(e->rec) : NULL;
  const char *where = mem == HH_HOST ? "host" : "device";
  halo_plan_destroy(&e->mplan[mem]);
  e->mstate[mem] = e->mk[mem] = 0;
  const char *why = NULL;
  halo_status st = HALO_SUCCESS;
  if (mem != HH_HOST) {
    why = "halo moves several values an entry in host memory only";
  } else {
    halo_plan_options o;
    char settings[HALO_SETTINGS_MAX + 64];
    why = hh_plan_options(hypre_ParCSRCommPkgComm(e->pkg), mem, &o);
    snprintf(settings, sizeof settings, "%s%sexec.unit_max_bytes=%lld",
             o.settings ? o.settings : "", o.settings ? "," : "", 8LL * k);
    o.settings = settings;
    if (!why) st = halo_hypre_plan_create_from_comm_pkg(e->pkg, &o, &e->mplan[mem]);
    if (!why && st == HALO_SUCCESS) { /* the plan's transport runs units (not collective) */
      const halo_unit u = {HALO_TYPE_DOUBLE, k};
      st = halo_plan_unit_check(e->mplan[mem], u, HALO_OP_INSERT, 0);
      if (st == HALO_SUCCESS) st = halo_plan_unit_check(e->mplan[mem], u, HALO_OP_ADD, 1);
      if (st != HALO_SUCCESS) halo_plan_destroy(&e->mplan[mem]);
    }
  }
  if (why || st != HALO_SUCCESS) {
    e->mstate[mem] = -1;
    hh_warn(0, "a package's plan of %d vectors at once in %s memory could not be made (%s): its "
               "exchanges of several vectors there are left to hypre",
            k, where, why ? why : halo_last_error());
    if (r)
      snprintf(r->left_why, sizeof r->left_why, "no %s plan of %d vectors: %s", where, k,
               why ? why : halo_status_string(st));
    return;
  }
  e->mstate[mem] = 1;
  e->mk[mem] = k;
  /* the report shows the plan of one vector where there is one */
  if (r && e->state[HH_HOST] != 1 && e->state[HH_DEVICE_MEM] != 1) hh_record_plan(r, e->mplan[mem]);
}

hypre_ParCSRCommHandle *hh_pkg_start(HYPRE_Int job, hypre_ParCSRCommPkg *pkg, int mem,
                                     void *send_data, void *recv_data, hh_pkg **entry_p)
{
  hh_settings *s = hh_settings_get();
  hh_pkg *e = lookup(pkg);
  *entry_p = e;
  if (!e) return NULL;
  hh_record *r = e->rec >= 0 ? hh_record_at(e->rec) : NULL;
  /* the vectors of this exchange: k values an entry (the same on every rank) */
  const int k = hh_pkg_components(pkg);
  if (mem < 0 || !s->on || (k == 1 ? e->state[mem] : e->mstate[mem]) < 0 || e->busy ||
      !same_fingerprint(e, k)) {
    if (r) r->n_hypre++;
    return NULL;
  }
  /* the first plan_after exchanges of a package stay hypre's (the same on
   * every rank: each rank makes each of the package's exchanges); a
   * hierarchy's packages get theirs at the end of its set-up */
  if (e->state[mem] != 1 && e->mstate[mem] != 1 && e->uses[mem] < s->plan_after) {
    e->uses[mem]++;
    if (r) {
      r->n_hypre++;
      r->n_before_plan++;
      snprintf(r->left_why, sizeof r->left_why,
               "used %d time%s (its plan comes at exchange %d: HALO_HYPRE_PLAN_AFTER)",
               e->uses[mem], e->uses[mem] == 1 ? "" : "s", s->plan_after + 1);
    }
    return NULL;
  }
  /* collective: every rank is at this exchange, with the same k */
  if (k == 1 ? e->state[mem] == 0 : e->mstate[mem] == 0 || e->mk[mem] < k) {
    double tp = MPI_Wtime();
    if (k == 1)
      make_plan(e, mem);
    else
      make_mplan(e, mem, k);
    if (r) r->plan_seconds += MPI_Wtime() - tp;
  }
  if ((k == 1 ? e->state[mem] : e->mstate[mem]) < 0) {
    if (r) r->n_hypre++;
    return NULL;
  }
  halo_plan plan = k == 1 ? e->plan[mem] : e->mplan[mem];
  const halo_unit unit = {HALO_TYPE_DOUBLE, k};
  double t0 = MPI_Wtime();
  halo_status st = HALO_SUCCESS;
  if (job == 1) {
    st = k == 1 ? halo_exchange_begin(plan, (const double *)send_data, (double *)recv_data)
                : halo_exchange_begin_unit(plan, unit, HALO_OP_INSERT, send_data, recv_data);
  } else {
    /* hypre's receive buffer of a reverse exchange holds the sums: halo
     * adds into it, from zero (in device memory, in stream order) */
    const size_t bytes = (size_t)e->n_send * (size_t)k * sizeof(double);
    if (bytes && mem == HH_HOST) memset(recv_data, 0, bytes);
#if HH_DEVICE
    if (bytes && mem == HH_DEVICE_MEM && hh_device_zero(recv_data, bytes, hh_device_stream()))
      st = HALO_ERR_CUDA;
#endif
    if (st == HALO_SUCCESS)
      st = k == 1 ? halo_exchange_reverse_begin(plan, (const double *)send_data,
                                                (double *)recv_data)
                  : halo_exchange_reverse_begin_unit(plan, unit, HALO_OP_ADD, send_data,
                                                     recv_data);
  }
  if (st != HALO_SUCCESS) {
    hh_warn(1, "an exchange could not start: %s",
            st == HALO_ERR_CUDA ? "cudaMemsetAsync of hypre's receive buffer failed"
                                : halo_last_error());
    hypre_error_w_msg(HYPRE_ERROR_GENERIC, "halo-hypre: an exchange could not start\n");
  }
  e->busy = st == HALO_SUCCESS;
  e->inflight = plan;
  e->mem = mem;
  e->reverse = job == 2;
  e->t_start = MPI_Wtime() - t0;
  hypre_ParCSRCommHandle *h = &e->handle;
  memset(h, 0, sizeof *h);
  hypre_ParCSRCommHandleCommPkg(h) = pkg;
  const HYPRE_MemoryLocation loc = mem == HH_HOST ? HYPRE_MEMORY_HOST : HYPRE_MEMORY_DEVICE;
  hypre_ParCSRCommHandleSendMemoryLocation(h) = loc;
  hypre_ParCSRCommHandleRecvMemoryLocation(h) = loc;
  hypre_ParCSRCommHandleSendData(h) = send_data;
  hypre_ParCSRCommHandleRecvData(h) = recv_data;
  hypre_ParCSRCommHandleSendDataBuffer(h) = send_data;
  hypre_ParCSRCommHandleRecvDataBuffer(h) = recv_data;
  if (r) {
    if (job == 1)
      r->n_forward++;
    else
      r->n_reverse++;
    if (k > 1) {
      r->n_multi++;
      if (k > r->multi_k) r->multi_k = k;
    }
  }
  return h;
}

int hh_pkg_finish(hypre_ParCSRCommHandle *h)
{
  hypre_ParCSRCommPkg *pkg = hypre_ParCSRCommHandleCommPkg(h);
  if (!pkg) return 0;
  hh_pkg *e = lookup(pkg);
  if (!e || h != &e->handle) return 0;
  double t0 = MPI_Wtime();
  complete(e);
  hypre_ParCSRCommHandleCommPkg(h) = NULL;
  if (e->rec >= 0) hh_record_at(e->rec)->seconds += e->t_start + (MPI_Wtime() - t0);
  return 1;
}

hh_pkg *hh_pkg_of_handle(hypre_ParCSRCommHandle *h)
{
  hypre_ParCSRCommPkg *pkg = hypre_ParCSRCommHandleCommPkg(h);
  if (!pkg) return NULL;
  hh_pkg *e = lookup(pkg);
  if (!e) return NULL;
  for (int i = 0; i < 4; i++)
    if (e->hypre_handles[i] == h) {
      e->hypre_handles[i] = NULL;
      return e;
    }
  return NULL;
}

void hh_pkg_hypre_started(hh_pkg *e, hypre_ParCSRCommHandle *h, double seconds)
{
  hh_pkg_add_hypre_time(e, seconds);
  for (int i = 0; i < 4; i++)
    if (!e->hypre_handles[i]) {
      e->hypre_handles[i] = h;
      return;
    }
}

void hh_pkg_add_hypre_time(hh_pkg *e, double seconds)
{
  if (e->rec >= 0) hh_record_at(e->rec)->seconds += seconds;
}

/* ---- halo_hypre_matvec(_t) ------------------------------------------------------- */

hh_pkg *hh_pkg_for_matvec(hypre_ParCSRMatrix *A, halo_plan *plan_p, hh_matvec_buffers **mv_p)
{
  *plan_p = NULL;
  *mv_p = NULL;
  if (!hh_abi_ok()) return NULL; /* another build of hypre: its structures are not ours */
  hypre_ParCSRCommPkg *pkg = hypre_ParCSRMatrixCommPkg(A);
  hh_pkg *e = pkg ? lookup(pkg) : NULL;
  /* a package made by hypre's own function (libHYPRE ahead of us in the
   * link order) is registered here */
  if (pkg && !e) {
    hh_pkg_register(A);
    e = lookup(pkg);
  }
  if (!e) return NULL;
  hh_settings *s = hh_settings_get();
  hh_record *r = e->rec >= 0 ? hh_record_at(e->rec) : NULL;
  /* one vector (halo_hypre_matvec takes no multivector): a package hypre set
   * for several (the same on every rank) is left to hypre */
  if (!s->on || e->state[HH_HOST] < 0 || e->busy || hh_pkg_components(pkg) != 1 ||
      !same_fingerprint(e, 1))
    return e;
  if (e->state[HH_HOST] == 0) { /* collective: every rank multiplies */
    double tp = MPI_Wtime();
    make_plan(e, HH_HOST);
    if (r) r->plan_seconds += MPI_Wtime() - tp;
    if (e->state[HH_HOST] < 0) return e;
  }
  if (e->mv.state == 0) { /* the buffers, once per package, agreed on every rank */
    e->mv.send = malloc((size_t)(e->n_send > 0 ? e->n_send : 1) * sizeof(double));
    e->mv.recv = malloc((size_t)(e->n_recv > 0 ? e->n_recv : 1) * sizeof(double));
    e->mv.ghosts = hypre_SeqVectorCreate(e->n_recv);
    int ok = e->mv.send && e->mv.recv && e->mv.ghosts;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, hypre_ParCSRCommPkgComm(e->pkg));
    e->mv.state = ok ? 1 : -1;
    if (ok) {
      hypre_VectorData(e->mv.ghosts) = e->mv.recv;
      hypre_VectorMemoryLocation(e->mv.ghosts) = HYPRE_MEMORY_HOST;
      hypre_SeqVectorSetDataOwner(e->mv.ghosts, 0);
    }
  }
  if (e->mv.state < 0) return e; /* left to hypre, on every rank */
  *plan_p = e->plan[HH_HOST];
  *mv_p = &e->mv;
  return e;
}

void hh_pkg_count(hh_pkg *e, int reverse, int through_halo, double seconds)
{
  if (!e || e->rec < 0) return;
  hh_record *r = hh_record_at(e->rec);
  if (!through_halo)
    r->n_hypre++;
  else if (reverse)
    r->n_reverse++;
  else
    r->n_forward++;
  r->seconds += seconds;
}
