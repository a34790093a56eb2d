/* halo for hypre: the report of the packages seen, one line each (AMG
 * level, matrix, sizes, the plan's phases, modeled time, strategy, and how
 * many exchanges went through halo), printed at MPI_Finalize when
 * HALO_HYPRE_VIEW=1 or by halo_hypre_view(). */
#include <stdlib.h>
#include <string.h>

#include "hypre_impl.h"

static hh_record *records;
static int n_records, cap_records;
static int64_t other_values;  /* exchanges of values (job 1, 2) of packages of no matrix */
static int64_t other_values_setup; /* ... of them inside an AMG set-up */
static int64_t other_setup;   /* exchanges of integers (jobs 11, 12, 21, 22 ...) */
static int armed;

int hh_record_new(void)
{
  if (n_records == cap_records) {
    int cap = cap_records ? 2 * cap_records : 64;
    hh_record *r = realloc(records, (size_t)cap * sizeof *r);
    if (!r) return -1;
    records = r;
    cap_records = cap;
  }
  memset(&records[n_records], 0, sizeof records[n_records]);
  return n_records++;
}

hh_record *hh_record_at(int i) { return &records[i]; }

void hh_view_count_other(HYPRE_Int job)
{
  if (job == 1 || job == 2) {
    other_values++;
    if (hh_in_amg_setup) other_values_setup++;
  }
  else
    other_setup++;
}

void halo_hypre_view_reset(void)
{
  for (int i = 0; i < n_records; i++) {
    records[i].n_forward = records[i].n_reverse = records[i].n_hypre = 0;
    records[i].seconds = 0;
  }
  other_values = other_values_setup = other_setup = 0;
}

/* Phases as "m1/m2/m3 msgs b1/b2/b3 B". */
static void phases(const halo_stats *s, char *buf, size_t len)
{
  char m[96] = "", b[128] = "";
  size_t lm = 0, lb = 0;
  for (int p = 0; p < s->n_phases && p < HALO_MAX_PHASES; p++) {
    lm += (size_t)snprintf(m + lm, sizeof m - lm, "%s%lld", p ? "/" : "",
                           (long long)s->phase[p].messages);
    lb += (size_t)snprintf(b + lb, sizeof b - lb, "%s%lld", p ? "/" : "",
                           (long long)s->phase[p].bytes);
    if (lm >= sizeof m || lb >= sizeof b) break;
  }
  snprintf(buf, len, "msgs %s bytes %s", s->n_phases ? m : "0", s->n_phases ? b : "0");
}

halo_status halo_hypre_view(MPI_Comm comm, FILE *out)
{
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  /* The ranks' records line up when every rank saw the same packages (the
   * packages of matrices on the whole communicator). */
  int64_t *sums = calloc((size_t)(2 * n_records + 1), sizeof *sums);
  double *secs = calloc((size_t)(2 * n_records + 1), sizeof *secs);
  int n[3] = {n_records, -n_records, sums && secs ? 0 : 1}, agree[3];
  MPI_Allreduce(n, agree, 3, MPI_INT, MPI_MAX, comm);
  if (agree[2]) {
    free(sums);
    free(secs);
    return HALO_ERR_OUT_OF_MEMORY;
  }
  int aligned = agree[0] == -agree[1];
  int k = aligned ? n_records : 0;
  for (int i = 0; i < k; i++) {
    sums[2 * i] = records[i].local_nnz;
    sums[2 * i + 1] = records[i].local_rows > 0;
    secs[i] = records[i].seconds;
    secs[k + i] = records[i].plan_seconds;
  }
  MPI_Allreduce(MPI_IN_PLACE, sums, 2 * k, MPI_INT64_T, MPI_SUM, comm);
  MPI_Allreduce(MPI_IN_PLACE, secs, 2 * k, MPI_DOUBLE, MPI_MAX, comm);
  if (rank == 0) {
    const hh_settings *s = hh_settings_get();
    int64_t fw = 0, rv = 0, hy = 0;
    fprintf(out, "halo_hypre_view: %d package(s) of matrices on %d rank(s); halo %s%s%s\n",
            n_records, size, s->on ? "on" : "off", s->on ? "" : ": ",
            s->on ? "" : (s->why_off[0] ? s->why_off : "HALO_HYPRE=0 or halo_hypre_set_enabled(0)"));
    if (!aligned)
      fprintf(out, "halo_hypre_view: (ranks saw different packages: rank 0's own figures)\n");
    fprintf(out,
            "halo_hypre_view: %5s %5s %4s %10s %10s %12s %6s  %-44s %10s %8s %8s %8s %10s %8s  %s\n",
            "setup", "level", "mat", "rows", "cols", "nonzeros", "ranks", "phases", "inter-B",
            "forward", "reverse", "hypre", "xchg-ms", "plan-ms", "plan");
    for (int i = 0; i < n_records; i++) {
      const hh_record *r = &records[i];
      if (!r->planned && !r->n_hypre) continue;
      char ph[160] = "-", lvl[16] = "-", set[16] = "-";
      int64_t inter = 0;
      if (r->planned) {
        phases(&r->stats, ph, sizeof ph);
        for (int p = 0; p < r->stats.n_phases && p < HALO_MAX_PHASES; p++)
          inter += r->stats.phase[p].inter_node_bytes;
      }
      if (r->level >= 0) snprintf(lvl, sizeof lvl, "%d", r->level);
      if (r->setup > 0) snprintf(set, sizeof set, "%d", r->setup);
      char plan[384];
      if (r->planned)
        snprintf(plan, sizeof plan, "%s", r->describe);
      else
        snprintf(plan, sizeof plan, "left to hypre: %s", r->left_why[0] ? r->left_why : "not used by halo");
      char mod[48] = "";
      if (r->modeled > 0) snprintf(mod, sizeof mod, " modeled %.2f us", r->modeled * 1e6);
      fprintf(out,
              "halo_hypre_view: %5s %5s %4c %10lld %10lld %12lld %6lld  %-44s %10lld %8lld %8lld "
              "%8lld %10.3f %8.3f  %s%s\n",
              set, lvl, r->kind, (long long)r->global_rows, (long long)r->global_cols,
              (long long)(aligned ? sums[2 * i] : r->local_nnz),
              (long long)(aligned ? sums[2 * i + 1] : r->local_rows > 0), ph, (long long)inter,
              (long long)r->n_forward, (long long)r->n_reverse, (long long)r->n_hypre,
              1e3 * (aligned ? secs[i] : r->seconds),
              1e3 * (aligned ? secs[k + i] : r->plan_seconds), plan, mod);
      fw += r->n_forward;
      rv += r->n_reverse;
      hy += r->n_hypre;
    }
    fprintf(out,
            "halo_hypre_view: exchanges through halo: %lld forward, %lld reverse; of matrices' "
            "packages left to hypre: %lld; of other packages: %lld of values (%lld in AMG "
            "set-ups), %lld of integers (rank 0)\n",
            (long long)fw, (long long)rv, (long long)hy, (long long)other_values,
            (long long)other_values_setup, (long long)other_setup);
    fflush(out);
  }
  free(sums);
  free(secs);
  return HALO_SUCCESS;
}

/* MPI_Finalize deletes MPI_COMM_SELF's attributes first, while MPI still
 * works: the report is printed from there. */
static int at_finalize(MPI_Comm comm, int keyval, void *value, void *extra)
{
  (void)comm;
  (void)keyval;
  (void)value;
  (void)extra;
  int init = 0;
  MPI_Initialized(&init);
  if (init) halo_hypre_view(MPI_COMM_WORLD, stdout);
  return MPI_SUCCESS;
}

void hh_view_arm(void)
{
  if (armed) return;
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (!init || fin) return;
  int key = MPI_KEYVAL_INVALID;
  if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, at_finalize, &key, NULL) != MPI_SUCCESS) return;
  if (MPI_Comm_set_attr(MPI_COMM_SELF, key, NULL) != MPI_SUCCESS) return;
  armed = 1;
}
