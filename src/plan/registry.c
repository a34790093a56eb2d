/* The registry of strategies: one constant table of descriptors, each
 * defined in its strategy's file. */
#include "plan/registry.h"

/* One line a strategy: the list declares each descriptor and fills the
 * table, so a new strategy is its file and one line here. */
#define HALO_STRATEGY_LIST(X)                                                                      \
  X(halo_strategy_desc_standard)                                                                   \
  X(halo_strategy_desc_2step)                                                                      \
  X(halo_strategy_desc_3step)                                                                      \
  X(halo_strategy_desc_split)

#define HALO_DECLARE(desc) extern const halo_strategy_desc desc;
HALO_STRATEGY_LIST(HALO_DECLARE)
#undef HALO_DECLARE

#define HALO_ENTRY(desc) &desc,
static const halo_strategy_desc *const registry[] = {HALO_STRATEGY_LIST(HALO_ENTRY)};
#undef HALO_ENTRY

/* The descriptor of s, or NULL (no error recorded: a question, not a failure). */
static const halo_strategy_desc *lookup(halo_strategy s) {
  for (size_t i = 0; i < sizeof registry / sizeof registry[0]; i++)
    if (registry[i]->strategy == s) return registry[i];
  return NULL;
}

halo_status halo_strategy_desc_find(halo_strategy s, const halo_strategy_desc **desc_p) {
  const halo_strategy_desc *d = lookup(s);
  if (d) {
    *desc_p = d;
    return HALO_SUCCESS;
  }
  if (s == HALO_STRATEGY_AUTO)
    return HALO_ERROR(HALO_ERR_INVALID_ARG,
                      "strategy auto builds no schedule of its own: it chooses one of the others");
  return HALO_ERROR(HALO_ERR_INVALID_ARG,
                    "strategy %d is unknown: no descriptor is registered for it", (int)s);
}

int halo_strategy_node_aware(halo_strategy s) {
  const halo_strategy_desc *d = lookup(s);
  return d && d->decide_receive;
}
