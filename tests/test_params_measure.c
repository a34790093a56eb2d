/* halo_params_measure: a small measurement on virtual nodes gives every rank
 * the same set, bit for bit; the measured cpu.* keys are finite, >= 0 and
 * not the base's; the notes name the keys copied from the base (and those
 * keys hold the base's values); a bad option fails on every rank with the
 * same status and a message naming it, also when one rank alone gives it;
 * the written file reads back to the same values, bit for bit, with each
 * note before its keys; the report comes on rank 0 alone. */
#define _POSIX_C_SOURCE 200809L /* fnmatch */
#include <fnmatch.h>

#include "halo/model.h"
#include "test_util.h"

static int n_lines, bad_lines; /* report lines seen by this rank, and ones without '\n' */

static void count_line(const char *line, void *arg) {
  (void)arg;
  n_lines++;
  const size_t n = strlen(line);
  if (n == 0 || line[n - 1] != '\n') bad_lines++;
}

static int same_postal(const halo_postal *a, const halo_postal *b, int n) {
  return memcmp(a, b, (size_t)n * sizeof *a) == 0; /* two doubles each: no padding */
}

/* Every value of two sets, bit for bit. */
static int same_params(const halo_params *a, const halo_params *b) {
  return strcmp(a->name, b->name) == 0 && a->sockets_per_node == b->sockets_per_node &&
         a->short_max == b->short_max && a->eager_max == b->eager_max &&
         same_postal(&a->cpu[0][0], &b->cpu[0][0], HALO_N_PROTO * HALO_N_LOC) &&
         same_postal(&a->gpu[0][0], &b->gpu[0][0], HALO_N_PROTO * HALO_N_LOC) &&
         same_postal(a->h2d, b->h2d, 2) && same_postal(a->d2h, b->d2h, 2) &&
         memcmp(&a->injection_beta, &b->injection_beta, sizeof(double)) == 0 &&
         memcmp(&a->staged_alpha, &b->staged_alpha, sizeof(double)) == 0 &&
         a->have_ipc == b->have_ipc && (!a->have_ipc || same_postal(&a->ipc, &b->ipc, 1)) &&
         a->have_own[HALO_TRANSPORT_NVSHMEM] == b->have_own[HALO_TRANSPORT_NVSHMEM] &&
         (!a->have_own[HALO_TRANSPORT_NVSHMEM] ||
          same_postal(&a->own[HALO_TRANSPORT_NVSHMEM], &b->own[HALO_TRANSPORT_NVSHMEM], 1)) &&
         a->have_own[HALO_TRANSPORT_RMA] == b->have_own[HALO_TRANSPORT_RMA] &&
         (!a->have_own[HALO_TRANSPORT_RMA] ||
          same_postal(&a->own[HALO_TRANSPORT_RMA], &b->own[HALO_TRANSPORT_RMA], 1));
}

static int same_measured(const halo_params_measured *a, const halo_params_measured *b) {
  if (!same_params(&a->params, &b->params) || a->ranks != b->ranks || a->nodes != b->nodes ||
      a->n_notes != b->n_notes)
    return 0;
  for (int i = 0; i < a->n_notes; i++)
    if (strcmp(a->note[i].keys, b->note[i].keys) || strcmp(a->note[i].text, b->note[i].text))
      return 0;
  return 1;
}

static const halo_params_note *find_note(const halo_params_measured *m, const char *keys) {
  for (int i = 0; i < m->n_notes; i++)
    if (strcmp(m->note[i].keys, keys) == 0) return &m->note[i];
  return NULL;
}

/* Rank 0's result on every rank: the same as this rank's, bit for bit. */
static void check_same_everywhere(MPI_Comm comm, const halo_params_measured *m) {
  halo_params_measured r0 = *m;
  MPI_Bcast(&r0, (int)sizeof r0, MPI_BYTE, 0, comm);
  CHECK(same_measured(&r0, m));
}

/* The file: reads back to the same set; the header and each note before its keys. */
static void check_file(const halo_params_measured *m) {
  FILE *f = tmpfile();
  CHECK(f);
  CHECK_OK(halo_params_write_measured(m, "first header line\nsecond one", f));
  const long n = ftell(f);
  CHECK(n > 0);
  char *text = calloc((size_t)n + 1, 1);
  rewind(f);
  CHECK(fread(text, 1, (size_t)n, f) == (size_t)n);
  fclose(f);
  const char *header = "# first header line\n# second one\n";
  CHECK(strncmp(text, header, strlen(header)) == 0);
  halo_params back;
  CHECK_OK(halo_params_parse(text, "written", &back));
  CHECK(same_params(&back, &m->params));
  /* each key line a note is about: its first matching note stands on a '#'
   * line before it, after the previous key line or the note before */
  const char *prev = NULL; /* the note text last written */
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    if (line[0] == '#') {
      prev = line;
      continue;
    }
    char key[64];
    CHECK(sscanf(line, "%63s", key) == 1);
    for (int i = 0; i < m->n_notes; i++)
      if (fnmatch(m->note[i].keys, key, 0) == 0) {
        CHECK_MSG(prev && strcmp(prev + 2, m->note[i].text) == 0, "no note '%s' before %s",
                  m->note[i].text, key);
        break;
      }
  }
  free(text);
}

/* A measurement on virtual nodes of rpn ranks, no devices. */
static void measure_on(MPI_Comm comm, int rpn) {
  int rank, P;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &P);
  halo_params base;
  CHECK_OK(halo_params_builtin("lassen", &base));
  halo_params_measure_options o = halo_params_measure_options_default();
  o.ranks_per_node = rpn;
  o.min_bytes = 8, o.max_bytes = 4096, o.short_max = 64, o.eager_max = 512;
  o.iterations = 3;
  o.device = 0;
  o.name = "small";
  o.report = count_line;
  n_lines = bad_lines = 0;
  halo_params_measured m;
  CHECK_OK(halo_params_measure(comm, &o, &m));
  /* the report on rank 0 alone, in lines */
  CHECK(rank == 0 ? n_lines > 0 : n_lines == 0);
  CHECK(bad_lines == 0);
  check_same_everywhere(comm, &m);
  const halo_params *p = &m.params;
  CHECK(strcmp(p->name, "small") == 0 && p->short_max == 64 && p->eager_max == 512);
  CHECK(m.ranks == P && m.nodes == (P + rpn - 1) / rpn);
  /* cpu.*: measured, finite, >= 0, not the base's */
  int differ = 0;
  for (int q = 0; q < HALO_N_PROTO; q++)
    for (int l = 0; l < HALO_N_LOC; l++) {
      const halo_postal *v = &p->cpu[q][l];
      CHECK(isfinite(v->alpha) && isfinite(v->beta) && v->alpha >= 0 && v->beta >= 0);
      differ += !same_postal(v, &base.cpu[q][l], 1);
    }
  CHECK(differ > 0);
  /* what was not measured: from the base, each group with its note */
  static const char *const groups[] = {"gpu.*", "copy.*", "staged.*"};
  for (int i = 0; i < 3; i++) {
    const halo_params_note *n = find_note(&m, groups[i]);
    CHECK_MSG(n && strstr(n->text, "from lassen (option device = 0)"), "no note on %s", groups[i]);
  }
  CHECK(same_postal(&p->gpu[0][0], &base.gpu[0][0], HALO_N_PROTO * HALO_N_LOC));
  CHECK(same_postal(p->h2d, base.h2d, 2) && same_postal(p->d2h, base.d2h, 2));
  CHECK(p->staged_alpha == base.staged_alpha && p->have_ipc == base.have_ipc &&
        p->have_own[HALO_TRANSPORT_NVSHMEM] == base.have_own[HALO_TRANSPORT_NVSHMEM]);
  CHECK(find_note(&m, "*_max"));
  /* one node: the injection from the base; more: measured */
  const halo_params_note *inj = find_note(&m, "injection.*");
  if (rpn >= P) {
    CHECK(inj && strstr(inj->text, "injection.beta: from lassen"));
    CHECK(p->injection_beta == base.injection_beta);
  } else {
    CHECK(!inj && isfinite(p->injection_beta) && p->injection_beta >= 0);
  }
  /* virtual nodes of 1 rank: no partner on rank 0's node, copied from off_node */
  if (rpn == 1) {
    const halo_params_note *n = find_note(&m, "cpu.*.on_socket.*");
    CHECK(n && strstr(n->text, "copied from cpu.*.off_node"));
    for (int q = 0; q < HALO_N_PROTO; q++)
      CHECK(same_postal(&p->cpu[q][HALO_LOC_ON_SOCKET], &p->cpu[q][HALO_LOC_OFF_NODE], 1));
  }
  if (rank == 0) check_file(&m);
}

/* Bad options: the same status on every rank, the message naming the
 * option, and the result left as it was. */
static void check_errors(MPI_Comm comm) {
  int rank, P;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &P);
  halo_params_measured m, before;
  memset(&m, 0x5a, sizeof m);
  before = m;
  halo_params_measure_options o = halo_params_measure_options_default();
  o.iterations = 2, o.max_bytes = 65536, o.device = 0;
  o.min_bytes = 8192, o.max_bytes = 1024;
  CHECK_ERR(halo_params_measure(comm, &o, &m), HALO_ERR_INVALID_ARG,
            "rank 0: min_bytes 8192 must be below max_bytes 1024");
  CHECK_ERR(halo_params_measure_check(&o), HALO_ERR_INVALID_ARG, "min_bytes 8192");
  o.min_bytes = 8, o.max_bytes = 16384; /* the rendezvous range: 16384 alone */
  CHECK_ERR(halo_params_measure(comm, &o, &m), HALO_ERR_INVALID_ARG,
            "the rendezvous range of sizes holds 1 of the 23 sizes from 8 to 16384 bytes");
  CHECK_ERR(halo_params_measure(comm, &o, &m), HALO_ERR_INVALID_ARG, "eager_max");
  o.max_bytes = 65536;
  o.base = "nowhere";
  CHECK_ERR(halo_params_measure(comm, &o, &m), HALO_ERR_IO,
            "rank 0: base: parameter set 'nowhere': not a built-in one");
  o.base = NULL;
  o.name = "two words";
  CHECK_ERR(halo_params_measure(comm, &o, &m), HALO_ERR_INVALID_ARG, "name 'two words'");
  o.name = NULL;
  /* a bad option on the last rank alone: every rank fails, with its message */
  char want[64];
  o.iterations = rank == P - 1 ? 0 : 2;
  snprintf(want, sizeof want, "rank %d: iterations 0: expected 1 or more", P - 1);
  CHECK_ERR(halo_params_measure(comm, &o, &m), HALO_ERR_INVALID_ARG, want);
  /* valid options that differ across ranks */
  o.iterations = rank == P - 1 ? 3 : 2;
  CHECK_ERR(halo_params_measure(comm, &o, &m), HALO_ERR_INCONSISTENT,
            "option iterations differs across ranks (2 to 3)");
  CHECK(memcmp(&m, &before, sizeof m) == 0);
  CHECK_ERR(halo_params_measure(MPI_COMM_SELF, NULL, &m), HALO_ERR_INVALID_ARG,
            "needs at least 2 ranks");
  o = halo_params_measure_options_default();
  CHECK_OK(halo_params_measure_check(&o));
  CHECK(halo_params_measure_check(NULL) == HALO_ERR_INVALID_ARG);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm comm = MPI_COMM_WORLD;
  int P;
  MPI_Comm_size(comm, &P);
  check_errors(comm);
  measure_on(comm, 1); /* every rank a node: off-node pairs and the injection */
  measure_on(comm, 2); /* pairs of ranks: on-node partners too */
  measure_on(comm, P); /* one node: the injection from the base */
  MPI_Finalize();
  return 0;
}
