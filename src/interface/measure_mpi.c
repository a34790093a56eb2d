/* halo_params_measure() on the host (measure.h): where the ranks are (nodes,
 * sockets, rank 0's partners), ping-pong of rank 0 with one partner per
 * locality (cpu.*), and the injection limit of a node (injection.beta). */
#define _GNU_SOURCE /* sched_getcpu */
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interface/measure.h"

/* ---- topology ---------------------------------------------------------------- */

/* Physical package of the CPU this rank runs on; known_p = 0 when it cannot tell. */
static int my_package(int *known_p) {
  *known_p = 0;
  const int cpu = sched_getcpu();
  if (cpu < 0) return 0;
  char path[128];
  snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", cpu);
  FILE *f = fopen(path, "r");
  int pkg = 0;
  if (!f) return 0;
  if (fscanf(f, "%d", &pkg) == 1 && pkg >= 0) *known_p = 1;
  fclose(f);
  return *known_p ? pkg : 0;
}

static int cmp_pair(const void *a, const void *b) {
  const int *x = a, *y = b;
  return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : (x[1] > y[1]) - (x[1] < y[1]);
}

/* Per rank, 4 values gathered on rank 0: */
enum { T_NODE, T_PACKAGE, T_KNOWN, T_MACHINE, T_N };
/* and what rank 0 finds, broadcast: */
enum { H_PARTNER, H_INJ_K = HALO_N_LOC, H_SOCKETS, H_NODES, H_KNOWN, H_IPC, H_N };

/* Rank 0: from the ranks' values (all, T_N each), hdr and the injection
 * pairs a and b (hdr[H_INJ_K] each, at most P / 2); np: 2 ints per rank. */
static void find_pairs(const halo_measure *c, const int *all, int *np, int *hdr, int *a, int *b) {
  const int n0 = all[T_NODE], p0 = all[T_PACKAGE], m0 = all[T_MACHINE];
  int na = 0, nb = 0, ipc_any = -1, ipc_socket = -1;
  for (int r = 1; r < c->size; r++) {
    const int *x = &all[T_N * r];
    const int loc = x[T_NODE] != n0      ? HALO_LOC_OFF_NODE
                    : x[T_PACKAGE] == p0 ? HALO_LOC_ON_SOCKET
                                         : HALO_LOC_ON_NODE;
    if (hdr[H_PARTNER + loc] < 0) hdr[H_PARTNER + loc] = r;
    /* ipc: a rank of rank 0's machine, whatever its node; on rank 0's socket if one is */
    if (x[T_MACHINE] == m0 && ipc_any < 0) ipc_any = r;
    if (x[T_MACHINE] == m0 && x[T_PACKAGE] == p0 && ipc_socket < 0) ipc_socket = r;
  }
  hdr[H_IPC] = ipc_socket >= 0 ? ipc_socket : ipc_any;
  const int off = hdr[H_PARTNER + HALO_LOC_OFF_NODE];
  for (int r = 0; r < c->size; r++) {
    na += all[T_N * r + T_NODE] == n0;
    nb += off >= 0 && all[T_N * r + T_NODE] == all[T_N * off + T_NODE];
    hdr[H_KNOWN] &= all[T_N * r + T_KNOWN];
  }
  const int k = hdr[H_INJ_K] = off >= 0 ? (na < nb ? na : nb) : 0;
  /* nodes and the most packages seen on one: sort (node, package) */
  for (int r = 0; r < c->size; r++)
    np[2 * r] = all[T_N * r + T_NODE], np[2 * r + 1] = all[T_N * r + T_PACKAGE];
  qsort(np, (size_t)c->size, 2 * sizeof *np, cmp_pair);
  int nodes = 0, most = 0, here = 0;
  for (int r = 0; r < c->size; r++) {
    if (r == 0 || np[2 * r] != np[2 * r - 2]) nodes++, here = 0;
    if (r == 0 || np[2 * r] != np[2 * r - 2] || np[2 * r + 1] != np[2 * r - 1]) here++;
    if (here > most) most = here;
  }
  hdr[H_SOCKETS] = most, hdr[H_NODES] = nodes;
  na = nb = 0;
  for (int r = 0; r < c->size && (na < k || nb < k); r++) {
    if (all[T_N * r + T_NODE] == n0 && na < k) a[na++] = r;
    if (off >= 0 && all[T_N * r + T_NODE] == all[T_N * off + T_NODE] && nb < k) b[nb++] = r;
  }
}

halo_status halo_measure_topology(halo_measure *c) {
  halo_status st = HALO_SUCCESS;
  MPI_Comm shm = MPI_COMM_NULL;
  int *all = NULL, *np = NULL;
  HALO_TRY_MPI(MPI_Comm_split_type(c->comm, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &shm));
  HALO_TRY_MPI(MPI_Comm_rank(shm, &c->shm_rank));
  HALO_TRY_MPI(MPI_Comm_size(shm, &c->shm_size));
  c->shm_leader = c->rank;
  HALO_TRY_MPI(MPI_Bcast(&c->shm_leader, 1, MPI_INT, 0, shm));
  const int K = c->o.ranks_per_node;
  int known, mine[T_N];
  mine[T_NODE] = K > 0 ? c->rank / K * K : c->shm_leader;
  mine[T_PACKAGE] = my_package(&known);
  mine[T_KNOWN] = known;
  mine[T_MACHINE] = c->shm_leader;
  if (c->rank == 0) st = HALO_ALLOC(all, (int64_t)c->size * T_N);
  HALO_TRY(halo_agree(c->comm, st));
  HALO_TRY_MPI(MPI_Gather(mine, T_N, MPI_INT, all, T_N, MPI_INT, 0, c->comm));
  int hdr[H_N] = {-1, -1, -1, 0, 1, 1, 1, -1};
  if (c->rank == 0) {
    st = HALO_ALLOC(np, (int64_t)c->size * 2);
    if (st == HALO_SUCCESS) st = HALO_ALLOC(c->inj_a, c->size);
    if (st == HALO_SUCCESS) st = HALO_ALLOC(c->inj_b, c->size);
    if (st == HALO_SUCCESS) find_pairs(c, all, np, hdr, c->inj_a, c->inj_b);
  }
  HALO_TRY(halo_agree(c->comm, st));
  HALO_TRY_MPI(MPI_Bcast(hdr, H_N, MPI_INT, 0, c->comm));
  for (int l = 0; l < HALO_N_LOC; l++) c->partner[l] = hdr[H_PARTNER + l];
  c->inj_k = hdr[H_INJ_K], c->sockets_per_node = hdr[H_SOCKETS], c->n_nodes = hdr[H_NODES];
  c->packages_known = hdr[H_KNOWN], c->ipc_partner = hdr[H_IPC];
  if (c->rank != 0) {
    st = HALO_ALLOC(c->inj_a, c->inj_k + 1);
    if (st == HALO_SUCCESS) st = HALO_ALLOC(c->inj_b, c->inj_k + 1);
    if (st != HALO_SUCCESS) st = HALO_ERROR(st, "out of memory (injection pairs)");
  }
  HALO_TRY(halo_agree(c->comm, st));
  HALO_TRY_MPI(MPI_Bcast(c->inj_a, c->inj_k, MPI_INT, 0, c->comm));
  HALO_TRY_MPI(MPI_Bcast(c->inj_b, c->inj_k, MPI_INT, 0, c->comm));
cleanup:
  halo_free(np);
  halo_free(all);
  if (shm != MPI_COMM_NULL) MPI_Comm_free(&shm);
  return st;
}

/* ---- cpu.* ------------------------------------------------------------------ */

/* Rank 0 and peer ping-pong every size; the others wait. med (rank 0): the
 * median half round trip of each size; work (rank 0): iterations values. */
static halo_status pingpong(const halo_measure *c, int peer, double *med, double *work) {
  const int active = c->rank == 0 || c->rank == peer, iters = c->o.iterations;
  int bad = 0;
  for (int k = 0; k < c->n_sizes && active; k++) {
    const int bytes = (int)c->sizes[k];
    for (int it = -c->warmup; it < iters; it++) {
      if (c->rank == 0) {
        const double t0 = MPI_Wtime();
        bad |= MPI_Send(c->buf, bytes, MPI_BYTE, peer, 1, c->comm);
        bad |= MPI_Recv(c->buf, bytes, MPI_BYTE, peer, 1, c->comm, MPI_STATUS_IGNORE);
        if (it >= 0) work[it] = (MPI_Wtime() - t0) / 2;
      } else {
        bad |= MPI_Recv(c->buf, bytes, MPI_BYTE, 0, 1, c->comm, MPI_STATUS_IGNORE);
        bad |= MPI_Send(c->buf, bytes, MPI_BYTE, 0, 1, c->comm);
      }
    }
    if (c->rank == 0) med[k] = halo_measure_median(work, iters);
  }
  halo_status st =
      bad ? HALO_ERROR(HALO_ERR_MPI, "ping-pong of ranks 0 and %d: a message failed", peer)
          : HALO_SUCCESS;
  HALO_CHECK(halo_measure_wait_all(c, active));
  return halo_agree(c->comm, st);
}

halo_status halo_measure_cpu(halo_measure *c) {
  halo_status st = HALO_SUCCESS, fitted = HALO_SUCCESS;
  double med[HALO_MEASURE_MAX_SIZES], *work = NULL;
  if (c->rank == 0) st = HALO_ALLOC(work, c->o.iterations);
  HALO_TRY(halo_agree(c->comm, st));
  int measured[HALO_N_LOC] = {0};
  for (int l = 0; l < HALO_N_LOC; l++) {
    const int peer = c->partner[l];
    if (peer < 0) continue;
    HALO_TRY(pingpong(c, peer, med, work));
    if (c->rank != 0 || fitted != HALO_SUCCESS) continue; /* the others go on with rank 0 */
    halo_fit f[HALO_N_PROTO];
    fitted =
        halo_fit_protocols(c->dsizes, med, c->n_sizes, c->o.short_max, c->o.eager_max, c->o.fit, f);
    if (fitted != HALO_SUCCESS) {
      fitted = HALO_ERROR(fitted, "cpu.*.%s: %s", halo_measure_loc_names[l], halo_last_error());
      continue;
    }
    halo_measure_say(c, "cpu.*.%s: ping-pong of ranks 0 and %d, median half round trip\n",
                     halo_measure_loc_names[l], peer);
    for (int p = 0; p < HALO_N_PROTO; p++) {
      char r[64];
      halo_measure_range_text(c, p, r, sizeof r);
      halo_measure_say_fit(c, halo_measure_proto_names[p], r, &f[p]);
      c->res.params.cpu[p][l] = (halo_postal){f[p].alpha, f[p].beta};
    }
    measured[l] = 1;
  }
  HALO_TRY(halo_agree(c->comm, fitted));
  for (int l = 0; l < HALO_N_LOC; l++) {
    if (measured[l] || c->partner[l] >= 0) continue;
    const int from = halo_measure_nearest(l, measured);
    if (from < 0) continue; /* every locality has a pair when P >= 2 */
    for (int p = 0; p < HALO_N_PROTO; p++) c->res.params.cpu[p][l] = c->res.params.cpu[p][from];
    char keys[48];
    const char *to = halo_measure_loc_names[l], *why = halo_measure_no_pair_reason(l);
    snprintf(keys, sizeof keys, "cpu.*.%s.*", to);
    halo_measure_note(c, keys, "cpu.*.%s: copied from cpu.*.%s (%s)", to,
                      halo_measure_loc_names[from], why);
    halo_measure_say(c, "cpu.*.%s: copied from cpu.*.%s (%s)\n", to, halo_measure_loc_names[from],
                     why);
  }
cleanup:
  halo_free(work);
  return st;
}

/* ---- injection.beta ---------------------------------------------------------- */

/* k pairs ping-pong at once, nm sizes m; t (rank 0): the median over the
 * iterations of the slowest pair's half round trip, per size. */
static halo_status node_pong(const halo_measure *c, int k, const int64_t *m, int nm, double *work,
                             double *t) {
  halo_status st = HALO_SUCCESS;
  int ia = -1, ib = -1, bad = 0;
  for (int i = 0; i < c->inj_k; i++) {
    if (c->inj_a[i] == c->rank) ia = i;
    if (c->inj_b[i] == c->rank) ib = i;
  }
  const int active = (ia >= 0 && ia < k) || (ib >= 0 && ib < k), iters = c->o.iterations;
  MPI_Comm sub = MPI_COMM_NULL;
  HALO_TRY_MPI(MPI_Comm_split(c->comm, active ? 0 : MPI_UNDEFINED, c->rank, &sub));
  for (int j = 0; j < nm && active; j++) {
    const int bytes = (int)m[j];
    for (int it = -c->warmup; it < iters; it++) {
      bad |= MPI_Barrier(sub);
      const double t0 = MPI_Wtime();
      double dt = 0, mx = 0;
      if (ia >= 0) {
        bad |= MPI_Send(c->buf, bytes, MPI_BYTE, c->inj_b[ia], 2, c->comm);
        bad |= MPI_Recv(c->buf, bytes, MPI_BYTE, c->inj_b[ia], 2, c->comm, MPI_STATUS_IGNORE);
        dt = (MPI_Wtime() - t0) / 2;
      } else {
        bad |= MPI_Recv(c->buf, bytes, MPI_BYTE, c->inj_a[ib], 2, c->comm, MPI_STATUS_IGNORE);
        bad |= MPI_Send(c->buf, bytes, MPI_BYTE, c->inj_a[ib], 2, c->comm);
      }
      bad |= MPI_Reduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, 0, sub);
      if (it >= 0) work[it] = mx;
    }
    t[j] = halo_measure_median(work, iters); /* meaningful on rank 0 (rank 0 of sub) */
  }
  if (bad) st = HALO_ERROR(HALO_ERR_MPI, "injection, k = %d: a message failed", k);
cleanup:
  if (sub != MPI_COMM_NULL) MPI_Comm_free(&sub);
  HALO_CHECK(halo_measure_wait_all(c, active));
  return halo_agree(c->comm, st);
}

halo_status halo_measure_injection(halo_measure *c) {
  halo_status st = HALO_SUCCESS, fitted = HALO_SUCCESS;
  double *work = NULL;
  if (c->inj_k == 0) {
    c->res.params.injection_beta = c->base.injection_beta;
    const char *why = c->o.ranks_per_node ? "one node of --ranks-per-node ranks holds them all"
                                          : "one node, and no --ranks-per-node";
    halo_measure_note(c, "injection.*", "injection.beta: from %s (%s)", c->o.base, why);
    halo_measure_say(c, "injection.beta: from %s (%s)\n", c->o.base, why);
    return HALO_SUCCESS;
  }
  /* message sizes: 1, 2, 4 MiB, or max/4, max/2, max below 4 MiB */
  int64_t m[3];
  const int64_t top = c->o.max_bytes < (4 << 20) ? c->o.max_bytes : (4 << 20);
  m[0] = top / 4 > 0 ? top / 4 : 1, m[1] = top / 2 > m[0] ? top / 2 : m[0] + 1, m[2] = top;
  const int nm = m[2] > m[1] ? 3 : 2;
  if (nm == 2) m[1] = m[2];
  st = HALO_ALLOC(work, c->o.iterations);
  HALO_TRY(halo_agree(c->comm, st));
  halo_measure_say(c,
                   "injection: k ranks of rank 0's node ping-pong with k ranks of rank %d's node "
                   "at once, %lld to %lld bytes each; time of the slowest vs the node's bytes\n",
                   c->inj_b[0], (long long)m[0], (long long)m[nm - 1]);
  halo_fit last = {0};
  for (int k = 1;; k = k * 2 < c->inj_k ? k * 2 : c->inj_k) {
    double t[3] = {0}, x[3];
    HALO_TRY(node_pong(c, k, m, nm, work, t));
    for (int j = 0; j < nm; j++) x[j] = (double)k * (double)m[j];
    if (c->rank == 0 && fitted == HALO_SUCCESS) {
      halo_fit f;
      fitted = halo_fit_postal(x, t, nm, c->o.fit, &f);
      if (fitted != HALO_SUCCESS) {
        fitted = HALO_ERROR(fitted, "injection, k = %d: %s", k, halo_last_error());
      } else {
        halo_measure_say(c,
                         "  k = %-4d alpha %9.3e s  beta %9.3e s/B of the node (%7.2f GB/s)  R^2 "
                         "%7.4f  worst %5.1f%%%s\n",
                         k, f.alpha, f.beta, f.beta > 0 ? 1e-9 / f.beta : INFINITY, f.r2,
                         100 * f.max_rel_err, halo_measure_clamp_text(&f));
        last = f;
      }
    }
    if (k == c->inj_k) break;
  }
  HALO_TRY(halo_agree(c->comm, fitted));
  c->res.params.injection_beta = last.beta;
  halo_measure_say(c, "  injection.beta = %.3e s/B (k = %d)\n", last.beta, c->inj_k);
cleanup:
  halo_free(work);
  return st;
}
