/* The report shared by halo spmv and halo simulate. */
#include "report.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>

#include "json.h"

int parse_strategies(args_t *a, const char *name, halo_strategy *list, int *n) {
  char item[64];
  *n = 0;
  for (const char *p = name;; p++) { /* a comma-separated list; "all": the four */
    const char *e = strchr(p, ',');
    const size_t len = e ? (size_t)(e - p) : strlen(p);
    snprintf(item, sizeof item, "%.*s", (int)(len < sizeof item ? len : sizeof item - 1), p);
    halo_strategy one;
    if (strcmp(item, "all") == 0) {
      for (int s = 0; s < HALO_N_STRATEGIES; s++)
        if (*n < HALO_N_STRATEGIES + 1) list[(*n)++] = (halo_strategy)s;
    } else if (halo_strategy_from_name(item, &one) != HALO_SUCCESS) {
      args_error(a, "--strategy: %s, or all", halo_last_error());
      return 0;
    } else if (*n < HALO_N_STRATEGIES + 1) { /* a full list takes no more */
      list[(*n)++] = one;
    }
    if (!e) break;
    p = e;
  }
  return 1;
}

int parse_transports(args_t *a, const char *name, int device, halo_transport *list, int *n) {
  *n = 0;
  if (strcmp(name, "all") == 0) { /* the registry's transports of the memory, built in */
    for (int t = 0; t < HALO_N_TRANSPORTS; t++) {
      halo_transport_info info;
      if (halo_transport_get_info((halo_transport)t, &info) != HALO_SUCCESS) continue; /* auto */
      if (!info.compiled || !(device ? info.device_memory : info.host_memory)) continue;
      list[(*n)++] = (halo_transport)t;
    }
    return 1;
  }
  if (halo_transport_from_name(name, &list[0]) != HALO_SUCCESS) {
    args_error(a, "--transport: %s, or all", halo_last_error());
    return 0;
  }
  *n = 1;
  return 1;
}

static int64_t sum_phases(const report_row *w, int which) {
  int64_t t = 0;
  for (int k = 0; k < w->stats.n_phases; k++) {
    const halo_phase_stats *p = &w->phase[k];
    t += which == 0   ? p->messages
         : which == 1 ? p->bytes
         : which == 2 ? p->inter_node_messages
                      : p->inter_node_bytes;
  }
  return t;
}

/* The global phase of a schedule (the one that crosses the network). */
static const halo_phase_stats *global_phase(const report_row *w) {
  for (int k = 0; k < w->stats.n_phases; k++)
    if (w->phase[k].scope == HALO_SCOPE_GLOBAL) return &w->phase[k];
  return &w->phase[0];
}

/* Whether the row has room for its plan's phases (else said on stderr). */
static int phases_fit(const report_row *w) {
  if (w->stats.n_phases <= REPORT_MAX_PHASES) return 1;
  fprintf(stderr, "halo: a plan of %d phases: the report holds %d (tools/report.h)\n",
          w->stats.n_phases, REPORT_MAX_PHASES);
  return 0;
}

halo_status report_row_plan_phases(report_row *w, halo_plan plan) {
  if (!phases_fit(w)) return HALO_ERR_INTERNAL;
  for (int k = 0; k < w->stats.n_phases; k++) {
    halo_status st = halo_plan_phase_stats(plan, k, &w->phase[k]);
    if (st != HALO_SUCCESS) return st;
  }
  return HALO_SUCCESS;
}

halo_status report_row_sim_phases(report_row *w, halo_sim sim) {
  if (!phases_fit(w)) return HALO_ERR_INTERNAL;
  for (int k = 0; k < w->stats.n_phases; k++) {
    halo_status st = halo_sim_phase_stats(sim, k, &w->phase[k]);
    if (st != HALO_SUCCESS) return st;
  }
  return HALO_SUCCESS;
}

/* The modeled exchange times of every strategy and path (--params); halo
 * spmv adds the measured exchange time and their ratio. */
static void print_model(const report *r) {
  const int timed = r->rows[0].timed;
  int n_phases = 0;
  for (int i = 0; i < r->n_rows; i++)
    if (r->rows[i].stats.n_phases > n_phases) n_phases = r->rows[i].stats.n_phases;
  printf("\nmodeled exchange, machine parameters %s; ", r->params);
  if (timed)
    printf("%s memory, this run's layout\n", halo_memory_name(r->memory));
  else if (r->gpus_per_node > 0)
    printf("device memory, %d GPU%s per node, at most %d rank%s per GPU\n", r->gpus_per_node,
           r->gpus_per_node == 1 ? "" : "s", r->ranks_per_gpu, r->ranks_per_gpu == 1 ? "" : "s");
  else
    printf("host memory\n");
  printf("%-9s %-10s %11s", "strategy", "transport", "model (s)");
  if (timed) printf(" %12s %9s", "exchange (s)", "model/exch");
  for (int k = 0; k < n_phases; k++) printf("   phase %d", k);
  printf("\n");
  for (int i = 0; i < r->n_rows; i++) {
    const report_row *w = &r->rows[i];
    for (int m = 0; m < w->n_model; m++) {
      printf("%-9s %-10s %11.3e", halo_strategy_name(w->strategy),
             halo_transport_name(w->model[m].transport), w->model[m].seconds);
      if (timed)
        printf(" %12.3e %9.3f", w->t_exchange,
               w->t_exchange > 0 ? w->model[m].seconds / w->t_exchange : 0.0);
      for (int k = 0; k < w->stats.n_phases; k++) printf(" %9.3e", w->model[m].phase[k]);
      printf("\n");
    }
  }
}

/* spmv: a plan's time to solution, set-up + the timed SpMVs. The set-up counts the matrix
 * (t_matrix), what the first plan made for the later ones (t_first_shared) and the plan's own
 * creation (t_plan); the SpMVs are iterations x t_spmv (--rounds: the median round's).
 * Reading or generating the matrix (t_load) is the driver's, any program's: not counted. */
typedef struct {
  double setup, spmvs, total;
} row_tts;

static row_tts tts_of(const report *r, const report_row *w) {
  row_tts t;
  t.setup = r->t_matrix + r->t_first_shared + w->t_plan;
  t.spmvs = (double)r->iterations * w->t_spmv;
  t.total = t.setup + t.spmvs;
  return t;
}

/* spmv: each plan's time to solution and its parts, what the report gives first. */
static void print_tts(const report *r) {
  printf("time to solution: set-up + %lld SpMVs (s, the most of any rank)\n",
         (long long)r->iterations);
  printf("%-9s %-10s %12s %10s %10s %10s\n", "strategy", "transport", "solution (s)", "set-up (s)",
         "plan (s)", "SpMVs (s)");
  for (int i = 0; i < r->n_rows; i++) {
    const report_row *w = &r->rows[i];
    const row_tts t = tts_of(r, w);
    printf("%-9s %-10s %12.3e %10.3e %10.3e %10.3e%s\n", halo_strategy_name(w->strategy),
           halo_transport_name(w->transport), t.total, t.setup, w->t_plan, t.spmvs,
           w->asked_auto ? "  (auto's choice)" : "");
  }
  printf("(set-up = the matrix, halo_matrix_create_csr, %.3e + the first plan's pattern and\n"
         "communicator state (nodes, device), which later plans of the matrix reuse, %.3e (the\n"
         "reference standard plan: %.3e in all) + plan, the plan's own halo_plan_create, auto's\n"
         "choice included; SpMVs = %lld x the SpMV time below%s; not counted: the %lld warm-up\n"
         "and the checking calls, the matrix %s in %.3f s)\n",
         r->t_matrix, r->t_first_shared, r->t_first_plan, (long long)r->iterations,
         r->rounds > 1 ? " (the median round's)" : "", (long long)r->warmup,
         r->M->is_gen ? "generated" : "read and distributed", r->t_load);
}

void report_print(const report *r) {
  const input_matrix *M = r->M;
  const halo_stats *s0 = &r->rows[0].stats;
  printf("halo %s: %s: %lld x %lld, %lld entries; %d ranks on %d node%s (at most %d per node); "
         "partition %s\n",
         r->command, M->name, (long long)M->n_rows, (long long)M->n_cols, (long long)M->nnz,
         r->ranks, s0->nodes, s0->nodes == 1 ? "" : "s", s0->ranks_per_node,
         halo_partition_name(r->in->partition));
  printf("%s memory; message_cap %lld bytes; duplicate removal %s", halo_memory_name(r->memory),
         (long long)r->opts->message_cap, r->opts->remove_duplicates ? "on" : "off");
  if (r->rows[0].timed)
    printf("; %lld iterations%s; %s %.3f s, matrix split %.3f s", (long long)r->iterations,
           r->rounds > 1 ? " a round, the median of the rounds" : "",
           M->is_gen ? "generated in" : "read and distributed in", r->t_load, r->t_matrix);
  else
    printf("; %s %.3f s, patterns of all ranks %.3f s", M->is_gen ? "generated in" : "read in",
           r->t_load, r->t_patterns);
  if (M->measured) {
    const halo_partition_quality *q = &M->quality, *c = &M->contiguous;
    printf("\npartition metis: edge cut %lld, communication volume %lld values (%lld bytes), "
           "largest part %lld rows\n"
           "partition rows:  edge cut %lld, communication volume %lld values (%lld bytes), "
           "largest part %lld rows",
           (long long)q->edge_cut, (long long)q->ghosts, (long long)(8 * q->ghosts),
           (long long)q->max_rows, (long long)c->edge_cut, (long long)c->ghosts,
           (long long)(8 * c->ghosts), (long long)c->max_rows);
  }
  printf("\n\n");
  if (r->rows[0].timed) {
    print_tts(r);
    printf("\n");
    printf("%-9s %-10s %10s %12s %10s %10s %8s %10s %10s %11s %9s %8s\n", "strategy", "transport",
           "SpMV (s)", "exchange (s)", "local (s)", "setup (s)", "messages", "bytes", "inter msgs",
           "inter bytes", "max inter", "same as");
    printf("%-9s %-10s %10s %12s %10s %10s %8s %10s %10s %11s %9s %8s\n", "", "", "", "", "", "",
           "", "", "", "", "msgs/node", "standard");
  } else {
    printf("%-9s %9s %11s %10s %12s %10s %12s %10s %9s\n", "strategy", "messages", "bytes",
           "inter msgs", "inter bytes", "max inter", "max inter", "cap used", "sim (s)");
    printf("%-9s %9s %11s %10s %12s %10s %12s %10s %9s\n", "", "", "", "", "", "msgs/node",
           "bytes/node", "(bytes)", "");
  }
  for (int i = 0; i < r->n_rows; i++) {
    const report_row *w = &r->rows[i];
    const halo_stats *s = &w->stats;
    const halo_phase_stats *g = global_phase(w);
    if (w->timed)
      printf("%-9s %-10s %10.3e %12.3e %10.3e %10.3e %8lld %10lld %10lld %11lld %9lld %8s\n",
             halo_strategy_name(w->strategy), halo_transport_name(w->transport), w->t_spmv,
             w->t_exchange, w->t_local, s->setup_seconds, (long long)sum_phases(w, 0),
             (long long)sum_phases(w, 1), (long long)sum_phases(w, 2), (long long)sum_phases(w, 3),
             (long long)g->max_inter_node_messages_per_node,
             !w->compared   ? "-"
             : w->identical ? "yes"
                            : "NO");
    else
      printf("%-9s %9lld %11lld %10lld %12lld %10lld %12lld %10lld %9.3f\n",
             halo_strategy_name(w->strategy), (long long)sum_phases(w, 0),
             (long long)sum_phases(w, 1), (long long)sum_phases(w, 2), (long long)sum_phases(w, 3),
             (long long)g->max_inter_node_messages_per_node,
             (long long)g->max_inter_node_bytes_per_node, (long long)s->message_cap_used,
             s->setup_seconds);
  }
  if (r->params) print_model(r);
  for (int i = 0; i < r->n_rows; i++)
    if (r->rows[i].asked_auto) printf("\nauto chose %s\n", r->rows[i].describe);
  printf("\n%-9s %-10s %5s %6s %9s %11s %9s %11s %10s %12s %10s %12s\n", "strategy", "transport",
         "phase", "scope", "messages", "bytes", "max msgs", "max bytes", "inter msgs",
         "inter bytes", "max inter", "largest");
  printf("%-9s %-10s %5s %6s %9s %11s %9s %11s %10s %12s %10s %12s\n", "", "", "", "", "", "",
         "per rank", "per rank", "", "", "msgs/node", "msg (bytes)");
  for (int i = 0; i < r->n_rows; i++) {
    const halo_stats *s = &r->rows[i].stats;
    for (int k = 0; k < s->n_phases; k++) {
      const halo_phase_stats *p = &r->rows[i].phase[k];
      printf("%-9s %-10s %5d %6s %9lld %11lld %9lld %11lld %10lld %12lld %10lld %12lld\n",
             halo_strategy_name(r->rows[i].strategy), halo_transport_name(p->transport), k,
             halo_scope_name(p->scope), (long long)p->messages, (long long)p->bytes,
             (long long)p->max_messages_per_rank, (long long)p->max_bytes_per_rank,
             (long long)p->inter_node_messages, (long long)p->inter_node_bytes,
             (long long)p->max_inter_node_messages_per_node, (long long)p->max_message_bytes);
    }
  }
  if (r->unit) {
    printf("\nunit %s (%lld bytes an entry; the bytes above are one double's): the exchange "
           "per call, its ghosts against the entries' values\n",
           r->unit, (long long)r->unit_bytes);
    for (int i = 0; i < r->n_rows; i++)
      if (r->rows[i].timed && r->rows[i].unit_refused)
        printf("%-9s %-10s not run: the transport moves one double an entry\n",
               halo_strategy_name(r->rows[i].strategy), halo_transport_name(r->rows[i].transport));
      else if (r->rows[i].timed)
        printf("%-9s %-10s %12.3e s  %s\n", halo_strategy_name(r->rows[i].strategy),
               halo_transport_name(r->rows[i].transport), r->rows[i].t_unit,
               r->rows[i].unit_right ? "right" : "WRONG");
  }
  if (r->checked)
    printf("\ncheck: max relative error %.3e, tol %.1e: %s\n", r->check_err, r->tol,
           r->check_err <= r->tol ? "passed" : "FAILED");
}

void report_json(FILE *f, const report *r) {
  const input_matrix *M = r->M;
  json_writer w;
  json_init(&w, f);
  json_begin_object(&w, NULL);
  json_string(&w, "command", r->command);
  json_string(&w, "halo_version", halo_version());
  json_begin_object(&w, "matrix");
  json_string(&w, "name", M->name);
  json_string(&w, "source", M->is_gen ? "generated" : "file");
  json_int(&w, "rows", M->n_rows);
  json_int(&w, "cols", M->n_cols);
  json_int(&w, "nnz", M->nnz);
  json_end_object(&w);
  json_int(&w, "ranks", r->ranks);
  json_int(&w, "nodes", r->n_rows ? r->rows[0].stats.nodes : 0);
  json_int(&w, "ranks_per_node", r->n_rows ? r->rows[0].stats.ranks_per_node : 0);
  json_string(&w, "partition", halo_partition_name(r->in->partition));
  json_string(&w, "memory", halo_memory_name(r->memory));
  json_int(&w, "message_cap", r->opts->message_cap);
  json_bool(&w, "remove_duplicates", r->opts->remove_duplicates);
  json_begin_array(&w, "row_begin");
  for (int q = 0; q <= r->ranks; q++) json_int(&w, NULL, M->row_begin[q]);
  json_end_array(&w);
  if (M->measured) {
    const halo_partition_quality *qs[2] = {&M->quality, &M->contiguous};
    json_begin_object(&w, "partition_quality");
    for (int i = 0; i < 2; i++) {
      json_begin_object(&w, i == 0 ? "metis" : "rows");
      json_int(&w, "edge_cut", qs[i]->edge_cut);
      json_int(&w, "ghosts", qs[i]->ghosts);
      json_int(&w, "bytes", 8 * qs[i]->ghosts);
      json_int(&w, "max_rows", qs[i]->max_rows);
      json_end_object(&w);
    }
    json_end_object(&w);
  }
  if (r->n_rows && r->rows[0].timed) {
    json_double(&w, "load_s", r->t_load);
    json_double(&w, "matrix_s", r->t_matrix);
    json_double(&w, "first_plan_create_s", r->t_first_plan);
    json_double(&w, "first_plan_shared_s", r->t_first_shared);
    json_int(&w, "iterations", r->iterations);
    json_int(&w, "warmup", r->warmup);
    json_int(&w, "rounds", r->rounds > 1 ? r->rounds : 1);
  } else {
    json_double(&w, "load_s", r->t_load);
    json_double(&w, "patterns_s", r->t_patterns);
  }
  if (r->params) {
    json_begin_object(&w, "model");
    json_string(&w, "params", r->params);
    json_int(&w, "gpus_per_node", r->gpus_per_node);
    if (r->gpus_per_node > 0) json_int(&w, "ranks_per_gpu", r->ranks_per_gpu);
    json_end_object(&w);
  }
  if (r->unit) {
    json_begin_object(&w, "unit");
    json_string(&w, "name", r->unit);
    json_int(&w, "bytes", r->unit_bytes);
    json_end_object(&w);
  }
  if (r->checked) {
    json_begin_object(&w, "check");
    json_double(&w, "max_rel_error", r->check_err);
    json_double(&w, "tol", r->tol);
    json_bool(&w, "passed", r->check_err <= r->tol);
    json_end_object(&w);
  }
  json_begin_array(&w, "strategies");
  for (int i = 0; i < r->n_rows; i++) {
    const report_row *row = &r->rows[i];
    const halo_stats *s = &row->stats;
    json_begin_object(&w, NULL);
    json_string(&w, "name", halo_strategy_name(row->strategy));
    json_string(&w, "transport", halo_transport_name(row->transport));
    json_int(&w, "message_cap_used", s->message_cap_used);
    json_int(&w, "ghosts", s->ghosts);
    if (row->timed) {
      const row_tts t = tts_of(r, row);
      json_double(&w, "time_to_solution_s", t.total);
      json_double(&w, "tts_setup_s", t.setup);
      json_double(&w, "tts_spmvs_s", t.spmvs);
      json_double(&w, "plan_create_s", row->t_plan);
      json_double(&w, "setup_s", s->setup_seconds);
      json_double(&w, "spmv_s", row->t_spmv);
      json_double(&w, "exchange_s", row->t_exchange);
      json_double(&w, "local_s", row->t_local);
      if (r->unit) {
        if (row->unit_refused) {
          json_bool(&w, "unit_refused", 1);
        } else {
          json_double(&w, "unit_exchange_s", row->t_unit);
          json_bool(&w, "unit_ghosts_right", row->unit_right);
        }
      }
      if (r->rounds > 1) {
        json_double(&w, "spmv_s_fastest_round", row->t_spmv_lo);
        json_double(&w, "spmv_s_slowest_round", row->t_spmv_hi);
      }
    } else {
      json_double(&w, "simulate_s", s->setup_seconds);
    }
    if (row->compared) json_bool(&w, "identical_to_standard", row->identical);
    if (row->asked_auto) json_string(&w, "auto", row->describe);
    if (row->n_model) {
      json_begin_array(&w, "modeled");
      for (int m = 0; m < row->n_model; m++) {
        json_begin_object(&w, NULL);
        json_string(&w, "transport", halo_transport_name(row->model[m].transport));
        json_double(&w, "exchange_s", row->model[m].seconds);
        json_begin_array(&w, "phases_s");
        for (int k = 0; k < s->n_phases; k++) json_double(&w, NULL, row->model[m].phase[k]);
        json_end_array(&w);
        json_end_object(&w);
      }
      json_end_array(&w);
    }
    json_begin_array(&w, "phases");
    for (int k = 0; k < s->n_phases; k++) {
      const halo_phase_stats *p = &row->phase[k];
      json_begin_object(&w, NULL);
      json_string(&w, "scope", halo_scope_name(p->scope));
      json_int(&w, "messages", p->messages);
      json_int(&w, "bytes", p->bytes);
      json_int(&w, "max_messages_per_rank", p->max_messages_per_rank);
      json_int(&w, "max_bytes_per_rank", p->max_bytes_per_rank);
      json_int(&w, "inter_node_messages", p->inter_node_messages);
      json_int(&w, "inter_node_bytes", p->inter_node_bytes);
      json_int(&w, "max_message_bytes", p->max_message_bytes);
      if (p->scope == HALO_SCOPE_GLOBAL) {
        json_int(&w, "max_inter_node_messages_per_node", p->max_inter_node_messages_per_node);
        json_int(&w, "max_inter_node_bytes_per_node", p->max_inter_node_bytes_per_node);
      }
      json_end_object(&w);
    }
    json_end_array(&w);
    json_end_object(&w);
  }
  json_end_array(&w);
  json_end_object(&w);
}

/* ---- CSV ------------------------------------------------------------------ */

/* A text field: quoted when it holds a comma, a quote or a line break. */
static void csv_text(FILE *f, const char *s) {
  if (!strpbrk(s, ",\"\r\n")) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

/* A number as the JSON has it; empty when not finite. */
static void csv_double(FILE *f, double v) {
  if (isfinite(v)) fprintf(f, "%.9g", v);
}

void report_csv(FILE *f, const report *r) {
  const input_matrix *M = r->M;
  fputs("command,matrix,rows,cols,nnz,ranks,nodes,ranks_per_node,partition,memory,message_cap,"
        "remove_duplicates,strategy,transport,auto,message_cap_used,ghosts,phases,messages,bytes,"
        "inter_node_messages,inter_node_bytes,max_inter_node_messages_per_node,"
        "max_inter_node_bytes_per_node,setup_s,simulate_s,spmv_s,exchange_s,local_s,"
        "identical_to_standard,model_params,model_transport,model_exchange_s,"
        "time_to_solution_s,tts_setup_s,tts_spmvs_s,plan_create_s\n",
        f);
  for (int i = 0; i < r->n_rows; i++) {
    const report_row *w = &r->rows[i];
    const halo_stats *s = &w->stats;
    const halo_phase_stats *g = global_phase(w);
    for (int m = 0; m < (w->n_model > 0 ? w->n_model : 1); m++) {
      fprintf(f, "%s,", r->command);
      csv_text(f, M->name);
      fprintf(f, ",%lld,%lld,%lld,%d,%d,%d,%s,%s,%lld,%s,%s,%s,", (long long)M->n_rows,
              (long long)M->n_cols, (long long)M->nnz, r->ranks, s->nodes, s->ranks_per_node,
              halo_partition_name(r->in->partition), halo_memory_name(r->memory),
              (long long)r->opts->message_cap, r->opts->remove_duplicates ? "true" : "false",
              halo_strategy_name(w->strategy), halo_transport_name(w->transport));
      if (w->asked_auto) csv_text(f, w->describe);
      fprintf(f, ",%lld,%lld,%d,%lld,%lld,%lld,%lld,%lld,%lld,", (long long)s->message_cap_used,
              (long long)s->ghosts, s->n_phases, (long long)sum_phases(w, 0),
              (long long)sum_phases(w, 1), (long long)sum_phases(w, 2), (long long)sum_phases(w, 3),
              (long long)g->max_inter_node_messages_per_node,
              (long long)g->max_inter_node_bytes_per_node);
      if (w->timed) csv_double(f, s->setup_seconds);
      fputc(',', f);
      if (!w->timed) csv_double(f, s->setup_seconds);
      fputc(',', f);
      if (w->timed) {
        csv_double(f, w->t_spmv);
        fputc(',', f);
        csv_double(f, w->t_exchange);
        fputc(',', f);
        csv_double(f, w->t_local);
        fputc(',', f);
      } else {
        fputs(",,,", f);
      }
      if (w->compared) fputs(w->identical ? "true" : "false", f);
      fputc(',', f);
      if (w->n_model > 0) {
        csv_text(f, r->params);
        fprintf(f, ",%s,", halo_transport_name(w->model[m].transport));
        csv_double(f, w->model[m].seconds);
      } else {
        fputs(",,", f);
      }
      if (w->timed) {
        const row_tts t = tts_of(r, w);
        const double v[4] = {t.total, t.setup, t.spmvs, w->t_plan};
        for (int k = 0; k < 4; k++) {
          fputc(',', f);
          csv_double(f, v[k]);
        }
      } else {
        fputs(",,,,", f);
      }
      fputc('\n', f);
    }
  }
}

/* Write one report file; 0 on success, else the reason printed. */
static int save_one(const report *r, const char *path, void (*write)(FILE *, const report *)) {
  errno = 0;
  FILE *f = fopen(path, "w");
  if (!f) {
    driver_error(0, r->command, "cannot write %s: %s", path, strerror(errno ? errno : EIO));
    return 1;
  }
  write(f, r);
  int bad = ferror(f);
  if (fclose(f) != 0) bad = 1;
  if (bad) {
    struct stat sb;
    driver_error(0, r->command, "cannot write %s: %s", path, strerror(errno ? errno : EIO));
    if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode)) remove(path); /* never a device */
  }
  return bad;
}

int report_save(const report *r, const output_opts *out) {
  int bad = 0;
  if (out->json_path) bad |= save_one(r, out->json_path, report_json);
  if (out->csv_path) bad |= save_one(r, out->csv_path, report_csv);
  return bad ? EXIT_ERROR : EXIT_OK;
}
