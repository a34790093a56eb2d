/* Run-time names of enumerations, in one table each, and default options. */
#include <string.h>

#include "halo_impl.h"

typedef struct {
  const char *name;
  int value;
} halo_name_entry;

static const halo_name_entry strategy_names[] = {
    {"standard", HALO_STRATEGY_STANDARD}, {"2step", HALO_STRATEGY_2STEP},
    {"3step", HALO_STRATEGY_3STEP},       {"split", HALO_STRATEGY_SPLIT},
    {"auto", HALO_STRATEGY_AUTO},
};

static const halo_name_entry memory_names[] = {
    {"auto", HALO_MEMORY_AUTO},
    {"host", HALO_MEMORY_HOST},
    {"device", HALO_MEMORY_DEVICE},
};

static const halo_name_entry scope_names[] = {
    {"global", HALO_SCOPE_GLOBAL},
    {"node", HALO_SCOPE_NODE},
};

static const halo_name_entry setup_part_names[] = {
    {"context", HALO_SETUP_CONTEXT},     {"pattern", HALO_SETUP_PATTERN},
    {"choice", HALO_SETUP_CHOICE},       {"schedule", HALO_SETUP_SCHEDULE},
    {"handshake", HALO_SETUP_HANDSHAKE}, {"executors", HALO_SETUP_EXECUTORS},
    {"product", HALO_SETUP_PRODUCT},     {"stats", HALO_SETUP_STATS},
};

#define N_ENTRIES(t) ((int)(sizeof(t) / sizeof((t)[0])))

_Static_assert(N_ENTRIES(setup_part_names) == HALO_SETUP_N_PARTS, "a name for every set-up part");

static const char *name_of(const halo_name_entry *t, int n, int value) {
  for (int i = 0; i < n; i++)
    if (t[i].value == value) return t[i].name;
  return "unknown";
}

static halo_status value_of(const halo_name_entry *t, int n, const char *what, const char *name,
                            int *value) {
  if (!name) return HALO_ERROR(HALO_ERR_INVALID_ARG, "%s name is NULL", what);
  for (int i = 0; i < n; i++)
    if (strcmp(t[i].name, name) == 0) {
      *value = t[i].value;
      return HALO_SUCCESS;
    }
  char known[256] = "";
  for (int i = 0; i < n; i++) {
    if (i) strncat(known, ", ", sizeof known - strlen(known) - 1);
    strncat(known, t[i].name, sizeof known - strlen(known) - 1);
  }
  return HALO_ERROR(HALO_ERR_INVALID_ARG, "unknown %s '%s' (known: %s)", what, name, known);
}

const char *halo_strategy_name(halo_strategy s) {
  return name_of(strategy_names, N_ENTRIES(strategy_names), (int)s);
}
const char *halo_memory_name(halo_memory m) {
  return name_of(memory_names, N_ENTRIES(memory_names), (int)m);
}
const char *halo_scope_name(halo_scope s) {
  return name_of(scope_names, N_ENTRIES(scope_names), (int)s);
}
const char *halo_setup_part_name(halo_setup_part part) {
  return name_of(setup_part_names, N_ENTRIES(setup_part_names), (int)part);
}

halo_status halo_strategy_from_name(const char *name, halo_strategy *strategy_p) {
  int v = 0;
  if (!strategy_p) return HALO_ERROR(HALO_ERR_INVALID_ARG, "strategy_p is NULL");
  HALO_CHECK(value_of(strategy_names, N_ENTRIES(strategy_names), "strategy", name, &v));
  *strategy_p = (halo_strategy)v;
  return HALO_SUCCESS;
}

halo_status halo_memory_from_name(const char *name, halo_memory *mem_p) {
  int v = 0;
  if (!mem_p) return HALO_ERROR(HALO_ERR_INVALID_ARG, "mem_p is NULL");
  HALO_CHECK(value_of(memory_names, N_ENTRIES(memory_names), "memory kind", name, &v));
  *mem_p = (halo_memory)v;
  return HALO_SUCCESS;
}

int halo_strategy_valid(halo_strategy s) {
  for (int i = 0; i < N_ENTRIES(strategy_names); i++)
    if (strategy_names[i].value == (int)s) return 1;
  return 0;
}

halo_plan_options halo_plan_options_default(void) {
  halo_plan_options o;
  memset(&o, 0, sizeof o);
  o.strategy = HALO_STRATEGY_AUTO;
  o.ranks_per_node = 0;
  o.message_cap = HALO_DEFAULT_MESSAGE_CAP;
  o.remove_duplicates = 1;
  o.memory = HALO_MEMORY_AUTO;
  o.transport = HALO_TRANSPORT_AUTO;
  o.device_id = -1;
  o.stream = NULL;
  o.params = NULL;
  o.autotune = -1;
  o.expected_uses = -1;
  o.wisdom = NULL;
  /* -1: the environment variable, else the default (settings.c) */
  o.max_exchanges = -1;
  o.reverse = -1;
  o.settings = NULL; /* the components' settings: HALO_SETTINGS, their variables, defaults */
  o.exchange_timeout_ms = -1;
  return o;
}

const char *halo_version(void) { return HALO_VERSION_STRING; }
