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
    records[i].n_multi = 0;
    records[i].multi_k = 0;
    records[i].n_before_plan = 0;
    records[i].seconds = 0;
  }
  other_values = other_values_setup = other_setup = 0;
}

/* The plan's phases in the record: their sums, and the text "msgs m1/m2/m3
 * bytes b1/b2/b3" of the view. */
void hh_record_phases(halo_plan plan, hh_record *r)
{
  char m[96] = "", b[128] = "";
  size_t lm = 0, lb = 0;
  r->messages = r->inter_node_bytes = 0;
  for (int p = 0; p < r->stats.n_phases; p++) {
    halo_phase_stats ps;
    if (halo_plan_phase_stats(plan, p, &ps) != HALO_SUCCESS) break;
    r->messages += ps.messages;
    r->inter_node_bytes += ps.inter_node_bytes;
    if (lm >= sizeof m || lb >= sizeof b) continue; /* the text is full; the sums go on */
    lm += (size_t)snprintf(m + lm, sizeof m - lm, "%s%lld", p ? "/" : "", (long long)ps.messages);
    lb += (size_t)snprintf(b + lb, sizeof b - lb, "%s%lld", p ? "/" : "", (long long)ps.bytes);
  }
  snprintf(r->phases, sizeof r->phases, "msgs %s bytes %s", r->stats.n_phases ? m : "0",
           r->stats.n_phases ? b : "0");
}

/* The records with the sums and maxima over the ranks of comm (collective);
 * *aligned = 0 when the ranks saw different packages (then rank 0's own). */
static halo_status gather(MPI_Comm comm, halo_hypre_record **out_p, int *n_p, int *aligned)
{
  int n[3] = {n_records, -n_records, 0}, agree[3];
  halo_hypre_record *out = calloc((size_t)(n_records ? n_records : 1), sizeof *out);
  int64_t *sums = calloc((size_t)(2 * n_records + 1), sizeof *sums);
  double *secs = calloc((size_t)(2 * n_records + 1), sizeof *secs);
  n[2] = out && sums && secs ? 0 : 1;
  MPI_Allreduce(n, agree, 3, MPI_INT, MPI_MAX, comm);
  if (agree[2]) {
    free(out);
    free(sums);
    free(secs);
    return HALO_ERR_OUT_OF_MEMORY;
  }
  /* The ranks' records line up when every rank saw the same packages (the
   * packages of matrices on the whole communicator). */
  *aligned = agree[0] == -agree[1];
  int k = *aligned ? n_records : 0;
  for (int i = 0; i < n_records; i++) {
    sums[2 * i] = records[i].local_nnz;
    sums[2 * i + 1] = records[i].local_rows > 0;
    secs[i] = records[i].seconds;
    secs[n_records + i] = records[i].plan_seconds;
  }
  if (k) {
    MPI_Allreduce(MPI_IN_PLACE, sums, 2 * k, MPI_INT64_T, MPI_SUM, comm);
    MPI_Allreduce(MPI_IN_PLACE, secs, 2 * k, MPI_DOUBLE, MPI_MAX, comm);
  }
  for (int i = 0; i < n_records; i++) {
    const hh_record *r = &records[i];
    halo_hypre_record *o = &out[i];
    o->setup = r->setup;
    o->level = r->level;
    o->matrix = r->kind;
    o->rows = r->global_rows;
    o->cols = r->global_cols;
    o->nonzeros = sums[2 * i];
    o->ranks_with_rows = sums[2 * i + 1];
    o->planned = r->planned;
    if (r->planned) {
      o->stats = r->stats;
      o->messages = r->messages;
      o->inter_node_bytes = r->inter_node_bytes;
      o->modeled = r->modeled;
      snprintf(o->plan, sizeof o->plan, "%s", r->describe);
    } else {
      snprintf(o->plan, sizeof o->plan, "left to hypre: %s",
               r->left_why[0] ? r->left_why : "not used by halo");
    }
    o->forward = r->n_forward;
    o->reverse = r->n_reverse;
    o->multivector = r->n_multi;
    o->multivector_k = r->multi_k;
    o->left_to_hypre = r->n_hypre;
    o->seconds = secs[i];
    o->plan_seconds = secs[n_records + i];
  }
  free(sums);
  free(secs);
  *out_p = out;
  *n_p = n_records;
  return HALO_SUCCESS;
}

halo_status halo_hypre_records(MPI_Comm comm, halo_hypre_record **records_p, int *n_p)
{
  if (!records_p || !n_p) return HALO_ERR_INVALID_ARG;
  *records_p = NULL;
  *n_p = 0;
  /* the communicator checked before any MPI call on it (MPI_COMM_NULL, an
   * intercommunicator: HALO_ERR_INVALID_ARG, as every entry point of halo's) */
  halo_status st = halo_status_agree(comm, HALO_SUCCESS);
  if (st != HALO_SUCCESS) return st;
  int aligned = 0;
  st = gather(comm, records_p, n_p, &aligned);
  if (st == HALO_SUCCESS && !aligned) {
    halo_hypre_records_free(records_p);
    *n_p = 0;
    st = HALO_ERR_INCONSISTENT;
  }
  return st;
}

void halo_hypre_records_free(halo_hypre_record **records_p)
{
  if (!records_p) return;
  free(*records_p);
  *records_p = NULL;
}

halo_status halo_hypre_view(MPI_Comm comm, FILE *out)
{
  int rank = 0, size = 1, n = 0, aligned = 0;
  halo_status st = halo_status_agree(comm, out ? HALO_SUCCESS : HALO_ERR_INVALID_ARG);
  if (st != HALO_SUCCESS) return st; /* the communicator, checked as halo_hypre_records does */
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  halo_hypre_record *recs = NULL;
  st = gather(comm, &recs, &n, &aligned);
  if (st != HALO_SUCCESS || rank != 0) {
    free(recs);
    return st;
  }
  const hh_settings *s = hh_settings_get();
  int64_t fw = 0, rv = 0, hy = 0, before = 0;
  for (int i = 0; i < n; i++) before += records[i].n_before_plan;
  fprintf(out, "halo_hypre_view: %d package(s) of matrices on %d rank(s); halo %s%s%s\n", n, size,
          s->on ? "on" : "off", s->on ? "" : ": ",
          s->on ? "" : (s->why_off[0] ? s->why_off : "HALO_HYPRE=0 or halo_hypre_set_enabled(0)"));
  if (!aligned)
    fprintf(out, "halo_hypre_view: (ranks saw different packages: rank 0's own figures)\n");
  fprintf(out,
          "halo_hypre_view: %5s %5s %4s %10s %10s %12s %6s  %-44s %10s %8s %8s %8s %10s %8s  %s\n",
          "setup", "level", "mat", "rows", "cols", "nonzeros", "ranks", "phases", "inter-B",
          "forward", "reverse", "hypre", "xchg-ms", "plan-ms", "plan");
  for (int i = 0; i < n; i++) {
    const halo_hypre_record *r = &recs[i];
    if (!r->planned && !r->left_to_hypre) continue;
    char ph[160] = "-", lvl[16] = "-", set[16] = "-", mod[48] = "", multi[64] = "";
    int64_t inter = 0;
    if (r->planned) {
      snprintf(ph, sizeof ph, "%s", records[i].phases);
      inter = r->inter_node_bytes;
      if (r->modeled > 0) snprintf(mod, sizeof mod, " modeled %.2f us", r->modeled * 1e6);
    }
    if (r->multivector)
      snprintf(multi, sizeof multi, "; %lld of several vectors (up to %d)",
               (long long)r->multivector, r->multivector_k);
    if (r->level >= 0) snprintf(lvl, sizeof lvl, "%d", r->level);
    if (r->setup > 0) snprintf(set, sizeof set, "%d", r->setup);
    fprintf(out,
            "halo_hypre_view: %5s %5s %4c %10lld %10lld %12lld %6lld  %-44s %10lld %8lld %8lld "
            "%8lld %10.3f %8.3f  %s%s%s\n",
            set, lvl, r->matrix, (long long)r->rows, (long long)r->cols, (long long)r->nonzeros,
            (long long)r->ranks_with_rows, ph, (long long)inter, (long long)r->forward,
            (long long)r->reverse, (long long)r->left_to_hypre, 1e3 * r->seconds,
            1e3 * r->plan_seconds, r->plan, mod, multi);
    fw += r->forward;
    rv += r->reverse;
    hy += r->left_to_hypre;
  }
  fprintf(out,
          "halo_hypre_view: exchanges through halo: %lld forward, %lld reverse; of matrices' "
          "packages left to hypre: %lld (%lld before their plans: HALO_HYPRE_PLAN_AFTER); of "
          "other packages: %lld of values (%lld in AMG set-ups), %lld of integers (rank 0)\n",
          (long long)fw, (long long)rv, (long long)hy, (long long)before, (long long)other_values,
          (long long)other_values_setup, (long long)other_setup);
  /* the plans' set-up by part (each plan's most of any rank), all and the first made */
  double sum[HH_PARTS] = {0}, total = 0;
  int first = -1;
  for (int i = 0; i < n; i++) {
    if (!records[i].plan_order) continue;
    if (first < 0 || records[i].plan_order < records[first].plan_order) first = i;
    for (int k = 0; k < HH_PARTS; k++) sum[k] += records[i].parts[k];
    total += recs[i].plan_seconds;
  }
  if (first >= 0) {
    for (int w = 0; w < 2; w++) {
      const double *p = w ? records[first].parts : sum;
      fprintf(out, "halo_hypre_view: %s (ms, by part):", w ? "the first plan's set-up" : "plans' set-up");
      for (int k = 0; k < HH_PARTS; k++)
        fprintf(out, " %s %.3f", halo_setup_part_name((halo_setup_part)k), 1e3 * p[k]);
      fprintf(out, "; in the adapter, all told: %.3f\n",
              1e3 * (w ? recs[first].plan_seconds : total));
    }
  }
  fflush(out);
  free(recs);
  return HALO_SUCCESS;
}

/* MPI_Finalize deletes MPI_COMM_SELF's attributes first, while MPI still
 * works: the report is printed from there. */
static int at_finalize(MPI_Comm comm, int keyval, void *value, void *extra)
{
  (void)comm;
  (void)value;
  (void)extra;
  int init = 0;
  MPI_Initialized(&init);
  if (init) halo_hypre_view(MPI_COMM_WORLD, stdout);
  MPI_Comm_free_keyval(&keyval); /* freed once this deletion is over */
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
