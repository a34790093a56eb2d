/* Options and settings: every environment variable the library reads maps
 * to a plan option or a named setting, is checked (a malformed value fails on
 * every rank with a message that names the variable and what it takes),
 * gives way to what the caller gives, shows in halo_plan_options_resolve or
 * halo_plan_options_setting, and must agree across ranks (a value on one rank
 * only fails on every rank, naming the option or setting and the variable).
 * The settings string (the field settings, HALO_SETTINGS): its syntax, its
 * order of precedence, and for every declared setting a bad value refused
 * naming it and a value on some ranks only refused as inconsistent. */
#define _POSIX_C_SOURCE 200809L
#include "verify.h"

typedef struct {
  const char *env;  /* the variable */
  const char *good; /* a value it takes */
  const char *bad;  /* one it refuses */
  const char *want; /* what the refusal says */
  int option;       /* 1: it gives an option; 0: a setting */
} variable;

static const variable variables[] = {
    {"HALO_RANKS_PER_NODE", "2", "0", "HALO_RANKS_PER_NODE='0' (option ranks_per_node): expected 1 or more", 1},
    {"HALO_GPU_AWARE_MPI", "0", "yes", "HALO_GPU_AWARE_MPI='yes' (setting device.gpu_aware_mpi): expected 0 or 1", 0},
    {"HALO_LOCAL_KERNEL", "cusparse", "fast", "HALO_LOCAL_KERNEL='fast' (setting spmv.kernel): expected halo or cusparse", 0},
    {"HALO_CUSPARSE_ALG", "1", "3", "HALO_CUSPARSE_ALG='3' (setting spmv.cusparse_alg): expected 1 or 2", 0},
    {"HALO_SPMV_GROUP", "8", "6", "HALO_SPMV_GROUP='6' (setting spmv.group): expected 0 to 32, a power of 2 or 0", 0},
    {"HALO_SPMV_UNROLL", "2", "3", "HALO_SPMV_UNROLL='3' (setting spmv.unroll): expected 1 to 4, a power of 2", 0},
    {"HALO_SPMV_MAX_BLOCKS", "64", "-5", "HALO_SPMV_MAX_BLOCKS='-5' (setting spmv.max_blocks): expected 0 or more", 0},
    {"HALO_SPMV_CARVEOUT", "50", "101", "HALO_SPMV_CARVEOUT='101' (setting spmv.carveout): expected 0 to 100", 0},
    {"HALO_SPMV_LONG_ROW", "4096", "-3", "HALO_SPMV_LONG_ROW='-3' (setting spmv.long_row): expected 0 or more", 0},
    {"HALO_SPMV_PRODUCT_FIRST", "0", "2x", "HALO_SPMV_PRODUCT_FIRST='2x' (setting spmv.product_first): expected 0 or 1", 0},
    {"HALO_COMPUTE_STREAM", "nonblocking", "async", "HALO_COMPUTE_STREAM='async' (setting device.compute_stream): expected blocking or nonblocking", 0},
    {"HALO_TIMELINE", "1", "on", "HALO_TIMELINE='on' (setting device.timeline): expected 0 or 1", 0},
    {"HALO_EXEC_TIMING", "1", "-1", "HALO_EXEC_TIMING='-1' (setting staged.copy_timing): expected 0 or 1", 0},
    {"HALO_IPC_SIGNAL", "host", "gpu", "HALO_IPC_SIGNAL='gpu' (setting ipc.signal): expected host, device or auto", 0},
    {"HALO_AUTOTUNE", "model", "fast", "HALO_AUTOTUNE='fast' (option autotune): expected model or a number, 0 to 1000000", 1},
    {"HALO_EXPECTED_USES", "1000", "0", "HALO_EXPECTED_USES='0' (option expected_uses): expected 1 or more", 1},
    {"HALO_DEBUG_MAX_COUNT", "7", "0", "HALO_DEBUG_MAX_COUNT='0' (setting exec.max_message_count): expected 1 or more", 0},
    {"HALO_UNIT_MAX_BYTES", "16", "4", "HALO_UNIT_MAX_BYTES='4' (setting exec.unit_max_bytes): expected 8 to 1048576", 0},
};

/* Every declared setting: its default resolved, a value of another kind than its default
 * (given on some ranks only), and a value it refuses with the message's end. */
typedef struct {
  const char *name;
  int64_t deflt;
  const char *other;
  int64_t other_value;
  const char *bad, *want;
} declared;

static const declared declared_settings[] = {
    {"spmv.kernel", 0, "cusparse", 1, "fast", "expected halo or cusparse"},
    {"spmv.cusparse_alg", 2, "1", 1, "0", "expected 1 or 2"},
    {"spmv.group", 0, "8", 8, "12", "expected 0 to 32, a power of 2 or 0"},
    {"spmv.unroll", 4, "2", 2, "8", "expected 1 to 4, a power of 2"},
    {"spmv.max_blocks", 0, "64", 64, "-1", "expected 0 or more"},
    {"spmv.carveout", -1, "50", 50, "-1", "expected 0 to 100"},
    {"spmv.long_row", 0, "4096", 4096, "x", "expected 0 or more"},
    {"spmv.product_first", 1, "0", 0, "2", "expected 0 or 1"},
    {"device.compute_stream", 0, "nonblocking", 1, "2", "expected blocking or nonblocking"},
    {"device.timeline", 0, "1", 1, "yes", "expected 0 or 1"},
    {"device.gpu_aware_mpi", -1, "0", 0, "-1", "expected 0 or 1"},
    {"staged.copy_timing", 0, "1", 1, "", "expected 0 or 1"},
    {"ipc.signal", 2, "host", 0, "gpu", "expected host, device or auto"},
    {"nccl.background", 1, "0", 0, "2", "expected 0 or 1"},
    {"auto.trial", 1, "plan", 0, "later", "expected plan or calls"},
    {"exec.max_message_count", 2147483647, "7", 7, "0", "expected 1 or more"},
    {"exec.unit_max_bytes", 8, "112", 112, "4", "expected 8 to 1048576"},
};
enum { N_DECLARED = sizeof declared_settings / sizeof declared_settings[0] };

static int64_t setting(const halo_plan_options *o, const char *name) {
  int64_t v = -99;
  CHECK_OK(halo_plan_options_setting(o, name, &v));
  return v;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank, P;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &P);
  halo_gen g;
  halo_csr rows;
  int64_t *rb;
  CHECK_OK(halo_gen_parse("lap2d:10", &g));
  CHECK_OK(halo_gen_distributed(comm, &g, HALO_PARTITION_ROWS, NULL, &rb, &rows));
  const int64_t b = rb[rank], e = rb[rank + 1];
  halo_matrix A;
  halo_plan plan;
  CHECK_OK(halo_matrix_create_csr(comm, b, e, b, e, rows.row_ptr, rows.col_ids, rows.values,
                                  HALO_MEMORY_HOST, &A));
  const halo_plan_options d = halo_plan_options_default();
  halo_plan_options r;
  /* the defaults, resolved */
  CHECK_OK(halo_plan_options_resolve(&d, &r));
  CHECK(r.max_exchanges == 1 && r.reverse == 1 && r.settings == NULL);
  CHECK(r.params == NULL && r.ranks_per_node == 0);
  CHECK(r.strategy == HALO_STRATEGY_AUTO && r.autotune == HALO_AUTOTUNE_CLOSE);
  /* the declared settings are the ones this test knows, each with its default */
  CHECK(halo_setting_count() == N_DECLARED);
  for (int i = 0; i < halo_setting_count(); i++) {
    halo_setting_info info;
    CHECK_OK(halo_setting_get_info(i, &info));
    int known = 0;
    for (int k = 0; k < N_DECLARED; k++)
      if (strcmp(declared_settings[k].name, info.name) == 0) {
        known = 1;
        CHECK(setting(&d, info.name) == declared_settings[k].deflt);
      }
    CHECK(known && info.component && info.doc && info.deflt && info.values[0]);
  }
  /* a transport's descriptor lists the settings of its component, and only those */
  for (int t = 0; t < HALO_N_TRANSPORTS; t++) {
    halo_transport_info ti;
    if (halo_transport_get_info((halo_transport)t, &ti) != HALO_SUCCESS) continue; /* auto */
    int listed = 0;
    for (; ti.settings[listed]; listed++) {
      int found = 0;
      for (int i = 0; i < halo_setting_count() && !found; i++) {
        halo_setting_info info;
        CHECK_OK(halo_setting_get_info(i, &info));
        found = strcmp(info.name, ti.settings[listed]) == 0 && strcmp(info.component, ti.name) == 0;
      }
      CHECK_MSG(found, "transport %s lists %s, no setting of its component", ti.name,
                ti.settings[listed]);
    }
    int of_component = 0;
    for (int i = 0; i < halo_setting_count(); i++) {
      halo_setting_info info;
      CHECK_OK(halo_setting_get_info(i, &info));
      of_component += strcmp(info.component, ti.name) == 0;
    }
    CHECK_MSG(of_component == listed, "transport %s lists %d settings; %d are of its component",
              ti.name, listed, of_component);
  }
  {
    halo_setting_info info;
    CHECK_ERR(halo_setting_get_info(N_DECLARED, &info), HALO_ERR_OUT_OF_RANGE, "there are");
    int64_t v;
    CHECK_ERR(halo_plan_options_setting(&d, "spmv.grup", &v), HALO_ERR_INVALID_ARG,
              "unknown setting 'spmv.grup'");
  }
  for (int i = 0; i < (int)(sizeof variables / sizeof variables[0]); i++) {
    const variable *s = &variables[i];
    /* refused on every rank, with its message */
    setenv(s->env, s->bad, 1);
    CHECK_ERR(halo_plan_create(A, NULL, &plan), HALO_ERR_INVALID_ARG, s->want);
    CHECK_ERR(halo_plan_options_resolve(&d, &r), HALO_ERR_INVALID_ARG, s->want);
    /* a good value is taken, and a plan made with it */
    setenv(s->env, s->good, 1);
    CHECK_OK(halo_plan_options_resolve(&d, &r));
    CHECK_OK(halo_plan_create(A, NULL, &plan));
    halo_plan_destroy(&plan);
    /* on one rank only: every rank fails, naming the option or setting and the variable */
    if (P > 1) {
      if (rank == P - 1) unsetenv(s->env);
      char want[160];
      snprintf(want, sizeof want, "on others (%s%s)",
               s->option ? "the option, or " : "settings, HALO_SETTINGS or ", s->env);
      CHECK_ERR(halo_plan_create(A, NULL, &plan), HALO_ERR_INCONSISTENT, want);
    }
    unsetenv(s->env);
  }
  /* what the variables give shows in the resolved options and settings */
  setenv("HALO_SPMV_UNROLL", "2", 1);
  setenv("HALO_LOCAL_KERNEL", "cusparse", 1);
  setenv("HALO_COMPUTE_STREAM", "nonblocking", 1);
  setenv("HALO_PARAMS", "lassen", 1);
  setenv("HALO_AUTOTUNE", "7", 1);
  CHECK_OK(halo_plan_options_resolve(&d, &r));
  CHECK(r.autotune == 7);
  unsetenv("HALO_AUTOTUNE");
  CHECK(setting(&d, "spmv.unroll") == 2 && setting(&d, "spmv.kernel") == 1 &&
        setting(&d, "device.compute_stream") == 1);
  CHECK(strcmp(r.params, "lassen") == 0);
  unsetenv("HALO_SPMV_UNROLL");
  unsetenv("HALO_LOCAL_KERNEL");
  unsetenv("HALO_COMPUTE_STREAM");
  unsetenv("HALO_PARAMS");
  /* the settings string: white space, an empty item, the last value of a name */
  halo_plan_options o = d;
  o.settings = " spmv.group = 8 ,ipc.signal=host,, spmv.unroll=1,spmv.unroll=2 ";
  CHECK(setting(&o, "spmv.group") == 8 && setting(&o, "ipc.signal") == 0 &&
        setting(&o, "spmv.unroll") == 2 && setting(&o, "spmv.carveout") == -1);
  CHECK_OK(halo_plan_create(A, &o, &plan));
  halo_plan_destroy(&plan);
  /* the caller's string, then HALO_SETTINGS, then the setting's variable */
  setenv("HALO_SPMV_GROUP", "4", 1);
  CHECK(setting(&d, "spmv.group") == 4);
  setenv("HALO_SETTINGS", "spmv.group=16, device.timeline=1", 1);
  CHECK(setting(&d, "spmv.group") == 16 && setting(&d, "device.timeline") == 1);
  CHECK(setting(&o, "spmv.group") == 8 && setting(&o, "device.timeline") == 1);
  setenv("HALO_SETTINGS", "spmv.group=6", 1);
  CHECK_ERR(halo_plan_create(A, NULL, &plan), HALO_ERR_INVALID_ARG,
            "HALO_SETTINGS: spmv.group=6: expected 0 to 32, a power of 2 or 0");
  CHECK_OK(halo_plan_options_resolve(&o, &r)); /* the caller's string names spmv.group */
  unsetenv("HALO_SETTINGS");
  unsetenv("HALO_SPMV_GROUP");
  /* the string's own mistakes, named */
  o.settings = "spmv.grup=8";
  CHECK_ERR(halo_plan_create(A, &o, &plan), HALO_ERR_INVALID_ARG,
            "settings: unknown setting 'spmv.grup' (known: spmv.kernel, spmv.cusparse_alg,");
  o.settings = "spmv.group";
  CHECK_ERR(halo_plan_create(A, &o, &plan), HALO_ERR_INVALID_ARG,
            "settings: 'spmv.group' is not NAME=VALUE");
  o.settings = "spmv.group=";
  CHECK_ERR(halo_plan_create(A, &o, &plan), HALO_ERR_INVALID_ARG,
            "settings: spmv.group=: expected 0 to 32, a power of 2 or 0");
  {
    static char longer[HALO_SETTINGS_MAX + 2];
    memset(longer, ' ', sizeof longer - 1);
    o.settings = longer;
    CHECK_ERR(halo_plan_create(A, &o, &plan), HALO_ERR_INVALID_ARG,
              "settings: longer than 1024 characters");
  }
  /* every declared setting: a bad value refused naming it, a value on some ranks only
   * refused on every rank as inconsistent, naming it and both values */
  for (int k = 0; k < N_DECLARED; k++) {
    const declared *t = &declared_settings[k];
    char text[128], want[256];
    snprintf(text, sizeof text, "%s=%s", t->name, t->bad);
    snprintf(want, sizeof want, "settings: %s=%s: %s", t->name, t->bad, t->want);
    o.settings = text;
    CHECK_ERR(halo_plan_create(A, &o, &plan), HALO_ERR_INVALID_ARG, want);
    snprintf(text, sizeof text, "%s=%s", t->name, t->other);
    o.settings = text;
    CHECK(setting(&o, t->name) == t->other_value);
    if (P > 1) {
      o.settings = rank == 0 ? NULL : text;
      snprintf(want, sizeof want, "plan settings differ across ranks: %s is ", t->name);
      CHECK_ERR(halo_plan_create(A, &o, &plan), HALO_ERR_INCONSISTENT, want);
    }
  }
  o.settings = rank == 0 ? "ipc.signal=host" : "ipc.signal=device";
  if (P > 1)
    CHECK_ERR(halo_plan_create(A, &o, &plan), HALO_ERR_INCONSISTENT,
              "ipc.signal is host on some ranks and device on others (settings, HALO_SETTINGS or "
              "HALO_IPC_SIGNAL)");
  o = d;
  /* an option the caller sets wins over its variable, even a bad one */
  setenv("HALO_AUTOTUNE", "fast", 1);
  o.autotune = 3;
  CHECK_OK(halo_plan_options_resolve(&o, &r));
  CHECK(r.autotune == 3);
  unsetenv("HALO_AUTOTUNE");
  o = d;
  /* white space around a value is not part of it (issue 44 item 6: trailing white space was
   * refused while leading was taken) */
  setenv("HALO_SPMV_GROUP", " 8 ", 1);
  setenv("HALO_AUTOTUNE", "model\t", 1);
  setenv("HALO_TRANSPORT", "  rma \n", 1);
  CHECK_OK(halo_plan_options_resolve(&d, &r));
  CHECK(setting(&d, "spmv.group") == 8 && r.autotune == 0 && r.transport == HALO_TRANSPORT_RMA);
  setenv("HALO_PARAMS", " lassen \t", 1); /* a name: without its white space too */
  CHECK_OK(halo_plan_options_resolve(&d, &r));
  CHECK(r.params && strcmp(r.params, "lassen") == 0);
  unsetenv("HALO_PARAMS");
  unsetenv("HALO_SPMV_GROUP");
  unsetenv("HALO_AUTOTUNE");
  /* a transport of the other memory from HALO_TRANSPORT: the message names the variable */
  setenv("HALO_TRANSPORT", "nccl", 1);
  CHECK_ERR(halo_plan_create(A, NULL, &plan), HALO_ERR_INVALID_ARG,
            "HALO_TRANSPORT=nccl: transport nccl needs device memory");
  unsetenv("HALO_TRANSPORT");
  /* bad options, named */
  o = d;
  o.max_exchanges = 0;
  CHECK_ERR(halo_plan_create(A, &o, &plan), HALO_ERR_INVALID_ARG,
            "option max_exchanges = 0: expected 1 to 64");
  o = d;
  o.reverse = 2;
  CHECK_ERR(halo_plan_create(A, &o, &plan), HALO_ERR_INVALID_ARG, "option reverse = 2");
  /* params: another set on one rank */
  if (P > 1) {
    o = d;
    o.params = rank == 0 ? "lassen" : "/nonexistent/params.txt";
    /* the same message on every rank: rank 0's set and the first other one */
    CHECK_ERR(halo_plan_create(A, &o, &plan), HALO_ERR_INCONSISTENT,
              "params is 'lassen' on rank 0 and '/nonexistent/params.txt' on rank 1 (the option, "
              "or HALO_PARAMS)");
    /* values as a user gives them: names, and autotune's default as a word */
    o = d;
    o.autotune = rank == 0 ? -1 : 5;
    CHECK_ERR(halo_plan_create(A, &o, &plan), HALO_ERR_INCONSISTENT,
              "autotune is 'close' (the default: time the candidates the model cannot tell "
              "apart) on some ranks and 5 on others (the option, or HALO_AUTOTUNE)");
    o = d;
    o.strategy = rank == 0 ? HALO_STRATEGY_STANDARD : HALO_STRATEGY_3STEP;
    CHECK_ERR(halo_plan_create(A, &o, &plan), HALO_ERR_INCONSISTENT,
              "strategy is standard on some ranks and 3step on others");
  }
  halo_matrix_destroy(&A);
  halo_csr_free(&rows);
  halo_io_free(rb);
  MPI_Finalize();
  return 0;
}
